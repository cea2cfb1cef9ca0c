// The HTTP request parser (see http_server.hpp): http-parser's callbacks build one Request at a
// time, after RFC 9112's framing rules that http-parser is lenient about (http_framing.hpp), with
// the limits and the bearer tokens checked as the headers arrive.
#include <http_parser.h>

#include <cctype>
#include <cstring>

#include "supervisor/http/http_framing.hpp"
#include "supervisor/http/http_server.hpp"

namespace cuzk::http {

namespace {

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

}  // namespace

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

}  // namespace cuzk::http
