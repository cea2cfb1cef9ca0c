// .r1cs reader. Invariants: a bad file is a FormatError, never another exception or a crash; and
// write_r1cs of what was read reads back equal, reproducing the input byte for byte when its
// sections are in the writer's order (2, 1, 3 as circom writes them). Both curves' readers run on
// every input; at most one accepts it.
#include <cstring>
#include <vector>

#include "fuzz/fuzz_util.hpp"
#include "groth16/formats.hpp"
#include "groth16/parallel.hpp"

using namespace cuzk;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  set_thread_count(2);
  return 0;
}

template <class LT>
static bool same_lc(const std::vector<LT>& a, const std::vector<LT>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (a[i].wire != b[i].wire || !(a[i].coeff == b[i].coeff)) return false;
  return true;
}

template <class C>
static bool same(const groth16::R1cs<C>& x, const groth16::R1cs<C>& y) {
  if (x.n_wires != y.n_wires || x.n_pub_out != y.n_pub_out || x.n_pub_in != y.n_pub_in || x.n_prv_in != y.n_prv_in ||
      x.n_labels != y.n_labels || x.wire_labels != y.wire_labels || x.constraints.size() != y.constraints.size())
    return false;
  for (size_t i = 0; i < x.constraints.size(); i++) {
    const auto &a = x.constraints[i], &b = y.constraints[i];
    if (!same_lc(a.a, b.a) || !same_lc(a.b, b.b) || !same_lc(a.c, b.c)) return false;
  }
  return true;
}

// The invariants for curve C's reader; whether it accepted the file.
template <class C>
static bool check_on(const std::string& path, const uint8_t* data, size_t size) {
  using groth16::read_r1cs;
  groth16::R1cs<C> r;
  try {
    r = read_r1cs<C>(path);
  } catch (const FormatError&) {
    return false;
  }
  FUZZ_CHECK(r1cs_curve(path) == C::id, "r1cs_curve disagrees with read_r1cs");
  const std::string out = fuzz::scratch_dir() + "/rt.r1cs";
  groth16::write_r1cs(out, r);
  FUZZ_CHECK(same(read_r1cs<C>(out), r), "write_r1cs + read_r1cs changed the circuit");

  // The section ids in file order (the container was checked by the reader).
  std::vector<uint32_t> order;
  uint32_t count;
  std::memcpy(&count, data + 8, 4);
  for (uint64_t pos = 12, i = 0; i < count; i++) {
    uint32_t id;
    uint64_t len;
    std::memcpy(&id, data + pos, 4);
    std::memcpy(&len, data + pos + 4, 8);
    order.push_back(id);
    pos += 12 + len;
  }
  const std::vector<uint32_t> writer = r.wire_labels.empty() ? std::vector<uint32_t>{2, 1} : std::vector<uint32_t>{2, 1, 3};
  if (order == writer) {
    const std::string bytes = fuzz::slurp(out);
    FUZZ_CHECK(bytes.size() == size && std::memcmp(bytes.data(), data, size) == 0,
               "write_r1cs of a circuit in circom's layout did not reproduce it");
  }
  return true;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemFile file;
  const std::string& path = file.write(data, size);
  const bool bls = check_on<Bls12_381>(path, data, size);
  const bool bn = check_on<Bn254>(path, data, size);
  FUZZ_CHECK(!(bls && bn), "a circuit was read as both curves'");
  return 0;
}
