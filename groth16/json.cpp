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
#include <sstream>
#include <unistd.h>

#include "formats.hpp"
#include "math/encoding.hpp"
#include "math/pairing.hpp"

namespace cuzk {

namespace {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

// ----------------------------------------------------------------------------------------------
// Writing

std::string dec(const Fq& v) { return field_to_decimal(v); }
std::string dec(const Fr& v) { return field_to_decimal(v); }

ojson fq2_json(const Fq2& v) { return ojson::array({dec(v.c0), dec(v.c1)}); }

// G1 as [x, y, z]; infinity as [0, 1, 0] like ffjavascript's toObject.
ojson g1_json(const G1Affine& p) {
  if (p.is_inf()) return ojson::array({"0", "1", "0"});
  return ojson::array({dec(p.x), dec(p.y), "1"});
}
ojson g2_json(const G2Affine& p) {
  if (p.is_inf()) return ojson::array({ojson::array({"0", "0"}), ojson::array({"1", "0"}), ojson::array({"0", "0"})});
  return ojson::array({fq2_json(p.x), fq2_json(p.y), ojson::array({"1", "0"})});
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

json parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError(path + ": open: " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw FormatError(path + ": read: " + std::strerror(errno));
  try {
    return json::parse(ss.str());
  } catch (const json::exception& e) {
    // A syntax error (parse_error), or a number the parser cannot hold such as 1e400 (out_of_range).
    std::string what = e.what();
    // nlohmann's messages start with "[json.exception.parse_error.101] "; keep the useful part.
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    jfail(path, "JSON syntax", what);
  }
}

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

Fq fq_elem(const std::string& path, const json& v, const std::string& field) { return field_elem<Fq>(path, v, field, "q"); }

void expect_array(const std::string& path, const json& v, const std::string& field, size_t lo, size_t hi) {
  if (!v.is_array()) jfail(path, field, "not an array");
  if (v.size() < lo || v.size() > hi)
    jfail(path, field, "has " + std::to_string(v.size()) + " entries, expected " +
                           (lo == hi ? std::to_string(lo) : std::to_string(lo) + " or " + std::to_string(hi)));
}

Fq2 fq2_elem(const std::string& path, const json& v, const std::string& field) {
  expect_array(path, v, field, 2, 2);
  return {fq_elem(path, v[0], field + "[0]"), fq_elem(path, v[1], field + "[1]")};
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

G1Affine g1_point(const std::string& path, const json& v, const std::string& field) {
  return point<bls12_381::G1Curve>(path, v, field, fq_elem);
}
G2Affine g2_point(const std::string& path, const json& v, const std::string& field) {
  return point<bls12_381::G2Curve>(path, v, field, fq2_elem);
}

void expect_string(const std::string& path, const json& obj, const char* key, const char* want) {
  const json& v = member(path, obj, "", key);
  if (!v.is_string()) jfail(path, key, "not a string");
  if (v.get_ref<const std::string&>() != want)
    jfail(path, key, "is \"" + v.get_ref<const std::string&>() + "\", expected \"" + want + "\"" +
                         (std::strcmp(key, "curve") == 0 ? " (only BLS12-381 is supported)" : ""));
}

void expect_object(const std::string& path, const json& j) {
  if (!j.is_object()) jfail(path, "top level", "not a JSON object");
}

}  // namespace

void write_proof_json(const std::string& path, const Proof& p) {
  ojson j;
  j["pi_a"] = g1_json(p.a);
  j["pi_b"] = g2_json(p.b);
  j["pi_c"] = g1_json(p.c);
  j["protocol"] = "groth16";
  j["curve"] = "bls12381";
  write_text(path, j.dump(1));
}

Proof read_proof_json(const std::string& path) {
  json j = parse_file(path);
  expect_object(path, j);
  expect_string(path, j, "protocol", "groth16");
  expect_string(path, j, "curve", "bls12381");
  Proof p;
  p.a = g1_point(path, member(path, j, "", "pi_a"), "pi_a");
  p.b = g2_point(path, member(path, j, "", "pi_b"), "pi_b");
  p.c = g1_point(path, member(path, j, "", "pi_c"), "pi_c");
  return p;
}

void write_public_json(const std::string& path, const std::vector<Fr>& pub) {
  ojson j = ojson::array();
  for (const Fr& v : pub) j.push_back(dec(v));
  write_text(path, j.dump(1));
}

std::vector<Fr> read_public_json(const std::string& path) {
  json j = parse_file(path);
  if (!j.is_array()) jfail(path, "top level", "not a JSON array of decimal strings");
  std::vector<Fr> out;
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); i++) out.push_back(field_elem<Fr>(path, j[i], "[" + std::to_string(i) + "]", "r"));
  return out;
}

VerificationKey vk_from_zkey(const ZKey& zk) {
  VerificationKey vk;
  vk.n_public = zk.n_public;
  vk.alpha1 = zk.alpha1;
  vk.beta2 = zk.beta2;
  vk.gamma2 = zk.gamma2;
  vk.delta2 = zk.delta2;
  vk.ic = zk.ic;
  return vk;
}

void write_vk_json(const std::string& path, const VerificationKey& vk) {
  if (vk.ic.size() != (size_t)vk.n_public + 1)
    throw std::invalid_argument(path + ": cannot write a verification key whose IC has " + std::to_string(vk.ic.size()) +
                                " points for nPublic = " + std::to_string(vk.n_public));
  // e(alpha1, beta2) in snarkjs's Gt.toObject layout: [c0, c1], each Fq6 as [c0, c1, c2] of Fq2.
  bls12_381::Fq12 ab = bls12_381::pairing(vk.alpha1, vk.beta2);
  auto fq6_json = [](const bls12_381::Fq6& v) { return ojson::array({fq2_json(v.c0), fq2_json(v.c1), fq2_json(v.c2)}); };
  ojson j;
  j["protocol"] = "groth16";
  j["curve"] = "bls12381";
  j["nPublic"] = vk.n_public;
  j["vk_alpha_1"] = g1_json(vk.alpha1);
  j["vk_beta_2"] = g2_json(vk.beta2);
  j["vk_gamma_2"] = g2_json(vk.gamma2);
  j["vk_delta_2"] = g2_json(vk.delta2);
  j["vk_alphabeta_12"] = ojson::array({fq6_json(ab.c0), fq6_json(ab.c1)});
  ojson ic = ojson::array();
  for (const G1Affine& p : vk.ic) ic.push_back(g1_json(p));
  j["IC"] = ic;
  write_text(path, j.dump(1));
}

VerificationKey read_vk_json(const std::string& path) {
  json j = parse_file(path);
  expect_object(path, j);
  expect_string(path, j, "protocol", "groth16");
  expect_string(path, j, "curve", "bls12381");
  VerificationKey vk;
  const json& np = member(path, j, "", "nPublic");
  if (!np.is_number_unsigned() || np.get<uint64_t>() > UINT32_MAX)
    jfail(path, "nPublic", "not a non-negative integer below 2^32");
  vk.n_public = np.get<uint32_t>();
  vk.alpha1 = g1_point(path, member(path, j, "", "vk_alpha_1"), "vk_alpha_1");
  vk.beta2 = g2_point(path, member(path, j, "", "vk_beta_2"), "vk_beta_2");
  vk.gamma2 = g2_point(path, member(path, j, "", "vk_gamma_2"), "vk_gamma_2");
  vk.delta2 = g2_point(path, member(path, j, "", "vk_delta_2"), "vk_delta_2");
  // vk_alphabeta_12 is derived data (the verifier recomputes e(alpha1, beta2)); when present it
  // must still be well formed: 2 x 3 Fq2 elements.
  if (auto it = j.find("vk_alphabeta_12"); it != j.end()) {
    const std::string f = "vk_alphabeta_12";
    expect_array(path, *it, f, 2, 2);
    for (size_t a = 0; a < 2; a++) {
      std::string fa = f + "[" + std::to_string(a) + "]";
      expect_array(path, (*it)[a], fa, 3, 3);
      for (size_t b = 0; b < 3; b++) fq2_elem(path, (*it)[a][b], fa + "[" + std::to_string(b) + "]");
    }
  }
  const json& ic = member(path, j, "", "IC");
  if (!ic.is_array()) jfail(path, "IC", "not an array");
  if (ic.size() != (size_t)vk.n_public + 1)
    jfail(path, "IC", "has " + std::to_string(ic.size()) + " points, expected nPublic + 1 = " +
                          std::to_string((uint64_t)vk.n_public + 1));
  for (size_t i = 0; i < ic.size(); i++) vk.ic.push_back(g1_point(path, ic[i], "IC[" + std::to_string(i) + "]"));
  return vk;
}

}  // namespace cuzk
