// Admission: the checks a submission passes before it is a job, written once for both queues.
// The request's fields and each partition's input (SubmitValidator, against the circuits served
// now), the queue's room (limits.max_queued_jobs), and the request id scoped to its submitter with
// the digest that tells another body under the same id apart (request_key.hpp). What the queue does
// next is its own: where the inputs go (a folder of the job's, or the database), how a stored twin
// is looked up, and how the job is stored.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "supervisor/intake/client.hpp"
#include "supervisor/intake/submission.hpp"
#include "supervisor/intake/upload_stream.hpp"

namespace cuzk::sup {

// A submission that passed every check: what it asks for, and each partition's input.
struct Admitted {
  SubmitRequest request;
  std::vector<PreparedInput> inputs;
};

class Admission {
 public:
  // validator: the checks of the circuits served now (Circuits::validator, which a runtime circuit
  // replaces). where: how refusals for room name the queue ("" for one node's).
  Admission(const config::Config& cfg, std::function<const SubmitValidator&()> validator, std::string where)
      : cfg_(cfg), validator_(std::move(validator)), where_(std::move(where)) {}

  // The submission checked whole: its fields, the room for it (unfinished: the queue's unfinished
  // jobs) when it has no request id, each partition's input, then its request id scoped to the
  // submitter and the digest of what it asks for. A request with an id may name a job stored
  // already, which it gets back even when the queue is full: the queue checks the room once it
  // knows that no such job exists (check_room). Throws SubmitError.
  Admitted admit(const std::string& body, const Client& c, size_t unfinished,
                 const StreamedBody* streamed = nullptr) const;
  // 429 when unfinished jobs fill limits.max_queued_jobs.
  void check_room(size_t unfinished) const;

 private:
  const config::Config& cfg_;
  std::function<const SubmitValidator&()> validator_;
  std::string where_;
};

}  // namespace cuzk::sup
