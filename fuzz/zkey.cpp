// .zkey readers: read_zkey (copied, and mapped with the point checks in the background),
// read_zkey_header and read_zkey_coefficients. Invariants: a bad key is a FormatError, never another
// exception or a crash; the readers agree on every key read_zkey accepts; and write_zkey of a key
// read reproduces the input byte for byte (the reader keeps the section order and section 10, and
// accepts only the exact encodings the writer produces). Both curves' readers run on every input, and
// at most one of them accepts it: the one whose primes the header names.
#include <cstring>

#include "fuzz/fuzz_util.hpp"
#include "groth16/formats.hpp"
#include "groth16/parallel.hpp"

using namespace cuzk;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  set_thread_count(2);
  return 0;
}

template <class C>
static bool same_coefs(const groth16::ZKey<C>& a, const groth16::ZKey<C>& b) {
  if (a.coefs.size() != b.coefs.size()) return false;
  for (size_t i = 0; i < a.coefs.size(); i++) {
    const auto &x = a.coefs[i], &y = b.coefs[i];
    if (x.matrix != y.matrix || x.constraint != y.constraint || x.signal != y.signal || !(x.value == y.value))
      return false;
  }
  return true;
}

// The invariants for curve C's readers; whether read_zkey<C> accepted the key.
template <class C>
static bool check_on(const std::string& path, const uint8_t* data, size_t size) {
  using groth16::read_zkey;
  groth16::ZKey<C> zk;
  bool ok = false;
  try {
    zk = read_zkey<C>(path, ZKeyMemory::Copy);
    ok = true;
  } catch (const FormatError&) {
  }

  bool mapped_ok = false;
  try {
    groth16::ZKey<C> m = read_zkey<C>(path, ZKeyMemory::MapFileBackground);
    groth16::wait_points_checked(m);
    mapped_ok = true;
    FUZZ_CHECK(ok && m.a == zk.a && m.b1 == zk.b1 && m.b2 == zk.b2 && m.c == zk.c && m.h == zk.h,
               "the mapped reader read other points");
  } catch (const FormatError&) {
  }
  FUZZ_CHECK(mapped_ok == ok, "the copying and the mapping reader disagree");

  try {
    ZKeyHeader h = read_zkey_header(path);
    FUZZ_CHECK(!ok || (h.n_vars == zk.n_vars && h.n_public == zk.n_public && h.domain_size == zk.domain_size &&
                       h.n_coefs == zk.coefs.size() && h.curve == C::id),
               "read_zkey_header disagrees with read_zkey");
  } catch (const FormatError&) {
    FUZZ_CHECK(!ok, "read_zkey_header refused a key read_zkey accepted");
  }

  try {
    groth16::ZKey<C> c = groth16::read_zkey_coefficients<C>(path);
    FUZZ_CHECK(!ok || same_coefs(c, zk), "read_zkey_coefficients disagrees with read_zkey");
  } catch (const FormatError&) {
    FUZZ_CHECK(!ok, "read_zkey_coefficients refused a key read_zkey accepted");
  }

  if (ok) {
    const std::string out = fuzz::scratch_dir() + "/rt.zkey";
    groth16::write_zkey(out, zk);
    const std::string bytes = fuzz::slurp(out);
    FUZZ_CHECK(bytes.size() == size && std::memcmp(bytes.data(), data, size) == 0,
               "write_zkey(read_zkey(x)) != x");
  }
  return ok;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemFile file;
  const std::string& path = file.write(data, size);
  const bool bls = check_on<Bls12_381>(path, data, size);
  const bool bn = check_on<Bn254>(path, data, size);
  FUZZ_CHECK(!(bls && bn), "a key was read as both curves'");
  return 0;
}
