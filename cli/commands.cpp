#include "commands.hpp"

#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include <sys/stat.h>
#include <unistd.h>

#include "backend/backend.hpp"
#include "groth16/formats.hpp"
#include "groth16/parallel.hpp"
#include "groth16/prover.hpp"
#include "groth16/setup.hpp"
#include "groth16/verifier.hpp"
#include "math/encoding.hpp"
#include "progress.hpp"

namespace cuzk::cli {

void check_input_file(const std::string& path, uint64_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw std::invalid_argument(path + ": " + (errno == ENOENT ? std::string("no such file") : std::strerror(errno)));
  const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                                            : nullptr;
  if (kind) throw std::invalid_argument(path + ": is " + kind + ", not a regular file");
  if (!S_ISREG(st.st_mode)) throw std::invalid_argument(path + ": is not a regular file");
  if (max_bytes && uint64_t(st.st_size) > max_bytes)
    throw std::invalid_argument(path + ": is " + std::to_string(st.st_size) + " bytes, more than the " +
                                std::to_string(max_bytes) + " such a file may have");
}

using namespace groth16;

template <class C>
static int gen_circuit_on(int log_n, const std::string& r1cs_path, const std::string& wtns_path, uint64_t seed,
                          groth16::GenProfile profile, bool quiet);
template <class C>
static int demo_on(const std::string& zkey_path, const std::string& wtns_path);

// "r,s" in decimal to the fixed randomness of a reproducible proof.
template <class C>
static void parse_fixed_rs(const std::string& s, ProveOptions<C>& opt) {
  using Fr = typename C::Fr;
  auto comma = s.find(',');
  auto r = comma == std::string::npos ? std::nullopt : field_from_decimal<Fr>(s.substr(0, comma));
  auto sv = comma == std::string::npos ? std::nullopt : field_from_decimal<Fr>(s.substr(comma + 1));
  if (!r || !sv) throw std::invalid_argument("--seed-rs: expected \"r,s\" as two decimal scalars below r, got \"" + s + "\"");
  opt.r = *r;
  opt.s = *sv;
}

// The prover of the backend named on the command line; auto means cuda when a device is usable.
template <class C>
static std::unique_ptr<ProverBackend<C>> prover_for(const std::string& name, std::shared_ptr<const ZKey<C>> zk,
                                                    int device) {
  BackendOptions opt;
  opt.device = device;
  return make_prover<C>(name, std::move(zk), opt);
}

// Fails fast, before a large key is read, when the backend asked for cannot exist in this build.
static void check_backend_built(const std::string& name) {
  if (name == "auto") return;
  for (const std::string& n : backend_names())
    if (n == name) return;
  throw std::invalid_argument("--backend " + name + ": not in this build" +
                              (name == "cuda" ? std::string(" (configure with -DCUZK_CUDA=ON)") : std::string()));
}

// Loads the key and witness, checks they belong together, and returns the witness.
template <class C>
static std::vector<typename C::Fr> load_witness_for(const ZKey<C>& zk, const std::string& zkey_path,
                                                    const std::string& wtns_path) {
  check_same_curve(zkey_path, C::id, wtns_path, wtns_curve(wtns_path));
  std::vector<typename C::Fr> w = read_wtns<C>(wtns_path);
  if (w.size() != zk.n_vars)
    throw FormatError(wtns_path + ": section 2 (witness): has " + std::to_string(w.size()) + " values but " + zkey_path +
                      " expects nVars=" + std::to_string(zk.n_vars));
  if (w.empty() || !w[0].is_one())
    throw FormatError(wtns_path + ": section 2 (witness): value 0 must be the constant 1");
  return w;
}

template <class C>
static int prove_on(const ProveArgs& a) {
  using Fr = typename C::Fr;
  Progress p(a.quiet);
  ProveOptions<C> opt;
  if (a.fixed_rs) parse_fixed_rs(*a.fixed_rs, opt);
  check_backend_built(a.backend);
  check_input_file(a.zkey);
  check_input_file(a.wtns);
  p.stage("reading " + a.zkey);
  // One-shot: the points are used in place from the mapped file and checked in the background
  // while the witness is read and the evaluator compiled; the backends wait for the checks.
  auto zk = std::make_shared<ZKey<C>>(read_zkey<C>(a.zkey, ZKeyMemory::MapFileBackground));
  p.stage("reading " + a.wtns);
  std::vector<Fr> w = load_witness_for(*zk, a.zkey, a.wtns);
  p.stage("preparing the " + a.backend + " backend");
  auto backend = prover_for<C>(a.backend, zk, a.device);
  p.stage(std::string("proving (") + C::display_name + ", " + backend->name() + ", " +
          std::to_string(thread_count()) + " threads, domain 2^" + std::to_string(zk->log_domain) + ")");
  Proof<C> proof = backend->prove(w, opt);
  std::vector<Fr> pub = public_signals(w, zk->n_public);
  if (a.verify) {
    p.stage("verifying");
    if (!verify_proof(vk_from_zkey(*zk), pub, proof)) {
      p.end();
      std::fprintf(stderr,
                   "error: the proof does not verify against %s: the witness %s does not satisfy the circuit (or the "
                   "prover is at fault); nothing written\n",
                   a.zkey.c_str(), a.wtns.c_str());
      return kInvalid;
    }
  }
  p.stage("writing " + a.proof + " and " + a.pub);
  write_proof_json(a.proof, proof);
  write_public_json<C>(a.pub, pub);
  return kOk;
}

// The curve is the zkey's (its primes); the witness must be for the same one.
int cmd_prove(const ProveArgs& a) {
  check_input_file(a.zkey);
  return with_curve(zkey_curve(a.zkey), [&]<class C>() { return prove_on<C>(a); });
}

template <class C>
static int verify_on(const std::string& vk_path, const std::string& pub_path, const std::string& proof_path,
                     bool quiet) {
  VerificationKey<C> vk = read_vk_json<C>(vk_path);
  std::vector<typename C::Fr> pub = read_public_json<C>(pub_path);
  Proof<C> proof = read_proof_json<C>(proof_path);
  if (pub.size() != vk.n_public)
    throw FormatError(pub_path + ": has " + std::to_string(pub.size()) + " public signals but " + vk_path +
                      " expects nPublic=" + std::to_string(vk.n_public));
  bool ok = false;
  try {
    ok = verify_proof(vk, pub, proof);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "INVALID proof: %s\n", e.what());
    return kInvalid;
  }
  if (!ok) {
    std::fprintf(stderr, "INVALID proof: the pairing check failed for %s with %s\n", proof_path.c_str(), pub_path.c_str());
    return kInvalid;
  }
  if (!quiet) std::printf("OK: the proof is valid\n");
  return kOk;
}

// The curve is the verification key's "curve"; the proof must name the same one.
int cmd_verify(const std::string& vk_path, const std::string& pub_path, const std::string& proof_path, bool quiet) {
  for (const std::string* p : {&vk_path, &pub_path, &proof_path}) check_input_file(*p, kMaxJsonBytes);
  CurveId curve = json_curve(vk_path);
  check_same_curve(vk_path, curve, proof_path, json_curve(proof_path));
  return with_curve(curve, [&]<class C>() { return verify_on<C>(vk_path, pub_path, proof_path, quiet); });
}

int cmd_setup(const std::string& r1cs_path, const std::string& zkey_path, const std::optional<std::string>& seed,
              bool quiet) {
  std::fprintf(stderr,
               "WARNING: cuzk setup makes DEVELOPMENT keys from a single party's toxic waste%s.\n"
               "         Anyone who knows it can forge proofs. Never use these keys in production;\n"
               "         use a snarkjs ceremony (powers of tau + phase 2) instead.\n",
               seed ? " derived from a known seed" : "");
  // The key's curve is the circuit's (the r1cs prime).
  return with_curve(r1cs_curve(r1cs_path), [&]<class C>() {
    Progress p(quiet);
    p.stage("reading " + r1cs_path);
    R1cs<C> r = read_r1cs<C>(r1cs_path);
    p.end();
    std::string cur;
    auto cb = [&](const char* label, size_t done, size_t total) {
      if (cur != label) {
        cur = label;
        p.stage(label);
      }
      p.update(done, total);
    };
    ZKey<C> zk = setup_zkey(r, toxic_from_seed<C>(seed), cb);
    p.stage("writing " + zkey_path);
    write_zkey(zkey_path, zk);
    return kOk;
  });
}

int cmd_export_vk(const std::string& zkey_path, const std::string& vk_path) {
  check_input_file(zkey_path);
  return with_curve(zkey_curve(zkey_path), [&]<class C>() {
    write_vk_json(vk_path, vk_from_zkey(read_zkey<C>(zkey_path)));
    return kOk;
  });
}

int cmd_gen_circuit(int log_n, const std::string& r1cs_path, const std::string& wtns_path, uint64_t seed, bool quiet,
                    CurveId curve, const std::string& profile) {
  groth16::GenProfile p = groth16::parse_gen_profile(profile);
  return with_curve(curve, [&]<class C>() { return gen_circuit_on<C>(log_n, r1cs_path, wtns_path, seed, p, quiet); });
}

template <class C>
static int gen_circuit_on(int log_n, const std::string& r1cs_path, const std::string& wtns_path, uint64_t seed,
                          groth16::GenProfile profile, bool quiet) {
  Progress p(quiet);
  p.stage("generating a 2^" + std::to_string(log_n) + " " + C::display_name + " circuit (" +
          groth16::to_string(profile) + " profile)");
  R1cs<C> r;
  std::vector<typename C::Fr> w;
  gen_circuit(log_n, seed, r, w, profile);
  p.stage("writing " + r1cs_path + " and " + wtns_path);
  write_r1cs(r1cs_path, r);
  write_wtns<C>(wtns_path, w);
  p.end();
  if (!quiet)
    std::fprintf(stderr, "%zu constraints, %u wires, %u public\n", r.constraints.size(), r.n_wires, r.n_public());
  return kOk;
}

// Reads the 4-byte magic to tell the file kinds apart.
static std::string file_magic(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char m[4] = {0, 0, 0, 0};
  f.read(m, 4);
  if (f.gcount() != 4) throw FormatError(path + ": header: file is shorter than the 4-byte magic");
  return std::string(m, 4);
}

int cmd_info(const std::string& path) {
  check_input_file(path);
  std::string magic = file_magic(path);
  if (magic == "zkey") {
    ZKeyHeader h = read_zkey_header(path);
    uint32_t log_n = 0;
    while ((1u << log_n) < h.domain_size) log_n++;
    std::printf("%s: zkey (Groth16, %s)\n  nVars       %u\n  nPublic     %u\n  domainSize  %u (2^%u)\n  coefficients %u\n",
                path.c_str(), curve_display_name(h.curve), h.n_vars, h.n_public, h.domain_size, log_n, h.n_coefs);
  } else if (magic == "wtns") {
    WtnsHeader h = read_wtns_header(path);
    std::printf("%s: wtns (%s scalar field)\n  nWitness    %u\n", path.c_str(), curve_display_name(h.curve), h.count);
  } else if (magic == "r1cs") {
    with_curve(r1cs_curve(path), [&]<class C>() {
      R1cs<C> r = read_r1cs<C>(path);
      std::printf("%s: r1cs (%s)\n  nWires      %u\n  nPubOut     %u\n  nPubIn      %u\n  nPrvIn      %u\n"
                  "  nLabels     %llu\n  nConstraints %zu\n",
                  path.c_str(), C::display_name, r.n_wires, r.n_pub_out, r.n_pub_in, r.n_prv_in,
                  (unsigned long long)r.n_labels, r.constraints.size());
    });
  } else {
    throw FormatError(path + ": header: unknown magic (expected \"zkey\", \"wtns\" or \"r1cs\")");
  }
  return kOk;
}

int cmd_demo(const std::string& dir) {
  std::string zkey_path = dir + "/merkle.zkey", wtns_path = dir + "/merkle.wtns";
  return with_curve(zkey_curve(zkey_path), [&]<class C>() { return demo_on<C>(zkey_path, wtns_path); });
}

template <class C>
static int demo_on(const std::string& zkey_path, const std::string& wtns_path) {
  using Fr = typename C::Fr;
  std::printf("cuzk demo: Poseidon Merkle inclusion (depth 16) from a snarkjs ceremony key, %s\n", zkey_path.c_str());
  Progress p(false);
  p.stage("reading the key and witness");
  auto zk = std::make_shared<ZKey<C>>(read_zkey<C>(zkey_path));
  std::vector<Fr> w = load_witness_for(*zk, zkey_path, wtns_path);
  auto backend = prover_for<C>("auto", zk, 0);
  p.stage(std::string("proving (") + backend->name() + ")");
  auto t0 = std::chrono::steady_clock::now();
  Proof<C> proof = backend->prove(w, {});
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::vector<Fr> pub = public_signals(w, zk->n_public);
  p.stage("verifying");
  bool ok = verify_proof(vk_from_zkey(*zk), pub, proof);
  p.end();
  std::filesystem::create_directories("demo-out");
  write_proof_json("demo-out/proof.json", proof);
  write_public_json<C>("demo-out/public.json", pub);
  write_vk_json("demo-out/verification_key.json", vk_from_zkey(*zk));
  std::printf("proof: %s in %.1f ms on the %s backend with %zu threads (domain 2^%d, %u variables)\n", ok ? "VALID" : "INVALID", ms,
              backend->name(), thread_count(), zk->log_domain, zk->n_vars);
  std::printf("wrote demo-out/proof.json, demo-out/public.json, demo-out/verification_key.json\n");
  return ok ? kOk : kInvalid;
}


// The GPU benchmarks are a program of their own (cuzk-bench, built with the cuda backend), so that
// the CLI does not carry them: run the one installed beside this binary.
int cmd_bench(const std::vector<std::string>& args) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::filesystem::path bench = (ec ? std::filesystem::path(".") : self.parent_path()) / "cuzk-bench";
  if (::access(bench.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "error: cuzk bench times the cuda backend and %s is not there (configure with -DCUZK_CUDA=ON);\n"
                 "       CPU micro-benchmarks: build/bin/cuzk_microbench; CPU vs snarkjs: bash bench/vs_snarkjs.sh\n",
                 bench.c_str());
    return kUsage;
  }
  std::vector<std::string> argv_s = {bench.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execv(bench.c_str(), argv.data());
  std::fprintf(stderr, "error: cannot run %s: %s\n", bench.c_str(), std::strerror(errno));
  return kUsage;
}

}  // namespace cuzk::cli
