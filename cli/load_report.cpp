// `cuzk load`'s summary: counts, throughput, the clients' latency percentiles and the daemon's own
// JOB_SUBMIT -> JOB_DONE time of the same jobs (from its timeline log, else from the job records).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "load.hpp"
#include "timeline.hpp"
#include "timeline/events.hpp"

namespace cuzk::cli {

namespace {

using ojson = nlohmann::ordered_json;

// The nearest-rank percentile p (0..100) of sorted values; 0 for none.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = (size_t)std::ceil(p / 100.0 * (double)sorted.size());
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

struct DaemonSide {
  std::string source;  // "timeline", "api" or "" (none)
  std::vector<double> ms;
};

// The daemon's JOB_SUBMIT -> JOB_DONE of each job in `ids`, from the log at `path`. The supervisor
// holds its newest events briefly before it writes them, so the log is read again, for up to 3 s,
// until every job's JOB_DONE is in it.
std::vector<double> timeline_times(const std::string& path, const std::set<std::string>& ids, std::ostream& err) {
  std::map<std::string, double> submit, end;
  for (int tries = 0;; tries++) {
    submit.clear();
    end.clear();
    size_t skipped = 0;
    try {
      for (const auto& ev : timeline::read_log_file(path, &skipped)) {
        if (!ids.count(ev.job)) continue;
        if (ev.name == tl::kJobSubmit) submit[ev.job] = ev.ms;
        else if (ev.name == tl::kJobDone) end[ev.job] = ev.ms;
      }
    } catch (const std::exception& e) {
      err << "warning: " << path << ": " << e.what() << "\n";
      return {};
    }
    if (end.size() >= ids.size() || tries >= 30) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::vector<double> ms;
  for (const auto& [job, t] : end) {
    auto s = submit.find(job);
    if (s != submit.end()) ms.push_back(t - s->second);
  }
  if (ms.size() < ids.size())
    err << "warning: " << path << " has JOB_SUBMIT and JOB_DONE of " << ms.size() << " of the " << ids.size()
        << " jobs done\n";
  return ms;
}

DaemonSide daemon_side(const LoadReport& r, const std::string& timeline, std::ostream& err) {
  DaemonSide d;
  std::set<std::string> ids;
  for (const auto& j : r.jobs)
    if (j.done) ids.insert(j.id);
  if (ids.empty()) return d;
  if (!timeline.empty()) {
    d.source = "timeline";
    d.ms = timeline_times(timeline, ids, err);
  } else {
    d.source = "api";
    for (const auto& j : r.jobs)
      if (j.done && j.daemon_ms >= 0) d.ms.push_back(j.daemon_ms);
  }
  std::sort(d.ms.begin(), d.ms.end());
  if (d.ms.empty()) d.source.clear();
  return d;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

void print_load_report(const LoadReport& r, const std::string& timeline, bool json, std::ostream& out,
                       std::ostream& err) {
  std::vector<double> lat;
  size_t done = 0;
  for (const auto& j : r.jobs)
    if (j.done) {
      done++;
      lat.push_back(j.client_ms);
    }
  std::sort(lat.begin(), lat.end());
  const size_t failed = r.jobs.size() - done;
  const double rate = r.wall_s > 0 ? (double)done / r.wall_s : 0;
  const DaemonSide d = daemon_side(r, timeline, err);
  auto round3 = [](double v) { return std::round(v * 1000) / 1000; };
  if (json) {
    ojson j;
    j["circuit"] = r.circuit;
    j["clients"] = r.clients;
    j["warmup"] = r.warmup;
    j["warmup_failed"] = r.warmup_failed;
    j["completed"] = done;
    j["failed"] = failed;
    j["first_error"] = r.first_error.empty() ? ojson(nullptr) : ojson(r.first_error);
    j["verified"] = r.verified < 0 ? ojson(nullptr) : ojson(r.verified);
    j["wall_s"] = round3(r.wall_s);
    j["jobs_per_s"] = round3(rate);
    j["latency_ms"] = {{"p50", round3(percentile(lat, 50))}, {"p90", round3(percentile(lat, 90))},
                       {"p99", round3(percentile(lat, 99))}, {"max", round3(lat.empty() ? 0 : lat.back())}};
    if (d.source.empty()) j["daemon_ms"] = nullptr;
    else
      j["daemon_ms"] = {{"source", d.source}, {"jobs", d.ms.size()}, {"p50", round3(percentile(d.ms, 50))},
                        {"p99", round3(percentile(d.ms, 99))}};
    out << j.dump(2) << "\n";
    return;
  }
  out << "cuzk load: circuit " << r.circuit << ", " << r.clients << " client" << (r.clients == 1 ? "" : "s") << ", "
      << r.jobs.size() << " jobs";
  if (r.warmup) out << " after " << r.warmup << " warm-up" << (r.warmup_failed ? " (" + std::to_string(r.warmup_failed) + " failed)" : "");
  out << "\n";
  out << "jobs:     " << done << " done, " << failed << " failed\n";
  if (!r.first_error.empty()) out << "first error: " << r.first_error << "\n";
  if (r.verified >= 0) out << "proofs:   " << r.verified << " verified against " << r.vk << "\n";
  out << "wall:     " << fmt("%.3f", r.wall_s) << " s, " << fmt("%.1f", rate) << " jobs/s\n";
  if (!lat.empty())
    out << "latency:  p50 " << fmt("%.2f", percentile(lat, 50)) << " ms, p90 " << fmt("%.2f", percentile(lat, 90))
        << " ms, p99 " << fmt("%.2f", percentile(lat, 99)) << " ms, max " << fmt("%.2f", lat.back())
        << " ms (client: submit to result)\n";
  if (!d.source.empty())
    out << "daemon:   p50 " << fmt("%.2f", percentile(d.ms, 50)) << " ms, p99 " << fmt("%.2f", percentile(d.ms, 99))
        << " ms (JOB_SUBMIT to JOB_DONE, "
        << (d.source == "timeline" ? "timeline" : "the jobs' created_ms to finished_ms, whole ms") << ", "
        << d.ms.size() << " jobs)\n";
}

}  // namespace cuzk::cli
