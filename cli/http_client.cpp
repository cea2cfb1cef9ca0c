#include "http_client.hpp"

#include <http_parser.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace cuzk::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct Fd {
  int fd = -1;
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  ~Fd() { reset(); }
};

std::string errstr(int e) { return std::strerror(e); }

int connect_unix(const std::string& path) {
  sockaddr_un a{};
  if (path.size() >= sizeof a.sun_path) throw ConnectError(path + ": socket path too long");
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw ConnectError("socket: " + errstr(errno));
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    int e = errno;
    ::close(fd);
    throw ConnectError("cannot connect to the daemon at " + path + ": " + errstr(e));
  }
  return fd;
}

int connect_tcp(const std::string& spec) {
  auto colon = spec.rfind(':');
  if (colon == std::string::npos) throw ConnectError("tcp " + spec + ": expected host:port");
  std::string host = spec.substr(0, colon), port = spec.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) throw ConnectError("tcp " + spec + ": " + gai_strerror(rc));
  std::string last = "no address";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
      ::freeaddrinfo(res);
      return fd;
    }
    last = errstr(errno);
    ::close(fd);
  }
  ::freeaddrinfo(res);
  throw ConnectError("cannot connect to the daemon at tcp " + spec + ": " + last);
}

struct Parse {
  HttpResponse r;
  std::string field, value;
  bool last_was_value = false;
  bool complete = false;
  void commit() {
    if (field.empty()) return;
    for (auto& c : field) c = (char)std::tolower((unsigned char)c);
    r.headers[field] = value;
    field.clear();
    value.clear();
  }
};

Parse* P(http_parser* p) { return static_cast<Parse*>(p->data); }


// Sends the request `req` on the connected socket fd and reads one whole answer, by `deadline`.
// `answered` turns true once a byte of the answer has arrived.
HttpResponse exchange(int fd, const std::string& req, Clock::time_point deadline, const Endpoint& ep,
                      bool& answered) {
  auto wait_for = [&](short events) {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) throw ConnectError("no answer from the daemon at " + ep.describe() + " within the timeout");
      pollfd pfd{fd, events, 0};
      int rc = ::poll(&pfd, 1, (int)std::min<long long>(left, 1 << 30));
      if (rc > 0) return;
      if (rc < 0 && errno != EINTR) throw ConnectError("poll: " + errstr(errno));
    }
  };

  size_t off = 0;
  while (off < req.size()) {
    wait_for(POLLOUT);
    ssize_t n = ::send(fd, req.data() + off, req.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      // The daemon may have answered early (e.g. 413) and closed; try to read that answer.
      break;
    }
    off += (size_t)n;
  }

  http_parser_settings st{};
  st.on_status = [](http_parser*, const char*, size_t) { return 0; };
  st.on_header_field = [](http_parser* p, const char* at, size_t n) {
    auto* x = P(p);
    if (x->last_was_value) x->commit();
    x->last_was_value = false;
    x->field.append(at, n);
    return 0;
  };
  st.on_header_value = [](http_parser* p, const char* at, size_t n) {
    auto* x = P(p);
    x->last_was_value = true;
    x->value.append(at, n);
    return 0;
  };
  st.on_headers_complete = [](http_parser* p) {
    auto* x = P(p);
    if (x->last_was_value) x->commit();
    x->r.status = (int)p->status_code;
    return 0;
  };
  st.on_body = [](http_parser* p, const char* at, size_t n) {
    P(p)->r.body.append(at, n);
    return 0;
  };
  st.on_message_complete = [](http_parser* p) {
    auto* x = P(p);
    if (x->r.status == 100) {  // an interim answer: reset and keep reading the real one
      x->r = HttpResponse{};
      return 0;
    }
    x->complete = true;
    http_parser_pause(p, 1);
    return 0;
  };
  Parse ps;
  http_parser parser;
  http_parser_init(&parser, HTTP_RESPONSE);
  parser.data = &ps;
  char buf[65536];
  while (!ps.complete) {
    wait_for(POLLIN);
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) answered = true;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      if (ps.r.status == 0 && off < req.size())
        throw ConnectError("the daemon at " + ep.describe() + " closed the connection: " + errstr(errno));
      throw ConnectError("reading from the daemon at " + ep.describe() + ": " + errstr(errno));
    }
    http_parser_execute(&parser, &st, buf, (size_t)n);  // n == 0 signals EOF to the parser
    auto err = HTTP_PARSER_ERRNO(&parser);
    if (ps.complete) break;
    if (err != HPE_OK) throw ConnectError(std::string("bad answer from the daemon: ") + http_errno_description(err));
    if (n == 0) throw ConnectError("the daemon at " + ep.describe() + " closed the connection before answering");
  }
  return ps.r;
}

}  // namespace

std::string url_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back((char)c);
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

struct HttpClient::Kept {
  Fd sock;
};

HttpClient::HttpClient(Endpoint ep, bool keep_alive) : ep_(std::move(ep)) {
  if (keep_alive) kept_ = std::make_shared<Kept>();
}
HttpClient::~HttpClient() = default;

HttpResponse HttpClient::request(const std::string& method, const std::string& target, const std::string& body,
                                 double timeout_s) const {
  const auto deadline = Clock::now() + std::chrono::milliseconds((long long)(timeout_s * 1000));
  auto connect = [&] { return ep_.unix_path.empty() ? connect_tcp(ep_.tcp) : connect_unix(ep_.unix_path); };
  std::string req = method + " " + target + " HTTP/1.1\r\n";
  req += ep_.unix_path.empty() ? "Host: " + ep_.tcp + "\r\n" : "Host: localhost\r\n";
  req += "User-Agent: cuzk-cli\r\nAccept: application/json\r\n";
  req += kept_ ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  if (ep_.unix_path.empty() && !ep_.token.empty()) req += "Authorization: Bearer " + ep_.token + "\r\n";
  if (!body.empty() || method == "POST" || method == "PUT") {
    req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  req += "\r\n";
  req += body;

  bool answered = false;
  if (!kept_) {
    Fd sock;
    sock.fd = connect();
    return exchange(sock.fd, req, deadline, ep_, answered);
  }
  Fd& sock = kept_->sock;
  for (bool first = true;; first = false) {
    const bool reused = sock.fd >= 0;
    if (!reused) sock.fd = connect();
    try {
      HttpResponse r = exchange(sock.fd, req, deadline, ep_, answered);
      auto c = r.headers.find("connection");
      if (c != r.headers.end() && c->second.find("close") != std::string::npos) sock.reset();
      return r;
    } catch (const ConnectError&) {
      sock.reset();
      // A kept connection the daemon closed while it was idle: once more on a new one.
      if (first && reused && !answered && Clock::now() < deadline) continue;
      throw;
    }
  }
}

}  // namespace cuzk::cli
