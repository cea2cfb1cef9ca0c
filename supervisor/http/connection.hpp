// The HTTP server's insides shared by its files: the server's state that the connections reach
// (Core), and what the listeners need of the connections. Not part of cuzk_http's interface.
#pragma once
#include <uv.h>

#include <cstdint>
#include <string>
#include <unordered_set>

#include "supervisor/http/body_store.hpp"
#include "supervisor/http/http_server.hpp"

namespace cuzk::http::detail {

struct Conn;

// The server's state, reachable from the connections (Server::Impl is this plus nothing).
struct Core {
  uv_loop_t* loop;
  ServerOptions opt;
  Handler handler;
  uv_pipe_t* pipe = nullptr;
  uv_tcp_t* tcp = nullptr;
  int tcp_port = 0;
  bool listening = false;
  bool unix_bound = false;
  std::unordered_set<Conn*> conns;
  BodyPool bodies;
  size_t unauthenticated = 0;    // TCP connections that have not presented the token yet
  uint64_t accepted = 0;         // connections accepted since start (each Conn's `accepted`)
  uint64_t refused = 0;          // connections refused at opt.max_connections since start
  uint64_t refused_in_burst = 0;  // of those, since the limit was last reached (0: not at the limit)

  Core(uv_loop_t* l, ServerOptions o, Handler h) : loop(l), opt(std::move(o)), handler(std::move(h)) {
    bodies.spool_dir = opt.spool_dir;
    bodies.spool_above = opt.spool_above;
    bodies.memory_budget = opt.memory_budget;
  }
  void close_all();
};

// A listener's callback: accepts a connection (or refuses it at the limits) and starts reading.
void on_connection(uv_stream_t* server, int status);
// Frees a listener's or a refused connection's handle once libuv is done with it.
void free_handle(uv_handle_t* h);
// The bytes of c's answers that the kernel has not taken yet.
uint64_t queued_bytes(const Conn* c);

}  // namespace cuzk::http::detail
