// Helpers shared by the libFuzzer targets: invariant checks that abort (libFuzzer records the input),
// a memfd that holds the input for readers that take a path, and a scratch directory.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

// An invariant of the target: on failure, print it and abort so that libFuzzer saves the input.
#define FUZZ_CHECK(cond, what)                                                          \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d): %s\n", #cond, __FILE__, \
                   __LINE__, std::string(what).c_str());                               \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

namespace cuzk::fuzz {

// The input as a file: an anonymous in-memory file reached through /proc/self/fd, so that the
// readers open, stat and map it exactly as they would a file on disk.
class MemFile {
 public:
  MemFile() {
    fd_ = ::memfd_create("cuzk-fuzz", MFD_CLOEXEC);
    if (fd_ < 0) std::abort();
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  const std::string& write(const uint8_t* data, size_t n) {
    if (::ftruncate(fd_, 0) != 0) std::abort();
    size_t done = 0;
    while (done < n) {
      ssize_t k = ::pwrite(fd_, data + done, n - done, off_t(done));
      if (k <= 0) std::abort();
      done += size_t(k);
    }
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// A directory of this process's own under the temporary directory, removed at exit.
inline const std::string& scratch_dir() {
  // Never destroyed, so that the exit handler that removes it can still name it.
  static const std::string* dir = [] {
    auto* d = new std::string(
        (std::filesystem::temp_directory_path() / ("cuzk-fuzz-" + std::to_string(::getpid()))).string());
    std::filesystem::remove_all(*d);
    std::filesystem::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return d;
  }();
  return *dir;
}

// Reads a whole file (a product writer's output) for byte comparisons.
inline std::string slurp(const std::string& path) {
  std::string out;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[1 << 16];
    size_t k;
    while ((k = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, k);
    std::fclose(f);
  }
  return out;
}

}  // namespace cuzk::fuzz
