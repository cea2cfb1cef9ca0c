// The supervisor: owns the config, the slot rings, the job store and the workers. One libuv loop
// runs everything; it never initialises CUDA and never does heavy compute. The class is declared
// here and defined across the files its sections name.
#pragma once
#include <uv.h>

#include <climits>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/exit_codes.hpp"
#include "config/config.hpp"
#include "groth16/formats.hpp"
#include "shm/messages.hpp"
#include "shm/slot_ring.hpp"
#include "supervisor/circuits.hpp"
#include "supervisor/http/http_server.hpp"
#include "supervisor/instance_lock.hpp"
#include "supervisor/intake/job_access.hpp"
#include "supervisor/intake/submission.hpp"
#include "supervisor/partitions.hpp"
#include "supervisor/queue.hpp"
#include "supervisor/rings.hpp"
#include "supervisor/scheduler.hpp"
#include "supervisor/state_folder.hpp"
#include "supervisor/store/job_store.hpp"
#include "supervisor/supervisor_types.hpp"
#include "supervisor/timeline.hpp"
#include "supervisor/workers.hpp"
#include "witness/manifest.hpp"

namespace cuzk::sup {

struct ReloadCheck;

class Supervisor {
 public:
  Supervisor(config::Config cfg, std::string config_path);
  ~Supervisor();
  // Runs the loop until SIGTERM/SIGINT (or SIGHUP, see reload_requested) has drained the daemon.
  // Returns the process exit status.
  int run();
  // Whether the loop ended for a SIGHUP: the configuration file was valid then, the daemon drained
  // as for SIGTERM (unfinished partitions stay queued in the store), and the caller starts the
  // program again in this process (same pid for systemd) so that it runs with the new file.
  bool reload_requested() const { return reload_; }

 private:
  // start-up (startup.cpp)
  void setup_state();
  void open_store();
  void create_workers();
  // worker processes (worker_lifecycle.cpp)
  void spawn(Worker& w);
  void on_readable(Worker& w);
  void on_message(Worker& w, const shm::Msg& m);
  void on_exit(Worker& w, int64_t status, int signal);
  // Sends sig to w's process while it runs, through its pidfd: never to another process that reused
  // the pid after w's exit.
  void signal_worker(Worker& w, int sig);
  void restart_later(Worker& w);
  void check_heartbeats();
  // api (api.cpp)
  void handle(const http::Request& req, std::shared_ptr<http::Responder> r);
  nlohmann::json status_json();
  std::string metrics_text();
  // draining and stopping (shutdown.cpp)
  void begin_shutdown(const char* why);
  void maybe_finish_shutdown();
  // the loop's tick and lookups (supervisor.cpp)
  void tick();
  void check_disk_space();  // the tick: writes held changes once the state folder takes them
  void remove_job_files(const ActiveJob& j);  // its results and uploads, on the thread pool
  Device* device(int id) { return find_device(devices_, id); }

  InstanceLock lock_;  // first member: released last, after the rings are removed
  config::Config cfg_;
  std::string config_path_;
  StateFolder state_{cfg_.daemon.state_dir};  // whether daemon.state_dir takes writes

  std::string worker_dir_;
  uv_loop_t* loop_ = uv_default_loop();
  uint64_t t0_ns_ = shm::monotonic_ns();
  Timeline timeline_{t0_ns_};           // opened at start when timeline.enabled
  std::string node_id_;                 // store.node_id, or <hostname>/<instance>
  std::unique_ptr<QueueService> queue_;        // LocalQueue (SQLite) or SharedQueue (PostgreSQL)
  std::unique_ptr<http::Server> server_;
  Workers workers_;
  std::vector<Device> devices_;
  Partitions parts_{devices_, state_, timeline_};  // the jobs here, their queued partitions, the slots their work is in
  Phase phase_;
  Circuits circuits_{cfg_, loop_, timeline_, parts_, phase_, std::bind_front(&Supervisor::maybe_finish_shutdown, this)};
  Scheduler scheduler_{
      cfg_, circuits_, devices_, workers_, parts_, state_, phase_, timeline_, [this] { maybe_finish_shutdown(); }};
  SlotRings rings_{cfg_};
  RingSize ring_;  // the slot rings' size, from the configured circuits
  uv_signal_t sigterm_{}, sigint_{}, sighup_{};
  bool reload_ = false;
  bool reload_checking_ = false;  // a SIGHUP's preflight is running on the thread pool
  void on_sighup();
  void after_reload_check(const ReloadCheck& w);
  uv_timer_t tick_timer_{};
  uint64_t last_tick_ns_ = 0;  // monotonic: when tick() last ran
  uint64_t drain_deadline_ns_ = 0;
  int exit_status_ = exit_status::kOk;
  size_t removals_ = 0;  // remove_job_files on the thread pool
  bool watchdog_ = false;
  uint64_t watchdog_usec_ = 0, last_watchdog_ns_ = 0, last_status_ns_ = 0;
};

}  // namespace cuzk::sup
