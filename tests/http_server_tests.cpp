// The daemon's HTTP server over real sockets: round trips, auth, malformed and oversized requests,
// pipelining, long polls and clients that leave before their answer.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <nlohmann/json.hpp>

#include "cli/http_client.hpp"
#include "supervisor/http/http_server.hpp"
#include "tests/http_test_util.hpp"

using namespace cuzk;
using namespace cuzk::testing;
using nlohmann::json;

namespace {

struct Fixture : ::testing::Test {
  LoopThread lt;
  std::unique_ptr<http::Server> server;
  http::ServerOptions opt;
  std::atomic<int> handled{0};
  std::vector<std::shared_ptr<http::Responder>> held;  // loop thread only
  std::string path = temp_socket_path("srv");

  // The server's open connections, read on the loop.
  size_t open_now() {
    size_t n = 0;
    lt.run_on_loop([&] { n = server->open_connections(); });
    return n;
  }

  void SetUp() override {
    ::signal(SIGPIPE, SIG_IGN);  // as the supervisor does: a client gone is an EPIPE, not a signal
    opt.unix_path = path;
    opt.unix_mode = 0600;
    opt.tcp = "127.0.0.1:0";
    opt.token = "s3cret-token";
    opt.max_body = 4096;
    opt.max_header = 2048;
  }
  void start() {
    server = std::make_unique<http::Server>(lt.loop(), opt, [this](const http::Request& r, auto resp) {
      handle(r, resp);
    });
    server->start();
    lt.start();
  }
  void TearDown() override {
    lt.stop([this] {
      held.clear();
      if (server) server->close();
    });
    server.reset();
  }
  void handle(const http::Request& r, std::shared_ptr<http::Responder> resp) {
    handled++;
    if (r.path == "/slow") {
      auto* t = new uv_timer_t;
      uv_timer_init(lt.loop(), t);
      t->data = new std::shared_ptr<http::Responder>(resp);
      uint64_t ms = std::stoul(r.query.count("ms") ? r.query.at("ms") : "100");
      uv_timer_start(t, [](uv_timer_t* t) {
        auto* rp = static_cast<std::shared_ptr<http::Responder>*>(t->data);
        (*rp)->send(http::Response::json(200, R"({"slow":true})"));
        delete rp;
        uv_close(reinterpret_cast<uv_handle_t*>(t), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
      }, ms, 0);
      return;
    }
    if (r.path == "/hold") {
      held.push_back(resp);
      return;
    }
    if (r.path == "/drop") return;
    if (r.path == "/throw") throw std::runtime_error("boom");
    if (r.path == "/big") return resp->send(http::Response::json(200, std::string(64 * 1024, 'x')));
    std::string body = r.body;
    if (r.body_file) {
      std::ifstream in(r.body_file->path, std::ios::binary);
      body.assign(std::istreambuf_iterator<char>(in), {});
    }
    json j = {{"method", r.method}, {"path", r.path}, {"query", r.query}, {"body", body}, {"via_tcp", r.via_tcp},
              {"admin", r.admin}, {"spooled", r.body_file != nullptr}, {"peer_uid", r.peer.unix_creds ? json(r.peer.uid) : json(nullptr)}};
    if (r.headers.count("x-test")) j["x_test"] = r.headers.at("x-test");
    resp->send(http::Response::json(200, j.dump()));
  }
  cli::HttpClient unix_client() { return cli::HttpClient(cli::Endpoint{path, "", ""}); }
  cli::HttpClient tcp_client(const std::string& token) {
    return cli::HttpClient(cli::Endpoint{"", "127.0.0.1:" + std::to_string(server->tcp_port()), token});
  }
  void expect_alive() {
    auto r = unix_client().request("GET", "/ping");
    EXPECT_EQ(r.status, 200);
  }
};

int status_of(const std::string& raw) {
  if (raw.rfind("HTTP/1.1 ", 0) != 0) return -1;
  return std::stoi(raw.substr(9, 3));
}

}  // namespace

TEST_F(Fixture, UnixRoundTripGetAndPost) {
  start();
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto c = unix_client();
  auto r = c.request("GET", "/v1/proofs/a%20b?wait=5&x=a+b%26c&flag");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "application/json");
  auto j = json::parse(r.body);
  EXPECT_EQ(j["method"], "GET");
  EXPECT_EQ(j["path"], "/v1/proofs/a b");
  EXPECT_EQ(j["query"]["wait"], "5");
  EXPECT_EQ(j["query"]["x"], "a b&c");
  EXPECT_EQ(j["query"]["flag"], "");
  EXPECT_EQ(j["via_tcp"], false);
  r = c.request("POST", "/v1/proofs", R"({"circuit":"x"})");
  ASSERT_EQ(r.status, 200);
  j = json::parse(r.body);
  EXPECT_EQ(j["method"], "POST");
  EXPECT_EQ(j["body"], R"({"circuit":"x"})");
}

TEST_F(Fixture, TcpNeedsTheBearerToken) {
  start();
  ASSERT_GT(server->tcp_port(), 0);
  auto r = tcp_client("").request("GET", "/ping");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(json::parse(r.body)["error"]["code"], 401);
  EXPECT_EQ(r.headers.count("www-authenticate"), 1u);
  EXPECT_EQ(tcp_client("s3cret-tokex").request("GET", "/ping").status, 401);
  EXPECT_EQ(tcp_client("s3cret").request("POST", "/x", "{}").status, 401);
  r = tcp_client("s3cret-token").request("POST", "/echo", "hello");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["via_tcp"], true);
  EXPECT_EQ(json::parse(r.body)["body"], "hello");
  expect_alive();
}

// daemon.admin_token passes too and marks the request admin (an operator); the clients' token does not.
TEST_F(Fixture, TheAdminTokenMarksItsRequests) {
  opt.admin_token = "admin-token";
  start();
  auto r = tcp_client("admin-token").request("POST", "/echo", "x");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["admin"], true);
  r = tcp_client("s3cret-token").request("POST", "/echo", "x");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["admin"], false);
  EXPECT_EQ(tcp_client("admin-tokem").request("GET", "/ping").status, 401);
  EXPECT_EQ(json::parse(unix_client().request("POST", "/echo", "x").body)["admin"], false);
  expect_alive();
}

TEST_F(Fixture, GarbageGets400AndClose) {
  start();
  int fd = connect_unix(path);
  ASSERT_GE(fd, 0);
  send_all(fd, "\x01\x02NOT HTTP AT ALL\r\n\r\n");
  std::string raw = read_until_close(fd);
  ::close(fd);
  EXPECT_EQ(status_of(raw), 400) << raw;
  EXPECT_NE(raw.find("Connection: close"), std::string::npos);
  auto body = raw.substr(raw.find("\r\n\r\n") + 4);
  EXPECT_EQ(json::parse(body)["error"]["code"], 400);
  // A bad percent escape in the target is a 400 as well.
  fd = connect_unix(path);
  send_all(fd, "GET /v1/%zz HTTP/1.1\r\nHost: x\r\n\r\n");
  raw = read_until_close(fd);
  ::close(fd);
  EXPECT_EQ(status_of(raw), 400) << raw;
  expect_alive();
  EXPECT_TRUE(eventually([&] {
    size_t n = 0;
    lt.run_on_loop([&] { n = server->open_connections(); });
    return n == 0;
  }));
}

TEST_F(Fixture, OversizedBodyGets413) {
  start();
  int fd = connect_unix(path);
  std::string body(10000, 'x');
  send_all(fd, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  std::string raw = read_until_close(fd);
  ::close(fd);
  EXPECT_EQ(status_of(raw), 413) << raw;
  // Chunked bodies are counted too.
  fd = connect_unix(path);
  std::string chunked = "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 5; i++) chunked += "400\r\n" + std::string(1024, 'y') + "\r\n";
  chunked += "0\r\n\r\n";
  send_all(fd, chunked);
  raw = read_until_close(fd);
  ::close(fd);
  EXPECT_EQ(status_of(raw), 413) << raw;
  // The client's own request path too (the answer comes before the whole body is read).
  auto r = unix_client().request("POST", "/x", std::string(100000, 'z'));
  EXPECT_EQ(r.status, 413);
  expect_alive();
}

TEST_F(Fixture, HugeHeadersGet431) {
  start();
  int fd = connect_unix(path);
  send_all(fd, "GET / HTTP/1.1\r\nX-Big: " + std::string(5000, 'h') + "\r\n\r\n");
  std::string raw = read_until_close(fd);
  ::close(fd);
  EXPECT_EQ(status_of(raw), 431) << raw;
  expect_alive();
}

TEST_F(Fixture, KeepAliveAndPipeliningAnswerInOrder) {
  start();
  int fd = connect_unix(path);
  // A slow request first, then a fast one, then one that closes: answers must keep request order.
  send_all(fd,
           "GET /slow?ms=200 HTTP/1.1\r\nHost: x\r\n\r\n"
           "GET /fast HTTP/1.1\r\nHost: x\r\nX-Test: two\r\n\r\n"
           "POST /last HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc");
  std::string raw = read_until_close(fd);
  ::close(fd);
  size_t a = raw.find(R"({"slow":true})"), b = raw.find("\"path\":\"/fast\""), c = raw.find("\"path\":\"/last\"");
  ASSERT_NE(a, std::string::npos) << raw;
  ASSERT_NE(b, std::string::npos) << raw;
  ASSERT_NE(c, std::string::npos) << raw;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_NE(raw.find("Connection: keep-alive"), std::string::npos);
  EXPECT_NE(raw.find("Connection: close"), std::string::npos);
  // A keep-alive connection serves several requests one after the other.
  fd = connect_unix(path);
  for (int i = 0; i < 3; i++) {
    send_all(fd, "GET /n" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string one = read_until(fd, "/n" + std::to_string(i));
    EXPECT_EQ(status_of(one), 200) << one;
  }
  EXPECT_EQ(open_now(), 1u);
  ::close(fd);
}

TEST_F(Fixture, LongPollAnsweredLater) {
  start();
  auto t0 = std::chrono::steady_clock::now();
  auto r = unix_client().request("GET", "/slow?ms=300");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"slow":true})");
  EXPECT_GE(s, 0.29);
}

TEST_F(Fixture, ClientLeavesBeforeTheAnswer) {
  start();
  int fd = connect_unix(path);
  send_all(fd, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(eventually([&] { return handled.load() == 1; }));
  bool alive = false;
  lt.run_on_loop([&] { alive = held.at(0)->alive(); });
  EXPECT_TRUE(alive);
  ::close(fd);
  EXPECT_TRUE(eventually([&] {
    lt.run_on_loop([&] { alive = held.at(0)->alive(); });
    return !alive;
  }));
  lt.run_on_loop([&] {
    held.at(0)->send(http::Response::json(200, "{}"));  // a no-op
    held.clear();
  });
  expect_alive();
}

TEST_F(Fixture, UnansweredOrThrowingHandlersGet500) {
  start();
  EXPECT_EQ(unix_client().request("GET", "/drop").status, 500);
  auto r = unix_client().request("GET", "/throw");
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(json::parse(r.body)["error"]["message"].get<std::string>().find("boom"), std::string::npos);
  expect_alive();
}

TEST_F(Fixture, CloseKillsPendingRespondersSafely) {
  start();
  int fd = connect_unix(path);
  send_all(fd, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(eventually([&] { return handled.load() == 1; }));
  std::shared_ptr<http::Responder> keep;
  lt.run_on_loop([&] {
    keep = held.at(0);
    held.clear();
    server->close();
    EXPECT_FALSE(keep->alive());
    keep->send(http::Response::json(200, "{}"));
    EXPECT_EQ(server->open_connections(), 0u);
  });
  std::string raw = read_until_close(fd, 2000);
  EXPECT_TRUE(raw.empty()) << raw;
  ::close(fd);
  EXPECT_NE(::access(path.c_str(), F_OK), 0);  // the socket file is removed
  lt.run_on_loop([&] {
    server.reset();  // the responder outlives the server
    keep->send(http::Response::json(200, "{}"));
    keep.reset();
  });
}

TEST_F(Fixture, StaleSocketIsReplacedButNotOtherFiles) {
  // A socket file left behind by a dead process.
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  ::unlink(path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::close(fd);
  start();
  expect_alive();
  // A second server on the same live socket is refused.
  LoopThread other;
  http::Server s2(other.loop(), opt, [](const http::Request&, auto) {});
  EXPECT_THROW(s2.start(), std::runtime_error);
  expect_alive();
}

TEST(HttpServerStart, RefusesRegularFileAndBadTcp) {
  LoopThread lt;
  std::string p = temp_socket_path("file");
  { std::ofstream(p) << "not a socket"; }
  http::ServerOptions o;
  o.unix_path = p;
  http::Server s(lt.loop(), o, [](const http::Request&, auto) {});
  EXPECT_THROW(s.start(), std::runtime_error);
  ::unlink(p.c_str());
  o.tcp = "127.0.0.1:0";  // no token
  http::Server s2(lt.loop(), o, [](const http::Request&, auto) {});
  EXPECT_THROW(s2.start(), std::runtime_error);
  o.token = "t";
  o.tcp = "nonsense";
  http::Server s3(lt.loop(), o, [](const http::Request&, auto) {});
  EXPECT_THROW(s3.start(), std::runtime_error);
  s.close();
  s2.close();
  s3.close();
  lt.stop();
  ::unlink(p.c_str());
}

TEST(HttpResponse, ErrorBodyShape) {
  auto r = http::Response::error(404, "job 9: not found");
  EXPECT_EQ(r.status, 404);
  auto j = json::parse(r.body);
  EXPECT_EQ(j["error"]["code"], 404);
  EXPECT_EQ(j["error"]["message"], "job 9: not found");
}

TEST_F(Fixture, IdleConnectionsAreClosedButLongPollsAreNot) {
  opt.idle_timeout_ms = 200;
  start();
  int fd = connect_unix(path);
  auto t0 = std::chrono::steady_clock::now();
  std::string raw = read_until_close(fd, 3000);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::close(fd);
  EXPECT_TRUE(raw.empty()) << raw;
  EXPECT_LT(s, 2.0);
  // Half a request: 408.
  fd = connect_unix(path);
  send_all(fd, "GET /x HTTP/1.1\r\nHost: x\r\n");
  raw = read_until_close(fd, 3000);
  ::close(fd);
  EXPECT_EQ(status_of(raw), 408) << raw;
  // A long poll outlasting the idle timeout still gets its answer.
  auto r = unix_client().request("GET", "/slow?ms=600");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"slow":true})");
}

// A keep-alive client sends its requests on one connection; when the server has closed it as idle,
// the next request goes out once more on a new one.
TEST_F(Fixture, KeptAliveClientReusesItsConnectionAndReconnects) {
  opt.idle_timeout_ms = 200;
  start();
  cli::HttpClient c(cli::Endpoint{path, "", ""}, /*keep_alive=*/true);
  for (int i = 0; i < 3; i++) EXPECT_EQ(c.request("GET", "/ping").status, 200);
  EXPECT_EQ(open_now(), 1u);
  for (int i = 0; i < 40 && open_now() != 0; i++) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(open_now(), 0u);
  auto r = c.request("POST", "/v1/proofs", R"({"circuit":"x"})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["body"], R"({"circuit":"x"})");
  EXPECT_EQ(handled.load(), 4);
  EXPECT_EQ(open_now(), 1u);
}

// Connections beyond max_connections get 503 and are closed at once, so that they hold no
// descriptor; the refusals are counted and logged once per burst; a connection after the held ones
// are gone is served.
TEST_F(Fixture, ConnectionsOverTheLimitAreRefusedAtOnce) {
  opt.max_connections = 3;
  std::vector<std::string> warnings;  // loop thread only
  opt.warn = [&](const std::string& m) { warnings.push_back(m); };
  start();
  std::vector<int> held;
  for (int i = 0; i < 3; i++) {
    held.push_back(connect_unix(path));
    ASSERT_GE(held.back(), 0);
  }
  ASSERT_TRUE(eventually([&] { return open_now() == 3; }));
  for (int i = 0; i < 5; i++) {
    int fd = connect_unix(path);
    ASSERT_GE(fd, 0);
    std::string raw = read_until_close(fd, 5000);
    ::close(fd);
    EXPECT_EQ(status_of(raw), 503) << raw;
    EXPECT_NE(raw.find("limits.max_connections"), std::string::npos) << raw;
  }
  uint64_t refused = 0;
  std::vector<std::string> said;
  lt.run_on_loop([&] {
    refused = server->refused_connections();
    said = warnings;
  });
  EXPECT_EQ(refused, 5u);
  ASSERT_EQ(said.size(), 1u);  // once for the burst
  EXPECT_NE(said[0].find("connection limit reached"), std::string::npos) << said[0];
  EXPECT_EQ(open_now(), 3u);
  ::close(held.back());
  held.pop_back();
  ASSERT_TRUE(eventually([&] { return open_now() == 2; }));
  expect_alive();
  lt.run_on_loop([&] { said = warnings; });
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[1].find("5 were refused"), std::string::npos) << said[1];
  for (int fd : held) ::close(fd);
}

// TCP connections that have not presented the token do not take the places of socket clients:
// they have a limit of their own, past which the one idle longest is closed for the new one, and
// get 408 when no request comes within first_request_ms. One that presents the token is served.
TEST_F(Fixture, UnauthenticatedTcpConnectionsHaveALimitOfTheirOwn) {
  opt.max_connections = 2;
  opt.max_unauthenticated = 3;
  // Long enough that a loaded machine connects the client with the token before the idle ones'
  // deadline: otherwise the first idle one gets its 408 instead of being closed for that client.
  opt.first_request_ms = 1500;
  opt.token = "s3cret-token";
  start();
  std::vector<int> idle;
  for (int i = 0; i < 3; i++) {
    idle.push_back(connect_tcp4(server->tcp_port()));
    ASSERT_TRUE(eventually([&] { return open_now() == size_t(i) + 1; }));
  }
  // A fourth: the first one is closed for it, without an answer.
  idle.push_back(connect_tcp4(server->tcp_port()));
  EXPECT_EQ(read_until_close(idle[0], 2000), "");
  ::close(idle[0]);
  // A client with the token gets through the idle ones, and is served.
  EXPECT_EQ(tcp_client("s3cret-token").request("GET", "/ping").status, 200);
  // The socket clients' two places are free.
  std::vector<int> socket_clients = {connect_unix(path), connect_unix(path)};
  for (int fd : socket_clients) {
    const std::string get = "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_EQ(::write(fd, get.data(), get.size()), ssize_t(get.size()));
    const std::string answer = read_until(fd, "\r\n\r\n");
    EXPECT_EQ(status_of(answer), 200) << answer;
  }
  // The idle TCP ones still open: 408 at the first-request deadline, or closed for the client
  // with the token.
  int timed_out = 0;
  for (size_t i = 1; i < idle.size(); i++) {
    const std::string raw = read_until_close(idle[i], 3000);
    ::close(idle[i]);
    if (raw.empty()) continue;
    timed_out++;
    EXPECT_EQ(status_of(raw), 408) << raw;
    EXPECT_NE(raw.find("no request within 1500 ms"), std::string::npos) << raw;
  }
  EXPECT_EQ(timed_out, 2);
  for (int fd : socket_clients) ::close(fd);
}

// TCP connections sending their headers a byte at a time never look idle: at the limit of those
// without the token the oldest of them makes room, so that they cannot keep out a client with the
// token, which sends its headers at once.
TEST_F(Fixture, TricklingHeadersCannotKeepAClientWithTheTokenOut) {
  opt.max_connections = 2;
  opt.max_unauthenticated = 3;
  start();
  std::vector<int> trickling;
  for (int i = 0; i < 3; i++) {
    trickling.push_back(connect_tcp4(server->tcp_port()));
    send_all(trickling.back(), "GET /ping HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    ASSERT_TRUE(eventually([&] { return open_now() == size_t(i) + 1; }));
  }
  for (int fd : trickling) send_all(fd, "a");
  // Time for the server to read them: a connection whose bytes it has not read yet looks idle.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(tcp_client("s3cret-token").request("GET", "/ping").status, 200);
  // The oldest was closed for it, without an answer; the others are still open.
  EXPECT_EQ(read_until_close(trickling[0], 2000), "");
  EXPECT_EQ(open_now(), 2u);
  for (int fd : trickling) ::close(fd);
}

// At max_connections, a client whose class (a socket peer's uid, TCP clients with the token) holds
// fewer connections than another gets in, the other's longest waiting one (a long poll) closed for
// it: one client holding every place with long polls cannot keep the others out. A client whose
// class holds the most is refused as before.
TEST_F(Fixture, OneClientHoldingEveryConnectionCannotKeepAnotherOut) {
  opt.max_connections = 2;
  start();
  std::vector<int> polls;
  for (int i = 0; i < 2; i++) {
    polls.push_back(connect_unix(path));
    send_all(polls.back(), "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_TRUE(eventually([&] { return handled.load() == i + 1; }));
  }
  // The socket's uid holds both places; the TCP clients hold none.
  EXPECT_EQ(tcp_client("s3cret-token").request("GET", "/ping").status, 200);
  EXPECT_EQ(read_until_close(polls[0], 2000), "");  // the first long poll, closed for it
  bool alive = false;
  lt.run_on_loop([&] { alive = held.at(1)->alive(); });
  EXPECT_TRUE(alive);
  // The uid holding the most is refused at the limit, even against a class holding one place.
  ASSERT_TRUE(eventually([&] { return open_now() == 1; }));  // the TCP client has gone
  std::vector<int> tcp_polls;
  tcp_polls.push_back(connect_tcp4(server->tcp_port()));
  send_all(tcp_polls.back(), "GET /hold HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\n\r\n");
  ASSERT_TRUE(eventually([&] { return handled.load() == 4; }));
  int more = connect_unix(path);
  const std::string refused = read_until_close(more, 2000);
  EXPECT_EQ(status_of(refused), 503) << refused;
  EXPECT_NE(refused.find("limits.max_connections = 2"), std::string::npos) << refused;
  lt.run_on_loop([&] { alive = held.at(1)->alive() && held.at(2)->alive(); });
  EXPECT_TRUE(alive);
  ::close(more);
  for (int fd : polls) ::close(fd);
  for (int fd : tcp_polls) ::close(fd);
}

// A body trickling in never looks idle, but must arrive at body_min_rate on average after the
// header_timeout_ms grace: 408 and close.
TEST_F(Fixture, BodiesTricklingInGet408) {
  opt.idle_timeout_ms = 60000;
  opt.header_timeout_ms = 300;
  opt.body_min_rate = 1000;  // bytes a second
  start();
  int fd = connect_unix(path);
  const std::string head = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n";
  ASSERT_EQ(::write(fd, head.data(), head.size()), ssize_t(head.size()));
  const auto t0 = std::chrono::steady_clock::now();
  std::string raw;
  for (int i = 0; i < 100 && raw.empty(); i++) {
    if (::write(fd, "x", 1) != 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    raw = read_until_close(fd, 1);
  }
  if (raw.empty()) raw = read_until_close(fd, 3000);
  ::close(fd);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(status_of(raw), 408) << raw;
  EXPECT_NE(raw.find("request body arriving slower than 1000 bytes a second"), std::string::npos) << raw;
  EXPECT_LT(ms, 2500);
  expect_alive();
}

// A slow-loris client that sends a header byte every 100 ms never looks idle, but its headers
// must be complete by header_timeout_ms: 408 and close.
TEST_F(Fixture, HeadersTricklingInGet408AtTheHeaderDeadline) {
  opt.idle_timeout_ms = 60000;
  opt.header_timeout_ms = 300;
  start();
  int fd = connect_unix(path);
  ASSERT_GE(fd, 0);
  const std::string head = "GET /x HTTP/1.1\r\nX-Slow: " + std::string(200, 'a');
  std::string raw;
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < head.size() && raw.empty(); i++) {
    send_all(fd, head.substr(i, 1));
    raw = read_until_close(fd, 100);
  }
  if (raw.find("\r\n\r\n") == std::string::npos) raw += read_until_close(fd, 3000);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::close(fd);
  EXPECT_EQ(status_of(raw), 408) << raw;
  EXPECT_NE(raw.find("limits.header_timeout_ms"), std::string::npos) << raw;
  EXPECT_LT(s, 15.0);
  // A request whose headers arrive in time is served however long its answer takes.
  auto r = unix_client().request("GET", "/slow?ms=600");
  EXPECT_EQ(r.status, 200);
}

// A TCP client without the token gets its 401 at the headers, without the server waiting for (or
// reading) the body it announced, and the connection is closed right after.
TEST_F(Fixture, TcpClientWithoutTheTokenIsClosedAfterThe401) {
  opt.idle_timeout_ms = 60000;
  start();
  int fd = connect_tcp4(server->tcp_port());
  ASSERT_GE(fd, 0);
  send_all(fd, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 4000\r\n\r\n"
               "GET /y HTTP/1.1\r\nHost: x\r\n\r\n");
  auto t0 = std::chrono::steady_clock::now();
  std::string raw = read_until_close(fd, 10000);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::close(fd);
  EXPECT_EQ(status_of(raw), 401) << raw;
  EXPECT_NE(raw.find("Connection: close"), std::string::npos) << raw;
  EXPECT_EQ(raw.find("HTTP/1.1", 1), std::string::npos) << "more than one answer: " << raw;
  EXPECT_LT(s, 5.0);  // closed by the server, not by the read's own timeout
  EXPECT_EQ(handled.load(), 0);
}

// A declared Content-Length over the limit is answered 413 from the headers alone: the client
// never sends a byte of the body.
TEST_F(Fixture, ContentLengthOverTheLimitGets413BeforeTheBody) {
  start();
  int fd = connect_unix(path);
  send_all(fd, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824000\r\n\r\n");
  std::string raw = read_until_close(fd, 10000);
  ::close(fd);
  EXPECT_EQ(status_of(raw), 413) << raw;
  EXPECT_EQ(handled.load(), 0);
  expect_alive();
}

// A server answers 505 to any HTTP version but 1.0 and 1.1.
TEST_F(Fixture, OtherHttpVersionsGet505) {
  start();
  for (const char* req : {"GET /x HTTP/9.9\r\nHost: x\r\n\r\n", "GET /x HTTP/2.0\r\n\r\n"}) {
    int fd = connect_unix(path);
    send_all(fd, req);
    std::string raw = read_until_close(fd);
    ::close(fd);
    EXPECT_EQ(status_of(raw), 505) << raw;
  }
  int fd = connect_unix(path);
  send_all(fd, "GET /x HTTP/1.0\r\n\r\n");
  std::string raw = read_until_close(fd);
  ::close(fd);
  EXPECT_EQ(status_of(raw), 200) << raw;
  EXPECT_EQ(handled.load(), 1);
}

// The request parser alone (what the server feeds each connection's reads into): requests split
// over reads at every byte are the same requests, and limits and the bearer token apply.
TEST(RequestParser, SameRequestsWhateverTheReads) {
  const std::string bytes =
      "POST /v1/proofs?wait=1&a=%20b+c HTTP/1.1\r\nContent-Length: 4\r\nX-A: 1\r\nx-a: 2\r\n\r\nbody"
      "GET /v1/status HTTP/1.1\r\nAuthorization: Bearer tok\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\n\r\n";
  for (bool tcp : {false, true})
    for (size_t step : {bytes.size(), size_t(1), size_t(7)}) {
      std::vector<cuzk::http::RequestParser::Complete> got;
      cuzk::http::RequestParser p({1024, 1024, "tok"}, tcp, [&](cuzk::http::RequestParser::Complete& c) {
        got.push_back(c);
        return c.keep_alive;
      });
      for (size_t i = 0; i < bytes.size() && p.state() == cuzk::http::RequestParser::State::Ok; i += step)
        p.feed(bytes.data() + i, std::min(step, bytes.size() - i));
      EXPECT_EQ(p.state(), cuzk::http::RequestParser::State::Stopped);
      if (tcp) {
        // Without the token: complete at its headers, its body never read, and the last request of
        // the connection.
        ASSERT_EQ(got.size(), 1u) << step;
        EXPECT_FALSE(got[0].authorized);
        EXPECT_FALSE(got[0].keep_alive);
        EXPECT_EQ(got[0].request.path, "/v1/proofs");
        EXPECT_EQ(got[0].request.body, "");
        continue;
      }
      ASSERT_EQ(got.size(), 2u) << step;  // nothing is parsed after "Connection: close"
      EXPECT_EQ(got[0].request.path, "/v1/proofs");
      EXPECT_EQ(got[0].request.query.at("a"), " b c");
      EXPECT_EQ(got[0].request.headers.at("x-a"), "1, 2");
      EXPECT_TRUE(got[0].authorized);
      EXPECT_EQ(got[0].request.body, "body");
      EXPECT_TRUE(got[1].authorized);
      EXPECT_FALSE(got[1].keep_alive);
    }
  cuzk::http::RequestParser small({3, 1024, ""}, false, [](cuzk::http::RequestParser::Complete&) { return true; });
  const std::string big = "POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody";
  small.feed(big.data(), big.size());
  EXPECT_EQ(small.state(), cuzk::http::RequestParser::State::Failed);
  EXPECT_EQ(small.error_status(), 413);
}

// Only HTTP/1.0 and HTTP/1.1 are spoken; a header name must be a token (http-parser lets spaces in).
TEST(RequestParser, OnlyHttp10And11AndTokenHeaderNames) {
  auto outcome = [](const std::string& bytes) {
    int requests = 0;
    cuzk::http::RequestParser p({1024, 1024, ""}, false, [&](cuzk::http::RequestParser::Complete&) {
      requests++;
      return true;
    });
    p.feed(bytes.data(), bytes.size());
    return p.state() == cuzk::http::RequestParser::State::Failed ? p.error_status() : requests ? 200 : 0;
  };
  EXPECT_EQ(outcome("GET / HTTP/1.1\r\n\r\n"), 200);
  EXPECT_EQ(outcome("GET / HTTP/1.0\r\n\r\n"), 200);
  EXPECT_EQ(outcome("GET / HTTP/9.9\r\n\r\n"), 505);
  EXPECT_EQ(outcome("GET / HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(outcome("GET / HTTP/1.2\r\n\r\n"), 505);
  EXPECT_EQ(outcome("GET / HTTP/0.9\r\n\r\n"), 505);
  const int no_version = outcome("GET /\r\n\r\n");
  EXPECT_TRUE(no_version == 400 || no_version == 505) << no_version;
  EXPECT_EQ(outcome("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n"), 400);
  EXPECT_EQ(outcome("GET / HTTP/1.1\r\nX-Ok: a b\r\nBad\tName: x\r\n\r\n"), 400);
}

// Framing is strict (RFC 9112): lines end in CRLF, no obs-fold, chunk data followed by exactly
// CRLF; each a 400 naming the rule, whether the bytes come in one read or one at a time. The
// requests before the bad byte are parsed; well-framed chunked and pipelined bodies still are.
TEST(RequestParser, FramingIsStrict) {
  struct Outcome {
    int status = 0;
    int requests = 0;
    std::string message;
  };
  auto outcome = [](const std::string& bytes, size_t step) {
    Outcome o;
    cuzk::http::RequestParser p({1024, 1024, ""}, false, [&](cuzk::http::RequestParser::Complete&) {
      o.requests++;
      return true;
    });
    for (size_t i = 0; i < bytes.size() && p.state() == cuzk::http::RequestParser::State::Ok; i += step)
      p.feed(bytes.data() + i, std::min(step, bytes.size() - i));
    if (p.state() == cuzk::http::RequestParser::State::Failed) o.status = p.error_status(), o.message = p.error_message();
    return o;
  };
  const std::string ok = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string chunked = "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {ok + "GET / HTTP/1.1\r\nX-A: 1\r\n  folded\r\n\r\n", "obs-fold"},
      {ok + "GET / HTTP/1.1\r\nX-A: 1\r\n\tfolded\r\n\r\n", "obs-fold"},
      {ok + "GET / HTTP/1.1\nHost: x\r\n\r\n", "bare LF"},
      {ok + "GET / HTTP/1.1\r\nHost: x\n\r\n", "bare LF"},
      {ok + "GET / HTTP/1.1\r\nHost: x\r\n\n", "bare LF"},
      {ok + "GET / HTTP/1.1\r\nHost: x\ry: z\r\n\r\n", "CR is not followed by LF"},
      {ok + chunked + "5\r\nhelloXX\r\n0\r\n\r\n", "chunk data is longer than its chunk size"},
      {ok + chunked + "5\r\nhello\rX0\r\n\r\n", "chunk data is not followed by CRLF"},
      {ok + chunked + "5\nhello\r\n0\r\n\r\n", "chunk-size line ends in a bare LF"},
      {ok + chunked + "5\r\nhello\r\n0\r\nX-T: 1\r\n folded\r\n\r\n", "obs-fold"},
  };
  for (size_t step : {size_t(4096), size_t(1), size_t(3)}) {
    for (const auto& [bytes, why] : bad) {
      const Outcome o = outcome(bytes, step);
      EXPECT_EQ(o.status, 400) << bytes;
      EXPECT_NE(o.message.find(why), std::string::npos) << o.message << " for " << bytes;
      EXPECT_EQ(o.requests, 1) << bytes;  // the well-framed request before it
    }
    const std::string good = "\r\n" + ok + chunked + "5;ext=1\r\nhello\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n" +
                             "POST /y HTTP/1.1\r\nContent-Length: 5\r\n\r\n\r\n\n\r " + ok;
    const Outcome o = outcome(good, step);
    EXPECT_EQ(o.status, 0) << o.message;
    EXPECT_EQ(o.requests, 4);
  }
}

// "Connection: Upgrade" with a body: http-parser flags the upgrade as soon as the headers are read.
// The server took that flag, with the body still to come in a later read, for an upgrade and closed
// the connection without an answer; in one read the same request was answered.
TEST(RequestParser, UpgradeRequestWithABodyInTwoReads) {
  const std::string bytes =
      "POST /v1/proofs HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 4\r\n\r\nbodyrest";
  for (size_t split : {bytes.size(), bytes.size() - 6}) {
    std::vector<std::string> bodies;
    cuzk::http::RequestParser p({1024, 1024, ""}, false, [&](cuzk::http::RequestParser::Complete& c) {
      bodies.push_back(c.request.body);
      EXPECT_FALSE(c.keep_alive);  // nothing after an upgrade is parsed
      return c.keep_alive;
    });
    p.feed(bytes.data(), split);
    if (p.state() == cuzk::http::RequestParser::State::Ok) p.feed(bytes.data() + split, bytes.size() - split);
    ASSERT_EQ(bodies.size(), 1u) << split;
    EXPECT_EQ(bodies[0], "body");
    EXPECT_EQ(p.state(), cuzk::http::RequestParser::State::Stopped);
  }
}

namespace {

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

// The file of a request's body is removed on the loop just after its answer is written.
size_t files_left(const std::string& dir) {
  for (int i = 0; i < 100 && files_in(dir); i++) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return files_in(dir);
}

struct SpoolFixture : Fixture {
  std::string dir = "/tmp/cuzk-test-spool-" + std::to_string(getpid());
  void SetUp() override {
    Fixture::SetUp();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    opt.spool_dir = dir;
    opt.spool_above = 4096;
    opt.memory_budget = 8192;
    opt.max_body = 1 << 20;
  }
  void TearDown() override {
    Fixture::TearDown();
    std::filesystem::remove_all(dir);
  }
  http::BodyPool pool() {
    http::BodyPool p;
    lt.run_on_loop([&] { p = server->bodies(); });
    return p;
  }
  std::string post_head(size_t length) {
    return "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n";
  }
};

}  // namespace

// A body over spool_above reaches the handler as a file with the same bytes, and the file is gone once
// the request is answered; a small one stays in memory.
TEST_F(SpoolFixture, LargeBodiesAreSpooledAndTheFileRemovedAfterTheAnswer) {
  start();
  std::string big(100000, '\0');
  for (size_t i = 0; i < big.size(); i++) big[i] = char('a' + i % 26);
  auto r = unix_client().request("POST", "/echo", big);
  ASSERT_EQ(r.status, 200);
  auto j = json::parse(r.body);
  EXPECT_TRUE(j["spooled"]);
  EXPECT_EQ(j["body"], big);
  r = unix_client().request("POST", "/echo", "small");
  j = json::parse(r.body);
  EXPECT_FALSE(j["spooled"]);
  EXPECT_EQ(j["body"], "small");
  EXPECT_EQ(files_left(dir), 0u);
  EXPECT_EQ(pool().spooled_total, 1u);
  EXPECT_EQ(pool().in_memory, 0u);
}

// Bodies below spool_above stay in memory only while all of them together fit memory_budget; the
// next one goes to a file, and every one arrives whole.
TEST_F(SpoolFixture, BodiesPastTheSharedBudgetGoToFiles) {
  start();
  std::vector<int> fds;
  const std::string part(3000, 'm');
  for (int i = 0; i < 4; i++) {
    fds.push_back(connect_unix(path));
    send_all(fds.back(), post_head(4000) + part);
  }
  for (int i = 0; i < 100 && pool().spooled_total < 2; i++) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  http::BodyPool p = pool();
  EXPECT_LE(p.in_memory, opt.memory_budget);
  EXPECT_LE(p.peak_in_memory, opt.memory_budget);
  EXPECT_EQ(p.spooled_total, 2u);  // 4 bodies of 4000 bytes (reserved as 4096), 8192 in memory
  EXPECT_EQ(files_in(dir), 2u);
  int spooled = 0;
  for (int fd : fds) {
    send_all(fd, std::string(1000, 'm'));
    std::string raw = read_until(fd, "}", 1);
    ::close(fd);
    auto j = json::parse(raw.substr(raw.find("\r\n\r\n") + 4));
    EXPECT_EQ(j["body"], std::string(4000, 'm'));
    spooled += j["spooled"].get<bool>();
  }
  EXPECT_EQ(spooled, 2);
  EXPECT_EQ(files_left(dir), 0u);
  EXPECT_EQ(pool().in_memory, 0u);
}

// A client that leaves in the middle of its body, or passes max_body, leaves no file and no memory
// counted behind.
TEST_F(SpoolFixture, AbandonedAndRefusedBodiesLeaveNothing) {
  start();
  int fd = connect_unix(path);
  send_all(fd, post_head(200000) + std::string(50000, 'z'));
  for (int i = 0; i < 100 && files_in(dir) == 0; i++) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(files_in(dir), 1u);
  ::close(fd);
  EXPECT_EQ(files_left(dir), 0u);
  fd = connect_unix(path);
  send_all(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
  const std::string chunk = "10000\r\n" + std::string(0x10000, 'c') + "\r\n";
  for (int i = 0; i < 20; i++) send_all(fd, chunk);
  std::string raw = read_until_close(fd, 3000);
  ::close(fd);
  EXPECT_EQ(status_of(raw), 413) << raw;
  EXPECT_EQ(files_left(dir), 0u);
  EXPECT_EQ(pool().in_memory, 0u);
  EXPECT_EQ(pool().spooled_total, 2u);
}

// A client that pipelines requests and reads none of the answers: once max_write_queue bytes wait for
// it, the connection reads no further requests, and it is closed after the idle timeout. A client
// that does read them later gets every answer, in order.
TEST_F(Fixture, AClientThatReadsNoAnswersIsNotReadFurtherAndClosed) {
  opt.max_write_queue = 256 * 1024;
  opt.idle_timeout_ms = 600;
  start();
  std::string reqs;
  for (int i = 0; i < 400; i++) reqs += "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
  int fd = connect_unix(path);
  send_all(fd, reqs);  // 400 answers of 64 KiB: 25 MiB if nothing stopped them
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  uint64_t queued = 0;
  lt.run_on_loop([&] { queued = server->queued_write_bytes(); });
  EXPECT_LE(queued, opt.max_write_queue + 70 * 1024);
  EXPECT_GT(queued, 0u);
  EXPECT_LT(handled.load(), 100);  // what the socket buffers and the queue hold, and no more
  size_t open = 1;
  for (int i = 0; i < 300 && open; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    lt.run_on_loop([&] { open = server->open_connections(); });
  }
  EXPECT_EQ(open, 0u);
  ::close(fd);

  handled = 0;
  fd = connect_unix(path);
  send_all(fd, reqs);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Counted as they come (the 25 MiB are not searched again on every read).
  const std::string head = "HTTP/1.1 200";
  std::string tail;
  std::vector<char> buf(1 << 18);
  size_t answers = 0;
  while (answers < 400) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) break;
    ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n <= 0) break;
    tail.append(buf.data(), size_t(n));
    for (size_t at = tail.find(head); at != std::string::npos; at = tail.find(head, at + 1)) answers++;
    tail.erase(0, tail.size() > head.size() ? tail.size() - head.size() + 1 : 0);
  }
  ::close(fd);
  EXPECT_EQ(answers, 400u);
  EXPECT_EQ(handled.load(), 400);
}

// The last answers of a connection that asked to close, never read: the connection is closed
// after the idle timeout instead of waiting for the client for ever.
TEST_F(Fixture, UnreadLastAnswersAreDroppedAfterTheIdleTimeout) {
  opt.idle_timeout_ms = 400;
  start();
  std::string reqs;
  for (int i = 0; i < 12; i++) reqs += "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
  reqs += "GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";  // 832 KiB of answers in all
  int fd = connect_unix(path);
  send_all(fd, reqs);
  size_t open = 1;
  uint64_t queued = 0;
  lt.run_on_loop([&] { queued = server->queued_write_bytes(); });
  for (int i = 0; i < 300 && open; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    lt.run_on_loop([&] { open = server->open_connections(); });
  }
  ::close(fd);
  EXPECT_EQ(open, 0u) << queued << " bytes were queued";
  EXPECT_EQ(handled.load(), 13);
}
