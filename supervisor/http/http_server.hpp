// The daemon's HTTP/1.1 server: libuv streams, http-parser for requests. It listens on a unix socket
// (and optionally on TCP with a bearer token), parses requests, enforces size limits and auth, and
// hands each complete request to one handler. Handlers may answer later (long polls).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <uv.h>

#include "supervisor/http/body_store.hpp"

namespace cuzk::http {

// Who is on the other end of a connection. Unix socket peers are known by their credentials
// (SO_PEERCRED); TCP peers only by the bearer token every request of theirs carries.
struct Peer {
  bool unix_creds = false;  // uid, gid and pid are known
  uint32_t uid = 0, gid = 0;
  int32_t pid = 0;
  std::vector<uint32_t> groups;  // supplementary groups (SO_PEERGROUPS); empty where unknown
};

struct Request {
  std::string method;                          // "GET", "POST", "DELETE", ...
  std::string path;                            // decoded path without the query, e.g. "/v1/proofs/17"
  std::map<std::string, std::string> query;    // decoded query parameters
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;                               // the body, unless it was spooled to a file
  std::shared_ptr<const SpooledBody> body_file;   // the body in a file (ServerOptions::spool_dir)
  bool via_tcp = false;
  bool admin = false;  // via TCP with the operators' token (RequestLimits::admin_token)
  Peer peer;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // A JSON error body {"error": {"code": status, "message": message}}.
  static Response error(int status, const std::string& message);
  static Response json(int status, const std::string& body);
};

// One pending answer. send() may be called once, from the loop thread, at any later time; after the
// client has gone, alive() is false and send() does nothing.
class Responder {
 public:
  virtual ~Responder() = default;
  virtual void send(Response r) = 0;
  virtual bool alive() const = 0;
};

using Handler = std::function<void(const Request&, std::shared_ptr<Responder>)>;

// What a request may carry before it is refused.
struct RequestLimits {
  uint64_t max_body = 1ull << 30;
  uint64_t max_header = 64 * 1024;  // request line and headers together
  std::string token;                // the bearer token a request via TCP must present ("" = none passes)
  std::string admin_token;          // or this one, which marks the request admin ("" = none)
};

// The request side of one connection, without I/O: bytes in, complete requests out, in order. The
// server feeds it what it reads from each connection; it also works alone (tests, fuzzing).
class RequestParser {
 public:
  struct Complete {
    Request request;
    bool authorized = true;  // false: via TCP without the right bearer token. Such a request is
                             // complete at its headers (its body is not read) and ends the connection.
    bool keep_alive = true;  // another request may follow on the connection
    bool head = false;       // a HEAD request: the answer carries no body
  };
  enum class State {
    Ok,       // every byte fed was consumed
    Paused,   // pause() was called: the bytes after the last consumed one are to be fed after resume()
    Stopped,  // on_request returned false: nothing more is parsed
    Upgrade,  // a protocol upgrade: what follows is not HTTP/1.1 and is not parsed
    Failed,   // a malformed or refused request: answer error_status() and close
  };
  // on_request is called once per complete request and returns false to stop parsing after it;
  // on_continue when an authorized request's headers say "Expect: 100-continue".
  // on_body, when given, takes the body's bytes instead of Request::body (after the size check)
  // and returns 0, or a status to refuse the request with, setting its reason.
  using BodySink = std::function<int(const char* data, size_t n, std::string& why)>;
  RequestParser(RequestLimits limits, bool via_tcp, std::function<bool(Complete&)> on_request,
                std::function<void()> on_continue = {}, BodySink on_body = {});
  ~RequestParser();
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;
  // Parses n bytes and returns how many were consumed (all of them unless the state is not Ok).
  size_t feed(const char* data, size_t n);
  State state() const;
  void pause();   // from on_request: stop after the current request
  void resume();  // after Paused
  bool in_message() const;  // a request has begun and is not complete
  bool in_headers() const;  // a request has begun and its headers are not complete
  // After Failed: the status to answer (400, 413, 431, 505) and why.
  int error_status() const;
  const std::string& error_message() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct ServerOptions {
  std::string unix_path;        // required; an existing stale socket file is replaced
  uint32_t unix_mode = 0660;
  std::string tcp;              // "" = off; "host:port"
  std::string token;            // required on TCP connections as "Authorization: Bearer <token>"
  std::string admin_token;      // accepted there too, marking the requests admin ("" = none)
  uint64_t max_body = 1ull << 30;
  uint64_t max_header = 64 * 1024;
  // Bodies: one larger than spool_above, or one that would take the bodies held in memory by all
  // connections together past memory_budget, is written to a file in spool_dir as it arrives
  // (Request::body_file) instead. spool_dir "" keeps every body in memory.
  std::string spool_dir;
  uint64_t spool_above = 1 << 20;
  uint64_t memory_budget = 64ull << 20;
  // Answers queued for a client that does not read them: past this many bytes the connection reads
  // no further requests until the client has taken enough of them; one that takes nothing for
  // idle_timeout_ms is closed.
  uint64_t max_write_queue = 1 << 20;
  // A connection that owes no answer and sends nothing for this long is closed (a request left
  // half-sent gets 408 first); 0 = never.
  uint64_t idle_timeout_ms = 60 * 1000;
  // A request's line and headers must have arrived this long after its first byte, however
  // steadily they trickle in, or it gets 408 and the connection closes; 0 = no limit.
  uint64_t header_timeout_ms = 10 * 1000;
  // Connections open at once: unix socket ones and TCP ones that have presented the token. One
  // more is answered 503 and closed at once; 0 = no limit.
  size_t max_connections = 512;
  // TCP connections that have not yet completed a request with the right token have a limit of
  // their own (one more is answered 503 and closed), so that they cannot take the places of socket
  // clients, and must complete their first request's headers within first_request_ms of the
  // accept (408, closed). 0 = no limit, no deadline.
  size_t max_unauthenticated = 16;
  uint64_t first_request_ms = 5000;
  // A request's body must arrive at body_min_rate bytes a second on average, counted from the end
  // of its headers after a grace of header_timeout_ms, however steadily it trickles in, or it gets
  // 408 and the connection closes; 0 = no limit.
  uint64_t body_min_rate = 64 * 1024;
  // Where the server says what an operator should know (the connection limit reached, and how many
  // connections it refused); null = nowhere.
  std::function<void(const std::string&)> warn;
};

// Server::start's failures; `key` is the config key of the address that failed ("daemon.socket" or
// "daemon.tcp"), so that a caller can tell a path that can never work from a busy port.
struct ListenError : std::runtime_error {
  std::string key;
  ListenError(std::string k, const std::string& what) : std::runtime_error(what), key(std::move(k)) {}
};

class Server {
 public:
  Server(uv_loop_t* loop, ServerOptions opt, Handler handler);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  // Binds and listens; throws ListenError naming the address on failure.
  void start();
  // Stops listening and closes every connection (pending responders become dead).
  void close();
  size_t open_connections() const;
  // Connections refused at max_connections since start().
  uint64_t refused_connections() const;
  // The bound TCP port after start() (useful with port 0); 0 when TCP is off.
  int tcp_port() const;
  // Request bodies: bytes held in memory now and at most since start, and bodies spooled to files.
  const BodyPool& bodies() const;
  // Bytes of answers written but not yet taken by the clients, all connections together.
  uint64_t queued_write_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuzk::http
