// The classification and the probe of state_writes.hpp.
#include "supervisor/store/state_writes.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "supervisor/store/job_store.hpp"

namespace cuzk::sup {

bool no_space(int e) { return e == ENOSPC || e == EDQUOT; }

bool state_write_fault(int e) { return no_space(e) || e == EROFS || e == EACCES || e == EPERM || e == EIO; }

void throw_write_error(const std::string& what, int e) {
  throw StateWriteFailed("cannot store " + what + ": " + std::strerror(e), no_space(e));
}

std::string write_probe(const std::string& dir) {
  const std::string probe = dir + "/.write-probe-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return dir + ": " + std::strerror(errno);
  const bool wrote = ::write(fd, "x", 1) == 1;
  const int werr = errno;
  ::close(fd);
  ::unlink(probe.c_str());
  return wrote ? std::string() : dir + ": " + std::strerror(werr);
}

}  // namespace cuzk::sup
