// The daemon's HTTP/1.1 server (see http_server.hpp and docs/API.md): the listeners on the unix
// socket and TCP, and the server's lifetime. The connections are in connection.cpp, the request
// parser in request_parser.cpp.
#include "supervisor/http/http_server.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "supervisor/http/connection.hpp"

namespace cuzk::http {

using detail::Conn;
using detail::Core;
using detail::free_handle;
using detail::on_connection;
using detail::queued_bytes;

struct Server::Impl : Core {
  using Core::Core;
};

namespace {

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
  // The longest queue of connections not yet accepted that the kernel allows (net.core.somaxconn
  // caps SOMAXCONN): with 128, a burst of a few hundred clients connecting while the loop is busy
  // had the ones past the queue refused (EAGAIN on the unix socket) instead of answered, though
  // limits.max_connections (512) admits them, and those over it are answered 503.
  constexpr int kBacklog = SOMAXCONN;
  rc = uv_listen(reinterpret_cast<uv_stream_t*>(m.pipe), kBacklog, on_connection);
  if (rc < 0) fail("daemon.socket " + m.opt.unix_path + ": cannot listen", rc);

  if (!m.opt.tcp.empty()) {
    m.tcp = new uv_tcp_t;
    uv_tcp_init(m.loop, m.tcp);
    m.tcp->data = static_cast<Core*>(&m);
    unsigned flags = tcp_addr.ss_family == AF_INET6 ? UV_TCP_IPV6ONLY : 0;
    rc = uv_tcp_bind(m.tcp, reinterpret_cast<sockaddr*>(&tcp_addr), flags);
    if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(m.tcp), kBacklog, on_connection);
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
