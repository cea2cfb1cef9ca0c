// One circuit's witness engine in one process: the compiled program where it exists and the input
// keeps to its guards, circom's native generator otherwise. The program is built on first use from
// the first input that circom accepts (open_program), once per artefact.
#pragma once
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "witness/generator.hpp"
#include "witness/program.hpp"
#include "witness/program_eval.hpp"

namespace cuzk::witness {

enum class Engine { Program, Native };

// "program" or "native"; nullopt for anything else.
std::optional<Engine> parse_engine(const std::string& s);

template <class Fr>
class WitnessEngine {
 public:
  enum class Path {
    Program,   // the compiled program wrote w, Montgomery form
    Native,    // the native generator wrote w, normal form (no program for this circuit)
    Fallback,  // the program refused this input (a guard), and the native generator wrote w, normal form
  };
  struct Outcome {
    GenResult result;
    Path path = Path::Native;
    std::string note;  // why the native generator ran, for Fallback and the first Native
  };

  WitnessEngine(Manifest m, Engine e, Log log) : gen_(std::move(m)), want_program_(e == Engine::Program), log_(std::move(log)) {
    if (!want_program_) why_ = "the native engine was chosen";
  }

  const Manifest& manifest() const { return gen_.manifest(); }
  bool has_program() const { return runner_ != nullptr; }
  const Program* program() const { return program_ ? &*program_ : nullptr; }
  // Why the circuit runs on the native generator ("" while the program is used).
  const std::string& why_native() const { return why_; }

  // Computes the witness of `inputs` into w, which is the same memory as the file `dest` at byte
  // `offset` (the native generator writes through the file). timeout_ms and cancelled apply to the
  // native generator; the program runs in a few milliseconds.
  Outcome compute(const std::vector<Value>& inputs, Fr* w, const std::string& dest, uint64_t offset,
                  uint32_t timeout_ms = 0, const std::function<bool()>& cancelled = {}) {
    Outcome o;
    if (want_program_ && !runner_ && may_build_) try_open(inputs);
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
      if (!why_logged_) {
        o.note = why_;
        why_logged_ = true;
      }
    }
    o.result = gen_.compute(inputs, dest, offset, timeout_ms, cancelled);
    return o;
  }

 private:
  static double now_ms() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
  }
  void try_open(const std::vector<Value>& sample) {
    std::string why;
    program_ = open_program(gen_.manifest(), &sample, &why, log_);
    if (program_) {
      runner_ = std::make_unique<ProgramRunner<Fr>>(*program_);
      why_.clear();
      return;
    }
    // A rejected sample leaves the next input to try; any other reason is final for this artefact.
    may_build_ = why.rfind("the sample input was rejected", 0) == 0;
    if (why != why_) why_logged_ = false;
    why_ = why;
  }

  Generator gen_;
  bool want_program_;
  bool may_build_ = true;
  bool why_logged_ = false;
  Log log_;
  std::string why_;
  std::optional<Program> program_;
  std::unique_ptr<ProgramRunner<Fr>> runner_;
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
