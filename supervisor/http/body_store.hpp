// Where request bodies live while they arrive. A body stays in memory while it is small and the
// bodies of all connections together fit the server's budget; any other body is written, as its
// bytes arrive, to a file of its own in the spool folder, so that the server's memory does not grow
// with the size or the number of uploads. The file is removed with the last reference to it,
// whichever way the request ends.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace cuzk::http {

// A request body kept in a file (Request::body_file); the file is removed when this goes away.
struct SpooledBody {
  std::string path;
  uint64_t size = 0;
  SpooledBody(std::string p, uint64_t n) : path(std::move(p)), size(n) {}
  ~SpooledBody();
  SpooledBody(const SpooledBody&) = delete;
  SpooledBody& operator=(const SpooledBody&) = delete;
};

// The budget shared by every connection of a server.
struct BodyPool {
  std::string spool_dir;          // "" = never spool (every body stays in memory)
  uint64_t spool_above = 0;       // a body larger than this goes to a file
  uint64_t memory_budget = 0;     // bytes of bodies in memory across connections
  uint64_t in_memory = 0;         // now (capacity reserved, not only bytes received)
  uint64_t peak_in_memory = 0;
  uint64_t spooled_total = 0;     // bodies sent to a file since start
  uint64_t seq = 0;               // spool file names
};

// One request's body as it arrives.
class BodyBuffer {
 public:
  explicit BodyBuffer(BodyPool& pool) : pool_(pool) {}
  ~BodyBuffer() { reset(); }
  BodyBuffer(const BodyBuffer&) = delete;
  BodyBuffer& operator=(const BodyBuffer&) = delete;
  // Appends n bytes. Returns 0, or the status to refuse the request with (503 when the disk under
  // the spool folder is full, 500 on another error), with the reason in `why`.
  int append(const char* data, size_t n, std::string& why);
  // Hands the complete body over: the bytes in `memory` or the file in `file`; the buffer is empty
  // again. The memory stays counted against the budget until release_handed().
  void take(std::string& memory, std::shared_ptr<const SpooledBody>& file);
  // The in-memory body handed over by take() has been dropped.
  void release_handed();
  // Drops what was received (the request failed or its connection closed).
  void reset();

 private:
  int spool(std::string& why);
  void uncount(uint64_t bytes);
  BodyPool& pool_;
  std::string mem_;
  uint64_t counted_ = 0;  // mem_'s reservation, counted in the pool
  uint64_t handed_ = 0;   // the last handed-over body's reservation, still counted
  int fd_ = -1;
  std::string path_;
  uint64_t file_size_ = 0;
};

}  // namespace cuzk::http
