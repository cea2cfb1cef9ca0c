// Shared by the timeline tools (Chrome export, waterfall): who wrote an event, START/END pairs, and
// the stretches of a worker's life spent starting, down or waiting for a slot.
#pragma once
#include <string>
#include <vector>

#include "timeline.hpp"

namespace cuzk::cli::timeline {

// A finite number, the whole string.
bool parse_double(const std::string& s, double& v);
// Natural order: "synth2" before "synth10".
bool natural_less(const std::string& a, const std::string& b);
// The event's worker= ("supervisor" when it names none).
std::string worker_of(const Event& e);
// "synth", "gpu" or "supervisor": the event's kind=, else what its worker's name or event name says.
std::string kind_of(const Event& e);

// A START/END pair on one worker.
struct Interval {
  std::string stage;  // "SYNTH", "GPU", or another X of X_START/X_END
  std::string worker, kind, device;
  const Event* start = nullptr;
  const Event* end = nullptr;  // null when cut short
  double end_ms = 0;
  std::string cut;  // "" | "interrupted" (worker exited, or the daemon restarted) | "unfinished" (log ended)
};

// Pairs X_START with X_END per (worker, stage, job, partition); an interval still open when its
// worker exits, or when a new daemon run starts, ends there. `unpaired` receives the events that
// are not part of an interval.
std::vector<Interval> pair_intervals(const std::vector<Event>& ev, std::vector<const Event*>* unpaired);

// A stretch of a worker outside its work.
struct Stretch {
  enum Kind { Starting, Down, SlotWait } kind = Starting;
  std::string worker;
  double start_ms = 0, end_ms = 0;
  const Event* event = nullptr;  // SLOT_WAIT: its event
};
// Starting: WORKER_START until WORKER_READY (in logs without any WORKER_READY: until the worker's
// first other event). Down: WORKER_EXIT with a non-zero status or a signal, or the end of a daemon
// run (its workers die with it), until the worker's next WORKER_START or work (or DAEMON_STOP, or
// the log's end after WORKER_FAILED). SlotWait: each SLOT_WAIT, [ms - wait_ms, ms].
std::vector<Stretch> worker_stretches(const std::vector<Event>& ev);

// SYNTH_END's split of a synthesis: witness_ms (read_ms in older logs) and eval_ms; 0 when absent.
double witness_ms_of(const Event& synth_end);

}  // namespace cuzk::cli::timeline
