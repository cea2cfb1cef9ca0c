// Request ids (POST /v1/proofs "request_id") are per submitter class (job_access.hpp): the store
// keeps each under a key that starts with its submitter, so that no client can take, or learn of,
// another's id. The same client reusing an id gets its job back when the request is the same one,
// and a 409 saying so when it is not: each job with an id records a digest of what was asked.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "supervisor/intake/submission.hpp"
#include "supervisor/intake/upload_stream.hpp"

namespace cuzk::sup {

// The key the store keeps for request_id of submitter.
std::string request_key(const std::string& submitter, const std::string& request_id);
// The client's own id of a stored key (a key stored before ids were per client is the id itself).
std::string request_id_of(const std::string& key);
// 64-bit FNV-1a over bytes, continued from h (start with kDigestStart): stream_uploads digests
// each upload as it decodes it.
inline constexpr uint64_t kDigestStart = 14695981039346656037ull;
uint64_t digest_bytes(uint64_t h, const char* data, size_t n);
// A digest of what the request asks for, from its checked inputs: circuit, priority, input kind,
// and every entry's bytes (content the request carried, spooled uploads by the digest
// stream_uploads took) or, for a client's file, its resolved path and size. The same body gives
// the same digest whether it was held in memory or spooled.
std::string request_digest(const SubmitRequest& req, const std::vector<PreparedInput>& inputs,
                           const StreamedBody* streamed);
// A client's own job found by its request id: throws SubmitError(409) when the job was made by a
// request other than req (another digest); a job stored before digests were kept passes.
void check_same_request(const JobRec& job, const SubmitRequest& req);

}  // namespace cuzk::sup
