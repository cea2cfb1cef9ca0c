// Evaluating a compiled witness program with cuzk's field arithmetic (math/fp.hpp), over the scalar
// field of the circuit's curve: circom's operations, value for value, and the witness written
// straight into its destination in Montgomery form.
//
// Field operations run on Montgomery values. circom's integer operations (comparisons, bitwise
// operations, shifts, integer division) are defined on the value's integer in [0, p): they convert
// out of Montgomery form and back (two products), as circom's runtime does for long values.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "witness/manifest.hpp"
#include "witness/program.hpp"
#include "witness/program/ops.hpp"

namespace cuzk::witness {

template <class Fr>
Fr to_fr(const Value& v) {
  typename Fr::Repr r;
  std::memcpy(r.l, v.data(), sizeof r.l);
  return Fr::from_plain(r);
}
template <class Fr>
Value from_fr(const Fr& x) {
  const auto r = x.to_plain();
  Value v;
  std::memcpy(v.data(), r.l, sizeof v);
  return v;
}
std::string hex_of(const Value& v);

namespace program {

const char* op_name(unsigned op);

// 256-bit integers, little-endian limbs, for circom's integer view of a field element.
namespace u256 {
inline int cmp(const Value& a, const Value& b) {
  for (int i = 3; i >= 0; i--)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}
inline bool is_zero(const Value& a) { return (a[0] | a[1] | a[2] | a[3]) == 0; }
inline Value sub(const Value& a, const Value& b) {
  Value r;
  unsigned __int128 borrow = 0;
  for (int i = 0; i < 4; i++) {
    unsigned __int128 d = (unsigned __int128)a[i] - b[i] - borrow;
    r[i] = uint64_t(d);
    borrow = (d >> 64) ? 1 : 0;
  }
  return r;
}
inline Value shr(const Value& a, unsigned k) {
  Value r{};
  if (k >= 256) return r;
  const unsigned w = k / 64, s = k % 64;
  for (unsigned i = 0; i + w < 4; i++) {
    r[i] = a[i + w] >> s;
    if (s && i + w + 1 < 4) r[i] |= a[i + w + 1] << (64 - s);
  }
  return r;
}
inline Value shl(const Value& a, unsigned k) {
  Value r{};
  if (k >= 256) return r;
  const unsigned w = k / 64, s = k % 64;
  for (unsigned i = w; i < 4; i++) {
    r[i] = a[i - w] << s;
    if (s && i > w) r[i] |= a[i - w - 1] >> (64 - s);
  }
  return r;
}
inline unsigned bit_length(const Value& a) {
  for (int i = 3; i >= 0; i--)
    if (a[i]) return unsigned(64 * i + 64 - __builtin_clzll(a[i]));
  return 0;
}
// Floor division and remainder by long division, one bit at a time (rare operations).
inline void divmod(const Value& a, const Value& b, Value& q, Value& r) {
  q = Value{};
  r = Value{};
  for (int i = int(bit_length(a)) - 1; i >= 0; i--) {
    r = shl(r, 1);
    r[0] |= (a[size_t(i / 64)] >> (i % 64)) & 1;
    if (cmp(r, b) >= 0) {
      r = sub(r, b);
      q[size_t(i / 64)] |= uint64_t(1) << (i % 64);
    }
  }
}
}  // namespace u256

// circom's integer view: p, the mask of its bit width, and (p - 1) / 2, the largest value it counts
// as positive.
template <class Fr>
struct IntView {
  Value p{}, mask{}, half{};
  unsigned bits = 0;
  IntView() {
    std::memcpy(p.data(), Fr::Params::MOD, sizeof p);
    bits = u256::bit_length(p);
    for (unsigned i = 0; i < bits; i++) mask[i / 64] |= uint64_t(1) << (i % 64);
    half = u256::shr(p, 1);
  }
  static const IntView& get() {
    static const IntView v;
    return v;
  }
  // Reduces a value below 2^bits into [0, p) (one subtraction suffices).
  Value reduce(Value v) const {
    if (u256::cmp(v, p) >= 0) v = u256::sub(v, p);
    return v;
  }
  bool negative(const Value& v) const { return u256::cmp(v, half) > 0; }
  // Signed comparison of circom's relational operators: a value above (p-1)/2 stands for v - p.
  int scmp(const Value& a, const Value& b) const {
    const bool na = negative(a), nb = negative(b);
    if (na != nb) return na ? -1 : 1;
    return u256::cmp(a, b);
  }
  Value shift_left(const Value& a, const Value& k) const {
    if (negative(k)) return shift_right(a, u256::sub(p, k));
    if (k[1] | k[2] | k[3] || k[0] >= bits) return Value{};
    Value r = u256::shl(a, unsigned(k[0]));
    for (int i = 0; i < 4; i++) r[i] &= mask[i];
    return reduce(r);
  }
  Value shift_right(const Value& a, const Value& k) const {
    if (negative(k)) return shift_left(a, u256::sub(p, k));
    if (k[1] | k[2] | k[3] || k[0] >= bits) return Value{};
    return u256::shr(a, unsigned(k[0]));
  }
};

template <class Fr>
Fr from_value(const Value& v) {
  return to_fr<Fr>(v);
}

inline Value small(uint64_t v) { return Value{v, 0, 0, 0}; }

// One operation of circom's runtime on field elements. `undefined` is set where circom's own code
// stops (integer division by zero: GMP raises SIGFPE): such an input goes to the native generator.
template <class Fr>
Fr apply(unsigned op, const Fr& a, const Fr& b, bool& undefined) {
  const IntView<Fr>& iv = IntView<Fr>::get();
  auto boolean = [](bool t) { return t ? Fr::one() : Fr::zero(); };
  switch (op) {
    case Add: return a + b;
    case Sub: return a - b;
    case Mul: return a * b;
    case Neg: return -a;
    case Square: return a * a;
    case Eq: return boolean(a == b);
    case Neq: return boolean(a != b);
    case Land: return boolean(!a.is_zero() && !b.is_zero());
    case Lor: return boolean(!a.is_zero() || !b.is_zero());
    case Lnot: return boolean(a.is_zero());
    // circom's inverse of zero is zero (GMP's failed inversion leaves the result as initialised),
    // and so a / 0 = a * 0. The tracer's self-test holds every build's runtime to this.
    case Inv: return a.is_zero() ? Fr::zero() : a.inv();
    case Div: return b.is_zero() ? Fr::zero() : a * b.inv();
    case Pow: {
      const Value e = from_fr(b);
      typename Fr::Repr er;
      std::memcpy(er.l, e.data(), sizeof er.l);
      return a.pow(er);
    }
    default: break;
  }
  const Value x = from_fr(a), y = from_fr(b);
  Value r{};
  switch (op) {
    case Lt: return boolean(iv.scmp(x, y) < 0);
    case Gt: return boolean(iv.scmp(x, y) > 0);
    case Leq: return boolean(iv.scmp(x, y) <= 0);
    case Geq: return boolean(iv.scmp(x, y) >= 0);
    case Band:
      for (int i = 0; i < 4; i++) r[i] = x[i] & y[i] & iv.mask[i];
      r = iv.reduce(r);
      break;
    case Bor:
      for (int i = 0; i < 4; i++) r[i] = (x[i] | y[i]) & iv.mask[i];
      r = iv.reduce(r);
      break;
    case Bxor:
      for (int i = 0; i < 4; i++) r[i] = (x[i] ^ y[i]) & iv.mask[i];
      r = iv.reduce(r);
      break;
    case Bnot:
      for (int i = 0; i < 4; i++) r[i] = ~x[i] & iv.mask[i];
      r = iv.reduce(r);
      break;
    case Shl: r = iv.shift_left(x, y); break;
    case Shr: r = iv.shift_right(x, y); break;
    case Idiv:
    case Mod: {
      if (u256::is_zero(y)) {
        undefined = true;
        return Fr::zero();
      }
      Value q, m;
      u256::divmod(x, y, q, m);
      r = op == Idiv ? q : m;
      break;
    }
    default: undefined = true; return Fr::zero();
  }
  return from_value<Fr>(r);
}

}  // namespace program

}  // namespace cuzk::witness
