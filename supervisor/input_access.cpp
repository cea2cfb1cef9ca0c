// Path checks for files named in requests: resolve, compare with daemon.input_dirs, open without
// following a last symlink or blocking on a FIFO, then check what was actually opened.
#include "supervisor/input_access.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

namespace cuzk::sup {

namespace fs = std::filesystem;

namespace {

std::string realpath_of(const std::string& p, int& err) {
  std::unique_ptr<char, decltype(&std::free)> r(::realpath(p.c_str(), nullptr), &std::free);
  err = r ? 0 : errno;
  return r ? std::string(r.get()) : std::string();
}

// What the descriptor refers to now, whatever happened to the path since it was resolved.
std::string fd_path(int fd) {
  char buf[PATH_MAX + 1];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(link.c_str(), buf, PATH_MAX);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

std::string errno_text(int e) {
  switch (e) {
    case ENOENT: return "no such file";
    case EACCES: return "not readable by the daemon (permission denied)";
    case ENOTDIR: return "a component of the path is not a directory";
    case ELOOP: return "too many levels of symbolic links";
    default: return std::strerror(e);
  }
}

}  // namespace

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool InputFile::read_at(uint64_t off, void* buf, size_t n) const {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t k = ::pread(fd_, p, n, off_t(off));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) throw std::runtime_error(path_ + ": read failed: " + std::strerror(errno));
    if (k == 0) return false;
    p += k, off += uint64_t(k), n -= size_t(k);
  }
  return true;
}

std::string InputFile::read_all(uint64_t max_bytes, const std::string& field) const {
  if (size_ > max_bytes)
    throw SubmitError(400, field + ": " + path_ + " is larger than limits.max_upload_bytes (" +
                               std::to_string(max_bytes) + " bytes)");
  std::string out(size_t(size_), '\0');
  if (!read_at(0, out.data(), out.size()))
    throw SubmitError(400, field + ": " + path_ + " became shorter while it was read");
  return out;
}

bool InputAccess::inside(const std::string& p) const {
  for (const auto& d : dirs_) {
    if (p == d) return true;
    const std::string prefix = d == "/" ? d : d + "/";
    if (p.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

InputFile InputAccess::open(const std::string& given, const std::string& field) const {
  // A NUL ends the path for every system call: the file checked would not be the one named.
  if (given.find('\0') != std::string::npos)
    throw SubmitError(400, field + ": the path contains a NUL character (\\u0000)");
  const std::string where = field + ": " + given;
  if (dirs_.empty())
    throw SubmitError(403, field + ": paths are refused because daemon.input_dirs is empty; send the content in the "
                               "request instead ({\"base64\": ...} for a witness, the inputs object for inputs)");
  if (given.empty()) throw SubmitError(400, field + ": empty path");
  if (given[0] != '/') throw SubmitError(400, where + ": must be an absolute path");
  const std::string outside = where + ": outside daemon.input_dirs (paths must resolve inside one of them)";
  const bool lexically_inside = inside(fs::path(given).lexically_normal().string());
  int err = 0;
  const std::string real = realpath_of(given, err);
  // Whether a path outside the directories exists is not revealed: both cases are the same 403.
  if (err) throw SubmitError(lexically_inside ? 400 : 403, lexically_inside ? where + ": " + errno_text(err) : outside);
  if (!inside(real))
    throw SubmitError(403, lexically_inside ? where + ": resolves outside daemon.input_dirs (symlinks are followed "
                                                      "before the check)"
                                            : outside);
  // O_NONBLOCK: opening a FIFO must not wait for a writer. O_NOFOLLOW: the resolved name must not
  // have become a symlink since.
  int fd = ::open(real.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    throw SubmitError(e == ELOOP ? 403 : 400, e == ELOOP ? outside : where + ": " + errno_text(e));
  }
  InputFile f(fd, real, 0);
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw SubmitError(400, where + ": " + errno_text(errno));
  if (S_ISDIR(st.st_mode)) throw SubmitError(400, where + ": is a directory");
  if (!S_ISREG(st.st_mode)) throw SubmitError(400, where + ": is not a regular file (a FIFO, socket or device)");
  // A directory on the way may have been swapped for a symlink between realpath and open: check
  // the file that was opened, not the name.
  const std::string opened = fd_path(fd);
  if (opened.empty())
    throw SubmitError(403, where + ": cannot check where the opened file lies (/proc/self/fd is not readable)");
  if (!inside(opened)) throw SubmitError(403, outside);
  f.size_ = uint64_t(st.st_size);
  return f;
}

}  // namespace cuzk::sup
