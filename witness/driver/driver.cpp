// cuzk's driver for a circom C++ witness generator. It is not compiled with cuzk: `cuzk witness build`
// (and the daemon, on first use) compiles it together with circom's `--c` output into the artefact's
// `generator` executable, with circom's own main() renamed so that its circuit loader can be reused.
//
//   generator --describe <circuit.dat>        prints the circuit's sizes and input table as JSON
//   generator --serve <circuit.dat> <ppid>    serves witness requests on fd 3 until EOF
//
// Every request runs in a forked child: a failed assert (abort), a crash or an endless loop in the
// generated code ends that child only, and this process reports what happened. The child writes the
// witness, normal form, straight into the caller's file or shared-memory slot.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "calcwit.hpp"
#include "circom.hpp"
#include "cuzk_driver_io.hpp"
#include "fr.hpp"

Circom_Circuit* loadCircuit(std::string const& datFileName);  // circom's main.cpp

namespace {

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

bool read_full(int fd, void* p, size_t n) {
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

bool write_full(int fd, const void* p, size_t n) {
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

double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

using cuzk_driver::Slot;
using cuzk_driver::input_slots;

int describe(const char* dat) {
  Circom_Circuit* c = loadCircuit(dat);
  std::printf("{\"driver\":1,\"n_witness\":%u,\"n_signals\":%u,\"input_start\":%u,\"n_inputs\":%u,\"prime\":[",
              get_size_of_witness(), get_total_signal_no(), get_main_input_signal_start(), get_main_input_signal_no());
  for (int i = 0; i < Fr_N64; i++) std::printf("%s\"%016" PRIx64 "\"", i ? "," : "", uint64_t(Fr_q.longVal[i]));
  std::printf("],\"limbs\":%d,\"inputs\":[", Fr_N64);
  bool first = true;
  for (uint i = 0; i < get_size_of_input_hashmap(); i++) {
    const HashSignalInfo& h = c->InputHashMap[i];
    if (h.signalsize == 0) continue;
    std::printf("%s{\"hash\":\"%016" PRIx64 "\",\"signal\":%" PRIu64 ",\"size\":%" PRIu64 "}", first ? "" : ",",
                uint64_t(h.hash), uint64_t(h.signalid), uint64_t(h.signalsize));
    first = false;
  }
  std::printf("]}\n");
  return 0;
}

// The child: computes one witness and writes it into dest. Exit 0 on success; the generated code
// aborts on a failed assert, and any other failure exits non-zero with a line on stderr.
[[noreturn]] void compute(Circom_Circuit* circuit, const std::vector<Slot>& slots, const std::vector<uint64_t>& in,
                          const std::string& dest, uint64_t offset, uint64_t n_witness) {
  Circom_CalcWit* ctx = new Circom_CalcWit(circuit);
  if (slots.empty()) ctx->tryRunCircuit();
  for (size_t k = 0; k < slots.size(); k++) {
    FrElement v;
    v.shortVal = 0;
    v.type = Fr_LONG;
    std::memcpy(v.longVal, &in[k * Fr_N64], sizeof(v.longVal));
    ctx->setInputSignal(slots[k].hash, slots[k].index, v);
  }
  if (ctx->getRemaingInputsToBeSet() != 0) {
    std::fprintf(stderr, "cuzk-driver: %u inputs were not set\n", ctx->getRemaingInputsToBeSet());
    _exit(3);
  }
  int fd = open(dest.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "cuzk-driver: cannot open %s: %s\n", dest.c_str(), std::strerror(errno));
    _exit(3);
  }
  const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  const uint64_t base = offset / page * page, skip = offset - base;
  const uint64_t len = skip + n_witness * Fr_N64 * 8;
  void* map = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(base));
  if (map == MAP_FAILED) {
    std::fprintf(stderr, "cuzk-driver: cannot map %s: %s\n", dest.c_str(), std::strerror(errno));
    _exit(3);
  }
  close(fd);
  auto* out = reinterpret_cast<uint8_t*>(map) + skip;
  for (uint64_t i = 0; i < n_witness; i++) {
    FrElement v;
    ctx->getWitness(uint(i), &v);
    Fr_toLongNormal(&v, &v);
    std::memcpy(out + i * Fr_N64 * 8, v.longVal, Fr_N64 * 8);
  }
  munmap(map, len);
  std::fflush(stdout);
  _exit(0);
}

// Keeps the first "Failed assert" line and the last bytes of the child's output.
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
      if (line.find("Failed assert") != std::string::npos) {
        first_assert = line;
        partial.clear();
        return;
      }
    }
    if (partial.size() > 4096) partial.erase(0, partial.size() - 4096);
  }
};

int serve(const char* dat) {
  Circom_Circuit* circuit = loadCircuit(dat);
  const std::vector<Slot> slots = input_slots(circuit);
  const int fd = 3;
  for (;;) {
    Request rq;
    if (!read_full(fd, &rq, sizeof rq)) return 0;  // the caller closed the channel
    if (std::memcmp(rq.magic, kReqMagic, 8) != 0 || rq.path_len > 4096) return 2;
    std::string dest(rq.path_len, '\0');
    std::vector<uint64_t> in(rq.n_inputs * Fr_N64);
    if (!read_full(fd, dest.data(), dest.size()) || !read_full(fd, in.data(), in.size() * 8)) return 2;
    Reply rp{};
    std::memcpy(rp.magic, kRepMagic, 8);
    std::string msg;
    const double t0 = now_ms();
    if (rq.n_inputs != slots.size()) {
      rp.status = 3;
      msg = "expected " + std::to_string(slots.size()) + " input values, got " + std::to_string(rq.n_inputs);
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
        compute(circuit, slots, in, dest, rq.offset, rq.n_witness);
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

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--describe") == 0) return describe(argv[2]);
  if (argc == 4 && std::strcmp(argv[1], "--serve") == 0) {
    // Never outlive the process that asked for witnesses.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != pid_t(std::atoll(argv[3]))) return 1;
    signal(SIGPIPE, SIG_IGN);
    return serve(argv[2]);
  }
  std::fprintf(stderr, "usage: %s --describe <circuit.dat> | --serve <circuit.dat> <parent pid>\n", argv[0]);
  return 2;
}
