// `cuzk`: argument parsing and the mapping from errors to exit codes. The work is in commands.cpp.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "commands.hpp"
#include "daemon_client.hpp"
#include "witness_cli.hpp"
#include "groth16/formats.hpp"
#include "groth16/parallel.hpp"

using namespace cuzk::cli;

#ifndef CUZK_EXAMPLES_DIR
#define CUZK_EXAMPLES_DIR "examples"
#endif

namespace {

// `prove` with a witness file, or with circuit inputs run through a witness generator first.
int prove_command(ProveArgs pa, const std::vector<std::string>& files, const std::string& input,
                  const std::string& generator) {
  if (input.empty() != generator.empty()) {
    std::fprintf(stderr, "error: --input and --witness-generator go together\n");
    return kUsage;
  }
  const size_t want = input.empty() ? 3 : 2;
  if (files.size() != want) {
    std::fprintf(stderr, "error: prove takes %s\n",
                 input.empty() ? "<zkey> <wtns> <proof.json> <public.json>"
                               : "<zkey> <proof.json> <public.json> with --input and --witness-generator");
    return kUsage;
  }
  pa.proof = files[want - 2];
  pa.pub = files[want - 1];
  if (input.empty()) {
    pa.wtns = files[0];
    return cmd_prove(pa);
  }
  char tmpl[] = "/tmp/cuzk-prove-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::perror("mkdtemp");
    return kIoError;
  }
  pa.wtns = std::string(tmpl) + "/witness.wtns";
  int rc = witness_calc(generator, input, pa.wtns, pa.quiet);
  if (rc == kOk) rc = cmd_prove(pa);
  std::remove(pa.wtns.c_str());
  rmdir(tmpl);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cuzk: Groth16 prover for BLS12-381, interoperable with snarkjs"};
  app.require_subcommand(1);
  app.fallthrough();  // global options such as --threads may also follow the subcommand
  size_t threads = 0;
  bool quiet = false;
  app.add_option("--threads", threads, "worker threads (default: all CPUs this process may use)");
  app.add_flag("-q,--quiet", quiet, "no progress output");

  ProveArgs pa;
  auto* prove = app.add_subcommand("prove", "prove a witness: prove <zkey> <wtns> <proof.json> <public.json>");
  prove->add_option("zkey", pa.zkey, "proving key (.zkey, Groth16)")->required()->check(CLI::ExistingFile);
  // After the zkey: <wtns> <proof> <public>, or <proof> <public> with --input and --witness-generator.
  std::vector<std::string> prove_files;
  std::string prove_input, prove_generator;
  prove->add_option("files", prove_files, "wtns proof.json public.json (no wtns with --input)")
      ->required()
      ->expected(-1);
  prove->add_option("--input", prove_input, "circuit inputs (JSON): compute the witness first")
      ->check(CLI::ExistingFile);
  prove->add_option("--witness-generator", prove_generator,
                    "circom's --c output folder, its --wasm output (<name>_js or <name>.wasm), or a `witness build` "
                    "artefact")
      ->check(CLI::ExistingPath);
  prove->add_flag("--verify,!--no-verify", pa.verify,
                  "check the proof with the key's verification key before writing it (the default; --verify is "
                  "accepted for older scripts); --no-verify writes it unchecked");
  prove->add_option("--backend", pa.backend, "cpu, cuda or auto")->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  prove->add_option("--device", pa.device, "CUDA device for the cuda backend")->check(CLI::NonNegativeNumber);
  prove->add_option("--seed-rs", pa.fixed_rs, "TESTING ONLY: fixed r,s as decimals \"r,s\" (the proof is not zero-knowledge)");

  std::string vk_path, pub_path, proof_path;
  auto* verify = app.add_subcommand("verify", "verify a proof: verify <verification_key.json> <public.json> <proof.json>");
  verify->add_option("vk", vk_path)->required()->check(CLI::ExistingFile);
  verify->add_option("public", pub_path)->required()->check(CLI::ExistingFile);
  verify->add_option("proof", proof_path)->required()->check(CLI::ExistingFile);

  std::string r1cs_path, zkey_out;
  std::optional<std::string> seed;
  auto* setup = app.add_subcommand("setup", "development-only Groth16 keys: setup <circuit.r1cs> <out.zkey>");
  setup->add_option("r1cs", r1cs_path)->required()->check(CLI::ExistingFile);
  setup->add_option("zkey", zkey_out)->required();
  setup->add_option("--seed", seed, "derive the toxic waste from this seed (reproducible fixtures)");

  std::string ex_zkey, ex_vk;
  auto* exp = app.add_subcommand("export", "export data from a key");
  exp->require_subcommand(1);
  auto* exp_vk = exp->add_subcommand("vk", "export vk <zkey> <verification_key.json>");
  exp_vk->add_option("zkey", ex_zkey)->required()->check(CLI::ExistingFile);
  exp_vk->add_option("vk", ex_vk)->required();

  int log_n = 0;
  std::string gen_r1cs, gen_wtns;
  uint64_t gen_seed = 1;
  std::string gen_curve = "bls12381", gen_profile = "circom";
  auto* gen = app.add_subcommand("gen-circuit", "benchmark circuit: gen-circuit <log2 constraints> <out.r1cs> <out.wtns>");
  gen->add_option("log2", log_n, "domain size exponent, 4..27")->required()->check(CLI::Range(4, 27));
  gen->add_option("r1cs", gen_r1cs)->required();
  gen->add_option("wtns", gen_wtns)->required();
  gen->add_option("--seed", gen_seed, "generator seed");
  gen->add_option("--profile", gen_profile,
                  "circom (default): circom output's mix; porep: a PoRep partition's, >= 90% of the witness 0/1")
      ->check(CLI::IsMember({"circom", "porep"}));
  gen->add_option("--curve", gen_curve, "bls12381 (default) or bn254 alias bn128")
      ->check(CLI::IsMember({"bls12381", "bls12-381", "bls12_381", "bn254", "bn128", "alt_bn128"}));

  std::string info_path;
  auto* info = app.add_subcommand("info", "print the header of a .zkey, .wtns or .r1cs");
  info->add_option("file", info_path)->required()->check(CLI::ExistingFile);

  std::string demo_dir = CUZK_EXAMPLES_DIR "/merkle";
  auto* demo = app.add_subcommand("demo", "prove the bundled Merkle circuit and verify the proof");
  demo->add_option("--dir", demo_dir, "folder with merkle.zkey and merkle.wtns");

  auto* bench = app.add_subcommand("bench", "GPU benchmarks: bench msm|ntt|h-stage|prove|all [--sizes a,b,..] [--runs N]");
  bench->allow_extras();
  bench->fallthrough(false);

  // submit, await, status, cancel (the daemon's API) and timeline export, waterfall (its log).
  auto run_daemon_command = add_daemon_subcommands(app);
  auto run_witness_command = add_witness_subcommands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kUsage;
  }
  if (threads) cuzk::set_thread_count(threads);
  pa.quiet = quiet;

  try {
    if (*prove) return prove_command(pa, prove_files, prove_input, prove_generator);
    if (*verify) return cmd_verify(vk_path, pub_path, proof_path, quiet);
    if (*setup) return cmd_setup(r1cs_path, zkey_out, seed, quiet);
    if (*exp_vk) return cmd_export_vk(ex_zkey, ex_vk);
    if (*gen) return cmd_gen_circuit(log_n, gen_r1cs, gen_wtns, gen_seed, quiet, cuzk::parse_curve(gen_curve),
                                   gen_profile);
    if (*info) return cmd_info(info_path);
    if (*demo) return cmd_demo(demo_dir);
    if (*bench) return cmd_bench(bench->remaining());
    if (auto rc = run_daemon_command()) return *rc;
    if (auto rc = run_witness_command()) return *rc;
  } catch (const cuzk::FormatError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kBadInput;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kIoError;
  }
  return kUsage;
}
