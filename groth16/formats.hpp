// In-memory forms of the snarkjs files (.zkey Groth16 v1, .wtns v2, .r1cs v1) and their strict
// readers/writers. Every reader validates magic, version, section sizes against the header counts,
// the primes, canonical field elements and on-curve points, and throws FormatError naming
// the file, the section and what is wrong.
#pragma once
#include <cstddef>
#include <cstdint>
#include <future>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hugepages.hpp"
#include "math/bls12_381.hpp"

namespace cuzk {

using bls12_381::Fq;
using bls12_381::Fq2;
using bls12_381::Fr;
using bls12_381::G1;
using bls12_381::G1Affine;
using bls12_381::G2;
using bls12_381::G2Affine;

// A malformed input file. what() reads "<file>: <section>: <problem>".
struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The points of one proving-key section: read-only, either owned or a view into the mapped key
// file (kept alive by `owner_`), so that a one-shot prover can use the file's bytes in place
// instead of copying tens of megabytes into fresh memory (see ZKeyMemory). Copies share the
// storage, which is never written through this type.
template <class T>
class PointArray {
 public:
  using value_type = T;
  using const_iterator = const T*;
  PointArray() = default;
  PointArray(std::vector<T> v) { adopt(std::move(v)); }  // NOLINT: implicit, so `zk.a = points` works
  PointArray(std::initializer_list<T> l) { adopt(std::vector<T>(l)); }
  PointArray& operator=(std::vector<T> v) {
    adopt(std::move(v));
    return *this;
  }
  PointArray& operator=(std::initializer_list<T> l) {
    adopt(std::vector<T>(l));
    return *this;
  }
  template <class It>
  void assign(It first, It last) {
    adopt(std::vector<T>(first, last));
  }
  void assign(size_t n, const T& v) { adopt(std::vector<T>(n, v)); }
  // A view of n points at p, which `owner` keeps valid.
  static PointArray view(std::shared_ptr<const void> owner, const T* p, size_t n) {
    PointArray a;
    a.owner_ = std::move(owner), a.p_ = p, a.n_ = n;
    return a;
  }
  // n owned points left uninitialised (T must be trivially default-constructible); *out receives
  // the storage to fill before the array is shared.
  static PointArray uninitialized(size_t n, T** out) {
    std::shared_ptr<T[]> buf(new T[n]);
    *out = buf.get();
    PointArray a;
    a.p_ = buf.get(), a.n_ = n, a.owner_ = std::move(buf);
    return a;
  }
  const T* data() const { return p_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const T& operator[](size_t i) const { return p_[i]; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }
  bool operator==(const PointArray& o) const {
    if (n_ != o.n_) return false;
    for (size_t i = 0; i < n_; i++)
      if (!(p_[i] == o.p_[i])) return false;
    return true;
  }

 private:
  void adopt(std::vector<T> v) {
    auto owned = std::make_shared<std::vector<T>>(std::move(v));
    p_ = owned->data(), n_ = owned->size(), owner_ = std::move(owned);
  }
  std::shared_ptr<const void> owner_;
  const T* p_ = nullptr;
  size_t n_ = 0;
};

// One non-zero coefficient of the A or B matrix (zkey section 4).
struct ZKeyCoef {
  uint32_t matrix;      // 0 = A, 1 = B
  uint32_t constraint;  // row, < domain_size
  uint32_t signal;      // column, < n_vars
  Fr value;             // the true coefficient (decoded from the file's value*R^2 encoding)
};

// A Groth16 proving key in snarkjs's layout.
struct ZKey {
  uint32_t n_vars = 0, n_public = 0, domain_size = 0;
  int log_domain = 0;
  G1Affine alpha1, beta1, delta1;
  G2Affine beta2, gamma2, delta2;
  std::vector<G1Affine> ic;   // n_public + 1
  HugeVec<ZKeyCoef> coefs;  // not zero-filled on resize (see hugepages.hpp)
  PointArray<G1Affine> a;    // n_vars
  PointArray<G1Affine> b1;   // n_vars
  PointArray<G2Affine> b2;   // n_vars
  PointArray<G1Affine> c;    // n_vars - n_public - 1 (private wires)
  PointArray<G1Affine> h;    // domain_size
  std::vector<uint8_t> section10;  // contributions, kept verbatim
  // Section ids in file order as read (snarkjs writes 1,2,4,3,9,8,5,6,7,10 in `zkey new` and 1..10
  // after a contribution), so that read + write reproduces a file byte for byte. Empty: zkey new's order.
  std::vector<uint32_t> section_order;
  // With ZKeyMemory::MapFileBackground: the point sections' checks (and copies), still running when
  // read_zkey returns. wait_points_checked() must succeed before the points are used.
  std::shared_future<void> points_checked;
};

// Waits for the background point checks of a key read with ZKeyMemory::MapFileBackground and
// rethrows their FormatError; returns at once for a key read any other way.
void wait_points_checked(const ZKey& zk);

// Where read_zkey keeps the point sections. Copy: in memory of its own, safe against the file being
// rewritten or truncated later (the daemon's workers, which live for weeks). MapFile: every point
// section that sits 8-byte aligned in the file is used in place from a read-only mapping (checked
// as strictly as a copy), the others are copied without a zero fill; for one-shot commands, where
// fresh memory (page faults, kernel page clearing) costs more than the checks. MapFileBackground:
// as MapFile, but the point checks run on a background thread while the caller goes on (reading
// the witness, compiling the evaluator, the H stage) - see ZKey::points_checked.
enum class ZKeyMemory { Copy, MapFile, MapFileBackground };

// Reads a whole zkey. Throws FormatError.
ZKey read_zkey(const std::string& path, ZKeyMemory mem = ZKeyMemory::Copy);
// Writes sections 1..10 in snarkjs's layout, in section_order (default: `snarkjs zkey new`'s).
// An empty section10 is written as snarkjs's "no contributions" (zero circuit hash, count 0).
void write_zkey(const std::string& path, const ZKey& zk);

// Header of a zkey without loading the points (for `cuzk info`).
struct ZKeyHeader {
  uint32_t n_vars, n_public, domain_size, n_coefs;
};
ZKeyHeader read_zkey_header(const std::string& path);
// The header and section 4 only (the coefficients, checked as strictly as by read_zkey): all that
// synthesis needs to compile the constraint evaluator. The point vectors are left empty, so a
// synthesis worker does not hold (or check) gigabytes of key points it never uses.
ZKey read_zkey_coefficients(const std::string& path);

// A witness (.wtns v2): w[0] = 1, then outputs, public inputs, private inputs, internal signals.
std::vector<Fr> read_wtns(const std::string& path);
// The same values, checked the same way, straight into dest (n_expected of them, e.g. a shared-memory
// slot's w): the file is read with pread in blocks spread over thread_count() threads and converted
// in place, with no mapping and no intermediate vector. Only for regular files. Throws FormatError
// naming the file when its nWitness is not n_expected, when it is shorter than its header says (also
// when it shrinks while being read), or when a value is not canonical; dest is then partly written.
void read_wtns_into(const std::string& path, Fr* dest, size_t n_expected);
void write_wtns(const std::string& path, const std::vector<Fr>& w);
uint32_t read_wtns_count(const std::string& path);  // header only (a few small reads)

// One linear combination: sum of coeff * w[wire].
struct LinearTerm {
  uint32_t wire;
  Fr coeff;
};
struct Constraint {
  std::vector<LinearTerm> a, b, c;
};
// A circuit (.r1cs v1).
struct R1cs {
  uint32_t n_wires = 0, n_pub_out = 0, n_pub_in = 0, n_prv_in = 0;
  uint64_t n_labels = 0;
  std::vector<Constraint> constraints;
  std::vector<uint64_t> wire_labels;  // section 3: label id of each wire (n_wires of them), or empty
  uint32_t n_public() const { return n_pub_out + n_pub_in; }
};
R1cs read_r1cs(const std::string& path);
void write_r1cs(const std::string& path, const R1cs& r);

// A Groth16 proof.
struct Proof {
  G1Affine a;
  G2Affine b;
  G1Affine c;
};

// A verification key in snarkjs's JSON form.
struct VerificationKey {
  uint32_t n_public = 0;
  G1Affine alpha1;
  G2Affine beta2, gamma2, delta2;
  std::vector<G1Affine> ic;
};

// JSON files in snarkjs's exact format. Readers throw FormatError naming the file and the field.
void write_proof_json(const std::string& path, const Proof& p);
Proof read_proof_json(const std::string& path);
void write_public_json(const std::string& path, const std::vector<Fr>& pub);
std::vector<Fr> read_public_json(const std::string& path);
void write_vk_json(const std::string& path, const VerificationKey& vk);  // includes vk_alphabeta_12
VerificationKey read_vk_json(const std::string& path);
VerificationKey vk_from_zkey(const ZKey& zk);

// Filecoin's 192-byte compressed proof: 48-byte A, 96-byte B, 48-byte C (zcash flag bits).
void compress_g1(const G1Affine& p, uint8_t out[48]);
void compress_g2(const G2Affine& p, uint8_t out[96]);
G1Affine decompress_g1(const uint8_t in[48]);  // throws std::invalid_argument
G2Affine decompress_g2(const uint8_t in[96]);

}  // namespace cuzk
