// The HTTP API's handlers (docs/API.md): submission with validation, job state and long polls,
// cancel, status and Prometheus metrics.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <boost/archive/iterators/binary_from_base64.hpp>
#include <boost/archive/iterators/transform_width.hpp>
#include <spdlog/spdlog.h>

#include "supervisor/supervisor.hpp"
#include "timeline/events.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuzk::sup {

namespace {

constexpr double kMaxWaitS = 3600;

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Strict base64 (RFC 4648, padding required, whitespace ignored); nullopt when malformed.
std::optional<std::string> decode_base64(const std::string& in) {
  std::string s;
  s.reserve(in.size());
  for (char c : in)
    if (!std::isspace(static_cast<unsigned char>(c))) s.push_back(c);
  if (s.size() % 4) return std::nullopt;
  size_t pad = 0;
  while (pad < 2 && pad < s.size() && s[s.size() - 1 - pad] == '=') pad++;
  for (size_t i = 0; i < s.size() - pad; i++) {
    char c = s[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/')) return std::nullopt;
  }
  std::replace(s.end() - long(pad), s.end(), '=', 'A');
  using It = boost::archive::iterators::transform_width<
      boost::archive::iterators::binary_from_base64<std::string::const_iterator>, 8, 6>;
  std::string out(It(s.begin()), It(s.end()));
  out.resize(out.size() - pad);
  return out;
}

// What a long-poll timer needs when it fires.
struct WaitCtx {
  Supervisor* self;
  uint64_t id;
  std::shared_ptr<http::Responder> r;
};

struct BadRequest : std::runtime_error {
  int status;
  BadRequest(int st, const std::string& m) : std::runtime_error(m), status(st) {}
};

}  // namespace

void Supervisor::handle(const http::Request& req, std::shared_ptr<http::Responder> r) {
  try {
    const std::string& p = req.path;
    if (p == "/v1/proofs") {
      if (req.method != "POST") return r->send(http::Response::error(405, "use POST for " + p));
      return r->send(submit(req));
    }
    if (p.rfind("/v1/proofs/", 0) == 0) {
      const std::string id_text = p.substr(11);
      char* end = nullptr;
      unsigned long long id = std::strtoull(id_text.c_str(), &end, 10);
      if (id_text.empty() || *end || id == 0) return r->send(http::Response::error(404, "no job '" + id_text + "'"));
      if (req.method == "DELETE") return r->send(cancel(id));
      if (req.method != "GET") return r->send(http::Response::error(405, "use GET or DELETE for " + p));
      double wait = 0;
      if (auto it = req.query.find("wait"); it != req.query.end()) {
        char* e2 = nullptr;
        wait = std::strtod(it->second.c_str(), &e2);
        if (it->second.empty() || *e2 || !(wait >= 0))
          return r->send(http::Response::error(400, "wait: not a number of seconds: '" + it->second + "'"));
        wait = std::min(wait, kMaxWaitS);
      }
      if (ActiveJob* j = active(id)) {
        if (wait > 0) {
          // Long poll: answered when the job becomes final (notify_waiters) or when the timer fires.
          auto* t = new uv_timer_t{};
          uv_timer_init(loop_, t);
          t->data = new WaitCtx{this, id, r};
          j->waiters.push_back({r, t});
          uv_timer_start(
              t,
              [](uv_timer_t* h) {
                auto* c = static_cast<WaitCtx*>(h->data);
                Supervisor* self = c->self;
                if (ActiveJob* a = self->active(c->id)) {
                  auto& ws = a->waiters;
                  ws.erase(std::remove_if(ws.begin(), ws.end(), [&](const ActiveJob::Waiter& w) { return w.timer == h; }),
                           ws.end());
                  c->r->send(http::Response::json(200, self->job_json(a->rec, a).dump()));
                } else if (auto rec = self->store_->load(c->id)) {
                  c->r->send(http::Response::json(200, self->job_json(*rec, nullptr).dump()));
                }
                delete c;
                uv_close(reinterpret_cast<uv_handle_t*>(h), [](uv_handle_t* x) { delete reinterpret_cast<uv_timer_t*>(x); });
              },
              uint64_t(wait * 1000), 0);
          return;
        }
        return r->send(http::Response::json(200, job_json(j->rec, j).dump()));
      }
      if (auto rec = store_->load(id)) return r->send(http::Response::json(200, job_json(*rec, nullptr).dump()));
      return r->send(http::Response::error(404, "no job " + std::to_string(id)));
    }
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
  } catch (const BadRequest& e) {
    r->send(http::Response::error(e.status, e.what()));
  } catch (const std::exception& e) {
    spdlog::error("{} {}: {}", req.method, req.path, e.what());
    r->send(http::Response::error(500, e.what()));
  }
}

void Supervisor::notify_waiters(ActiveJob& j) {
  const std::string body = job_json(j.rec, &j).dump();
  for (auto& w : j.waiters) {
    w.r->send(http::Response::json(200, body));
    uv_timer_stop(w.timer);
    delete static_cast<WaitCtx*>(w.timer->data);
    uv_close(reinterpret_cast<uv_handle_t*>(w.timer), [](uv_handle_t* x) { delete reinterpret_cast<uv_timer_t*>(x); });
  }
  j.waiters.clear();
}

http::Response Supervisor::submit(const http::Request& req) {
  if (draining_) return http::Response::error(503, "the daemon is shutting down; not accepting jobs");
  json body;
  try {
    body = json::parse(req.body);
  } catch (const std::exception& e) {
    throw BadRequest(400, std::string("body is not JSON: ") + e.what());
  }
  if (!body.is_object()) throw BadRequest(400, "body must be a JSON object");
  for (auto& [k, v] : body.items())
    if (k != "circuit" && k != "witnesses" && k != "priority" && k != "request_id")
      throw BadRequest(400, k + ": unknown field (expected circuit, witnesses, priority, request_id)");
  if (!body.contains("circuit") || !body["circuit"].is_string()) throw BadRequest(400, "circuit: required string");
  const std::string circuit = body["circuit"];
  const config::CircuitConfig* cc = cfg_.find_circuit(circuit);
  if (!cc) {
    std::string names;
    for (auto& c : cfg_.circuits) names += (names.empty() ? "" : ", ") + c.name;
    throw BadRequest(400, "circuit: unknown circuit '" + circuit + "' (configured: " + names + ")");
  }
  const uint32_t ci = uint32_t(cc - cfg_.circuits.data());
  Priority prio = Priority::Normal;
  if (body.contains("priority")) {
    auto pr = body["priority"].is_string() ? parse_priority(body["priority"]) : std::nullopt;
    if (!pr) throw BadRequest(400, "priority: must be one of critical, high, normal, low");
    prio = *pr;
  }
  std::string request_id;
  if (body.contains("request_id")) {
    if (!body["request_id"].is_string() || body["request_id"].get<std::string>().empty() ||
        body["request_id"].get<std::string>().size() > 128)
      throw BadRequest(400, "request_id: must be a string of 1 to 128 characters");
    request_id = body["request_id"];
    if (auto id = store_->find_request(request_id)) {
      JobRec rec;
      if (ActiveJob* a = active(*id)) rec = a->rec;
      else rec = *store_->load(*id);
      return http::Response::json(
          200, json{{"id", std::to_string(*id)}, {"state", to_string(rec.state)}, {"existing", true}}.dump());
    }
  }
  if (!body.contains("witnesses") || !body["witnesses"].is_array() || body["witnesses"].empty())
    throw BadRequest(400, "witnesses: required non-empty array");
  const auto& ws = body["witnesses"];
  if (ws.size() > cc->max_partitions)
    throw BadRequest(400, "witnesses: " + std::to_string(ws.size()) + " partitions, circuit " + circuit +
                              " allows max_partitions=" + std::to_string(cc->max_partitions));
  size_t unfinished = jobs_.size();
  if (unfinished >= cfg_.limits.max_queued_jobs)
    throw BadRequest(429, std::to_string(unfinished) + " jobs are unfinished (limits.max_queued_jobs); retry later");

  JobRec rec;
  rec.circuit = circuit;
  rec.priority = prio;
  rec.request_id = request_id;
  rec.created_ms = wall_ms();
  std::string upload_dir;
  auto cleanup = [&] {
    std::error_code ec;
    if (!upload_dir.empty()) fs::remove_all(upload_dir, ec);
  };
  try {
    for (size_t i = 0; i < ws.size(); i++) {
      const std::string field = "witnesses[" + std::to_string(i) + "]";
      std::string path;
      const json& w = ws[i];
      if (w.is_string()) {
        path = w.get<std::string>();
      } else if (w.is_object() && w.size() == 1 && w.contains("path") && w["path"].is_string()) {
        path = w["path"];
      } else if (w.is_object() && w.size() == 1 && w.contains("base64") && w["base64"].is_string()) {
        auto bytes = decode_base64(w["base64"]);
        if (!bytes) throw BadRequest(400, field + ".base64: not valid base64");
        if (upload_dir.empty()) {
          upload_dir = (fs::path(cfg_.daemon.state_dir) / "uploads" /
                        (std::to_string(getpid()) + "-" + std::to_string(++upload_seq_)))
                           .string();
          fs::create_directories(upload_dir);
        }
        path = (fs::path(upload_dir) / (std::to_string(i) + ".wtns")).string();
        std::ofstream f(path, std::ios::binary);
        f.write(bytes->data(), std::streamsize(bytes->size()));
        if (!f.flush()) throw std::runtime_error("cannot store " + field + " under " + upload_dir);
      } else {
        throw BadRequest(400, field + ": must be a path string, {\"path\": ...} or {\"base64\": ...}");
      }
      if (path.empty()) throw BadRequest(400, field + ": empty path");
      path = fs::absolute(path).lexically_normal().string();
      if (path.size() >= sizeof(shm::Msg::text)) throw BadRequest(400, field + ": path longer than " + std::to_string(sizeof(shm::Msg::text) - 1) + " bytes");
      std::error_code ec;
      if (!fs::is_regular_file(path, ec)) throw BadRequest(400, field + ": " + path + ": no such file");
      if (::access(path.c_str(), R_OK) != 0) throw BadRequest(400, field + ": " + path + ": not readable by the daemon");
      uint32_t n = 0;
      try {
        n = read_wtns_count(path);
      } catch (const std::exception& e) {
        throw BadRequest(400, field + ": " + e.what());
      }
      if (n != dims_[ci].n_vars)
        throw BadRequest(400, field + ": " + path + " has " + std::to_string(n) + " values, circuit " + circuit +
                                  " expects nVars=" + std::to_string(dims_[ci].n_vars) +
                                  " (a witness of another circuit?)");
      PartitionRec p;
      p.index = uint32_t(i);
      p.witness = path;
      rec.parts.push_back(std::move(p));
    }
    store_->insert(rec);
  } catch (...) {
    cleanup();
    throw;
  }
  ActiveJob j;
  j.rec = rec;
  j.circuit = ci;
  j.upload_dir = upload_dir;
  j.times.resize(rec.parts.size());
  const uint64_t now = shm::monotonic_ns();
  for (auto& p : rec.parts) {
    j.times[p.index].queued = now;
    pending_.insert({int(prio), rec.id, p.index});
  }
  jobs_.emplace(rec.id, std::move(j));
  event(tl::kJobSubmit, rec.id,
        tl::Kv()
            .add(tl::kPartitions, rec.parts.size())
            .add(tl::kPriority, to_string(prio))
            .add(tl::kCircuit, circuit)
            .str());
  spdlog::info("job {}: {} x {} ({})", rec.id, rec.parts.size(), circuit, to_string(prio));
  schedule();
  return http::Response::json(201,
                              json{{"id", std::to_string(rec.id)}, {"state", "queued"}, {"existing", false}}.dump());
}

http::Response Supervisor::cancel(uint64_t id) {
  ActiveJob* j = active(id);
  if (!j) {
    auto rec = store_->load(id);
    if (!rec) return http::Response::error(404, "no job " + std::to_string(id));
    return http::Response::error(409, "job " + std::to_string(id) + " is already " + to_string(rec->state));
  }
  finish_job(*j, JState::Cancelled, "cancelled by request");
  schedule();
  return http::Response::json(200, json{{"id", std::to_string(id)}, {"state", "cancelled"}}.dump());
}

nlohmann::ordered_json Supervisor::job_json(const JobRec& j, const ActiveJob* a) const {
  using ojson = nlohmann::ordered_json;
  ojson parts = ojson::array();
  for (const auto& p : j.parts) {
    ojson pj = {{"index", p.index},
               {"state", to_string(p.state)},
               {"attempts", p.attempts},
               {"error", p.error.empty() ? ojson(nullptr) : ojson(p.error)}};
    if (!p.timings.empty()) {
      try {
        pj["timings"] = ojson::parse(p.timings);
      } catch (...) {
      }
    }
    if (p.state == PState::Done) {
      try {
        pj["proof"] = ojson::parse(p.proof);
        pj["public"] = ojson::parse(p.pub);
      } catch (const std::exception& e) {
        pj["error"] = std::string("stored result unreadable: ") + e.what();
      }
    }
    parts.push_back(std::move(pj));
  }
  return ojson{{"id", std::to_string(j.id)},
              {"circuit", j.circuit},
              {"priority", to_string(j.priority)},
              {"request_id", j.request_id.empty() ? ojson(nullptr) : ojson(j.request_id)},
              {"state", to_string(j.state)},
              {"error", j.error.empty() ? ojson(nullptr) : ojson(j.error)},
              {"created_ms", j.created_ms},
              {"finished_ms", j.finished_ms ? ojson(j.finished_ms) : ojson(nullptr)},
              {"partitions", parts}};
}

json Supervisor::status_json() {
  json workers = json::array();
  for (auto& w : workers_) {
    json wj = {{"name", w->name},
               {"kind", w->kind == Worker::Synth ? "synth" : "gpu"},
               {"index", w->index},
               {"pid", w->pid ? json(w->pid) : json(nullptr)},
               {"cpus", w->cpus},
               {"state", w->state},
               {"restarts", w->restarts},
               {"epoch", w->epoch},
               {"job", w->task ? json(std::to_string(w->job)) : json(nullptr)},
               {"partition", w->task ? json(w->partition) : json(nullptr)},
               {"reported", w->hello}};
    if (w->kind == Worker::Gpu) wj["device"] = w->device;
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
                       {"worker", d.gpu ? json(d.gpu->name) : json(nullptr)}});
  }
  size_t queued = 0, running = 0;
  for (auto& [id, j] : jobs_) (j.rec.state == JState::Queued ? queued : running)++;
  return json{{"instance", cfg_.daemon.instance},
              {"pid", getpid()},
              {"state", draining_ ? "draining" : "running"},
              {"uptime_s", double(shm::monotonic_ns() - t0_ns_) / 1e9},
              {"backend", cfg_.gpu.backend},
              {"workers", workers},
              {"devices", devices},
              {"queues", {{"jobs_queued", queued}, {"jobs_running", running}, {"partitions_queued", pending_.size()}}},
              {"slots", slots},
              {"proofs_done", proofs_done_}};
}

std::string Supervisor::metrics_text() {
  std::string out;
  auto line = [&](const std::string& s) { out += s + "\n"; };
  JobStore::Counts c = store_->counts();
  line("# HELP cuzk_jobs_total Jobs in the store by state.");
  line("# TYPE cuzk_jobs_total gauge");
  for (int s = 0; s < 5; s++)
    line(std::string("cuzk_jobs_total{state=\"") + to_string(JState(s)) + "\"} " + std::to_string(c.jobs[s]));
  line("# HELP cuzk_partitions_total Partitions in the store by state.");
  line("# TYPE cuzk_partitions_total gauge");
  for (int s = 0; s < 7; s++)
    line(std::string("cuzk_partitions_total{state=\"") + to_string(PState(s)) + "\"} " + std::to_string(c.parts[s]));
  line("# HELP cuzk_worker_restarts_total Restarts of each worker since the supervisor started.");
  line("# TYPE cuzk_worker_restarts_total counter");
  for (auto& w : workers_) line("cuzk_worker_restarts_total{worker=\"" + w->name + "\"} " + std::to_string(w->restarts));
  line("# HELP cuzk_worker_up 1 when the worker is running and ready.");
  line("# TYPE cuzk_worker_up gauge");
  for (auto& w : workers_)
    line("cuzk_worker_up{worker=\"" + w->name + "\"} " + (w->state == "idle" || w->state == "busy" ? "1" : "0"));
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
  line("cuzk_queue_partitions " + std::to_string(pending_.size()));
  line("# HELP cuzk_prove_seconds Time in the proving stage.");
  line("# TYPE cuzk_prove_seconds summary");
  line("cuzk_prove_seconds_sum " + std::to_string(prove_sum_s_));
  line("cuzk_prove_seconds_count " + std::to_string(proofs_done_));
  line("# HELP cuzk_synth_seconds Time in synthesis.");
  line("# TYPE cuzk_synth_seconds summary");
  line("cuzk_synth_seconds_sum " + std::to_string(synth_sum_s_));
  line("cuzk_synth_seconds_count " + std::to_string(synth_count_));
  line("# HELP cuzk_uptime_seconds Seconds since the supervisor started.");
  line("# TYPE cuzk_uptime_seconds gauge");
  line("cuzk_uptime_seconds " + std::to_string(double(shm::monotonic_ns() - t0_ns_) / 1e9));
  return out;
}

}  // namespace cuzk::sup
