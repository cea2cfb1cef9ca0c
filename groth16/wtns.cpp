// snarkjs/circom witness files (.wtns version 2): section 1 = {u32 n8, prime, u32 nWitness},
// section 2 = nWitness plain-form scalars of n8 bytes.
#include <algorithm>
#include <cstring>
#include <optional>

#include "binfile.hpp"
#include "formats.hpp"
#include "hugepages.hpp"
#include "parallel.hpp"
#include "math/encoding.hpp"

namespace cuzk {

using namespace binfile;

namespace {

// Section 1 is 4 + n8 + 4 bytes; anything much larger is not read into memory to find out.
constexpr uint64_t kMaxHeaderBytes = 1024;
const char* const kNotCanonical = "is not below the scalar field modulus r";

const std::string& header_name() {
  static const std::string s = section_name(1, "header");
  return s;
}
const std::string& values_name() {
  static const std::string s = section_name(2, "witness");
  return s;
}

void check_section_ids(const std::string& path, const std::vector<SectionInfo>& sections) {
  for (const SectionInfo& s : sections)
    if (s.id != 1 && s.id != 2)
      fail(path, "section " + std::to_string(s.id), "unexpected section id (a witness has sections 1 and 2)");
}

// nWitness and the curve from section 1, after checking the field (that of `want`, where given) and
// that section 2 (of `values_bytes`) holds exactly that many values. Touches no values.
WtnsHeader parse_header(Cursor s1, uint64_t values_bytes, std::optional<CurveId> want) {
  uint32_t n8 = s1.u32("n8");
  const uint8_t* prime = s1.bytes(n8, "the prime");
  CurveId curve = want ? *want : expect_known_prime(s1, n8, prime, FieldKind::Scalar, "the prime");
  if (want) expect_prime(s1, n8, prime, *want, FieldKind::Scalar, "the prime");
  uint32_t count = s1.u32("nWitness");
  s1.expect_end();
  Cursor(s1.path(), values_name(), nullptr, values_bytes)
      .expect_remaining((uint64_t)count * n8,
                        std::to_string(count) + " values of " + std::to_string(n8) + " bytes (nWitness)");
  return {count, curve};
}

// One plain value at src into Montgomery form at dst (which may be the same bytes), or why not.
template <class Fr>
inline const char* decode_value(const uint8_t* src, Fr* dst) {
  typename Fr::Repr v;
  std::memcpy(v.l, src, sizeof v.l);
  if (!Fr::is_canonical(v.l)) return kNotCanonical;
  *dst = Fr::from_plain(v);
  return nullptr;
}

struct MappedLayout {
  uint32_t count;
  const uint8_t* values;
};

MappedLayout parse_layout(const Reader& r, CurveId want) {
  check_section_ids(r.path(), r.sections());
  Cursor s1 = r.section(1, header_name());
  Cursor s2 = r.section(2, values_name());
  return {parse_header(s1, s2.size(), want).count, s2.data()};
}

// The checked header of a witness read with pread: the count, the curve and where the values start.
struct PreadLayout {
  WtnsHeader h;
  uint64_t values_offset;
};

PreadLayout parse_layout(const PreadFile& f, std::optional<CurveId> want) {
  std::vector<SectionInfo> sections = f.sections("wtns", 2);
  check_section_ids(f.path(), sections);
  auto find = [&](uint32_t id, const std::string& name) -> const SectionInfo& {
    for (const SectionInfo& s : sections)
      if (s.id == id) return s;
    fail(f.path(), name, "missing");
  };
  const SectionInfo& h = find(1, header_name());
  const SectionInfo& v = find(2, values_name());
  if (h.size > kMaxHeaderBytes)
    fail(f.path(), header_name(),
         "size mismatch: " + std::to_string(h.size) + " bytes, a witness header has 4 + n8 + 4");
  uint8_t buf[kMaxHeaderBytes];
  f.read_at(h.offset, h.size, buf, header_name());
  return {parse_header(Cursor(f.path(), header_name(), buf, h.size), v.size, want), v.offset};
}

}  // namespace

WtnsHeader read_wtns_header(const std::string& path) { return parse_layout(PreadFile(path), std::nullopt).h; }

CurveId wtns_curve(const std::string& path) { return read_wtns_header(path).curve; }

namespace groth16 {

template <class C>
std::vector<typename C::Fr> read_wtns(const std::string& path) {
  using Fr = typename C::Fr;
  constexpr uint32_t kN8 = C::FrParams::BYTES;
  Reader r(path, "wtns", 2);
  MappedLayout L = parse_layout(r, C::id);
  std::vector<Fr> w;
  resize_huge(w, L.count);
  Failure f = first_failure(w.size(), [&](size_t i) { return decode_value(L.values + i * kN8, &w[i]); });
  if (f.why) r.fail(values_name(), "value " + std::to_string(f.index) + " " + f.why);
  return w;
}

template <class C>
void read_wtns_into(const std::string& path, typename C::Fr* dest, size_t n_expected) {
  constexpr uint32_t kN8 = C::FrParams::BYTES;
  PreadFile file(path);
  PreadLayout P = parse_layout(file, C::id);
  const uint32_t count = P.h.count;
  struct {
    uint32_t count;
    uint64_t values_offset;
  } L{count, P.values_offset};
  if (L.count != n_expected)
    fail(path, header_name(),
         "nWitness is " + std::to_string(L.count) + " but " + std::to_string(n_expected) +
             " values were expected (a witness of another circuit?)");
  // Each block is read by the kernel straight into dest and converted there while it is still in
  // the core's cache; the blocks are spread over the threads. The smallest bad index wins, so the
  // message does not depend on thread timing.
  constexpr size_t kBlock = 4096;  // values: 128 KiB
  const size_t n_blocks = (L.count + kBlock - 1) / kBlock;
  std::vector<size_t> bad_at(n_blocks);
  Failure f = first_failure(
      n_blocks,
      [&](size_t k) -> const char* {
        const size_t lo = k * kBlock, n = std::min<size_t>(kBlock, L.count - lo);
        file.read_at(L.values_offset + lo * kN8, n * kN8, dest + lo, values_name());
        const auto* bytes = reinterpret_cast<const uint8_t*>(dest + lo);
        for (size_t i = 0; i < n; i++)
          if (const char* why = decode_value(bytes + i * kN8, dest + lo + i)) {
            bad_at[k] = lo + i;
            return why;
          }
        return nullptr;
      },
      1);
  if (f.why) fail(path, values_name(), "value " + std::to_string(bad_at[f.index]) + " " + f.why);
}

template <class C>
void write_wtns(const std::string& path, const std::vector<typename C::Fr>& w) {
  constexpr uint32_t kN8 = C::FrParams::BYTES;
  if (w.size() > UINT32_MAX) throw std::invalid_argument(path + ": cannot write a witness of more than 2^32 - 1 values");
  Writer out(path, "wtns", 2, 2);
  out.begin_section(1, 4 + kN8 + 4);
  out.u32(kN8);
  out.write(C::FrParams::MOD, kN8);
  out.u32((uint32_t)w.size());
  out.end_section();
  out.begin_section(2, (uint64_t)w.size() * kN8);
  const size_t block = 1 << 20;
  std::vector<uint8_t> buf;
  for (size_t b = 0; b < w.size(); b += block) {
    size_t e = std::min(w.size(), b + block);
    buf.resize((e - b) * kN8);
    parallel_for(e - b, [&](size_t lo, size_t hi, size_t) {
      for (size_t i = lo; i < hi; i++) {
        auto v = w[b + i].to_plain();
        std::memcpy(buf.data() + i * kN8, v.l, kN8);
      }
    });
    out.write(buf.data(), buf.size());
  }
  out.end_section();
  out.close();
}

#define CUZK_WTNS_IO(C)                                                                  \
  template std::vector<C::Fr> read_wtns<C>(const std::string&);                          \
  template void read_wtns_into<C>(const std::string&, C::Fr*, size_t);                   \
  template void write_wtns<C>(const std::string&, const std::vector<C::Fr>&);
CUZK_WTNS_IO(Bls12_381)
CUZK_WTNS_IO(Bn254)
#undef CUZK_WTNS_IO

}  // namespace groth16
}  // namespace cuzk
