// `cuzk waterfall`: what every worker did over the log's span, why each GPU was idle, and where the
// time of each job went; as text (render_waterfall) or as an SVG chart (render_svg).
#pragma once
#include <array>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "timeline.hpp"

namespace cuzk::cli::timeline {

// What a worker is doing at a moment. Synthesis workers: Witness, Eval, SynthOther (the rest of a
// synthesis: checks, a cut-short one), SlotWait, Starting, Down, NoWork. GPU workers: Proving, or
// idle because of WaitingOnSynthesis (no READY slot while synthesis runs or partitions are
// outstanding), PickupLatency (a READY slot whose proof has not started), Starting (the GPU worker
// is starting: loading keys), KeyLoad (loading a key that was not resident, KEY_LOAD), Down (it
// exited and is not back yet) or NoWork.
enum class State { Witness, Eval, SynthOther, SlotWait, Proving, WaitingOnSynthesis, PickupLatency, Starting, Down, NoWork, KeyLoad };
constexpr size_t kStates = 11;
const char* state_label(State s);  // "witness", ..., "waiting on synthesis", ...
using StateMs = std::array<double, kStates>;  // ms per State, indexed by size_t(State)

struct Segment {
  double start_ms = 0, end_ms = 0;
  State state = State::NoWork;
};

// One synthesis or one proof on a lane.
struct Bar {
  double start_ms = 0, end_ms = 0;
  std::string job, partition;
  double witness_ms = 0, eval_ms = 0;  // synthesis: SYNTH_END's split (0 when not reported)
  double kernel_ms = -1;               // proof: GPU_END's kernel_ms, -1 when not reported
  std::string cut;                     // "" or why it was cut short
};

// A device's key loads (KEY_LOAD) summed by part: the file read, the image prepared, the upload, the
// points' checks on the device and the tables (logs from before the parts were reported have only load_ms).
struct KeyLoads {
  size_t loads = 0;
  double load_ms = 0, file_ms = 0, prepare_ms = 0, upload_ms = 0, check_ms = 0, tables_ms = 0;
  double upload_bytes = 0;
};

// One worker (a GPU worker's lane is its device's).
struct Lane {
  std::string worker, kind, device;   // kind "synth" or "gpu"; device: GPU lanes
  std::vector<Segment> segments;      // the whole span, in order, adjacent states merged
  std::vector<Bar> bars;
  StateMs ms{};                       // time per state within the span
  size_t done = 0;                    // syntheses / proofs completed
  double kernel_ms = 0;               // GPU lanes: sum of the reported kernel_ms
  bool kernel_reported = false;
  KeyLoads key_loads;                 // GPU lanes
  bool busy(State s) const;           // a synthesis state on a synthesis lane, Proving on a GPU lane
  double busy_ms() const;
};

struct Gap {
  double start_ms = 0, end_ms = 0;
  std::string cause;  // state_label of the idle state that took most of the gap
};

struct DeviceStats {
  std::string device;  // the device id, or the GPU worker's name when events carry no device=
  std::string worker;
  double busy_ms = 0;  // wall: GPU_START -> GPU_END
  double util = 0;     // busy_ms / span_ms
  double kernel_ms = 0, kernel_util = 0;  // summed kernel_ms, and that over span_ms
  bool kernel_reported = false;
  double idle_waiting_synth_ms = 0, idle_ready_ms = 0, idle_starting_ms = 0, idle_down_ms = 0, idle_no_work_ms = 0;
  double idle_key_load_ms = 0;
  KeyLoads key_loads;
  std::vector<Gap> gaps;  // idle stretches inside the span
  size_t proofs = 0;      // completed GPU_START..GPU_END
  // The steady state: from the device's first GPU_START to its last GPU_END, which leaves out the
  // start-up (keys loading, the first partition's synthesis) and the tail. A short stream's span
  // figures are dominated by its start-up; these are what a long stream converges to.
  struct Steady {
    double start_ms = 0, end_ms = 0;  // the window (0, 0: no proof)
    double busy_ms = 0, kernel_ms = 0;
    StateMs idle{};                   // the idle states inside the window
    size_t proofs = 0;                // completed proofs inside it
    double median_proof_ms = 0;       // of those proofs, GPU_START..GPU_END: the GPU-bound floor
    double sec_per_proof() const { return proofs ? (end_ms - start_ms) / 1000.0 / (double)proofs : 0; }
  } steady;
  StateMs startup{};  // the idle states before the window: what the first proof waited for
};

// Where one job's time went. GPU idle time (WaitingOnSynthesis, PickupLatency, Starting, Down) is
// charged to the job whose proof the GPU started next.
struct JobStats {
  std::string job;
  size_t proofs = 0;     // PROOF_DONE events
  StateMs ms{};          // synthesis states and SlotWait of its partitions, Proving, charged GPU idle
  double kernel_ms = 0;  // summed kernel_ms of its proofs
};

struct WorkerRow {
  std::string worker;
  std::string kind;  // "synth" or "gpu"
  std::vector<std::pair<double, double>> busy;  // [start, end] ms
  double busy_ms = 0;
};

struct Waterfall {
  double start_ms = 0, end_ms = 0, span_ms = 0;
  size_t proofs = 0;          // PROOF_DONE events (GPU_END when there are none)
  double sec_per_proof = 0;   // span / proofs
  std::vector<WorkerRow> rows;
  std::vector<Lane> lanes;    // synthesis workers, then GPU devices, each in natural order
  std::vector<DeviceStats> devices;
  std::vector<JobStats> jobs;  // in natural order of ids
  // Median of every *_ms duration per "EVENT.key" (e.g. "SYNTH_END.synth_ms"), plus the measured
  // intervals "synth" (SYNTH_START..SYNTH_END) and "gpu" (GPU_START..GPU_END); with their counts.
  std::map<std::string, std::pair<double, size_t>> medians;
};

Waterfall analyze(const std::vector<Event>& events);
// The text report; at most max_jobs rows of jobs (0: all).
void render_waterfall(const Waterfall& w, std::ostream& out, int width = 72, size_t max_jobs = 30);
// A self-contained SVG: a lane per worker, coloured by State, a time axis, a legend and a title.
void render_svg(const Waterfall& w, std::ostream& out);

}  // namespace cuzk::cli::timeline
