// The constraint evaluator of a real zkey: compiled into memory of its own against mapped from the
// shared cache file (open_cached), both to open and to evaluate a = A*w, b = B*w, c = a o b into a slot.
//   CUZK_BENCH_ZKEY=<key.zkey> cuzk_microbench --benchmark_filter=Eval   (skipped without a key;
//   bench/synth_memory.sh leaves a 2^22 one in build/bench-synth-memory/k22/circuit.zkey)
// Threads follow CUZK_THREADS (default all CPUs); the cache lives in $TMPDIR while the run lasts.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <random>

#include "groth16/hugepages.hpp"
#include "groth16/parallel.hpp"
#include "groth16/prover.hpp"
#include "groth16/random.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;
namespace fs = std::filesystem;

namespace {

const char* zkey_path() { return std::getenv("CUZK_BENCH_ZKEY"); }

const std::string& cache_dir() {
  static const std::string d = [] {
    fs::path p = fs::temp_directory_path() / ("cuzk_evaluator_bench_" + std::to_string(::getpid()));
    std::atexit([] { fs::remove_all(fs::temp_directory_path() / ("cuzk_evaluator_bench_" + std::to_string(::getpid()))); });
    return p.string();
  }();
  return d;
}

double process_cpu_ms() {
  rusage u;
  ::getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

// Process CPU time per iteration (all threads): steadier than wall time on a shared machine.
struct CpuMeter {
  benchmark::State& st;
  double t0 = process_cpu_ms();
  ~CpuMeter() { st.counters["cpu_ms"] = (process_cpu_ms() - t0) / double(std::max<int64_t>(1, st.iterations())); }
};

bool setup(benchmark::State& st) {
  if (const char* t = std::getenv("CUZK_THREADS")) set_thread_count(std::strtoul(t, nullptr, 10));
  if (!zkey_path()) st.SkipWithError("set CUZK_BENCH_ZKEY to a zkey");
  return zkey_path() != nullptr;
}

// Compiling in memory (the CLI's path, and open_cached's fallback): read section 4 and build the CSR.
void BM_EvalOpenCompile(benchmark::State& st) {
  if (!setup(st)) return;
  CpuMeter m{st};
  for (auto _ : st) benchmark::DoNotOptimize(ConstraintEvaluator::compile(read_zkey_coefficients(zkey_path())));
}

// A worker's start with the cache built: hash the zkey's sections, map and verify the file.
void BM_EvalOpenCached(benchmark::State& st) {
  if (!setup(st)) return;
  ConstraintEvaluator::open_cached(zkey_path(), cache_dir());  // built once, outside the timing
  CpuMeter m{st};
  for (auto _ : st) benchmark::DoNotOptimize(ConstraintEvaluator::open_cached(zkey_path(), cache_dir()));
}

// One evaluation into slot-like buffers (already faulted), from either form of the evaluator.
void evaluate(benchmark::State& st, const ConstraintEvaluator& ev) {
  std::mt19937_64 rng(1);
  HugeVec<Fr> w, abc;
  resize_huge(w, ev.n_vars);
  resize_huge(abc, 3 * size_t(ev.n_rows));
  for (auto& x : w) x = random_fr(rng);
  ev.evaluate_into(w.data(), abc.data(), abc.data() + ev.n_rows, abc.data() + 2 * size_t(ev.n_rows));  // warm-up
  CpuMeter m{st};
  for (auto _ : st) {
    ev.evaluate_into(w.data(), abc.data(), abc.data() + ev.n_rows, abc.data() + 2 * size_t(ev.n_rows));
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(int64_t(st.iterations()) * ev.n_rows);
}

void BM_EvalCompiled(benchmark::State& st) {
  if (!setup(st)) return;
  evaluate(st, ConstraintEvaluator::compile(read_zkey_coefficients(zkey_path())));
}

void BM_EvalMapped(benchmark::State& st) {
  if (!setup(st)) return;
  evaluate(st, ConstraintEvaluator::open_cached(zkey_path(), cache_dir()));
}

}  // namespace

BENCHMARK(BM_EvalOpenCompile)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);
BENCHMARK(BM_EvalOpenCached)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_EvalCompiled)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_EvalMapped)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
