// circom constraint systems (.r1cs version 1).
// Sections: 1 header, 2 constraints, 3 wire-to-label map (optional here). circom writes them in
// the order 2, 1, 3, and so does write_r1cs. Sections 4 and 5 (custom gates) exist only for
// circom's PLONK custom gates, which Groth16 cannot prove, so a file with them is rejected; any
// other section id is rejected as unknown rather than silently ignored.
#include <cstring>

#include "binfile.hpp"
#include "formats.hpp"
#include "parallel.hpp"

namespace cuzk {

using namespace binfile;

namespace {

// Both curves' scalar fields take 32 bytes; the term layout below relies on it.
constexpr uint32_t kN8 = 32;
constexpr uint64_t kTermBytes = 4 + kN8;
static_assert(Bls12_381::FrParams::BYTES == kN8 && Bn254::FrParams::BYTES == kN8);

const std::string kS1 = section_name(1, "header");
const std::string kS2 = section_name(2, "constraints");
const std::string kS3 = section_name(3, "wire labels");

const char* lc_name(int k) { return k == 0 ? "A" : k == 1 ? "B" : "C"; }

// Decodes one constraint starting at p (already bounds-checked by the offset scan); on a bad
// wire or coefficient returns false and, with `msg`, says which term and why.
template <class C>
bool decode_constraint(const uint8_t* p, uint32_t n_wires, groth16::Constraint<C>* out, std::string* msg) {
  using Fr = typename C::Fr;
  for (int k = 0; k < 3; k++) {
    uint32_t n;
    std::memcpy(&n, p, 4);
    p += 4;
    std::vector<groth16::LinearTerm<C>>* lc = out ? (k == 0 ? &out->a : k == 1 ? &out->b : &out->c) : nullptr;
    if (lc) lc->resize(n);
    for (uint32_t t = 0; t < n; t++, p += kTermBytes) {
      uint32_t wire;
      std::memcpy(&wire, p, 4);
      typename Fr::Repr v;
      std::memcpy(v.l, p + 4, kN8);
      if (wire >= n_wires) {
        if (msg)
          *msg = std::string(lc_name(k)) + " term " + std::to_string(t) + ": wire " + std::to_string(wire) +
                 " is not below nWires " + std::to_string(n_wires);
        return false;
      }
      if (!Fr::is_canonical(v.l)) {
        if (msg) *msg = std::string(lc_name(k)) + " term " + std::to_string(t) + ": coefficient is not below r";
        return false;
      }
      if (lc) (*lc)[t] = {wire, Fr::from_plain(v)};
    }
  }
  return true;
}

// Section 1 after the prime. Only the constant wire and the public signals (outputs, then public
// inputs) have wires of their own, 0 .. nPubOut + nPubIn. nPrvIn counts the private inputs as
// declared: circom drops those that no constraint uses (--O1, --O2) with their wires, so nWires may
// be below 1 + nPubOut + nPubIn + nPrvIn, and snarkjs sets up and proves such a circuit.
struct Sizes {
  uint32_t n_wires, n_pub_out, n_pub_in, n_prv_in;
  uint64_t n_labels;
  uint32_t n_constraints;
};

Sizes read_sizes(Cursor& h) {
  Sizes s;
  s.n_wires = h.u32("nWires");
  s.n_pub_out = h.u32("nPubOut");
  s.n_pub_in = h.u32("nPubIn");
  s.n_prv_in = h.u32("nPrvIn");
  s.n_labels = h.u64("nLabels");
  s.n_constraints = h.u32("nConstraints");
  h.expect_end();
  const uint64_t fixed = 1 + (uint64_t)s.n_pub_out + s.n_pub_in;
  if (s.n_wires < fixed)
    h.fail("nWires " + std::to_string(s.n_wires) + " is smaller than 1 + nPubOut + nPubIn = " + std::to_string(fixed) +
           " (the constant wire and the public signals)");
  return s;
}

}  // namespace

R1csHeader read_r1cs_header(const std::string& path) {
  Reader rd(path, "r1cs", 1, MapMode::Lazy);
  Cursor h = rd.section(1, kS1);
  uint32_t n8 = h.u32("n8");
  const uint8_t* prime = h.bytes(n8, "the prime");
  R1csHeader r;
  r.curve = expect_known_prime(h, n8, prime, FieldKind::Scalar, "the prime");
  const Sizes s = read_sizes(h);
  r.n_wires = s.n_wires, r.n_pub_out = s.n_pub_out, r.n_pub_in = s.n_pub_in, r.n_prv_in = s.n_prv_in;
  r.n_constraints = s.n_constraints;
  return r;
}

std::string r1cs_key_mismatch(const R1csHeader& r, const std::string& r1cs_path, const ZKeyHeader& k,
                              const std::string& zkey_path) {
  if (r.curve != k.curve)
    return r1cs_path + " is for " + curve_display_name(r.curve) + " but " + zkey_path + " is for " +
           curve_display_name(k.curve) + "; both must be for the same curve";
  if (r.n_wires != k.n_vars)
    return r1cs_path + " has nWires=" + std::to_string(r.n_wires) + " but " + zkey_path +
           " has nVars=" + std::to_string(k.n_vars) + " (the r1cs of another circuit?)";
  if (uint64_t(r.n_pub_out) + r.n_pub_in != k.n_public)
    return r1cs_path + " has " + std::to_string(uint64_t(r.n_pub_out) + r.n_pub_in) + " public signals (nPubOut + nPubIn) but " +
           zkey_path + " has nPublic=" + std::to_string(k.n_public) + " (the r1cs of another circuit?)";
  return "";
}

CurveId r1cs_curve(const std::string& path) {
  Reader rd(path, "r1cs", 1, MapMode::Lazy);
  Cursor h = rd.section(1, kS1);
  uint32_t n8 = h.u32("n8");
  const uint8_t* prime = h.bytes(n8, "the prime");
  return expect_known_prime(h, n8, prime, FieldKind::Scalar, "the prime");
}

namespace groth16 {

template <class C>
R1cs<C> read_r1cs(const std::string& path) {
  Reader rd(path, "r1cs", 1);
  for (const SectionInfo& s : rd.sections()) {
    std::string where = "section " + std::to_string(s.id);
    if (s.id == 4 || s.id == 5)
      rd.fail(where, "custom gates (circom --use-custom-gates, PLONK only) are not supported by Groth16");
    if (s.id < 1 || s.id > 3) rd.fail(where, "unexpected section id (an r1cs has sections 1, 2 and optionally 3)");
  }

  Cursor h = rd.section(1, kS1);
  uint32_t n8 = h.u32("n8");
  const uint8_t* prime = h.bytes(n8, "the prime");
  expect_prime(h, n8, prime, C::id, FieldKind::Scalar, "the prime");
  R1cs<C> r;
  const Sizes sizes = read_sizes(h);
  r.n_wires = sizes.n_wires, r.n_pub_out = sizes.n_pub_out, r.n_pub_in = sizes.n_pub_in, r.n_prv_in = sizes.n_prv_in;
  r.n_labels = sizes.n_labels;
  const uint32_t n_constraints = sizes.n_constraints;

  // Pass 1 (sequential, reads only the term counts): find where each constraint starts, proving
  // that every count fits in the section before anything is allocated from it.
  Cursor s2 = rd.section(2, kS2);
  if ((uint64_t)n_constraints * 12 > s2.size())
    s2.fail(std::to_string(n_constraints) + " constraints need at least " + std::to_string((uint64_t)n_constraints * 12) +
            " bytes but the section has " + std::to_string(s2.size()));
  std::vector<uint64_t> start(n_constraints);
  for (uint32_t i = 0; i < n_constraints; i++) {
    start[i] = s2.pos();
    for (int k = 0; k < 3; k++) {
      uint32_t n = s2.u32("a term count");
      if ((uint64_t)n * kTermBytes > s2.remaining())
        s2.fail("constraint " + std::to_string(i) + ": " + lc_name(k) + " has " + std::to_string(n) +
                " terms, more than the " + std::to_string(s2.remaining()) + " bytes left can hold");
      s2.bytes((uint64_t)n * kTermBytes, "the terms");
    }
  }
  s2.expect_end();

  // Pass 2 (parallel): decode and check every term.
  r.constraints.resize(n_constraints);
  Failure f = first_failure(n_constraints, [&](size_t i) -> const char* {
    return decode_constraint<C>(s2.data() + start[i], r.n_wires, &r.constraints[i], nullptr) ? nullptr : "bad";
  });
  if (f.why) {
    std::string msg;
    decode_constraint<C>(s2.data() + start[f.index], r.n_wires, nullptr, &msg);
    s2.fail("constraint " + std::to_string(f.index) + ": " + msg);
  }

  if (rd.find(3)) {
    Cursor s3 = rd.section(3, kS3);
    s3.expect_remaining((uint64_t)r.n_wires * 8, std::to_string(r.n_wires) + " labels of 8 bytes (nWires)");
    r.wire_labels.resize(r.n_wires);
    std::memcpy(r.wire_labels.data(), s3.data(), (size_t)r.n_wires * 8);
    for (uint32_t i = 0; i < r.n_wires; i++)
      if (r.wire_labels[i] >= r.n_labels)
        s3.fail("wire " + std::to_string(i) + " has label " + std::to_string(r.wire_labels[i]) +
                ", not below nLabels " + std::to_string(r.n_labels));
  }
  return r;
}

template <class C>
void write_r1cs(const std::string& path, const R1cs<C>& r) {
  auto bad = [&](const std::string& what) { throw std::invalid_argument(path + ": cannot write r1cs: " + what); };
  if (r.constraints.size() > UINT32_MAX) bad("more than 2^32 - 1 constraints");
  if ((uint64_t)r.n_wires < 1 + (uint64_t)r.n_pub_out + r.n_pub_in) bad("n_wires is smaller than 1 + public signals");
  if (!r.wire_labels.empty() && r.wire_labels.size() != r.n_wires) bad("wire_labels must be empty or have n_wires entries");
  for (uint64_t l : r.wire_labels)
    if (l >= r.n_labels) bad("a wire label is not below n_labels");

  // Byte offset of every constraint, so that blocks encode in parallel into place.
  const size_t n = r.constraints.size();
  std::vector<uint64_t> off(n + 1, 0);
  for (size_t i = 0; i < n; i++) {
    const Constraint<C>& c = r.constraints[i];
    for (const auto* lc : {&c.a, &c.b, &c.c}) {
      if (lc->size() > UINT32_MAX) bad("a linear combination with more than 2^32 - 1 terms");
      for (const LinearTerm<C>& t : *lc)
        if (t.wire >= r.n_wires) bad("constraint " + std::to_string(i) + " uses wire " + std::to_string(t.wire) + " >= n_wires");
    }
    off[i + 1] = off[i] + 12 + (c.a.size() + c.b.size() + c.c.size()) * kTermBytes;
  }

  Writer w(path, "r1cs", 1, r.wire_labels.empty() ? 2 : 3);
  w.begin_section(2, off[n]);
  const size_t block = 1 << 16;
  std::vector<uint8_t> buf;
  for (size_t b = 0; b < n; b += block) {
    size_t e = std::min(n, b + block);
    buf.resize(off[e] - off[b]);
    parallel_for(e - b, [&](size_t lo, size_t hi, size_t) {
      for (size_t i = b + lo; i < b + hi; i++) {
        uint8_t* o = buf.data() + (off[i] - off[b]);
        const Constraint<C>& c = r.constraints[i];
        for (const auto* lc : {&c.a, &c.b, &c.c}) {
          uint32_t cnt = (uint32_t)lc->size();
          std::memcpy(o, &cnt, 4);
          o += 4;
          for (const LinearTerm<C>& t : *lc) {
            std::memcpy(o, &t.wire, 4);
            auto v = t.coeff.to_plain();
            std::memcpy(o + 4, v.l, kN8);
            o += kTermBytes;
          }
        }
      }
    });
    w.write(buf.data(), buf.size());
  }
  w.end_section();

  w.begin_section(1, 4 + kN8 + 4 * 4 + 8 + 4);
  w.u32(kN8);
  w.write(C::FrParams::MOD, kN8);
  w.u32(r.n_wires);
  w.u32(r.n_pub_out);
  w.u32(r.n_pub_in);
  w.u32(r.n_prv_in);
  w.u64(r.n_labels);
  w.u32((uint32_t)n);
  w.end_section();

  if (!r.wire_labels.empty()) {
    w.begin_section(3, (uint64_t)r.n_wires * 8);
    w.write(r.wire_labels.data(), r.wire_labels.size() * 8);
    w.end_section();
  }
  w.close();
}

template R1cs<Bls12_381> read_r1cs<Bls12_381>(const std::string&);
template R1cs<Bn254> read_r1cs<Bn254>(const std::string&);
template void write_r1cs<Bls12_381>(const std::string&, const R1cs<Bls12_381>&);
template void write_r1cs<Bn254>(const std::string&, const R1cs<Bn254>&);

}  // namespace groth16
}  // namespace cuzk
