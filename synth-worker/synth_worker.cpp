// cuzk-synth-worker: turns a witness into w, a = A*w, b = B*w, c = a o b (or w alone, where the GPU
// worker evaluates the rest: synthesis.abc = "gpu"), written straight into a shared-memory slot, for
// the device's GPU worker to prove from in place. Its main() and message
// loop are worker/worker_main.hpp's; this file holds its work.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <thread>

#include "config/config.hpp"
#include "groth16/formats.hpp"
#include "groth16/parallel.hpp"
#include "groth16/prover.hpp"
#include "shm/slot_ring.hpp"
#include "timeline/events.hpp"
#include "witness/build.hpp"
#include "witness/engine.hpp"
#include "witness/generator.hpp"
#include "witness/inputs.hpp"
#include "worker/worker_main.hpp"

using namespace cuzk;
using namespace cuzk::shm;
using cuzk::worker::WorkerArgs;
using cuzk::worker::WorkerLink;
using cuzk::worker::current_affinity;

namespace {

// Errors that retrying cannot fix: the job's input (one on which the witness generator runs past
// synthesis.witness_timeout_s included), or its circuit's files (a malformed or mismatched zkey,
// r1cs or witness generator). Reported as kBadInput: the job fails at once with
// the message.
struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A witness computed from inputs into a slot: the engine's result, which engine ran, and why the
// native generator ran when the circuit has a program.
struct WitnessRun {
  witness::GenResult result;
  WitnessEngine engine = WitnessEngine::None;
  bool traced = false;  // with Fallback: the input is being traced as a further path
  std::string note;
  uint32_t program = 0;  // with Program: which path's program
};

// Which version of a file a circuit was loaded from: a file written again, or replaced by a
// rename, has another inode, size or modification time. All zero for a file that cannot be stat'ed.
struct FileStamp {
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_s = 0, mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

FileStamp stamp_of(const std::string& path) {
  struct stat st{};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return {};
  return {uint64_t(st.st_dev), uint64_t(st.st_ino), uint64_t(st.st_size), int64_t(st.st_mtim.tv_sec),
          int64_t(st.st_mtim.tv_nsec)};
}

// The circuit's files whose content its loaded form depends on: the zkey (sizes, evaluator) and the
// r1cs.
std::vector<FileStamp> stamps_of(const config::CircuitConfig& cc) { return {stamp_of(cc.zkey), stamp_of(cc.r1cs)}; }

// A circuit as the worker loaded it on first use, and again whenever its files change: its sizes,
// and behind the virtual functions its curve's witness engine, compiled evaluator and optional
// r1cs, working on a slot's vectors as that curve's field elements.
struct Circuit {
  std::string name;
  uint32_t n_vars = 0, n_public = 0, domain_size = 0;
  std::vector<FileStamp> stamps;  // of its files, taken before they were read (stamps_of)
  virtual ~Circuit() = default;
  // The witness engine for jobs that bring inputs: the compiled program where it can be used, the
  // native generator otherwise (its process started on the first job).
  virtual void set_engine(witness::Manifest m, witness::Engine e) = 0;
  virtual const witness::Manifest* manifest() const = 0;  // nullptr: the circuit has no witness_generator
  // The witness of `inputs` into the slot's w, Montgomery form. `dest` and `offset` name w as a file
  // for the native generator (the segment under /dev/shm).
  virtual WitnessRun compute_witness(const std::vector<witness::Value>& inputs, Segment& seg, uint32_t slot,
                                     const std::string& dest, uint64_t offset, uint32_t timeout_ms,
                                     const std::function<bool()>& cancelled) = 0;
  virtual bool has_r1cs() const = 0;
  // The .wtns at path into the slot's w; FormatError/std::invalid_argument for a bad file, BadInput
  // when w[0] is not 1.
  virtual void read_wtns(const std::string& path, Segment& seg, uint32_t slot) const = 0;
  // The slot's w from the normal form the witness generator writes to Montgomery form; the index
  // of the first value outside the field, or SIZE_MAX.
  virtual size_t to_montgomery(Segment& seg, uint32_t slot) const = 0;
  // Throws BadInput naming the first constraint the slot's w does not satisfy.
  virtual void check_satisfied(Segment& seg, uint32_t slot, const std::string& path) const = 0;
  // a = A w, b = B w, c = a o b into the slot.
  virtual void evaluate(Segment& seg, uint32_t slot) const = 0;
};

template <class C>
struct CircuitOn : Circuit {
  using Fr = typename C::Fr;
  groth16::ConstraintEvaluator<C> ev;
  std::unique_ptr<groth16::R1cs<C>> r1cs;
  std::unique_ptr<witness::WitnessEngine<Fr>> engine;

  void set_engine(witness::Manifest m, witness::Engine e) override {
    const std::string prefix = "cuzk-synth-worker: circuit " + name + ": ";
    // The program is built beside the work: inputs run natively until it is ready.
    engine = std::make_unique<witness::WitnessEngine<Fr>>(
        std::move(m), e, [prefix](const std::string& line) { std::fprintf(stderr, "%s%s\n", prefix.c_str(), line.c_str()); },
        witness::WitnessEngine<Fr>::Build::Background);
  }
  const witness::Manifest* manifest() const override { return engine ? &engine->manifest() : nullptr; }
  WitnessRun compute_witness(const std::vector<witness::Value>& inputs, Segment& seg, uint32_t slot,
                             const std::string& dest, uint64_t offset, uint32_t timeout_ms,
                             const std::function<bool()>& cancelled) override {
    using Path = typename witness::WitnessEngine<Fr>::Path;
    auto o = engine->compute(inputs, seg.w<Fr>(slot), dest, offset, timeout_ms, cancelled);
    WitnessRun r{std::move(o.result), WitnessEngine::None, o.traced, std::move(o.note), o.program};
    r.engine = o.path == Path::Program    ? WitnessEngine::Program
               : o.path == Path::Fallback ? WitnessEngine::Fallback
                                          : WitnessEngine::Native;
    // The native generator writes normal-form values; the prover works in Montgomery form.
    if (r.result.kind == witness::GenResult::Ok && o.path != Path::Program)
      if (size_t bad = to_montgomery(seg, slot); bad != SIZE_MAX)
        throw std::runtime_error("witness generator of circuit " + name + " wrote value " + std::to_string(bad) +
                                 " outside the field");
    return r;
  }

  bool has_r1cs() const override { return r1cs != nullptr; }
  void read_wtns(const std::string& path, Segment& seg, uint32_t slot) const override {
    groth16::read_wtns_into<C>(path, seg.w<Fr>(slot), n_vars);
    // The constant wire: another value may still satisfy the r1cs, and no verifier accepts the proof.
    if (!(seg.w<Fr>(slot)[0] == Fr::one()))
      throw BadInput("witness " + path + ": its first value w[0], the constant wire, is not 1");
  }
  size_t to_montgomery(Segment& seg, uint32_t slot) const override {
    Fr* w = seg.w<Fr>(slot);
    std::atomic<size_t> bad{SIZE_MAX};
    parallel_for(n_vars, [&](size_t lo, size_t hi, size_t) {
      for (size_t i = lo; i < hi; i++) {
        typename Fr::Repr v;
        std::memcpy(v.l, &w[i], sizeof v.l);
        if (!Fr::is_canonical(v.l)) {
          bad.store(i);
          return;
        }
        w[i] = Fr::from_plain(v);
      }
    });
    return bad.load();
  }
  void check_satisfied(Segment& seg, uint32_t slot, const std::string& path) const override {
    const Fr* w = seg.w<Fr>(slot);
    const auto& cons = r1cs->constraints;
    std::vector<size_t> first_bad(thread_count() + 1, SIZE_MAX);
    auto dot = [&](const std::vector<groth16::LinearTerm<C>>& lc) {
      Fr acc = Fr::zero();
      for (const auto& t : lc) acc += t.coeff * w[t.wire];
      return acc;
    };
    parallel_for(cons.size(), [&](size_t lo, size_t hi, size_t chunk) {
      for (size_t i = lo; i < hi; i++)
        if (dot(cons[i].a) * dot(cons[i].b) != dot(cons[i].c)) {
          first_bad[chunk] = i;
          return;
        }
    });
    size_t bad = *std::min_element(first_bad.begin(), first_bad.end());
    if (bad != SIZE_MAX)
      throw BadInput("witness " + path + " does not satisfy constraint " + std::to_string(bad) + " of circuit " + name);
  }
  void evaluate(Segment& seg, uint32_t slot) const override {
    ev.evaluate_into(seg.w<Fr>(slot), seg.a<Fr>(slot), seg.b<Fr>(slot), seg.c<Fr>(slot));
  }
};

// Loads the curve-specific half of a circuit: the evaluator (mapped from the cache file every worker
// shares, built by the first worker to get here) and the r1cs when configured.
template <class C>
std::unique_ptr<Circuit> load_circuit(const config::CircuitConfig& cc, const std::string& state_dir) {
  auto c = std::make_unique<CircuitOn<C>>();
  c->name = cc.name;
  EvaluatorCacheReport rep;
  const std::string dir = (std::filesystem::path(state_dir) / "evaluator").string();
  c->ev = groth16::ConstraintEvaluator<C>::open_cached(cc.zkey, dir, &rep);
  c->n_vars = rep.zkey.n_vars;
  c->n_public = rep.zkey.n_public;
  c->domain_size = rep.zkey.domain_size;
  using O = EvaluatorCacheReport::Outcome;
  const char* what = rep.outcome == O::Built ? "built" : rep.outcome == O::Hit ? "mapped" : "NOT cached, compiled in memory";
  if (!rep.reason.empty())
    std::fprintf(stderr, "cuzk-synth-worker: circuit %s: evaluator %s (%s) in %.0f ms: %s\n", cc.name.c_str(), what,
                 rep.path.c_str(), rep.ms, rep.reason.c_str());
  if (!cc.r1cs.empty()) {
    check_same_curve(cc.zkey, C::id, cc.r1cs, r1cs_curve(cc.r1cs));
    c->r1cs = std::make_unique<groth16::R1cs<C>>(groth16::read_r1cs<C>(cc.r1cs));
    if (c->r1cs->n_wires != c->n_vars)
      throw BadInput("circuit " + cc.name + ": r1cs " + cc.r1cs + " has " + std::to_string(c->r1cs->n_wires) +
                     " wires, its zkey has nVars=" + std::to_string(c->n_vars));
  }
  return c;
}

struct Cancelled {};

class SynthWorker {
 public:
  SynthWorker(config::Config cfg, WorkerArgs args)
      : cfg_(std::move(cfg)), args_(args), link_(args, cfg_.daemon.heartbeat_interval_ms) {
    if (const char* d = std::getenv("CUZK_TEST_SYNTH_DELAY_MS")) delay_ms_ = std::atoi(d);
  }

  int run() {
    for (int d : cfg_.gpu.devices) segments_[d] = Segment::open(args_.ring, d);
    link_.start_heartbeat();
    const Msg hello = Msg::hello(0, uint32_t(thread_count()), 0, "", current_affinity());
    return worker::serve(link_, hello, MsgType::Synthesize, [this](const Msg& m) {
      handle(m.body.synthesize);
      return true;
    });
  }

 private:
  // Loads the circuit's CSR matrices from its zkey, and its r1cs when configured: on first use, and
  // again when one of those files has changed since (an operator replaced a key, or put a file
  // back that had been replaced for a while), so that what was read from another version of the
  // files is not kept for the worker's lifetime.
  Circuit& circuit(uint32_t idx) {
    if (idx >= cfg_.circuits.size()) config::load_runtime_circuits(cfg_);  // one added at run time
    if (idx >= cfg_.circuits.size()) throw std::runtime_error("no circuit " + std::to_string(idx) + " in the config");
    const config::CircuitConfig& cc = cfg_.circuits[idx];
    // Taken before the files are read: a change while they are read is seen at the next use.
    std::vector<FileStamp> stamps = stamps_of(cc);
    auto it = circuits_.find(idx);
    if (it != circuits_.end()) {
      if (it->second->stamps == stamps) return *it->second;
      std::fprintf(stderr, "cuzk-synth-worker: circuit %s: its zkey or r1cs changed since it was loaded; loading it again\n",
                   cc.name.c_str());
      circuits_.erase(it);
    }
    // A file of the circuit that cannot be read as what it should be fails every job alike: not
    // retried. Other errors (memory, a full disk while caching the evaluator) may pass.
    try {
      std::unique_ptr<Circuit> c = with_curve(zkey_curve(cc.zkey), [&]<class C>() {
        return load_circuit<C>(cc, cfg_.daemon.state_dir);
      });
      if (!cc.witness_generator.empty()) {
        witness::Manifest m = witness::open_generator(cc.witness_generator, cfg_.daemon.state_dir + "/witness");
        if (m.n_witness != c->n_vars)
          throw BadInput("circuit " + cc.name + ": its witness generator makes " + std::to_string(m.n_witness) +
                         " values, its zkey has nVars=" + std::to_string(c->n_vars));
        c->set_engine(std::move(m), *witness::parse_engine(cfg_.synthesis.witness_engine));
      }
      c->stamps = std::move(stamps);
      return *circuits_.emplace(idx, std::move(c)).first->second;
    } catch (const FormatError& e) {
      throw BadInput("circuit " + cc.name + " cannot be used: " + e.what());
    } catch (const witness::WitnessError& e) {
      throw BadInput("circuit " + cc.name + " cannot be used: " + e.what());
    }
  }

  // Computes the witness of the inputs at `path` with the circuit's engine, straight into the slot.
  WitnessRun witness_from_inputs(Circuit& c, const std::string& path, Segment& seg, uint32_t slot) {
    if (!c.manifest()) throw BadInput("circuit " + c.name + " has no witness_generator: its jobs must bring .wtns files");
    std::vector<witness::Value> inputs;
    try {
      inputs = witness::read_inputs_file(path, *c.manifest(), cfg_.limits.max_upload_bytes);
    } catch (const witness::InputError& e) {
      throw BadInput(e.what());
    }
    char* w = seg.w<char[kElemBytes]>(slot)[0];
    const uint64_t offset = uint64_t(w - static_cast<char*>(seg.base()));
    WitnessRun run = c.compute_witness(inputs, seg, slot, "/dev/shm/" + seg.name(), offset,
                                       cfg_.synthesis.witness_timeout_s * 1000u,
                                       [&] { return seg.cancelled(slot); });
    if (!run.note.empty())
      std::fprintf(stderr, "cuzk-synth-worker: circuit %s: %s: %s\n", c.name.c_str(),
                   run.engine == WitnessEngine::Fallback ? "this input runs on the native generator"
                                                   : "the native witness generator runs its inputs",
                   run.note.c_str());
    const witness::GenResult& r = run.result;
    switch (r.kind) {
      case witness::GenResult::Ok: break;
      case witness::GenResult::Cancelled: throw Cancelled{};
      case witness::GenResult::Assert: throw BadInput("inputs " + path + " do not satisfy circuit " + c.name + ": " + r.message);
      case witness::GenResult::Timeout:
        // The generator is deterministic: on these inputs it would run as long again, so another
        // attempt only holds a worker for the same time once more.
        throw BadInput("inputs " + path + " of circuit " + c.name + ": " + r.message +
                       " (synthesis.witness_timeout_s); not retried");
      case witness::GenResult::Crashed:
        throw std::runtime_error("witness generator of circuit " + c.name + " crashed: " + r.message);
    }
    return run;
  }

  static void check_cancel(const Segment& seg, uint32_t slot) {
    if (seg.cancelled(slot)) throw Cancelled{};
  }

  void handle(const Synthesize& msg) {
    const uint64_t t0 = monotonic_ns();
    const SlotWork& req = msg.work;
    int32_t status = kOk;
    std::string error;
    const std::string kv_base = tl::Kv()
                                    .add(tl::kPartition, req.partition)
                                    .add(tl::kWorker, "synth" + std::to_string(args_.index))
                                    .add(tl::kSlot, req.slot)
                                    .add(tl::kDevice, req.device)
                                    .str();
    link_.event(tl::kSynthStart, req.job, kv_base);
    auto seg_it = segments_.find(req.device);
    Segment* seg = seg_it == segments_.end() ? nullptr : seg_it->second.get();
    const bool from_inputs = msg.from_inputs != 0;
    double witness_ms = 0, eval_ms = 0;
    WitnessRun wrun;
    try {
      if (!seg) throw std::runtime_error("no slot ring for device " + std::to_string(req.device));
      if (seg->state(req.slot) != SlotState::Synthesizing ||
          !seg->owned_by(req.slot, link_.owner(), req.job, req.partition))
        throw std::runtime_error("slot " + std::to_string(req.slot) + " is not assigned to this worker");
      SlotHeader& h = seg->slot(req.slot);
      Circuit& c = circuit(req.circuit);
      check_cancel(*seg, req.slot);
      const uint64_t tw = monotonic_ns();  // after the circuit's first-use loading
      const std::string path = msg.input;
      const auto& hdr = seg->header();
      // The rings are sized at start from the zkeys then: a key replaced since by a larger one
      // cannot be proved by any attempt until the daemon starts again.
      if (c.n_vars > hdr.max_vars || c.domain_size > hdr.max_domain)
        throw BadInput("circuit " + c.name + ": its zkey " + cfg_.circuits[req.circuit].zkey + " (nVars=" +
                       std::to_string(c.n_vars) + ", domain " + std::to_string(c.domain_size) +
                       ") does not fit the slot ring (sized at start for nVars=" + std::to_string(hdr.max_vars) +
                       ", domain " + std::to_string(hdr.max_domain) + ")");
      // The witness goes straight into the slot.
      if (from_inputs) {
        wrun = witness_from_inputs(c, path, *seg, req.slot);
      } else {
        try {
          c.read_wtns(path, *seg, req.slot);
        } catch (const FormatError& e) {
          throw BadInput(e.what());
        } catch (const std::invalid_argument& e) {
          throw BadInput(e.what());
        }
      }
      if (c.has_r1cs()) c.check_satisfied(*seg, req.slot, path);
      const uint64_t t1 = monotonic_ns();
      witness_ms = double(t1 - tw) / 1e6;
      // Test hook: stretch synthesis so that process tests can kill a worker in the middle of it.
      for (int t = 0; t < delay_ms_; t += 10) {
        check_cancel(*seg, req.slot);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      check_cancel(*seg, req.slot);
      // a, b, c into the slot, unless the GPU worker evaluates them from w (synthesis.abc = "gpu").
      const uint64_t t2 = monotonic_ns();
      if (seg->abc_in_slots()) c.evaluate(*seg, req.slot);
      eval_ms = double(monotonic_ns() - t2) / 1e6;
      check_cancel(*seg, req.slot);
      h.n_vars = c.n_vars;
      h.domain_size = c.domain_size;
      h.synth_end_ns = monotonic_ns();
      if (!seg->transition(req.slot, SlotState::Synthesizing, SlotState::Ready))
        throw std::runtime_error("slot " + std::to_string(req.slot) + " was taken away during synthesis");
      worker::test_crash_point("synth-ready");
    } catch (const Cancelled&) {
      seg->transition(req.slot, SlotState::Synthesizing, SlotState::Free);
      status = kCancelled, error = "cancelled";
    } catch (const BadInput& e) {
      if (seg) seg->transition(req.slot, SlotState::Synthesizing, SlotState::Free);
      status = kBadInput, error = e.what();
    } catch (const std::exception& e) {
      if (seg) seg->transition(req.slot, SlotState::Synthesizing, SlotState::Free);
      status = kFailed, error = e.what();
    }
    if (status != kOk) worker::test_crash_point("synth-freed");  // its slot freed, unreported
    const double synth_ms = double(monotonic_ns() - t0) / 1e6;
    tl::Kv kv;
    kv.raw(kv_base)
        .ms(tl::kSynthMs, synth_ms)
        .ms(tl::kWitnessMs, witness_ms)
        .ms(tl::kEvalMs, eval_ms)
        .add(tl::kSource, from_inputs ? tl::kSourceInputs : tl::kSourceWtns);
    if (wrun.engine != WitnessEngine::None)
      kv.add(tl::kWitnessEngine, wrun.engine == WitnessEngine::Program    ? tl::kEngineProgram
                                 : wrun.engine == WitnessEngine::Fallback ? tl::kEngineFallback
                                                                          : tl::kEngineNative);
    if (wrun.engine == WitnessEngine::Program) kv.add(tl::kWitnessPath, wrun.program);
    if (wrun.engine == WitnessEngine::Fallback) kv.add(tl::kWitnessNote, wrun.note);
    if (wrun.traced) kv.add(tl::kWitnessTrace, 1);
    kv.add(tl::kStatus, status);
    link_.event(tl::kSynthEnd, req.job, kv.str());
    link_.send(Msg::synth_done(req, status, wrun.engine, synth_ms, witness_ms, eval_ms, error, wrun.traced));
  }

  config::Config cfg_;
  WorkerArgs args_;
  WorkerLink link_;
  int delay_ms_ = 0;
  std::map<int, std::unique_ptr<Segment>> segments_;
  std::map<uint32_t, std::unique_ptr<Circuit>> circuits_;
};

}  // namespace

int main(int argc, char** argv) {
  worker::WorkerProgram program;
  program.name = "cuzk-synth-worker";
  program.placement = [](const config::Config& c) {
    return worker::Placement{c.synthesis.workers, "synthesis.workers = " + std::to_string(c.synthesis.workers),
                             &c.synthesis.cpus, "synthesis.cpus", c.synthesis.threads};
  };
  program.run = [](config::Config cfg, const WorkerArgs& args) { return SynthWorker(std::move(cfg), args).run(); };
  return worker::worker_main(argc, argv, program);
}
