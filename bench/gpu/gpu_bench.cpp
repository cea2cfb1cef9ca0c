// The GPU benchmark driver behind `cuzk-bench` (which `cuzk bench` runs): device-resident timings of
// the CUDA backend (CUDA events, warm-up runs, median of N runs) with
// the estimated physical bound next to each figure.
//
//   [--device D] [--runs N] [--warmup W] [--csv FILE] [--curve bls12381|bn254] <what> [--sizes a,b,..]
//   [--scalars random|witness|both] [--profile circom|porep] [--window C]
//   [--precompute auto|off|SETS] [--headroom-mb N] [--msm-window C] [--ntt-passes N]
//   what: msm (G1 and G2) | msm-g1 | msm-g2 | msm-g1-ab | msm-g2-ab | ntt | h-stage | prove | prove-ab |
//         key-switch | window-sweep | all
//   (msm-g1-ab / msm-g2-ab: the plain MSM and the MSM over precomputed bases, alternating, same process;
//   prove-ab: whole proofs with the key's precomputed tables on and off, same backend; key-switch: a
//   key given back and loaded again from host memory, against the host-to-device bandwidth)
//   --curve: the curve of msm, msm-g1, msm-g2, ntt, h-stage, prove and prove-ab (default bls12381);
//   the rest, and witness scalars, are BLS12-381's only.
//
// Sizes are log2. --profile picks the gen-circuit profile of witness scalars and of `prove`'s circuits
// (reported as "witness" / "gen-circ" for circom, "porep" for porep). Witness scalars are the values
// of a `gen-circuit` witness (2^20 of them, tiled to
// the size asked), so the 0/1/small-value mix is that of a real circuit. `prove` builds the
// gen-circuit R1CS at 2^k constraints with random key points (the timing does not depend on the
// points), keeps the key resident and times whole proofs through the `cuda` backend, then the proving
// stage alone from synthesized w, a, b, c in pageable and in registered host memory (prove-synth),
// then batches of that slot up to the key's batch limit (prove-batch, per proof; --batch-points
// moves the limit).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "groth16/parallel.hpp"
#include "groth16/stage_spans.hpp"
#include "groth16/setup.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "bench/gpu/gpu_bench.hpp"
#include "math/curves.hpp"

namespace cuzk {
namespace gpu {

using namespace bls12_381;

namespace {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Args {
  int device = 0, runs = 5, warmup = 1, window = 0;
  std::string what = "all", scalars = "both", csv;
  CurveId curve = CurveId::bls12_381;
  groth16::GenProfile profile = groth16::GenProfile::circom;  // of witness scalars and prove circuits
  GpuOptions gpu;  // --precompute, --headroom-mb, --msm-window, --ntt-passes: the prover's tunables
  std::vector<int> sizes;
};

[[noreturn]] void usage(const std::string& why) { throw UsageError(why); }

std::vector<int> parse_sizes(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    auto dots = tok.find("..");
    try {
      if (dots != std::string::npos) {
        int a = std::stoi(tok.substr(0, dots)), b = std::stoi(tok.substr(dots + 2));
        for (int k = a; k <= b; k++) out.push_back(k);
      } else {
        out.push_back(std::stoi(tok));
      }
    } catch (const std::exception&) {
      usage("bad --sizes entry '" + tok + "'");
    }
  }
  for (int k : out)
    if (k < 1 || k > 28) usage("size 2^" + std::to_string(k) + " is outside 2^1..2^28");
  return out;
}

Args parse(const std::vector<std::string>& argv) {
  Args a;
  int argc = (int)argv.size();
  for (int i = 0; i < argc; i++) {
    std::string s = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage(s + " needs a value");
      return argv[++i];
    };
    try {
      if (s == "--device") a.device = std::stoi(val());
      else if (s == "--runs") a.runs = std::stoi(val());
      else if (s == "--warmup") a.warmup = std::stoi(val());
      else if (s == "--window") a.window = std::stoi(val());
      else if (s == "--csv") a.csv = val();
      else if (s == "--scalars") a.scalars = val();
      else if (s == "--sizes") a.sizes = parse_sizes(val());
      else if (s == "--curve") a.curve = parse_curve(val());
      else if (s == "--profile") a.profile = groth16::parse_gen_profile(val());
      else if (s == "--precompute") a.gpu.precompute = PrecomputeOptions::parse(val(), a.gpu.precompute.headroom_bytes);
      else if (s == "--headroom-mb") a.gpu.precompute.headroom_bytes = (size_t)std::stoull(val()) << 20;
      else if (s == "--msm-window") a.gpu.msm_window = std::stoi(val());
      else if (s == "--ntt-passes") a.gpu.ntt_passes = std::stoi(val());
      else if (s == "--batch-points") a.gpu.batch_points = (size_t)std::stoull(val());
      else if (s[0] != '-') a.what = s;
      else usage("unknown option " + s);
    } catch (const std::logic_error&) {  // std::stoi's invalid_argument / out_of_range, a bad set list
      usage("bad value for " + s);
    }
  }
  if (a.scalars != "random" && a.scalars != "witness" && a.scalars != "both") usage("--scalars random|witness|both");
  if (a.curve == CurveId::bn254) {
    const std::string& w = a.what;
    if (w != "msm" && w != "msm-g1" && w != "msm-g2" && w != "ntt" && w != "h-stage" && w != "prove" &&
        w != "prove-ab" && w != "key-switch")
      usage("--curve bn254 runs msm, msm-g1, msm-g2, ntt, h-stage, prove, prove-ab and key-switch; '" + w +
            "' is BLS12-381 only");
    if (a.scalars == "witness") usage("--curve bn254 has random scalars only (the witness pool is BLS12-381's)");
  }
  try {
    a.gpu.validate();
  } catch (const std::invalid_argument& e) {
    usage(e.what());
  }
  return a;
}

template <class F = Fr>
F rand_fr(std::mt19937_64& rng) {
  for (;;) {
    u64 l[4] = {rng(), rng(), rng(), rng() >> 1};
    if (F::is_canonical(l)) return F::from_mont_limbs(l);
  }
}

// n distinct-in-general points: per thread chunk, a random walk over random multiples of the
// generator, converted with one batch inversion per chunk.
template <class C, class F = Fr>
std::vector<Affine<C>> make_points(size_t n, const Affine<C>& gen, uint64_t seed) {
  std::vector<Affine<C>> out(n);
  parallel_for(n, [&](size_t lo, size_t hi, size_t chunk) {
    std::mt19937_64 rng(seed * 1000003 + chunk);
    std::vector<Jacobian<C>> steps;
    for (int i = 0; i < 4; i++) steps.push_back(Jacobian<C>::from_affine(gen).mul(rand_fr<F>(rng).to_plain()));
    Jacobian<C> cur = Jacobian<C>::from_affine(gen).mul(rand_fr<F>(rng).to_plain());
    const size_t block = 1 << 14;
    for (size_t b = lo; b < hi; b += block) {
      size_t e = std::min(hi, b + block);
      std::vector<Jacobian<C>> j(e - b);
      for (auto& p : j) {
        cur = cur + steps[rng() & 3];
        p = cur;
      }
      auto aff = batch_to_affine(j);
      std::copy(aff.begin(), aff.end(), out.begin() + b);
    }
  });
  return out;
}

template <class F = Fr>
std::vector<F> random_scalars(size_t n, uint64_t seed) {
  std::vector<F> s(n);
  parallel_for(n, [&](size_t lo, size_t hi, size_t chunk) {
    std::mt19937_64 rng(seed + chunk * 7919);
    for (size_t i = lo; i < hi; i++) s[i] = rand_fr<F>(rng);
  });
  return s;
}

const std::vector<Fr>& witness_pool(groth16::GenProfile p) {
  static std::vector<Fr> w[2];
  std::vector<Fr>& v = w[(int)p];
  if (v.empty()) {
    R1cs r;
    gen_circuit(20, 42, r, v, p);
  }
  return v;
}

// The label of witness scalars in the results: "witness" (circom profile) or "porep".
const char* witness_label(groth16::GenProfile p) { return p == groth16::GenProfile::porep ? "porep" : "witness"; }

// The label of whole proofs of a gen-circuit circuit: "gen-circ" (circom profile) or "porep".
std::string circ_label(groth16::GenProfile p) { return p == groth16::GenProfile::porep ? "porep" : "gen-circ"; }

std::vector<Fr> witness_scalars(size_t n, groth16::GenProfile p) {
  const std::vector<Fr>& w = witness_pool(p);
  std::vector<Fr> s(n);
  for (size_t i = 0; i < n; i++) s[i] = w[i % w.size()];
  return s;
}

struct Row {
  std::string op, size, inputs;
  BenchStats st;
};
std::vector<Row> g_rows;

void report(const std::string& op, int k, const std::string& inputs, const BenchStats& st) {
  g_rows.push_back({op, "2^" + std::to_string(k), inputs, st});
  std::printf("%-8s 2^%-3d %-8s median %10.3f ms  (min %.3f, max %.3f, %d runs)  bound %8.3f ms  ratio %5.2f  [%s]\n",
              op.c_str(), k, inputs.c_str(), st.median_ms, st.min_ms, st.max_ms, st.runs, st.bound_ms,
              st.bound_ms > 0 ? st.median_ms / st.bound_ms : 0.0, st.detail.c_str());
  std::fflush(stdout);
}

// One group's MSMs at each size, with random and/or witness scalars (of Fr) over one set of points.
template <class G, class F, class Bench>
void run_msm(const Args& a, const std::vector<int>& sizes, const char* op, const Affine<G>& gen, int seed,
             Bench bench) {
  int kmax = *std::max_element(sizes.begin(), sizes.end());
  auto t0 = std::chrono::steady_clock::now();
  auto pts = make_points<G, F>(size_t(1) << kmax, gen, seed);
  std::printf("# generated 2^%d %s points in %.1f s\n", kmax, op,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  for (int k : sizes) {
    size_t n = size_t(1) << k;
    if (a.scalars != "witness") {
      auto sc = random_scalars<F>(n, 100 * seed + k);
      report(op, k, "random", bench(a.device, pts.data(), sc.data(), n, a.window, a.warmup, a.runs));
    }
    if constexpr (std::is_same_v<F, Fr>) {  // the witness pool is a BLS12-381 gen-circuit's
      if (a.scalars == "random") continue;
      auto sc = witness_scalars(n, a.profile);
      report(op, k, witness_label(a.profile), bench(a.device, pts.data(), sc.data(), n, a.window, a.warmup, a.runs));
    }
  }
}

template <class C>
void run_msm_g1(const Args& a, const std::vector<int>& sizes) {
  run_msm<typename C::G1Curve, typename C::Fr>(a, sizes, "msm-g1", C::g1_generator(), 1,
                                               [](auto... args) { return bench_msm_g1(args...); });
}

template <class C>
void run_msm_g2(const Args& a, const std::vector<int>& sizes) {
  run_msm<typename C::G2Curve, typename C::Fr>(a, sizes, "msm-g2", C::g2_generator(), 2,
                                               [](auto... args) { return bench_msm_g2(args...); });
}

// The plain G1 MSM at several window widths (the automatic choice is marked "auto"), with random
// scalars, or with --scalars witness the profile's witness scalars (wider range of widths: their
// digit entries are fewer, which favours narrower windows).
void run_window_sweep(const Args& a, const std::vector<int>& sizes) {
  int kmax = *std::max_element(sizes.begin(), sizes.end());
  auto pts = make_points<G1Curve>(size_t(1) << kmax, g1_generator(), 3);
  const bool wit = a.scalars == "witness";
  for (int k : sizes) {
    size_t n = size_t(1) << k;
    auto sc = wit ? witness_scalars(n, a.profile) : random_scalars(n, 300 + k);
    std::vector<int> widths = {k - 10, k - 8, k - 6, k - 4, k - 2, 0};
    if (wit) widths = {10, 12, 13, 14, 15, 16, 17, 18, 20, 0};
    for (int c : widths) {
      if (c != 0 && (c < 8 || c > 23)) continue;
      report(wit ? std::string("sweep-g1-") + witness_label(a.profile) : "sweep-g1", k, c ? "c=" + std::to_string(c) : "auto",
             bench_msm_g1(a.device, pts.data(), sc.data(), n, c, a.warmup, a.runs));
    }
  }
}

// Plain MSM (automatic window) against the MSM over precomputed bases (automatic shared window),
// same points, same scalars, same process, alternating twice: op msm-g1 / msm-g1-pre (and G2).
template <class C>
void run_msm_ab(const Args& a, const std::vector<int>& sizes, bool g1) {
  int kmax = *std::max_element(sizes.begin(), sizes.end());
  auto t0 = std::chrono::steady_clock::now();
  Affine<C> gen;
  if constexpr (std::is_same_v<C, G1Curve>) gen = g1_generator();
  else gen = g2_generator();
  auto pts = make_points<C>(size_t(1) << kmax, gen, g1 ? 1 : 2);
  std::printf("# generated 2^%d points in %.1f s\n", kmax,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  std::string op = g1 ? "msm-g1" : "msm-g2";
  for (int k : sizes) {
    size_t n = size_t(1) << k;
    for (int witness = 0; witness < 2; witness++) {
      if (witness ? a.scalars == "random" : a.scalars == "witness") continue;
      auto sc = witness ? witness_scalars(n, a.profile) : random_scalars(n, (g1 ? 100 : 200) + k);
      std::vector<BenchStats> r;
      if constexpr (std::is_same_v<C, G1Curve>)
        r = bench_msm_g1_ab(a.device, pts.data(), sc.data(), n, a.warmup, a.runs, 2);
      else
        r = bench_msm_g2_ab(a.device, pts.data(), sc.data(), n, a.warmup, a.runs, 2);
      for (size_t i = 0; i < r.size(); i++)
        report(i % 2 ? op + "-pre" : op, k, witness ? witness_label(a.profile) : "random", r[i]);
    }
  }
}

// A key for a gen-circuit circuit with random points: its A and B coefficients (gen_circuit_coefs)
// plus the public rows snarkjs's setup appends, every point section at its full length.
template <class C>
std::shared_ptr<const groth16::ZKey<C>> bench_key(HugeVec<groth16::ZKeyCoef<C>>&& coefs, const groth16::GenShape& sh,
                                                  int log_n) {
  using G1C = typename C::G1Curve;
  using G2C = typename C::G2Curve;
  const auto g1_gen = C::g1_generator();
  const auto g2_gen = C::g2_generator();
  auto zk = std::make_shared<groth16::ZKey<C>>();
  zk->n_public = sh.n_public;
  zk->n_vars = sh.n_wires;
  zk->domain_size = 1u << log_n;
  zk->log_domain = log_n;
  size_t nc = sh.n_constraints;
  if (nc + zk->n_public + 1 > zk->domain_size) throw std::runtime_error("circuit does not fit its domain");
  zk->coefs = std::move(coefs);
  for (uint32_t j = 0; j <= zk->n_public; j++) zk->coefs.push_back({0, (uint32_t)(nc + j), j, C::Fr::one()});
  auto g1 = make_points<G1C>(zk->n_vars, g1_gen, 11);
  zk->a = g1;
  zk->b1 = make_points<G1C>(zk->n_vars, g1_gen, 12);
  zk->b2 = make_points<G2C>(zk->n_vars, g2_gen, 13);
  zk->c.assign(g1.begin() + zk->n_public + 1, g1.end());
  zk->h = make_points<G1C>(zk->domain_size, g1_gen, 14);
  zk->alpha1 = zk->beta1 = zk->delta1 = g1_gen;
  zk->beta2 = zk->gamma2 = zk->delta2 = g2_gen;
  zk->ic.assign(zk->n_public + 1, g1_gen);
  return zk;
}

std::string gb(size_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GB", bytes / 1e9);
  return b;
}

// Median, min and max of wall times measured on the host.
BenchStats stats_of(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  BenchStats st;
  st.runs = (int)ms.size();
  st.min_ms = ms.front();
  st.max_ms = ms.back();
  st.median_ms = ms[ms.size() / 2];
  return st;
}

// The gen-circuit circuit of the profile at 2^k constraints, its witness, and a key with random
// points over it (the timing does not depend on the points); setup_s: the seconds that took.
template <class C>
struct BenchCircuit {
  std::shared_ptr<const groth16::ZKey<C>> zk;
  std::vector<typename C::Fr> w;
  double setup_s;
};
template <class C>
BenchCircuit<C> bench_circuit(int k, groth16::GenProfile profile) {
  auto t0 = std::chrono::steady_clock::now();
  HugeVec<groth16::ZKeyCoef<C>> coefs;
  std::vector<typename C::Fr> w;
  groth16::GenShape sh = groth16::gen_circuit_coefs<C>(k, 7, profile, coefs, w);
  auto zk = bench_key<C>(std::move(coefs), sh, k);
  return {zk, std::move(w), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

// Whole proofs with the key's precomputed tables on and off, same backend, same process: per round,
// warm-up + runs with the tables, then warm-up + runs without (plain MSMs over the same resident
// points), two rounds (op prove-pre / prove, inputs gen-circ).
template <class C>
void run_prove_ab(const Args& a, const std::vector<int>& sizes) {
  using Fr = typename C::Fr;
  for (int k : sizes) {
    auto [zk, w, setup_s] = bench_circuit<C>(k, a.profile);
    size_t free0 = device_info(a.device).free_memory;
    auto t1 = std::chrono::steady_clock::now();
    auto be = make_cuda_prover(zk, a.device, a.gpu);
    double upload_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    size_t free1 = device_info(a.device).free_memory;
    PrecomputeInfo pi;
    cuda_backend_precompute(*be, pi);
    std::printf("# prove-ab 2^%d: circuit + random key %.1f s; key upload incl. tables %.1f s, tables [%s] "
                "(skipped [%s]) %s built in %.2f s, windows %d/%d; device memory used by the key %s, free %s\n",
                k, setup_s, upload_s, pi.sets.c_str(), pi.skipped.c_str(), gb(pi.table_bytes).c_str(),
                pi.build_ms / 1e3, pi.window_w, pi.window_h, gb(free0 - free1).c_str(), gb(free1).c_str());
    std::fflush(stdout);
    groth16::ProveOptions<C> opt;
    opt.r = Fr::from_u64(3);
    opt.s = Fr::from_u64(5);
    groth16::Proof<C> first[2];
    for (int round = 0; round < 2; round++) {
      for (int pre = 1; pre >= 0; pre--) {
        cuda_backend_use_precomputed(*be, pre != 0);
        std::vector<double> ms;
        ProverTimings tm{};
        groth16::Proof<C> pf;
        for (int i = 0; i < a.warmup + a.runs; i++) {
          auto s = std::chrono::steady_clock::now();
          pf = be->prove(w, opt);
          double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
          if (i >= a.warmup) ms.push_back(t);
          cuda_backend_timings(*be, tm);
        }
        if (round == 0) first[pre] = pf;
        BenchStats st = stats_of(ms);
        char buf[256];
        std::snprintf(buf, sizeof buf, "round %d, last: witness MSMs %.1f, H stage %.1f, H MSM %.1f, device total %.1f ms",
                      round + 1, tm.witness_msms_ms, tm.h_stage_ms, tm.h_msm_ms, tm.total_ms);
        st.detail = buf;
        report(pre ? "prove-pre" : "prove", k, circ_label(a.profile), st);
      }
    }
    bool same = first[0].a == first[1].a && first[0].b == first[1].b && first[0].c == first[1].c;
    std::printf("# prove-ab 2^%d: proofs with and without tables %s\n", k, same ? "identical" : "DIFFER");
    if (!same) throw std::runtime_error("the two halves of prove-ab gave different proofs");
  }
}

// A key switch (give one key back, load another) from host memory, against the link: for each
// size, a gen-circuit key with random points; the host-to-device bandwidth from pinned memory
// (h2d_bandwidth); a load from the image as first prepared (pageable: staged copies) and from the
// page-locked image (loads after the first, where keys come and go), each with the tables asked
// for and without; and the eviction. The switch is evict + load, held against the image's upload
// bytes over the bandwidth. Medians of --runs loads (op key-load, key-load-pinned).
template <class C>
void run_key_switch(const Args& a, const std::vector<int>& sizes) {
  using ms_clock = std::chrono::steady_clock;
  auto ms_since = [](ms_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(ms_clock::now() - t).count();
  };
  const double bw = h2d_bandwidth(a.device, size_t(1) << 30);
  std::printf("# key-switch: host-to-device bandwidth from pinned memory %.2f GB/s (1 GiB copies)\n", bw / 1e9);
  for (int k : sizes) {
    auto [zk, w, setup_s] = bench_circuit<C>(k, a.profile);
    (void)w;
    auto t0 = ms_clock::now();
    auto image = cuda_key_image<C>(zk, false);
    const double prepare_ms = ms_since(t0);
    t0 = ms_clock::now();
    auto pinned = cuda_key_image<C>(zk, true);
    const double pinned_ms = ms_since(t0);
    std::printf("# key-switch 2^%d: circuit + random key %.1f s; image: evaluator %.0f ms; page-locked image %.0f ms "
                "(lock %.0f ms, %s locked)\n",
                k, setup_s, prepare_ms, pinned_ms, pinned->pin_ms, gb(pinned->pinned_bytes).c_str());
    for (bool tables : {true, false}) {
      GpuOptions g = a.gpu;
      if (!tables) g.precompute.enabled = false;
      for (bool locked : {false, true}) {
        std::vector<double> load, evict, upload, build, sw;
        size_t bytes = 0;
        PrecomputeInfo pi;
        for (int i = 0; i < std::max(a.runs, 1); i++) {
          t0 = ms_clock::now();
          auto p = make_cuda_prover<C>(locked ? pinned : image, a.device, g);
          load.push_back(ms_since(t0));
          const groth16::KeyLoadTimes lt = p->load_times();
          upload.push_back(lt.upload_ms), build.push_back(lt.tables_ms);
          bytes = lt.upload_bytes;
          cuda_backend_precompute(*p, pi);
          t0 = ms_clock::now();
          p.reset();
          evict.push_back(ms_since(t0));
          sw.push_back(load.back() + evict.back());
        }
        const double floor_ms = double(bytes) / bw * 1e3;
        BenchStats st = stats_of(sw);
        st.bound_ms = floor_ms;  // the upload's bytes at the link's speed
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "tables [%s] %s; upload %s in %.1f ms (%.2f GB/s), tables %.1f ms, evict %.1f ms; "
                      "switch / (bytes / bandwidth) = %.2f",
                      pi.sets.c_str(), gb(pi.table_bytes).c_str(), gb(bytes).c_str(), stats_of(upload).median_ms,
                      double(bytes) / (stats_of(upload).median_ms / 1e3) / 1e9, stats_of(build).median_ms,
                      stats_of(evict).median_ms, st.median_ms / floor_ms);
        st.detail = buf;
        report(locked ? "key-switch-pinned" : "key-switch", k, tables ? "tables" : "no-tables", st);
      }
    }
  }
}

// Bit length of x folded to [0, (r-1)/2] as the MSM folds its scalars: of the smaller of x and r - x.
template <class F>
int folded_bits(const F& x) {
  auto bits = [](const typename F::Repr& v) {
    for (int i = F::N - 1; i >= 0; i--)
      if (v.l[i]) return 64 * i + 64 - __builtin_clzll(v.l[i]);
    return 0;
  };
  return std::min(bits(x.to_plain()), bits((-x).to_plain()));
}

// proof_bound of the key's proofs from witness w: with a, b, c evaluated on the device (eval) or
// brought from the host.
template <class C>
ProofBound key_proof_bound(const groth16::ZKey<C>& zk, const std::vector<typename C::Fr>& w, bool eval) {
  unsigned long long w_hist[256] = {}, c_hist[256] = {};
  for (size_t i = 0; i < w.size(); i++) {
    int b = folded_bits(w[i]);
    w_hist[b]++;
    if (i > zk.n_public) c_hist[b]++;
  }
  double products = zk.domain_size;  // c = a o b
  for (const auto& co : zk.coefs)
    if (!(co.value == C::Fr::one())) products++;
  return proof_bound<C>(w_hist, c_hist, zk.log_domain, eval ? products : 0);
}

template <class C>
void run_prove(const Args& a, const std::vector<int>& sizes) {
  using Fr = typename C::Fr;
  for (int k : sizes) {
    auto [zk, w, setup_s] = bench_circuit<C>(k, a.profile);
    const ProofBound bound[2] = {key_proof_bound(*zk, w, false), key_proof_bound(*zk, w, true)};
    std::printf("# prove 2^%d: bound %.3f ms (MSMs %.3f, H stage NTTs %.3f, a, b, c %.3f) from w; %.3f ms from a, b, c\n",
                k, bound[1].ms, bound[1].msm_ms, bound[1].ntt_ms, bound[1].eval_ms, bound[0].ms);
    auto t1 = std::chrono::steady_clock::now();
    auto be = make_cuda_prover(zk, a.device, a.gpu);
    double upload_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    PrecomputeInfo pi;
    cuda_backend_precompute(*be, pi);
    std::printf("# prove 2^%d: circuit + random key %.1f s, key upload %.1f s, %zu coefficients; tables [%s] "
                "(skipped [%s]); MSM window batches %d (witness) / %d (H); %s free\n",
                k, setup_s, upload_s, zk->coefs.size(), pi.sets.c_str(), pi.skipped.c_str(), pi.msm_batches_w,
                pi.msm_batches_h, gb(pi.free_bytes).c_str());
    groth16::ProveOptions<C> opt;
    opt.r = Fr::from_u64(3);
    opt.s = Fr::from_u64(5);
    auto time_prove = [&](const std::string& inputs, auto&& prove_once) {
      std::vector<double> ms;
      ProverTimings tm{};
      for (int i = 0; i < a.warmup + a.runs; i++) {
        auto s = std::chrono::steady_clock::now();
        prove_once();
        double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
        if (i >= a.warmup) ms.push_back(t);
        cuda_backend_timings(*be, tm);
      }
      BenchStats st = stats_of(ms);
      st.bound_ms = bound[inputs == circ_label(a.profile) ? 1 : 0].ms;
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "last: upload %.1f, witness MSMs %.1f, H stage %.1f, H MSM %.1f, device total %.1f ms; "
                    "window batches %d (witness) / %d (H); kernels busy",
                    tm.upload_ms, tm.witness_msms_ms, tm.h_stage_ms, tm.h_msm_ms, tm.total_ms, tm.batches_w,
                    tm.batches_h);
      st.detail = buf;
      // Where the device time went: each stage's spans (the two lanes overlap).
      const StageBusy busy = summarize_spans(tm.spans);
      std::snprintf(buf, sizeof buf, " %.1f ms:", busy.total_ms);
      st.detail += buf;
      for (const auto& [stage, ms] : busy.stages) {
        std::snprintf(buf, sizeof buf, " %s %.1f", stage.c_str(), ms);
        st.detail += buf;
      }
      report(inputs == circ_label(a.profile) ? "prove" : "prove-synth", k, inputs, st);
    };
    time_prove(circ_label(a.profile), [&] { be->prove(w, opt); });
    if (k > 26) {  // the slot and the host evaluator would not fit beside the key's points
      std::printf("# prove 2^%d: prove-synth skipped (host memory)\n", k);
      continue;
    }
    // The proving stage from synthesized vectors in one host buffer (the daemon's slot), first in
    // pageable memory, then registered (page-locked) as the daemon's GPU worker does with its ring.
    size_t n = zk->domain_size, nv = zk->n_vars;
    std::vector<Fr> slot(nv + 3 * n);
    std::copy(w.begin(), w.end(), slot.begin());
    groth16::ConstraintEvaluator<C>::compile(*zk).evaluate_into(slot.data(), slot.data() + nv, slot.data() + nv + n,
                                                                slot.data() + nv + 2 * n);
    groth16::SynthesizedView<C> v{slot.data(), nv, slot.data() + nv, slot.data() + nv + n, slot.data() + nv + 2 * n, n};
    time_prove("pageable", [&] { be->prove_synthesized(v, opt); });
    register_host(slot.data(), slot.size() * sizeof(Fr));
    time_prove("registered", [&] { be->prove_synthesized(v, opt); });
    // Batches of the same slot B times (the daemon's GPU worker proving B READY slots at once), up
    // to the key's limit: the compute of B proofs, reported per proof (median_ms = batch / B).
    for (size_t b = 2; b <= be->batch_limit(); b *= 2) {
      std::vector<groth16::SynthesizedView<C>> views(b, v);
      std::vector<double> ms;
      ProverTimings tm{};
      for (int i = 0; i < a.warmup + a.runs; i++) {
        auto s = std::chrono::steady_clock::now();
        be->msms_synthesized_batch(views);
        double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
        if (i >= a.warmup) ms.push_back(t / double(b));
        cuda_backend_timings(*be, tm);
      }
      BenchStats st = stats_of(ms);
      st.bound_ms = bound[0].ms;
      const StageBusy busy = summarize_spans(tm.spans);
      char buf[256];
      std::snprintf(buf, sizeof buf, "batch of %zu: %.2f ms, kernels busy %.2f ms", b, st.median_ms * double(b),
                    busy.total_ms);
      st.detail = buf;
      report("prove-batch", k, "x" + std::to_string(b), st);
    }
    unregister_host(slot.data());
  }
}

void write_csv(const std::string& path) {
  std::ofstream f(path);
  f << "op,size,inputs,median_ms,min_ms,max_ms,runs,bound_ms,detail\n";
  for (const Row& r : g_rows)
    f << r.op << "," << r.size << "," << r.inputs << "," << r.st.median_ms << "," << r.st.min_ms << ","
      << r.st.max_ms << "," << r.st.runs << "," << r.st.bound_ms << ",\"" << r.st.detail << "\"\n";
}

}  // namespace

const char* bench_usage() {
  return "[--device D] [--runs N] [--warmup W] [--csv FILE] [--curve bls12381|bn254] "
         "msm|msm-g1|msm-g2|msm-g1-ab|msm-g2-ab|ntt|h-stage|prove|prove-ab|key-switch|window-sweep|field|all "
         "[--sizes a,b,...|a..b] [--scalars random|witness|both] [--profile circom|porep] [--window C]\n"
         "  [--precompute auto|off|SETS] [--headroom-mb N] [--msm-window C] [--ntt-passes N]";
}

int bench_main(const std::vector<std::string>& args) {
  g_rows.clear();
  Args a;
  try {
    a = parse(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "error: %s\nusage: %s\n", e.what(), bench_usage());
    return 2;
  }
  try {
    if (device_count() == 0) {
      std::fprintf(stderr, "error: no CUDA device\n");
      return 3;
    }
    DeviceInfo d = device_info(a.device);
    std::printf("# device %d: %s, %d SMs, %d MHz, cc %d.%d, %.1f GiB (%.1f free), L2 %.0f MiB; %zu host threads\n",
                a.device, d.name.c_str(), d.sm_count, d.clock_mhz, d.cc_major, d.cc_minor,
                d.total_memory / 1073741824.0, d.free_memory / 1073741824.0, d.l2_bytes / 1048576.0, thread_count());
    auto sizes_or = [&](std::vector<int> def) { return a.sizes.empty() ? def : a.sizes; };
    bool all = a.what == "all", msm = a.what == "msm";
    if (!all && !msm && a.what != "msm-g1" && a.what != "msm-g2" && a.what != "ntt" && a.what != "h-stage" &&
        a.what != "prove" && a.what != "window-sweep" && a.what != "msm-g1-ab" && a.what != "msm-g2-ab" &&
        a.what != "prove-ab" && a.what != "field" && a.what != "key-switch")
      usage("unknown benchmark '" + a.what + "'");
    auto on_curve = [&](auto&& f) { return with_curve(a.curve, f); };
    if (a.what == "field")
      for (const BenchStats& st : bench_field(a.device, a.warmup, a.runs)) report("field", 0, "random", st);
    if (all || a.what == "ntt")
      for (int k : sizes_or({20, 21, 22, 23, 24, 25, 26, 27}))
        report("ntt", k, "random", on_curve([&]<class C>() {
                 return bench_ntt<C>(a.device, k, false, a.warmup, a.runs, a.gpu.ntt_passes);
               }));
    if (all || a.what == "h-stage")
      for (int k : sizes_or({20, 22, 24}))
        report("h-stage", k, "random", on_curve([&]<class C>() {
                 return bench_h_stage<C>(a.device, k, a.warmup, a.runs, a.gpu.ntt_passes);
               }));
    if (all || msm || a.what == "msm-g1")
      on_curve([&]<class C>() { run_msm_g1<C>(a, sizes_or({20, 22, 24, 26})); });
    if (all || msm || a.what == "msm-g2") on_curve([&]<class C>() { run_msm_g2<C>(a, sizes_or({20, 22})); });
    if (a.what == "msm-g1-ab") run_msm_ab<G1Curve>(a, sizes_or({24}), true);
    if (a.what == "msm-g2-ab") run_msm_ab<G2Curve>(a, sizes_or({22}), false);
    if (all || a.what == "prove") on_curve([&]<class C>() { run_prove<C>(a, sizes_or({20, 22, 24})); });
    if (a.what == "prove-ab") on_curve([&]<class C>() { run_prove_ab<C>(a, sizes_or({20, 22, 24})); });
    if (a.what == "key-switch") on_curve([&]<class C>() { run_key_switch<C>(a, sizes_or({20, 22})); });
    if (all || a.what == "window-sweep") run_window_sweep(a, sizes_or({20, 24, 26}));
    if (!a.csv.empty()) write_csv(a.csv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "error: %s\nusage: %s\n", e.what(), bench_usage());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    if (!a.csv.empty()) write_csv(a.csv);
    return 1;
  }
  return 0;
}

}  // namespace gpu
}  // namespace cuzk
