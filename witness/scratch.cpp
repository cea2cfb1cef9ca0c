#include "witness/scratch.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>

#include "witness/manifest.hpp"

namespace cuzk::witness {

namespace fs = std::filesystem;

namespace {

fs::path lock_of(const fs::path& dir) { return dir.string() + ".lock"; }

// Whether the locked fd is still the file at path: a sweeper may have removed it between this
// process's open and its flock, and a lock on a removed file claims nothing.
bool still_there(int fd, const fs::path& path) {
  struct stat held {}, now {};
  return ::fstat(fd, &held) == 0 && held.st_nlink > 0 && ::stat(path.c_str(), &now) == 0 &&
         held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

// The scratch folder that an entry's name belongs to: ".<name>.tmp<digits>", or its lock
// ".<name>.tmp<digits>.lock"; nullopt for any other name.
std::optional<std::string> scratch_of(std::string n) {
  const std::string lock = ".lock";
  if (n.size() > lock.size() && n.compare(n.size() - lock.size(), lock.size(), lock) == 0) n.resize(n.size() - lock.size());
  size_t i = n.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(n[i - 1]))) i--;
  if (n.empty() || n[0] != '.' || i == n.size() || i < 5 || n.compare(i - 4, 4, ".tmp") != 0) return std::nullopt;
  return n;
}

}  // namespace

ScratchDir::ScratchDir(const fs::path& parent, const std::string& name)
    : dir_(parent / ("." + name + ".tmp" + std::to_string(::getpid()))) {
  const fs::path lock = lock_of(dir_);
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw WitnessError(parent.string() + ": " + ec.message());
  for (;;) {
    lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0) throw WitnessError(lock.string() + ": cannot open: " + std::strerror(errno));
    int rc;
    while ((rc = ::flock(lock_fd_, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      const int e = errno;
      ::close(lock_fd_);
      throw WitnessError(lock.string() + ": cannot lock: " + std::strerror(e));
    }
    if (still_there(lock_fd_, lock)) break;
    ::close(lock_fd_);
  }
  fs::remove_all(dir_, ec);
  fs::create_directories(dir_, ec);
  if (ec) {
    const std::string why = dir_.string() + ": " + ec.message();
    ::unlink(lock.c_str());
    ::close(lock_fd_);
    throw WitnessError(why);
  }
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  if (!kept_) fs::remove_all(dir_, ec);
  // Unlinked while still held: a sweeper that opened it before waits for nothing and finds it gone.
  ::unlink(lock_of(dir_).c_str());
  ::close(lock_fd_);
}

void sweep_scratch(const fs::path& parent) {
  std::set<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec))
    if (auto n = scratch_of(it->path().filename().string())) names.insert(*n);
  for (const std::string& n : names) {
    const fs::path dir = parent / n, lock = lock_of(dir);
    const int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;  // no lock: an older cuzk's folder, or one removed since
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && still_there(fd, lock)) {
      fs::remove_all(dir, ec);
      if (!ec) ::unlink(lock.c_str());  // else left to the next sweep
    }
    ::close(fd);
  }
}

}  // namespace cuzk::witness
