// Request bodies in memory within a budget, else in a spool file (see body_store.hpp).
#include "supervisor/http/body_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cuzk::http {

SpooledBody::~SpooledBody() { ::unlink(path.c_str()); }

// The pool is not touched when there is nothing to give back: a connection's buffer is reset when
// it closes, and destroyed later, possibly after the server and its pool.
void BodyBuffer::uncount(uint64_t bytes) {
  if (bytes) pool_.in_memory -= std::min(bytes, pool_.in_memory);
}

int BodyBuffer::append(const char* data, size_t n, std::string& why) {
  if (fd_ < 0) {
    const uint64_t need = mem_.size() + n;
    if (need <= mem_.capacity()) {
      mem_.append(data, n);
      return 0;
    }
    // Grow by doubling up to spool_above; the reservation is what the budget counts.
    const uint64_t grown = std::min<uint64_t>(std::max<uint64_t>(need, 2 * mem_.capacity()), pool_.spool_above);
    const bool fits = pool_.spool_dir.empty() ||
                      (need <= pool_.spool_above && pool_.in_memory - counted_ + grown <= pool_.memory_budget);
    if (fits) {
      mem_.reserve(std::max<uint64_t>(grown, need));
      pool_.in_memory += mem_.capacity() - counted_;
      counted_ = mem_.capacity();
      pool_.peak_in_memory = std::max(pool_.peak_in_memory, pool_.in_memory);
      mem_.append(data, n);
      return 0;
    }
    if (int st = spool(why)) return st;
  }
  for (size_t off = 0; off < n;) {
    ssize_t w = ::write(fd_, data + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int e = w < 0 ? errno : EIO;
      why = "cannot store the request body under " + pool_.spool_dir + ": " + std::strerror(e);
      reset();
      return e == ENOSPC || e == EDQUOT ? 503 : 500;
    }
    off += size_t(w);
    file_size_ += uint64_t(w);
  }
  return 0;
}

// Moves what is in memory to a new spool file, and gives its memory back to the pool.
int BodyBuffer::spool(std::string& why) {
  path_ = pool_.spool_dir + "/" + std::to_string(::getpid()) + "-" + std::to_string(++pool_.seq) + ".body";
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    const int e = errno;
    why = "cannot store the request body under " + pool_.spool_dir + ": " + std::strerror(e);
    path_.clear();
    reset();
    return e == ENOSPC || e == EDQUOT ? 503 : 500;
  }
  pool_.spooled_total++;
  std::string held;
  held.swap(mem_);
  uncount(counted_);
  counted_ = 0;
  file_size_ = 0;
  return held.empty() ? 0 : append(held.data(), held.size(), why);
}

void BodyBuffer::take(std::string& memory, std::shared_ptr<const SpooledBody>& file) {
  release_handed();
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    file = std::make_shared<const SpooledBody>(std::move(path_), file_size_);
    path_.clear();
    file_size_ = 0;
    memory.clear();
    return;
  }
  memory.swap(mem_);
  std::string().swap(mem_);
  handed_ = counted_;
  counted_ = 0;
}

void BodyBuffer::release_handed() {
  uncount(handed_);
  handed_ = 0;
}

void BodyBuffer::reset() {
  release_handed();
  std::string().swap(mem_);
  uncount(counted_);
  counted_ = 0;
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!path_.empty()) ::unlink(path_.c_str());
  path_.clear();
  file_size_ = 0;
}

}  // namespace cuzk::http
