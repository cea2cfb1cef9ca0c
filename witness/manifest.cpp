// manifest.json of a witness-generator artefact: written by the build, read by every process that
// checks inputs or runs the generator.
#include "witness/manifest.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace cuzk::witness {

namespace {

using nlohmann::json;

// The scalar fields' moduli, little-endian 64-bit limbs.
constexpr Value kBls12381R = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull,
                              0x73eda753299d7d48ull};
constexpr Value kBn254R = {0x43e1f593f0000001ull, 0x2833e84879b97091ull, 0xb85045b68181585dull,
                           0x30644e72e131a029ull};

std::string hex64(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

uint64_t parse_hex64(const json& j, const std::string& what) {
  if (!j.is_string()) throw WitnessError(what + ": expected a hex string");
  const std::string s = j.get<std::string>();
  if (s.empty() || s.size() > 16 || s.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    throw WitnessError(what + ": not a 64-bit hex number");
  return std::stoull(s, nullptr, 16);
}

template <class T>
T field(const json& j, const char* key, const std::string& file) {
  if (!j.contains(key)) throw WitnessError(file + ": missing field '" + key + "'");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw WitnessError(file + ": field '" + key + "' has the wrong type");
  }
}

}  // namespace

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= uint64_t(static_cast<unsigned char>(c));
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string Manifest::curve() const {
  if (prime == kBls12381R) return "bls12381";
  if (prime == kBn254R) return "bn128";
  return "";
}

const InputSignal* Manifest::find(std::string_view name) const {
  const uint64_t h = fnv1a(name);
  for (const InputSignal& s : inputs)
    if (s.hash == h && (s.name.empty() || s.name == name)) return &s;
  return nullptr;
}

bool is_artefact(const std::string& dir) {
  struct stat st;
  return ::stat((dir + "/manifest.json").c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void write_manifest(const std::string& dir, const Manifest& m) {
  json ins = json::array();
  for (const InputSignal& s : m.inputs)
    ins.push_back({{"name", s.name}, {"hash", hex64(s.hash)}, {"offset", s.offset}, {"size", s.size}});
  json prime = json::array();
  for (uint64_t l : m.prime) prime.push_back(hex64(l));
  json j = {{"format", "cuzk-witness-generator"},
            {"version", Manifest::kVersion},
            {"circuit", m.circuit},
            {"curve", m.curve()},
            {"prime", prime},
            {"n_witness", m.n_witness},
            {"n_signals", m.n_signals},
            {"input_start", m.input_start},
            {"n_inputs", m.n_inputs},
            {"names_known", m.names_known},
            {"key", m.key},
            {"source", m.source},
            {"inputs", ins}};
  const std::string path = dir + "/manifest.json", tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << j.dump(1) << "\n";
    if (!f) throw WitnessError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw WitnessError("cannot rename " + tmp + " to " + path);
}

Manifest read_manifest(const std::string& dir) {
  const std::string path = dir + "/manifest.json";
  std::ifstream f(path);
  if (!f) throw WitnessError(path + ": cannot open");
  std::stringstream ss;
  ss << f.rdbuf();
  json j;
  try {
    j = json::parse(ss.str());
  } catch (const json::exception&) {
    throw WitnessError(path + ": not JSON");
  }
  if (!j.is_object() || j.value("format", "") != "cuzk-witness-generator")
    throw WitnessError(path + ": not a cuzk witness-generator manifest");
  if (field<uint32_t>(j, "version", path) != Manifest::kVersion)
    throw WitnessError(path + ": manifest version " + std::to_string(field<uint32_t>(j, "version", path)) +
                       ", this cuzk reads version " + std::to_string(Manifest::kVersion) + " (rebuild it)");
  Manifest m;
  m.dir = dir;
  m.circuit = field<std::string>(j, "circuit", path);
  const json& pr = j.contains("prime") ? j["prime"] : json();
  if (!pr.is_array() || pr.size() != 4) throw WitnessError(path + ": prime must be 4 limbs");
  for (size_t i = 0; i < 4; i++) m.prime[i] = parse_hex64(pr[i], path + ": prime");
  m.n_witness = field<uint32_t>(j, "n_witness", path);
  m.n_signals = field<uint32_t>(j, "n_signals", path);
  m.input_start = field<uint32_t>(j, "input_start", path);
  m.n_inputs = field<uint32_t>(j, "n_inputs", path);
  m.names_known = field<bool>(j, "names_known", path);
  m.key = field<std::string>(j, "key", path);
  if (j.contains("source")) m.source = field<std::string>(j, "source", path);  // absent before wasm sources
  if (m.source != "cpp" && m.source != "wasm") throw WitnessError(path + ": field 'source' must be cpp or wasm");
  if (!j.contains("inputs") || !j["inputs"].is_array()) throw WitnessError(path + ": inputs must be an array");
  uint64_t covered = 0;
  for (const json& e : j["inputs"]) {
    if (!e.is_object()) throw WitnessError(path + ": inputs: entries must be objects");
    InputSignal s;
    s.name = field<std::string>(e, "name", path);
    s.hash = parse_hex64(e.contains("hash") ? e["hash"] : json(), path + ": inputs.hash");
    s.offset = field<uint32_t>(e, "offset", path);
    s.size = field<uint32_t>(e, "size", path);
    if (uint64_t(s.offset) + s.size > m.n_inputs) throw WitnessError(path + ": input " + s.name + " out of range");
    covered += s.size;
    m.inputs.push_back(std::move(s));
  }
  if (covered != m.n_inputs)
    throw WitnessError(path + ": the inputs cover " + std::to_string(covered) + " values, n_inputs is " +
                       std::to_string(m.n_inputs));
  return m;
}

}  // namespace cuzk::witness
