// The daemon's HTTP/1.1 server (see http_server.hpp and docs/API.md).
//
// Everything here runs on the loop thread. Lifetimes:
//  - The listeners and connections are heap objects that free themselves in their uv_close callback,
//    so the Server (and its Impl) may be destroyed while closes are still in flight.
//  - A connection keeps its requests' answers in a queue of Slots, in request order (pipelining).
//    A Responder holds a Slot; when the connection goes away the Slot's `conn` becomes null, so a
//    late send() is a no-op and alive() is false.
#include "supervisor/http/http_server.hpp"
#include "supervisor/http/http_framing.hpp"

#include <http_parser.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <unordered_set>

#include <nlohmann/json.hpp>

namespace cuzk::http {

namespace {

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

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding; `plus_is_space` for query components. Returns false on a bad escape.
bool url_decode(const char* s, size_t n, bool plus_is_space, std::string& out) {
  out.clear();
  out.reserve(n);
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= n) return false;
      int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out.push_back((char)(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return true;
}

// Constant-time comparison of a presented secret with the expected one (the length of the expected
// token is not secret-dependent on the presented value).
bool secret_equal(const std::string& presented, const std::string& expected) {
  unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); i++) {
    unsigned char p = i < presented.size() ? (unsigned char)presented[i] : 0;
    diff |= (unsigned char)(p ^ (unsigned char)expected[i]);
  }
  return diff == 0;
}

std::string lower(std::string s) {
  for (auto& c : s) c = (char)std::tolower((unsigned char)c);
  return s;
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

struct Conn;

// One answer position in a connection's pipeline.
struct Slot {
  Conn* conn = nullptr;  // null once the connection is gone
  bool done = false;     // the answer has been given
  bool keep_alive = true;
  bool head = false;
  std::string bytes;  // serialized response once done
};

}  // namespace

namespace {


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
  uint64_t refused = 0;          // connections refused at opt.max_connections since start
  uint64_t refused_in_burst = 0;  // of those, since the limit was last reached (0: not at the limit)

  Core(uv_loop_t* l, ServerOptions o, Handler h) : loop(l), opt(std::move(o)), handler(std::move(h)) {
    bodies.spool_dir = opt.spool_dir;
    bodies.spool_above = opt.spool_above;
    bodies.memory_budget = opt.memory_budget;
  }
  void close_all();
};

}  // namespace

struct Server::Impl : Core {
  using Core::Core;
};

namespace {

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
    const Core* srv = c->srv;
    if (srv->opt.max_connections && srv->conns.size() - srv->unauthenticated >= srv->opt.max_connections) {
      done.authorized = false;
      c->phase = Phase::Finishing;
      responder->send(Response::error(503, "too many connections (limits.max_connections = " +
                                               std::to_string(srv->opt.max_connections) + "); retry later"));
      responder.reset();
      return false;
    }
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

void free_handle(uv_handle_t* h);

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

// A connection over opt.max_connections: accepted only to be told 503 and closed at once, so that it
// holds no descriptor. The first refusal of a burst is logged; the count when connections are
// accepted again.
void refuse_connection(Core* impl, uv_stream_t* server, bool tcp, bool unauthenticated) {
  uv_stream_t* s = tcp ? reinterpret_cast<uv_stream_t*>(new uv_tcp_t) : reinterpret_cast<uv_stream_t*>(new uv_pipe_t);
  if (tcp) uv_tcp_init(impl->loop, reinterpret_cast<uv_tcp_t*>(s));
  else uv_pipe_init(impl->loop, reinterpret_cast<uv_pipe_t*>(s), 0);
  if (uv_accept(server, s) == 0) {
    const std::string busy = serialize(
        Response::error(503, unauthenticated ? "too many TCP connections that have not presented the bearer token (" +
                                                   std::to_string(impl->opt.max_unauthenticated) + "); retry later"
                                             : "too many connections (limits.max_connections = " +
                                                   std::to_string(impl->opt.max_connections) + "); retry later"),
        false, false);
    uv_buf_t b = uv_buf_init(const_cast<char*>(busy.data()), (unsigned)busy.size());
    uv_try_write(s, &b, 1);  // a fresh socket's buffer takes it; if not, the client sees the close
  }
  uv_close(reinterpret_cast<uv_handle_t*>(s), free_handle);
  impl->refused++;
  if (impl->refused_in_burst++ == 0 && impl->opt.warn)
    impl->opt.warn(unauthenticated ? "connection limit reached: " + std::to_string(impl->unauthenticated) +
                                         " TCP connections without the bearer token; refusing new ones with 503 "
                                         "until some close"
                                   : "connection limit reached: " + std::to_string(impl->conns.size()) +
                                         " connections open (limits.max_connections); refusing new ones with 503 "
                                         "until some close");
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
  // max_connections (on_request). When they are at their limit, the one that has waited longest
  // without sending anything makes room (a client with the token gets through idle ones); if every
  // one is in the middle of a request, the new one is refused.
  if (tcp && impl->opt.max_unauthenticated && impl->unauthenticated >= impl->opt.max_unauthenticated) {
    Conn* oldest = nullptr;
    for (Conn* o : impl->conns)
      if (!o->authenticated && o->phase == Phase::Open && !o->parser->in_message() &&
          (!oldest || o->last_read_ms < oldest->last_read_ms))
        oldest = o;
    if (!oldest) {
      refuse_connection(impl, server, tcp, true);
      return;
    }
    conn_close(oldest);
  }
  if (!tcp && impl->opt.max_connections && impl->conns.size() - impl->unauthenticated >= impl->opt.max_connections) {
    refuse_connection(impl, server, tcp, false);
    return;
  }
  if (impl->refused_in_burst) {
    if (impl->opt.warn)
      impl->opt.warn("accepting connections again; " + std::to_string(impl->refused_in_burst) +
                     " were refused at the connection limit (limits.max_connections = " +
                     std::to_string(impl->opt.max_connections) + ")");
    impl->refused_in_burst = 0;
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
  if (tcp && impl->opt.first_request_ms) c->header_deadline = c->last_read_ms + impl->opt.first_request_ms;
  arm_idle(c);
}


void free_handle(uv_handle_t* h) {
  if (h->type == UV_TCP) delete reinterpret_cast<uv_tcp_t*>(h);
  else delete reinterpret_cast<uv_pipe_t*>(h);
}

// Parses "host:port", "[v6]:port" or "v6literal:port"; "localhost" is 127.0.0.1.
sockaddr_storage parse_tcp(const std::string& spec) {
  auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon + 1 >= spec.size())
    throw ListenError("daemon.tcp", "daemon.tcp \"" + spec + "\": expected host:port");
  std::string host = spec.substr(0, colon), port_s = spec.substr(colon + 1);
  for (char ch : port_s)
    if (ch < '0' || ch > '9') throw ListenError("daemon.tcp", "daemon.tcp \"" + spec + "\": bad port");
  long port = std::stol(port_s);
  if (port > 65535) throw ListenError("daemon.tcp", "daemon.tcp \"" + spec + "\": port out of range");
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost" || host.empty()) host = host.empty() ? "0.0.0.0" : "127.0.0.1";
  sockaddr_storage ss{};
  if (host.find(':') != std::string::npos) {
    if (uv_ip6_addr(host.c_str(), (int)port, reinterpret_cast<sockaddr_in6*>(&ss)) != 0)
      throw ListenError("daemon.tcp", "daemon.tcp \"" + spec + "\": not an IPv6 address");
  } else if (uv_ip4_addr(host.c_str(), (int)port, reinterpret_cast<sockaddr_in*>(&ss)) != 0) {
    throw ListenError("daemon.tcp", "daemon.tcp \"" + spec + "\": host must be an IP address or localhost");
  }
  return ss;
}

// Removes a socket file left by a previous run; refuses to remove anything else or a live socket.
void remove_stale_socket(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return;
  if (!S_ISSOCK(st.st_mode))
    throw ListenError("daemon.socket", "daemon.socket " + path + ": exists and is not a socket; not replacing it");
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path.c_str(), path.size());
    int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::close(fd);
    if (rc == 0) throw ListenError("daemon.socket", "daemon.socket " + path + ": another daemon is listening on it");
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw ListenError("daemon.socket", "daemon.socket " + path + ": cannot remove the stale socket: " + std::strerror(errno));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// RequestParser: http-parser's callbacks build one Request at a time.

struct RequestParser::Impl {
  RequestLimits limits;
  bool via_tcp;
  std::function<bool(Complete&)> on_request;
  std::function<void()> on_continue;
  BodySink on_body;
  http_parser parser;
  http_parser_settings settings{};
  StrictFraming framing;  // what http-parser is lenient about
  State state = State::Ok;
  bool stopped = false;     // on_request said stop
  bool in_message = false;  // a request has begun and is not complete
  bool in_headers = false;  // a request has begun and its headers are not complete
  // The request being parsed.
  Request req;
  std::string url;
  std::string field, value;
  bool last_was_value = false;
  uint64_t header_bytes = 0;
  uint64_t body_bytes = 0;
  bool authorized = true;
  int reject_status = 0;  // set by a callback to stop with this status
  std::string reject_message;

  static Impl* of(http_parser* p) { return static_cast<Impl*>(p->data); }

  bool add_header_bytes(size_t n) {
    header_bytes += n;
    if (header_bytes > limits.max_header) {
      reject_status = 431;
      reject_message = "request headers exceed " + std::to_string(limits.max_header) + " bytes";
      return false;
    }
    return true;
  }

  // RFC 9110 token characters; http-parser lets spaces into header names.
  static bool is_token(const std::string& s) {
    if (s.empty()) return false;
    for (unsigned char c : s)
      if (!(std::isalnum(c) || std::strchr("!#$%&'*+-.^_`|~", c))) return false;
    return true;
  }

  bool commit_header() {
    if (field.empty()) return true;
    if (!is_token(field)) {
      reject_status = 400;
      reject_message = "malformed header name (only token characters, no spaces)";
      return false;
    }
    std::string name = lower(field);
    auto it = req.headers.find(name);
    if (it == req.headers.end()) req.headers.emplace(name, value);
    else it->second += ", " + value;
    field.clear();
    value.clear();
    return true;
  }

  bool parse_target() {
    http_parser_url u;
    http_parser_url_init(&u);
    if (http_parser_parse_url(url.data(), url.size(), 0, &u) != 0) return false;
    if (u.field_set & (1 << UF_PATH)) {
      if (!url_decode(url.data() + u.field_data[UF_PATH].off, u.field_data[UF_PATH].len, false, req.path)) return false;
    } else {
      req.path = "/";
    }
    if (u.field_set & (1 << UF_QUERY)) {
      const char* q = url.data() + u.field_data[UF_QUERY].off;
      size_t n = u.field_data[UF_QUERY].len, i = 0;
      while (i <= n) {
        size_t j = i;
        while (j < n && q[j] != '&') j++;
        if (j > i) {
          size_t eq = i;
          while (eq < j && q[eq] != '=') eq++;
          std::string k, v;
          if (!url_decode(q + i, eq - i, true, k)) return false;
          if (eq < j && !url_decode(q + eq + 1, j - eq - 1, true, v)) return false;
          req.query[k] = v;
        }
        i = j + 1;
      }
    }
    return true;
  }

  static int cb_message_begin(http_parser* p) {
    Impl* m = of(p);
    m->req = Request{};
    m->req.via_tcp = m->via_tcp;
    m->url.clear();
    m->field.clear();
    m->value.clear();
    m->last_was_value = false;
    m->header_bytes = 0;
    m->body_bytes = 0;
    m->authorized = true;
    m->in_message = true;
    m->in_headers = true;
    return 0;
  }

  static int cb_url(http_parser* p, const char* at, size_t n) {
    Impl* m = of(p);
    if (!m->add_header_bytes(n)) return -1;
    m->url.append(at, n);
    return 0;
  }

  static int cb_header_field(http_parser* p, const char* at, size_t n) {
    Impl* m = of(p);
    if (!m->add_header_bytes(n)) return -1;
    if (m->last_was_value && !m->commit_header()) return -1;
    m->last_was_value = false;
    m->field.append(at, n);
    return 0;
  }

  static int cb_header_value(http_parser* p, const char* at, size_t n) {
    Impl* m = of(p);
    if (!m->add_header_bytes(n)) return -1;
    m->last_was_value = true;
    m->value.append(at, n);
    return 0;
  }

  static int cb_headers_complete(http_parser* p) {
    Impl* m = of(p);
    m->in_headers = false;
    if (m->last_was_value && !m->commit_header()) return -1;
    if (m->stopped) return -1;
    if (p->http_major != 1 || p->http_minor > 1) {
      m->reject_status = 505;
      m->reject_message = "HTTP version " + std::to_string(p->http_major) + "." + std::to_string(p->http_minor) +
                          " is not supported (HTTP/1.0 and HTTP/1.1 are)";
      return -1;
    }
    m->req.method = http_method_str((http_method)p->method);
    if (!m->parse_target()) {
      m->reject_status = 400;
      m->reject_message = "malformed request target (bad URL or percent-encoding)";
      return -1;
    }
    if (p->content_length != ULLONG_MAX && p->content_length > m->limits.max_body) {
      m->reject_status = 413;
      m->reject_message = "request body exceeds " + std::to_string(m->limits.max_body) + " bytes";
      return -1;
    }
    if (m->via_tcp) {
      auto it = m->req.headers.find("authorization");
      std::string presented;
      if (it != m->req.headers.end() && it->second.size() > 7 && lower(it->second.substr(0, 7)) == "bearer ")
        presented = it->second.substr(7);
      m->req.admin = !m->limits.admin_token.empty() && secret_equal(presented, m->limits.admin_token);
      m->authorized = m->req.admin || (!m->limits.token.empty() && secret_equal(presented, m->limits.token));
      if (!m->authorized) {
        // Answered 401 now, without reading the body, and nothing more is read from the connection.
        m->in_message = false;
        Complete done;
        done.request = std::move(m->req);
        done.authorized = false;
        done.keep_alive = false;
        done.head = done.request.method == "HEAD";
        m->on_request(done);
        m->stopped = true;
        return -1;
      }
    }
    auto ex = m->req.headers.find("expect");
    if (ex != m->req.headers.end() && lower(ex->second) == "100-continue" && m->authorized && m->on_continue)
      m->on_continue();
    return 0;
  }

  static int cb_body(http_parser* p, const char* at, size_t n) {
    Impl* m = of(p);
    if (m->stopped) return -1;
    if (m->body_bytes + n > m->limits.max_body) {
      m->reject_status = 413;
      m->reject_message = "request body exceeds " + std::to_string(m->limits.max_body) + " bytes";
      return -1;
    }
    m->body_bytes += n;
    if (!m->on_body) {
      m->req.body.append(at, n);
      return 0;
    }
    std::string why;
    if (int status = m->on_body(at, n, why)) {
      m->reject_status = status;
      m->reject_message = why;
      return -1;
    }
    return 0;
  }

  static int cb_message_complete(http_parser* p) {
    Impl* m = of(p);
    m->in_message = false;
    if (m->stopped) return -1;
    Complete done;
    done.request = std::move(m->req);
    done.authorized = m->authorized;
    done.keep_alive = http_should_keep_alive(p) && !p->upgrade;
    done.head = done.request.method == "HEAD";
    if (!m->on_request(done)) {
      m->stopped = true;
      return -1;
    }
    return 0;
  }
};

RequestParser::RequestParser(RequestLimits limits, bool via_tcp, std::function<bool(Complete&)> on_request,
                             std::function<void()> on_continue, BodySink on_body)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.limits = std::move(limits);
  m.via_tcp = via_tcp;
  m.on_request = std::move(on_request);
  m.on_continue = std::move(on_continue);
  m.on_body = std::move(on_body);
  http_parser_init(&m.parser, HTTP_REQUEST);
  m.parser.data = &m;
  m.settings.on_message_begin = Impl::cb_message_begin;
  m.settings.on_url = Impl::cb_url;
  m.settings.on_header_field = Impl::cb_header_field;
  m.settings.on_header_value = Impl::cb_header_value;
  m.settings.on_headers_complete = Impl::cb_headers_complete;
  m.settings.on_body = Impl::cb_body;
  m.settings.on_message_complete = Impl::cb_message_complete;
}

RequestParser::~RequestParser() = default;

size_t RequestParser::feed(const char* data, size_t n) {
  Impl& m = *impl_;
  if (m.state != State::Ok) return 0;
  // The parser sees only the well-framed prefix; the byte after it fails the request below.
  std::string framing_error;
  const size_t framed = m.framing.check(data, n, framing_error);
  // (Never 0 bytes: http-parser takes a length of 0 for the end of the stream.)
  size_t done = framed ? http_parser_execute(&m.parser, &m.settings, data, framed) : 0;
  m.framing.advance(data, done);
  auto err = HTTP_PARSER_ERRNO(&m.parser);
  if (m.stopped) {
    m.state = State::Stopped;
  } else if (err == HPE_PAUSED) {
    m.state = State::Paused;
  } else if (err != HPE_OK) {
    m.state = State::Failed;
    if (!m.reject_status) {
      m.reject_status = err == HPE_HEADER_OVERFLOW ? 431 : 400;
      m.reject_message = err == HPE_HEADER_OVERFLOW ? "request headers too large"
                                                    : std::string("malformed HTTP request: ") + http_errno_description(err);
    }
  } else if (m.parser.upgrade && !m.in_message) {
    // http-parser sets `upgrade` at the headers already; a request with a body is still being read
    // until it completes, and only what follows it is not HTTP/1.1.
    m.state = State::Upgrade;
  } else if (framed < n && done == framed) {
    m.state = State::Failed;
    m.reject_status = 400;
    m.reject_message = "malformed HTTP request: " + framing_error;
  }
  return done;
}

RequestParser::State RequestParser::state() const { return impl_->state; }
void RequestParser::pause() { http_parser_pause(&impl_->parser, 1); }
void RequestParser::resume() {
  http_parser_pause(&impl_->parser, 0);
  if (impl_->state == State::Paused) impl_->state = State::Ok;
}
bool RequestParser::in_message() const { return impl_->in_message; }
bool RequestParser::in_headers() const { return impl_->in_headers; }
int RequestParser::error_status() const { return impl_->reject_status; }
const std::string& RequestParser::error_message() const { return impl_->reject_message; }

Response Response::error(int status, const std::string& message) {
  nlohmann::json j = {{"error", {{"code", status}, {"message", message}}}};
  Response r;
  r.status = status;
  r.body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

Response Response::json(int status, const std::string& body) {
  Response r;
  r.status = status;
  r.body = body;
  return r;
}

void Core::close_all() {
  std::vector<Conn*> all(conns.begin(), conns.end());
  for (Conn* c : all) conn_close(c);
  conns.clear();
}

Server::Server(uv_loop_t* loop, ServerOptions opt, Handler handler)
    : impl_(std::make_unique<Impl>(loop, std::move(opt), std::move(handler))) {}

Server::~Server() { close(); }

void Server::start() {
  Impl& m = *impl_;
  if (m.listening) return;
  if (m.opt.unix_path.empty()) throw ListenError("daemon.socket", "daemon.socket: a unix socket path is required");
  if (m.opt.unix_path.size() >= sizeof(sockaddr_un{}.sun_path))
    throw ListenError("daemon.socket", "daemon.socket " + m.opt.unix_path + ": path longer than " +
                             std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes");
  if (!m.opt.tcp.empty() && m.opt.token.empty())
    throw ListenError("daemon.tcp", "daemon.tcp " + m.opt.tcp + ": a token (daemon.token) is required for TCP");
  sockaddr_storage tcp_addr{};
  if (!m.opt.tcp.empty()) tcp_addr = parse_tcp(m.opt.tcp);

  remove_stale_socket(m.opt.unix_path);
  auto fail = [&](const std::string& what, int rc) {
    close();
    throw ListenError(what.substr(0, what.find(' ')), what + ": " + uv_strerror(rc));
  };
  m.pipe = new uv_pipe_t;
  uv_pipe_init(m.loop, m.pipe, 0);
  m.pipe->data = static_cast<Core*>(&m);
  int rc = uv_pipe_bind(m.pipe, m.opt.unix_path.c_str());
  if (rc < 0) fail("daemon.socket " + m.opt.unix_path + ": cannot bind", rc);
  m.unix_bound = true;
  // Set the mode before listening, so no client can connect through wider permissions.
  if (::chmod(m.opt.unix_path.c_str(), m.opt.unix_mode) != 0) {
    int e = errno;
    close();
    throw ListenError("daemon.socket", "daemon.socket " + m.opt.unix_path + ": chmod: " + std::strerror(e));
  }
  rc = uv_listen(reinterpret_cast<uv_stream_t*>(m.pipe), 128, on_connection);
  if (rc < 0) fail("daemon.socket " + m.opt.unix_path + ": cannot listen", rc);

  if (!m.opt.tcp.empty()) {
    m.tcp = new uv_tcp_t;
    uv_tcp_init(m.loop, m.tcp);
    m.tcp->data = static_cast<Core*>(&m);
    unsigned flags = tcp_addr.ss_family == AF_INET6 ? UV_TCP_IPV6ONLY : 0;
    rc = uv_tcp_bind(m.tcp, reinterpret_cast<sockaddr*>(&tcp_addr), flags);
    if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(m.tcp), 128, on_connection);
    if (rc < 0) fail("daemon.tcp " + m.opt.tcp + ": cannot listen", rc);
    sockaddr_storage bound{};
    int len = sizeof bound;
    if (uv_tcp_getsockname(m.tcp, reinterpret_cast<sockaddr*>(&bound), &len) == 0)
      m.tcp_port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                              : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  }
  m.listening = true;
}

void Server::close() {
  Impl& m = *impl_;
  if (m.pipe) {
    m.pipe->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(m.pipe), free_handle);
    m.pipe = nullptr;
  }
  if (m.tcp) {
    m.tcp->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(m.tcp), free_handle);
    m.tcp = nullptr;
  }
  if (m.unix_bound) {
    ::unlink(m.opt.unix_path.c_str());
    m.unix_bound = false;
  }
  m.close_all();
  m.listening = false;
}

size_t Server::open_connections() const { return impl_->conns.size(); }
uint64_t Server::refused_connections() const { return impl_->refused; }

int Server::tcp_port() const { return impl_->tcp_port; }

const BodyPool& Server::bodies() const { return impl_->bodies; }

uint64_t Server::queued_write_bytes() const {
  uint64_t n = 0;
  for (const Conn* c : impl_->conns) n += queued_bytes(c);
  return n;
}

}  // namespace cuzk::http
