// The submitter rule of job_access.hpp.
#include "supervisor/intake/job_access.hpp"

#include <unistd.h>

namespace cuzk::sup {

std::string submitter_of(const http::Request& req) {
  if (req.via_tcp) return "tcp";
  // A unix peer's credentials are always known on Linux; without them the job is the operators'.
  return req.peer.unix_creds ? "unix:" + std::to_string(req.peer.uid) : "unix:?";
}

bool is_operator(const http::Request& req, uint32_t daemon_uid) {
  if (req.via_tcp) return req.admin;
  return req.peer.unix_creds && (req.peer.uid == 0 || req.peer.uid == daemon_uid);
}

Priority highest_priority(const http::Request& req, const std::string& max_client_priority) {
  if (is_operator(req, uint32_t(::geteuid()))) return Priority::Critical;
  return parse_priority(max_client_priority).value_or(Priority::Normal);
}

bool may_access(const std::string& owner, const http::Request& req, uint32_t daemon_uid) {
  if (owner.empty() || is_operator(req, daemon_uid)) return true;
  return owner == submitter_of(req) && owner != "unix:?";
}

FileReader reader_of(const http::Request& req) {
  FileReader r;
  if (req.via_tcp || !req.peer.unix_creds) return r;
  const uint32_t euid = uint32_t(::geteuid());
  r.kind = req.peer.uid == 0 || req.peer.uid == euid ? FileReader::Operator : FileReader::User;
  r.uid = req.peer.uid, r.gid = req.peer.gid, r.groups = req.peer.groups;
  return r;
}

Client client_of(const http::Request& req, const std::string& max_client_priority) {
  return {submitter_of(req), reader_of(req), highest_priority(req, max_client_priority)};
}

Viewer viewer_of(const http::Request& req) { return {is_operator(req, uint32_t(::geteuid())), submitter_of(req)}; }

}  // namespace cuzk::sup
