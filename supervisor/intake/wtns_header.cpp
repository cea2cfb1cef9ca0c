// wtns v2: "wtns", u32 version, u32 section count, then sections (u32 id, u64 size, data):
// 1 = {u32 n8, prime (n8 bytes), u32 nWitness}, 2 = nWitness values of n8 bytes (little-endian,
// normal form), the first of which is 1.
#include "supervisor/intake/wtns_header.hpp"

#include <cstring>

#include "groth16/binfile.hpp"

namespace cuzk::sup {

namespace {

constexpr uint32_t kVersion = 2;
constexpr uint32_t kN8 = 32;  // both curves' scalar fields
constexpr uint64_t kHeaderSection = 4 + kN8 + 4;

[[noreturn]] void bad(const std::string& why) { throw WtnsHeaderError(why); }

}  // namespace

WtnsInfo wtns_info(uint64_t size, const ReadAt& read) {
  uint8_t head[12];
  if (size < sizeof head || !read(0, head, sizeof head)) bad("is not a .wtns file (shorter than its 12-byte header)");
  if (std::memcmp(head, "wtns", 4) != 0) bad("is not a .wtns file (bad magic)");
  uint32_t version, count;
  std::memcpy(&version, head + 4, 4);
  std::memcpy(&count, head + 8, 4);
  if (version != kVersion) bad("is a .wtns file of an unsupported version (cuzk reads version 2)");
  if (count != 2) bad("is not a witness: a .wtns file has 2 sections (header and values)");
  // Section table: walk the section headers only, each one checked against the file's size.
  uint64_t pos = sizeof head, off[3] = {}, len[3] = {};
  for (uint32_t i = 0; i < count; i++) {
    uint8_t sh[12];
    if (size - pos < sizeof sh || !read(pos, sh, sizeof sh)) bad("is truncated (its section table ends early)");
    uint32_t id;
    uint64_t n;
    std::memcpy(&id, sh, 4);
    std::memcpy(&n, sh + 4, 8);
    pos += sizeof sh;
    if (id != 1 && id != 2) bad("is not a witness: it has a section other than 1 (header) and 2 (values)");
    if (off[id]) bad("is not a witness: a section appears twice");
    if (n > size - pos) bad("is truncated (a section extends past the end of the file)");
    off[id] = pos, len[id] = n;
    pos += n;
  }
  if (pos != size) bad("has data after its last section");
  if (len[1] != kHeaderSection) bad("is not a witness of a supported curve (its header section has the wrong size)");
  uint8_t h[kHeaderSection];
  if (!read(off[1], h, sizeof h)) bad("is truncated (its header section ends early)");
  uint32_t n8, values;
  std::memcpy(&n8, h, 4);
  std::memcpy(&values, h + 4 + kN8, 4);
  if (n8 != kN8) bad("is not a witness of a supported curve (its values are not 32 bytes)");
  std::optional<binfile::KnownPrime> prime = binfile::identify_prime(h + 4, kN8);
  if (!prime || prime->kind != binfile::FieldKind::Scalar)
    bad("is not a witness of a supported curve (its prime is not the scalar field of BN254 or BLS12-381)");
  if (len[2] != uint64_t(values) * kN8) bad("is truncated or inconsistent (its values section does not hold nWitness values)");
  // w[0] is the constant wire: 1 in every witness of every circuit. Another value satisfies some
  // circuits' constraints all the same, and makes a proof that no verifier accepts.
  if (values == 0) bad("is not a witness: it has no values (w[0], the constant 1, is missing)");
  uint8_t w0[kN8];
  if (!read(off[2], w0, sizeof w0)) bad("is truncated (its values section ends early)");
  bool one = w0[0] == 1;
  for (uint32_t i = 1; i < kN8; i++) one = one && w0[i] == 0;
  if (!one) bad("is not a witness: its first value w[0], the constant wire, is not 1");
  return {values, prime->curve};
}

WtnsInfo wtns_info(std::string_view bytes) {
  return wtns_info(bytes.size(), [&](uint64_t off, void* buf, size_t len) {
    if (off > bytes.size() || len > bytes.size() - off) return false;
    std::memcpy(buf, bytes.data() + off, len);
    return true;
  });
}

}  // namespace cuzk::sup
