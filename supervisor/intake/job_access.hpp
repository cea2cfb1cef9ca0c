// Which clients may read a job's state and proofs, and cancel it: those of the class that submitted
// it. A unix socket client is known by its uid (SO_PEERCRED), a TCP client by the bearer token it
// must present; root and the daemon's own user on the socket are operators and see every job. A
// job that a client may not see is answered exactly like a job that does not exist (404), so that
// its id cannot be probed.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "supervisor/http/http_server.hpp"
#include "supervisor/intake/client.hpp"
#include "supervisor/intake/input_access.hpp"
#include "supervisor/store/job_store.hpp"

namespace cuzk::sup {

// How a job's submitter is stored: "unix:<uid>" for the unix socket, "tcp" for TCP; "" stands for a
// job stored before submitters were recorded, which every client may see as before.
std::string submitter_of(const http::Request& req);

// Operators: root and the daemon's own user (daemon_uid, the supervisor's effective uid) on the
// unix socket, and TCP clients with daemon.admin_token. They see every job and alone may add and
// remove circuits.
bool is_operator(const http::Request& req, uint32_t daemon_uid);

// The highest priority the client of req may give a job: any for an operator, for another client
// `max_client_priority` (daemon.max_client_priority, checked by the config). Uses this process's uid.
Priority highest_priority(const http::Request& req, const std::string& max_client_priority);

// Whether the client of req may see and cancel a job whose stored submitter is `owner`.
// daemon_uid: the supervisor's effective uid.
bool may_access(const std::string& owner, const http::Request& req, uint32_t daemon_uid);

// Whose permissions decide which files the client of req may name (input_access.hpp): root and the
// daemon's own user on the unix socket are operators, another unix peer is its uid and groups, a
// TCP client (or a peer without credentials) may name only what everybody may read.
FileReader reader_of(const http::Request& req);

// may_access for the client of req and this process's uid, as a value that outlives the request.
Viewer viewer_of(const http::Request& req);
// The client of req as a submission's (client.hpp); max_client_priority: daemon.max_client_priority.
Client client_of(const http::Request& req, const std::string& max_client_priority);

}  // namespace cuzk::sup
