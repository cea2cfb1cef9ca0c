// The worker side of the control plane: arguments, parent death, CPU pinning, the link to the
// supervisor and its heartbeat thread.
#include "worker/worker_runtime.hpp"

#include <fcntl.h>
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

#include <CLI/CLI.hpp>

#include "common/exit_codes.hpp"

namespace cuzk::worker {

using shm::Msg;
using shm::MsgType;

WorkerArgs parse_worker_args(int argc, char** argv, const char* prog) {
  WorkerArgs a;
  CLI::App app{std::string(prog) + ": a worker process of the cuzk daemon, started by cuzk-supervisor"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--config", a.config, "the daemon's TOML configuration file")->required();
  app.add_option("--index", a.index, "position in the config: synthesis worker i, or device i of gpu.devices");
  app.add_option("--worker-id", a.worker_id, "the supervisor's id for this worker");
  app.add_option("--epoch", a.epoch, "this spawn's epoch; messages of another epoch are ignored");
  app.add_option("--fd", a.fd, "the control socket, inherited from the supervisor")->check(CLI::NonNegativeNumber);
  app.add_option("--ring", a.ring, "the slot rings' shared-memory names, less .dev<device>")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) std::exit(app.exit(e));  // --help: the usage, on stdout
    std::fprintf(stderr, "%s: %s (%s --help lists the options)\n", prog, e.what(), prog);
    std::exit(exit_status::kUsage);
  }
  return a;
}

void die_with_parent() {
  pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent || parent == 1) _exit(exit_status::kSoftware);  // the parent died before prctl took effect
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

bool WorkerLink::send(Msg m) {
  m.worker = args_.worker_id;
  m.epoch = args_.epoch;
  m.pid = uint32_t(getpid());
  m.t_ns = shm::monotonic_ns();
  return ch_.send(m);
}

void WorkerLink::event(const char* name, uint64_t job, const std::string& kv) { send(Msg::event(job, name, kv)); }

void WorkerLink::start_heartbeat() {
  hb_ = std::thread([this] {
    // The supervisor reads a missed heartbeat as a crash, so this thread must never block on work;
    // it only sleeps and sends. A dead channel means the supervisor is gone: exit.
    while (!stop_) {
      if (!send(Msg(MsgType::Heartbeat))) _exit(exit_status::kOk);
      for (uint32_t t = 0; t < heartbeat_ms_ && !stop_; t += 50)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

void test_crash_point(const char* point) {
  const char* spec = std::getenv("CUZK_TEST_CRASH_AT");
  if (!spec) return;
  const char* colon = std::strchr(spec, ':');
  if (!colon || std::strncmp(spec, point, size_t(colon - spec)) != 0 || point[colon - spec] != '\0') return;
  const int fd = ::open(colon + 1, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;  // another process crashed here already
  ::close(fd);
  ::raise(SIGKILL);
}

}  // namespace cuzk::worker
