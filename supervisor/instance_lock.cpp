// The lock files of instance_lock.hpp. A holder unlinks its files before it drops the locks; a
// starter that locked a file which was unlinked meanwhile (its inode is no longer the path's)
// tries again on the new one, so that two starters can never both hold "the" lock.
#include "supervisor/instance_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;

namespace cuzk::sup {

namespace {

// The pid its holder wrote into a lock file, or "" when unreadable.
std::string holder_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s = n > 0 ? std::string(buf, size_t(n)) : std::string();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.find_first_not_of("0123456789") == std::string::npos ? s : std::string();
}

// Closes fd, which another process holds the lock of, and says who.
[[noreturn]] void in_use(const InstanceLock::Target& t, int fd) {
  const std::string pid = holder_of(fd);
  ::close(fd);
  static const char* what[] = {"daemon.state_dir", "daemon.instance", "daemon.socket"};
  std::string thing = t.key == what[0]   ? "the state folder"
                      : t.key == what[1] ? "the instance name"
                                         : "the API socket";
  throw config::ConfigError(t.key, thing + " is in use by another cuzk-supervisor" +
                                       (pid.empty() ? std::string() : " (pid " + pid + ")") + ", which holds " +
                                       t.path + "; two daemons must not share it: stop the other one, or give this one "
                                       "its own daemon.state_dir, daemon.instance and daemon.socket");
}

bool same_file(int fd, const std::string& path) {
  struct stat a {}, b {};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// A lock file of another user's (made first in a folder others may write) is not this daemon's:
// its lock and the pid in it mean nothing.
void check_owner(const InstanceLock::Target& t, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_uid == ::geteuid()) return;
  ::close(fd);
  throw config::ConfigError(t.key, "the lock file " + t.path + " is owned by uid " + std::to_string(st.st_uid) +
                                       ", not by this daemon's user (uid " + std::to_string(::geteuid()) +
                                       "): another user made it, and it is not trusted; remove it, or keep this "
                                       "path in a folder only the daemon's user may write");
}

int lock_one(const InstanceLock::Target& t) {
  for (;;) {
    const int fd = ::open(t.path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
    if (fd < 0)
      throw config::ConfigError(t.key, "cannot open the lock file " + t.path + ": " + std::strerror(errno));
    check_owner(t, fd);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      if (e == EWOULDBLOCK) in_use(t, fd);
      ::close(fd);
      throw config::ConfigError(t.key, "cannot lock " + t.path + ": " + std::strerror(e));
    }
    if (!same_file(fd, t.path)) {  // unlinked by the holder that just let go: lock the new file
      ::close(fd);
      continue;
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
      // The pid is only for the message a second daemon prints; the lock itself is held.
    }
    return fd;
  }
}

void make_dir(const fs::path& d, const std::string& key) {
  std::error_code ec;
  fs::create_directories(d, ec);
  if (ec) throw config::ConfigError(key, "cannot create " + d.string() + ": " + ec.message());
}

// The instance lock's folder: made (0700) when missing, and refused unless it is a folder of the
// daemon's user that no other user may write, since whoever can write it can hold the lock first.
void private_dir(const std::string& d) {
  if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST)
    throw config::ConfigError("daemon.instance", "cannot create the folder of the instance lock " + d + ": " +
                                                     std::strerror(errno));
  struct stat st {};
  if (::lstat(d.c_str(), &st) != 0)
    throw config::ConfigError("daemon.instance", "cannot stat " + d + ": " + std::strerror(errno));
  std::string why;
  if (!S_ISDIR(st.st_mode)) why = "is not a folder";
  else if (st.st_uid != ::geteuid())
    why = "is owned by uid " + std::to_string(st.st_uid) + ", not by this daemon's user (uid " +
          std::to_string(::geteuid()) + ")";
  else if (st.st_mode & 022)
    why = "may be written by other users";
  if (!why.empty())
    throw config::ConfigError("daemon.instance", "the folder of the instance lock " + d + " " + why +
                                                     ": another user could hold the lock first; it must be the "
                                                     "daemon's user's own, writable by it alone");
}

std::string env_dir(const char* name) {
  const char* v = std::getenv(name);
  if (!v || v[0] != '/') return "";
  std::string s = v;
  if (const size_t colon = s.find(':'); colon != std::string::npos) s.resize(colon);  // the first of several
  return s;
}

}  // namespace

std::string InstanceLock::run_dir(const config::Config& cfg) {
  if (std::string d = env_dir("RUNTIME_DIRECTORY"); !d.empty()) return d;
  if (::geteuid() == 0) return "/run/cuzk-supervisor";
  if (std::string d = env_dir("XDG_RUNTIME_DIR"); !d.empty()) return d + "/cuzk-supervisor";
  return cfg.daemon.state_dir;
}

std::vector<InstanceLock::Target> InstanceLock::targets(const config::Config& cfg) {
  return {{"daemon.state_dir", (fs::path(cfg.daemon.state_dir) / "lock").string()},
          {"daemon.instance", (fs::path(run_dir(cfg)) / ("instance." + cfg.daemon.instance + ".lock")).string()},
          {"daemon.socket", cfg.daemon.socket + ".lock"}};
}

InstanceLock InstanceLock::acquire(const config::Config& cfg) {
  make_dir(cfg.daemon.state_dir, "daemon.state_dir");
  make_dir(fs::path(cfg.daemon.socket).parent_path(), "daemon.socket");
  private_dir(run_dir(cfg));
  InstanceLock l;
  for (const Target& t : targets(cfg)) l.held_.push_back({t.path, lock_one(t)});
  return l;
}

void InstanceLock::check_available(const config::Config& cfg) const {
  for (const Target& t : targets(cfg)) {
    bool mine = false;
    for (const Held& h : held_) mine = mine || h.path == t.path;
    if (mine) continue;
    const int fd = ::open(t.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0) continue;  // no lock file: nobody holds it
    check_owner(t, fd);
    const bool busy = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (busy) in_use(t, fd);
    ::close(fd);  // drops the lock just taken
  }
}

void InstanceLock::release() {
  for (const Held& h : held_) {
    ::unlink(h.path.c_str());
    ::close(h.fd);
  }
  held_.clear();
}

InstanceLock& InstanceLock::operator=(InstanceLock&& o) noexcept {
  if (this != &o) {
    release();
    held_ = std::move(o.held_);
    o.held_.clear();
  }
  return *this;
}

InstanceLock::~InstanceLock() { release(); }

}  // namespace cuzk::sup
