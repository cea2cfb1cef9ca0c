// snarkjs Groth16 .zkey (version 1): strict reader, byte-exact writer.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "binfile.hpp"
#include "formats.hpp"
#include "hugepages.hpp"
#include "parallel.hpp"
#include "zkey_reader.hpp"

namespace cuzk {

using namespace binfile;
using groth16::ZKey;
using groth16::ZKeyCoef;

namespace {

constexpr uint32_t kGroth16 = 1;
constexpr size_t kContribMin = 64 + 4;  // circuit hash + contribution count
// The order `snarkjs zkey new` writes; the ceremony tools (contribute, beacon) rewrite 1..10.
constexpr uint32_t kZkeyNewOrder[10] = {1, 2, 4, 3, 9, 8, 5, 6, 7, 10};

const char* label(uint32_t id) {
  static const char* names[] = {"?", "protocol", "header", "IC", "coefficients", "A", "B1", "B2", "C", "H", "contributions"};
  return id >= 1 && id <= 10 ? names[id] : "?";
}
std::string sname(uint32_t id) { return section_name(id, label(id)); }

// The snarkjs protocol ids, for a message that says what the file is instead of just "not 1".
std::string protocol_name(uint32_t p) {
  switch (p) {
    case 2: return " (PLONK)";
    case 10: return " (FFLONK)";
    default: return "";
  }
}

// Everything about the file's shape, checked against the file before any array is allocated.
struct Layout {
  ZKeyHeader h;
  uint64_t g1_bytes, g2_bytes, coef_bytes;  // from the primes' sizes
  const uint8_t* header_points;  // alpha1, beta1, beta2, gamma2, delta1, delta2 inside section 2
  const uint8_t* coefs;          // section 4 entries
};

// With `want`, the primes must be that curve's; without, any known curve's (the header readers).
Layout parse_layout(const Reader& r, std::optional<CurveId> want = std::nullopt) {
  Cursor s1 = r.section(1, sname(1));
  uint32_t protocol = s1.u32("the protocol id");
  if (protocol != kGroth16)
    s1.fail("protocol " + std::to_string(protocol) + protocol_name(protocol) + " is not supported; only Groth16 (1)");
  s1.expect_end();

  for (const SectionInfo& s : r.sections())
    if (s.id < 1 || s.id > 10)
      r.fail("section " + std::to_string(s.id), "unexpected section id (a Groth16 zkey has sections 1 to 10)");

  Cursor s2 = r.section(2, sname(2));
  uint32_t n8q = s2.u32("n8q");
  const uint8_t* q = s2.bytes(n8q, "the prime q");
  Layout L;
  if (want)
    expect_prime(s2, n8q, q, *want, FieldKind::Base, "the base field prime q");
  L.h.curve = want ? *want : expect_known_prime(s2, n8q, q, FieldKind::Base, "the base field prime q");
  uint32_t n8r = s2.u32("n8r");
  const uint8_t* rr = s2.bytes(n8r, "the prime r");
  expect_prime(s2, n8r, rr, L.h.curve, FieldKind::Scalar, "the scalar field prime r");
  L.g1_bytes = 2 * n8q, L.g2_bytes = 4 * n8q, L.coef_bytes = 12 + n8r;
  const uint64_t kG1Bytes = L.g1_bytes, kG2Bytes = L.g2_bytes, kCoefBytes = L.coef_bytes;
  L.h.n_vars = s2.u32("nVars");
  L.h.n_public = s2.u32("nPublic");
  L.h.domain_size = s2.u32("domainSize");
  s2.expect_remaining(3 * kG1Bytes + 3 * kG2Bytes, "the points alpha1, beta1, beta2, gamma2, delta1, delta2");
  L.header_points = s2.bytes(3 * kG1Bytes + 3 * kG2Bytes, "the key points");
  const uint64_t nv = L.h.n_vars, np = L.h.n_public, dom = L.h.domain_size;
  if (nv < np + 1)
    s2.fail("nVars " + std::to_string(nv) + " is smaller than nPublic + 1 = " + std::to_string(np + 1) +
            " (the constant wire and the public signals)");
  if (dom == 0 || !std::has_single_bit(L.h.domain_size))
    s2.fail("domainSize " + std::to_string(dom) + " is not a power of two");
  if (dom < np + 1)
    s2.fail("domainSize " + std::to_string(dom) + " cannot hold the nPublic + 1 = " + std::to_string(np + 1) +
            " rows snarkjs adds for the public signals");

  auto expect_points = [&](uint32_t id, uint64_t count, uint64_t bytes_each, const std::string& what) {
    Cursor c = r.section(id, sname(id));
    c.expect_remaining(count * bytes_each, std::to_string(count) + " " + what);
  };
  expect_points(3, np + 1, kG1Bytes, "G1 points (nPublic + 1)");
  Cursor s4 = r.section(4, sname(4));
  L.h.n_coefs = s4.u32("the coefficient count");
  s4.expect_remaining((uint64_t)L.h.n_coefs * kCoefBytes,
                      std::to_string(L.h.n_coefs) + " coefficients of " + std::to_string(kCoefBytes) + " bytes");
  L.coefs = s4.bytes((uint64_t)L.h.n_coefs * kCoefBytes, "the coefficients");
  expect_points(5, nv, kG1Bytes, "G1 points (nVars)");
  expect_points(6, nv, kG1Bytes, "G1 points (nVars)");
  expect_points(7, nv, kG2Bytes, "G2 points (nVars)");
  expect_points(8, nv - np - 1, kG1Bytes, "G1 points (nVars - nPublic - 1)");
  expect_points(9, dom, kG1Bytes, "G1 points (domainSize)");
  if (const SectionInfo* s10 = r.find(10); s10 && s10->size < kContribMin)
    r.fail(sname(10), "size " + std::to_string(s10->size) + " is below the " + std::to_string(kContribMin) +
                          " bytes of a circuit hash and a contribution count");
  return L;
}

// Checks one section-4 entry; with `msg`, also says what is wrong in words.
template <class C>
bool coef_ok(const uint8_t* e, const ZKeyHeader& h, ZKeyCoef<C>* out, std::string* msg) {
  using Fr = typename C::Fr;
  uint32_t m, c, s;
  std::memcpy(&m, e, 4);
  std::memcpy(&c, e + 4, 4);
  std::memcpy(&s, e + 8, 4);
  u64 x[4];
  std::memcpy(x, e + 12, 32);
  if (m > 1) {
    if (msg) *msg = "has matrix " + std::to_string(m) + " (expected 0 = A or 1 = B)";
    return false;
  }
  if (c >= h.domain_size) {
    if (msg) *msg = "has constraint " + std::to_string(c) + ", not below domainSize " + std::to_string(h.domain_size);
    return false;
  }
  if (s >= h.n_vars) {
    if (msg) *msg = "has signal " + std::to_string(s) + ", not below nVars " + std::to_string(h.n_vars);
    return false;
  }
  if (!Fr::is_canonical(x)) {
    if (msg) *msg = "has a value not below the scalar field modulus r";
    return false;
  }
  if (out) {
    // The file holds X = v*R^2 mod r. Read as Montgomery limbs X denotes X*R^-1 = v*R; one more
    // Montgomery multiply by the raw limb 1 (the element R^-1) leaves v in Montgomery form.
    static const u64 raw_one[4] = {1, 0, 0, 0};
    *out = {m, c, s, Fr::from_mont_limbs(x) * Fr::from_mont_limbs(raw_one)};
  }
  return true;
}

template <class C>
HugeVec<ZKeyCoef<C>> decode_coefs(const Reader& r, const Layout& L) {
  HugeVec<ZKeyCoef<C>> out;
  resize_huge(out, L.h.n_coefs);
  Failure f = first_failure(out.size(), [&](size_t i) -> const char* {
    return coef_ok<C>(L.coefs + i * L.coef_bytes, L.h, &out[i], nullptr) ? nullptr : "bad";
  });
  if (f.why) {
    std::string msg;
    coef_ok<C>(L.coefs + f.index * L.coef_bytes, L.h, nullptr, &msg);
    r.fail(sname(4), "coefficient " + std::to_string(f.index) + " " + msg);
  }
  return out;
}

const uint8_t* section_data(const Reader& r, uint32_t id) { return r.base() + r.find(id)->offset; }

// n points copied out of the file as they are, on every thread (ZKeyMemory::ForDevice: the device
// that uploads them checks them).
template <class Aff>
PointArray<Aff> copy_point_array(const uint8_t* src, size_t n) {
  Aff* dst = nullptr;
  PointArray<Aff> a = PointArray<Aff>::uninitialized(n, &dst);
  const size_t bytes = n * sizeof(Aff);
  advise_huge_pages(dst, bytes);
  parallel_for(
      bytes, [&](size_t lo, size_t hi, size_t) { std::memcpy(reinterpret_cast<uint8_t*>(dst) + lo, src + lo, hi - lo); },
      bytes >= (size_t(8) << 20) ? thread_count() : 1);
  return a;
}

// The six header points must be valid too; they are checked one by one with their names.
template <class Aff>
Aff header_point(const Reader& r, const uint8_t* p, const char* name) {
  Aff a;
  std::memcpy(&a, p, sizeof a);
  if (const char* why = check_point(a)) r.fail(sname(2), std::string(name) + " " + why);
  return a;
}

}  // namespace

// A ZKey holding the header's counts and nothing else yet.
template <class C>
static ZKey<C> zkey_with_header(const Layout& L) {
  ZKey<C> zk;
  zk.n_vars = L.h.n_vars;
  zk.n_public = L.h.n_public;
  zk.domain_size = L.h.domain_size;
  zk.log_domain = std::countr_zero(L.h.domain_size);
  return zk;
}

ZKeyHeader read_zkey_header(const Reader& r) { return parse_layout(r).h; }

// Only the header and the section table are touched, so the multi-gigabyte key is not read in.
ZKeyHeader read_zkey_header(const std::string& path) { return read_zkey_header(Reader(path, "zkey", 1, MapMode::Lazy)); }

CurveId zkey_curve(const std::string& path) { return read_zkey_header(path).curve; }

std::string key_over_budget(const ZKeyHeader& h, const std::string& circuit, size_t budget) {
  const size_t need = key_resident_bytes(h);
  if (!budget || need <= budget) return "";
  return "circuit '" + circuit + "' needs at least " + std::to_string(need) + " bytes for its key, more than the " +
         std::to_string(budget) + " bytes keys may take";
}

size_t key_resident_bytes(const ZKeyHeader& h) {
  return with_curve(h.curve, [&]<class C>() -> size_t {
    const size_t g1 = sizeof(typename C::G1Affine), g2 = sizeof(typename C::G2Affine);
    const size_t priv = h.n_vars > h.n_public ? h.n_vars - h.n_public - 1 : 0;
    return size_t(h.n_vars) * (2 * g1 + g2) + priv * g1 + size_t(h.domain_size) * g1 +
           size_t(h.n_coefs) * sizeof(ZKeyCoef<C>);
  });
}

void check_same_curve(const std::string& path_a, CurveId a, const std::string& path_b, CurveId b) {
  if (a != b)
    throw FormatError(path_a + " is for " + curve_display_name(a) + " but " + path_b + " is for " +
                      curve_display_name(b) + "; both must be for the same curve");
}

namespace groth16 {

template <class C>
ZKey<C> read_zkey(const std::string& path, ZKeyMemory mem) {
  using G1Affine = typename C::G1Affine;
  using G2Affine = typename C::G2Affine;
  Reader r(path, "zkey", 1);
  Layout L = parse_layout(r, C::id);
  const uint64_t kG1Bytes = L.g1_bytes, kG2Bytes = L.g2_bytes;
  ZKey<C> zk = zkey_with_header<C>(L);
  const uint8_t* p = L.header_points;
  zk.alpha1 = header_point<G1Affine>(r, p, "alpha1");
  zk.beta1 = header_point<G1Affine>(r, p + kG1Bytes, "beta1");
  zk.beta2 = header_point<G2Affine>(r, p + 2 * kG1Bytes, "beta2");
  zk.gamma2 = header_point<G2Affine>(r, p + 2 * kG1Bytes + kG2Bytes, "gamma2");
  zk.delta1 = header_point<G1Affine>(r, p + 2 * kG1Bytes + 2 * kG2Bytes, "delta1");
  zk.delta2 = header_point<G2Affine>(r, p + 3 * kG1Bytes + 2 * kG2Bytes, "delta2");

  zk.ic = decode_points<G1Affine>(path, sname(3), section_data(r, 3), zk.n_public + 1);
  if (mem == ZKeyMemory::ForDevice) {
    // The points copied as they are, for the device to check; no coefficients.
    zk.a = copy_point_array<G1Affine>(section_data(r, 5), zk.n_vars);
    zk.b1 = copy_point_array<G1Affine>(section_data(r, 6), zk.n_vars);
    zk.b2 = copy_point_array<G2Affine>(section_data(r, 7), zk.n_vars);
    zk.c = copy_point_array<G1Affine>(section_data(r, 8), zk.n_vars - zk.n_public - 1);
    zk.h = copy_point_array<G1Affine>(section_data(r, 9), zk.domain_size);
    zk.points_unchecked = path;
  } else {
    zk.coefs = decode_coefs<C>(r, L);
  }
  auto map = mem == ZKeyMemory::Copy || mem == ZKeyMemory::ForDevice ? nullptr : r.file();
  // In the background mode the closures hold the file's bytes (through `map`) while they run.
  DeferredChecks later;
  DeferredChecks* defer = mem == ZKeyMemory::MapFileBackground ? &later : nullptr;
  if (mem != ZKeyMemory::ForDevice) {
    zk.a = decode_point_array<G1Affine>(path, sname(5), section_data(r, 5), zk.n_vars, map, defer);
    zk.b1 = decode_point_array<G1Affine>(path, sname(6), section_data(r, 6), zk.n_vars, map, defer);
    zk.b2 = decode_point_array<G2Affine>(path, sname(7), section_data(r, 7), zk.n_vars, map, defer);
    zk.c = decode_point_array<G1Affine>(path, sname(8), section_data(r, 8), zk.n_vars - zk.n_public - 1, map, defer);
    zk.h = decode_point_array<G1Affine>(path, sname(9), section_data(r, 9), zk.domain_size, map, defer);
  }
  if (!later.empty())
    zk.points_checked = std::async(std::launch::async, [work = std::move(later)] {
                          for (const auto& f : work) f();
                        }).share();
  if (const SectionInfo* s10 = r.find(10)) {
    const uint8_t* d = r.base() + s10->offset;
    zk.section10.assign(d, d + s10->size);
  }
  for (const SectionInfo& s : r.sections()) zk.section_order.push_back(s.id);
  return zk;
}

// Lazily mapped: section 4 is read as it is decoded, and the point sections not at all.
template <class C>
ZKey<C> read_zkey_coefficients(const std::string& path) {
  return read_zkey_coefficients<C>(Reader(path, "zkey", 1, MapMode::Lazy));
}

template <class C>
ZKey<C> read_zkey_coefficients(const Reader& r) {
  Layout L = parse_layout(r, C::id);
  ZKey<C> zk = zkey_with_header<C>(L);
  zk.coefs = decode_coefs<C>(r, L);
  for (const SectionInfo& s : r.sections()) zk.section_order.push_back(s.id);
  return zk;
}

namespace {

// A ZKey built in memory must be self-consistent before it is written.
template <class C>
void check_writable(const std::string& path, const ZKey<C>& zk, const std::vector<uint32_t>& order) {
  auto bad = [&](const std::string& what) { throw std::invalid_argument(path + ": cannot write zkey: " + what); };
  uint64_t nv = zk.n_vars, np = zk.n_public;
  if (nv < np + 1) bad("n_vars < n_public + 1");
  if (zk.domain_size == 0 || !std::has_single_bit(zk.domain_size)) bad("domain_size is not a power of two");
  if (zk.ic.size() != np + 1) bad("ic has " + std::to_string(zk.ic.size()) + " points, expected n_public + 1");
  if (zk.a.size() != nv || zk.b1.size() != nv || zk.b2.size() != nv) bad("a, b1 and b2 must have n_vars points");
  if (zk.c.size() != nv - np - 1) bad("c must have n_vars - n_public - 1 points");
  if (zk.h.size() != zk.domain_size) bad("h must have domain_size points");
  if (zk.coefs.size() > UINT32_MAX) bad("more than 2^32 - 1 coefficients");
  std::array<int, 11> seen{};
  for (uint32_t id : order) {
    if (id < 1 || id > 10 || seen[id]++) bad("section_order must list sections 1..9 (and optionally 10) once each");
  }
  for (uint32_t id = 1; id <= 9; id++)
    if (!seen[id]) bad("section_order lacks section " + std::to_string(id));
}

// Section 4, encoded in parallel blocks: X = v*R^2, i.e. the Montgomery limbs of v (v*R) times R
// (mont-multiplying by R^2's limbs, the element R, multiplies the stored limbs by R).
template <class C>
void write_coefs(Writer& w, const HugeVec<ZKeyCoef<C>>& coefs) {
  using Fr = typename C::Fr;
  const Fr r_elem = Fr::from_mont_limbs(C::FrParams::R2);
  constexpr uint64_t kCoefBytes = 12 + C::FrParams::BYTES;
  const size_t block = 1 << 20;
  std::vector<uint8_t> buf;
  w.u32((uint32_t)coefs.size());
  for (size_t b = 0; b < coefs.size(); b += block) {
    size_t e = std::min(coefs.size(), b + block);
    buf.resize((e - b) * kCoefBytes);
    parallel_for(e - b, [&](size_t lo, size_t hi, size_t) {
      for (size_t i = lo; i < hi; i++) {
        const ZKeyCoef<C>& c = coefs[b + i];
        uint8_t* o = buf.data() + i * kCoefBytes;
        std::memcpy(o, &c.matrix, 4);
        std::memcpy(o + 4, &c.constraint, 4);
        std::memcpy(o + 8, &c.signal, 4);
        Fr x = c.value * r_elem;
        std::memcpy(o + 12, x.l, C::FrParams::BYTES);
      }
    });
    w.write(buf.data(), buf.size());
  }
}

}  // namespace

template <class C>
void write_zkey(const std::string& path, const ZKey<C>& zk) {
  constexpr uint32_t n8q = C::FqParams::BYTES, n8r = C::FrParams::BYTES;
  constexpr uint64_t kG1Bytes = 2 * n8q, kG2Bytes = 4 * n8q, kCoefBytes = 12 + n8r;
  std::vector<uint32_t> order = zk.section_order;
  if (order.empty()) order.assign(std::begin(kZkeyNewOrder), std::end(kZkeyNewOrder));
  check_writable(path, zk, order);
  std::vector<uint8_t> contrib = zk.section10;
  if (contrib.empty()) contrib.assign(kContribMin, 0);

  Writer w(path, "zkey", 1, (uint32_t)order.size());
  for (uint32_t id : order) {
    switch (id) {
      case 1:
        w.begin_section(1, 4);
        w.u32(kGroth16);
        break;
      case 2:
        w.begin_section(2, 4 + n8q + 4 + n8r + 12 + 3 * kG1Bytes + 3 * kG2Bytes);
        w.u32(n8q);
        w.write(C::FqParams::MOD, n8q);
        w.u32(n8r);
        w.write(C::FrParams::MOD, n8r);
        w.u32(zk.n_vars);
        w.u32(zk.n_public);
        w.u32(zk.domain_size);
        write_point(w, zk.alpha1);
        write_point(w, zk.beta1);
        write_point(w, zk.beta2);
        write_point(w, zk.gamma2);
        write_point(w, zk.delta1);
        write_point(w, zk.delta2);
        break;
      case 3:
        w.begin_section(3, zk.ic.size() * kG1Bytes);
        write_points(w, zk.ic);
        break;
      case 4:
        w.begin_section(4, 4 + zk.coefs.size() * kCoefBytes);
        write_coefs(w, zk.coefs);
        break;
      case 5:
        w.begin_section(5, zk.a.size() * kG1Bytes);
        write_points(w, zk.a);
        break;
      case 6:
        w.begin_section(6, zk.b1.size() * kG1Bytes);
        write_points(w, zk.b1);
        break;
      case 7:
        w.begin_section(7, zk.b2.size() * kG2Bytes);
        write_points(w, zk.b2);
        break;
      case 8:
        w.begin_section(8, zk.c.size() * kG1Bytes);
        write_points(w, zk.c);
        break;
      case 9:
        w.begin_section(9, zk.h.size() * kG1Bytes);
        write_points(w, zk.h);
        break;
      case 10:
        w.begin_section(10, contrib.size());
        w.write(contrib.data(), contrib.size());
        break;
    }
    w.end_section();
  }
  w.close();
}

#define CUZK_ZKEY_IO(C)                                                                \
  template ZKey<C> read_zkey<C>(const std::string&, ZKeyMemory);                       \
  template ZKey<C> read_zkey_coefficients<C>(const std::string&);                      \
  template ZKey<C> read_zkey_coefficients<C>(const binfile::Reader&);                  \
  template void write_zkey<C>(const std::string&, const ZKey<C>&);
CUZK_ZKEY_IO(Bls12_381)
CUZK_ZKEY_IO(Bn254)
#undef CUZK_ZKEY_IO

}  // namespace groth16
}  // namespace cuzk
