// In-memory forms of the snarkjs files (.zkey Groth16 v1, .wtns v2, .r1cs v1, the JSON proof, public
// signals and verification key) and their strict readers/writers, for every curve of math/curves.hpp.
// Every reader validates magic, version, section sizes against the header counts, the primes,
// canonical field elements and on-curve points, and throws FormatError naming the file, the section
// and what is wrong. A file's curve is its prime: zkey_curve()/wtns_curve()/r1cs_curve() read it from
// the header, and a reader for one curve refuses a file of another, naming both curves.
//
// The templates live in cuzk::groth16 and take the curve struct (Bls12_381, Bn254). Each curve's
// namespace also gets the names with the curve filled in (bn254::ZKey, bn254::read_zkey, ...; see
// CUZK_GROTH16_CURVE_NAMES at the end), for code that works on one known curve.
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
#include "math/curves.hpp"

namespace cuzk {

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

// Where read_zkey keeps the point sections. Copy: in memory of its own, safe against the file being
// rewritten or truncated later (the daemon's workers, which live for weeks). MapFile: every point
// section that sits 8-byte aligned in the file is used in place from a read-only mapping (checked
// as strictly as a copy), the others are copied without a zero fill; for one-shot commands, where
// fresh memory (page faults, kernel page clearing) costs more than the checks. MapFileBackground:
// as MapFile, but the point checks run on a background thread while the caller goes on (reading
// the witness, compiling the evaluator, the H stage) - see ZKey::points_checked. ForDevice: for a
// device prover that takes its matrices from the evaluator cache: the point sections are copied as
// Copy does, but their checks (coordinates below q, on the curve) are left to the device they are
// uploaded to, which runs them in milliseconds where two host cores take seconds at 2^22 (the key's
// points_unchecked names the file until then), and section 4 is not decoded (coefs stays empty).
// The header points and IC are checked as always.
enum class ZKeyMemory { Copy, MapFile, MapFileBackground, ForDevice };

// Header of a zkey without loading the points (for `cuzk info` and to learn a key's curve).
struct ZKeyHeader {
  uint32_t n_vars, n_public, domain_size, n_coefs;
  CurveId curve;
};
ZKeyHeader read_zkey_header(const std::string& path);
// Bytes a proving key takes once it is resident: its five point sets and its coefficients (the
// matrices A and B), as read. What the cpu backend holds, and the least any device holds: a device
// adds the MSM scratch and the precomputed tables it builds beside them. Known from the header alone,
// so that the daemon can tell before loading anything whether a key can fit a memory budget.
size_t key_resident_bytes(const ZKeyHeader& h);
// "" when the key of `circuit` can fit `budget` bytes (0: no limit), else why not, naming the circuit.
std::string key_over_budget(const ZKeyHeader& h, const std::string& circuit, size_t budget);
// The curve a zkey, a witness or an r1cs is for, from its prime. Throws FormatError naming the file
// when the prime is no curve cuzk knows (or the container is malformed).
CurveId zkey_curve(const std::string& path);
CurveId wtns_curve(const std::string& path);
CurveId r1cs_curve(const std::string& path);
// Header of an r1cs without its constraints (for checks against the circuit's zkey at start-up).
// Throws FormatError naming the file.
struct R1csHeader {
  CurveId curve;
  uint32_t n_wires, n_pub_out, n_pub_in, n_prv_in, n_constraints;
};
R1csHeader read_r1cs_header(const std::string& path);
// "" when the r1cs r (at r1cs_path) is the circuit of the zkey k (at zkey_path): the same curve,
// nWires = nVars and nPubOut + nPubIn = nPublic; else why not, naming both files.
std::string r1cs_key_mismatch(const R1csHeader& r, const std::string& r1cs_path, const ZKeyHeader& k,
                              const std::string& zkey_path);
// Throws FormatError naming both files and both curves unless they are for the same curve.
void check_same_curve(const std::string& path_a, CurveId a, const std::string& path_b, CurveId b);

namespace groth16 {

// One non-zero coefficient of the A or B matrix (zkey section 4).
template <class C>
struct ZKeyCoef {
  uint32_t matrix;      // 0 = A, 1 = B
  uint32_t constraint;  // row, < domain_size
  uint32_t signal;      // column, < n_vars
  typename C::Fr value;  // the true coefficient (decoded from the file's value*R^2 encoding)
};

// A Groth16 proving key in snarkjs's layout.
template <class C>
struct ZKey {
  using Curve = C;
  using G1Affine = typename C::G1Affine;
  using G2Affine = typename C::G2Affine;
  uint32_t n_vars = 0, n_public = 0, domain_size = 0;
  int log_domain = 0;
  G1Affine alpha1, beta1, delta1;
  G2Affine beta2, gamma2, delta2;
  std::vector<G1Affine> ic;   // n_public + 1
  HugeVec<ZKeyCoef<C>> coefs;  // not zero-filled on resize (see hugepages.hpp)
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
  // With ZKeyMemory::ForDevice: the file whose point sections (A, B1, B2, C, H) have not been
  // checked; only a prover that checks them on its device may read them (wait_points_checked
  // refuses them to everyone else). Empty for a key read any other way.
  std::string points_unchecked;
};

// Waits for the background point checks of a key read with ZKeyMemory::MapFileBackground and
// rethrows their FormatError; returns at once for a key read any other way but ForDevice, whose
// unchecked points it refuses (std::logic_error: a host consumer of a device's key).
template <class C>
void wait_points_checked(const ZKey<C>& zk) {
  if (!zk.points_unchecked.empty())
    throw std::logic_error(zk.points_unchecked + ": the key's points were read for a device that checks them");
  if (zk.points_checked.valid()) zk.points_checked.get();
}

// Reads a whole zkey. Throws FormatError (also for a key of another curve).
template <class C>
ZKey<C> read_zkey(const std::string& path, ZKeyMemory mem = ZKeyMemory::Copy);
// Writes sections 1..10 in snarkjs's layout, in section_order (default: `snarkjs zkey new`'s).
// An empty section10 is written as snarkjs's "no contributions" (zero circuit hash, count 0).
template <class C>
void write_zkey(const std::string& path, const ZKey<C>& zk);

// The header and section 4 only (the coefficients, checked as strictly as by read_zkey): all that
// synthesis needs to compile the constraint evaluator. The point vectors are left empty, so a
// synthesis worker does not hold (or check) gigabytes of key points it never uses.
template <class C>
ZKey<C> read_zkey_coefficients(const std::string& path);

// A witness (.wtns v2): w[0] = 1, then outputs, public inputs, private inputs, internal signals.
template <class C>
std::vector<typename C::Fr> read_wtns(const std::string& path);
// The same values, checked the same way, straight into dest (n_expected of them, e.g. a shared-memory
// slot's w): the file is read with pread in blocks spread over thread_count() threads and converted
// in place, with no mapping and no intermediate vector. Only for regular files. Throws FormatError
// naming the file when its nWitness is not n_expected, when it is shorter than its header says (also
// when it shrinks while being read), or when a value is not canonical; dest is then partly written.
template <class C>
void read_wtns_into(const std::string& path, typename C::Fr* dest, size_t n_expected);
template <class C>
void write_wtns(const std::string& path, const std::vector<typename C::Fr>& w);

// One linear combination: sum of coeff * w[wire].
template <class C>
struct LinearTerm {
  uint32_t wire;
  typename C::Fr coeff;
};
template <class C>
struct Constraint {
  std::vector<LinearTerm<C>> a, b, c;
};
// A circuit (.r1cs v1).
template <class C>
struct R1cs {
  uint32_t n_wires = 0, n_pub_out = 0, n_pub_in = 0, n_prv_in = 0;
  uint64_t n_labels = 0;
  std::vector<Constraint<C>> constraints;
  std::vector<uint64_t> wire_labels;  // section 3: label id of each wire (n_wires of them), or empty
  uint32_t n_public() const { return n_pub_out + n_pub_in; }
};
template <class C>
R1cs<C> read_r1cs(const std::string& path);
template <class C>
void write_r1cs(const std::string& path, const R1cs<C>& r);

// A Groth16 proof.
template <class C>
struct Proof {
  typename C::G1Affine a;
  typename C::G2Affine b;
  typename C::G1Affine c;
};

// A verification key in snarkjs's JSON form.
template <class C>
struct VerificationKey {
  uint32_t n_public = 0;
  typename C::G1Affine alpha1;
  typename C::G2Affine beta2, gamma2, delta2;
  std::vector<typename C::G1Affine> ic;
};

// JSON files in snarkjs's exact format (proof.json and verification_key.json carry the curve's
// snarkjs name). Readers throw FormatError naming the file and the field, also when a "curve" field
// names another curve.
template <class C>
void write_proof_json(const std::string& path, const Proof<C>& p);
template <class C>
Proof<C> read_proof_json(const std::string& path);
template <class C>
void write_public_json(const std::string& path, const std::vector<typename C::Fr>& pub);
template <class C>
std::vector<typename C::Fr> read_public_json(const std::string& path);
// The same from JSON text already in memory (a daemon's answer); `what` names it in errors.
template <class C>
Proof<C> parse_proof_json(const std::string& what, const std::string& text);
template <class C>
std::vector<typename C::Fr> parse_public_json(const std::string& what, const std::string& text);
template <class C>
void write_vk_json(const std::string& path, const VerificationKey<C>& vk);  // includes vk_alphabeta_12
template <class C>
VerificationKey<C> read_vk_json(const std::string& path);
template <class C>
VerificationKey<C> vk_from_zkey(const ZKey<C>& zk);

}  // namespace groth16

// The curve a verification key or proof JSON names in its "curve" field. Throws FormatError naming
// the file when it is unreadable, has no "curve" or names a curve cuzk does not know.
CurveId json_curve(const std::string& path);

// The header of a witness: its value count and curve (a few small reads).
struct WtnsHeader {
  uint32_t count;
  CurveId curve;
};
WtnsHeader read_wtns_header(const std::string& path);
inline uint32_t read_wtns_count(const std::string& path) { return read_wtns_header(path).count; }

// Filecoin's 192-byte compressed proof: 48-byte A, 96-byte B, 48-byte C (zcash flag bits). BLS12-381
// only, like Filecoin.
void compress_g1(const bls12_381::G1Affine& p, uint8_t out[48]);
void compress_g2(const bls12_381::G2Affine& p, uint8_t out[96]);
bls12_381::G1Affine decompress_g1(const uint8_t in[48]);  // throws std::invalid_argument
bls12_381::G2Affine decompress_g2(const uint8_t in[96]);

}  // namespace cuzk

// Each curve's namespace gets the types and readers with its curve filled in.
#define CUZK_GROTH16_FORMAT_NAMES(ns)                                                                     \
  namespace cuzk::ns {                                                                                   \
  using ZKeyCoef = groth16::ZKeyCoef<Curve>;                                                             \
  using ZKey = groth16::ZKey<Curve>;                                                                     \
  using LinearTerm = groth16::LinearTerm<Curve>;                                                         \
  using Constraint = groth16::Constraint<Curve>;                                                         \
  using R1cs = groth16::R1cs<Curve>;                                                                     \
  using Proof = groth16::Proof<Curve>;                                                                   \
  using VerificationKey = groth16::VerificationKey<Curve>;                                               \
  inline ZKey read_zkey(const std::string& p, ZKeyMemory m = ZKeyMemory::Copy) {                         \
    return groth16::read_zkey<Curve>(p, m);                                                              \
  }                                                                                                      \
  inline ZKey read_zkey_coefficients(const std::string& p) { return groth16::read_zkey_coefficients<Curve>(p); } \
  inline std::vector<Fr> read_wtns(const std::string& p) { return groth16::read_wtns<Curve>(p); }       \
  inline void read_wtns_into(const std::string& p, Fr* d, size_t n) { groth16::read_wtns_into<Curve>(p, d, n); } \
  inline void write_wtns(const std::string& p, const std::vector<Fr>& w) { groth16::write_wtns<Curve>(p, w); } \
  inline R1cs read_r1cs(const std::string& p) { return groth16::read_r1cs<Curve>(p); }                  \
  inline Proof read_proof_json(const std::string& p) { return groth16::read_proof_json<Curve>(p); }     \
  inline void write_public_json(const std::string& p, const std::vector<Fr>& v) {                        \
    groth16::write_public_json<Curve>(p, v);                                                             \
  }                                                                                                      \
  inline std::vector<Fr> read_public_json(const std::string& p) { return groth16::read_public_json<Curve>(p); } \
  inline VerificationKey read_vk_json(const std::string& p) { return groth16::read_vk_json<Curve>(p); } \
  using groth16::wait_points_checked;                                                                    \
  using groth16::write_zkey;                                                                             \
  using groth16::write_r1cs;                                                                             \
  using groth16::write_proof_json;                                                                       \
  using groth16::write_vk_json;                                                                          \
  using groth16::vk_from_zkey;                                                                           \
  }
CUZK_GROTH16_FORMAT_NAMES(bls12_381)
CUZK_GROTH16_FORMAT_NAMES(bn254)
