// snarkjs's JSON files: proof.json, public.json, verification_key.json.
// Written exactly as snarkjs writes them (bfj with space 1 = JSON.stringify(x, null, 1): keys in
// insertion order, one-space indentation, no trailing newline), which nlohmann's ordered_json
// dump(1) reproduces byte for byte. Points are ffjavascript's toObject form: decimal strings of
// plain (non-Montgomery) coordinates with a projective z, "1" for affine points and [0, 1, 0] for
// infinity. Readers follow ffjavascript's fromObject: z = 0 is infinity, z = 1 affine, any other z
// a Jacobian coordinate (x/z^2, y/z^3).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>
#include <sstream>
#include <unistd.h>

#include "formats.hpp"
#include "math/encoding.hpp"
#include "math/pairings.hpp"

namespace cuzk {

namespace {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

// ----------------------------------------------------------------------------------------------
// Writing

template <class P>
std::string dec(const Fp<P>& v) {
  return field_to_decimal(v);
}

template <class F, int X>
ojson fq2_json(const Fp2<F, X>& v) {
  return ojson::array({dec(v.c0), dec(v.c1)});
}

// G1 as [x, y, z]; infinity as [0, 1, 0] like ffjavascript's toObject.
template <class P>
ojson point_json(const Affine<P>& p) {
  if constexpr (!requires { typename P::F::Base; }) {  // over Fq: G1
    if (p.is_inf()) return ojson::array({"0", "1", "0"});
    return ojson::array({dec(p.x), dec(p.y), "1"});
  } else {
    if (p.is_inf()) return ojson::array({ojson::array({"0", "0"}), ojson::array({"1", "0"}), ojson::array({"0", "0"})});
    return ojson::array({fq2_json(p.x), fq2_json(p.y), ojson::array({"1", "0"})});
  }
}

// Writes next to the target and renames, so that a reader never sees half a file.
void write_text(const std::string& path, const std::string& text) {
  std::string tmp = path + ".partial." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    int e = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": write failed: " + std::strerror(e));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename the finished file into place: " + std::strerror(e));
  }
}

// ----------------------------------------------------------------------------------------------
// Reading

[[noreturn]] void jfail(const std::string& path, const std::string& field, const std::string& what) {
  throw FormatError(path + ": " + field + ": " + what);
}

// `text` parsed as JSON; `path` names it in errors.
json parse_text(const std::string& path, const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // A syntax error (parse_error), or a number the parser cannot hold such as 1e400 (out_of_range).
    std::string what = e.what();
    // nlohmann's messages start with "[json.exception.parse_error.101] "; keep the useful part.
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    jfail(path, "JSON syntax", what);
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError(path + ": open: " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw FormatError(path + ": read: " + std::strerror(errno));
  return ss.str();
}

json parse_file(const std::string& path) { return parse_text(path, read_text(path)); }

const json& member(const std::string& path, const json& obj, const std::string& field, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) jfail(path, field.empty() ? key : field + "." + key, "missing");
  return *it;
}

template <class F>
F field_elem(const std::string& path, const json& v, const std::string& field, const char* modulus) {
  if (!v.is_string()) jfail(path, field, "not a decimal string");
  const std::string& s = v.get_ref<const std::string&>();
  auto parsed = parse_decimal<F::N>(s);
  if (!parsed) {
    bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
    jfail(path, field, digits ? std::string("value is not below the field modulus ") + modulus : "not a decimal string");
  }
  if (!F::is_canonical(parsed->l)) jfail(path, field, std::string("value is not below the field modulus ") + modulus);
  return F::from_plain(*parsed);
}

template <class Fq>
Fq fq_elem(const std::string& path, const json& v, const std::string& field) {
  return field_elem<Fq>(path, v, field, "q");
}

void expect_array(const std::string& path, const json& v, const std::string& field, size_t lo, size_t hi) {
  if (!v.is_array()) jfail(path, field, "not an array");
  if (v.size() < lo || v.size() > hi)
    jfail(path, field, "has " + std::to_string(v.size()) + " entries, expected " +
                           (lo == hi ? std::to_string(lo) : std::to_string(lo) + " or " + std::to_string(hi)));
}

template <class Fq2>
Fq2 fq2_elem(const std::string& path, const json& v, const std::string& field) {
  using Fq = typename Fq2::Base;
  expect_array(path, v, field, 2, 2);
  return {fq_elem<Fq>(path, v[0], field + "[0]"), fq_elem<Fq>(path, v[1], field + "[1]")};
}

// [x, y] or [x, y, z] with fromObject's meaning of z; the result must lie on the curve.
template <class C, class Elem>
Affine<C> point(const std::string& path, const json& v, const std::string& field, const Elem& elem) {
  using F = typename C::F;
  expect_array(path, v, field, 2, 3);
  F x = elem(path, v[0], field + "[0]"), y = elem(path, v[1], field + "[1]");
  F z = v.size() == 3 ? elem(path, v[2], field + "[2]") : F::one();
  Affine<C> a;
  if (z.is_zero()) return Affine<C>::infinity();
  if (z == F::one()) {
    a = {x, y};
  } else {
    a = Jacobian<C>{x, y, z}.to_affine();
  }
  if (a.is_inf() || !a.on_curve()) jfail(path, field, "point is not on the curve");
  return a;
}

template <class C>
typename C::G1Affine g1_point(const std::string& path, const json& v, const std::string& field) {
  return point<typename C::G1Curve>(path, v, field, fq_elem<typename C::Fq>);
}
template <class C>
typename C::G2Affine g2_point(const std::string& path, const json& v, const std::string& field) {
  return point<typename C::G2Curve>(path, v, field, fq2_elem<typename C::Fq2>);
}

const std::string& string_member(const std::string& path, const json& obj, const char* key) {
  const json& v = member(path, obj, "", key);
  if (!v.is_string()) jfail(path, key, "not a string");
  return v.get_ref<const std::string&>();
}

void expect_string(const std::string& path, const json& obj, const char* key, const char* want) {
  const std::string& v = string_member(path, obj, key);
  if (v != want) jfail(path, key, "is \"" + v + "\", expected \"" + want + "\"");
}

// The "curve" field names a known curve (parse_curve's spellings); with `want`, that one.
CurveId curve_field(const std::string& path, const json& obj, std::optional<CurveId> want) {
  const std::string& v = string_member(path, obj, "curve");
  CurveId got;
  try {
    got = parse_curve(v);
  } catch (const std::invalid_argument&) {
    jfail(path, "curve", "is \"" + v + "\", which is no supported curve (bn128, bls12381)");
  }
  if (want && got != *want)
    jfail(path, "curve", "is \"" + v + "\" (" + curve_display_name(got) + "), expected \"" +
                             curve_snarkjs_name(*want) + "\" (" + curve_display_name(*want) + ")");
  return got;
}

void expect_object(const std::string& path, const json& j) {
  if (!j.is_object()) jfail(path, "top level", "not a JSON object");
}

}  // namespace

CurveId json_curve(const std::string& path) {
  json j = parse_file(path);
  expect_object(path, j);
  return curve_field(path, j, std::nullopt);
}

namespace groth16 {

template <class C>
void write_proof_json(const std::string& path, const Proof<C>& p) {
  ojson j;
  j["pi_a"] = point_json(p.a);
  j["pi_b"] = point_json(p.b);
  j["pi_c"] = point_json(p.c);
  j["protocol"] = "groth16";
  j["curve"] = C::snarkjs_name;
  write_text(path, j.dump(1));
}

template <class C>
Proof<C> read_proof_json(const std::string& path) {
  return parse_proof_json<C>(path, read_text(path));
}

template <class C>
Proof<C> parse_proof_json(const std::string& path, const std::string& text) {
  json j = parse_text(path, text);
  expect_object(path, j);
  expect_string(path, j, "protocol", "groth16");
  curve_field(path, j, C::id);
  Proof<C> p;
  p.a = g1_point<C>(path, member(path, j, "", "pi_a"), "pi_a");
  p.b = g2_point<C>(path, member(path, j, "", "pi_b"), "pi_b");
  p.c = g1_point<C>(path, member(path, j, "", "pi_c"), "pi_c");
  return p;
}

template <class C>
void write_public_json(const std::string& path, const std::vector<typename C::Fr>& pub) {
  ojson j = ojson::array();
  for (const auto& v : pub) j.push_back(dec(v));
  write_text(path, j.dump(1));
}

template <class C>
std::vector<typename C::Fr> read_public_json(const std::string& path) {
  return parse_public_json<C>(path, read_text(path));
}

template <class C>
std::vector<typename C::Fr> parse_public_json(const std::string& path, const std::string& text) {
  using Fr = typename C::Fr;
  json j = parse_text(path, text);
  if (!j.is_array()) jfail(path, "top level", "not a JSON array of decimal strings");
  std::vector<Fr> out;
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); i++) out.push_back(field_elem<Fr>(path, j[i], "[" + std::to_string(i) + "]", "r"));
  return out;
}

template <class C>
VerificationKey<C> vk_from_zkey(const ZKey<C>& zk) {
  VerificationKey<C> vk;
  vk.n_public = zk.n_public;
  vk.alpha1 = zk.alpha1;
  vk.beta2 = zk.beta2;
  vk.gamma2 = zk.gamma2;
  vk.delta2 = zk.delta2;
  vk.ic = zk.ic;
  return vk;
}

template <class C>
void write_vk_json(const std::string& path, const VerificationKey<C>& vk) {
  if (vk.ic.size() != (size_t)vk.n_public + 1)
    throw std::invalid_argument(path + ": cannot write a verification key whose IC has " + std::to_string(vk.ic.size()) +
                                " points for nPublic = " + std::to_string(vk.n_public));
  // e(alpha1, beta2) in snarkjs's Gt.toObject layout: [c0, c1], each Fq6 as [c0, c1, c2] of Fq2.
  auto ab = Pairing<C>::pairing(vk.alpha1, vk.beta2);
  auto fq6_json = [](const typename Pairing<C>::Fq6& v) {
    return ojson::array({fq2_json(v.c0), fq2_json(v.c1), fq2_json(v.c2)});
  };
  ojson j;
  j["protocol"] = "groth16";
  j["curve"] = C::snarkjs_name;
  j["nPublic"] = vk.n_public;
  j["vk_alpha_1"] = point_json(vk.alpha1);
  j["vk_beta_2"] = point_json(vk.beta2);
  j["vk_gamma_2"] = point_json(vk.gamma2);
  j["vk_delta_2"] = point_json(vk.delta2);
  j["vk_alphabeta_12"] = ojson::array({fq6_json(ab.c0), fq6_json(ab.c1)});
  ojson ic = ojson::array();
  for (const auto& p : vk.ic) ic.push_back(point_json(p));
  j["IC"] = ic;
  write_text(path, j.dump(1));
}

template <class C>
VerificationKey<C> read_vk_json(const std::string& path) {
  json j = parse_file(path);
  expect_object(path, j);
  expect_string(path, j, "protocol", "groth16");
  curve_field(path, j, C::id);
  VerificationKey<C> vk;
  const json& np = member(path, j, "", "nPublic");
  if (!np.is_number_unsigned() || np.get<uint64_t>() > UINT32_MAX)
    jfail(path, "nPublic", "not a non-negative integer below 2^32");
  vk.n_public = np.get<uint32_t>();
  vk.alpha1 = g1_point<C>(path, member(path, j, "", "vk_alpha_1"), "vk_alpha_1");
  vk.beta2 = g2_point<C>(path, member(path, j, "", "vk_beta_2"), "vk_beta_2");
  vk.gamma2 = g2_point<C>(path, member(path, j, "", "vk_gamma_2"), "vk_gamma_2");
  vk.delta2 = g2_point<C>(path, member(path, j, "", "vk_delta_2"), "vk_delta_2");
  // vk_alphabeta_12 is derived data (the verifier recomputes e(alpha1, beta2)); when present it
  // must still be well formed: 2 x 3 Fq2 elements.
  if (auto it = j.find("vk_alphabeta_12"); it != j.end()) {
    const std::string f = "vk_alphabeta_12";
    expect_array(path, *it, f, 2, 2);
    for (size_t a = 0; a < 2; a++) {
      std::string fa = f + "[" + std::to_string(a) + "]";
      expect_array(path, (*it)[a], fa, 3, 3);
      for (size_t b = 0; b < 3; b++) fq2_elem<typename C::Fq2>(path, (*it)[a][b], fa + "[" + std::to_string(b) + "]");
    }
  }
  const json& ic = member(path, j, "", "IC");
  if (!ic.is_array()) jfail(path, "IC", "not an array");
  if (ic.size() != (size_t)vk.n_public + 1)
    jfail(path, "IC", "has " + std::to_string(ic.size()) + " points, expected nPublic + 1 = " +
                          std::to_string((uint64_t)vk.n_public + 1));
  for (size_t i = 0; i < ic.size(); i++) vk.ic.push_back(g1_point<C>(path, ic[i], "IC[" + std::to_string(i) + "]"));
  return vk;
}

#define CUZK_JSON_IO(C)                                                                  \
  template void write_proof_json<C>(const std::string&, const Proof<C>&);                \
  template Proof<C> read_proof_json<C>(const std::string&);                              \
  template Proof<C> parse_proof_json<C>(const std::string&, const std::string&);         \
  template void write_public_json<C>(const std::string&, const std::vector<C::Fr>&);     \
  template std::vector<C::Fr> read_public_json<C>(const std::string&);                   \
  template std::vector<C::Fr> parse_public_json<C>(const std::string&, const std::string&);\
  template VerificationKey<C> vk_from_zkey<C>(const ZKey<C>&);                           \
  template void write_vk_json<C>(const std::string&, const VerificationKey<C>&);         \
  template VerificationKey<C> read_vk_json<C>(const std::string&);
CUZK_JSON_IO(Bls12_381)
CUZK_JSON_IO(Bn254)
#undef CUZK_JSON_IO

}  // namespace groth16
}  // namespace cuzk
