// One function per `cuzk` subcommand; main.cpp only parses arguments and maps errors to exit codes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/exit_codes.hpp"
#include "math/curves.hpp"

namespace cuzk::cli {

// Exit codes shared by every subcommand (their values: common/exit_codes.hpp).
enum Exit : int {
  kOk = exit_status::kOk,
  kInvalid = exit_status::kFailure,     // the proof did not verify, or a self-check failed
  kBadInput = exit_status::kBadInput,   // an input file is malformed or does not fit
  kUsage = exit_status::kUsage,
  kSoftware = exit_status::kSoftware,   // a circuit's generated witness code crashed
  kIoError = exit_status::kIoError,
};

struct ProveArgs {
  std::string zkey, wtns, proof, pub;
  bool verify = true;  // a proof that does not verify is never written
  std::string backend = "auto";
  int device = 0;
  std::optional<std::string> fixed_rs;  // "r,s" for reproducible test proofs
  bool quiet = false;
};
// A file named on the command line, checked before it is read: it must exist and be a regular file
// (a FIFO would block the read until someone writes to it, a device such as /dev/zero would never
// end), and, when max_bytes is not 0, be at most that large. Throws std::invalid_argument naming
// the path and what it is instead.
void check_input_file(const std::string& path, uint64_t max_bytes = 0);
// The largest proof.json, public.json or verification_key.json read (a key with about 300,000
// public signals).
inline constexpr uint64_t kMaxJsonBytes = 64ull << 20;

int cmd_prove(const ProveArgs& a);
int cmd_verify(const std::string& vk, const std::string& pub, const std::string& proof, bool quiet);
int cmd_setup(const std::string& r1cs, const std::string& zkey, const std::optional<std::string>& seed, bool quiet);
int cmd_export_vk(const std::string& zkey, const std::string& vk);
int cmd_gen_circuit(int log_n, const std::string& r1cs, const std::string& wtns, uint64_t seed, bool quiet,
                    CurveId curve, const std::string& profile);
int cmd_info(const std::string& path);
int cmd_demo(const std::string& dir);
// `cuzk bench msm|ntt|h-stage|prove|all [--sizes ...]`: device-resident GPU timings (CUDA events).
int cmd_bench(const std::vector<std::string>& args);

}  // namespace cuzk::cli
