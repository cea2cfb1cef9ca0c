// The worker table: one record per worker process (synthesis workers first, then one GPU worker
// per device), and the verbs that change a worker's state and the tasks it holds. Every state
// change passes through set_state, which checks it against the table in workers.cpp, so that
// a change the scheduler does not expect is reported where it is made instead of showing up later
// as a worker that never gets work.
#pragma once
#include <uv.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "supervisor/supervisor_types.hpp"

namespace cuzk::sup {

class Workers {
 public:
  using List = std::vector<std::unique_ptr<Worker>>;
  List::iterator begin() { return list_.begin(); }
  List::iterator end() { return list_.end(); }
  List::const_iterator begin() const { return list_.begin(); }
  List::const_iterator end() const { return list_.end(); }
  Worker& add(std::unique_ptr<Worker> w);
  Worker* of_process(const uv_process_t* p);

  // An idle synthesis worker holding no task (the first), or null; how many there are.
  Worker* idle_synth();
  size_t idle_synth_count() const;

  // A change the table does not allow is a bug in the supervisor: logged (and stopping a debug
  // build) here.
  static void set_state(Worker& w, WorkerState to, const char* why);
  // w takes task t; an idle worker becomes busy.
  static void assign(Worker& w, const Task& t, const char* why);
  // The task of w on (job, partition), removed from w (busy w with no task left is idle again);
  // nullopt for a stale report, one of a task w no longer holds.
  static std::optional<Task> end_task(Worker& w, uint64_t job, uint32_t partition, const char* why);

 private:
  List list_;
};

}  // namespace cuzk::sup
