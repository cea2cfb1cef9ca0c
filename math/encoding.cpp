#include "encoding.hpp"

namespace cuzk {

template <int N>
std::optional<BigInt<N>> parse_decimal(const std::string& s) {
  if (s.empty() || s.size() > 200) return std::nullopt;
  BigInt<N> r{};
  for (int i = 0; i < N; i++) r.l[i] = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return std::nullopt;
    u64 carry = (u64)(ch - '0');
    for (int i = 0; i < N; i++) r.l[i] = mac(0, r.l[i], 10, carry);
    if (carry) return std::nullopt;
  }
  return r;
}

template <int N>
std::string to_decimal(const BigInt<N>& v) {
  BigInt<N> t = v;
  std::string out;
  const u64 base = 10000000000000000000ULL;  // 10^19, the largest power of ten in a limb
  while (!t.is_zero()) {
    u64 rem = 0;
    for (int i = N - 1; i >= 0; i--) {
      u128 cur = ((u128)rem << 64) | t.l[i];
      t.l[i] = (u64)(cur / base);
      rem = (u64)(cur % base);
    }
    for (int d = 0; d < 19; d++) {
      out.push_back(char('0' + rem % 10));
      rem /= 10;
      if (t.is_zero() && rem == 0) break;
    }
  }
  if (out.empty()) out = "0";
  return std::string(out.rbegin(), out.rend());
}

template std::optional<BigInt<4>> parse_decimal<4>(const std::string&);
template std::optional<BigInt<6>> parse_decimal<6>(const std::string&);
template std::optional<BigInt<8>> parse_decimal<8>(const std::string&);
template std::string to_decimal<4>(const BigInt<4>&);
template std::string to_decimal<6>(const BigInt<6>&);
template std::string to_decimal<8>(const BigInt<8>&);

namespace bls12_381 {

static Fq fq(const char* s) { return *field_from_decimal<Fq>(s); }

G1Affine g1_generator() {
  static const G1Affine g{
      fq("3685416753713387016781088315183077757961620795782546409894578378688607592378376318836054947676345821548104185464507"),
      fq("1339506544944476473020471379941921221584933875938349620426543736416511423956333506472724655353366534992391756441569")};
  return g;
}

G2Affine g2_generator() {
  static const G2Affine g{
      {fq("352701069587466618187139116011060144890029952792775240219908644239793785735715026873347600343865175952761926303160"),
       fq("3059144344244213709971259814753781636986470325476647558659373206291635324768958432433509563104347017837885763365758")},
      {fq("1985150602287291935568054521177171638300868978215655730859378665066344726373823718423869104263333984641494340347905"),
       fq("927553665492332455747201965776037880757740193453592970025027978793976877002675564980949289727957565575433344219582")}};
  return g;
}

}  // namespace bls12_381
}  // namespace cuzk
