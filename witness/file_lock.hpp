// An exclusive flock(2) on a file for the holder's lifetime: how concurrent processes (synthesis
// workers, command lines) build one artefact, or one program, once. The file is created if missing
// and never removed (removing it would let a later locker take a different inode).
#pragma once
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "witness/manifest.hpp"

namespace cuzk::witness {

class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw WitnessError(path + ": cannot open the lock file: " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        const int e = errno;
        ::close(fd_);
        throw WitnessError(path + ": cannot lock: " + std::strerror(e));
      }
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace cuzk::witness
