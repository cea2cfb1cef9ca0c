// What every witness generator that cuzk builds does alike, whatever circom output it runs (circom's
// C++ in driver.cpp, circom's .wasm in wasm_driver.cpp): it is compiled into the artefact, never
// into cuzk. It serves witness requests on fd 3 (the wire format of witness/generator.cpp), each in
// a forked child, so that a failed assert, a crash or an endless loop in the generated code ends that
// child only and this process reports what happened. The child writes the witness, normal form,
// straight into the caller's file or shared-memory slot.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace cuzk_driver {

constexpr char kReqMagic[8] = {'C', 'Z', 'K', 'W', 'R', 'E', 'Q', '1'};
constexpr char kRepMagic[8] = {'C', 'Z', 'K', 'W', 'R', 'E', 'P', '1'};

struct Request {
  char magic[8];
  uint64_t n_inputs;
  uint64_t offset;     // byte offset of the first witness value in the destination file
  uint64_t n_witness;  // values to write
  uint32_t path_len;
  uint32_t reserved;
};
struct Reply {
  char magic[8];
  int32_t status;  // 0 ok, 1 assert, 2 crashed, 3 request error
  int32_t detail;  // signal number or exit status
  double ms;
  uint32_t msg_len;
  uint32_t reserved;
};

inline bool read_full(int fd, void* p, size_t n) {
  auto* b = static_cast<char*>(p);
  while (n) {
    ssize_t r = read(fd, b, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    b += r;
    n -= size_t(r);
  }
  return true;
}

inline bool write_full(int fd, const void* p, size_t n) {
  auto* b = static_cast<const char*>(p);
  while (n) {
    ssize_t r = write(fd, b, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    b += r;
    n -= size_t(r);
  }
  return true;
}

inline double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// The line by which a child reports that the circuit rejected its inputs: circom's C++ prints
// "Failed assert in template/function ...", and the wasm driver "Assert Failed. <circom's message>",
// as snarkjs words it.
inline bool is_assert_line(const std::string& line) {
  return line.find("Failed assert") != std::string::npos || line.rfind("Assert Failed.", 0) == 0;
}

// The witness's place in the caller's file (a .wtns being written or a slot under /dev/shm), mapped:
// n_witness values of `bytes` each from byte `offset`. In the child only: a failure exits 3.
inline uint8_t* map_destination(const std::string& dest, uint64_t offset, uint64_t n_witness, uint64_t bytes) {
  int fd = open(dest.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "cuzk-driver: cannot open %s: %s\n", dest.c_str(), std::strerror(errno));
    _exit(3);
  }
  const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  const uint64_t base = offset / page * page, skip = offset - base;
  void* map = mmap(nullptr, skip + n_witness * bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(base));
  if (map == MAP_FAILED) {
    std::fprintf(stderr, "cuzk-driver: cannot map %s: %s\n", dest.c_str(), std::strerror(errno));
    _exit(3);
  }
  close(fd);
  return static_cast<uint8_t*>(map) + skip;
}

// Keeps the first assert line and the last bytes of the child's output.
struct OutputTail {
  std::string first_assert, tail, partial;
  void add(const char* p, size_t n) {
    tail.append(p, n);
    if (tail.size() > 2048) tail.erase(0, tail.size() - 2048);
    if (!first_assert.empty()) return;
    partial.append(p, n);
    size_t nl;
    while ((nl = partial.find('\n')) != std::string::npos) {
      std::string line = partial.substr(0, nl);
      partial.erase(0, nl + 1);
      if (is_assert_line(line)) {
        first_assert = line;
        partial.clear();
        return;
      }
    }
    if (partial.size() > 4096) partial.erase(0, partial.size() - 4096);
  }
};

// Serves requests on fd 3 until the caller closes it. `compute(in, dest, offset, n_witness)` runs in
// the forked child, with its stdout and stderr captured: it writes the witness of `in` (n_inputs
// values of 4 limbs, signal order) and exits 0, or exits otherwise (an assert's line on stdout).
template <class Compute>
int serve(size_t n_inputs, Compute&& compute) {
  const int fd = 3;
  for (;;) {
    Request rq;
    if (!read_full(fd, &rq, sizeof rq)) return 0;  // the caller closed the channel
    if (std::memcmp(rq.magic, kReqMagic, 8) != 0 || rq.path_len > 4096) return 2;
    std::string dest(rq.path_len, '\0');
    std::vector<uint64_t> in(rq.n_inputs * 4);
    if (!read_full(fd, dest.data(), dest.size()) || !read_full(fd, in.data(), in.size() * 8)) return 2;
    Reply rp{};
    std::memcpy(rp.magic, kRepMagic, 8);
    std::string msg;
    const double t0 = now_ms();
    if (rq.n_inputs != n_inputs) {
      rp.status = 3;
      msg = "expected " + std::to_string(n_inputs) + " input values, got " + std::to_string(rq.n_inputs);
    } else {
      int out[2];
      if (pipe2(out, O_CLOEXEC) != 0) return 2;
      std::fflush(nullptr);
      pid_t pid = fork();
      if (pid < 0) return 2;
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(out[1], 1);
        dup2(out[1], 2);
        setvbuf(stdout, nullptr, _IOLBF, 0);
        compute(in, dest, rq.offset, rq.n_witness);
        std::fflush(stdout);
        _exit(0);
      }
      close(out[1]);
      OutputTail ot;
      char buf[4096];
      for (;;) {
        ssize_t r = read(out[0], buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        ot.add(buf, size_t(r));
      }
      close(out[0]);
      int st = 0;
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        rp.status = 0;
      } else if (!ot.first_assert.empty()) {
        rp.status = 1;
        msg = ot.first_assert;
      } else {
        rp.status = 2;
        rp.detail = WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st);
        msg = WIFSIGNALED(st) ? std::string("was killed by signal ") + std::to_string(WTERMSIG(st)) + " (" +
                                    strsignal(WTERMSIG(st)) + ")"
                              : "exited with status " + std::to_string(WEXITSTATUS(st));
        if (!ot.tail.empty()) msg += "; its last output: " + ot.tail;
      }
    }
    rp.ms = now_ms() - t0;
    rp.msg_len = uint32_t(msg.size());
    if (!write_full(fd, &rp, sizeof rp) || !write_full(fd, msg.data(), msg.size())) return 0;
  }
}

// `generator --serve <circuit.dat> <parent pid>`: never outlives the process that asked for
// witnesses, and only serves that one.
inline bool serving_parent(const char* ppid) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != pid_t(std::atoll(ppid))) return false;
  signal(SIGPIPE, SIG_IGN);
  return true;
}

}  // namespace cuzk_driver
