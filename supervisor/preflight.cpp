// What start-up would refuse, checked beforehand: by `--check-config`, and by a SIGHUP reload before
// it drains anything, so that a reload which could not start again is refused while the daemon goes
// on with the configuration it has.
#include "supervisor/preflight.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "shm/results.hpp"
#include "supervisor/circuits.hpp"
#include "supervisor/generators.hpp"
#include "supervisor/http/http_server.hpp"
#include "supervisor/rings.hpp"

namespace fs = std::filesystem;

namespace cuzk::sup {

namespace {

// A folder the daemon must be able to write: there and writable, or creatable in the nearest
// folder above it that exists. Creates nothing.
void check_writable_dir(const fs::path& d, const std::string& key) {
  fs::path p = d;
  std::error_code ec;
  while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
  if (fs::exists(p, ec) && !fs::is_directory(p, ec))
    throw config::ConfigError(key, "cannot create " + d.string() + ": " + p.string() + " is not a directory");
  if (::access(p.c_str(), W_OK | X_OK) != 0)
    throw config::ConfigError(key, (p == d ? d.string() + " is not writable" : "cannot create " + d.string() + ": " +
                                                                                   p.string() + " is not writable") +
                                       " by the daemon's user: " + std::strerror(errno));
}

}  // namespace

// Every API connection holds a descriptor: the soft limit is raised towards the hard one (systemd's
// LimitNOFILE=) as far as limits.max_connections needs, and a hard limit too small for it is a
// configuration error, rather than "Too many open files" for some later submission.
void reserve_descriptors(const config::Config& cfg, bool apply) {
  // The supervisor's own: job store, timeline, listeners, and a control socket and a process
  // descriptor (pidfd) per worker, with room to spare.
  const uint64_t own = 64 + 4 * (uint64_t(cfg.synthesis.workers) + cfg.gpu.devices.size());
  // TCP connections that have not presented the token have a limit of their own.
  const uint64_t need = own + cfg.limits.max_connections + http::ServerOptions{}.max_unauthenticated;
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need) return;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
    throw config::ConfigError("limits.max_connections",
                              std::to_string(cfg.limits.max_connections) + " connections and the daemon's own " +
                                  std::to_string(own) + " descriptors need " + std::to_string(need) +
                                  ", but the descriptor limit (RLIMIT_NOFILE) is " + std::to_string(rl.rlim_max) +
                                  "; lower max_connections or raise LimitNOFILE= in the unit");
  if (!apply) return;
  rl.rlim_cur = need;
  if (::setrlimit(RLIMIT_NOFILE, &rl) != 0)
    throw config::ConfigError("limits.max_connections", "cannot raise the descriptor limit to " + std::to_string(need) +
                                                            ": " + std::strerror(errno));
}

void preflight(const config::Config& cfg, bool in_daemon) {
  config::validate_cpus(cfg);
  const std::vector<ZKeyHeader> keys = read_keys(cfg);
  if (in_daemon) {
    open_generators(cfg, keys);
  } else {
    // Artefacts only: a source folder would be compiled into the state folder, as whoever runs this.
    config::Config artefacts = cfg;
    for (auto& c : artefacts.circuits) {
      std::error_code ec;
      if (!c.witness_generator.empty() && !fs::exists(fs::path(c.witness_generator) / "manifest.json", ec))
        c.witness_generator.clear();
    }
    open_generators(artefacts, keys);
  }
  const RingSize rs = ring_size(cfg, keys);
  struct statvfs vf {};
  if (::statvfs("/dev/shm", &vf) == 0 && uint64_t(vf.f_blocks) * vf.f_frsize < rs.per_ring)
    throw config::ConfigError("gpu.slots", "a slot ring of " + std::to_string(rs.per_ring) +
                                               " bytes is larger than all of /dev/shm (" +
                                               std::to_string(uint64_t(vf.f_blocks) * vf.f_frsize) +
                                               " bytes); lower gpu.slots or enlarge /dev/shm");
  // What only the daemon's own process and user can tell.
  if (!in_daemon) return;
  reserve_descriptors(cfg, false);
  const fs::path state = cfg.daemon.state_dir;
  for (const fs::path& d : {state, shm::results_root(state), state / "uploads", state / "spool"})
    check_writable_dir(d, "daemon.state_dir");
  check_writable_dir(fs::path(cfg.daemon.socket).parent_path(), "daemon.socket");
  std::error_code ec;
  if (fs::is_directory(cfg.daemon.socket, ec))
    throw config::ConfigError("daemon.socket", cfg.daemon.socket + " is a directory");
}

}  // namespace cuzk::sup
