// One circuit's witness engine in one process: a compiled program where the input keeps to one's
// guards, circom's native generator otherwise. Until the artefact has a program, inputs run on the
// native generator, and the first one the circuit accepts becomes the program's sample: its native
// witness is what the program must reproduce (open_program), and the build runs once per artefact,
// either before compute() returns (Build::Wait, the command line) or on a thread of its own while
// later inputs keep running natively (Build::Background, the synthesis worker). An input that every
// program refuses is traced in the same way into a further path (add_path), so that after a few
// inputs each path the circuit's inputs take runs on a program of its own.
#pragma once
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
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
    Program,   // a compiled program wrote w, Montgomery form
    Native,    // the native generator wrote w, normal form (no program for this circuit yet, or ever)
    Fallback,  // every program refused this input (a guard), and the native generator wrote w, normal form
  };
  struct Outcome {
    GenResult result;
    Path path = Path::Native;
    uint32_t program = 0;  // for Program: which of the artefact's paths (program.hpp)
    bool traced = false;   // for Fallback: the input is being traced as a further path
    std::string note;      // why the native generator ran: for Fallback, and once for Native
  };

  WitnessEngine(Manifest m, Engine e, Log log, Build build = Build::Wait)
      : gen_(std::move(m)), want_program_(e == Engine::Program), build_(build), log_(std::move(log)) {
    if (!want_program_) why_ = "the native engine was chosen";
  }
  ~WitnessEngine() {
    if (pending_.valid()) pending_.wait();
  }

  const Manifest& manifest() const { return gen_.manifest(); }
  size_t programs() const { return runners_.size(); }

  // Computes the witness of `inputs` into w, which is the same memory as the file `dest` at byte
  // `offset` (the native generator writes through the file). timeout_ms and cancelled apply to the
  // native generator; a program runs in milliseconds. The programs are tried in turn, the one that
  // served last first; an input that all of them refuse runs on the native generator, and is then
  // traced as a further path (beside the work, or before returning with Build::Wait).
  Outcome compute(const std::vector<Value>& inputs, Fr* w, const std::string& dest, uint64_t offset,
                  uint32_t timeout_ms = 0, const std::function<bool()>& cancelled = {}) {
    Outcome o;
    take_finished_build();
    if (want_program_ && runners_.empty() && !opened_) {
      opened_ = true;
      open_built();
    }
    bool undefined = false;
    uint32_t guard = 0;
    for (size_t i = 0; i < runners_.size(); i++) {
      const double t0 = now_ms();
      const auto r = runners_[i].runner->run(inputs.data(), w);
      if (r.outcome == ProgramRunner<Fr>::Outcome::Ok) {
        o.path = Path::Program;
        o.program = runners_[i].path;
        o.result.kind = GenResult::Ok;
        o.result.ms = now_ms() - t0;
        std::rotate(runners_.begin(), runners_.begin() + std::ptrdiff_t(i), runners_.begin() + std::ptrdiff_t(i) + 1);
        return o;
      }
      undefined = undefined || r.outcome == ProgramRunner<Fr>::Outcome::Undefined;
      if (i == 0) guard = r.where;
    }
    if (!runners_.empty()) {
      o.path = Path::Fallback;
      o.note = undefined ? "the input divides by zero in the circuit's code"
                         : runners_.size() == 1
                               ? "the input takes another path than the program was traced on (guard " +
                                     std::to_string(guard) + ")"
                               : "the input takes another path than the " + std::to_string(runners_.size()) +
                                     " programs were traced on";
    }
    o.result = gen_.compute(inputs, dest, offset, timeout_ms, cancelled);
    const bool may = o.result.kind == GenResult::Ok && want_program_ && !pending_.valid();
    if (may && runners_.empty() && may_build_) {
      start_build(inputs, w, o.result.ms);
    } else if (may && o.path == Path::Fallback && !undefined && may_add_paths_) {
      o.traced = true;
      o.note += "; traced as a further path";
      start_path(inputs, w, o.result.ms);
    }
    if (o.path == Path::Native && !why_logged_ && runners_.empty()) {
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
  struct Loaded {
    uint32_t path;
    std::unique_ptr<ProgramRunner<Fr>> runner;
  };
  struct Built {
    std::vector<Loaded> runners;  // laid out (or mapped) beside the work
    std::string why;
    bool path0 = false;  // the build of the first program (else of a further path)
  };
  // A program ready to run: its stored layout mapped, else laid out here and the layout stored for
  // the next process (not where the artefact cannot be written).
  static Loaded load(const Manifest& m, uint32_t path, const Program* p, const Log& log) {
    Loaded l{path, nullptr};
    if (!p) {
      if (auto sum = program_file_checksum(program_path(m, path)))
        l.runner = ProgramRunner<Fr>::open_layout(layout_path(m, path), m.key, *sum);
      return l;
    }
    l.runner = std::make_unique<ProgramRunner<Fr>>(*p);
    try {
      l.runner->save_layout(layout_path(m, path), m.key, program_checksum(*p));
    } catch (const WitnessError& e) {
      if (log) log(std::string("witness program: its layout is not stored: ") + e.what());
    }
    return l;
  }
  // What earlier processes built: every path, each from its stored layout, else laid out here.
  void open_built() {
    const Manifest& m = gen_.manifest();
    Loaded first = load(m, 0, nullptr, log_);
    if (!first.runner) {
      auto p = open_program(m, nullptr, &why_, log_);
      if (!p) return;
      first = load(m, 0, &*p, log_);
    }
    runners_.push_back(std::move(first));
    for (uint32_t n = 1; n < kMaxPaths; n++) {
      Loaded l = load(m, n, nullptr, log_);
      if (!l.runner)
        if (auto p = read_path(m, n)) l = load(m, n, &*p, log_);
      if (l.runner) runners_.push_back(std::move(l));
    }
    why_.clear();
  }
  // The native witness (normal form) the generator just wrote to w, the reference of a trace.
  std::shared_ptr<NativeSample> native_of(const Fr* w, double native_ms) const {
    auto native = std::make_shared<NativeSample>();
    native->witness.resize(gen_.manifest().n_witness);
    std::memcpy(native->witness.data(), w, native->witness.size() * sizeof(Value));
    native->ms = native_ms;
    return native;
  }
  void launch(std::function<Built()> job) {
    pending_ = std::async(build_ == Build::Wait ? std::launch::deferred : std::launch::async, std::move(job));
    if (build_ == Build::Wait) take_finished_build(true);
  }
  // The first program, traced on `inputs`.
  void start_build(const std::vector<Value>& inputs, const Fr* w, double native_ms) {
    launch([m = gen_.manifest(), sample = inputs, native = native_of(w, native_ms), log = log_]() {
      Built b;
      b.path0 = true;
      auto p = open_program(m, &sample, &b.why, log, native.get());
      if (p) b.runners.push_back(load(m, 0, &*p, log));
      return b;
    });
  }
  // A further path, traced on `inputs`, which every program refused (or another process's, which
  // takes it); the paths other processes added meanwhile come with it.
  void start_path(const std::vector<Value>& inputs, const Fr* w, double native_ms) {
    std::vector<uint32_t> known;
    for (const Loaded& l : runners_) known.push_back(l.path);
    launch([m = gen_.manifest(), sample = inputs, native = native_of(w, native_ms), known, log = log_]() {
      auto accepts = [&](const Program& p) {
        std::vector<Fr> out(m.n_witness);
        return ProgramRunner<Fr>(p).run(sample.data(), out.data()).outcome == ProgramRunner<Fr>::Outcome::Ok;
      };
      NewPaths found = add_path(m, sample, *native, known, accepts, log);
      Built b;
      b.why = found.why;
      for (auto& [n, p] : found.programs) {
        Loaded l = load(m, n, nullptr, log);  // another process's, with its layout
        b.runners.push_back(l.runner ? std::move(l) : load(m, n, &p, log));
      }
      return b;
    });
  }
  void take_finished_build(bool wait = false) {
    if (!pending_.valid()) return;
    if (!wait && pending_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    Built b = pending_.get();
    // The newest first: the input that made it, and others on its path, come next.
    for (Loaded& l : b.runners)
      if (l.runner) runners_.insert(runners_.begin(), std::move(l));
    if (!b.runners.empty() && b.path0) return why_.clear();
    if (b.why.empty()) return;
    if (!b.path0) {  // no more paths from this process: the set is full, or tracing failed
      may_add_paths_ = false;
      if (log_) log_("witness program " + gen_.manifest().circuit + ": no further path: " + b.why);
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
  bool opened_ = false, may_build_ = true, may_add_paths_ = true, why_logged_ = false;
  Log log_;
  std::string why_;
  std::vector<Loaded> runners_;  // tried in this order
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
