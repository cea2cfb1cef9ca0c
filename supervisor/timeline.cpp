#include "supervisor/timeline.hpp"

#include <filesystem>
#include <stdexcept>

#include "shm/messages.hpp"

namespace cuzk::sup {

void Timeline::open(const std::string& path, bool echo_stderr) {
  echo_ = echo_stderr;
  if (path.empty()) return;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  f_ = std::fopen(path.c_str(), "a");
  if (!f_) throw std::runtime_error("timeline " + path + ": cannot open for appending");
}

void Timeline::event(const std::string& name, uint64_t job, const std::string& kv) {
  if (f_ || echo_) add(shm::monotonic_ns(), name, job, kv);
}

Timeline::~Timeline() {
  flush(0, 0);
  if (f_) std::fclose(f_);
}

std::string Timeline::format(uint64_t t0_ns, uint64_t t_ns, const std::string& event, uint64_t job,
                             const std::string& kv) {
  char head[96];
  const double ms = t_ns >= t0_ns ? double(t_ns - t0_ns) / 1e6 : -double(t0_ns - t_ns) / 1e6;
  std::snprintf(head, sizeof head, "TIMELINE,%.3f,", ms);
  // Event names and k=v lists come from the workers' messages: a line break must not start a line
  // of its own, nor a comma in the name shift the fields (Kv already keeps both out of values).
  std::string name = event, rest = kv;
  for (char& c : name)
    if (c == ',' || c == '\n' || c == '\r') c = '_';
  for (char& c : rest)
    if (c == '\n' || c == '\r') c = '_';
  return head + name + "," + (job ? std::to_string(job) : std::string("-")) + (rest.empty() ? "" : "," + rest);
}

void Timeline::add(uint64_t t_ns, const std::string& event, uint64_t job, const std::string& kv) {
  if (!f_ && !echo_) return;  // written nowhere: not even formatted
  // An event stamped before the last written one (a very late message) is written with its own
  // stamp right away rather than dropped; readers sort by the ms column anyway.
  q_.push(Ev{t_ns, seq_++, format(t0_, t_ns, event, job, kv)});
}

void Timeline::flush(uint64_t now_ns, uint64_t lag_ns) {
  while (!q_.empty() && (lag_ns == 0 || q_.top().t + lag_ns <= now_ns)) {
    const Ev& e = q_.top();
    if (f_) std::fprintf(f_, "%s\n", e.line.c_str());
    if (echo_) std::fprintf(stderr, "%s\n", e.line.c_str());
    last_written_ = e.t;
    q_.pop();
  }
  if (f_) std::fflush(f_);
}

}  // namespace cuzk::sup
