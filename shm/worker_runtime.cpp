// The worker side of the control plane.
#include "shm/worker_runtime.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace cuzk::shm {

WorkerArgs parse_worker_args(int argc, char** argv, const char* prog) {
  WorkerArgs a;
  bool have_config = false;
  auto usage = [&](const std::string& why) {
    std::fprintf(stderr, "%s: %s\nusage: %s --config FILE --index I --worker-id W --epoch E [--fd N]\n", prog,
                 why.c_str(), prog);
    std::exit(64);
  };
  auto num = [&](const char* flag, const char* v) -> uint32_t {
    char* end = nullptr;
    unsigned long x = std::strtoul(v, &end, 10);
    if (!*v || *end || x > 0xffffffffUL) usage(std::string(flag) + " needs a non-negative integer, got '" + v + "'");
    return uint32_t(x);
  };
  for (int i = 1; i < argc; i++) {
    std::string f = argv[i];
    if (i + 1 >= argc) usage(f + " needs a value");
    const char* v = argv[++i];
    if (f == "--config") a.config = v, have_config = true;
    else if (f == "--index") a.index = num("--index", v);
    else if (f == "--worker-id") a.worker_id = num("--worker-id", v);
    else if (f == "--epoch") a.epoch = num("--epoch", v);
    else if (f == "--fd") a.fd = int(num("--fd", v));
    else usage("unknown option " + f);
  }
  if (!have_config) usage("--config is required");
  return a;
}

void die_with_parent() {
  pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent || parent == 1) _exit(70);  // the parent died before prctl took effect
}

void pin_to_cpus(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  std::string list;
  for (int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE) throw std::runtime_error("CPU " + std::to_string(c) + " is out of range");
    CPU_SET(c, &set);
    list += (list.empty() ? "" : ",") + std::to_string(c);
  }
  if (sched_setaffinity(0, sizeof(set), &set) != 0)
    throw std::runtime_error("sched_setaffinity(" + list + "): " + std::strerror(errno));
}

size_t pin_worker(const std::vector<int>& cpus, size_t threads) {
  pin_to_cpus(cpus);
  return threads ? threads : cpus.size();
}

std::string current_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "?";
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) e++;
    out += (out.empty() ? "" : ",") + std::to_string(c) + (e > c ? "-" + std::to_string(e) : "");
    c = e;
  }
  return out;
}

WorkerLink::WorkerLink(const WorkerArgs& a, uint32_t heartbeat_ms) : args_(a), heartbeat_ms_(heartbeat_ms), ch_(a.fd) {}

WorkerLink::~WorkerLink() {
  stop_ = true;
  if (hb_.joinable()) hb_.join();
}

Msg WorkerLink::make(MsgType t) const {
  Msg m;
  m.type = uint16_t(t);
  m.worker = args_.worker_id;
  m.epoch = args_.epoch;
  m.pid = uint32_t(getpid());
  m.t_ns = monotonic_ns();
  return m;
}

void WorkerLink::event(const char* name, uint64_t job, uint32_t partition, uint32_t slot, const std::string& kv) {
  Msg m = make(MsgType::Event);
  m.set_name(name);
  m.job = job;
  m.partition = partition;
  m.slot = slot;
  m.set_text(kv);
  ch_.send(m);
}

void WorkerLink::start_heartbeat() {
  hb_ = std::thread([this] {
    // The supervisor reads a missed heartbeat as a crash, so this thread must never block on work;
    // it only sleeps and sends. A dead channel means the supervisor is gone: exit.
    while (!stop_) {
      if (!ch_.send(make(MsgType::Heartbeat))) _exit(0);
      for (uint32_t t = 0; t < heartbeat_ms_ && !stop_; t += 50)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

}  // namespace cuzk::shm
