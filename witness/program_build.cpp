// Building a compiled witness program: the artefact's tracer runs circom's code once on a sample,
// the trace is optimised here, and the result must reproduce circom before it is kept.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "math/curves.hpp"
#include "witness/build_tools.hpp"
#include "witness/file_lock.hpp"
#include "witness/generator.hpp"
#include "witness/program.hpp"
#include "witness/program/ops.hpp"
#include "witness/program_runner.hpp"
#include "witness/scratch.hpp"
#include "witness/tool.hpp"

namespace cuzk::witness {

namespace fs = std::filesystem;

namespace {

// The tracer runs the circuit once, at circom's own speed plus one table entry per operation: about
// 30 times the native generator's time on a bit-heavy circuit. It may take 100 times the native
// run on the same sample (at least a minute, at most half an hour) before it is stopped.
rlim_t tracer_cpu_seconds(double native_ms) {
  return rlim_t(std::clamp(native_ms / 1000 * 100, 60.0, 1800.0));
}

double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tail(const std::string& s, size_t n) { return s.size() > n ? "..." + s.substr(s.size() - n) : s; }

// Runs the tracer with output to log (a fresh one), under a keeper (witness/tool.hpp): if this
// process dies, the tracer dies with it. Its exit status, 128 + signal when killed.
int run_tracer(const std::vector<std::string>& argv, const std::string& log, rlim_t cpu_seconds) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw WitnessError(log + ": " + std::strerror(errno));
  pid_t pid = -1;
  try {
    pid = start_tool(argv, fd, cpu_seconds);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return build_tools::wait_for(pid);
}

// A file the tracer wrote, read with bounds checks (it is ours, but a short write must not be read
// past its end).
class Reader {
 public:
  Reader(std::string data, std::string name) : d_(std::move(data)), name_(std::move(name)) {}
  template <class T>
  void get(T* out, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes / sizeof(T) != n || d_.size() - pos_ < bytes) throw WitnessError(name_ + ": truncated");
    if (bytes) std::memcpy(out, d_.data() + pos_, bytes);
    pos_ += bytes;
  }
  template <class T>
  T get() {
    T v;
    get(&v, 1);
    return v;
  }
  bool done() const { return pos_ == d_.size(); }

 private:
  std::string d_, name_;
  size_t pos_ = 0;
};

struct RawNode {
  uint32_t op, a, b;
};
struct RawGuard {
  uint32_t node, kind;
  Value value;
};

constexpr unsigned kArity[] = {
#define CUZK_OP_ARITY(name, arity) arity,
    CUZK_WITNESS_OPS(CUZK_OP_ARITY)
#undef CUZK_OP_ARITY
};

// The trace as a program: only what a witness value or a guard needs, renumbered into one value
// space (inputs, then the constants still used, then the operations).
Program optimise(const std::string& trace_path, const Manifest& m, ProgramBuildReport* rep) {
  Reader r(slurp(trace_path), trace_path);
  char magic[8];
  r.get(magic, 8);
  if (std::memcmp(magic, program::kTraceMagic, 8) != 0) throw WitnessError(trace_path + ": not a trace");
  const uint32_t n_inputs = r.get<uint32_t>(), n_witness = r.get<uint32_t>();
  uint64_t counts[3];
  r.get(counts, 3);
  if (n_inputs != m.n_inputs || n_witness != m.n_witness)
    throw WitnessError(trace_path + ": the trace's sizes differ from the manifest's");
  if (counts[0] > 0xffffffffull || counts[1] > counts[0] || counts[2] > (1ull << 32))
    throw WitnessError(trace_path + ": implausible sizes");
  std::vector<Value> consts(counts[1]);
  std::vector<RawNode> nodes(counts[0]);
  std::vector<RawGuard> guards(counts[2]);
  std::vector<uint32_t> outputs(n_witness);
  r.get(consts.data(), consts.size());
  r.get(nodes.data(), nodes.size());
  r.get(guards.data(), guards.size());
  r.get(outputs.data(), outputs.size());
  if (!r.done()) throw WitnessError(trace_path + ": trailing bytes");
  for (size_t i = 0; i < nodes.size(); i++) {
    const RawNode& n = nodes[i];
    const bool ok = n.op < program::kOpCount &&
                    (n.op == program::Input  ? n.a < n_inputs
                     : n.op == program::Const ? n.a < consts.size()
                                              : n.a < i && (kArity[n.op] < 2 || n.b < i));
    if (!ok) throw WitnessError(trace_path + ": node " + std::to_string(i) + " is malformed");
  }
  for (const RawGuard& g : guards)
    if (g.node >= nodes.size()) throw WitnessError(trace_path + ": a guard names no node");
  for (uint32_t o : outputs)
    if (o >= nodes.size()) throw WitnessError(trace_path + ": an output names no node");

  // Liveness, backwards: operands of a live node are live.
  std::vector<uint8_t> live(nodes.size(), 0);
  for (uint32_t o : outputs) live[o] = 1;
  for (const RawGuard& g : guards) live[g.node] = 1;
  for (size_t i = nodes.size(); i-- > 0;) {
    if (!live[i] || kArity[nodes[i].op] == 0) continue;
    live[nodes[i].a] = 1;
    if (kArity[nodes[i].op] == 2) live[nodes[i].b] = 1;
  }
  Program p;
  p.key = m.key;
  p.prime = m.prime;
  p.n_inputs = n_inputs;
  p.n_witness = n_witness;
  std::vector<uint32_t> index(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); i++) {
    if (nodes[i].op == program::Input) index[i] = nodes[i].a;
    else if (nodes[i].op == program::Const && live[i]) {
      index[i] = uint32_t(n_inputs + p.consts.size());
      p.consts.push_back(consts[nodes[i].a]);
    }
  }
  const uint32_t first = p.first_node();
  for (size_t i = 0; i < nodes.size(); i++) {
    const RawNode& n = nodes[i];
    if (!live[i] || kArity[n.op] == 0) continue;
    index[i] = uint32_t(first + p.nodes.size());
    p.nodes.push_back(ProgramNode{n.op, index[n.a], kArity[n.op] == 2 ? index[n.b] : 0});
  }
  for (const RawGuard& g : guards) p.guards.push_back(ProgramGuard{index[g.node], g.kind, g.value});
  for (uint32_t o : outputs) p.outputs.push_back(index[o]);
  if (rep) rep->traced_nodes = nodes.size();
  return p;
}

template <class C>
void check_selftest(const std::string& path, ProgramBuildReport* rep) {
  using Fr = typename C::Fr;
  Reader r(slurp(path), path);
  char magic[8];
  r.get(magic, 8);
  if (std::memcmp(magic, program::kSelftestMagic, 8) != 0) throw WitnessError(path + ": not a self-test");
  const uint64_t n = r.get<uint64_t>();
  if (n > (1u << 24)) throw WitnessError(path + ": implausible size");
  std::vector<uint32_t> ops(n);
  std::vector<std::array<Value, 3>> rec(n);
  r.get(ops.data(), n);
  r.get(rec.data(), n);
  for (uint64_t i = 0; i < n; i++) {
    const auto& [a, b, want] = rec[i];
    if (ops[i] >= program::kOpCount || kArity[ops[i]] == 0) throw WitnessError(path + ": unknown operation");
    bool undefined = false;
    const Fr got = program::apply<Fr>(ops[i], to_fr<Fr>(a), to_fr<Fr>(b), undefined);
    if (undefined || from_fr(got) != want)
      throw WitnessError("the program evaluator and circom's runtime disagree on operation " +
                         std::string(program::op_name(ops[i])) + " (" + hex_of(a) + ", " + hex_of(b) +
                         "): circom gives " + hex_of(want) + ", cuzk " + (undefined ? "undefined" : hex_of(from_fr(got))));
  }
  if (rep) rep->selftest_cases = uint32_t(n);
}

// The native generator's witness for the sample (normal form), and the time it took.
std::vector<Value> native_witness(const Manifest& m, const std::vector<Value>& sample, const std::string& scratch,
                                  double* ms) {
  const std::string native = scratch + "/native.bin";
  {
    int fd = ::open(native.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ::ftruncate(fd, off_t(uint64_t(m.n_witness) * 32)) != 0) {
      if (fd >= 0) ::close(fd);
      throw WitnessError(native + ": cannot create: " + std::strerror(errno));
    }
    ::close(fd);
  }
  Generator gen(m);
  GenResult g = gen.compute(sample, native, 0);
  if (g.kind == GenResult::Assert) throw SampleRejected(g.message);
  if (g.kind != GenResult::Ok) throw WitnessError("the native generator failed on the sample: " + g.message);
  const std::string bytes = slurp(native);
  if (bytes.size() != uint64_t(m.n_witness) * 32) throw WitnessError(native + ": short");
  std::vector<Value> w(m.n_witness);
  std::memcpy(w.data(), bytes.data(), bytes.size());
  *ms = g.ms;
  return w;
}

template <class C>
void check_sample(const Program& p, const Manifest& m, const std::vector<Value>& sample,
                  const std::vector<Value>& want) {
  using Fr = typename C::Fr;
  ProgramRunner<Fr> run(p);
  std::vector<Fr> w(m.n_witness);
  const auto res = run.run(sample.data(), w.data());
  if (res.outcome != ProgramRunner<Fr>::Outcome::Ok)
    throw WitnessError("the program fails its own guard " + std::to_string(res.where) + " on the sample it was traced on");
  for (uint32_t i = 0; i < m.n_witness; i++) {
    if (from_fr(w[i]) != want[i])
      throw WitnessError("the program's witness differs from the native generator's at value " + std::to_string(i));
  }
}

template <class F>
void with_prime(const Manifest& m, F&& f) {
  const std::string c = m.curve();
  if (c == "bls12381") f.template operator()<Bls12_381>();
  else if (c == "bn128") f.template operator()<Bn254>();
  else throw WitnessError("the circuit's prime is neither BLS12-381's nor BN254's scalar field");
}


}  // namespace

Program build_program(const Manifest& m, const std::vector<Value>& sample, const NativeSample* native,
                      const Log& log, ProgramBuildReport* rep) {
  const std::string tracer = m.dir + "/tracer";
  if (::access(tracer.c_str(), X_OK) != 0) {
    const std::string why = slurp(m.dir + "/tracer.failed");
    throw WitnessError(why.empty() ? "the artefact " + m.dir + " has no tracer (built by an older cuzk: rebuild it)"
                                   : "the artefact's tracer could not be built: " + why);
  }
  if (sample.size() != m.n_inputs) throw WitnessError("the sample has the wrong number of inputs");
  // What a killed build left in the artefact goes first; this build's folder is locked while in use.
  sweep_scratch(m.dir);
  const ScratchDir dir(m.dir, "program");
  const fs::path& scratch = dir.path();
  ProgramBuildReport local;
  if (!rep) rep = &local;
  const std::string inputs = (scratch / "sample.bin").string(), out = (scratch / "trace.bin").string(),
                    st = (scratch / "selftest.bin").string(), tlog = (scratch / "tracer.log").string();
  {
    std::ofstream f(inputs, std::ios::binary);
    f.write(reinterpret_cast<const char*>(sample.data()), std::streamsize(sample.size() * sizeof(Value)));
    if (!f) throw WitnessError(inputs + ": cannot write");
  }
  // The native generator first: what the program must reproduce, and how long the tracer may run.
  NativeSample own;
  if (!native) {
    own.witness = native_witness(m, sample, scratch.string(), &own.ms);
    native = &own;
  }
  if (native->witness.size() != m.n_witness) throw WitnessError("the sample's native witness has the wrong length");
  double t0 = now_ms();
  if (log) log("witness program " + m.circuit + ": tracing circom's generator on the sample");
  const int rc = run_tracer({tracer, "--trace", m.dat_path(), inputs, out}, tlog, tracer_cpu_seconds(native->ms));
  if (rc != 0) {
    const std::string o = slurp(tlog);
    // circom's C++ says "Failed assert in ...", the wasm driver "Assert Failed. ..." as snarkjs does.
    size_t fa = o.find("Failed assert");
    if (fa == std::string::npos) fa = o.find("Assert Failed.");
    if (fa != std::string::npos) throw SampleRejected(o.substr(fa, o.find('\n', fa) - fa));
    throw WitnessError("the tracer " + std::string(rc > 128 ? "was killed by signal " + std::to_string(rc - 128)
                                                            : "exited with status " + std::to_string(rc)) +
                       ": " + tail(o, 600));
  }
  Program p = optimise(out, m, rep);
  rep->trace_ms = now_ms() - t0;
  t0 = now_ms();
  if (run_tracer({tracer, "--selftest", st}, tlog, tracer_cpu_seconds(0)) != 0) throw WitnessError("the tracer's self-test failed: " + tail(slurp(tlog), 600));
  with_prime(m, [&]<class C>() {
    check_selftest<C>(st, rep);
    check_sample<C>(p, m, sample, native->witness);
  });
  rep->check_ms = now_ms() - t0;
  if (log)
    log("witness program " + m.circuit + ": " + std::to_string(p.nodes.size()) + " operations (of " +
        std::to_string(rep->traced_nodes) + " traced), " + std::to_string(p.guards.size()) + " guards, " +
        std::to_string(p.consts.size()) + " constants; traced in " + std::to_string(int(rep->trace_ms)) +
        " ms, checked in " + std::to_string(int(rep->check_ms)) + " ms");
  return p;
}

std::string program_path(const Manifest& m, uint32_t path) {
  return m.dir + (path ? "/program-" + std::to_string(path) + ".bin" : std::string("/program.bin"));
}
std::string layout_path(const Manifest& m, uint32_t path) {
  return m.dir + (path ? "/layout-" + std::to_string(path) + ".bin" : std::string("/layout.bin"));
}

namespace {

// The program in `path` when it is there, readable and this artefact's; log says why not otherwise.
std::optional<Program> current_program(const Manifest& m, const std::string& path, const Log& log) {
  if (::access(path.c_str(), R_OK) != 0) return std::nullopt;
  try {
    Program p = read_program(path);
    if (p.key == m.key && p.n_inputs == m.n_inputs && p.n_witness == m.n_witness && p.prime == m.prime) return p;
    if (log) log("witness program " + path + " belongs to another build: rebuilding it");
  } catch (const WitnessError& e) {
    if (log) log(std::string("witness program: ") + e.what() + ": rebuilding it");
  }
  return std::nullopt;
}

uint64_t file_bytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

}  // namespace

std::optional<Program> read_path(const Manifest& m, uint32_t path) { return current_program(m, program_path(m, path), {}); }

NewPaths add_path(const Manifest& m, const std::vector<Value>& sample, const NativeSample& native,
                  const std::vector<uint32_t>& known, const std::function<bool(const Program&)>& accepts,
                  const Log& log) {
  NewPaths out;
  FileLock lock(m.dir + "/.program.lock");
  uint64_t bytes = file_bytes(program_path(m, 0));
  uint32_t count = 1, free_path = 0;
  for (uint32_t n = 1; n < kMaxPaths; n++) {
    if (::access(program_path(m, n).c_str(), F_OK) != 0) {
      if (!free_path) free_path = n;
      continue;
    }
    count++;
    bytes += file_bytes(program_path(m, n));
    if (std::find(known.begin(), known.end(), n) != known.end()) continue;
    if (auto p = current_program(m, program_path(m, n), log)) {
      const bool takes = accepts(*p);
      out.programs.emplace_back(n, std::move(*p));
      if (takes) return out;  // another process traced this input's path meanwhile
    }
  }
  if (!free_path || bytes >= kMaxPathBytes) {
    out.why = "the artefact holds its most paths (" + std::to_string(count) + " programs, " +
              std::to_string(bytes >> 20) + " MiB)";
    return out;
  }
  try {
    Program p = build_program(m, sample, &native, log);
    write_program(program_path(m, free_path), p);
    if (log) log("witness program " + m.circuit + ": path " + std::to_string(free_path) + " traced");
    out.programs.emplace_back(free_path, std::move(p));
    out.traced = true;
  } catch (const SampleRejected& e) {
    out.why = std::string("the input was rejected by the circuit (") + e.what() + ")";
  } catch (const WitnessError& e) {
    out.why = e.what();
  }
  return out;
}

std::optional<Program> open_program(const Manifest& m, const std::vector<Value>* sample, std::string* why,
                                    const Log& log, const NativeSample* native) {
  const std::string path = program_path(m, 0), failed = m.dir + "/program.failed";
  auto current = [&]() { return current_program(m, path, log); };
  auto recorded_failure = [&]() -> std::optional<std::string> {
    std::ifstream f(failed);
    if (!f) return std::nullopt;
    std::string key, reason;
    std::getline(f, key);
    std::getline(f, reason);
    if (key != m.key) return std::nullopt;
    return reason;
  };
  if (auto p = current()) return p;
  if (auto r = recorded_failure()) {
    if (why) *why = *r;
    return std::nullopt;
  }
  if (!sample) {
    if (why) *why = "the compiled program is not built yet: it is traced on the first input the circuit accepts";
    return std::nullopt;
  }
  FileLock lock(m.dir + "/.program.lock");
  if (auto p = current()) return p;  // another process built it while this one waited
  if (auto r = recorded_failure()) {
    if (why) *why = *r;
    return std::nullopt;
  }
  try {
    Program p = build_program(m, *sample, native, log);
    try {
      write_program(path, p);
    } catch (const WitnessError& e) {
      if (log) log(std::string("witness program kept in memory only: ") + e.what());
    }
    return p;
  } catch (const SampleRejected& e) {
    if (why) *why = std::string("the sample input was rejected by the circuit (") + e.what() + ")";
    return std::nullopt;
  } catch (const WitnessError& e) {
    std::ofstream(failed) << m.key << "\n" << e.what() << "\n";
    if (why) *why = e.what();
    return std::nullopt;
  }
}

}  // namespace cuzk::witness
