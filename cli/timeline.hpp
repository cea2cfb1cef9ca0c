// Reading the daemon's merged timeline log (docs/API.md "Timeline log"): Chrome trace export and the
// waterfall report (`cuzk timeline export`, `cuzk waterfall`).
#pragma once
#include <istream>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace cuzk::cli::timeline {

struct Event {
  double ms = 0;      // since daemon start
  std::string name;   // SYNTH_START, GPU_END, ...
  std::string job;    // "" for "-"
  std::map<std::string, std::string> kv;
  size_t line = 0;    // 1-based line in the log
  std::string get(const std::string& k, const std::string& dflt = "") const {
    auto it = kv.find(k);
    return it == kv.end() ? dflt : it->second;
  }
  bool has(const std::string& k) const { return kv.count(k) != 0; }
  double num(const std::string& k, double dflt = 0) const;
};

// Parses one line; lines without "TIMELINE," (anywhere, so log prefixes are fine) give false.
// A malformed TIMELINE line throws std::invalid_argument naming the problem.
bool parse_line(const std::string& line, Event& ev);
// Reads a whole log, stably sorted by time. `skipped` counts malformed lines (not thrown).
std::vector<Event> read_log(std::istream& in, size_t* skipped = nullptr);
std::vector<Event> read_log_file(const std::string& path, size_t* skipped = nullptr);

// Chrome trace JSON (the "JSON object format": {"traceEvents": [...]}), microsecond timestamps.
void export_chrome(const std::vector<Event>& events, std::ostream& out);

struct Gap {
  double start_ms = 0, end_ms = 0;
  std::string cause;  // "waiting on synthesis", "slot ready (pickup latency)", "no work"
};

struct DeviceStats {
  std::string device;  // the device id, or the GPU worker's name when events carry no device=
  double busy_ms = 0;
  double util = 0;  // busy_ms / span_ms
  double idle_waiting_synth_ms = 0, idle_ready_ms = 0, idle_no_work_ms = 0;
  std::vector<Gap> gaps;  // idle stretches inside the span
  size_t proofs = 0;      // GPU_END count
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
  std::vector<DeviceStats> devices;
  // Median of every *_ms value per "EVENT.key" (e.g. "SYNTH_END.synth_ms"), plus the measured
  // intervals "synth" (SYNTH_START..SYNTH_END) and "gpu" (GPU_START..GPU_END); with their counts.
  std::map<std::string, std::pair<double, size_t>> medians;
};

Waterfall analyze(const std::vector<Event>& events);
void render_waterfall(const Waterfall& w, std::ostream& out, int width = 72);

}  // namespace cuzk::cli::timeline
