// The per-client request keys and request digests of request_key.hpp.
#include "supervisor/intake/request_key.hpp"

#include <cstdio>

namespace cuzk::sup {

namespace {

constexpr char kSep = '\x1f';  // no request id or submitter holds it (ids are JSON strings, but
                                // a stored key is only ever split at its first one)

std::string hex(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

std::string request_key(const std::string& submitter, const std::string& request_id) {
  return submitter + kSep + request_id;
}

std::string request_id_of(const std::string& key) {
  const size_t at = key.find(kSep);
  return at == std::string::npos ? key : key.substr(at + 1);
}

uint64_t digest_bytes(uint64_t h, const char* data, size_t n) {
  for (size_t i = 0; i < n; i++) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

std::string request_digest(const SubmitRequest& req, const std::vector<PreparedInput>& inputs,
                           const StreamedBody* streamed) {
  std::string text = std::to_string(req.circuit) + "|" + std::to_string(int(req.priority)) + "|" +
                     std::to_string(int(req.kind));
  for (const PreparedInput& p : inputs) {
    if (p.source) {
      text += "|file:" + p.source->path() + ":" + std::to_string(p.source->size());
    } else if (p.stored && streamed) {
      for (const StreamedWitness& w : streamed->witnesses)
        if (w.path == p.path) text += "|bytes:" + hex(w.digest);
    } else {
      text += "|bytes:" + hex(digest_bytes(kDigestStart, p.content.data(), p.content.size()));
    }
  }
  return hex(digest_bytes(kDigestStart, text.data(), text.size()));
}

void check_same_request(const JobRec& job, const SubmitRequest& req) {
  if (!job.request_digest.empty() && job.request_digest != req.request_digest)
    throw SubmitError(409, "request_id: already used by this client for another request (a different circuit, "
                           "priority or inputs); use a new request_id for a new job");
}

}  // namespace cuzk::sup
