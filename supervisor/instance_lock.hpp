// One daemon per state: before a supervisor touches the slot rings, the job store or the spool it
// holds an exclusive lock on each of the three things two daemons must never share, so that a
// second start with any of them exits 78 having changed nothing.
//   <state_dir>/lock                      the job store, results, uploads, spool and rings' names
//   <run folder>/instance.<instance>.lock the instance name (the node's name in a shared store)
//   <socket>.lock                         the API socket (a second daemon would replace it)
// The locks are flock()s on files that hold the holder's pid: the kernel drops them when the
// process ends, however it ends, so a kill -9 leaves nothing that blocks the next start.
// No other user can make or hold a lock file first: the instance's is in a folder only the
// daemon's user may write (run_dir), and a lock file another user owns is refused, never trusted.
#pragma once
#include <string>
#include <vector>

#include "config/config.hpp"

namespace cuzk::sup {

class InstanceLock {
 public:
  InstanceLock() = default;
  ~InstanceLock();
  InstanceLock(InstanceLock&& o) noexcept : held_(std::move(o.held_)) { o.held_.clear(); }
  InstanceLock& operator=(InstanceLock&& o) noexcept;
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;

  // The lock files of cfg, each with the config key it stands for.
  struct Target {
    std::string key, path;
  };
  static std::vector<Target> targets(const config::Config& cfg);
  // The folder of the instance lock, which only the daemon's user may write: $RUNTIME_DIRECTORY
  // (systemd's RuntimeDirectory=), else /run/cuzk-supervisor for root, else
  // $XDG_RUNTIME_DIR/cuzk-supervisor, else daemon.state_dir (then the instance name is locked for
  // the state folder only).
  static std::string run_dir(const config::Config& cfg);
  // Takes every lock of cfg (creating state_dir and the socket's folder if need be). Throws
  // config::ConfigError naming the key whose lock another process holds, and its pid; then none is
  // held.
  static InstanceLock acquire(const config::Config& cfg);
  // Whether cfg's locks could be taken now, given the ones this object holds (a reload to another
  // state_dir, instance or socket): throws like acquire, takes nothing, creates nothing.
  void check_available(const config::Config& cfg) const;
  // Unlinks the lock files and drops the locks (the destructor does the same).
  void release();

 private:
  struct Held {
    std::string path;
    int fd;
  };
  std::vector<Held> held_;
};

}  // namespace cuzk::sup
