// Path checks for files named in requests: resolve, compare with daemon.input_dirs, then walk the
// resolved path from / one component at a time with O_NOFOLLOW, checking the client's permission
// on each folder and on the file, so that what is opened is the checked file whatever happened to
// the path since it was resolved.
#include "supervisor/intake/input_access.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include "supervisor/store/job_store.hpp"
#include "supervisor/store/state_writes.hpp"

namespace cuzk::sup {

namespace fs = std::filesystem;

namespace {

std::string realpath_of(const std::string& p, int& err) {
  std::unique_ptr<char, decltype(&std::free)> r(::realpath(p.c_str(), nullptr), &std::free);
  err = r ? 0 : errno;
  return r ? std::string(r.get()) : std::string();
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

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int release() { return std::exchange(fd, -1); }
};

}  // namespace

bool FileReader::may(uint32_t owner, uint32_t group, uint32_t mode, uint32_t want) const {
  if (kind == Operator || (kind == User && uid == 0)) return true;
  uint32_t bits = mode & 7;  // others
  if (kind == User) {
    if (owner == uid) bits = (mode >> 6) & 7;
    else if (group == gid || std::find(groups.begin(), groups.end(), group) != groups.end()) bits = (mode >> 3) & 7;
  }
  return (bits & want) == want;
}

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

void InputFile::copy_to(const std::string& dest, const std::string& field) const {
  Fd out(::open(dest.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  int err = out.fd < 0 ? errno : 0;
  // In the kernel where it can (a reflink on filesystems that share extents), else by read/write.
  loff_t in_off = 0, out_off = 0;
  bool plain = false, shorter = false;
  std::string buf;
  while (!err && uint64_t(in_off) < size_) {
    const size_t want = size_t(std::min<uint64_t>(size_ - uint64_t(in_off), 1ull << 30));
    ssize_t n;
    if (!plain) {
      n = ::copy_file_range(fd_, &in_off, out.fd, &out_off, want, 0);
      if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP || errno == EPERM) &&
          in_off == 0) {
        plain = true;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) err = errno;
      else if (n == 0) shorter = true, err = -1;
      continue;
    }
    buf.resize(std::min<size_t>(want, 1 << 20));
    n = ::pread(fd_, buf.data(), buf.size(), in_off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n < 0) throw std::runtime_error(path_ + ": read failed: " + std::strerror(errno));
      shorter = true, err = -1;
      continue;
    }
    for (ssize_t done = 0; !err && done < n;) {
      const ssize_t w = ::pwrite(out.fd, buf.data() + done, size_t(n - done), out_off + done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) err = w < 0 ? errno : EIO;
      else done += w;
    }
    in_off += n, out_off += n;
  }
  if (out.fd >= 0 && ::close(out.release()) != 0 && !err) err = errno;
  if (!err) return;
  ::unlink(dest.c_str());
  if (shorter) throw SubmitError(400, field + ": " + path_ + " became shorter while it was read");
  throw_write_error("a copy of " + field + " as " + dest, err);
}

bool InputAccess::inside(const std::string& p) const {
  for (const auto& d : dirs_) {
    if (p == d) return true;
    const std::string prefix = d == "/" ? d : d + "/";
    if (p.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

InputFile InputAccess::open(const std::string& given, const std::string& field, const FileReader& reader) const {
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
  // To a client that is not an operator, a file it may not read and one that does not exist are
  // the same refusal: it learns nothing of what it cannot see itself.
  const bool op = reader.kind == FileReader::Operator;
  const std::string denied = where + ": no such file, or one this client may not read (the daemon reads a file "
                                     "only for a client that could read it itself)";
  auto failed = [&](int e) { return op ? SubmitError(400, where + ": " + errno_text(e)) : SubmitError(403, denied); };
  const bool lexically_inside = inside(fs::path(given).lexically_normal().string());
  int err = 0;
  const std::string real = realpath_of(given, err);
  // Whether a path outside the directories exists is not revealed: both cases are the same 403.
  if (err) throw lexically_inside ? failed(err) : SubmitError(403, outside);
  if (!inside(real))
    throw SubmitError(403, lexically_inside ? where + ": resolves outside daemon.input_dirs (symlinks are followed "
                                                      "before the check)"
                                            : outside);
  // The walk: each folder of the resolved path opened below the last with O_NOFOLLOW, so that a
  // folder or the file swapped for a symlink since realpath is refused instead of followed.
  const std::string swapped = where + ": the path changed while it was opened (a symlink appeared on it)";
  Fd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.fd < 0) throw failed(errno);
  std::vector<std::string> parts;
  for (const auto& c : fs::path(real).relative_path()) parts.push_back(c.string());
  if (parts.empty()) throw SubmitError(400, where + ": is a directory");
  struct stat st {};
  for (size_t i = 0; i + 1 < parts.size(); i++) {
    if (::fstat(dir.fd, &st) != 0) throw failed(errno);
    if (!reader.may(st.st_uid, st.st_gid, st.st_mode, 1)) throw SubmitError(403, denied);
    const int next = ::openat(dir.fd, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) throw errno == ELOOP || errno == ENOTDIR ? SubmitError(403, swapped) : failed(errno);
    Fd n(next);
    std::swap(dir.fd, n.fd);
  }
  if (::fstat(dir.fd, &st) != 0) throw failed(errno);
  if (!reader.may(st.st_uid, st.st_gid, st.st_mode, 1)) throw SubmitError(403, denied);
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  const int fd = ::openat(dir.fd, parts.back().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0) throw errno == ELOOP ? SubmitError(403, swapped) : failed(errno);
  InputFile f(fd, real, 0);
  if (::fstat(fd, &st) != 0) throw failed(errno);
  if (!reader.may(st.st_uid, st.st_gid, st.st_mode, 4)) throw SubmitError(403, denied);
  if (S_ISDIR(st.st_mode)) throw SubmitError(400, where + ": is a directory");
  if (!S_ISREG(st.st_mode)) throw SubmitError(400, where + ": is not a regular file (a FIFO, socket or device)");
  f.size_ = uint64_t(st.st_size);
  return f;
}

}  // namespace cuzk::sup
