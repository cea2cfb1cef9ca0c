// The daemon's HTTP/1.1 server: libuv streams, http-parser for requests. It listens on a unix socket
// (and optionally on TCP with a bearer token), parses requests, enforces size limits and auth, and
// hands each complete request to one handler. Handlers may answer later (long polls).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <uv.h>

namespace cuzk::http {

struct Request {
  std::string method;                          // "GET", "POST", "DELETE", ...
  std::string path;                            // decoded path without the query, e.g. "/v1/proofs/17"
  std::map<std::string, std::string> query;    // decoded query parameters
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  bool via_tcp = false;
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

struct ServerOptions {
  std::string unix_path;        // required; an existing stale socket file is replaced
  uint32_t unix_mode = 0660;
  std::string tcp;              // "" = off; "host:port"
  std::string token;            // required on TCP connections as "Authorization: Bearer <token>"
  uint64_t max_body = 1ull << 30;
  uint64_t max_header = 64 * 1024;
  // A connection that owes no answer and sends nothing for this long is closed (a request left
  // half-sent gets 408 first); 0 = never.
  uint64_t idle_timeout_ms = 5 * 60 * 1000;
};

class Server {
 public:
  Server(uv_loop_t* loop, ServerOptions opt, Handler handler);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  // Binds and listens; throws std::runtime_error naming the address on failure.
  void start();
  // Stops listening and closes every connection (pending responders become dead).
  void close();
  size_t open_connections() const;
  // The bound TCP port after start() (useful with port 0); 0 when TCP is off.
  int tcp_port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuzk::http
