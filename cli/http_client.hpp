// A small blocking HTTP/1.1 client for talking to the daemon: a unix socket or TCP (with a bearer
// token), one connection per request or, for a client that sends many, one kept open (keep-alive);
// responses parsed with http-parser.
#pragma once
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

namespace cuzk::cli {

// The daemon could not be reached or the connection broke before a full answer arrived.
struct ConnectError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

struct Endpoint {
  std::string unix_path;  // used when set
  std::string tcp;        // "host:port", "[v6]:port" or "localhost:port"
  std::string token;      // sent as "Authorization: Bearer <token>" (TCP only)
  std::string describe() const { return unix_path.empty() ? "tcp " + tcp : unix_path; }
};

class HttpClient {
 public:
  // keep_alive: the connection stays open for the next request (one thread's client; copies share
  // it). A kept connection that the daemon has closed in the meantime is replaced once, when no
  // byte of the answer had arrived.
  explicit HttpClient(Endpoint ep, bool keep_alive = false);
  ~HttpClient();
  // Sends one request and waits up to timeout_s seconds for the whole answer.
  // Throws ConnectError when the daemon is unreachable or the answer is cut or malformed.
  HttpResponse request(const std::string& method, const std::string& target, const std::string& body = "",
                       double timeout_s = 120.0) const;
  const Endpoint& endpoint() const { return ep_; }

 private:
  struct Kept;  // the open connection of a keep-alive client
  Endpoint ep_;
  std::shared_ptr<Kept> kept_;
};

// Percent-encodes one path segment or query value.
std::string url_encode(const std::string& s);

}  // namespace cuzk::cli
