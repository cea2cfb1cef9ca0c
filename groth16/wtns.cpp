// snarkjs/circom witness files (.wtns version 2): section 1 = {u32 n8, prime, u32 nWitness},
// section 2 = nWitness plain-form scalars of n8 bytes.
#include <algorithm>
#include <cstring>

#include "binfile.hpp"
#include "formats.hpp"
#include "hugepages.hpp"
#include "parallel.hpp"
#include "math/encoding.hpp"

namespace cuzk {

using namespace binfile;

namespace {

constexpr uint32_t kN8 = 32;
// Section 1 is 4 + 32 + 4 bytes; anything much larger is not read into memory to find out.
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

// nWitness from section 1, after checking the field and that section 2 (of `values_bytes`) holds
// exactly that many values. Touches no values.
uint32_t parse_header(Cursor s1, uint64_t values_bytes) {
  uint32_t n8 = s1.u32("n8");
  const uint8_t* prime = s1.bytes(n8, "the prime");
  expect_prime(s1, n8, prime, KnownPrime::BlsR, "the prime");
  uint32_t count = s1.u32("nWitness");
  s1.expect_end();
  Cursor(s1.path(), values_name(), nullptr, values_bytes)
      .expect_remaining((uint64_t)count * kN8, std::to_string(count) + " values of 32 bytes (nWitness)");
  return count;
}

// One plain 32-byte value at src into Montgomery form at dst (which may be the same bytes), or why not.
inline const char* decode_value(const uint8_t* src, Fr* dst) {
  Fr::Repr v;
  std::memcpy(v.l, src, kN8);
  if (!Fr::is_canonical(v.l)) return kNotCanonical;
  *dst = Fr::from_plain(v);
  return nullptr;
}

struct MappedLayout {
  uint32_t count;
  const uint8_t* values;
};

MappedLayout parse_layout(const Reader& r) {
  check_section_ids(r.path(), r.sections());
  Cursor s1 = r.section(1, header_name());
  Cursor s2 = r.section(2, values_name());
  return {parse_header(s1, s2.size()), s2.data()};
}

// The checked header of a witness read with pread: the count and where the values start.
struct PreadLayout {
  uint32_t count;
  uint64_t values_offset;
};

PreadLayout parse_layout(const PreadFile& f) {
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
         "size mismatch: " + std::to_string(h.size) + " bytes, a witness header has " + std::to_string(8 + kN8));
  uint8_t buf[kMaxHeaderBytes];
  f.read_at(h.offset, h.size, buf, header_name());
  return {parse_header(Cursor(f.path(), header_name(), buf, h.size), v.size), v.offset};
}

}  // namespace

uint32_t read_wtns_count(const std::string& path) { return parse_layout(PreadFile(path)).count; }

std::vector<Fr> read_wtns(const std::string& path) {
  Reader r(path, "wtns", 2);
  MappedLayout L = parse_layout(r);
  std::vector<Fr> w;
  resize_huge(w, L.count);
  Failure f = first_failure(w.size(), [&](size_t i) { return decode_value(L.values + i * kN8, &w[i]); });
  if (f.why) r.fail(values_name(), "value " + std::to_string(f.index) + " " + f.why);
  return w;
}

void read_wtns_into(const std::string& path, Fr* dest, size_t n_expected) {
  PreadFile file(path);
  PreadLayout L = parse_layout(file);
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

void write_wtns(const std::string& path, const std::vector<Fr>& w) {
  if (w.size() > UINT32_MAX) throw std::invalid_argument(path + ": cannot write a witness of more than 2^32 - 1 values");
  Writer out(path, "wtns", 2, 2);
  out.begin_section(1, 4 + kN8 + 4);
  out.u32(kN8);
  out.write(bls12_381::FrParams::MOD, kN8);
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
        Fr::Repr v = w[b + i].to_plain();
        std::memcpy(buf.data() + i * kN8, v.l, kN8);
      }
    });
    out.write(buf.data(), buf.size());
  }
  out.end_section();
  out.close();
}

}  // namespace cuzk
