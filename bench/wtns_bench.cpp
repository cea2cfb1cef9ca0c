// Reading a .wtns into a synthesis slot, from the page cache: through a vector (read_wtns, then a
// copy into the slot), that path's phases one by one, and read_wtns_into straight into the slot.
//   cuzk_microbench --benchmark_filter=Wtns   (threads follow CUZK_THREADS, default all CPUs)
// The witness is 2^k random values written to $TMPDIR once per size (CUZK_BENCH_WTNS names an
// existing file instead; its own count is used then). The destination stands for a slot after its
// first use: shared memory whose pages are already mapped.
#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>

#include "groth16/binfile.hpp"
#include "groth16/formats.hpp"
#include "groth16/hugepages.hpp"
#include "groth16/parallel.hpp"
#include "groth16/random.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;

namespace {

void apply_threads() {
  if (const char* t = std::getenv("CUZK_THREADS")) set_thread_count(std::strtoul(t, nullptr, 10));
}

struct WtnsFile {
  std::string path;
  size_t n = 0;
};

const WtnsFile& witness_file(int log_n) {
  static std::map<int, WtnsFile> files;
  WtnsFile& f = files[log_n];
  if (!f.path.empty()) return f;
  if (const char* p = std::getenv("CUZK_BENCH_WTNS")) {
    f = {p, read_wtns_count(p)};
    return f;
  }
  f.path = (std::filesystem::temp_directory_path() / ("cuzk_wtns_bench_" + std::to_string(log_n) + ".wtns")).string();
  f.n = size_t(1) << log_n;
  if (!std::filesystem::exists(f.path) || read_wtns_count(f.path) != f.n) {
    std::mt19937_64 rng(log_n);
    std::vector<Fr> w(f.n);
    for (auto& x : w) x = random_fr(rng);
    write_wtns(f.path, w);
  }
  return f;
}

// Shared memory with its pages already mapped, like a slot's w after the first partition: one per
// size for the whole run, written once by the kernel (pread) and once from user space before any
// timing. (On a VM with shadow paging the first kernel write into each page costs several
// microseconds; a worker pays that once per slot, not per witness.)
struct Slot {
  Fr* w = nullptr;
  size_t bytes = 0;
  explicit Slot(const WtnsFile& f) : bytes(f.n * sizeof(Fr)) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    w = static_cast<Fr*>(p);
    std::memset(p, 1, bytes);
    read_wtns_into(f.path, w, f.n);
  }
  static Slot& of(const WtnsFile& f) {
    static std::map<std::string, Slot> slots;
    return slots.try_emplace(f.path, f).first->second;
  }
};

// CPU seconds of the whole process (every thread, user and system) so far.
double process_cpu_s() {
  rusage u;
  ::getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// Counts the bytes, and the process CPU time per iteration: on a shared machine the wall time
// depends on the neighbours, the CPU time much less.
struct Meter {
  benchmark::State& st;
  size_t n;
  double cpu0 = process_cpu_s();
  ~Meter() {
    st.SetBytesProcessed(int64_t(st.iterations()) * int64_t(n * 32));
    st.counters["cpu_ms"] = (process_cpu_s() - cpu0) * 1e3 / double(std::max<int64_t>(1, st.iterations()));
  }
};

// Through a vector: read_wtns, then std::copy into the slot.
void BM_WtnsViaVector(benchmark::State& st) {
  apply_threads();
  const WtnsFile& f = witness_file((int)st.range(0));
  Slot& slot = Slot::of(f);
  Meter m{st, f.n};
  for (auto _ : st) {
    std::vector<Fr> w = read_wtns(f.path);
    std::copy(w.begin(), w.end(), slot.w);
    benchmark::ClobberMemory();
  }
}

// Its phases. Map: the Reader's mmap with MAP_POPULATE of the whole file, and the munmap.
void BM_WtnsPhaseMap(benchmark::State& st) {
  apply_threads();
  const WtnsFile& f = witness_file((int)st.range(0));
  Meter m{st, f.n};
  for (auto _ : st) {
    binfile::Reader r(f.path, "wtns", 2);
    benchmark::DoNotOptimize(r.base());
  }
}

// Alloc: the fresh vector (huge-page advice, populated and cleared by the kernel, then zero-filled by
// the vector's value-initialisation), and its release.
void BM_WtnsPhaseAlloc(benchmark::State& st) {
  apply_threads();
  const WtnsFile& f = witness_file((int)st.range(0));
  Meter m{st, f.n};
  for (auto _ : st) {
    std::vector<Fr> w;
    resize_huge(w, f.n);
    benchmark::DoNotOptimize(w.data());
  }
}

// Convert: the canonical check and the multiply into Montgomery form, mapped file to a mapped vector.
void BM_WtnsPhaseConvert(benchmark::State& st) {
  apply_threads();
  const WtnsFile& f = witness_file((int)st.range(0));
  binfile::Reader r(f.path, "wtns", 2);
  const uint8_t* src = r.base() + r.find(2)->offset;
  Slot& dst = Slot::of(f);
  Meter m{st, f.n};
  for (auto _ : st) {
    parallel_for(f.n, [&](size_t lo, size_t hi, size_t) {
      for (size_t i = lo; i < hi; i++) {
        Fr::Repr v;
        std::memcpy(v.l, src + i * 32, 32);
        if (!Fr::is_canonical(v.l)) std::abort();
        dst.w[i] = Fr::from_plain(v);
      }
    });
    benchmark::ClobberMemory();
  }
}

// Copy: the single-threaded std::copy of the finished vector into the slot.
void BM_WtnsPhaseCopy(benchmark::State& st) {
  apply_threads();
  const WtnsFile& f = witness_file((int)st.range(0));
  std::vector<Fr> w = read_wtns(f.path);
  Slot& slot = Slot::of(f);
  Meter m{st, f.n};
  for (auto _ : st) {
    std::copy(w.begin(), w.end(), slot.w);
    benchmark::ClobberMemory();
  }
}

// Straight into the slot: pread in blocks on every thread, converted in place.
void BM_WtnsReadInto(benchmark::State& st) {
  apply_threads();
  const WtnsFile& f = witness_file((int)st.range(0));
  Slot& slot = Slot::of(f);
  Meter m{st, f.n};
  for (auto _ : st) {
    read_wtns_into(f.path, slot.w, f.n);
    benchmark::ClobberMemory();
  }
}

}  // namespace

BENCHMARK(BM_WtnsViaVector)->Arg(22)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WtnsPhaseMap)->Arg(22)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WtnsPhaseAlloc)->Arg(22)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WtnsPhaseConvert)->Arg(22)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WtnsPhaseCopy)->Arg(22)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WtnsReadInto)->Arg(22)->Unit(benchmark::kMillisecond)->UseRealTime();
