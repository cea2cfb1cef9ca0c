// The shared queue's intake (shared_queue.hpp): submissions go into the database, and a job's state
// comes from it, so that any node answers for any job. Each runs on the store thread and answers
// from its completion; 503 while the database cannot be reached (clients retry).
#include <spdlog/spdlog.h>

#include <fstream>
#include <iterator>

#include "supervisor/helpers.hpp"
#include "supervisor/intake/job_access.hpp"
#include "supervisor/intake/request_key.hpp"
#include "supervisor/scheduler.hpp"
#include "supervisor/shared_queue.hpp"
#include "timeline/events.hpp"

using nlohmann::json;

namespace cuzk::sup {

namespace {

constexpr uint64_t kPollNs = 250000000ull;  // a long poll looks at the store this often

Answer unreachable(const std::string& why) {
  return Answer::refusal(503, "the job store cannot be reached now (" + why + "); retry later");
}

Answer existing(uint64_t id, JState st) {
  return Answer::json(200, json{{"id", std::to_string(id)}, {"state", to_string(st)}, {"existing", true}}.dump());
}

}  // namespace

void SharedQueue::submit(const Submission& s, Reply r) {
  // The database keeps the bytes a request carried, so a spooled body is read back whole here: a
  // shared store holds uploads in memory up to limits.max_upload_bytes, as before spooling.
  std::string spooled;
  if (!s.spool_path.empty()) {
    std::ifstream f(s.spool_path, std::ios::binary);
    spooled.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    if (!f && !f.eof()) throw std::runtime_error("cannot read the spooled request body " + s.spool_path);
  }
  const Client& client = s.client;
  Admitted a = admission_.admit(s.spool_path.empty() ? s.body : spooled, client, unfinished());
  SubmitRequest& sr = a.request;
  std::vector<PreparedInput>& inputs = a.inputs;
  const std::string& submitter = client.submitter;
  // A client's file goes into the database whole: no node opens its path again. (Read here, on the
  // loop: an inputs file is within limits.max_input_bytes.)
  for (PreparedInput& in : inputs) {
    if (in.signals) read_inputs_file(in);
    else if (in.source)
      in.content = in.source->read_all(c_.cfg.limits.max_upload_bytes, in.field);
  }
  if (sr.request_id.empty()) return store_job(sr, submitter, std::move(inputs), std::move(r));
  auto srp = std::make_shared<SubmitRequest>(std::move(sr));
  auto inp = std::make_shared<std::vector<PreparedInput>>(std::move(inputs));
  store_->run(
      [this, srp, inp, r, submitter](JobStore& s) {
        const std::optional<uint64_t> id = s.find_request(srp->request_id);
        const std::optional<JobRec> rec = id ? s.load(*id) : std::nullopt;
        return [this, srp, inp, r, rec, submitter] {
          try {
            if (!rec) {
              admission_.check_room(unfinished());  // a new job: the queue must have room for it
              return store_job(*srp, submitter, std::move(*inp), r);
            }
            check_same_request(*rec, *srp);
          } catch (const SubmitError& e) {
            return r.send(Answer::refusal(e.status, e.what()));
          }
          r.send(existing(rec->id, rec->state));
        };
      },
      [r](const std::string& why) { r.send(unreachable(why)); });
}

// The job inserted with the bytes the request carried (every node must be able to read them);
// insert() makes a concurrent twin with the same request id the same job.
void SharedQueue::store_job(const SubmitRequest& sr, const std::string& submitter, std::vector<PreparedInput> inputs,
                            Reply r) {
  JobRec rec = job_record(sr, c_.cfg.circuits[sr.circuit].name, submitter);
  for (size_t i = 0; i < inputs.size(); i++) {
    PartitionRec p;
    p.index = uint32_t(i);
    p.witness = inputs[i].path;
    p.content = std::move(inputs[i].content);
    rec.parts.push_back(std::move(p));
  }
  store_->run(
      [this, rec = std::move(rec), r](JobStore& s) mutable {
        const bool fresh = s.insert(rec);
        return [this, id = rec.id, st = rec.state, n = rec.parts.size(), circuit = rec.circuit, prio = rec.priority,
                kind = rec.input, fresh, r] {
          if (!fresh) return r.send(existing(id, st));
          c_.timeline.event(tl::kJobSubmit, id,
                            tl::Kv()
                                .add(tl::kPartitions, n)
                                .add(tl::kPriority, to_string(prio))
                                .add(tl::kCircuit, circuit)
                                .add(tl::kInput, to_string(kind))
                                .str());
          spdlog::info("job {}: {} x {} ({}, {}) into the shared queue", id, n, circuit, to_string(prio),
                       to_string(kind));
          counts_.jobs[int(JState::Queued)]++;
          next_claim_ns_ = 0;  // this node may have room for it
          r.send(Answer::json(201, json{{"id", std::to_string(id)}, {"state", "queued"}, {"existing", false}}.dump()));
          c_.scheduler.schedule();
        };
      },
      [r](const std::string& why) { r.send(unreachable(why)); });
}

void SharedQueue::get(uint64_t id, double wait_s, const Viewer& viewer, Reply r) {
  // Any node's job: the database has them all. Its submitter is read there, off the loop.
  poll(id, shm::monotonic_ns() + uint64_t(wait_s * 1e9), std::move(r), viewer);
}

// One look at the job; a long poll whose job is not final looks again after kPollNs, until its end.
void SharedQueue::poll(uint64_t id, uint64_t deadline_ns, Reply r, Viewer viewer) {
  store_->run(
      [this, id, deadline_ns, r, viewer](JobStore& s) {
        auto rec = std::make_shared<std::optional<JobRec>>(s.load(id));
        if (*rec && !viewer((*rec)->submitter)) rec->reset();  // another class's job reads as missing
        return [this, id, deadline_ns, r, rec, viewer] {
          if (!*rec) return r.send(Answer::refusal(404, "no job " + std::to_string(id)));
          const uint64_t now = shm::monotonic_ns();
          if (is_final((*rec)->state) || now >= deadline_ns || !r.alive() || c_.phase.stopping)
            return r.send(Answer::json(200, job_json(**rec).dump()));
          polls_.wait(id, std::min(kPollNs, deadline_ns - now) / 1000000, r,
                      [this, id, deadline_ns, viewer](const Reply& r) { poll(id, deadline_ns, r, viewer); });
        };
      },
      [r](const std::string& why) { r.send(unreachable(why)); });
}

void SharedQueue::cancel(uint64_t id, const Viewer& viewer, Reply r) {
  store_->run(
      [this, id, r, viewer](JobStore& s) {
        // Another class's job reads as missing (the check and the cancel are not one transaction,
        // but a job's submitter never changes).
        const std::optional<JobRec> rec = s.load(id);
        const CancelOutcome o = rec && viewer(rec->submitter) ? s.cancel(id, "cancelled by request", wall_ms())
                                                              : CancelOutcome{};
        return [this, id, r, o] {
          if (!o.found) return r.send(Answer::refusal(404, "no job " + std::to_string(id)));
          if (!o.cancelled)
            return r.send(Answer::refusal(409, "job " + std::to_string(id) + " is already " + to_string(o.state)));
          // This node stops its part now; the others when they next renew their leases.
          if (ActiveJob* j = c_.parts.find(id)) drop_job(*j);
          c_.timeline.event(tl::kJobDone, id, tl::Kv().add(tl::kState, to_string(JState::Cancelled)).str());
          spdlog::info("job {}: cancelled", id);
          r.send(Answer::json(200, json{{"id", std::to_string(id)}, {"state", "cancelled"}}.dump()));
          c_.scheduler.schedule();
        };
      },
      [r](const std::string& why) { r.send(unreachable(why)); });
}

}  // namespace cuzk::sup
