// `cuzk timeline export --format chrome`: the merged log as a Chrome trace (Perfetto, about:tracing).
#include <algorithm>
#include <cctype>
#include <cmath>

#include <nlohmann/json.hpp>

#include "timeline.hpp"
#include "timeline/events.hpp"
#include "timeline_pairs.hpp"

namespace cuzk::cli::timeline {

namespace {

using json = nlohmann::ordered_json;

std::string label(const Event& e) {
  std::string s;
  if (!e.job.empty()) s += " job " + e.job;
  if (e.has(tl::kPartition)) s += " p" + e.get(tl::kPartition);
  return s;
}

double us(double ms) { return std::round(ms * 1000.0 * 1000.0) / 1000.0; }  // µs, ns resolution

void args_of(const Event& e, json& a) {
  if (!e.job.empty()) a["job"] = e.job;
  for (const auto& [k, v] : e.kv) {
    double d;
    if (parse_double(v, d) && k != "job" && k != tl::kWorker) a[k] = d;
    else a[k] = v;
  }
}

json slice(const std::string& name, const std::string& cat, double start_ms, double end_ms, std::pair<int, int> where,
           json args) {
  return {{"name", name},
          {"cat", cat},
          {"ph", "X"},
          {"ts", us(start_ms)},
          {"dur", us(std::max(0.0, end_ms - start_ms))},
          {"pid", where.first},
          {"tid", where.second},
          {"args", std::move(args)}};
}

}  // namespace

void export_chrome(const std::vector<Event>& events, std::ostream& out) {
  std::vector<const Event*> singles;
  auto intervals = pair_intervals(events, &singles);
  auto stretches = worker_stretches(events);

  const std::map<std::string, int> pids = {{"supervisor", 1}, {tl::kKindSynth, 2}, {tl::kKindGpu, 3}};
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
    if (iv.kind == tl::kKindGpu && !iv.device.empty()) device_of[iv.worker] = iv.device;
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
  for (const auto& iv : intervals) {
    json a = json::object();
    args_of(*iv.start, a);
    if (iv.end) args_of(*iv.end, a);
    if (!iv.cut.empty()) a["cut_short"] = iv.cut;
    std::string lower = iv.stage;
    for (auto& c : lower) c = (char)std::tolower((unsigned char)c);
    const auto w = where[iv.worker];
    trace.push_back(slice(lower + label(*iv.start), lower, iv.start->ms, iv.end_ms, w, a));
    // Synthesis: the witness, then the evaluation of a, b, c, nested inside its slice.
    if (iv.stage == "SYNTH" && iv.end) {
      const double t0 = iv.start->ms, wit = witness_ms_of(*iv.end), ev = iv.end->num(tl::kEvalMs);
      const double t1 = std::min(iv.end_ms, t0 + wit), t2 = std::min(iv.end_ms, t1 + ev);
      if (t1 > t0) trace.push_back(slice("witness", "synth.witness", t0, t1, w, {{tl::kWitnessMs, wit}}));
      if (t2 > t1) trace.push_back(slice("eval", "synth.eval", t1, t2, w, {{tl::kEvalMs, ev}}));
    }
  }
  for (const auto& st : stretches) {
    if (!where.count(st.worker)) continue;
    json a = json::object();
    if (st.event) args_of(*st.event, a);
    const char* name = st.kind == Stretch::Starting ? "starting" : st.kind == Stretch::Down ? "down" : "slot wait";
    const char* cat = st.kind == Stretch::Starting ? "starting" : st.kind == Stretch::Down ? "down" : "slot_wait";
    trace.push_back(slice(name, cat, st.start_ms, st.end_ms, where[st.worker], a));
  }
  for (const Event* e : singles) {
    if (e->name == tl::kSlotWait) continue;  // a slice above
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

}  // namespace cuzk::cli::timeline
