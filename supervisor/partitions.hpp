// The partitions of the jobs this node works on: the jobs, the partitions queued for synthesis in
// dispatch order, and which slot of which device ring each partition's work is in. Every change of
// a partition's state, of the queued set and of a slot's use goes through these verbs, so that
// the bookkeeping of one partition is read in one place. A state change is told to the queue
// (queue.hpp), which makes it durable or reports it under its lease.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "supervisor/queue.hpp"
#include "supervisor/supervisor_types.hpp"

namespace cuzk::sup {

class Partitions {
 public:
  using Key = std::tuple<int, uint64_t, uint32_t>;  // priority, job id (age), partition

  explicit Partitions(std::vector<Device>& devices) : devices_(devices) {}
  void attach(Queue& q) { queue_ = &q; }

  // The jobs this node works on, by id.
  ActiveJob* find(uint64_t id);
  std::map<uint64_t, ActiveJob>& jobs() { return jobs_; }
  const std::map<uint64_t, ActiveJob>& jobs() const { return jobs_; }
  // Known here from now on; each of its Queued partitions is queued for synthesis, its queue time
  // starting now.
  ActiveJob& add(ActiveJob j);
  void erase(uint64_t id) { jobs_.erase(id); }  // after stop(id): the job leaves this node

  // Queued for synthesis, the most urgent first.
  const std::set<Key>& pending() const { return pending_; }
  void enqueue(const ActiveJob& j, uint32_t p) { pending_.insert({int(j.rec.priority), j.rec.id, p}); }
  void dequeue(const ActiveJob& j, uint32_t p) { pending_.erase({int(j.rec.priority), j.rec.id, p}); }
  Key take(std::set<Key>::const_iterator it);  // out of the queued set, to dispatch

  // The partition's state, told to the queue; the job's too when it starts running.
  void set_state(ActiveJob& j, uint32_t p, PState s);

  // A slot back to FREE and unused, whatever it held.
  void release_slot(int device, uint32_t slot);
  // The work of one partition (p) or of every partition of the job (p < 0) stops here: queued
  // entries dropped, READY slots freed, the others told to cancel.
  void stop(uint64_t job, int64_t p = -1);

 private:
  std::vector<Device>& devices_;
  Queue* queue_ = nullptr;
  std::map<uint64_t, ActiveJob> jobs_;
  std::set<Key> pending_;
};

}  // namespace cuzk::sup
