#include "timeline.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "timeline/events.hpp"
#include "timeline_pairs.hpp"

namespace cuzk::cli::timeline {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t i = 0;
  for (;;) {
    size_t j = s.find(sep, i);
    out.push_back(s.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return out;
}

// Lays the log's daemon runs end to end (read_log): a DAEMON_START after the first event, in file
// order, begins a run whose times restart from 0.
void place_runs(std::vector<Event>& ev) {
  double offset = 0, end = -1e300;
  bool have_unix = false;
  double last_unix = 0, last_offset = 0;
  size_t run = 0;
  for (size_t i = 0; i < ev.size(); i++) {
    Event& e = ev[i];
    if (e.name == tl::kDaemonStart) {
      double unix_ms = 0;
      const bool has = parse_double(e.get(tl::kUnixMs), unix_ms);
      if (i > 0) {
        run++;
        offset = end;  // right after the previous run, unless the wall clocks say how far after
        if (has && have_unix) offset = std::max(end, last_offset + (unix_ms - last_unix));
      }
      have_unix = has;
      last_unix = unix_ms;
      last_offset = offset;
    }
    e.ms += offset;
    e.run = run;
    end = std::max(end, e.ms);
  }
}

}  // namespace

double Event::num(const std::string& k, double dflt) const {
  double v;
  auto it = kv.find(k);
  if (it == kv.end() || !parse_double(it->second, v)) return dflt;
  return v;
}

bool parse_line(const std::string& line_in, Event& ev) {
  size_t at = line_in.find("TIMELINE,");
  if (at == std::string::npos) return false;
  std::string line = line_in.substr(at);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n' || line.back() == ' ' || line.back() == '\t'))
    line.pop_back();
  auto f = split(line, ',');
  if (f.size() < 4) throw std::invalid_argument("expected TIMELINE,<ms>,<EVENT>,<job>,...");
  ev = Event{};
  if (!parse_double(f[1], ev.ms)) throw std::invalid_argument("bad time \"" + f[1] + "\"");
  if (f[2].empty()) throw std::invalid_argument("empty event name");
  ev.name = f[2];
  ev.job = f[3] == "-" ? "" : f[3];
  for (size_t i = 4; i < f.size(); i++) {
    if (f[i].empty()) continue;
    auto eq = f[i].find('=');
    if (eq == std::string::npos) ev.kv[f[i]] = "";
    else ev.kv[f[i].substr(0, eq)] = f[i].substr(eq + 1);
  }
  return true;
}

std::vector<Event> read_log(std::istream& in, size_t* skipped) {
  std::vector<Event> out;
  std::string line;
  size_t n = 0, bad = 0;
  while (std::getline(in, line)) {
    n++;
    Event e;
    try {
      if (!parse_line(line, e)) continue;
    } catch (const std::invalid_argument&) {
      bad++;
      continue;
    }
    e.line = n;
    out.push_back(std::move(e));
  }
  place_runs(out);
  std::stable_sort(out.begin(), out.end(), [](const Event& a, const Event& b) { return a.ms < b.ms; });
  if (skipped) *skipped = bad;
  return out;
}

std::vector<Event> read_log_file(const std::string& path, size_t* skipped) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error(path + ": cannot open");
  return read_log(f, skipped);
}

}  // namespace cuzk::cli::timeline
