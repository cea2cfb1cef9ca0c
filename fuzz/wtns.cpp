// .wtns readers: read_wtns (mapped), read_wtns_into (pread into a slot), read_wtns_count, and the
// supervisor's submission check wtns_value_count. Invariants: a bad file is a FormatError (or
// WtnsHeaderError), never another exception or a crash; the four agree on every file read_wtns
// accepts; write_wtns of what was read reads back the same values, and reproduces the input byte
// for byte when it has the writer's section order. Both curves' readers run on every input; at most
// one accepts it, and the header check names that curve.
#include <cstring>
#include <vector>

#include "fuzz/fuzz_util.hpp"
#include "groth16/formats.hpp"
#include "groth16/parallel.hpp"
#include "supervisor/intake/wtns_header.hpp"

using namespace cuzk;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  set_thread_count(2);
  return 0;
}

template <class C>
static bool check_on(const std::string& path, const uint8_t* data, size_t size) {
  using Fr = typename C::Fr;
  using groth16::read_wtns;
  std::vector<Fr> w;
  bool ok = false;
  try {
    w = read_wtns<C>(path);
    ok = true;
  } catch (const FormatError&) {
  }

  try {
    uint32_t n = read_wtns_count(path);
    FUZZ_CHECK(!ok || n == w.size(), "read_wtns_count disagrees with read_wtns");
  } catch (const FormatError&) {
    FUZZ_CHECK(!ok, "read_wtns_count refused a witness read_wtns accepted");
  }

  try {
    sup::WtnsInfo info = sup::wtns_info(std::string_view(reinterpret_cast<const char*>(data), size));
    uint32_t n = info.count;
    FUZZ_CHECK(!ok || (n == w.size() && info.curve == C::id), "wtns_info disagrees with read_wtns");
    // The header check passes: read_wtns_into of exactly that many values either succeeds with
    // read_wtns's values or names a bad value.
    if (n <= (1u << 16)) {
      std::vector<Fr> into(n);
      try {
        groth16::read_wtns_into<C>(path, into.data(), n);
        FUZZ_CHECK(ok && into == w, "read_wtns_into accepted what read_wtns did not, or read other values");
      } catch (const FormatError&) {
        FUZZ_CHECK(!ok, "read_wtns_into refused a witness read_wtns accepted");
      }
      if (info.curve != C::id) FUZZ_CHECK(!ok, "read_wtns accepted a witness of the other curve");
    }
  } catch (const sup::WtnsHeaderError&) {
    // The header check also wants w[0] = 1, which the file readers leave to the caller.
    FUZZ_CHECK(!ok || w.empty() || !(w[0] == Fr::one()), "wtns_info refused a witness read_wtns accepted");
  }

  if (ok) {
    const std::string out = fuzz::scratch_dir() + "/rt.wtns";
    groth16::write_wtns<C>(out, w);
    FUZZ_CHECK(read_wtns<C>(out) == w, "write_wtns + read_wtns changed the values");
    uint32_t first_section;
    std::memcpy(&first_section, data + 12, 4);
    if (first_section == 1) {
      const std::string bytes = fuzz::slurp(out);
      FUZZ_CHECK(bytes.size() == size && std::memcmp(bytes.data(), data, size) == 0,
                 "write_wtns of a witness in the writer's layout did not reproduce it");
    }
  }
  return ok;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemFile file;
  const std::string& path = file.write(data, size);
  const bool bls = check_on<Bls12_381>(path, data, size);
  const bool bn = check_on<Bn254>(path, data, size);
  FUZZ_CHECK(!(bls && bn), "a witness was read as both curves'");
  return 0;
}
