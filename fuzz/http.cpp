// Raw bytes of one connection through the daemon's request parser (http::RequestParser, what the
// server feeds each connection's reads into), once over the unix socket and once as TCP with a
// bearer token, split into two reads at a point taken from the input. Each complete request is
// routed as the API routes it: job ids through parse_job_id, POST /v1/proofs bodies through the
// submission checks (api_env.hpp). Invariants: no crash; the same requests whatever the split; the
// limits hold (body, headers); a TCP request without the token is never authorized; a job id is
// accepted only in its canonical spelling; error answers serialize.
#include <string>
#include <vector>

#include "fuzz/api_env.hpp"
#include "supervisor/http/http_server.hpp"

using namespace cuzk;

namespace {

constexpr uint64_t kMaxBody = 4096, kMaxHeader = 2048;
const char kToken[] = "s3cret";

struct Seen {
  std::vector<http::RequestParser::Complete> requests;
  http::RequestParser::State state;
  int status;
};

// Feeds data in two reads, the first of `split` bytes, resuming after pauses as the server does.
Seen parse(const std::string& data, size_t split, bool tcp) {
  Seen s;
  http::RequestParser* self = nullptr;
  http::RequestParser p(
      http::RequestLimits{kMaxBody, kMaxHeader, kToken}, tcp,
      [&](http::RequestParser::Complete& c) {
        s.requests.push_back(c);
        if (s.requests.size() % 3 == 0) self->pause();  // as the server does when answers are owed
        return c.keep_alive;
      },
      [] {});
  self = &p;
  std::string pending[2] = {data.substr(0, split), data.substr(split)};
  for (std::string& chunk : pending) {
    while (!chunk.empty() && p.state() == http::RequestParser::State::Ok) {
      size_t used = p.feed(chunk.data(), chunk.size());
      FUZZ_CHECK(used <= chunk.size(), "consumed more than was fed");
      chunk.erase(0, used);
      if (p.state() == http::RequestParser::State::Paused) p.resume();
    }
    if (p.state() != http::RequestParser::State::Ok) break;
  }
  s.state = p.state();
  s.status = p.error_status();
  return s;
}

bool same(const http::Request& a, const http::Request& b) {
  return a.method == b.method && a.path == b.path && a.query == b.query && a.headers == b.headers && a.body == b.body;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fuzz::ApiEnv env;
  if (size < 1) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t split = bytes.empty() ? 0 : data[0] % (bytes.size() + 1);

  const Seen whole = parse(bytes, bytes.size(), false);
  const Seen parts = parse(bytes, split, false);
  // A request split over two reads is the same request (a failure may come at another byte, but
  // with the same status, and only after the same complete requests).
  FUZZ_CHECK(whole.requests.size() == parts.requests.size(), "the split changed the number of requests");
  for (size_t i = 0; i < whole.requests.size(); i++)
    FUZZ_CHECK(same(whole.requests[i].request, parts.requests[i].request), "the split changed a request");
  FUZZ_CHECK(whole.state == parts.state && whole.status == parts.status, "the split changed the outcome");
  if (whole.state == http::RequestParser::State::Failed)
    FUZZ_CHECK(whole.status == 400 || whole.status == 413 || whole.status == 431 || whole.status == 505,
               "unexpected error status");

  for (const auto& c : whole.requests) {
    const http::Request& r = c.request;
    FUZZ_CHECK(c.authorized, "a unix-socket request was not authorized");
    FUZZ_CHECK(r.body.size() <= kMaxBody, "a body over the limit was kept");
    FUZZ_CHECK(!r.method.empty() && !r.path.empty(), "no method or path");
    for (const auto& [k, v] : r.headers)
      for (char ch : k) FUZZ_CHECK(!(ch >= 'A' && ch <= 'Z'), "a header name not lower-cased");
    // The API's routing.
    if (r.path.rfind("/v1/proofs/", 0) == 0) {
      const std::string id = r.path.substr(11);
      if (auto v = sup::parse_job_id(id)) FUZZ_CHECK(std::to_string(*v) == id && *v != 0, "a non-canonical job id");
    }
    if (r.path == "/v1/proofs" && r.method == "POST") env.submit(r.body);
    (void)http::Response::error(404, "no such endpoint: " + r.method + " " + r.path);
  }

  // Over TCP, only a request that presents the token is authorized, and no other keeps its body.
  const Seen tcp = parse(bytes, split, true);
  for (const auto& c : tcp.requests) {
    auto it = c.request.headers.find("authorization");
    std::string scheme = it == c.request.headers.end() ? "" : it->second.substr(0, 7);
    for (char& ch : scheme) ch = char(std::tolower((unsigned char)ch));
    const bool presented = scheme == "bearer " && it->second.substr(7) == kToken;
    FUZZ_CHECK(c.authorized == presented, "TCP authorization differs from the bearer token check");
    FUZZ_CHECK(c.authorized || c.request.body.empty(), "an unauthorized request's body was kept");
    FUZZ_CHECK(c.authorized || !c.keep_alive, "a connection goes on after an unauthorized request");
  }
  return 0;
}
