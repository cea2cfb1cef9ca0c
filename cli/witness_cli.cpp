// Witness generation from the command line: compile a circom generator ahead of time, and compute a
// .wtns from circuit inputs exactly as `snarkjs wtns calculate` would.
#include "witness_cli.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "commands.hpp"
#include "witness/build.hpp"
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

int witness_calc(const std::string& generator, const std::string& input, const std::string& out, bool quiet) {
  try {
    witness::Manifest m = witness::open_generator(generator, cache_root(), progress(quiet));
    std::vector<witness::Value> vals = witness::read_inputs_file(input, m, uint64_t(1) << 30);
    witness::Generator gen(std::move(m));
    witness::GenResult r = witness::write_wtns(gen, vals, out);
    if (r.kind == witness::GenResult::Ok) {
      if (!quiet) std::fprintf(stderr, "witness: %u values in %.1f ms -> %s\n", gen.manifest().n_witness, r.ms, out.c_str());
      return kOk;
    }
    std::fprintf(stderr, "error: %s: %s\n", input.c_str(),
                 r.kind == witness::GenResult::Assert ? ("the circuit rejects these inputs: " + r.message).c_str()
                                                      : r.message.c_str());
    return r.kind == witness::GenResult::Assert ? kBadInput : kSoftware;
  } catch (const witness::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kBadInput;
  } catch (const witness::WitnessError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kBadInput;
  }
}

std::function<std::optional<int>()> add_witness_subcommands(CLI::App& app) {
  struct Opts {
    std::string src, out, gen, input, wtns;
  };
  auto o = std::make_shared<Opts>();
  auto* w = app.add_subcommand("witness", "circom witness generators: build, calc");
  w->require_subcommand(1);
  auto* build = w->add_subcommand("build", "compile circom's --c output: build <name>_cpp <out dir>");
  build->add_option("src", o->src, "circom --c output folder (<name>_cpp)")->required()->check(CLI::ExistingDirectory);
  build->add_option("out", o->out, "artefact folder to write (replaced)")->required();
  auto* calc = w->add_subcommand("calc", "compute a witness: calc <generator> <input.json> <out.wtns>");
  calc->add_option("generator", o->gen, "circom --c output folder, or an artefact from `witness build`")
      ->required()
      ->check(CLI::ExistingDirectory);
  calc->add_option("input", o->input, "circuit inputs (JSON)")->required()->check(CLI::ExistingFile);
  calc->add_option("wtns", o->wtns, "output witness (.wtns)")->required();
  return [o, build, calc, &app]() -> std::optional<int> {
    const bool quiet = app.get_option("--quiet")->as<bool>();
    if (*build) {
      try {
        witness::Manifest m = witness::build_generator(o->src, o->out, progress(quiet));
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
    if (*calc) return witness_calc(o->gen, o->input, o->wtns, quiet);
    return std::nullopt;
  };
}

}  // namespace cuzk::cli
