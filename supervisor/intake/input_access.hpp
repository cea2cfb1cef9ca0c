// Which files a request may name: a path is opened only when it resolves, symlinks included, to a
// regular file inside one of daemon.input_dirs that the client could read itself (the file, and a
// search permission on every folder above it, by the mode bits for the client's uid and groups).
// The file is opened once, at submission, by a walk that follows no symlink; the daemon keeps a
// private copy of it and never opens the path again. The daemon may read files its clients cannot,
// so a refusal never says whether a file outside those directories, or one the client may not
// read, exists, and no error quotes a byte of a file.
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

// Who names a file. Operators (root and the daemon's own user on the unix socket) may name any file
// the daemon can read; another unix socket client only a file its uid and groups may read; a TCP
// client, whose user is not known, only a file that everybody may read.
struct FileReader {
  enum Kind { Operator, User, Anyone } kind = Anyone;
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> groups;
  // Whether this reader may read (want = 4) or search (want = 1) a file of this owner and mode.
  bool may(uint32_t owner, uint32_t group, uint32_t mode, uint32_t want) const;
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
  // The file's size() bytes into a new file dest (mode 0600), the daemon's private copy. Throws
  // SubmitError(400) naming field when the file became shorter; a failure to write as
  // throw_write_error (state_writes.hpp) has it.
  void copy_to(const std::string& dest, const std::string& field) const;

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
  // Opens the file a request names in `field` ("witnesses[2]") for reader. Throws SubmitError: 403
  // when path submissions are disabled, the path lies (or resolves) outside the input directories,
  // or reader may not read it; 400 for a relative path, a missing file, a directory, a FIFO, socket
  // or device. To a reader other than an operator a missing file and one it may not read are the
  // same 403.
  InputFile open(const std::string& path, const std::string& field, const FileReader& reader) const;
  // True when the canonical path p is one of the directories or lies below one.
  bool inside(const std::string& p) const;

 private:
  std::vector<std::string> dirs_;
};

}  // namespace cuzk::sup
