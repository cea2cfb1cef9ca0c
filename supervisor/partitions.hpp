// The partitions of the jobs this node works on, from queued to proved: the jobs, the partitions
// queued for synthesis in dispatch order, which slot of which device ring holds each partition's
// work, and what the workers' reports do to them (a synthesis READY for its device's GPU worker, a
// proof done, a retry up to kMaxAttempts, a failure). A report is handled here whole, and every
// change of a partition's state goes through these verbs and is told to the queue (queue.hpp),
// which makes it durable or reports it under its lease. Which partition goes to which worker and
// slot is the scheduler's choice (dispatch.cpp); what happens to it then is here.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "shm/messages.hpp"
#include "supervisor/queue.hpp"
#include "supervisor/state_folder.hpp"
#include "supervisor/supervisor_types.hpp"
#include "supervisor/timeline.hpp"
#include "supervisor/workers.hpp"

namespace cuzk::sup {

class Partitions {
 public:
  using Key = std::tuple<int, uint64_t, uint32_t>;  // priority, job id (age), partition

  // What the reports added up to, for /metrics.
  struct Stats {
    double synth_sum_s = 0, prove_sum_s = 0;
    uint64_t synth_count = 0;
    uint64_t proofs_done = 0;  // as the queue counts them: stored (one node), accepted by the store (many)
    uint64_t witness_program = 0, witness_native = 0, witness_fallback = 0;  // partitions by witness engine
    uint64_t witness_traced = 0;  // fallback partitions whose input was traced as a further path
  };

  Partitions(std::vector<Device>& devices, StateFolder& state, Timeline& timeline)
      : devices_(devices), state_(state), timeline_(timeline) {}
  // Before any job: where state changes are told, and the scheduler's refill of a device's GPU
  // worker (prove_next: called the moment a proved partition's slot is free again, so that the
  // device's next READY slot goes out first and the bookkeeping after it, the store, reading the
  // result files, a finished job's clean-up, runs while the GPU proves).
  void attach(Queue& q, std::function<void(Device&)> prove_next) { queue_ = &q, prove_next_ = std::move(prove_next); }
  const Stats& stats() const { return stats_; }
  void count_proof() { stats_.proofs_done++; }

  // The jobs this node works on, by id.
  ActiveJob* find(uint64_t id) {
    auto it = jobs_.find(id);
    return it == jobs_.end() ? nullptr : &it->second;
  }
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

  // The queued partition at `it` goes to synthesis worker w through FREE slot `slot` of d: told to
  // the queue as Synthesizing first (the job Running with its first), then the slot's header written for w and
  // the slot SYNTHESIZING. Null when its job ended meanwhile (the entry is dropped).
  ActiveJob* synthesize(std::set<Key>::const_iterator it, Device& d, uint32_t slot, const Worker& w);
  // j's partition in READY slot `slot` of d goes to GPU worker g: the slot handed over to it, its
  // proof's clock started. The work to send g.
  shm::SlotWork hand_over(ActiveJob& j, Device& d, uint32_t slot, const Worker& g);
  // The partition's state, told to the queue; the job's too, in the same write, when it starts
  // running.
  void set_state(ActiveJob& j, uint32_t p, PState s);

  // The reports of task t, which worker w held (Workers::end_task): SynthDone and ProveDone. A
  // report on a partition this node no longer works on frees the slot and does nothing else.
  void synthesized(const Worker& w, const Task& t, const shm::SynthDone& m);
  void proved(const Worker& w, const Task& t, const shm::ProveDone& m);

  // The partition's synthesis is complete in its READY slot: it waits for its device's GPU worker.
  void ready(const Worker& w, ActiveJob& j, Device& d, uint32_t p, uint32_t slot);
  // Its proof is to be made again from the same slot, whose a, b, c are intact: the slot READY
  // again (whatever its word said) for its device's GPU worker, the partition Ready.
  void prove_again(ActiveJob& j, Device& d, uint32_t p, uint32_t slot);
  // Back to synthesis (count_attempt: the attempt failed), or the job fails once kMaxAttempts
  // attempts have. Nothing for a job that ended or a partition this node does not hold.
  void requeue(uint64_t job, uint32_t p, const std::string& why, bool count_attempt);
  // Proved: its proof and public signals read from result_dir, its timings kept, the queue told.
  void complete(ActiveJob& j, uint32_t p, const std::string& result_dir);
  // After the GPU worker of task t died with the slot no longer READY or PROVING: the slot is freed
  // (FREE, whatever its word said), and the partition is complete if both its result files are in
  // result_dir, else queued for synthesis again with the error why_lost (no attempt counted).
  void recover_proof(const Task& t, const std::string& result_dir, const std::string& why_lost);
  // The partition failed for good, and with it the job.
  void fail(ActiveJob& j, uint32_t p, const std::string& why);

  // Crash repair (crash_repair.cpp): task t of worker w, whose process ended before it reported
  // t, put back by the row of the repair table for w's kind and the state of t's slot, with the
  // verbs above. Every row leaves the slot either FREE or READY for its partition.
  void repair(const Worker& w, const Task& t);
  // Nobody proves d's READY slots while its GPU worker is failed: their partitions go back to
  // synthesis, for the devices that still have one.
  void resynthesize_device(Device& d);

  // A slot back to FREE and unused, whatever it held.
  void release_slot(int device, uint32_t slot);
  // Whether d's slot of task t still holds t's partition (no other task has been given it).
  static bool holds_slot(const Device& d, const Task& t);
  // The work of one partition (p) or of every partition of the job (p < 0) stops here: queued
  // entries dropped, READY slots freed, the others told to cancel.
  void stop(uint64_t job, int64_t p = -1);

 private:
  Device* device(int id) { return find_device(devices_, id); }

  std::vector<Device>& devices_;
  StateFolder& state_;
  Timeline& timeline_;
  Queue* queue_ = nullptr;
  std::function<void(Device&)> prove_next_;
  std::map<uint64_t, ActiveJob> jobs_;
  std::set<Key> pending_;
  Stats stats_;
};

}  // namespace cuzk::sup
