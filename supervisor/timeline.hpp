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
  // path "" disables the file; t0_ns is the daemon's start on CLOCK_MONOTONIC.
  Timeline(const std::string& path, uint64_t t0_ns, bool echo_stderr);
  ~Timeline();
  // job 0 is written as "-".
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
  bool echo_;
};

}  // namespace cuzk::sup
