// Test helpers for the HTTP server and client tests: a libuv loop on its own thread and raw sockets.
#pragma once
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include <uv.h>

namespace cuzk::testing {

// Runs a uv loop on a thread; run_on_loop() executes a function there and waits for it.
class LoopThread {
 public:
  LoopThread() {
    uv_loop_init(&loop_);
    uv_async_init(&loop_, &async_, [](uv_async_t* a) { static_cast<LoopThread*>(a->data)->drain(); });
    async_.data = this;
  }
  ~LoopThread() { stop(); }
  uv_loop_t* loop() { return &loop_; }
  void start() {
    th_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
  }
  void run_on_loop(std::function<void()> fn) {
    std::promise<void> done;
    auto fut = done.get_future();
    {
      std::lock_guard<std::mutex> g(mu_);
      q_.push_back([&] {
        fn();
        done.set_value();
      });
    }
    uv_async_send(&async_);
    fut.get();
  }
  // Runs `before_close` on the loop, closes the async handle and joins.
  void stop(std::function<void()> before_close = {}) {
    if (stopped_) return;
    stopped_ = true;
    if (!th_.joinable()) {
      uv_close(reinterpret_cast<uv_handle_t*>(&async_), nullptr);
      uv_run(&loop_, UV_RUN_DEFAULT);
      uv_loop_close(&loop_);
      return;
    }
    run_on_loop([&] {
      if (before_close) before_close();
      // Close every handle still open (timers made by tests, the async).
      uv_walk(&loop_, [](uv_handle_t* h, void*) {
        if (!uv_is_closing(h)) uv_close(h, nullptr);
      }, nullptr);
    });
    th_.join();
    uv_loop_close(&loop_);
  }

 private:
  void drain() {
    std::deque<std::function<void()>> q;
    {
      std::lock_guard<std::mutex> g(mu_);
      q.swap(q_);
    }
    for (auto& f : q) f();
  }
  uv_loop_t loop_;
  uv_async_t async_;
  std::thread th_;
  std::mutex mu_;
  std::deque<std::function<void()>> q_;
  bool stopped_ = false;
};

inline std::string temp_socket_path(const std::string& tag) {
  return "/tmp/cuzk-test-" + tag + "-" + std::to_string(getpid()) + ".sock";
}

inline int connect_unix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline int connect_tcp4(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline void send_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += (size_t)n;
  }
}

// Reads until the peer closes or `timeout_ms` passes.
inline std::string read_until_close(int fd, int timeout_ms = 5000) {
  std::string out;
  char buf[8192];
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int left = (int)std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, left) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, (size_t)n);
  }
  return out;
}

// Reads until `needle` has appeared `count` times (or timeout).
inline std::string read_until(int fd, const std::string& needle, int count = 1, int timeout_ms = 5000) {
  std::string out;
  char buf[8192];
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto occurrences = [&] {
    int c = 0;
    for (size_t p = out.find(needle); p != std::string::npos; p = out.find(needle, p + 1)) c++;
    return c;
  };
  while (occurrences() < count) {
    int left = (int)std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, left) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, (size_t)n);
  }
  return out;
}

template <class F>
bool eventually(F f, int timeout_ms = 3000) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return f();
}

}  // namespace cuzk::testing
