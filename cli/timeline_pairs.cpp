#include "timeline_pairs.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "timeline/events.hpp"

namespace cuzk::cli::timeline {

bool parse_double(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end && *end == 0 && std::isfinite(v);
}

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit((unsigned char)a[i]) && std::isdigit((unsigned char)b[j])) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit((unsigned char)a[i2])) i2++;
      while (j2 < b.size() && std::isdigit((unsigned char)b[j2])) j2++;
      unsigned long long x = std::stoull(a.substr(i, std::min<size_t>(i2 - i, 18)));
      unsigned long long y = std::stoull(b.substr(j, std::min<size_t>(j2 - j, 18)));
      if (x != y) return x < y;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      i++;
      j++;
    }
  }
  return a.size() - i < b.size() - j;
}

std::string worker_of(const Event& e) {
  std::string w = e.get(tl::kWorker);
  return w.empty() ? "supervisor" : w;
}

std::string kind_of(const Event& e) {
  const std::string k = e.get(tl::kKind);
  if (k == tl::kKindSynth || k == tl::kKindGpu) return k;
  const std::string w = e.get(tl::kWorker);
  if (w.rfind("synth", 0) == 0) return tl::kKindSynth;
  if (w.rfind("gpu", 0) == 0) return tl::kKindGpu;
  if (e.name.rfind("SYNTH_", 0) == 0) return tl::kKindSynth;
  if (e.name.rfind("GPU_", 0) == 0) return tl::kKindGpu;
  return "supervisor";
}

double witness_ms_of(const Event& e) {
  return e.has(tl::kWitnessMs) ? e.num(tl::kWitnessMs) : e.num(tl::kWitnessMsOld);
}

namespace {

bool pairable(const std::string& stage) { return !stage.empty() && stage != "WORKER" && stage != "DAEMON"; }

std::string stage_of(const std::string& name, const char* suffix) {
  size_t n = std::strlen(suffix);
  if (name.size() > n && name.compare(name.size() - n, n, suffix) == 0) return name.substr(0, name.size() - n);
  return "";
}

}  // namespace

std::vector<Interval> pair_intervals(const std::vector<Event>& ev, std::vector<const Event*>* unpaired) {
  std::vector<Interval> out;
  std::map<std::string, size_t> open;  // key -> index into out
  auto key = [](const std::string& w, const std::string& st, const Event& e) {
    return w + "\x1f" + st + "\x1f" + e.job + "\x1f" + e.get(tl::kPartition);
  };
  double prev_ms = ev.empty() ? 0 : ev.front().ms;
  size_t run = ev.empty() ? 0 : ev.front().run;
  for (const auto& e : ev) {
    if (e.run != run) {  // the previous run's processes are gone
      for (auto& [k, idx] : open) {
        out[idx].end_ms = prev_ms;
        out[idx].cut = "interrupted";
      }
      open.clear();
      run = e.run;
    }
    prev_ms = e.ms;
    std::string w = worker_of(e);
    std::string st = stage_of(e.name, "_START");
    if (pairable(st)) {
      Interval iv;
      iv.stage = st;
      iv.worker = w;
      iv.kind = kind_of(e);
      iv.device = e.get(tl::kDevice);
      iv.start = &e;
      auto k = key(w, st, e);
      auto it = open.find(k);
      if (it != open.end()) {  // a second start without an end: close the first one here
        out[it->second].end_ms = e.ms;
        out[it->second].cut = "interrupted";
      }
      open[k] = out.size();
      out.push_back(iv);
      continue;
    }
    st = stage_of(e.name, "_END");
    if (pairable(st)) {
      auto it = open.find(key(w, st, e));
      if (it != open.end()) {
        Interval& iv = out[it->second];
        iv.end = &e;
        iv.end_ms = e.ms;
        if (iv.device.empty()) iv.device = e.get(tl::kDevice);
        open.erase(it);
        continue;
      }
      if (unpaired) unpaired->push_back(&e);
      continue;
    }
    if (e.name == tl::kWorkerExit) {
      for (auto it = open.begin(); it != open.end();) {
        Interval& iv = out[it->second];
        if (iv.worker == w) {
          iv.end_ms = e.ms;
          iv.cut = "interrupted";
          it = open.erase(it);
        } else {
          ++it;
        }
      }
    }
    if (unpaired) unpaired->push_back(&e);
  }
  double last = ev.empty() ? 0 : ev.back().ms;
  for (auto& [k, idx] : open) {
    out[idx].end_ms = last;
    out[idx].cut = "unfinished";
  }
  return out;
}

std::vector<Stretch> worker_stretches(const std::vector<Event>& ev) {
  std::vector<Stretch> out;
  bool has_ready = false;
  for (const auto& e : ev) has_ready |= e.name == tl::kWorkerReady;
  std::map<std::string, double> starting, down;  // worker -> open since
  auto close = [&](std::map<std::string, double>& m, Stretch::Kind kind, const std::string& w, double at) {
    auto it = m.find(w);
    if (it == m.end()) return;
    out.push_back({kind, w, it->second, std::max(at, it->second), nullptr});
    m.erase(it);
  };
  auto close_all = [&](double at) {
    while (!starting.empty()) close(starting, Stretch::Starting, starting.begin()->first, at);
    while (!down.empty()) close(down, Stretch::Down, down.begin()->first, at);
  };
  std::set<std::string> seen;  // workers of the runs so far
  double prev_ms = ev.empty() ? 0 : ev.front().ms;
  size_t run = ev.empty() ? 0 : ev.front().run;
  for (const auto& e : ev) {
    if (e.run != run) {  // the workers went with the previous run's supervisor
      close_all(prev_ms);
      for (const auto& w : seen) down[w] = prev_ms;
      run = e.run;
    }
    prev_ms = e.ms;
    const std::string w = e.get(tl::kWorker);
    const std::string kind = kind_of(e);
    if (!w.empty() && (kind == tl::kKindSynth || kind == tl::kKindGpu)) seen.insert(w);
    if (e.name == tl::kDaemonStop) {
      close_all(e.ms);
    } else if (e.name == tl::kWorkerStart) {
      close(down, Stretch::Down, w, e.ms);
      close(starting, Stretch::Starting, w, e.ms);
      starting[w] = e.ms;
    } else if (e.name == tl::kWorkerReady) {
      close(starting, Stretch::Starting, w, e.ms);
    } else if (e.name == tl::kWorkerExit) {
      close(starting, Stretch::Starting, w, e.ms);
      // Status 0 without a signal is a stop the supervisor asked for, not an outage.
      if (e.num(tl::kStatus) != 0 || e.num(tl::kSignal) != 0) down.emplace(w, e.ms);
    } else if (e.name == tl::kSlotWait) {
      const double wait = std::max(0.0, e.num(tl::kWaitMs));
      out.push_back({Stretch::SlotWait, w, e.ms - wait, e.ms, &e});
    } else if (!w.empty() && e.name.rfind("WORKER_", 0) != 0) {
      // Work of the worker shows it is up (in logs without WORKER_READY, that it has started).
      close(down, Stretch::Down, w, e.ms);
      if (!has_ready) close(starting, Stretch::Starting, w, e.ms);
    }
  }
  close_all(ev.empty() ? 0 : ev.back().ms);
  return out;
}

}  // namespace cuzk::cli::timeline
