// Compressed point encodings of the zcash / IETF BLS12-381 convention (what Filecoin proofs use):
// big-endian x (for G2: x.c1 then x.c0), with the three top bits of the first byte as flags:
// 0x80 compressed, 0x40 point at infinity, 0x20 y is the lexicographically larger root.
#include <stdexcept>
#include <string>

#include "formats.hpp"
#include "math/subgroup.hpp"

namespace cuzk {

using namespace bls12_381;  // the zcash encoding is BLS12-381's

namespace {

constexpr uint8_t FLAG_COMPRESSED = 0x80, FLAG_INFINITY = 0x40, FLAG_SIGN = 0x20, FLAG_MASK = 0xe0;

void fq_to_be(const Fq& f, uint8_t out[48]) {
  Fq::Repr v = f.to_plain();
  for (int i = 0; i < 48; i++) out[47 - i] = (uint8_t)(v.l[i / 8] >> (8 * (i % 8)));
}

// Big-endian 48 bytes (flag bits already cleared) to a canonical Fq; throws when >= q.
Fq fq_from_be(const uint8_t in[48], const char* what) {
  Fq::Repr v;
  for (int i = 0; i < 6; i++) v.l[i] = 0;
  for (int i = 0; i < 48; i++) v.l[i / 8] |= (u64)in[47 - i] << (8 * (i % 8));
  if (!Fq::is_canonical(v.l))
    throw std::invalid_argument(std::string(what) + ": coordinate is not a canonical field element (>= q)");
  return Fq::from_plain(v);
}

// Shared flag validation: returns true for the (only) valid infinity encoding.
bool read_flags(const uint8_t* in, size_t len, const char* what) {
  uint8_t flags = in[0] & FLAG_MASK;
  if (!(flags & FLAG_COMPRESSED))
    throw std::invalid_argument(std::string(what) + ": compression flag (0x80) not set");
  if (flags & FLAG_INFINITY) {
    bool rest_zero = (in[0] & ~FLAG_MASK) == 0;
    for (size_t i = 1; i < len; i++) rest_zero = rest_zero && in[i] == 0;
    if ((flags & FLAG_SIGN) || !rest_zero)
      throw std::invalid_argument(std::string(what) + ": infinity flag set but the sign bit or coordinate bytes are not zero");
    return true;
  }
  return false;
}

}  // namespace

void compress_g1(const G1Affine& p, uint8_t out[48]) {
  if (p.is_inf()) {
    for (int i = 0; i < 48; i++) out[i] = 0;
    out[0] = FLAG_COMPRESSED | FLAG_INFINITY;
    return;
  }
  fq_to_be(p.x, out);
  out[0] |= FLAG_COMPRESSED | (p.y.is_lexicographically_largest() ? FLAG_SIGN : 0);
}

void compress_g2(const G2Affine& p, uint8_t out[96]) {
  if (p.is_inf()) {
    for (int i = 0; i < 96; i++) out[i] = 0;
    out[0] = FLAG_COMPRESSED | FLAG_INFINITY;
    return;
  }
  fq_to_be(p.x.c1, out);
  fq_to_be(p.x.c0, out + 48);
  out[0] |= FLAG_COMPRESSED | (p.y.is_lexicographically_largest() ? FLAG_SIGN : 0);
}

G1Affine decompress_g1(const uint8_t in[48]) {
  const char* what = "compressed G1 point";
  if (read_flags(in, 48, what)) return G1Affine::infinity();
  uint8_t buf[48];
  for (int i = 0; i < 48; i++) buf[i] = in[i];
  buf[0] &= ~FLAG_MASK;
  Fq x = fq_from_be(buf, what), y;
  if (!(x.sqr() * x + bls12_381::G1Curve::b()).sqrt(y))
    throw std::invalid_argument(std::string(what) + ": x is not the abscissa of a curve point");
  if (y.is_lexicographically_largest() != bool(in[0] & FLAG_SIGN)) y = -y;
  G1Affine p{x, y};
  if (!bls12_381::g1_in_subgroup(p)) throw std::invalid_argument(std::string(what) + ": not in the prime-order subgroup");
  return p;
}

G2Affine decompress_g2(const uint8_t in[96]) {
  const char* what = "compressed G2 point";
  if (read_flags(in, 96, what)) return G2Affine::infinity();
  uint8_t buf[48];
  for (int i = 0; i < 48; i++) buf[i] = in[i];
  buf[0] &= ~FLAG_MASK;
  Fq2 x{fq_from_be(in + 48, what), fq_from_be(buf, what)}, y;
  if (!(x.sqr() * x + bls12_381::G2Curve::b()).sqrt(y))
    throw std::invalid_argument(std::string(what) + ": x is not the abscissa of a curve point");
  if (y.is_lexicographically_largest() != bool(in[0] & FLAG_SIGN)) y = -y;
  G2Affine p{x, y};
  if (!bls12_381::g2_in_subgroup(p)) throw std::invalid_argument(std::string(what) + ": not in the prime-order subgroup");
  return p;
}

}  // namespace cuzk
