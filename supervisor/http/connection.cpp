// The HTTP server's connections (see http_server.hpp and docs/API.md): accepting within the
// limits, reading and feeding the request parser, answering in request order (pipelining),
// deadlines, and the close.
//
// Everything here runs on the loop thread. Lifetimes:
//  - The listeners and connections are heap objects that free themselves in their uv_close callback,
//    so the Server (and its Impl) may be destroyed while closes are still in flight.
//  - A connection keeps its requests' answers in a queue of Slots, in request order (pipelining).
//    A Responder holds a Slot; when the connection goes away the Slot's `conn` becomes null, so a
//    late send() is a no-op and alive() is false.
#include "supervisor/http/connection.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

namespace cuzk::http::detail {

// Pipelined requests parsed ahead of their answers; beyond this the connection stops reading.
constexpr size_t kMaxPipelined = 32;
constexpr size_t kReadBuffer = 64 * 1024;

const char* reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return status < 400 ? "OK" : status < 500 ? "Client Error" : "Server Error";
  }
}

std::string serialize(const Response& r, bool keep_alive, bool head) {
  std::string out;
  out.reserve(r.body.size() + 160);
  out += "HTTP/1.1 " + std::to_string(r.status) + " " + reason_phrase(r.status) + "\r\n";
  if (!r.content_type.empty()) out += "Content-Type: " + r.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  out += "Cache-Control: no-store\r\n";
  if (r.status == 401) out += "WWW-Authenticate: Bearer realm=\"cuzk\"\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  if (!head) out += r.body;
  return out;
}

// One answer position in a connection's pipeline.
struct Slot {
  Conn* conn = nullptr;  // null once the connection is gone
  bool done = false;     // the answer has been given
  bool keep_alive = true;
  bool head = false;
  std::string bytes;  // serialized response once done
};

// Connection life: Open (parsing requests) → Finishing (no more requests; answers still to come) →
// ShuttingDown (answers queued, write side being shut) → Lingering (reading and discarding until the
// client closes or a short timer fires, so an early error answer is not lost to a TCP reset) → closed.
enum class Phase { Open, Finishing, ShuttingDown, Lingering, Closed };

constexpr uint64_t kLingerMs = 2000;

struct Conn {
  union {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_pipe_t pipe;
    uv_tcp_t tcp;
  } h;
  uv_timer_t linger;             // the idle timer while Open, the linger timer after shutdown
  int handles_open = 0;         // the object is freed when both handles have closed
  Core* srv = nullptr;  // null once closed
  bool via_tcp = false;
  bool authenticated = false;  // a unix socket peer, or a TCP one that has presented the token
  Phase phase = Phase::Open;
  bool reading = false;
  bool paused = false;      // parser paused: too many pipelined requests or answer bytes waiting
  bool eof_seen = false;
  uint64_t last_read_ms = 0;     // uv_now of the last bytes read (or of the accept)
  uint64_t accepted = 0;         // accept order: which of two connections idle since the same ms came first
  uint64_t last_write_ms = 0;    // uv_now of the last answer bytes the client took
  uint64_t header_deadline = 0;  // uv_now by which the current request's headers must be complete; 0: none
  uint64_t body_start_ms = 0;    // uv_now when the current request's body began; 0: not in a body
  uint64_t body_bytes = 0;       // of the current request's body, received so far
  std::string backlog;      // unparsed bytes kept while paused
  std::unique_ptr<RequestParser> parser;
  std::unique_ptr<BodyBuffer> body;  // the current request's body as it arrives
  Peer peer;
  char buf[kReadBuffer];
  std::deque<std::shared_ptr<Slot>> slots;

  bool closed() const { return phase == Phase::Closed; }
};

class ResponderImpl final : public Responder {
 public:
  explicit ResponderImpl(std::shared_ptr<Slot> s) : slot_(std::move(s)) {}
  ~ResponderImpl() override {
    // A handler that drops its responder without answering would block the pipeline for good.
    if (!slot_->done && slot_->conn) send(Response::error(500, "internal error: the request was not answered"));
  }
  void send(Response r) override;
  bool alive() const override { return slot_->conn != nullptr; }

 private:
  std::shared_ptr<Slot> slot_;
};

void on_closed(uv_handle_t* h) {
  Conn* c = static_cast<Conn*>(h->data);
  if (--c->handles_open == 0) delete c;
}

void conn_close(Conn* c) {
  if (c->closed()) return;
  c->phase = Phase::Closed;
  if (c->srv && !c->authenticated) c->srv->unauthenticated--;
  if (c->srv) c->srv->conns.erase(c);
  c->srv = nullptr;
  for (auto& s : c->slots) s->conn = nullptr;
  c->slots.clear();
  if (c->body) c->body->reset();
  uv_close(&c->h.handle, on_closed);
  uv_close(reinterpret_cast<uv_handle_t*>(&c->linger), on_closed);
}

uint64_t queued_bytes(const Conn* c) { return uv_stream_get_write_queue_size(&c->h.stream); }

// Closes a lingering connection, or one whose last answers its client has not taken for
// idle_timeout_ms (a client still taking them is given more time).
void on_linger_timeout(uv_timer_t* t) {
  Conn* c = static_cast<Conn*>(t->data);
  if (c->phase == Phase::ShuttingDown && c->srv && queued_bytes(c)) {
    const uint64_t now = uv_now(c->srv->loop), idle = c->srv->opt.idle_timeout_ms;
    if (idle && now < c->last_write_ms + idle) {
      uv_timer_start(&c->linger, on_linger_timeout, c->last_write_ms + idle - now, 0);
      return;
    }
  }
  conn_close(c);
}

void fail_connection(Conn* c, int status, const std::string& msg);

void on_idle_timeout(uv_timer_t* t);

bool owes_answer(const Conn* c) {
  for (auto& s : c->slots)
    if (!s->done) return true;
  return false;
}

// When the body being received must be complete at the least rate: the grace of header_timeout_ms
// plus its bytes so far at body_min_rate; 0 when no body is arriving or there is no such limit.
uint64_t body_deadline(const Conn* c) {
  const ServerOptions& o = c->srv->opt;
  if (!c->body_start_ms || !o.body_min_rate) return 0;
  return c->body_start_ms + o.header_timeout_ms + c->body_bytes * 1000 / o.body_min_rate;
}

// The one timer of an open connection fires at the earliest of the idle timeout (counted from the
// last read), the current request's header deadline and its body's.
void arm_idle(Conn* c) {
  if (!c->srv || c->phase != Phase::Open) return;
  const uint64_t now = uv_now(c->srv->loop), idle = c->srv->opt.idle_timeout_ms;
  const uint64_t last = std::max(c->last_read_ms, c->last_write_ms);
  uint64_t due = idle ? last + idle : 0;
  if (c->header_deadline && (!due || c->header_deadline < due)) due = c->header_deadline;
  if (const uint64_t b = body_deadline(c); b && (!due || b < due)) due = b;
  if (!due) return;
  uv_timer_start(&c->linger, on_idle_timeout, due > now ? due - now : 0, 0);
}

void on_idle_timeout(uv_timer_t* t) {
  Conn* c = static_cast<Conn*>(t->data);
  if (c->phase != Phase::Open || !c->srv) return;
  const uint64_t now = uv_now(c->srv->loop), idle = c->srv->opt.idle_timeout_ms;
  if (c->header_deadline && now >= c->header_deadline && !c->authenticated && !c->parser->in_message()) {
    fail_connection(c, 408, "no request within " + std::to_string(c->srv->opt.first_request_ms) +
                                " ms of connecting (a TCP connection must present the bearer token at once)");
    return;
  }
  if (c->header_deadline && now >= c->header_deadline && c->parser->in_headers()) {
    fail_connection(c, 408, "request headers not complete within " + std::to_string(c->srv->opt.header_timeout_ms) +
                                " ms (limits.header_timeout_ms)");
    return;
  }
  if (const uint64_t b = body_deadline(c); b && now >= b && c->parser->in_message()) {
    fail_connection(c, 408, "request body arriving slower than " + std::to_string(c->srv->opt.body_min_rate) +
                                " bytes a second on average (after " +
                                std::to_string(c->srv->opt.header_timeout_ms) + " ms, limits.header_timeout_ms)");
    return;
  }
  // A long poll in progress is not idleness, nor a client taking its answers.
  const uint64_t last = std::max(c->last_read_ms, c->last_write_ms);
  if (idle && now >= last + idle && !owes_answer(c)) {
    if (c->parser->in_message())
      fail_connection(c, 408, "request not completed: nothing received for " + std::to_string(idle) +
                                  " ms (limits.idle_timeout_ms)");
    else conn_close(c);
    return;
  }
  if (idle && now >= last + idle) c->last_read_ms = now;  // count idleness from the answer on
  arm_idle(c);
}

void on_shutdown(uv_shutdown_t* req, int status) {
  Conn* c = static_cast<Conn*>(req->data);
  delete req;
  if (c->closed()) return;
  if (status < 0 || c->eof_seen || !c->reading) {
    conn_close(c);
    return;
  }
  c->phase = Phase::Lingering;
  uv_timer_start(&c->linger, on_linger_timeout, kLingerMs, 0);
}

struct WriteReq {
  uv_write_t req;
  std::string data;
};

void maybe_resume(Conn* c);

void on_written(uv_write_t* w, int status) {
  auto* wr = reinterpret_cast<WriteReq*>(w);
  Conn* c = static_cast<Conn*>(w->data);
  delete wr;
  if (c->closed()) return;
  if (status < 0) {
    conn_close(c);  // the client is gone
    return;
  }
  c->last_write_ms = uv_now(c->srv->loop);
  maybe_resume(c);
}

void write_bytes(Conn* c, std::string data) {
  auto* wr = new WriteReq;
  wr->data = std::move(data);
  wr->req.data = c;
  uv_buf_t b = uv_buf_init(wr->data.data(), (unsigned)wr->data.size());
  if (uv_write(&wr->req, &c->h.stream, &b, 1, on_written) < 0) {
    delete wr;
    conn_close(c);
  }
}

void resume_parsing(Conn* c);
void stop_reading(Conn* c);

// Writes the answers that are ready, in request order; after the last answer of a finishing
// connection, shuts the write side down.
void flush(Conn* c) {
  while (!c->closed() && !c->slots.empty() && c->slots.front()->done) {
    auto s = c->slots.front();
    c->slots.pop_front();
    s->conn = nullptr;
    write_bytes(c, std::move(s->bytes));
    if (!s->keep_alive && !c->closed()) {
      c->phase = Phase::Finishing;
      for (auto& rest : c->slots) rest->conn = nullptr;
      c->slots.clear();
    }
  }
  if (c->closed()) return;
  if (c->phase == Phase::Finishing && c->slots.empty()) {
    c->phase = Phase::ShuttingDown;
    // The shutdown completes once the client has taken the last answers; one that takes nothing is
    // closed after idle_timeout_ms (on_shutdown re-arms the timer for the linger).
    if (const uint64_t idle = c->srv->opt.idle_timeout_ms) {
      c->last_write_ms = uv_now(c->srv->loop);
      uv_timer_start(&c->linger, on_linger_timeout, idle, 0);
    }
    auto* sd = new uv_shutdown_t;
    sd->data = c;
    if (uv_shutdown(sd, &c->h.stream, on_shutdown) < 0) {
      delete sd;
      conn_close(c);
    }
    return;
  }
  if (c->phase != Phase::Open) return;
  if (!c->paused && queued_bytes(c) > c->srv->opt.max_write_queue) {
    // A client that does not take its answers: read no further requests until it does.
    c->parser->pause();
    c->paused = true;
    stop_reading(c);
  }
  maybe_resume(c);
}

// Parsing goes on once few enough answers are owed and the client has taken enough of those given.
void maybe_resume(Conn* c) {
  if (c->phase == Phase::Open && c->paused && c->srv && c->slots.size() < kMaxPipelined / 2 &&
      queued_bytes(c) <= c->srv->opt.max_write_queue / 2)
    resume_parsing(c);
}

void ResponderImpl::send(Response r) {
  Slot& s = *slot_;
  if (s.done || !s.conn) return;
  s.done = true;
  s.bytes = serialize(r, s.keep_alive, s.head);
  flush(s.conn);
}

// Queues an error answer after those already pending and reads no further requests.
void fail_connection(Conn* c, int status, const std::string& msg) {
  if (c->body) c->body->reset();
  auto s = std::make_shared<Slot>();
  s->conn = c;
  s->keep_alive = false;
  s->done = true;
  s->bytes = serialize(Response::error(status, msg), false, false);
  c->slots.push_back(s);
  c->phase = Phase::Finishing;
  flush(c);
}

// The 503 of a connection refused at a limit.
std::string busy_answer(const Core* impl, bool unauthenticated) {
  return serialize(
      Response::error(503, unauthenticated ? "too many TCP connections that have not presented the bearer token (" +
                                                 std::to_string(impl->opt.max_unauthenticated) + "); retry later"
                                           : "too many connections (limits.max_connections = " +
                                                 std::to_string(impl->opt.max_connections) + "); retry later"),
      false, false);
}

// Counts a refused connection. The first refusal of a burst is logged; the count when connections
// are accepted again (on_connection).
void count_refusal(Core* impl, bool unauthenticated) {
  impl->refused++;
  if (impl->refused_in_burst++ == 0 && impl->opt.warn)
    impl->opt.warn(unauthenticated ? "connection limit reached: " + std::to_string(impl->unauthenticated) +
                                         " TCP connections without the bearer token; refusing new ones with 503 "
                                         "until some close"
                                   : "connection limit reached: " + std::to_string(impl->conns.size()) +
                                         " connections open (limits.max_connections); refusing new ones with 503 "
                                         "until some close");
}

// An accepted connection refused at max_connections: told 503 and closed at once, holding no
// descriptor.
void refuse_accepted(Conn* c) {
  Core* impl = c->srv;
  const std::string busy = busy_answer(impl, false);
  uv_buf_t b = uv_buf_init(const_cast<char*>(busy.data()), (unsigned)busy.size());
  uv_try_write(&c->h.stream, &b, 1);  // a fresh socket's buffer takes it; if not, the client sees the close
  conn_close(c);
  count_refusal(impl, false);
}

// Whose share of max_connections a connection counts in: a socket peer's uid, TCP clients with
// the token as one class (the classes jobs are answered to).
std::string class_of(const Conn* c) {
  if (c->via_tcp) return "tcp";
  return c->peer.unix_creds ? "unix:" + std::to_string(c->peer.uid) : "unix:?";
}

// At max_connections, whether `c` gets in: when another class holds at least two more connections
// than c's, that class's connection that has waited longest for its next request or its answer (an
// idle keep-alive, a long poll; never one whose request is still arriving) is returned, to be
// closed for it. So one client holding every place (hundreds of long polls) cannot keep another
// out: each class gets in down to an even share. Null: no room (c's class holds the most).
Conn* room_for(Core* impl, const Conn* c) {
  std::unordered_map<std::string, size_t> held;
  for (const Conn* o : impl->conns)
    if (o != c && o->authenticated && !o->closed()) held[class_of(o)]++;
  const size_t mine = held[class_of(c)];
  Conn* victim = nullptr;
  size_t victim_held = 0;
  for (Conn* o : impl->conns) {
    if (o == c || !o->authenticated || o->phase != Phase::Open || o->parser->in_message()) continue;
    const size_t n = held[class_of(o)];
    if (n < mine + 2) continue;
    if (!victim || n > victim_held ||
        (n == victim_held && (o->last_read_ms < victim->last_read_ms ||
                              (o->last_read_ms == victim->last_read_ms && o->accepted < victim->accepted))))
      victim = o, victim_held = n;
  }
  return victim;
}

// At max_unauthenticated, the TCP connection without the token to close for a new one: the one that
// has waited longest without sending anything, else the oldest of those still sending their
// request's line and headers (however steadily they trickle in: a client with the token sends its
// headers at once, so trickling ones cannot keep it out). Never one sending a body (its headers
// carried the token). Null: none.
Conn* room_among_unauthenticated(Core* impl) {
  Conn* idle = nullptr;
  Conn* in_headers = nullptr;
  for (Conn* o : impl->conns) {
    if (o->authenticated || o->phase != Phase::Open) continue;
    if (!o->parser->in_message()) {
      if (!idle || o->last_read_ms < idle->last_read_ms ||
          (o->last_read_ms == idle->last_read_ms && o->accepted < idle->accepted))
        idle = o;
    } else if (o->parser->in_headers() && (!in_headers || o->accepted < in_headers->accepted)) {
      in_headers = o;
    }
  }
  return idle ? idle : in_headers;
}

// A complete request: queued for its answer in request order and handed to the handler. Returns
// false when no further request is to be parsed on this connection.
bool on_request(Conn* c, RequestParser::Complete& done) {
  if (!c->srv) return false;
  auto slot = std::make_shared<Slot>();
  slot->conn = c;
  slot->keep_alive = done.keep_alive;
  slot->head = done.head;
  c->slots.push_back(slot);
  if (!slot->keep_alive) c->phase = Phase::Finishing;  // no requests after this one
  auto responder = std::make_shared<ResponderImpl>(slot);
  c->body_start_ms = 0, c->body_bytes = 0;
  if (done.authorized && !c->authenticated) {
    // A TCP connection that presented the token joins the socket clients' limit, if it has room.
    Core* srv = c->srv;
    Conn* victim = nullptr;
    if (srv->opt.max_connections && srv->conns.size() - srv->unauthenticated >= srv->opt.max_connections &&
        !(victim = room_for(srv, c))) {
      done.authorized = false;
      c->phase = Phase::Finishing;
      responder->send(Response::error(503, "too many connections (limits.max_connections = " +
                                               std::to_string(srv->opt.max_connections) + "); retry later"));
      responder.reset();
      return false;
    }
    if (victim) conn_close(victim);
    c->authenticated = true;
    c->srv->unauthenticated--;
  }
  done.request.peer = c->peer;
  c->body->take(done.request.body, done.request.body_file);
  if (!done.authorized) {
    responder->send(Response::error(401, "missing or wrong bearer token (Authorization: Bearer <daemon.token>)"));
  } else {
    Request req = std::move(done.request);
    Core* srv = c->srv;
    try {
      srv->handler(req, responder);
    } catch (const std::exception& e) {
      responder->send(Response::error(500, std::string("internal error: ") + e.what()));
    } catch (...) {
      responder->send(Response::error(500, "internal error"));
    }
  }
  responder.reset();  // answers 500 if the handler neither answered nor kept it
  if (c->closed()) return false;
  c->body->release_handed();  // the handler has what it needs of the body
  if (c->phase != Phase::Open) return false;
  if (c->slots.size() >= kMaxPipelined) {
    c->parser->pause();
    c->paused = true;
  }
  return true;
}

void stop_reading(Conn* c) {
  if (c->reading) uv_read_stop(&c->h.stream);
  c->reading = false;
}

// Feeds request bytes to the parser (only in the Open phase).
void feed(Conn* c, const char* data, size_t n) {
  size_t done = c->parser->feed(data, n);
  if (c->closed()) return;
  if (c->phase != Phase::Open) {
    flush(c);
    return;
  }
  switch (c->parser->state()) {
    case RequestParser::State::Paused:
      c->backlog.assign(data + done, n - done);
      stop_reading(c);
      return;
    case RequestParser::State::Failed:
      fail_connection(c, c->parser->error_status(), c->parser->error_message());
      return;
    case RequestParser::State::Upgrade:  // protocol upgrades are not supported
      c->phase = Phase::Finishing;
      flush(c);
      return;
    case RequestParser::State::Ok:
    case RequestParser::State::Stopped: return;
  }
}

void on_alloc(uv_handle_t* h, size_t, uv_buf_t* b) {
  Conn* c = static_cast<Conn*>(h->data);
  *b = uv_buf_init(c->buf, sizeof c->buf);
}

void on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* b) {
  Conn* c = static_cast<Conn*>(s->data);
  if (c->closed()) return;
  if (n < 0) {
    c->eof_seen = true;
    stop_reading(c);
    bool owed = false;  // answers still to be produced
    for (auto& sl : c->slots) owed |= !sl->done;
    if (n != UV_EOF || owed || c->phase == Phase::Lingering) {
      conn_close(c);  // the client is gone (or has finished reading our last answer)
    } else if (c->phase == Phase::Open || c->phase == Phase::Finishing) {
      c->phase = Phase::Finishing;  // a half-close after the last request: answer, then close
      flush(c);
    }
    return;
  }
  if (n == 0) return;
  if (c->phase == Phase::Open) {
    c->last_read_ms = uv_now(c->srv->loop);
    feed(c, b->base, (size_t)n);
    if (c->phase == Phase::Open && c->srv) {
      // The header deadline runs from the read that began the request until its headers are in.
      if (!c->parser->in_headers()) c->header_deadline = 0;
      else if (!c->header_deadline && c->srv->opt.header_timeout_ms)
        c->header_deadline = c->last_read_ms + c->srv->opt.header_timeout_ms;
      // The body's from the read that completed the headers until the request is complete.
      if (!c->parser->in_message()) c->body_start_ms = 0, c->body_bytes = 0;
      else if (!c->parser->in_headers() && !c->body_start_ms) c->body_start_ms = c->last_read_ms;
      arm_idle(c);
    }
  }
  // Anything after the last request of a finishing connection is discarded.
}

void resume_parsing(Conn* c) {
  c->paused = false;
  c->parser->resume();
  std::string pending = std::move(c->backlog);
  c->backlog.clear();
  if (!pending.empty()) feed(c, pending.data(), pending.size());
  if (!c->closed() && !c->paused && !c->reading && !c->eof_seen) {
    if (uv_read_start(&c->h.stream, on_alloc, on_read) == 0) c->reading = true;
    else conn_close(c);
  }
}


// The credentials of a unix socket's peer, as the kernel recorded them at connect().
Peer peer_of(uv_pipe_t* p) {
  Peer peer;
  uv_os_fd_t fd;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(p), &fd) == 0 &&
      ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof cred) {
    peer.unix_creds = true;
    peer.uid = cred.uid, peer.gid = cred.gid, peer.pid = cred.pid;
    // The groups too: a file the client names is read for it only if it could read it itself.
    std::vector<gid_t> groups(64);
    for (int tries = 0; tries < 2; tries++) {
      socklen_t glen = socklen_t(groups.size() * sizeof(gid_t));
      if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &glen) == 0) {
        peer.groups.assign(groups.begin(), groups.begin() + glen / sizeof(gid_t));
        break;
      }
      if (errno != ERANGE) break;
      groups.resize(glen / sizeof(gid_t) + 1);
    }
  }
  return peer;
}

// A connection over a limit: accepted only to be told 503 and closed at once, so that it holds no
// descriptor.
void refuse_connection(Core* impl, uv_stream_t* server, bool tcp, bool unauthenticated) {
  uv_stream_t* s = tcp ? reinterpret_cast<uv_stream_t*>(new uv_tcp_t) : reinterpret_cast<uv_stream_t*>(new uv_pipe_t);
  if (tcp) uv_tcp_init(impl->loop, reinterpret_cast<uv_tcp_t*>(s));
  else uv_pipe_init(impl->loop, reinterpret_cast<uv_pipe_t*>(s), 0);
  if (uv_accept(server, s) == 0) {
    const std::string busy = busy_answer(impl, unauthenticated);
    uv_buf_t b = uv_buf_init(const_cast<char*>(busy.data()), (unsigned)busy.size());
    uv_try_write(s, &b, 1);  // a fresh socket's buffer takes it; if not, the client sees the close
  }
  uv_close(reinterpret_cast<uv_handle_t*>(s), free_handle);
  count_refusal(impl, unauthenticated);
}

void on_connection(uv_stream_t* server, int status) {
  auto* impl = static_cast<Core*>(server->data);
  if (!impl) return;
  bool tcp = server->type == UV_TCP;
  if (status < 0) {  // e.g. out of descriptors: libuv has already dropped the connection
    if (impl->opt.warn) impl->opt.warn(std::string("cannot accept a connection: ") + uv_strerror(status));
    return;
  }
  // A TCP connection counts as unauthenticated until it presents the token; only then against
  // max_connections (on_request). When they are at their limit, one of them makes room
  // (room_among_unauthenticated); if every one is sending a body, the new one is refused.
  if (tcp && impl->opt.max_unauthenticated && impl->unauthenticated >= impl->opt.max_unauthenticated) {
    Conn* victim = room_among_unauthenticated(impl);
    if (!victim) {
      refuse_connection(impl, server, tcp, true);
      return;
    }
    conn_close(victim);
  }
  Conn* c = new Conn;
  int rc = tcp ? uv_tcp_init(impl->loop, &c->h.tcp) : uv_pipe_init(impl->loop, &c->h.pipe, 0);
  if (rc < 0) {
    delete c;
    return;
  }
  uv_timer_init(impl->loop, &c->linger);
  c->h.handle.data = c;
  c->linger.data = c;
  c->handles_open = 2;
  c->srv = impl;
  c->via_tcp = tcp;
  c->authenticated = !tcp;
  if (tcp) impl->unauthenticated++;
  impl->conns.insert(c);
  if (uv_accept(server, &c->h.stream) < 0) {
    conn_close(c);
    return;
  }
  if (tcp) uv_tcp_nodelay(&c->h.tcp, 1);
  else c->peer = peer_of(&c->h.pipe);
  // A socket client over max_connections gets in only by its class's fair share (room_for), which
  // needs its credentials: known once it is accepted.
  if (!tcp && impl->opt.max_connections && impl->conns.size() - impl->unauthenticated > impl->opt.max_connections) {
    Conn* victim = room_for(impl, c);
    if (!victim) {
      refuse_accepted(c);
      return;
    }
    conn_close(victim);
  }
  if (impl->refused_in_burst) {
    if (impl->opt.warn)
      impl->opt.warn("accepting connections again; " + std::to_string(impl->refused_in_burst) +
                     " were refused at the connection limit (limits.max_connections = " +
                     std::to_string(impl->opt.max_connections) + ")");
    impl->refused_in_burst = 0;
  }
  c->body = std::make_unique<BodyBuffer>(impl->bodies);
  c->parser = std::make_unique<RequestParser>(
      RequestLimits{impl->opt.max_body, impl->opt.max_header, impl->opt.token, impl->opt.admin_token}, tcp,
      [c](RequestParser::Complete& done) { return on_request(c, done); },
      [c] {  // "Expect: 100-continue": say so at once when no earlier answer is still owed
        if (c->slots.empty()) write_bytes(c, "HTTP/1.1 100 Continue\r\n\r\n");
      },
      [c](const char* data, size_t n, std::string& why) {
        c->body_bytes += n;
        return c->body->append(data, n, why);
      });
  if (uv_read_start(&c->h.stream, on_alloc, on_read) < 0) {
    conn_close(c);
    return;
  }
  c->reading = true;
  c->last_read_ms = uv_now(impl->loop);
  c->accepted = ++impl->accepted;
  if (tcp && impl->opt.first_request_ms) c->header_deadline = c->last_read_ms + impl->opt.first_request_ms;
  arm_idle(c);
}



void free_handle(uv_handle_t* h) {
  if (h->type == UV_TCP) delete reinterpret_cast<uv_tcp_t*>(h);
  else delete reinterpret_cast<uv_pipe_t*>(h);
}

void Core::close_all() {
  std::vector<Conn*> all(conns.begin(), conns.end());
  for (Conn* c : all) conn_close(c);
  conns.clear();
}

}  // namespace cuzk::http::detail
