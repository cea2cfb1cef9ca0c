// A compiled witness program: circom's witness generator run once by the artefact's tracer and kept
// as the straight-line list of field operations on the inputs it performed, with constants folded,
// repeated operations shared and everything that reaches neither a witness value nor a guard
// dropped. cuzk evaluates it in process (witness/program_eval.hpp) instead of running the generated
// C++; the artefact keeps it as program.bin, checked and rebuilt like the generator itself.
//
// Values are numbered in one space: the main inputs [0, n_inputs), then the constants, then one
// value per node in order; a node's operands are always lower numbers. Guards are the places where
// the generated code branched or indexed on a value: an input whose guards do not all hold must be
// computed by the native generator instead, and so must one whose operations leave the field
// (circom's integer division by zero).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "witness/build.hpp"
#include "witness/manifest.hpp"

namespace cuzk::witness {

struct ProgramNode {
  uint32_t op, a, b;  // program::Op; b is 0 for unary operations
};
struct ProgramGuard {
  uint32_t value, kind;  // program::GuardKind
  Value expect{};        // for kMustEqual
};

struct Program {
  static constexpr uint32_t kVersion = 1;
  std::string key;  // the generator artefact's key: a program belongs to one build of the sources
  Value prime{};
  uint32_t n_inputs = 0, n_witness = 0;
  std::vector<Value> consts;  // normal form
  std::vector<ProgramNode> nodes;
  std::vector<ProgramGuard> guards;
  std::vector<uint32_t> outputs;  // the value of each witness wire
  uint32_t first_node() const { return uint32_t(n_inputs + consts.size()); }
  uint64_t n_values() const { return uint64_t(first_node()) + nodes.size(); }
};

// Reads and checks program.bin: magic, version, sizes, checksum, and that every operand, output
// and guard names an earlier value. Throws WitnessError naming the file and what is wrong.
Program read_program(const std::string& path);
void write_program(const std::string& path, const Program& p);
// The checksum program.bin's header carries for p, and the one the file at path carries (its header
// alone is read; nullopt when there is no readable program there).
uint64_t program_checksum(const Program& p);
std::optional<uint64_t> program_file_checksum(const std::string& path);

// A laid-out program (ProgramRunner's layout) in a file beside program.bin (layout.bin), so that a
// process runs its first witness without laying the program out: a header, then arrays of fixed-size
// elements, checksummed. It belongs to one artefact (key), one program (program.bin's checksum), one
// field (prime) and one build of the runner's sources: any other is refused and laid out anew.
struct LayoutMeta {
  std::string key;
  uint64_t program_checksum = 0;
  Value prime{};
  std::vector<uint32_t> scalars;  // the runner's sizes
};
struct MappedLayout {
  std::shared_ptr<const void> map;        // the file, mapped read-only, for as long as it is used
  std::vector<uint32_t> scalars;
  std::vector<std::pair<const void*, uint64_t>> arrays;  // each array's first element and count
};
// Writes the file (atomically: a temporary file renamed); arrays are (data, count, element bytes).
void write_layout(const std::string& path, const LayoutMeta& meta,
                  const std::vector<std::tuple<const void*, uint64_t, uint32_t>>& arrays);
// Maps the file when it is whole and belongs to meta (its scalars are returned, not compared), with
// arrays of the given element sizes; nullopt otherwise, with *why set.
std::optional<MappedLayout> map_layout(const std::string& path, const LayoutMeta& meta,
                                       const std::vector<uint32_t>& element_bytes, std::string* why);

// The program could not be made from this sample, because circom's own code rejected it (a failed
// assert): another input may succeed.
struct SampleRejected : WitnessError {
  using WitnessError::WitnessError;
};

struct ProgramBuildReport {
  double trace_ms = 0, check_ms = 0;
  uint64_t traced_nodes = 0;  // before dead code was dropped
  uint32_t selftest_cases = 0;
};

// The native generator's witness of a sample (n_witness values, normal form) and its time.
struct NativeSample {
  std::vector<Value> witness;
  double ms = 0;
};

// Traces the artefact's circuit on `sample` (m.n_inputs values, signal order), optimises the trace
// and checks the result before returning it: the evaluator must reproduce circom's result for every
// operation of the tracer's self-test, and the native generator's witness for the sample, byte for
// byte. `native` is that witness when the caller has it; otherwise the native generator runs on the
// sample first. The tracer may take 100 times the native generator's time (at least a minute).
// Throws SampleRejected when circom rejects the sample, WitnessError otherwise.
Program build_program(const Manifest& m, const std::vector<Value>& sample, const NativeSample* native = nullptr,
                      const Log& log = {}, ProgramBuildReport* report = nullptr);

// The artefact's programs, one per path that inputs took through the circuit's code: path 0 in
// program.bin, traced on the first input the circuit accepted; path n > 0 in program-<n>.bin, traced
// on an input that every earlier path refused (add_path). Each keeps its layout beside it
// (layout.bin, layout-<n>.bin). At most kMaxPaths of them, and at most kMaxPathBytes in all.
inline constexpr uint32_t kMaxPaths = 8;
inline constexpr uint64_t kMaxPathBytes = uint64_t(1) << 30;
std::string program_path(const Manifest& m, uint32_t path);
std::string layout_path(const Manifest& m, uint32_t path);
// The program at path n > 0 when it is there and belongs to this artefact.
std::optional<Program> read_path(const Manifest& m, uint32_t path);

// What add_path found or made: the paths other processes added since the caller last looked and the
// one it traced (their numbers and programs), and, where it traced none, why.
struct NewPaths {
  std::vector<std::pair<uint32_t, Program>> programs;
  bool traced = false;
  std::string why;
};
// Under the artefact's program lock: reads the paths beyond `known` that others added; unless one of
// them takes `sample` (accepts), traces it into the first free path, its native witness `native` the
// reference, as build_program does; not past kMaxPaths or kMaxPathBytes.
NewPaths add_path(const Manifest& m, const std::vector<Value>& sample, const NativeSample& native,
                  const std::vector<uint32_t>& known, const std::function<bool(const Program&)>& accepts,
                  const Log& log = {});

// The artefact's program: <dir>/program.bin when it is current, otherwise built from `sample` and
// stored there (under a lock, so that concurrent workers build it once). A failed build is recorded
// beside it (program.failed, with the reason), so it is tried once per artefact, not once per
// process; a rejected sample is not recorded. Returns nullopt with *why set when the circuit runs on
// the native generator (no sample yet, or the reason it cannot be built).
std::optional<Program> open_program(const Manifest& m, const std::vector<Value>* sample, std::string* why,
                                    const Log& log = {}, const NativeSample* native = nullptr);

}  // namespace cuzk::witness
