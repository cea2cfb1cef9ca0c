#include "timeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

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

bool parse_double(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end && *end == 0 && std::isfinite(v);
}

// Natural order: "synth2" before "synth10".
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
  std::string w = e.get("worker");
  return w.empty() ? "supervisor" : w;
}

// "synth", "gpu" or "supervisor".
std::string kind_of(const Event& e) {
  std::string w = e.get("worker");
  if (w.rfind("synth", 0) == 0) return "synth";
  if (w.rfind("gpu", 0) == 0) return "gpu";
  if (w.empty() || w == "supervisor") {
    if (e.name.rfind("SYNTH_", 0) == 0) return "synth";
    if (e.name.rfind("GPU_", 0) == 0) return "gpu";
    return "supervisor";
  }
  if (e.name.rfind("SYNTH_", 0) == 0) return "synth";
  if (e.name.rfind("GPU_", 0) == 0) return "gpu";
  return "supervisor";
}

std::string label(const Event& e) {
  std::string s;
  if (!e.job.empty()) s += " job " + e.job;
  if (e.has("partition")) s += " p" + e.get("partition");
  return s;
}

// A START/END pair on one worker.
struct Interval {
  std::string stage;  // "SYNTH", "GPU", or another X of X_START/X_END
  std::string worker, kind, device;
  const Event* start = nullptr;
  const Event* end = nullptr;  // null when cut short
  double end_ms = 0;
  std::string cut;  // "" | "interrupted" (worker exited) | "unfinished" (log ended)
};

bool pairable(const std::string& stage) { return !stage.empty() && stage != "WORKER" && stage != "DAEMON"; }

std::string stage_of(const std::string& name, const char* suffix) {
  size_t n = std::strlen(suffix);
  if (name.size() > n && name.compare(name.size() - n, n, suffix) == 0) return name.substr(0, name.size() - n);
  return "";
}

// Pairs X_START with X_END per (worker, stage, job, partition); an interval still open when its
// worker exits ends there. `unpaired` receives the events that are not part of an interval.
std::vector<Interval> pair_intervals(const std::vector<Event>& ev, std::vector<const Event*>* unpaired) {
  std::vector<Interval> out;
  std::map<std::string, size_t> open;  // key -> index into out
  auto key = [](const std::string& w, const std::string& st, const Event& e) {
    return w + "\x1f" + st + "\x1f" + e.job + "\x1f" + e.get("partition");
  };
  for (const auto& e : ev) {
    std::string w = worker_of(e);
    std::string st = stage_of(e.name, "_START");
    if (pairable(st)) {
      Interval iv;
      iv.stage = st;
      iv.worker = w;
      iv.kind = kind_of(e);
      iv.device = e.get("device");
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
        if (iv.device.empty()) iv.device = e.get("device");
        open.erase(it);
        continue;
      }
      if (unpaired) unpaired->push_back(&e);
      continue;
    }
    if (e.name == "WORKER_EXIT") {
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

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string gpu_key(const Interval& iv) { return iv.device.empty() ? iv.worker : iv.device; }

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
  std::stable_sort(out.begin(), out.end(), [](const Event& a, const Event& b) { return a.ms < b.ms; });
  if (skipped) *skipped = bad;
  return out;
}

std::vector<Event> read_log_file(const std::string& path, size_t* skipped) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error(path + ": cannot open");
  return read_log(f, skipped);
}

void export_chrome(const std::vector<Event>& events, std::ostream& out) {
  using json = nlohmann::ordered_json;
  std::vector<const Event*> singles;
  auto intervals = pair_intervals(events, &singles);

  const std::map<std::string, int> pids = {{"supervisor", 1}, {"synth", 2}, {"gpu", 3}};
  const std::map<int, std::string> pnames = {{1, "cuzk supervisor"}, {2, "synthesis workers"}, {3, "GPU workers"}};
  // One thread per worker, numbered in natural name order inside its process.
  std::map<int, std::vector<std::string>> workers;
  std::map<std::string, std::string> device_of;
  auto note = [&](const std::string& w, const std::string& kind) {
    auto& v = workers[pids.at(kind)];
    if (std::find(v.begin(), v.end(), w) == v.end()) v.push_back(w);
  };
  for (const auto& iv : intervals) {
    note(iv.worker, iv.kind);
    if (iv.kind == "gpu" && !iv.device.empty()) device_of[iv.worker] = iv.device;
  }
  for (const Event* e : singles) note(worker_of(*e), kind_of(*e));
  // A worker keeps one process even if some of its events look like another kind's.
  std::map<std::string, std::pair<int, int>> where;  // worker -> (pid, tid)
  for (auto& [pid, v] : workers) {
    std::sort(v.begin(), v.end(), natural_less);
    for (const auto& w : v)
      if (!where.count(w)) where[w] = {pid, 0};
  }
  std::map<int, int> next_tid;
  for (auto& [pid, v] : workers)
    for (const auto& w : v)
      if (where[w].first == pid) where[w].second = ++next_tid[pid];

  json trace = json::array();
  for (auto& [pid, v] : workers) {
    trace.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", pnames.at(pid)}}}});
    trace.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", pid}}}});
  }
  for (auto& [w, pt] : where) {
    std::string tname = w;
    if (device_of.count(w)) tname += " (device " + device_of[w] + ")";
    trace.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pt.first}, {"tid", pt.second}, {"args", {{"name", tname}}}});
    trace.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pt.first}, {"tid", pt.second},
                     {"args", {{"sort_index", pt.second}}}});
  }
  auto us = [](double ms) { return std::round(ms * 1000.0 * 1000.0) / 1000.0; };  // µs, ns resolution
  auto args_of = [](const Event& e, json& a) {
    if (!e.job.empty()) a["job"] = e.job;
    for (const auto& [k, v] : e.kv) {
      double d;
      if (parse_double(v, d) && k != "job" && k != "worker") a[k] = d;
      else a[k] = v;
    }
  };
  for (const auto& iv : intervals) {
    json a = json::object();
    args_of(*iv.start, a);
    if (iv.end) args_of(*iv.end, a);
    if (!iv.cut.empty()) a["cut_short"] = iv.cut;
    std::string lower = iv.stage;
    for (auto& c : lower) c = (char)std::tolower((unsigned char)c);
    auto [pid, tid] = where[iv.worker];
    trace.push_back({{"name", lower + label(*iv.start)},
                     {"cat", lower},
                     {"ph", "X"},
                     {"ts", us(iv.start->ms)},
                     {"dur", us(std::max(0.0, iv.end_ms - iv.start->ms))},
                     {"pid", pid},
                     {"tid", tid},
                     {"args", a}});
  }
  for (const Event* e : singles) {
    json a = json::object();
    args_of(*e, a);
    auto [pid, tid] = where[worker_of(*e)];
    trace.push_back({{"name", e->name + label(*e)},
                     {"cat", "event"},
                     {"ph", "i"},
                     {"s", pid == 1 ? "p" : "t"},
                     {"ts", us(e->ms)},
                     {"pid", pid},
                     {"tid", tid},
                     {"args", a}});
  }
  json doc = {{"traceEvents", trace}, {"displayTimeUnit", "ms"}, {"otherData", {{"source", "cuzk timeline export"}}}};
  out << doc.dump() << "\n";
}

Waterfall analyze(const std::vector<Event>& ev) {
  Waterfall w;
  if (ev.empty()) return w;
  auto intervals = pair_intervals(ev, nullptr);

  // The span: from the first sign of work to the last result.
  static const std::set<std::string> begins = {"JOB_SUBMIT", "SYNTH_START", "SLOT_READY", "GPU_PICKUP", "GPU_START"};
  static const std::set<std::string> ends = {"SYNTH_END", "GPU_END", "PROOF_DONE", "JOB_DONE", "PARTITION_FAILED"};
  double s = INFINITY, e = -INFINITY;
  for (const auto& x : ev) {
    if (begins.count(x.name)) s = std::min(s, x.ms);
    if (ends.count(x.name)) e = std::max(e, x.ms);
  }
  if (!std::isfinite(s) || !std::isfinite(e) || e <= s) {
    s = ev.front().ms;
    e = ev.back().ms;
  }
  w.start_ms = s;
  w.end_ms = e;
  w.span_ms = std::max(0.0, e - s);

  // Rows: one per synthesis and GPU worker.
  std::map<std::string, WorkerRow> rows;
  std::map<std::string, std::string> gpu_worker_device;
  std::vector<double> synth_d, gpu_d;
  for (const auto& iv : intervals) {
    if (iv.stage != "SYNTH" && iv.stage != "GPU") continue;
    auto& r = rows[iv.worker];
    r.worker = iv.worker;
    r.kind = iv.stage == "SYNTH" ? "synth" : "gpu";
    double a = std::max(iv.start->ms, s), b = std::min(iv.end_ms, e);
    if (b > a) {
      r.busy.push_back({a, b});
      r.busy_ms += b - a;
    }
    if (iv.cut.empty()) (iv.stage == "SYNTH" ? synth_d : gpu_d).push_back(iv.end_ms - iv.start->ms);
    if (iv.stage == "GPU") gpu_worker_device[iv.worker] = gpu_key(iv);
  }
  for (auto& [name, r] : rows) w.rows.push_back(r);
  std::sort(w.rows.begin(), w.rows.end(), [](const WorkerRow& a, const WorkerRow& b) {
    if (a.kind != b.kind) return a.kind == "synth";
    return natural_less(a.worker, b.worker);
  });

  // Devices: a sweep over the events, tracking per device whether it proves, how many READY slots
  // wait for it, and globally whether synthesis runs or partitions are still outstanding.
  std::set<std::string> devs;
  for (const auto& iv : intervals)
    if (iv.stage == "GPU") devs.insert(gpu_key(iv));
  bool has_pickup = false;
  for (const auto& x : ev) has_pickup |= x.name == "GPU_PICKUP";

  // Point changes, ordered by time: (ms, order, fn) — applied before measuring the next segment.
  struct Change {
    double ms;
    int kind;  // 0 gpu+1, 1 gpu-1, 2 ready+1, 3 ready-1, 4 synth+1, 5 synth-1, 6 outstanding delta
    std::string dev;
    long delta;
  };
  std::vector<Change> ch;
  for (const auto& iv : intervals) {
    if (iv.stage == "GPU") {
      std::string d = gpu_key(iv);
      ch.push_back({iv.start->ms, 0, d, 1});
      ch.push_back({iv.end_ms, 1, d, -1});
      if (!has_pickup) ch.push_back({iv.start->ms, 3, d, -1});
      if (iv.cut == "interrupted") ch.push_back({iv.end_ms, 2, d, 1});  // the slot goes back to READY
    } else if (iv.stage == "SYNTH") {
      ch.push_back({iv.start->ms, 4, "", 1});
      ch.push_back({iv.end_ms, 5, "", -1});
    }
  }
  std::map<std::string, std::set<std::string>> finished;  // job -> finished partitions
  std::map<std::string, long> submitted;
  for (const auto& x : ev) {
    std::string dev = x.get("device");
    if (dev.empty()) {
      std::string wk = x.get("worker");
      dev = gpu_worker_device.count(wk) ? gpu_worker_device[wk] : "*";
    }
    if (x.name == "SLOT_READY") ch.push_back({x.ms, 2, dev, 1});
    else if (x.name == "GPU_PICKUP") ch.push_back({x.ms, 3, dev, -1});
    else if (x.name == "JOB_SUBMIT") {
      long n = (long)x.num("partitions", 0);
      submitted[x.job] = n;
      ch.push_back({x.ms, 6, "", n});
    } else if ((x.name == "PROOF_DONE" || x.name == "PARTITION_FAILED") && submitted.count(x.job)) {
      if (finished[x.job].insert(x.get("partition")).second) ch.push_back({x.ms, 6, "", -1});
    } else if (x.name == "JOB_DONE" && submitted.count(x.job)) {
      long left = submitted[x.job] - (long)finished[x.job].size();
      if (left > 0) ch.push_back({x.ms, 6, "", -left});
      submitted.erase(x.job);
    }
  }
  std::stable_sort(ch.begin(), ch.end(), [](const Change& a, const Change& b) { return a.ms < b.ms; });

  std::map<std::string, long> busy, ready;
  long synth = 0, outstanding = 0;
  std::map<std::string, DeviceStats> ds;
  std::map<std::string, std::map<std::string, double>> gap_parts;  // device -> cause -> ms in open gap
  std::map<std::string, double> gap_start;
  for (const auto& d : devs) ds[d].device = d;
  static const char* kSynth = "waiting on synthesis";
  static const char* kReady = "slot ready (pickup latency)";
  static const char* kNone = "no work";
  auto close_gap = [&](const std::string& d, double at) {
    auto it = gap_start.find(d);
    if (it == gap_start.end()) return;
    Gap g{it->second, at, kNone};
    double best = -1;
    for (auto& [cause, ms] : gap_parts[d])
      if (ms > best) {
        best = ms;
        g.cause = cause;
      }
    if (at > it->second) ds[d].gaps.push_back(g);
    gap_start.erase(it);
    gap_parts[d].clear();
  };
  size_t i = 0;
  double t = s;
  // Apply everything that happened before the span starts.
  auto apply = [&](const Change& c) {
    switch (c.kind) {
      case 0: case 1: busy[c.dev] += c.delta; break;
      case 2: ready[c.dev] += 1; break;
      case 3: ready[c.dev] = std::max(0L, ready[c.dev] - 1); break;
      case 4: case 5: synth += c.delta; break;
      case 6: outstanding = std::max(0L, outstanding + c.delta); break;
    }
  };
  while (i < ch.size() && ch[i].ms <= s) apply(ch[i++]);
  while (t < e) {
    double next = i < ch.size() ? std::min(ch[i].ms, e) : e;
    double seg = next - t;
    if (seg > 0) {
      for (const auto& d : devs) {
        auto& st = ds[d];
        if (busy[d] > 0) {
          st.busy_ms += seg;
          close_gap(d, t);
          continue;
        }
        const char* cause = (ready[d] + ready["*"] > 0) ? kReady : (synth > 0 || outstanding > 0) ? kSynth : kNone;
        if (cause == kReady) st.idle_ready_ms += seg;
        else if (cause == kSynth) st.idle_waiting_synth_ms += seg;
        else st.idle_no_work_ms += seg;
        if (!gap_start.count(d)) gap_start[d] = t;
        gap_parts[d][cause] += seg;
      }
    }
    t = next;
    while (i < ch.size() && ch[i].ms <= t) apply(ch[i++]);
  }
  for (const auto& d : devs) close_gap(d, e);
  for (const auto& iv : intervals)
    if (iv.stage == "GPU" && iv.cut.empty()) ds[gpu_key(iv)].proofs++;
  std::vector<std::string> order(devs.begin(), devs.end());
  std::sort(order.begin(), order.end(), natural_less);
  for (const auto& d : order) {
    auto st = ds[d];
    st.util = w.span_ms > 0 ? st.busy_ms / w.span_ms : 0;
    w.devices.push_back(st);
  }

  size_t done = 0, gpu_done = 0;
  for (const auto& x : ev) done += x.name == "PROOF_DONE";
  for (const auto& iv : intervals) gpu_done += iv.stage == "GPU" && iv.cut.empty();
  w.proofs = done ? done : gpu_done;
  w.sec_per_proof = w.proofs ? w.span_ms / 1000.0 / (double)w.proofs : 0;

  std::map<std::string, std::vector<double>> vals;
  for (const auto& x : ev)
    for (const auto& [k, v] : x.kv) {
      double d;
      if (k.size() > 3 && k.compare(k.size() - 3, 3, "_ms") == 0 && parse_double(v, d)) vals[x.name + "." + k].push_back(d);
    }
  if (!synth_d.empty()) vals["synth"] = synth_d;
  if (!gpu_d.empty()) vals["gpu"] = gpu_d;
  for (auto& [k, v] : vals) w.medians[k] = {median(v), v.size()};
  return w;
}

void render_waterfall(const Waterfall& w, std::ostream& out, int width) {
  width = std::max(width, 10);
  char buf[512];
  if (w.span_ms <= 0) {
    out << "no work in the log\n";
    return;
  }
  std::snprintf(buf, sizeof buf, "span %.3f s .. %.3f s (%.3f s): %zu proofs", w.start_ms / 1000, w.end_ms / 1000,
                w.span_ms / 1000, w.proofs);
  out << buf;
  if (w.proofs) {
    std::snprintf(buf, sizeof buf, ", %.3f s/proof (%.1f proofs/hour)", w.sec_per_proof, 3600.0 / w.sec_per_proof);
    out << buf;
  }
  out << "\n\n";
  size_t namew = 6;
  for (const auto& r : w.rows) namew = std::max(namew, r.worker.size());
  double bucket = w.span_ms / width;
  std::snprintf(buf, sizeof buf, "%-*s  0 s%*s%.2f s\n", (int)namew, "", width - 3 - 1, "", w.span_ms / 1000);
  out << buf;
  for (const auto& r : w.rows) {
    std::vector<double> fill(width, 0.0);
    for (auto [a, b] : r.busy) {
      int i0 = std::clamp((int)((a - w.start_ms) / bucket), 0, width - 1);
      int i1 = std::clamp((int)((b - w.start_ms) / bucket), 0, width - 1);
      for (int i = i0; i <= i1; i++) {
        double lo = w.start_ms + i * bucket, hi = lo + bucket;
        fill[i] += std::max(0.0, std::min(b, hi) - std::max(a, lo));
      }
    }
    std::string bar;
    for (double f : fill) bar += f >= bucket * 0.5 ? '#' : f > 0 ? '+' : '.';
    std::snprintf(buf, sizeof buf, "%-*s |%s| %5.1f%% busy\n", (int)namew, r.worker.c_str(), bar.c_str(),
                  100.0 * r.busy_ms / w.span_ms);
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "%-*s  ('#' busy most of a %.3f s bucket, '+' partly, '.' idle)\n", (int)namew, "",
                bucket / 1000);
  out << buf;

  out << "\nGPU utilisation\n";
  if (w.devices.empty()) out << "  no GPU_START/GPU_END events\n";
  for (const auto& d : w.devices) {
    double idle = w.span_ms - d.busy_ms;
    std::snprintf(buf, sizeof buf, "  device %s: %.1f%% busy (%.3f s of %.3f s), %zu proofs\n", d.device.c_str(),
                  100.0 * d.util, d.busy_ms / 1000, w.span_ms / 1000, d.proofs);
    out << buf;
    std::snprintf(buf, sizeof buf,
                  "    idle %.3f s: waiting on synthesis %.3f s, slot ready (pickup latency) %.3f s, no work %.3f s\n",
                  idle / 1000, d.idle_waiting_synth_ms / 1000, d.idle_ready_ms / 1000, d.idle_no_work_ms / 1000);
    out << buf;
    if (!d.gaps.empty()) {
      auto gaps = d.gaps;
      std::sort(gaps.begin(), gaps.end(),
                [](const Gap& a, const Gap& b) { return a.end_ms - a.start_ms > b.end_ms - b.start_ms; });
      std::snprintf(buf, sizeof buf, "    %zu idle gaps; longest:\n", gaps.size());
      out << buf;
      for (size_t k = 0; k < gaps.size() && k < 5; k++) {
        std::snprintf(buf, sizeof buf, "      %.3f s at +%.3f s (%s)\n", (gaps[k].end_ms - gaps[k].start_ms) / 1000,
                      (gaps[k].start_ms - w.start_ms) / 1000, gaps[k].cause.c_str());
        out << buf;
      }
    }
  }
  out << "\nstage medians\n";
  for (const auto& [k, v] : w.medians) {
    std::string name = k == "synth" ? "synth (SYNTH_START..SYNTH_END)" : k == "gpu" ? "gpu (GPU_START..GPU_END)" : k;
    std::snprintf(buf, sizeof buf, "  %-34s %10.3f ms  n=%zu\n", name.c_str(), v.first, v.second);
    out << buf;
  }
}

}  // namespace cuzk::cli::timeline
