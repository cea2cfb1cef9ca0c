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

// Writes content the request carried; a failure is StoreFull or StateUnwritable, like the job store's.
void store_upload(const std::string& path, const std::string& content, const std::string& what) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int err = fd < 0 ? errno : 0;
  for (size_t off = 0; !err && off < content.size();) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) err = n < 0 ? errno : EIO;
    else off += size_t(n);
  }
  if (fd >= 0 && ::close(fd) != 0 && !err) err = errno;
  if (err) throw_write_error(what + " as " + path, err);
}

// The stored file of partition i: "<i>", and for a copy of a client's file "<i>-<its name>", so that
// a worker's message about it names the file the client sent (letters, digits, '.', '_' and '-'
// of its name's stem, at most 64).
std::string copy_name(size_t i, const PreparedInput& in) {
  std::string name = std::to_string(i);
  if (!in.source) return name;
  std::string stem;
  for (char c : fs::path(in.source->path()).stem().string())
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') stem += c;
  return stem.empty() ? name : name + "-" + stem.substr(0, 64);
}

// What a long-poll timer needs when it fires.
struct WaitCtx {
  Supervisor* self;
  uint64_t id;
  std::shared_ptr<http::Responder> r;
};

}  // namespace

// How work on the thread pool for a submission failed: an HTTP status (0: it did not), and why.
struct WorkFailure {
  int status = 0;
  bool space = true;  // 503: for lack of space (else the state folder cannot be written)
  std::string error;
  // Runs f, keeping how it failed.
  void capture(const std::function<void()>& f) {
    try {
      f();
    } catch (const SubmitError& e) {
      status = e.status, error = e.what();
    } catch (const StoreFull& e) {
      status = 503, error = e.what(), space = !dynamic_cast<const StateUnwritable*>(&e);
    } catch (const std::exception& e) {
      status = 500, error = e.what();
    }
  }
};

// A submission's clients' files on their way into its upload folder on the thread pool.
struct CopyWork {
  uv_work_t req;
  Supervisor* self;
  std::shared_ptr<http::Responder> r;
  SubmitRequest sr;
  std::vector<PreparedInput> inputs;
  std::string submitter, dir;
  std::vector<std::string> dest;  // per input: where its client's file goes, or ""
  WorkFailure failed;
};

// A spooled submission body on its way through stream_uploads on the thread pool.
struct SpoolWork {
  uv_work_t req;
  Supervisor* self;
  std::shared_ptr<http::Responder> r;
  std::shared_ptr<const http::SpooledBody> body;
  std::string dir, submitter;
  FileReader reader;
  uint64_t max_json;
  size_t max_witnesses;
  StreamedBody out;
  WorkFailure failed;
};

void Supervisor::handle(const http::Request& req, std::shared_ptr<http::Responder> r) {
  // Handlers get copies of r: one that throws (a refused submission) is answered below, through r.
  try {
    const std::string& p = req.path;
    if (p == "/v1/proofs") {
      if (req.method != "POST") return r->send(http::Response::error(405, "use POST for " + p));
      if (shared_) return submit_shared(req, r);
      if (req.body_file) return submit_spooled(req, r);
      if (http::Response resp = submit(req.body, submitter_of(req), reader_of(req), nullptr, "", r); resp.status)
        r->send(std::move(resp));
      return;
    }
    if (p.rfind("/v1/proofs/", 0) == 0) {
      const std::string id_text = p.substr(11);
      const std::optional<uint64_t> parsed = parse_job_id(id_text);
      if (!parsed) return r->send(http::Response::error(404, "no job '" + id_text + "' (ids are decimal numbers)"));
      const uint64_t id = *parsed;
      // With a shared store the job's submitter is read from the database, off the loop.
      if (!shared_ && !visible(id, req)) return r->send(http::Response::error(404, "no job " + std::to_string(id)));
      if (req.method == "DELETE") return shared_ ? cancel_shared(id, r, viewer_of(req)) : r->send(cancel(id));
      if (req.method != "GET") return r->send(http::Response::error(405, "use GET or DELETE for " + p));
      double wait = 0;
      if (auto it = req.query.find("wait"); it != req.query.end()) {
        char* e2 = nullptr;
        wait = std::strtod(it->second.c_str(), &e2);
        if (it->second.empty() || *e2 || !(wait >= 0))
          return r->send(http::Response::error(400, "wait: not a number of seconds: '" + it->second + "'"));
        wait = std::min(wait, kMaxWaitS);
      }
      if (shared_) return get_shared(id, wait, r, viewer_of(req));  // any node's job: the database has them all
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
    if (p == "/v1/circuits" || p.rfind("/v1/circuits/", 0) == 0) return handle_circuits(req, r);
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

bool Supervisor::visible(uint64_t id, const http::Request& req) {
  std::string owner;
  if (ActiveJob* a = active(id)) owner = a->rec.submitter;
  else if (auto rec = store_->load(id)) owner = rec->submitter;
  else return true;  // no such job: answered 404 as such
  return may_access(owner, req, uint32_t(::geteuid()));
}

// A body spooled to a file: its base64 witnesses are decoded into the job's upload folder on the
// thread pool, and the rest of the submission is checked back on the loop.
void Supervisor::submit_spooled(const http::Request& req, std::shared_ptr<http::Responder> r) {
  if (draining_) return r->send(http::Response::error(503, "the daemon is shutting down; not accepting jobs"));
  auto* w = new SpoolWork{};
  w->req.data = w;
  w->self = this;
  w->r = std::move(r);
  w->body = req.body_file;
  w->submitter = submitter_of(req);
  w->reader = reader_of(req);
  w->dir = new_upload_dir();
  w->max_json = cfg_.limits.upload_memory;
  w->max_witnesses = 0;
  for (const auto& c : cfg_.circuits) w->max_witnesses = std::max<size_t>(w->max_witnesses, c.max_partitions);
  spool_works_++;
  uv_queue_work(
      loop_, &w->req,
      [](uv_work_t* q) {
        auto* w = static_cast<SpoolWork*>(q->data);
        w->failed.capture([&] { w->out = stream_uploads(w->body->path, w->dir, w->max_json, w->max_witnesses); });
      },
      [](uv_work_t* q, int) {
        std::unique_ptr<SpoolWork> w(static_cast<SpoolWork*>(q->data));
        w->body.reset();  // the spool file is removed
        w->self->spool_works_--;
        w->self->after_spooled(*w);
      });
}

void Supervisor::after_spooled(SpoolWork& w) {
  finish_submission(
      [&] {
        throw_work_failure(w.failed);
        // An answer of status 0 comes after the copies of clients' files (after_copies).
        return submit(w.out.json, w.submitter, w.reader, &w.out, w.dir, w.r);
      },
      w.dir, w.r);
}

void Supervisor::throw_work_failure(const WorkFailure& f) {
  if (f.status == 503) {
    note_disk_full(f.error, f.space);
    throw SubmitError(503, disk_full_message());
  }
  if (f.status) throw SubmitError(f.status, f.error);
}

void Supervisor::finish_submission(const std::function<http::Response()>& make, const std::string& dir,
                                   const std::shared_ptr<http::Responder>& r) {
  http::Response resp;
  try {
    resp = make();
    if (!resp.status) return;
  } catch (const SubmitError& e) {
    resp = http::Response::error(e.status, e.what());
  } catch (const std::exception& e) {
    spdlog::error("POST /v1/proofs: {}", e.what());
    resp = http::Response::error(500, e.what());
  }
  if (resp.status != 201) {  // no job took the folder
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  r->send(std::move(resp));
  maybe_finish_shutdown();
}

std::string Supervisor::new_upload_dir() {
  return (fs::path(cfg_.daemon.state_dir) / "uploads" / (std::to_string(getpid()) + "-" + std::to_string(++upload_seq_)))
      .string();
}

std::string Supervisor::disk_full_message() const {
  if (!held_for_space_)
    return "the state folder daemon.state_dir (" + cfg_.daemon.state_dir +
           ") cannot be written (the daemon's log says why): not accepting jobs until it can; retry later";
  return "the disk under daemon.state_dir (" + cfg_.daemon.state_dir +
         ") is full: not accepting jobs until space is freed; retry later";
}

http::Response Supervisor::submit(const std::string& body, const std::string& submitter, const FileReader& reader,
                                  const StreamedBody* streamed, const std::string& upload_dir,
                                  std::shared_ptr<http::Responder> r) {
  if (draining_) return http::Response::error(503, "the daemon is shutting down; not accepting jobs");
  SubmitRequest sr = validator_->parse(body);
  auto room = [&] {
    const size_t unfinished = jobs_.size();
    if (unfinished >= cfg_.limits.max_queued_jobs)
      throw SubmitError(429, std::to_string(unfinished) + " jobs are unfinished (limits.max_queued_jobs); retry later");
  };
  if (sr.request_id.empty()) room();
  const std::vector<PreparedInput> inputs = validator_->prepare(sr, reader, streamed);
  if (!sr.request_id.empty()) {
    // The client's own id only (request_key.hpp); the same request gets its job back.
    sr.request_id = request_key(submitter, sr.request_id);
    sr.request_digest = request_digest(sr, inputs, streamed);
    if (auto resp = existing_job(sr)) return *resp;
    room();
  }
  bool copies = false;
  for (const PreparedInput& in : inputs) copies = copies || in.source;
  if (!copies) return store_or_refuse(sr, inputs, submitter, upload_dir);
  // Clients' files are copied into the upload folder on the thread pool (a large witness would
  // hold the loop); the job is stored back on the loop (after_copies), and answered through r.
  auto* w = new CopyWork{};
  w->req.data = w;
  w->self = this;
  w->r = std::move(r);
  w->sr = std::move(sr);
  w->inputs = inputs;
  w->submitter = submitter;
  w->dir = upload_dir.empty() ? new_upload_dir() : upload_dir;
  w->dest.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); i++)
    if (inputs[i].source) w->dest[i] = (fs::path(w->dir) / (copy_name(i, inputs[i]) + inputs[i].ext)).string();
  spool_works_++;
  uv_queue_work(
      loop_, &w->req,
      [](uv_work_t* q) {
        auto* w = static_cast<CopyWork*>(q->data);
        w->failed.capture([&] {
          std::error_code ec;
          fs::create_directories(w->dir, ec);
          if (ec) throw_write_error("the upload folder " + w->dir, ec.value());
          for (size_t i = 0; i < w->inputs.size(); i++)
            if (!w->dest[i].empty()) w->inputs[i].source->copy_to(w->dest[i], w->inputs[i].field);
        });
      },
      [](uv_work_t* q, int) {
        std::unique_ptr<CopyWork> w(static_cast<CopyWork*>(q->data));
        w->self->spool_works_--;
        w->self->after_copies(*w);
      });
  http::Response later;
  later.status = 0;
  return later;
}

std::optional<http::Response> Supervisor::existing_job(const SubmitRequest& sr) {
  const std::optional<uint64_t> id = store_->find_request(sr.request_id);
  if (!id) return std::nullopt;
  const JobRec rec = active(*id) ? active(*id)->rec : *store_->load(*id);
  check_same_request(rec, sr);
  return http::Response::json(
      200, json{{"id", std::to_string(*id)}, {"state", to_string(rec.state)}, {"existing", true}}.dump());
}

// A write that fails is the daemon's fault, never the job's: 503, the reason in the log only.
http::Response Supervisor::store_or_refuse(const SubmitRequest& sr, const std::vector<PreparedInput>& inputs,
                                           const std::string& submitter, const std::string& upload_dir) {
  std::string why;
  bool space = true;
  try {
    return store_job(sr, inputs, submitter, upload_dir);
  } catch (const StoreFull& e) {
    why = e.what(), space = !dynamic_cast<const StateUnwritable*>(&e);
  } catch (const fs::filesystem_error& e) {
    why = e.what(), space = no_space(e.code().value());
  }
  note_disk_full(why, space);
  throw SubmitError(503, disk_full_message());
}

// Back on the loop after the copies: the job stored (unless the daemon began to drain, or a twin
// with the same request id was stored meanwhile), or the folder removed with the refusal.
void Supervisor::after_copies(CopyWork& w) {
  finish_submission(
      [&] {
        if (draining_) throw SubmitError(503, "the daemon is shutting down; not accepting jobs");
        throw_work_failure(w.failed);
        for (size_t i = 0; i < w.inputs.size(); i++)
          if (!w.dest[i].empty()) w.inputs[i].path = w.dest[i], w.inputs[i].stored = true, w.inputs[i].source.reset();
        std::optional<http::Response> twin = w.sr.request_id.empty() ? std::nullopt : existing_job(w.sr);
        return twin ? *twin : store_or_refuse(w.sr, w.inputs, w.submitter, w.dir);
      },
      w.dir, w.r);
}

// Stores an accepted submission: its uploads, then the job in one transaction; on any failure
// nothing of it is left. upload_dir: the folder its streamed uploads are in already, or "".
http::Response Supervisor::store_job(const SubmitRequest& sr, const std::vector<PreparedInput>& inputs,
                                     const std::string& submitter, std::string upload_dir) {
  const config::CircuitConfig& cc = cfg_.circuits[sr.circuit];

  JobRec rec;
  rec.circuit = cc.name;
  rec.priority = sr.priority;
  rec.request_id = sr.request_id;
  rec.request_digest = sr.request_digest;
  rec.input = sr.kind;
  rec.submitter = submitter;
  rec.created_ms = wall_ms();
  try {
    for (size_t i = 0; i < inputs.size(); i++) {
      PartitionRec p;
      p.index = uint32_t(i);
      p.witness = inputs[i].path;
      if (p.witness.empty()) {
        // Content sent in the request: stored under the job's upload folder, removed with the job.
        // (Clients' files are there already: copied by the CopyWork of submit.)
        if (upload_dir.empty()) upload_dir = new_upload_dir();
        fs::create_directories(upload_dir);
        p.witness = (fs::path(upload_dir) / (copy_name(i, inputs[i]) + inputs[i].ext)).string();
        store_upload(p.witness, inputs[i].content, inputs[i].field);
      }
      rec.parts.push_back(std::move(p));
    }
    store_->insert(rec);
  } catch (...) {
    std::error_code ec;
    if (!upload_dir.empty()) fs::remove_all(upload_dir, ec);
    throw;
  }
  ActiveJob j;
  j.rec = rec;
  j.circuit = sr.circuit;
  j.upload_dir = upload_dir;
  j.times.resize(rec.parts.size());
  const uint64_t now = shm::monotonic_ns();
  for (auto& p : rec.parts) {
    j.times[p.index].queued = now;
    pending_.insert({int(sr.priority), rec.id, p.index});
  }
  jobs_.emplace(rec.id, std::move(j));
  event(tl::kJobSubmit, rec.id,
        tl::Kv()
            .add(tl::kPartitions, rec.parts.size())
            .add(tl::kPriority, to_string(sr.priority))
            .add(tl::kCircuit, cc.name)
            .add(tl::kInput, to_string(sr.kind))
            .str());
  spdlog::info("job {}: {} x {} ({}, {})", rec.id, rec.parts.size(), cc.name, to_string(sr.priority),
               to_string(sr.kind));
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
              {"input_kind", to_string(j.input)},
              {"request_id", j.request_id.empty() ? ojson(nullptr) : ojson(request_id_of(j.request_id))},
              {"state", to_string(j.state)},
              {"error", j.error.empty() ? ojson(nullptr) : ojson(j.error)},
              {"created_ms", j.created_ms},
              {"finished_ms", j.finished_ms ? ojson(j.finished_ms) : ojson(nullptr)},
              {"partitions", parts}};
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
               {"reported", w->hello}};
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
  for (auto& [id, j] : jobs_) (j.rec.state == JState::Queued ? queued : running)++;
  return json{{"instance", cfg_.daemon.instance},
              {"pid", getpid()},
              {"state", draining_ ? "draining" : "running"},
              {"uptime_s", double(shm::monotonic_ns() - t0_ns_) / 1e9},
              {"backend", cfg_.gpu.backend},
              {"store", store_json()},
              {"workers", workers},
              {"devices", devices},
              {"queues", {{"jobs_queued", queued}, {"jobs_running", running}, {"partitions_queued", pending_.size()}}},
              {"slots", slots},
              {"proofs_done", proofs_done_}};
}

std::string Supervisor::metrics_text() {
  std::string out;
  auto line = [&](const std::string& s) { out += s + "\n"; };
  const JobStore::Counts c = store_ ? store_->counts() : shared_->counts;
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
  line("cuzk_queue_partitions " + std::to_string(pending_.size()));
  line("# HELP cuzk_prove_seconds Time in the proving stage.");
  line("# TYPE cuzk_prove_seconds summary");
  line("cuzk_prove_seconds_sum " + std::to_string(prove_sum_s_));
  line("cuzk_prove_seconds_count " + std::to_string(proofs_done_));
  line("# HELP cuzk_synth_seconds Time in synthesis.");
  line("# TYPE cuzk_synth_seconds summary");
  line("cuzk_synth_seconds_sum " + std::to_string(synth_sum_s_));
  line("cuzk_synth_seconds_count " + std::to_string(synth_count_));
  line("# HELP cuzk_witness_partitions_total Partitions whose witness was computed from inputs, by engine "
       "(fallback: the compiled program refused the input and circom's generator ran).");
  line("# TYPE cuzk_witness_partitions_total counter");
  line("cuzk_witness_partitions_total{engine=\"program\"} " + std::to_string(witness_program_));
  line("cuzk_witness_partitions_total{engine=\"native\"} " + std::to_string(witness_native_));
  line("cuzk_witness_partitions_total{engine=\"fallback\"} " + std::to_string(witness_fallback_));
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
  return out + store_metrics_text();
}

}  // namespace cuzk::sup
