// Circuit input JSON (witness::parse_inputs, through read_inputs_file as `cuzk witness calc` and the
// synthesis worker read it) against a manifest with scalar, array, 2-D and bus inputs. Invariants:
// bad input is an InputError, never another exception or a crash; accepted values are below the
// prime, one per input value; and the values, written back as decimal strings, parse to the same.
#include <fstream>

#include "fuzz/fuzz_util.hpp"
#include "witness/inputs.hpp"

using namespace cuzk;

namespace {

witness::Manifest manifest() {
  witness::Manifest m;
  m.dir = "/nonexistent";
  m.circuit = "fuzz";
  m.prime = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull, 0x73eda753299d7d48ull};
  m.names_known = true;
  m.inputs = {{"a", witness::fnv1a("a"), 0, 1},
              {"v", witness::fnv1a("v"), 1, 3},
              {"m", witness::fnv1a("m"), 4, 4},
              {"bus.x", witness::fnv1a("bus.x"), 8, 1},
              {"arr[0].y", witness::fnv1a("arr[0].y"), 9, 2}};
  m.n_inputs = 11;
  m.n_witness = 20;
  return m;
}

std::string decimal(const witness::Value& v) {
  witness::Value x = v;
  std::string s;
  do {
    unsigned __int128 rem = 0;
    for (int i = 3; i >= 0; i--) {
      unsigned __int128 cur = (rem << 64) | x[i];
      x[i] = uint64_t(cur / 10);
      rem = cur % 10;
    }
    s.insert(s.begin(), char('0' + int(rem)));
  } while (x[0] | x[1] | x[2] | x[3]);
  return s;
}

bool below(const witness::Value& v, const witness::Value& p) {
  for (int i = 3; i >= 0; i--)
    if (v[i] != p[i]) return v[i] < p[i];
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const witness::Manifest m = manifest();
  static fuzz::MemFile file;
  const std::string& path = file.write(data, size);
  std::vector<witness::Value> vals;
  try {
    vals = witness::read_inputs_file(path, m, 1 << 20);
  } catch (const witness::InputError&) {
    return 0;
  }
  FUZZ_CHECK(vals.size() == m.n_inputs, "accepted inputs of the wrong count");
  for (const auto& v : vals) FUZZ_CHECK(below(v, m.prime), "a value not below the prime");
  // The same values in the plainest form: one decimal string each, arrays flat where the manifest
  // has one name per input.
  auto d = [&](size_t i) { return nlohmann::json(decimal(vals[i])); };
  using J = nlohmann::json;
  J again = J::object();
  again["a"] = d(0);
  again["v"] = J::array({d(1), d(2), d(3)});
  again["m"] = J::array({J::array({d(4), d(5)}), J::array({d(6), d(7)})});
  again["bus"] = J::object();
  again["bus"]["x"] = d(8);
  J elem = J::object();
  elem["y"] = J::array({d(9), d(10)});
  again["arr"] = J::array({elem});
  FUZZ_CHECK(witness::parse_inputs(again, m) == vals, "the values written back parse to others");
  return 0;
}
