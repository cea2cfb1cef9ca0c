// The HTTP API's handlers (docs/API.md): submission (checked by SubmitValidator, then stored), job
// state and long polls, cancel, status and Prometheus metrics.
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "supervisor/helpers.hpp"
#include "supervisor/intake/job_access.hpp"
#include "supervisor/intake/request_key.hpp"
#include "supervisor/store/state_writes.hpp"
#include "supervisor/supervisor.hpp"
#include "timeline/events.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuzk::sup {

namespace {

constexpr double kMaxWaitS = 3600;

// The queues' answers go to the HTTP connection the request came on.
Reply reply_to(std::shared_ptr<http::Responder> r) {
  return Reply(
      std::move(r),
      [](void* to, Answer a) {
        http::Response resp;
        if (a.error.empty())
          resp.status = a.status, resp.body = std::move(a.body);
        else
          resp = http::Response::error(a.status, a.error);
        static_cast<http::Responder*>(to)->send(std::move(resp));
      },
      [](const void* to) { return static_cast<const http::Responder*>(to)->alive(); });
}

}  // namespace

void Supervisor::handle(const http::Request& req, std::shared_ptr<http::Responder> r) {
  // Handlers get copies of r: one that throws (a refused submission) is answered below, through r.
  try {
    const std::string& p = req.path;
    if (p == "/v1/proofs") {
      if (req.method != "POST") return r->send(http::Response::error(405, "use POST for " + p));
      if (phase_.draining)
        return r->send(http::Response::error(503, "the daemon is shutting down; not accepting jobs"));
      const Submission s{req.body, req.body_file ? req.body_file->path : std::string(), req.body_file,
                         client_of(req, cfg_.daemon.max_client_priority)};
      return queue_->submit(s, reply_to(r));
    }
    if (p.rfind("/v1/proofs/", 0) == 0) {
      const std::string id_text = p.substr(11);
      const std::optional<uint64_t> parsed = parse_job_id(id_text);
      if (!parsed) return r->send(http::Response::error(404, "no job '" + id_text + "' (ids are decimal numbers)"));
      const uint64_t id = *parsed;
      if (req.method == "DELETE") return queue_->cancel(id, viewer_of(req), reply_to(r));
      if (req.method != "GET") return r->send(http::Response::error(405, "use GET or DELETE for " + p));
      double wait = 0;
      if (auto it = req.query.find("wait"); it != req.query.end()) {
        char* e2 = nullptr;
        wait = std::strtod(it->second.c_str(), &e2);
        if (it->second.empty() || *e2 || !(wait >= 0))
          return r->send(http::Response::error(400, "wait: not a number of seconds: '" + it->second + "'"));
        wait = std::min(wait, kMaxWaitS);
      }
      return queue_->get(id, wait, viewer_of(req), reply_to(r));
    }
    if (p == "/v1/circuits" || p.rfind("/v1/circuits/", 0) == 0) return circuits_.handle(req, r);
    if (p == "/v1/status") {
      if (req.method != "GET") return r->send(http::Response::error(405, "use GET for " + p));
      return r->send(http::Response::json(200, status_json().dump()));
    }
    if (p == "/metrics") {
      if (req.method != "GET") return r->send(http::Response::error(405, "use GET for " + p));
      http::Response resp;
      resp.content_type = "text/plain; version=0.0.4";
      resp.body = metrics_text();
      return r->send(resp);
    }
    r->send(http::Response::error(404, "no such endpoint: " + req.method + " " + p));
  } catch (const SubmitError& e) {
    r->send(http::Response::error(e.status, e.what()));
  } catch (const std::exception& e) {
    spdlog::error("{} {}: {}", req.method, req.path, e.what());
    r->send(http::Response::error(500, e.what()));
  }
}

// Each circuit's key on a device: resident or not, its bytes there as last loaded, its loads and
// evictions, and the last load's time.
static json device_keys_json(const Device& d, const config::Config& cfg) {
  json keys = json::array();
  for (size_t c = 0; c < cfg.circuits.size(); c++) {
    const DeviceKey k = c < d.keys.size() ? d.keys[c] : DeviceKey{};
    keys.push_back({{"circuit", cfg.circuits[c].name},
                    {"resident", k.resident},
                    {"bytes", k.bytes},
                    {"loads", k.loads},
                    {"evictions", k.evictions},
                    {"last_load_ms", k.load_ms}});
  }
  return keys;
}

json Supervisor::status_json() {
  json workers = json::array();
  for (auto& w : workers_) {
    json wj = {{"name", w->name},
               {"kind", w->kind == WorkerKind::Synth ? "synth" : "gpu"},
               {"index", w->index},
               {"pid", w->pid ? json(w->pid) : json(nullptr)},
               {"cpus", w->cpus},
               {"state", to_string(w->state)},
               {"restarts", w->restarts},
               {"epoch", w->epoch},
               {"job", w->tasks.empty() ? json(nullptr) : json(std::to_string(w->tasks.front().job))},
               {"partition", w->tasks.empty() ? json(nullptr) : json(w->tasks.front().partition)},
               {"reported", hello_text(*w)}};
    if (w->kind == WorkerKind::Gpu) {
      json held = json::array();
      for (const Task& t : w->tasks) held.push_back({{"job", std::to_string(t.job)}, {"partition", t.partition}, {"slot", t.slot}});
      wj["tasks"] = std::move(held);
    }
    if (w->kind == WorkerKind::Gpu) wj["device"] = w->device;
    if (!w->failure.empty()) wj["failure"] = w->failure;
    workers.push_back(std::move(wj));
  }
  json devices = json::array(), slots = json::array();
  for (auto& d : devices_) {
    size_t count[4] = {};
    for (uint32_t s = 0; s < d.slots.size(); s++) {
      shm::SlotState st = d.seg->state(s);
      count[uint32_t(st) & 3]++;
      json sj = {{"device", d.id}, {"slot", s}, {"state", shm::to_string(st)}};
      if (d.slots[s].used) sj["job"] = std::to_string(d.slots[s].job), sj["partition"] = d.slots[s].partition;
      slots.push_back(std::move(sj));
    }
    devices.push_back({{"id", d.id},
                       {"backend", cfg_.gpu.backend},
                       {"segment", "/" + d.seg->name()},
                       {"slots", d.slots.size()},
                       {"slot_bytes", d.seg->header().slot_bytes},
                       {"free", count[0]},
                       {"synthesizing", count[1]},
                       {"ready", count[2]},
                       {"proving", count[3]},
                       {"worker", d.gpu ? json(d.gpu->name) : json(nullptr)},
                       {"keys", device_keys_json(d, cfg_)}});
  }
  size_t queued = 0, running = 0;
  for (auto& [id, j] : parts_.jobs()) (j.rec.state == JState::Queued ? queued : running)++;
  return json{
      {"instance", cfg_.daemon.instance},
      {"pid", getpid()},
      {"state", phase_.draining ? "draining" : "running"},
      {"uptime_s", double(shm::monotonic_ns() - t0_ns_) / 1e9},
      {"backend", cfg_.gpu.backend},
      {"store", queue_->status()},
      {"workers", workers},
      {"devices", devices},
      {"queues", {{"jobs_queued", queued}, {"jobs_running", running}, {"partitions_queued", parts_.pending().size()}}},
      {"slots", slots},
      {"proofs_done", parts_.stats().proofs_done}};
}

std::string Supervisor::metrics_text() {
  std::string out;
  auto line = [&](const std::string& s) { out += s + "\n"; };
  out += counts_metrics(queue_->counts());
  line("# HELP cuzk_worker_restarts_total Restarts of each worker since the supervisor started.");
  line("# TYPE cuzk_worker_restarts_total counter");
  for (auto& w : workers_) line("cuzk_worker_restarts_total{worker=\"" + w->name + "\"} " + std::to_string(w->restarts));
  line("# HELP cuzk_worker_up 1 when the worker is running and ready.");
  line("# TYPE cuzk_worker_up gauge");
  for (auto& w : workers_)
    line("cuzk_worker_up{worker=\"" + w->name + "\"} " + (is_up(w->state) ? "1" : "0"));
  line("# HELP cuzk_slots Slots of each device ring by state.");
  line("# TYPE cuzk_slots gauge");
  for (auto& d : devices_) {
    size_t count[4] = {};
    for (uint32_t s = 0; s < d.slots.size(); s++) count[uint32_t(d.seg->state(s)) & 3]++;
    for (uint32_t s = 0; s < 4; s++)
      line("cuzk_slots{device=\"" + std::to_string(d.id) + "\",state=\"" + shm::to_string(shm::SlotState(s)) +
           "\"} " + std::to_string(count[s]));
  }
  line("# HELP cuzk_queue_partitions Partitions waiting for synthesis.");
  line("# TYPE cuzk_queue_partitions gauge");
  line("cuzk_queue_partitions " + std::to_string(parts_.pending().size()));
  line("# HELP cuzk_prove_seconds Time in the proving stage.");
  line("# TYPE cuzk_prove_seconds summary");
  line("cuzk_prove_seconds_sum " + std::to_string(parts_.stats().prove_sum_s));
  line("cuzk_prove_seconds_count " + std::to_string(parts_.stats().proofs_done));
  line("# HELP cuzk_synth_seconds Time in synthesis.");
  line("# TYPE cuzk_synth_seconds summary");
  line("cuzk_synth_seconds_sum " + std::to_string(parts_.stats().synth_sum_s));
  line("cuzk_synth_seconds_count " + std::to_string(parts_.stats().synth_count));
  line("# HELP cuzk_witness_partitions_total Partitions whose witness was computed from inputs, by engine "
       "(fallback: the compiled program refused the input and circom's generator ran).");
  line("# TYPE cuzk_witness_partitions_total counter");
  line("cuzk_witness_partitions_total{engine=\"program\"} " + std::to_string(parts_.stats().witness_program));
  line("cuzk_witness_partitions_total{engine=\"native\"} " + std::to_string(parts_.stats().witness_native));
  line("cuzk_witness_partitions_total{engine=\"fallback\"} " + std::to_string(parts_.stats().witness_fallback));
  line("# HELP cuzk_witness_traces_total Fallback partitions whose input was traced into a further program (a "
       "path of the circuit's code no program took yet).");
  line("# TYPE cuzk_witness_traces_total counter");
  line("cuzk_witness_traces_total " + std::to_string(parts_.stats().witness_traced));
  line("# HELP cuzk_http_connections API connections open now.");
  line("# TYPE cuzk_http_connections gauge");
  line("cuzk_http_connections " + std::to_string(server_ ? server_->open_connections() : 0));
  line("# HELP cuzk_http_connections_refused_total Connections refused at limits.max_connections.");
  line("# TYPE cuzk_http_connections_refused_total counter");
  line("cuzk_http_connections_refused_total " + std::to_string(server_ ? server_->refused_connections() : 0));
  const http::BodyPool* bodies = server_ ? &server_->bodies() : nullptr;
  line("# HELP cuzk_http_body_memory_bytes Request bodies held in memory now (limits.upload_memory).");
  line("# TYPE cuzk_http_body_memory_bytes gauge");
  line("cuzk_http_body_memory_bytes " + std::to_string(bodies ? bodies->in_memory : 0));
  line("# HELP cuzk_http_bodies_spooled_total Request bodies written to <state_dir>/spool/ as they arrived.");
  line("# TYPE cuzk_http_bodies_spooled_total counter");
  line("cuzk_http_bodies_spooled_total " + std::to_string(bodies ? bodies->spooled_total : 0));
  line("# HELP cuzk_http_write_queue_bytes Answer bytes written but not yet taken by their clients.");
  line("# TYPE cuzk_http_write_queue_bytes gauge");
  line("cuzk_http_write_queue_bytes " + std::to_string(server_ ? server_->queued_write_bytes() : 0));
  line("# HELP cuzk_uptime_seconds Seconds since the supervisor started.");
  line("# TYPE cuzk_uptime_seconds gauge");
  line("cuzk_uptime_seconds " + std::to_string(double(shm::monotonic_ns() - t0_ns_) / 1e9));
  return out + queue_->metrics();
}

}  // namespace cuzk::sup
