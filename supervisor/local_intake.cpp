// One node's submissions (local_queue.hpp): checked by SubmitValidator, a spooled body decoded,
// clients' files copied and their inputs files parsed on the thread pool, then stored in one
// transaction and queued here.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "supervisor/helpers.hpp"
#include "supervisor/intake/job_access.hpp"
#include "supervisor/intake/request_key.hpp"
#include "supervisor/local_queue.hpp"
#include "supervisor/scheduler.hpp"
#include "supervisor/store/state_writes.hpp"
#include "timeline/events.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuzk::sup {

namespace {

// Writes content the request carried; a failure is StateWriteFailed, like the job store's.
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
    } catch (const StateWriteFailed& e) {
      status = 503, error = e.what(), space = e.space;
    } catch (const std::exception& e) {
      status = 500, error = e.what();
    }
  }
};

// A submission's clients' files on their way into its upload folder on the thread pool.
struct CopyWork {
  uv_work_t req;
  LocalQueue* self;
  std::optional<Reply> r;
  SubmitRequest sr;
  std::vector<PreparedInput> inputs;
  std::string submitter, dir;
  std::vector<std::string> dest;  // per input: where its client's file goes, or ""
  WorkFailure failed;
};

// A spooled submission body on its way through stream_uploads on the thread pool.
struct SpoolWork {
  uv_work_t req;
  LocalQueue* self;
  std::optional<Reply> r;
  std::shared_ptr<const void> spool;  // the spooled body, removed when let go
  std::string path, dir;
  Client client;
  uint64_t max_json;
  size_t max_witnesses;
  StreamedBody out;
  WorkFailure failed;
};

// A body spooled to a file: its base64 witnesses are decoded into the job's upload folder on the
// thread pool, and the rest of the submission is checked back on the loop.
void LocalQueue::submit_spooled(const Submission& s, Reply r) {
  auto* w = new SpoolWork{};
  w->req.data = w;
  w->self = this;
  w->r = std::move(r);
  w->spool = s.spool;
  w->path = s.spool_path;
  w->client = s.client;
  w->dir = new_upload_dir();
  w->max_json = c_.cfg.limits.upload_memory;
  w->max_witnesses = 0;
  for (const auto& c : c_.cfg.circuits) w->max_witnesses = std::max<size_t>(w->max_witnesses, c.max_partitions);
  works_++;
  uv_queue_work(
      c_.loop, &w->req,
      [](uv_work_t* q) {
        auto* w = static_cast<SpoolWork*>(q->data);
        w->failed.capture([&] { w->out = stream_uploads(w->path, w->dir, w->max_json, w->max_witnesses); });
      },
      [](uv_work_t* q, int) {
        std::unique_ptr<SpoolWork> w(static_cast<SpoolWork*>(q->data));
        w->spool.reset();  // the spool file is removed
        w->self->works_--;
        w->self->after_spooled(*w);
      });
}

void LocalQueue::after_spooled(SpoolWork& w) {
  finish_submission(
      [&] {
        throw_work_failure(w.failed);
        // An answer of status 0 comes after the copies of clients' files (after_copies).
        return submit_body(w.out.json, w.client, &w.out, w.dir, *w.r);
      },
      w.dir, *w.r);
}

void LocalQueue::throw_work_failure(const WorkFailure& f) {
  if (f.status == 503) {
    c_.state.note_full(f.error, f.space);
    throw SubmitError(503, c_.state.full_message());
  }
  if (f.status) throw SubmitError(f.status, f.error);
}

void LocalQueue::finish_submission(const std::function<Answer()>& make, const std::string& dir, const Reply& r) {
  Answer resp;
  try {
    resp = make();
    if (!resp.status) return;
  } catch (const SubmitError& e) {
    resp = Answer::refusal(e.status, e.what());
  } catch (const std::exception& e) {
    spdlog::error("POST /v1/proofs: {}", e.what());
    resp = Answer::refusal(500, e.what());
  }
  if (resp.status != 201) {  // no job took the folder
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  r.send(std::move(resp));
  c_.settle();
}

std::string LocalQueue::new_upload_dir() {
  return (fs::path(c_.cfg.daemon.state_dir) / "uploads" /
          (std::to_string(getpid()) + "-" + std::to_string(++upload_seq_)))
      .string();
}

Answer LocalQueue::submit_body(const std::string& body, const Client& client, const StreamedBody* streamed,
                               const std::string& upload_dir, Reply r) {
  if (c_.phase.draining) return Answer::refusal(503, "the daemon is shutting down; not accepting jobs");
  Admitted a = admission_.admit(body, client, c_.parts.jobs().size(), streamed);
  SubmitRequest& sr = a.request;
  const std::vector<PreparedInput>& inputs = a.inputs;
  if (!sr.request_id.empty()) {
    if (auto resp = existing_job(sr)) return *resp;  // the same request gets its job back
    admission_.check_room(c_.parts.jobs().size());
  }
  bool copies = false;
  for (const PreparedInput& in : inputs) copies = copies || in.source;
  const std::string& submitter = client.submitter;
  if (!copies) return store_or_refuse(sr, inputs, submitter, upload_dir, r);
  // Clients' files are copied into the upload folder, and their inputs files read and checked, on
  // the thread pool (a large file would hold the loop); the job is stored back on the loop
  // (after_copies), and answered through r.
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
  works_++;
  uv_queue_work(
      c_.loop, &w->req,
      [](uv_work_t* q) {
        auto* w = static_cast<CopyWork*>(q->data);
        w->failed.capture([&] {
          std::error_code ec;
          fs::create_directories(w->dir, ec);
          if (ec) throw_write_error("the upload folder " + w->dir, ec.value());
          for (size_t i = 0; i < w->inputs.size(); i++) {
            PreparedInput& in = w->inputs[i];
            if (w->dest[i].empty()) continue;
            if (!in.signals) {
              in.source->copy_to(w->dest[i], in.field);
              continue;
            }
            // An inputs file: read, checked, and its bytes stored as they were read.
            read_inputs_file(in);
            store_upload(w->dest[i], in.content, in.field);
            in.content = std::string();
          }
        });
      },
      [](uv_work_t* q, int) {
        std::unique_ptr<CopyWork> w(static_cast<CopyWork*>(q->data));
        w->self->works_--;
        w->self->after_copies(*w);
      });
  return Answer::later();
}

// A job stored already under the request id (one whose insert is still being committed is found
// by the insert itself: store_job).
std::optional<Answer> LocalQueue::existing_job(const SubmitRequest& sr) {
  const std::optional<uint64_t> id = reader_->find_request(sr.request_id);
  if (!id) return std::nullopt;
  const ActiveJob* a = find_job(*id);
  return twin_answer(a ? a->rec : *reader_->load(*id), sr.request_digest);
}

Answer LocalQueue::twin_answer(const JobRec& job, const std::string& digest) {
  SubmitRequest sr;
  sr.request_digest = digest;
  check_same_request(job, sr);
  return Answer::json(200,
                      json{{"id", std::to_string(job.id)}, {"state", to_string(job.state)}, {"existing", true}}.dump());
}

// A write that fails is the daemon's fault, never the job's: 503, the reason in the log only.
void LocalQueue::refuse_write(std::exception_ptr e) {
  std::string why;
  bool space = true;
  try {
    std::rethrow_exception(e);
  } catch (const StateWriteFailed& x) {
    why = x.what(), space = x.space;
  } catch (const fs::filesystem_error& x) {
    why = x.what(), space = no_space(x.code().value());
  }
  c_.state.note_full(why, space);
  throw SubmitError(503, c_.state.full_message());
}

Answer LocalQueue::store_or_refuse(const SubmitRequest& sr, const std::vector<PreparedInput>& inputs,
                                   const std::string& submitter, const std::string& upload_dir, const Reply& r) {
  try {
    return store_job(sr, inputs, submitter, upload_dir, r);
  } catch (const SubmitError&) {
    throw;
  } catch (...) {
    refuse_write(std::current_exception());
  }
}

// Back on the loop after the copies: the job stored (unless the daemon began to drain, or a twin
// with the same request id was stored meanwhile), or the folder removed with the refusal.
void LocalQueue::after_copies(CopyWork& w) {
  finish_submission(
      [&] {
        if (c_.phase.draining) throw SubmitError(503, "the daemon is shutting down; not accepting jobs");
        throw_work_failure(w.failed);
        for (size_t i = 0; i < w.inputs.size(); i++)
          if (!w.dest[i].empty()) w.inputs[i].path = w.dest[i], w.inputs[i].stored = true, w.inputs[i].source.reset();
        std::optional<Answer> twin = w.sr.request_id.empty() ? std::nullopt : existing_job(w.sr);
        return twin ? *twin : store_or_refuse(w.sr, w.inputs, w.submitter, w.dir, *w.r);
      },
      w.dir, *w.r);
}

// Stores an accepted submission: its uploads, then the job in one transaction, on the journal's
// thread; answered through r once it is committed (201, or the job a twin request stored first
// under the same id), or refused with nothing of it left. upload_dir: the folder its streamed
// uploads are in already, or "".
Answer LocalQueue::store_job(const SubmitRequest& sr, const std::vector<PreparedInput>& inputs,
                             const std::string& submitter, std::string upload_dir, const Reply& r) {
  const config::CircuitConfig& cc = c_.cfg.circuits[sr.circuit];

  JobRec rec = job_record(sr, cc.name, submitter);
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
  } catch (...) {
    std::error_code ec;
    if (!upload_dir.empty()) fs::remove_all(upload_dir, ec);
    throw;
  }
  write(
      [this, rec, circuit = sr.circuit, upload_dir, r](SqliteStore& st) mutable -> std::function<void()> {
        std::optional<JobRec> twin;
        if (!st.insert(rec)) twin = st.load(rec.id);
        return [this, rec = std::move(rec), twin = std::move(twin), circuit, upload_dir, r]() mutable {
          finish_submission(
              [&] {
                if (!twin) return accepted(std::move(rec), circuit, upload_dir);
                const ActiveJob* a = find_job(twin->id);
                return twin_answer(a ? a->rec : *twin, rec.request_digest);
              },
              upload_dir, r);
        };
      },
      [this, upload_dir, r](std::exception_ptr e) {
        finish_submission([&]() -> Answer { refuse_write(e); }, upload_dir, r);
      });
  return Answer::later();
}

Answer LocalQueue::accepted(JobRec rec, uint32_t circuit, const std::string& upload_dir) {
  const uint64_t id = rec.id;
  const size_t parts = rec.parts.size();
  const std::string kind = to_string(rec.input), priority = to_string(rec.priority), name = rec.circuit;
  ActiveJob j;
  j.rec = std::move(rec);
  j.circuit = circuit;
  j.upload_dir = upload_dir;
  c_.parts.add(std::move(j));
  c_.timeline.event(tl::kJobSubmit, id,
                    tl::Kv()
                        .add(tl::kPartitions, parts)
                        .add(tl::kPriority, priority)
                        .add(tl::kCircuit, name)
                        .add(tl::kInput, kind)
                        .str());
  spdlog::info("job {}: {} x {} ({}, {})", id, parts, name, priority, kind);
  c_.scheduler.schedule();
  return Answer::json(201, json{{"id", std::to_string(id)}, {"state", "queued"}, {"existing", false}}.dump());
}

void LocalQueue::submit(const Submission& s, Reply r) {
  if (!s.spool_path.empty()) return submit_spooled(s, std::move(r));
  if (Answer resp = submit_body(s.body, s.client, nullptr, "", r); resp.status) r.send(std::move(resp));
}

}  // namespace cuzk::sup
