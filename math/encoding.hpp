// Host-side conversions between field/curve elements and the external encodings:
// decimal strings (snarkjs JSON), little-endian bytes (zkey/wtns), 48/96-byte compressed points.
#pragma once
#include <optional>
#include <string>

#include "bls12_381.hpp"

namespace cuzk {

// Parses a non-negative decimal integer into N limbs; nullopt on a non-digit, empty string or overflow.
template <int N>
std::optional<BigInt<N>> parse_decimal(const std::string& s);
// Prints a plain integer in decimal.
template <int N>
std::string to_decimal(const BigInt<N>& v);

// Decimal string to field element; nullopt unless the value is canonical (< modulus).
template <class F>
std::optional<F> field_from_decimal(const std::string& s) {
  auto v = parse_decimal<F::N>(s);
  if (!v || !F::is_canonical(v->l)) return std::nullopt;
  return F::from_plain(*v);
}
template <class F>
std::string field_to_decimal(const F& f) {
  return to_decimal<F::N>(f.to_plain());
}

// Little-endian plain bytes (F::N*8 bytes, or fewer with zero high bytes) to plain limbs.
template <int N>
BigInt<N> limbs_from_le(const uint8_t* p, size_t len) {
  BigInt<N> r;
  for (int i = 0; i < N; i++) r.l[i] = 0;
  for (size_t i = 0; i < len && i < (size_t)N * 8; i++) r.l[i / 8] |= (u64)p[i] << (8 * (i % 8));
  return r;
}
template <int N>
void limbs_to_le(const BigInt<N>& v, uint8_t* out, size_t len) {
  for (size_t i = 0; i < len; i++) out[i] = i < (size_t)N * 8 ? (uint8_t)(v.l[i / 8] >> (8 * (i % 8))) : 0;
}

}  // namespace cuzk
