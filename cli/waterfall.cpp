// The waterfall's numbers (analyze): lanes painted with States, device and job totals, medians.
#include "waterfall.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "state_paint.hpp"
#include "timeline/events.hpp"
#include "timeline_pairs.hpp"

namespace cuzk::cli::timeline {

const char* state_label(State s) {
  switch (s) {
    case State::Witness: return "witness";
    case State::Eval: return "eval";
    case State::SynthOther: return "synthesis (other)";
    case State::SlotWait: return "slot wait";
    case State::Proving: return "proving";
    case State::WaitingOnSynthesis: return "waiting on synthesis";
    case State::PickupLatency: return "slot ready (pickup latency)";
    case State::Starting: return "worker starting (loading keys)";
    case State::Down: return "worker down";
    case State::KeyLoad: return "loading a key";
    case State::NoWork: return "no work";
  }
  return "?";
}

bool Lane::busy(State s) const {
  return kind == tl::kKindGpu ? s == State::Proving : s == State::Witness || s == State::Eval || s == State::SynthOther;
}

double Lane::busy_ms() const {
  double t = 0;
  for (size_t s = 0; s < kStates; s++)
    if (busy(State(s))) t += ms[s];
  return t;
}

namespace {

constexpr double kNone = -1;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double overlap(double a, double b, double s, double e) { return std::max(0.0, std::min(b, e) - std::max(a, s)); }

// A synthesis as its parts, one after another: witness, eval, the rest.
struct Parts {
  double t0, t1, t2, t3;
};
Parts synth_parts(const Interval& iv) {
  const double t0 = iv.start->ms, t3 = iv.end_ms;
  if (!iv.end) return {t0, t0, t0, t3};
  const double t1 = std::min(t3, t0 + std::max(0.0, witness_ms_of(*iv.end)));
  const double t2 = std::min(t3, t1 + std::max(0.0, iv.end->num(tl::kEvalMs)));
  return {t0, t1, t2, t3};
}

// The first and last moments of work: from the first sign of a job to the last result.
std::pair<double, double> work_span(const std::vector<Event>& ev) {
  static const std::set<std::string> begins = {tl::kJobSubmit, tl::kJobRecovered, tl::kSynthStart,
                                               tl::kSlotReady, tl::kGpuPickup,    tl::kGpuStart};
  static const std::set<std::string> ends = {tl::kSynthEnd, tl::kGpuEnd, tl::kProofDone, tl::kJobDone,
                                             tl::kPartitionFailed};
  double s = INFINITY, e = -INFINITY;
  for (const auto& x : ev) {
    if (begins.count(x.name)) s = std::min(s, x.ms);
    if (ends.count(x.name)) e = std::max(e, x.ms);
  }
  if (!std::isfinite(s) || !std::isfinite(e) || e <= s) return {ev.front().ms, ev.back().ms};
  return {s, e};
}

// Who is who: each worker's kind, and each GPU worker's device (its name when no event says).
struct Roster {
  std::map<std::string, std::string> kind;    // worker -> synth | gpu
  std::map<std::string, std::string> device;  // gpu worker -> device key
  std::string device_of_event(const Event& e) const {
    std::string d = e.get(tl::kDevice);
    if (!d.empty()) return d;
    auto it = device.find(e.get(tl::kWorker));
    return it == device.end() ? "*" : it->second;  // "*": every device
  }
};

Roster make_roster(const std::vector<Event>& ev, const std::vector<Interval>& intervals) {
  Roster r;
  for (const auto& iv : intervals) {
    if (iv.stage == "SYNTH") r.kind[iv.worker] = tl::kKindSynth;
    if (iv.stage != "GPU") continue;
    r.kind[iv.worker] = tl::kKindGpu;
    if (!r.device.count(iv.worker)) r.device[iv.worker] = iv.device.empty() ? iv.worker : iv.device;
  }
  for (const auto& e : ev) {
    if (e.name != tl::kWorkerStart && e.name != tl::kWorkerReady && e.name != tl::kWorkerExit &&
        e.name != tl::kSlotWait)
      continue;
    const std::string w = e.get(tl::kWorker), k = e.name == tl::kSlotWait ? tl::kKindSynth : kind_of(e);
    if (w.empty() || (k != tl::kKindSynth && k != tl::kKindGpu)) continue;
    r.kind.emplace(w, k);
    if (k == tl::kKindGpu && !r.device.count(w) && e.has(tl::kDevice) && !e.has(tl::kPartition))
      r.device[w] = e.get(tl::kDevice);
  }
  for (const auto& [w, k] : r.kind)
    if (k == tl::kKindGpu && !r.device.count(w)) r.device[w] = w;
  return r;
}

// Changes of the counters that every GPU lane shares: synthesis running, and partitions submitted
// but not yet proved (a partition is done at its GPU_END, or at PROOF_DONE / PARTITION_FAILED).
void shared_gpu_changes(const std::vector<Event>& ev, const std::vector<Interval>& intervals, size_t synth_counter,
                        size_t outstanding_counter, std::vector<CounterChange>& out) {
  for (const auto& iv : intervals)
    if (iv.stage == "SYNTH") {
      out.push_back({iv.start->ms, synth_counter, 1});
      out.push_back({iv.end_ms, synth_counter, -1});
    }
  std::map<std::string, long> submitted;
  std::map<std::string, std::set<std::string>> finished;
  size_t run = ev.front().run;
  for (const auto& x : ev) {
    if (x.run != run) {  // a new daemon run: what is left comes back as JOB_RECOVERED
      run = x.run;
      submitted.clear();
      finished.clear();
      out.push_back({x.ms, outstanding_counter, 0, true});
    }
    if (x.name == tl::kJobSubmit || x.name == tl::kJobRecovered) {
      const long n = (long)x.num(tl::kPartitions, 0);
      submitted[x.job] = n;
      finished[x.job].clear();
      out.push_back({x.ms, outstanding_counter, n});
    } else if ((x.name == tl::kGpuEnd || x.name == tl::kProofDone || x.name == tl::kPartitionFailed) &&
               submitted.count(x.job)) {
      if (finished[x.job].insert(x.get(tl::kPartition)).second) out.push_back({x.ms, outstanding_counter, -1});
    } else if (x.name == tl::kJobDone && submitted.count(x.job)) {
      const long left = submitted[x.job] - (long)finished[x.job].size();
      if (left > 0) out.push_back({x.ms, outstanding_counter, -left});
      submitted.erase(x.job);
    }
  }
}

// Slots of a device that are READY and not yet being proved: SLOT_READY raises, GPU_START lowers
// (the GPU worker's preparation between GPU_PICKUP and GPU_START is still pickup latency), an
// interrupted proof puts its slot back, a new daemon run empties the ring.
void ready_changes(const std::vector<Event>& ev, const std::vector<Interval>& intervals, const Roster& roster,
                   const std::string& dev, size_t counter, std::vector<CounterChange>& out) {
  size_t run = ev.front().run;
  for (const auto& x : ev) {
    if (x.run != run) {
      run = x.run;
      out.push_back({x.ms, counter, 0, true});
    }
    const bool up = x.name == tl::kSlotReady, down = x.name == tl::kGpuStart;
    if (!up && !down) continue;
    const std::string d = roster.device_of_event(x);
    if (d == dev || d == "*") out.push_back({x.ms, counter, up ? 1 : -1});
  }
  for (const auto& iv : intervals)
    if (iv.stage == "GPU" && iv.cut == "interrupted" && roster.device.count(iv.worker) &&
        roster.device.at(iv.worker) == dev)
      out.push_back({iv.end_ms, counter, 1});
}

void add_totals(Lane& l, double s, double e) {
  for (const auto& g : l.segments) l.ms[size_t(g.state)] += overlap(g.start_ms, g.end_ms, s, e);
}

Lane synth_lane(const std::string& worker, const std::vector<Interval>& intervals,
                const std::vector<Stretch>& stretches, double s, double e) {
  Lane l;
  l.worker = worker;
  l.kind = tl::kKindSynth;
  const std::vector<State> states = {State::Witness, State::Eval,     State::SynthOther,
                                     State::SlotWait, State::Starting, State::Down};
  std::vector<CounterChange> ch;
  auto add = [&](size_t c, double a, double b) {
    if (b <= a) return;
    ch.push_back({a, c, 1});
    ch.push_back({b, c, -1});
  };
  for (const auto& iv : intervals) {
    if (iv.stage != "SYNTH" || iv.worker != worker) continue;
    const Parts p = synth_parts(iv);
    add(0, p.t0, p.t1);
    add(1, p.t1, p.t2);
    add(2, p.t2, p.t3);
    Bar b{iv.start->ms, iv.end_ms, iv.start->job, iv.start->get(tl::kPartition), p.t1 - p.t0, p.t2 - p.t1, kNone, iv.cut};
    l.bars.push_back(b);
    l.done += iv.cut.empty();
  }
  for (const auto& st : stretches)
    if (st.worker == worker) add(st.kind == Stretch::SlotWait ? 3 : st.kind == Stretch::Starting ? 4 : 5, st.start_ms, st.end_ms);
  l.segments = paint_states(s, e, std::move(ch), states, State::NoWork);
  add_totals(l, s, e);
  return l;
}

Lane gpu_lane(const std::string& dev, const std::vector<Event>& ev, const std::vector<Interval>& intervals,
              const std::vector<Stretch>& stretches, const Roster& roster,
              const std::vector<CounterChange>& shared, double s, double e) {
  Lane l;
  l.kind = tl::kKindGpu;
  l.device = dev;
  for (const auto& [w, d] : roster.device)
    if (d == dev) {
      l.worker = w;
      break;
    }
  // Counters 5 and 6 (synthesis running, partitions outstanding) are the shared ones. A key loading
  // while a READY slot waits for it is the key's time, not pickup latency.
  const std::vector<State> states = {State::Proving,       State::Down,          State::Starting,
                                     State::KeyLoad,       State::PickupLatency, State::WaitingOnSynthesis,
                                     State::WaitingOnSynthesis};
  std::vector<CounterChange> ch = shared;
  auto on_dev = [&](const std::string& worker) {
    auto it = roster.device.find(worker);
    return it != roster.device.end() && it->second == dev;
  };
  for (const auto& iv : intervals) {
    if (iv.stage != "GPU" || !on_dev(iv.worker)) continue;
    ch.push_back({iv.start->ms, 0, 1});
    ch.push_back({iv.end_ms, 0, -1});
    Bar b{iv.start->ms, iv.end_ms, iv.start->job, iv.start->get(tl::kPartition), 0, 0, kNone, iv.cut};
    if (iv.end && iv.end->has(tl::kKernelMs)) {
      b.kernel_ms = iv.end->num(tl::kKernelMs);
      l.kernel_ms += b.kernel_ms;
      l.kernel_reported = true;
    }
    l.bars.push_back(b);
    l.done += iv.cut.empty();
  }
  for (const auto& st : stretches)
    if (st.kind != Stretch::SlotWait && on_dev(st.worker) && st.end_ms > st.start_ms) {
      const size_t c = st.kind == Stretch::Down ? 1 : 2;
      ch.push_back({st.start_ms, c, 1});
      ch.push_back({st.end_ms, c, -1});
    }
  // KEY_LOAD ends a load of load_ms on its device.
  for (const auto& x : ev)
    if (x.name == tl::kKeyLoad && (x.get(tl::kDevice) == dev || on_dev(x.get(tl::kWorker)))) {
      ch.push_back({x.ms - x.num(tl::kLoadMs), 3, 1});
      ch.push_back({x.ms, 3, -1});
      KeyLoads& k = l.key_loads;
      k.loads++;
      k.load_ms += x.num(tl::kLoadMs), k.file_ms += x.num(tl::kFileMs), k.prepare_ms += x.num(tl::kPrepareMs);
      k.upload_ms += x.num(tl::kUploadMs), k.check_ms += x.num(tl::kCheckMs), k.tables_ms += x.num(tl::kTablesMs);
      k.upload_bytes += x.num(tl::kUploadBytes);
    }
  ready_changes(ev, intervals, roster, dev, 4, ch);
  l.segments = paint_states(s, e, std::move(ch), states, State::NoWork);
  add_totals(l, s, e);
  return l;
}

// DeviceStats::steady and startup from the lane's segments and proof bars.
void steady_window(const Lane& l, DeviceStats& d) {
  auto& st = d.steady;
  bool any = false;
  for (const auto& g : l.segments)
    if (g.state == State::Proving) {
      if (!any) st.start_ms = g.start_ms;
      st.end_ms = g.end_ms;
      any = true;
    }
  if (!any) return;
  for (const auto& g : l.segments) {
    const double lo = std::max(g.start_ms, st.start_ms), hi = std::min(g.end_ms, st.end_ms);
    if (g.state == State::Proving) st.busy_ms += std::max(0.0, hi - lo);
    else if (hi > lo) st.idle[size_t(g.state)] += hi - lo;
    if (g.state != State::Proving && g.start_ms < st.start_ms)
      d.startup[size_t(g.state)] += std::min(g.end_ms, st.start_ms) - g.start_ms;
  }
  std::vector<double> walls;
  for (const auto& b : l.bars)
    if (b.cut.empty() && b.start_ms >= st.start_ms && b.end_ms <= st.end_ms) {
      st.proofs++;
      walls.push_back(b.end_ms - b.start_ms);
      if (b.kernel_ms > 0) st.kernel_ms += b.kernel_ms;
    }
  if (!walls.empty()) st.median_proof_ms = median(walls);
}

DeviceStats device_stats(const Lane& l, double span_ms) {
  DeviceStats d;
  d.device = l.device;
  d.worker = l.worker;
  d.busy_ms = l.ms[size_t(State::Proving)];
  d.util = span_ms > 0 ? d.busy_ms / span_ms : 0;
  d.kernel_ms = l.kernel_ms;
  d.kernel_reported = l.kernel_reported;
  d.kernel_util = span_ms > 0 ? d.kernel_ms / span_ms : 0;
  d.idle_waiting_synth_ms = l.ms[size_t(State::WaitingOnSynthesis)];
  d.idle_ready_ms = l.ms[size_t(State::PickupLatency)];
  d.idle_starting_ms = l.ms[size_t(State::Starting)];
  d.idle_down_ms = l.ms[size_t(State::Down)];
  d.idle_key_load_ms = l.ms[size_t(State::KeyLoad)];
  d.key_loads = l.key_loads;
  d.idle_no_work_ms = l.ms[size_t(State::NoWork)];
  d.proofs = l.done;
  // Gaps: runs of idle segments, named after the state that took most of each.
  std::map<State, double> parts;
  double gap_start = 0;
  auto close = [&](double at) {
    if (parts.empty()) return;
    auto best = std::max_element(parts.begin(), parts.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    d.gaps.push_back({gap_start, at, state_label(best->first)});
    parts.clear();
  };
  for (const auto& g : l.segments) {
    if (g.state == State::Proving) {
      close(g.start_ms);
      continue;
    }
    if (parts.empty()) gap_start = g.start_ms;
    parts[g.state] += g.end_ms - g.start_ms;
  }
  close(l.segments.empty() ? 0 : l.segments.back().end_ms);
  steady_window(l, d);
  return d;
}

WorkerRow row_of(const Lane& l) {
  WorkerRow r;
  r.worker = l.worker.empty() ? l.device : l.worker;
  r.kind = l.kind;
  for (const auto& g : l.segments)
    if (l.busy(g.state)) {
      if (!r.busy.empty() && r.busy.back().second == g.start_ms) r.busy.back().second = g.end_ms;
      else r.busy.push_back({g.start_ms, g.end_ms});
      r.busy_ms += g.end_ms - g.start_ms;
    }
  return r;
}

std::vector<JobStats> job_stats(const std::vector<Event>& ev, const std::vector<Interval>& intervals,
                                const std::vector<Stretch>& stretches, const std::vector<Lane>& lanes, double s,
                                double e) {
  std::map<std::string, JobStats> jobs;
  auto job = [&](const std::string& id) -> JobStats& {
    JobStats& j = jobs[id];
    j.job = id;
    return j;
  };
  for (const auto& x : ev) {
    if (x.job.empty()) continue;
    if (x.name == tl::kJobSubmit || x.name == tl::kJobRecovered) job(x.job);
    if (x.name == tl::kProofDone) job(x.job).proofs++;
  }
  for (const auto& iv : intervals) {
    if (iv.start->job.empty()) continue;
    if (iv.stage == "SYNTH") {
      const Parts p = synth_parts(iv);
      JobStats& j = job(iv.start->job);
      j.ms[size_t(State::Witness)] += overlap(p.t0, p.t1, s, e);
      j.ms[size_t(State::Eval)] += overlap(p.t1, p.t2, s, e);
      j.ms[size_t(State::SynthOther)] += overlap(p.t2, p.t3, s, e);
    } else if (iv.stage == "GPU") {
      JobStats& j = job(iv.start->job);
      j.ms[size_t(State::Proving)] += overlap(iv.start->ms, iv.end_ms, s, e);
      if (iv.end) j.kernel_ms += std::max(0.0, iv.end->num(tl::kKernelMs));
    }
  }
  for (const auto& st : stretches)
    if (st.kind == Stretch::SlotWait && st.event && !st.event->job.empty())
      job(st.event->job).ms[size_t(State::SlotWait)] += overlap(st.start_ms, st.end_ms, s, e);
  // A GPU's idle time goes to the job of the proof it started next.
  for (const auto& l : lanes) {
    if (l.kind != tl::kKindGpu) continue;
    for (const auto& g : l.segments) {
      if (g.state == State::Proving || g.state == State::NoWork) continue;
      auto next = std::lower_bound(l.bars.begin(), l.bars.end(), g.end_ms,
                                   [](const Bar& b, double t) { return b.start_ms < t; });
      if (next != l.bars.end() && !next->job.empty()) job(next->job).ms[size_t(g.state)] += g.end_ms - g.start_ms;
    }
  }
  std::vector<JobStats> out;
  for (auto& [id, j] : jobs) out.push_back(j);
  std::sort(out.begin(), out.end(), [](const JobStats& a, const JobStats& b) { return natural_less(a.job, b.job); });
  return out;
}

std::map<std::string, std::pair<double, size_t>> medians_of(const std::vector<Event>& ev,
                                                            const std::vector<Interval>& intervals) {
  std::map<std::string, std::vector<double>> vals;
  for (const auto& x : ev)
    for (const auto& [k, v] : x.kv) {
      double d;
      if (k.size() > 3 && k.compare(k.size() - 3, 3, "_ms") == 0 && k != tl::kUnixMs && parse_double(v, d))
        vals[x.name + "." + k].push_back(d);
    }
  for (const auto& iv : intervals)
    if ((iv.stage == "SYNTH" || iv.stage == "GPU") && iv.cut.empty())
      vals[iv.stage == "SYNTH" ? "synth" : "gpu"].push_back(iv.end_ms - iv.start->ms);
  std::map<std::string, std::pair<double, size_t>> out;
  for (auto& [k, v] : vals) out[k] = {median(v), v.size()};
  return out;
}

}  // namespace

Waterfall analyze(const std::vector<Event>& ev) {
  Waterfall w;
  if (ev.empty()) return w;
  const auto intervals = pair_intervals(ev, nullptr);
  const auto stretches = worker_stretches(ev);
  const auto [s, e] = work_span(ev);
  w.start_ms = s;
  w.end_ms = e;
  w.span_ms = std::max(0.0, e - s);

  const Roster roster = make_roster(ev, intervals);
  std::vector<std::string> synths, devs;
  for (const auto& [name, kind] : roster.kind)
    if (kind == tl::kKindSynth) synths.push_back(name);
  for (const auto& [name, dev] : roster.device)
    if (std::find(devs.begin(), devs.end(), dev) == devs.end()) devs.push_back(dev);
  std::sort(synths.begin(), synths.end(), natural_less);
  std::sort(devs.begin(), devs.end(), natural_less);

  std::vector<CounterChange> shared;
  shared_gpu_changes(ev, intervals, 5, 6, shared);
  for (const auto& name : synths) w.lanes.push_back(synth_lane(name, intervals, stretches, s, e));
  for (const auto& dev : devs) {
    w.lanes.push_back(gpu_lane(dev, ev, intervals, stretches, roster, shared, s, e));
    w.devices.push_back(device_stats(w.lanes.back(), w.span_ms));
  }
  for (const auto& l : w.lanes) w.rows.push_back(row_of(l));
  w.jobs = job_stats(ev, intervals, stretches, w.lanes, s, e);

  size_t done = 0, gpu_done = 0;
  for (const auto& x : ev) done += x.name == tl::kProofDone;
  for (const auto& iv : intervals) gpu_done += iv.stage == "GPU" && iv.cut.empty();
  w.proofs = done ? done : gpu_done;
  w.sec_per_proof = w.proofs ? w.span_ms / 1000.0 / (double)w.proofs : 0;
  w.medians = medians_of(ev, intervals);
  return w;
}

}  // namespace cuzk::cli::timeline
