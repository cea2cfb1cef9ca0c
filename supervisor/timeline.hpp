// The merged timeline: events from every process (stamped with CLOCK_MONOTONIC, one clock for all
// processes on the host) are held briefly and written in time order as
//   TIMELINE,<ms since daemon start>,<EVENT>,<job>,<key=value,...>
#pragma once
#include <cstdint>
#include <cstdio>
#include <queue>
#include <string>
#include <vector>

namespace cuzk::sup {

class Timeline {
 public:
  // Writes nowhere until open(), and takes no event until then; t0_ns is the daemon's start on
  // CLOCK_MONOTONIC.
  explicit Timeline(uint64_t t0_ns) : t0_(t0_ns) {}
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;
  // Events go to path from now on ("": to no file) and, with echo_stderr, to standard error.
  void open(const std::string& path, bool echo_stderr);
  // An event of this process, stamped now.
  void event(const std::string& name, uint64_t job, const std::string& kv);
  // An event stamped t_ns (a worker's). job 0 is written as "-".
  void add(uint64_t t_ns, const std::string& event, uint64_t job, const std::string& kv);
  // Writes every event older than now - lag (events from other processes can arrive a little late,
  // so the newest ones wait); lag 0 writes all.
  void flush(uint64_t now_ns, uint64_t lag_ns);
  static std::string format(uint64_t t0_ns, uint64_t t_ns, const std::string& event, uint64_t job,
                            const std::string& kv);

 private:
  struct Ev {
    uint64_t t, seq;
    std::string line;
    bool operator>(const Ev& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> q_;
  FILE* f_ = nullptr;
  uint64_t t0_, seq_ = 0, last_written_ = 0;
  bool echo_ = false;
};

}  // namespace cuzk::sup
