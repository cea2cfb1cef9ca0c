// Which files a request may name: a path is opened only when it resolves, symlinks included, to a
// regular file inside one of daemon.input_dirs. The daemon may read files its clients cannot, so a
// refusal never says whether a file outside those directories exists, and no error quotes a byte
// of a file.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk::sup {

// A request the API refuses: an HTTP status (400, 403) and a message naming the field.
struct SubmitError : std::runtime_error {
  int status;
  SubmitError(int st, const std::string& m) : std::runtime_error(m), status(st) {}
};

// An open, regular, readable file inside the input directories.
class InputFile {
 public:
  InputFile(int fd, std::string path, uint64_t size) : fd_(fd), path_(std::move(path)), size_(size) {}
  ~InputFile();
  InputFile(InputFile&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)), size_(o.size_) { o.fd_ = -1; }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  InputFile& operator=(InputFile&&) = delete;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }  // canonical
  uint64_t size() const { return size_; }
  // Reads exactly n bytes at off; false when the file is shorter. Throws on an I/O error.
  bool read_at(uint64_t off, void* buf, size_t n) const;
  // The whole file, refused with SubmitError(400) when larger than max_bytes.
  std::string read_all(uint64_t max_bytes, const std::string& field) const;

 private:
  friend class InputAccess;
  int fd_;
  std::string path_;
  uint64_t size_;
};

class InputAccess {
 public:
  // dirs: canonical directories (config::DaemonConfig::input_dirs).
  explicit InputAccess(std::vector<std::string> dirs) : dirs_(std::move(dirs)) {}
  bool enabled() const { return !dirs_.empty(); }
  // Opens the file a request names in `field` ("witnesses[2]"). Throws SubmitError: 403 when path
  // submissions are disabled or the path lies (or resolves) outside the input directories; 400 for
  // a relative path, a missing or unreadable file, a directory, a FIFO, socket or device.
  InputFile open(const std::string& path, const std::string& field) const;
  // True when the canonical path p is one of the directories or lies below one.
  bool inside(const std::string& p) const;

 private:
  std::vector<std::string> dirs_;
};

}  // namespace cuzk::sup
