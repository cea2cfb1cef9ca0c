// What `cuzk verify` reads: proof.json, public.json and verification_key.json (read_proof_json,
// read_public_json, read_vk_json), each given the same bytes. Invariants: a bad file is a
// FormatError, never another exception or a crash; what is read is on the curve (points) and
// canonical (signals); and writing what was read with the product's writers reads back equal; for
// both curves' readers.
#include "fuzz/fuzz_util.hpp"
#include "groth16/formats.hpp"

using namespace cuzk;

template <class C>
static void check_on(const std::string& path) {
  using namespace groth16;
  const std::string out = fuzz::scratch_dir() + "/rt.json";

  try {
    Proof<C> p = read_proof_json<C>(path);
    FUZZ_CHECK(p.a.is_inf() || p.a.on_curve(), "pi_a off the curve");
    FUZZ_CHECK(p.b.is_inf() || p.b.on_curve(), "pi_b off the curve");
    FUZZ_CHECK(p.c.is_inf() || p.c.on_curve(), "pi_c off the curve");
    write_proof_json(out, p);
    Proof<C> q = read_proof_json<C>(out);
    FUZZ_CHECK(q.a == p.a && q.b == p.b && q.c == p.c, "proof.json round trip");
  } catch (const FormatError&) {
  }

  try {
    std::vector<typename C::Fr> pub = read_public_json<C>(path);
    write_public_json<C>(out, pub);
    FUZZ_CHECK(read_public_json<C>(out) == pub, "public.json round trip");
  } catch (const FormatError&) {
  }

  try {
    VerificationKey<C> vk = read_vk_json<C>(path);
    FUZZ_CHECK(vk.ic.size() == size_t(vk.n_public) + 1, "IC size");
    write_vk_json(out, vk);
    VerificationKey<C> vk2 = read_vk_json<C>(out);
    FUZZ_CHECK(vk2.n_public == vk.n_public && vk2.alpha1 == vk.alpha1 && vk2.beta2 == vk.beta2 &&
                   vk2.gamma2 == vk.gamma2 && vk2.delta2 == vk.delta2 && vk2.ic == vk.ic,
               "verification_key.json round trip");
  } catch (const FormatError&) {
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemFile file;
  const std::string& path = file.write(data, size);
  check_on<Bls12_381>(path);
  check_on<Bn254>(path);
  try {
    json_curve(path);
  } catch (const FormatError&) {
  }
  return 0;
}
