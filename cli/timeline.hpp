// Reading the daemon's merged timeline log (docs/API.md "Timeline log") and exporting it as a Chrome
// trace (`cuzk timeline export`). The waterfall report is in waterfall.hpp.
#pragma once
#include <istream>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace cuzk::cli::timeline {

struct Event {
  double ms = 0;      // since the start of the log's first daemon run (see read_log)
  std::string name;   // SYNTH_START, GPU_END, ...
  std::string job;    // "" for "-"
  std::map<std::string, std::string> kv;
  size_t line = 0;    // 1-based line in the log
  size_t run = 0;     // which daemon run of the log wrote it (0 for the first)
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
// The supervisor appends to one log across restarts and each run counts its time from its own
// DAEMON_START: a later run's times are moved after the previous run's, by the difference of the
// runs' DAEMON_START unix_ms when both carry it, else directly after its last event.
std::vector<Event> read_log(std::istream& in, size_t* skipped = nullptr);
std::vector<Event> read_log_file(const std::string& path, size_t* skipped = nullptr);

// Chrome trace JSON (the "JSON object format": {"traceEvents": [...]}), microsecond timestamps:
// one thread per worker, a slice per START/END pair (synthesis with witness and eval sub-slices),
// slot waits and worker start-ups as slices, every other event as an instant.
void export_chrome(const std::vector<Event>& events, std::ostream& out);

}  // namespace cuzk::cli::timeline
