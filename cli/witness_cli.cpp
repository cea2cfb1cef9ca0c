// Witness generation from the command line: compile a circom generator ahead of time, and compute a
// .wtns from circuit inputs exactly as `snarkjs wtns calculate` would.
#include "witness_cli.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <cstdlib>
#include <memory>

#include "commands.hpp"
#include "math/curves.hpp"
#include "witness/build.hpp"
#include "witness/engine.hpp"
#include "witness/generator.hpp"
#include "witness/inputs.hpp"

namespace cuzk::cli {

namespace {

// Where compiled generators are cached for the command line: $CUZK_CACHE_DIR, else
// $XDG_CACHE_HOME/cuzk, else ~/.cache/cuzk (the daemon uses <state_dir>/witness instead).
std::string cache_root() {
  if (const char* d = std::getenv("CUZK_CACHE_DIR"); d && *d) return std::string(d) + "/witness";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/cuzk/witness";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/cuzk/witness";
  return "/tmp/cuzk-cache/witness";
}

witness::Log progress(bool quiet) {
  if (quiet) return {};
  return [](const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); };
}

}  // namespace

namespace {

// The circuit's scalar field as cuzk's type: BLS12-381's or BN254's.
template <class F>
int with_field(const witness::Manifest& m, F&& f) {
  if (m.curve() == "bls12381") return f.template operator()<bls12_381::Fr>();
  if (m.curve() == "bn128") return f.template operator()<bn254::Fr>();
  throw witness::WitnessError(m.dir + ": the circuit's prime is neither BLS12-381's nor BN254's scalar field");
}

const char* path_name(int p) { return p == 0 ? "program" : p == 1 ? "native" : "native (the program refused the input)"; }

// f's exit status, or the message and status of the witness library's errors it throws (the input's
// or the artefact's: exit 2).
template <class F>
int reporting_errors(F&& f) {
  try {
    return f();
  } catch (const witness::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return int(kBadInput);
  } catch (const witness::WitnessError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return int(kBadInput);
  }
}

int report_failure(const std::string& input, const witness::GenResult& r) {
  std::fprintf(stderr, "error: %s: %s\n", input.c_str(),
               r.kind == witness::GenResult::Assert ? ("the circuit rejects these inputs: " + r.message).c_str()
                                                    : r.message.c_str());
  return r.kind == witness::GenResult::Assert ? kBadInput : kSoftware;
}

}  // namespace

int witness_calc(const std::string& generator, const std::string& input, const std::string& out, bool quiet,
                 const std::string& engine) {
  return reporting_errors([&] {
    const auto eng = witness::parse_engine(engine);
    if (!eng) {
      std::fprintf(stderr, "error: --engine must be program or native, not '%s'\n", engine.c_str());
      return int(kUsage);
    }
    witness::Manifest m = witness::open_generator(generator, cache_root(), progress(quiet));
    std::vector<witness::Value> vals = witness::read_inputs_file(input, m, uint64_t(1) << 30);
    return with_field(m, [&]<class Fr>() {
      witness::WitnessEngine<Fr> e(m, *eng, progress(quiet));
      auto o = witness::write_wtns(e, vals, out);
      if (o.result.kind != witness::GenResult::Ok) return report_failure(input, o.result);
      if (!quiet) {
        if (!o.note.empty() && *eng == witness::Engine::Program)
          std::fprintf(stderr, "witness: native generator: %s\n", o.note.c_str());
        const std::string engine = o.path == witness::WitnessEngine<Fr>::Path::Program && o.program
                                       ? "program, path " + std::to_string(o.program)
                                       : path_name(int(o.path));
        std::fprintf(stderr, "witness: %u values in %.1f ms (%s) -> %s\n", m.n_witness, o.result.ms, engine.c_str(),
                     out.c_str());
      }
      return int(kOk);
    });
  });
}

namespace {

// `witness bench`: both engines on one input, the median of `runs` each, and their outputs compared.
int witness_bench(const std::string& generator, const std::string& input, int runs, bool quiet) {
  return reporting_errors([&] {
    witness::Manifest m = witness::open_generator(generator, cache_root(), progress(quiet));
    std::vector<witness::Value> vals = witness::read_inputs_file(input, m, uint64_t(1) << 30);
    return with_field(m, [&]<class Fr>() {
      witness::ProgramBuildReport rep;
      std::optional<witness::Program> prog;
      const std::string path = m.dir + "/program.bin";
      auto t0 = std::chrono::steady_clock::now();
      std::string why;
      prog = witness::open_program(m, &vals, &why, progress(quiet));
      const double open_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!prog) {
        std::fprintf(stderr, "error: no witness program for %s: %s\n", m.dir.c_str(), why.c_str());
        return int(kSoftware);
      }
      const std::string scratch = m.dir + "/.bench-" + std::to_string(::getpid()) + ".bin";
      struct Unlink {
        std::string p;
        ~Unlink() { ::unlink(p.c_str()); }
      } unlink_scratch{scratch};
      {
        int fd = ::open(scratch.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || ::ftruncate(fd, off_t(uint64_t(m.n_witness) * 32)) != 0)
          throw witness::WitnessError(scratch + ": cannot create");
        ::close(fd);
      }
      witness::Generator gen(m);
      std::vector<double> native_ms, program_ms;
      for (int i = 0; i < runs; i++) {
        witness::GenResult r = gen.compute(vals, scratch, 0);
        if (r.kind != witness::GenResult::Ok) return report_failure(input, r);
        native_ms.push_back(r.ms);
      }
      const auto tl = std::chrono::steady_clock::now();
      witness::ProgramRunner<Fr> run(*prog);
      const double layout_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tl).count();
      // What a later process does instead: map the layout stored beside the program.
      const std::string layout = m.dir + "/layout.bin";
      run.save_layout(layout, m.key, witness::program_checksum(*prog));
      const auto to = std::chrono::steady_clock::now();
      if (!witness::ProgramRunner<Fr>::open_layout(layout, m.key, witness::program_checksum(*prog)))
        throw witness::WitnessError(layout + ": the stored layout does not open");
      const double mapped_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - to).count();
      std::vector<Fr> w(m.n_witness);
      for (int i = 0; i < runs; i++) {
        auto s = std::chrono::steady_clock::now();
        auto res = run.run(vals.data(), w.data());
        program_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
        if (res.outcome != witness::ProgramRunner<Fr>::Outcome::Ok) {
          std::fprintf(stderr, "error: %s: the program refuses this input (it takes another path)\n", input.c_str());
          return int(kSoftware);
        }
      }
      std::ifstream f(scratch, std::ios::binary);
      std::vector<witness::Value> native(m.n_witness);
      f.read(reinterpret_cast<char*>(native.data()), std::streamsize(native.size() * sizeof(witness::Value)));
      for (uint32_t i = 0; i < m.n_witness; i++)
        if (witness::from_fr(w[i]) != native[i]) {
          std::fprintf(stderr, "error: the engines differ at witness value %u\n", i);
          return int(kSoftware);
        }
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
      };
      struct stat st {};
      ::stat(path.c_str(), &st);
      std::printf("circuit %s: %u witness values, %u inputs\n", m.circuit.c_str(), m.n_witness, m.n_inputs);
      std::printf("program: %zu operations, %zu guards, %zu constants, %.1f MB; opened or built in %.0f ms\n",
                  prog->nodes.size(), prog->guards.size(), prog->consts.size(), double(st.st_size) / 1e6, open_ms);
      std::vector<std::pair<uint64_t, unsigned>> hist(witness::program::kOpCount);
      for (unsigned op = 0; op < hist.size(); op++) hist[op].second = op;
      for (const auto& n : prog->nodes) hist[n.op].first++;
      std::sort(hist.rbegin(), hist.rend());
      std::printf("operations:");
      for (const auto& [count, op] : hist)
        if (count) std::printf(" %s %llu", witness::program::op_name(op), (unsigned long long)count);
      std::printf("\nlaid out in %.0f ms (stored, it opens in %.0f ms): %zu instructions in %u chunks, %u registers, "
                  "%u values read across chunks\n",
                  layout_ms, mapped_ms, run.instructions(), run.chunks(), run.registers(), run.shared_values());
      std::printf("instructions:");
      for (const auto& [count, name] : run.instruction_counts())
        std::printf(" %s %llu", name.c_str(), (unsigned long long)count);
      std::printf("\n");
      std::printf("native:  %.2f ms (median of %d)\n", median(native_ms), runs);
      std::printf("program: %.2f ms (median of %d, one thread)\n", median(program_ms), runs);

      std::printf("speedup: %.1fx; outputs equal\n", median(native_ms) / median(program_ms));
      return int(kOk);
    });
  });
}

}  // namespace

const char* const kGeneratorHelp =
    "circom's --c output folder (<name>_cpp), its --wasm output (<name>_js or <name>.wasm), or an artefact from "
    "`witness build`";

std::function<std::optional<int>()> add_witness_subcommands(CLI::App& app) {
  struct Opts {
    std::string src, out, gen, input, wtns, engine = "program";
    int runs = 5;
  };
  auto o = std::make_shared<Opts>();
  auto* w = app.add_subcommand("witness", "circom witness generators: build, calc, bench");
  w->require_subcommand(1);
  auto* build = w->add_subcommand("build", "compile circom's output: build <name>_cpp|<name>_js|<name>.wasm <out dir>");
  build->add_option("src", o->src, "circom's --c output folder (<name>_cpp), or its --wasm output (<name>_js or <name>.wasm)")
      ->required()
      ->check(CLI::ExistingPath);
  build->add_option("out", o->out, "artefact folder to write (replaced)")->required();
  auto* calc = w->add_subcommand("calc", "compute a witness: calc <generator> <input.json> <out.wtns>");
  calc->add_option("generator", o->gen, kGeneratorHelp)->required()->check(CLI::ExistingPath);
  calc->add_option("input", o->input, "circuit inputs (JSON)")->required()->check(CLI::ExistingFile);
  calc->add_option("wtns", o->wtns, "output witness (.wtns)")->required();
  calc->add_option("--engine", o->engine,
                   "program (default: the compiled witness program, traced on first use; the native generator "
                   "where it cannot be used) or native (circom's generated C++ or its wasm, compiled)");
  auto* bench = w->add_subcommand("bench", "time both engines on one input and compare them: bench <generator> <input.json>");
  bench->add_option("generator", o->gen, kGeneratorHelp)->required()->check(CLI::ExistingPath);
  bench->add_option("input", o->input, "circuit inputs (JSON)")->required()->check(CLI::ExistingFile);
  bench->add_option("--runs", o->runs, "runs of each engine (the median is reported)")->check(CLI::Range(1, 1000));
  return [o, build, calc, bench, &app]() -> std::optional<int> {
    const bool quiet = app.get_option("--quiet")->as<bool>();
    if (*build) {
      try {
        witness::Manifest m = witness::build_generator(o->src, o->out, cache_root(), progress(quiet));
        if (!quiet)
          std::printf("%s: circuit %s, %u witness values, %u inputs%s, %s\n", m.dir.c_str(), m.circuit.c_str(),
                      m.n_witness, m.n_inputs, m.names_known ? "" : " (names unknown: no .sym beside the folder)",
                      m.curve().empty() ? "unknown prime" : m.curve().c_str());
        return kOk;
      } catch (const witness::WitnessError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return kBadInput;
      }
    }
    if (*calc) return witness_calc(o->gen, o->input, o->wtns, quiet, o->engine);
    if (*bench) return witness_bench(o->gen, o->input, o->runs, quiet);
    return std::nullopt;
  };
}

}  // namespace cuzk::cli
