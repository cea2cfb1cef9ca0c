// `cuzk waterfall LOG`: the text report.
#include <algorithm>
#include <cstdio>
#include <string>

#include "timeline/events.hpp"
#include "waterfall.hpp"

namespace cuzk::cli::timeline {

namespace {

double at(const StateMs& ms, State s) { return ms[size_t(s)]; }
double secs(const StateMs& ms, State s) { return ms[size_t(s)] / 1000; }
// Witness, eval and the rest of the syntheses, in seconds.
double synthesis_s(const StateMs& ms) {
  return (at(ms, State::Witness) + at(ms, State::Eval) + at(ms, State::SynthOther)) / 1000;
}

// The chart's letter for an idle bucket, by the state that took most of it.
char idle_char(State s) {
  switch (s) {
    case State::SlotWait: return 'w';
    case State::WaitingOnSynthesis: return 's';
    case State::PickupLatency: return 'p';
    case State::Starting: return 'L';
    case State::KeyLoad: return 'k';
    case State::Down: return 'x';
    default: return '.';
  }
}

std::string chart_row(const Lane& l, double start, double bucket, int width) {
  std::string bar;
  size_t k = 0;
  for (int i = 0; i < width; i++) {
    const double lo = start + i * bucket, hi = lo + bucket;
    StateMs in{};
    while (k < l.segments.size() && l.segments[k].end_ms <= lo) k++;
    for (size_t j = k; j < l.segments.size() && l.segments[j].start_ms < hi; j++) {
      const Segment& g = l.segments[j];
      in[size_t(g.state)] += std::max(0.0, std::min(g.end_ms, hi) - std::max(g.start_ms, lo));
    }
    double busy = 0;
    State idle = State::NoWork;
    double idle_best = -1;
    for (size_t s = 0; s < kStates; s++) {
      if (l.busy(State(s))) busy += in[s];
      else if (in[s] > idle_best) idle_best = in[s], idle = State(s);
    }
    bar += busy >= bucket * 0.5 ? '#' : busy > 0 ? '+' : idle_char(idle);
  }
  return bar;
}

void print_chart(const Waterfall& w, std::ostream& out, int width) {
  char buf[512];
  size_t namew = 6;
  for (const auto& r : w.rows) namew = std::max(namew, r.worker.size());
  const double bucket = w.span_ms / width;
  std::snprintf(buf, sizeof buf, "%-*s  0 s%*s%.2f s\n", (int)namew, "", width - 3 - 1, "", w.span_ms / 1000);
  out << buf;
  for (size_t i = 0; i < w.lanes.size(); i++) {
    const Lane& l = w.lanes[i];
    std::snprintf(buf, sizeof buf, "%-*s |%s| %5.1f%% busy\n", (int)namew, w.rows[i].worker.c_str(),
                  chart_row(l, w.start_ms, bucket, width).c_str(), 100.0 * l.busy_ms() / w.span_ms);
    out << buf;
  }
  std::snprintf(buf, sizeof buf,
                "%-*s  '#' busy most of a %.3f s bucket, '+' partly; idle: 'w' slot wait, 's' waiting on synthesis,\n"
                "%-*s  'p' slot ready (pickup latency), 'L' worker starting (loading keys), 'k' loading a key, 'x' worker down, '.' no work\n",
                (int)namew, "", bucket / 1000, (int)namew, "");
  out << buf;
}

// The idle states of ms that are not zero, as "waiting on synthesis 0.300 s, ..." ("none" if all are).
std::string idle_list(const StateMs& ms) {
  std::string r;
  char buf[128];
  for (State s : {State::WaitingOnSynthesis, State::PickupLatency, State::Starting, State::KeyLoad, State::Down,
                  State::NoWork}) {
    if (at(ms, s) < 0.5) continue;  // prints as 0.000 s
    std::snprintf(buf, sizeof buf, "%s%s %.3f s", r.empty() ? "" : ", ", state_label(s), secs(ms, s));
    r += buf;
  }
  return r.empty() ? "none" : r;
}

// The steady state (first GPU_START to last GPU_END) against the GPU-bound floor (the median proof),
// and the start-up before it.
void print_steady(const DeviceStats& d, std::ostream& out) {
  const auto& st = d.steady;
  const double win = st.end_ms - st.start_ms;
  if (st.proofs == 0 || win <= 0) return;
  char buf[512];
  double idle = 0, before = 0;
  for (size_t s = 0; s < kStates; s++) idle += st.idle[s], before += d.startup[s];
  std::snprintf(buf, sizeof buf,
                "    steady state (first GPU_START → last GPU_END, %.3f s): %zu proofs, %.4f s/proof, %+.1f%% against "
                "the median proof (%.4f s); GPU busy %.1f%%",
                win / 1000, st.proofs, st.sec_per_proof(), 100.0 * (st.sec_per_proof() * 1000 / st.median_proof_ms - 1),
                st.median_proof_ms / 1000, 100.0 * st.busy_ms / win);
  out << buf;
  if (d.kernel_reported) {
    std::snprintf(buf, sizeof buf, ", kernels busy %.1f%%", 100.0 * st.kernel_ms / win);
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "\n      idle inside %.3f s: %s\n    start-up before the first proof %.3f s: %s\n",
                idle / 1000, idle_list(st.idle).c_str(), before / 1000, idle_list(d.startup).c_str());
  out << buf;
}

// With several devices: their steady states together, from the first GPU_START of any to the last
// GPU_END of any (the stream's throughput without its start-up).
void print_steady_all(const Waterfall& w, std::ostream& out) {
  double lo = 0, hi = 0;
  size_t proofs = 0, n = 0;
  for (const auto& d : w.devices) {
    if (d.steady.proofs == 0) continue;
    lo = n ? std::min(lo, d.steady.start_ms) : d.steady.start_ms;
    hi = n ? std::max(hi, d.steady.end_ms) : d.steady.end_ms;
    proofs += d.steady.proofs;
    n++;
  }
  if (n < 2 || hi <= lo) return;
  char buf[256];
  const double spp = (hi - lo) / 1000 / (double)proofs;
  std::snprintf(buf, sizeof buf, "  %zu devices, steady state together (%.3f s): %zu proofs, %.4f s/proof (%.2f proofs/s)\n",
                n, (hi - lo) / 1000, proofs, spp, 1 / spp);
  out << buf;
}

void print_devices(const Waterfall& w, std::ostream& out) {
  char buf[512];
  out << "\nGPU utilisation\n";
  if (w.devices.empty()) out << "  no GPU_START/GPU_END events\n";
  print_steady_all(w, out);
  for (const auto& d : w.devices) {
    const std::string who = d.worker.empty() || d.worker == d.device ? "" : " (" + d.worker + ")";
    std::snprintf(buf, sizeof buf, "  device %s%s: GPU busy (wall, GPU_START→GPU_END) %.1f%% (%.3f s of %.3f s) | ",
                  d.device.c_str(), who.c_str(), 100.0 * d.util, d.busy_ms / 1000, w.span_ms / 1000);
    out << buf;
    if (d.kernel_reported)
      std::snprintf(buf, sizeof buf, "kernels busy %.1f%% (%.3f s) | %zu proofs\n", 100.0 * d.kernel_util,
                    d.kernel_ms / 1000, d.proofs);
    else
      std::snprintf(buf, sizeof buf, "kernels busy not reported | %zu proofs\n", d.proofs);
    out << buf;
    std::snprintf(buf, sizeof buf,
                  "    idle %.3f s: waiting on synthesis %.3f s, slot ready (pickup latency) %.3f s, "
                  "worker starting (loading keys) %.3f s, loading a key %.3f s, worker down %.3f s, no work %.3f s\n",
                  (w.span_ms - d.busy_ms) / 1000, d.idle_waiting_synth_ms / 1000, d.idle_ready_ms / 1000,
                  d.idle_starting_ms / 1000, d.idle_key_load_ms / 1000, d.idle_down_ms / 1000,
                  d.idle_no_work_ms / 1000);
    out << buf;
    if (const KeyLoads& k = d.key_loads; k.loads) {
      std::snprintf(buf, sizeof buf,
                    "    key loads %zu, %.3f s: file %.3f s, prepare %.3f s, upload %.3f s (%.1f GB, %.2f GB/s), "
                    "checks %.3f s, tables %.3f s\n",
                    k.loads, k.load_ms / 1000, k.file_ms / 1000, k.prepare_ms / 1000, k.upload_ms / 1000,
                    k.upload_bytes / 1e9, k.upload_ms > 0 ? k.upload_bytes / k.upload_ms / 1e6 : 0.0,
                    k.check_ms / 1000, k.tables_ms / 1000);
      out << buf;
    }
    print_steady(d, out);
    if (d.gaps.empty()) continue;
    auto gaps = d.gaps;
    std::sort(gaps.begin(), gaps.end(),
              [](const Gap& a, const Gap& b) { return a.end_ms - a.start_ms > b.end_ms - b.start_ms; });
    std::snprintf(buf, sizeof buf, "    %zu idle gap%s; longest:\n", gaps.size(), gaps.size() == 1 ? "" : "s");
    out << buf;
    for (size_t k = 0; k < gaps.size() && k < 5; k++) {
      std::snprintf(buf, sizeof buf, "      %.3f s at +%.3f s (%s)\n", (gaps[k].end_ms - gaps[k].start_ms) / 1000,
                    (gaps[k].start_ms - w.start_ms) / 1000, gaps[k].cause.c_str());
      out << buf;
    }
  }
}

void print_synth_workers(const Waterfall& w, std::ostream& out) {
  char buf[512];
  StateMs total{};
  size_t n = 0, done = 0;
  auto line = [&](const std::string& name, const StateMs& ms, size_t tasks) {
    std::snprintf(buf, sizeof buf, "  %-10s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %6zu\n", name.c_str(),
                  synthesis_s(ms), secs(ms, State::Witness), secs(ms, State::Eval), secs(ms, State::SynthOther),
                  secs(ms, State::SlotWait), secs(ms, State::Starting), secs(ms, State::Down), secs(ms, State::NoWork),
                  tasks);
    out << buf;
  };
  for (const auto& l : w.lanes) {
    if (l.kind != tl::kKindSynth) continue;
    if (n++ == 0) {
      out << "\nsynthesis workers (seconds)\n";
      std::snprintf(buf, sizeof buf, "  %-10s %9s %9s %9s %9s %9s %9s %9s %9s %6s\n", "worker", "synthesis", "witness",
                    "eval", "other", "slot wait", "starting", "down", "no work", "done");
      out << buf;
    }
    line(l.worker, l.ms, l.done);
    for (size_t s = 0; s < kStates; s++) total[s] += l.ms[s];
    done += l.done;
  }
  if (n > 1) line("total", total, done);
}

void print_jobs(const Waterfall& w, std::ostream& out, size_t max_jobs) {
  if (w.jobs.empty()) return;
  char buf[512];
  out << "\njobs (seconds; a GPU's idle time is charged to the job it proved next)\n";
  std::snprintf(buf, sizeof buf, "  %-8s %6s %9s %9s %9s %9s %9s %9s %12s %9s %9s %9s\n", "job", "proofs", "synthesis",
                "witness", "eval", "slot wait", "GPU busy", "kernels", "GPU waited", "pickup", "starting", "down");
  out << buf;
  std::snprintf(buf, sizeof buf, "  %-8s %6s %9s %9s %9s %9s %9s %9s %12s\n", "", "", "", "", "", "", "", "",
                "on synthesis");
  out << buf;
  JobStats total;
  total.job = "total";
  auto line = [&](const JobStats& j) {
    const StateMs& m = j.ms;
    std::snprintf(buf, sizeof buf, "  %-8s %6zu %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %12.3f %9.3f %9.3f %9.3f\n",
                  j.job.c_str(), j.proofs, synthesis_s(m), secs(m, State::Witness), secs(m, State::Eval), secs(m, State::SlotWait), secs(m, State::Proving),
                  j.kernel_ms / 1000, secs(m, State::WaitingOnSynthesis), secs(m, State::PickupLatency),
                  secs(m, State::Starting), secs(m, State::Down));
    out << buf;
  };
  for (size_t i = 0; i < w.jobs.size(); i++) {
    const JobStats& j = w.jobs[i];
    if (max_jobs == 0 || i < max_jobs) line(j);
    total.proofs += j.proofs;
    total.kernel_ms += j.kernel_ms;
    for (size_t s = 0; s < kStates; s++) total.ms[s] += j.ms[s];
  }
  if (max_jobs && w.jobs.size() > max_jobs) {
    std::snprintf(buf, sizeof buf, "  ... %zu more jobs (--jobs 0 lists every one)\n", w.jobs.size() - max_jobs);
    out << buf;
  }
  if (w.jobs.size() > 1) line(total);
}

void print_medians(const Waterfall& w, std::ostream& out) {
  char buf[512];
  out << "\nstage medians\n";
  for (const auto& [k, v] : w.medians) {
    std::string name = k == "synth" ? "synth (SYNTH_START..SYNTH_END)" : k == "gpu" ? "gpu (GPU_START..GPU_END)" : k;
    std::snprintf(buf, sizeof buf, "  %-34s %10.3f ms  n=%zu\n", name.c_str(), v.first, v.second);
    out << buf;
  }
}

}  // namespace

void render_waterfall(const Waterfall& w, std::ostream& out, int width, size_t max_jobs) {
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
  print_chart(w, out, width);
  print_devices(w, out);
  print_synth_workers(w, out);
  print_jobs(w, out, max_jobs);
  print_medians(w, out);
}

}  // namespace cuzk::cli::timeline
