// Whole proofs on the cpu backend with the key resident, at the sizes most circom circuits have
// (2^6 .. 2^16), on both curves. Keys come from `cuzk gen-circuit` and `cuzk setup --seed bench`'s
// code in process, made once per size.
//   CpuProve:  ProverBackend::prove(w), what `cuzk prove --backend cpu` spends proving;
//   CpuWorker: what the daemon's GPU worker spends per proof with gpu.backend = "cpu": the compute
//              from synthesized a, b, c (msms_synthesized), the assembly with fresh r, s, and
//              gpu.verify's check (result files aside).
//   cuzk_microbench --benchmark_filter=CpuProve   (threads follow CUZK_THREADS, default all CPUs)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>

#include "backend/cpu/cpu_backend.hpp"
#include "groth16/parallel.hpp"
#include "groth16/prover.hpp"
#include "groth16/setup.hpp"
#include "groth16/verifier.hpp"

using namespace cuzk;

namespace {

template <class C>
struct Resident {
  std::shared_ptr<const groth16::ZKey<C>> zk;
  groth16::VerificationKey<C> vk;
  std::vector<typename C::Fr> w, a, b, c, pub;
  std::unique_ptr<groth16::ProverBackend<C>> prover;
};

// The key of a 2^log_n generated circuit with its prover and witness (and a, b, c from it), made once.
template <class C>
Resident<C>& resident(int log_n) {
  static std::map<int, Resident<C>> cache;
  Resident<C>& r = cache[log_n];
  if (r.prover) return r;
  groth16::R1cs<C> r1cs;
  groth16::gen_circuit<C>(log_n, 1, r1cs, r.w);
  r.zk = std::make_shared<const groth16::ZKey<C>>(groth16::setup_zkey<C>(r1cs, groth16::toxic_from_seed<C>("bench")));
  r.vk = groth16::vk_from_zkey(*r.zk);
  r.prover = make_cpu_prover<C>(r.zk);
  r.pub = groth16::public_signals(r.w, r.zk->n_public);
  groth16::ConstraintEvaluator<C>::compile(*r.zk).evaluate(r.w, r.a, r.b, r.c);
  return r;
}

void apply_threads() {
  if (const char* t = std::getenv("CUZK_THREADS")) set_thread_count(std::strtoul(t, nullptr, 10));
}

template <class C>
void BM_CpuProve(benchmark::State& st) {
  apply_threads();
  Resident<C>& r = resident<C>((int)st.range(0));
  for (auto _ : st) benchmark::DoNotOptimize(r.prover->prove(r.w, {}));
}

template <class C>
void BM_CpuWorker(benchmark::State& st) {
  apply_threads();
  Resident<C>& r = resident<C>((int)st.range(0));
  groth16::SynthesizedView<C> v{r.w.data(), r.w.size(), r.a.data(), r.b.data(), r.c.data(), r.a.size()};
  for (auto _ : st) {
    groth16::RawMsms<C> m = r.prover->msms_synthesized(v);
    groth16::Proof<C> p = groth16::assemble_proof(*r.zk, m, {});
    if (!groth16::verify_proof(r.vk, r.pub, p)) st.SkipWithError("the proof does not verify");
  }
}

}  // namespace

BENCHMARK_TEMPLATE(BM_CpuProve, Bls12_381)->Arg(6)->Arg(10)->Arg(13)->Arg(16)->ArgName("log_n")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_CpuProve, Bn254)->Arg(6)->Arg(10)->Arg(13)->Arg(16)->ArgName("log_n")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_CpuWorker, Bls12_381)->Arg(6)->Arg(10)->Arg(13)->Arg(16)->ArgName("log_n")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_CpuWorker, Bn254)->Arg(6)->Arg(10)->Arg(13)->Arg(16)->ArgName("log_n")->Unit(benchmark::kMillisecond)->UseRealTime();
