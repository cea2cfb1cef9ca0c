// snarkjs/circom witness files (.wtns version 2): section 1 = {u32 n8, prime, u32 nWitness},
// section 2 = nWitness plain-form scalars of n8 bytes.
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

struct WtnsLayout {
  uint32_t count;
  const uint8_t* values;
};

// Validates the container, the header and the witness section's size; touches no values.
WtnsLayout parse_layout(const Reader& r) {
  for (const SectionInfo& s : r.sections())
    if (s.id != 1 && s.id != 2)
      r.fail("section " + std::to_string(s.id), "unexpected section id (a witness has sections 1 and 2)");
  Cursor s1 = r.section(1, section_name(1, "header"));
  uint32_t n8 = s1.u32("n8");
  const uint8_t* prime = s1.bytes(n8, "the prime");
  expect_prime(s1, n8, prime, KnownPrime::BlsR, "the prime");
  WtnsLayout L;
  L.count = s1.u32("nWitness");
  s1.expect_end();
  Cursor s2 = r.section(2, section_name(2, "witness"));
  s2.expect_remaining((uint64_t)L.count * kN8, std::to_string(L.count) + " values of 32 bytes (nWitness)");
  L.values = s2.data();
  return L;
}

}  // namespace

uint32_t read_wtns_count(const std::string& path) {
  Reader r(path, "wtns", 2);
  return parse_layout(r).count;
}

std::vector<Fr> read_wtns(const std::string& path) {
  Reader r(path, "wtns", 2);
  WtnsLayout L = parse_layout(r);
  std::vector<Fr> w;
  resize_huge(w, L.count);
  Failure f = first_failure(w.size(), [&](size_t i) -> const char* {
    Fr::Repr v;
    std::memcpy(v.l, L.values + i * kN8, kN8);
    if (!Fr::is_canonical(v.l)) return "is not below the scalar field modulus r";
    w[i] = Fr::from_plain(v);
    return nullptr;
  });
  if (f.why) r.fail(section_name(2, "witness"), "value " + std::to_string(f.index) + " " + f.why);
  return w;
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
