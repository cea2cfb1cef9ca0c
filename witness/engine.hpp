// One circuit's witness engine in one process: the compiled program where it exists and the input
// keeps to its guards, circom's native generator otherwise. Until the artefact has a program, inputs
// run on the native generator, and the first one the circuit accepts becomes the program's sample:
// its native witness is what the program must reproduce (open_program), and the build runs once per
// artefact, either before compute() returns (Build::Wait, the command line) or on a thread of its
// own while later inputs keep running natively (Build::Background, the synthesis worker).
#pragma once
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "witness/generator.hpp"
#include "witness/program.hpp"
#include "witness/program_runner.hpp"

namespace cuzk::witness {

enum class Engine { Program, Native };

// "program" or "native"; nullopt for anything else.
std::optional<Engine> parse_engine(const std::string& s);

template <class Fr>
class WitnessEngine {
 public:
  enum class Build { Wait, Background };
  enum class Path {
    Program,   // the compiled program wrote w, Montgomery form
    Native,    // the native generator wrote w, normal form (no program for this circuit yet, or ever)
    Fallback,  // the program refused this input (a guard), and the native generator wrote w, normal form
  };
  struct Outcome {
    GenResult result;
    Path path = Path::Native;
    std::string note;  // why the native generator ran: for Fallback, and once for Native
  };

  WitnessEngine(Manifest m, Engine e, Log log, Build build = Build::Wait)
      : gen_(std::move(m)), want_program_(e == Engine::Program), build_(build), log_(std::move(log)) {
    if (!want_program_) why_ = "the native engine was chosen";
  }
  ~WitnessEngine() {
    if (pending_.valid()) pending_.wait();
  }

  const Manifest& manifest() const { return gen_.manifest(); }

  // Computes the witness of `inputs` into w, which is the same memory as the file `dest` at byte
  // `offset` (the native generator writes through the file). timeout_ms and cancelled apply to the
  // native generator; the program runs in milliseconds.
  Outcome compute(const std::vector<Value>& inputs, Fr* w, const std::string& dest, uint64_t offset,
                  uint32_t timeout_ms = 0, const std::function<bool()>& cancelled = {}) {
    Outcome o;
    take_finished_build();
    if (want_program_ && !runner_ && !opened_) {
      opened_ = true;
      open_built();
    }
    if (runner_) {
      const double t0 = now_ms();
      const auto r = runner_->run(inputs.data(), w);
      if (r.outcome == ProgramRunner<Fr>::Outcome::Ok) {
        o.path = Path::Program;
        o.result.kind = GenResult::Ok;
        o.result.ms = now_ms() - t0;
        return o;
      }
      o.path = Path::Fallback;
      o.note = r.outcome == ProgramRunner<Fr>::Outcome::GuardFailed
                   ? "the input takes another path than the program was traced on (guard " + std::to_string(r.where) + ")"
                   : "the input divides by zero in the circuit's code";
    } else {
      o.path = Path::Native;
    }
    o.result = gen_.compute(inputs, dest, offset, timeout_ms, cancelled);
    if (o.path == Path::Native && o.result.kind == GenResult::Ok && want_program_ && may_build_ && !pending_.valid())
      start_build(inputs, w, o.result.ms);
    if (o.path == Path::Native && !why_logged_ && !runner_) {
      o.note = why_;
      why_logged_ = true;
    }
    return o;
  }

 private:
  static double now_ms() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
  }
  struct Built {
    std::optional<Program> program;
    std::string why;
  };
  // What an earlier process built: the program's stored layout, else the program, laid out here.
  void open_built() {
    const Manifest& m = gen_.manifest();
    if (auto sum = program_file_checksum(m.dir + "/program.bin")) {
      runner_ = ProgramRunner<Fr>::open_layout(m.dir + "/layout.bin", m.key, *sum);
      if (runner_) return why_.clear();
    }
    install(open_program(m, nullptr, &why_, log_));
  }
  // The runner keeps its own layout; the program itself (as large again) is not kept. The layout is
  // stored for the next process (not where the artefact cannot be written).
  void install(std::optional<Program> p) {
    if (!p) return;
    runner_ = std::make_unique<ProgramRunner<Fr>>(*p);
    why_.clear();
    const Manifest& m = gen_.manifest();
    try {
      runner_->save_layout(m.dir + "/layout.bin", m.key, program_checksum(*p));
    } catch (const WitnessError& e) {
      if (log_) log_(std::string("witness program: its layout is not stored: ") + e.what());
    }
  }
  // The sample is `inputs`, whose native witness (normal form) the generator just wrote to w.
  void start_build(const std::vector<Value>& inputs, const Fr* w, double native_ms) {
    auto native = std::make_shared<NativeSample>();
    native->witness.resize(gen_.manifest().n_witness);
    std::memcpy(native->witness.data(), w, native->witness.size() * sizeof(Value));
    native->ms = native_ms;
    auto job = [m = gen_.manifest(), sample = inputs, native, log = log_]() {
      Built b;
      b.program = open_program(m, &sample, &b.why, log, native.get());
      return b;
    };
    pending_ = std::async(build_ == Build::Wait ? std::launch::deferred : std::launch::async, std::move(job));
    if (build_ == Build::Wait) take_finished_build(true);
  }
  void take_finished_build(bool wait = false) {
    if (!pending_.valid()) return;
    if (!wait && pending_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    Built b = pending_.get();
    if (b.program) {
      install(std::move(b.program));
      return;
    }
    // A rejected sample leaves the next input to try; any other reason is final for this artefact.
    may_build_ = b.why.rfind("the sample input was rejected", 0) == 0;
    if (b.why != why_) why_logged_ = false;
    why_ = b.why;
  }

  Generator gen_;
  bool want_program_;
  Build build_;
  bool opened_ = false, may_build_ = true, why_logged_ = false;
  Log log_;
  std::string why_;
  std::unique_ptr<ProgramRunner<Fr>> runner_;
  std::future<Built> pending_;
};

// Writes a complete .wtns file (snarkjs's layout, byte for byte) for inputs, through e.
template <class Fr>
typename WitnessEngine<Fr>::Outcome write_wtns(WitnessEngine<Fr>& e, const std::vector<Value>& inputs,
                                               const std::string& path) {
  const Manifest& m = e.manifest();
  const std::string hdr = wtns_header(m);
  const uint64_t len = hdr.size() + uint64_t(m.n_witness) * 32;
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw WitnessError(tmp + ": cannot create: " + std::strerror(errno));
  void* map = MAP_FAILED;
  if (::write(fd, hdr.data(), hdr.size()) == ssize_t(hdr.size()) && ::ftruncate(fd, off_t(len)) == 0)
    map = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (map == MAP_FAILED) {
    ::unlink(tmp.c_str());
    throw WitnessError(tmp + ": cannot write: " + std::strerror(err));
  }
  Fr* w = reinterpret_cast<Fr*>(static_cast<char*>(map) + hdr.size());
  auto o = e.compute(inputs, w, tmp, hdr.size());
  if (o.result.kind == GenResult::Ok && o.path == WitnessEngine<Fr>::Path::Program)
    for (uint32_t i = 0; i < m.n_witness; i++) {
      const Value v = from_fr(w[i]);
      std::memcpy(&w[i], v.data(), sizeof v);
    }
  ::munmap(map, len);
  if (o.result.kind != GenResult::Ok) {
    ::unlink(tmp.c_str());
    return o;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw WitnessError(path + ": cannot write: " + std::strerror(errno));
  }
  return o;
}

}  // namespace cuzk::witness
