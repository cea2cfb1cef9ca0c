// Admission (admission.hpp): a submission's checks, for both queues.
#include "supervisor/admission.hpp"

#include "supervisor/intake/request_key.hpp"

namespace cuzk::sup {

Admitted Admission::admit(const std::string& body, const Client& c, size_t unfinished,
                          const StreamedBody* streamed) const {
  Admitted a;
  const SubmitValidator& v = validator_();
  a.request = v.parse(body, c.highest);
  if (a.request.request_id.empty()) check_room(unfinished);
  a.inputs = v.prepare(a.request, c.reader, streamed);
  if (!a.request.request_id.empty()) {
    // The client's own id only (request_key.hpp); the same request gets its job back.
    a.request.request_id = request_key(c.submitter, a.request.request_id);
    a.request.request_digest = request_digest(a.request, a.inputs, streamed);
  }
  return a;
}

void Admission::check_room(size_t unfinished) const {
  if (unfinished >= cfg_.limits.max_queued_jobs)
    throw SubmitError(
        429, std::to_string(unfinished) + " jobs are unfinished" + where_ + " (limits.max_queued_jobs); retry later");
}

}  // namespace cuzk::sup
