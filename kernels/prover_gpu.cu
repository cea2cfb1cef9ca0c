// The device half of the Groth16 prover. The proving key (A, B1, B2, C, H points and the compiled
// A/B matrices) is uploaded once and stays resident. Two lanes run concurrently on two streams:
//   witness lane: sort the witness digits once, then the A, B1, B2 and C MSMs over them;
//   H lane:       a, b, c -> the fused H stage -> the H MSM.
// run(w): only the witness crosses the bus; a = A w, b = B w, c = a o b are evaluated on the device.
// run_synthesized(view): w, a, b, c come from host memory (the daemon's shared-memory slot), w first
// on the witness stream, then a, b, c on an upload stream, each transformed as soon as it lands.
// Precomputed bases: at upload, the point sets named by PrecomputeOptions get tables of their window
// copies while device memory allows (MSM scratch reserved first, then headroom); the witness lane
// runs the sets with tables over one shared plan and the rest over a plain plan of the same w.
// Every stage of a proof (copies, the H stage, each MSM and its digit plan) runs inside a span of
// timing events on its stream (stage_events.cuh), so that Timings::spans says when the device was
// executing the proof.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <future>
#include <memory>
#include <type_traits>

#include "common/gpu_options.hpp"
#include "engines.cuh"
#include "groth16/parallel.hpp"
#include "host_math.hpp"
#include "stage_events.cuh"

namespace cuzk {
namespace gpu {

namespace {

constexpr int kEvalThreads = 128;

// A host value as its device twin (the same bytes).
template <class D, class H>
D same_bytes(const H& h) {
  static_assert(sizeof(D) == sizeof(H), "host and device layouts differ");
  D d;
  std::memcpy(&d, &h, sizeof d);
  return d;
}

// Whether a field element's words are below the modulus: the form a zkey's coordinates must have.
template <class P>
CUZK_HD bool below_modulus(const DFp<P>& a) {
  for (int j = DFp<P>::NW - 1; j >= 0; j--)
    if (a.w[j] != DFp<P>::W::mod(j)) return a.w[j] < DFp<P>::W::mod(j);
  return false;  // equal to q
}
template <class F, int XiA>
CUZK_HD bool below_modulus(const Fp2<F, XiA>& a) {
  return below_modulus(a.c0) && below_modulus(a.c1);
}

// The host reader's checks of a zkey's point section, run where the points were uploaded: both
// coordinates below q, then y^2 = x^3 + b (the point at infinity, all zero, passes). *first gets
// the lowest failing index times 4, plus 1 for a coordinate not below q or 2 for a point off the
// curve (atomicMin: the first failure whichever thread finds it); it stays ~0 when all pass. Three
// Fq products a G1 point, about a dozen a G2 point: milliseconds for the points of a 2^22 key.
template <class DA, class F>
__global__ void k_check_points(const DA* pts, u32 n, F b, unsigned long long* first) {
  u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const DA p = pts[i];
  unsigned long long code = 0;
  if (!below_modulus(p.x) || !below_modulus(p.y)) code = 1;
  else if (!p.is_inf() && !(p.y.sqr() == p.x.sqr() * p.x + b)) code = 2;
  if (code) atomicMin(first, (unsigned long long)i * 4 + code);
}

// One constraint row per thread: a = sum A_rk w_k, b = sum B_rk w_k, c = a b. Coefficients equal to
// one (most of them in circom output) skip the multiply.
template <class DFr>
__global__ void __launch_bounds__(kEvalThreads)
    k_eval_abc(const u32* a_rp, const u32* a_col, const DFr* a_val, const u32* b_rp, const u32* b_col,
               const DFr* b_val, const DFr* w, u32 rows, DFr* a, DFr* b, DFr* c) {
  u32 r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const DFr one = DFr::one();
  DFr sa = DFr::zero(), sb = DFr::zero();
  for (u32 k = a_rp[r]; k < a_rp[r + 1]; k++) {
    DFr v = load(a_val + k), x = load(w + a_col[k]);
    sa += v == one ? x : v * x;
  }
  for (u32 k = b_rp[r]; k < b_rp[r + 1]; k++) {
    DFr v = load(b_val + k), x = load(w + b_col[k]);
    sb += v == one ? x : v * x;
  }
  store(a + r, sa);
  store(b + r, sb);
  store(c + r, sa * sb);
}

// Host-to-device copy of pageable memory through two pinned staging buffers: the host threads copy
// one chunk into pinned memory while the DMA engine sends the previous one, so the transfer runs
// near bus speed instead of the driver's single-threaded pageable path.
class StagedUpload {
 public:
  static constexpr size_t kChunk = size_t(64) << 20;
  StagedUpload() {
    for (int i = 0; i < 2; i++) {
      buf_[i].reserve(kChunk);
      CUZK_CUDA_CHECK(cudaEventCreateWithFlags(&done_[i], cudaEventDisableTiming));
    }
  }
  ~StagedUpload() {
    for (auto e : done_)
      if (e) cudaEventDestroy(e);
  }
  // Returns once the last chunk is queued; the copy is ordered on stream s.
  void copy(void* dst, const void* src, size_t bytes, cudaStream_t s) {
    size_t threads = std::min<size_t>(thread_count(), 8);
    for (size_t off = 0, i = 0; off < bytes; off += kChunk, i++) {
      size_t len = std::min(kChunk, bytes - off);
      int b = (int)(i & 1);
      CUZK_CUDA_CHECK(cudaEventSynchronize(done_[b]));  // the DMA out of this buffer has finished
      unsigned char* stage = buf_[b].get();
      const unsigned char* from = static_cast<const unsigned char*>(src) + off;
      parallel_for(
          len, [&](size_t lo, size_t hi, size_t) { std::memcpy(stage + lo, from + lo, hi - lo); },
          len >= (size_t(8) << 20) ? threads : 1);
      CUZK_CUDA_CHECK(cudaMemcpyAsync(static_cast<unsigned char*>(dst) + off, stage, len, cudaMemcpyHostToDevice, s));
      CUZK_CUDA_CHECK(cudaEventRecord(done_[b], s));
    }
  }

 private:
  PinnedBuf<unsigned char> buf_[2];
  cudaEvent_t done_[2] = {nullptr, nullptr};
};

// Host-to-device copy ordered on stream s: straight from page-locked memory (registered or
// pinned), through the staging buffers otherwise.
void copy_in(StagedUpload& staging, void* dst, const void* src, size_t bytes, cudaStream_t s) {
  if (bytes == 0) return;
  if (host_registered(src) && host_registered(static_cast<const unsigned char*>(src) + bytes - 1))
    CUZK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
  else
    staging.copy(dst, src, bytes, s);
}

// A key's array to the device, ordered on stream s: src is any contiguous host array (std::vector,
// HugeVec, PointArray, std::span), page-locked (KeyImage's pins) or staged. Returns the bytes.
template <class D, class Src>
size_t upload(StagedUpload& staging, DevBuf<D>& dst, const Src& src, cudaStream_t s) {
  using H = std::remove_cv_t<std::remove_reference_t<decltype(*src.data())>>;
  static_assert(sizeof(D) == sizeof(H), "host and device layouts differ");
  dst.resize(std::max<size_t>(src.size(), 1));
  copy_in(staging, dst.get(), src.data(), src.size() * sizeof(H), s);
  return src.size() * sizeof(H);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The key's point sets, as PrecomputeOptions names them.
enum PointSet { kSetA, kSetB1, kSetB2, kSetC, kSetH, kSets };
constexpr const char* const* kSetNames = gpu_options::kPrecomputeSets;  // by PointSet
static_assert(kSets == gpu_options::kPrecomputeSetCount);

std::vector<int> parse_sets(const std::string& list) {
  try {
    return gpu_options::parse_precompute_sets(list);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("precompute: ") + e.what());
  }
}

std::string join_sets(const std::vector<int>& v) {
  std::string s;
  for (int k : v) s += (s.empty() ? "" : ",") + std::string(kSetNames[k]);
  return s;
}

}  // namespace

PrecomputeOptions PrecomputeOptions::parse(const std::string& spec, size_t headroom_bytes) {
  PrecomputeOptions o;
  o.headroom_bytes = headroom_bytes;
  if (spec == "off") {
    o.enabled = false;
  } else if (spec != "auto") {
    parse_sets(spec);  // validates
    o.sets = spec;
  }
  return o;
}

void GpuOptions::validate() const {
  parse_sets(precompute.sets);
  static_assert(gpu_options::kNttPassesMax == kNttMaxPasses);
  try {
    gpu_options::check_msm_window(msm_window);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("msm_window ") + e.what());
  }
  try {
    gpu_options::check_ntt_passes(ntt_passes);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("ntt_passes ") + e.what());
  }
}

template <class C>
struct GpuProver<C>::Impl {
  using DFr = typename Dev<C>::Fr;
  using DG1 = typename Dev<C>::G1;
  using DG2 = typename Dev<C>::G2;
  using DG1Affine = typename Dev<C>::G1Affine;
  using DG2Affine = typename Dev<C>::G2Affine;
  using DG1xyzz = typename Dev<C>::G1xyzz;
  using DG2xyzz = typename Dev<C>::G2xyzz;
  int device;
  u32 n_vars, n_public, domain;
  int log_domain;
  DevBuf<DG1Affine> a, b1, c, h;
  DevBuf<DG2Affine> b2;
  DevBuf<u32> a_rp, a_col, b_rp, b_col;
  DevBuf<DFr> a_val, b_val;
  // The witnesses and a, b, c of up to `vectors` proofs at once (run_batch): w of proof v at
  // w + v n_vars; abc holds every proof's a, then every b, then every c (abc_of), so that the H
  // stage leaves the proofs' H scalars end to end for one batched plan.
  DevBuf<DFr> w, abc;
  u32 vectors = 1;
  Stream s_w, s_h, s_up;
  MsmEngine eng_w{s_w.get()}, eng_h{s_h.get()};
  // The witness lane's runs over one latency-bound plan (MsmEngine::latency_bound: a small proof's)
  // overlap on streams of their own, A on s_w, B1, B2 and C on these, each with its own scratch.
  Stream s_run[3];
  MsmEngine::RunScratch run_scratch[4];
  MsmEngine::RunScratch h_scratch;  // the H MSM's run over a plan of several proofs
  NttEngine<DFr> ntt;
  // A batch's per-proof H stages (eval and NTTs, each a few launches too small to fill the device)
  // side by side: proof v on lane v % lanes, each with its stream and its NTT engine; the H MSM on
  // s_h waits for them all. Made for batches only (ensure_vectors).
  struct HLane {
    Stream s;
    NttEngine<DFr> ntt;
    Event done{cudaEventDisableTiming};
    HLane(int passes, int log_n) : ntt(s.get(), passes) { ntt.reserve(log_n); }
  };
  static constexpr u32 kHLanes = 8;
  std::vector<std::unique_ptr<HLane>> h_lanes;
  int ntt_passes;
  cudaEvent_t w_ready = nullptr;
  cudaEvent_t abc_ready[3] = {nullptr, nullptr, nullptr};
  StagedUpload staging;
  Timings t;
  // Stage spans: `origin` is recorded before a proof's first operation; the witness lane's host
  // thread records into lane_spans, the other one into spans.
  Event origin;
  SpanRecorder spans, lane_spans;
  // Precomputed bases: has_table[set] means that set's buffer above holds its table of window copies
  // (first window = the points, so plain runs read the same buffer).
  bool has_table[kSets] = {};
  bool use_tables = true;
  int c_w = 0, c_h = 0;
  PrecomputeInfo pinfo;

  int msm_window;          // GpuOptions::msm_window
  size_t msm_scratch_cap;  // GpuOptions::msm_scratch_bytes
  bool msm_capped = false;  // the plain plans have an entry cap (window batches): no proof batches
  size_t batch_points;      // GpuOptions::batch_points, 0 replaced

  Impl(const groth16::ZKey<C>& zk, const groth16::ConstraintEvaluator<C>& ev, int dev, const GpuOptions& opt)
      : device(dev),
        n_vars(zk.n_vars),
        n_public(zk.n_public),
        domain(zk.domain_size),
        log_domain(zk.log_domain),
        ntt(s_h.get(), opt.ntt_passes),
        ntt_passes(opt.ntt_passes),
        msm_window(opt.msm_window),
        msm_scratch_cap(opt.msm_scratch_bytes),
        batch_points(opt.batch_points ? opt.batch_points : size_t(1) << 21) {
    if (ev.n_rows != domain || ev.n_vars != n_vars)
      throw std::invalid_argument("GPU prover: the constraint evaluator does not belong to this zkey");
    // The key's arrays by DMA on the upload stream: straight from page-locked memory (a prepared
    // KeyImage), through the staging buffers otherwise.
    cudaStream_t su = s_up.get();
    Event up_start, up_end;
    up_start.record(su);
    size_t bytes = upload(staging, a, zk.a, su) + upload(staging, b1, zk.b1, su) + upload(staging, b2, zk.b2, su) +
                   upload(staging, c, zk.c, su) + upload(staging, h, zk.h, su);
    bytes += upload(staging, a_rp, ev.a_row_ptr, su) + upload(staging, a_col, ev.a_col, su) +
             upload(staging, a_val, ev.a_val, su) + upload(staging, b_rp, ev.b_row_ptr, su) +
             upload(staging, b_col, ev.b_col, su) + upload(staging, b_val, ev.b_val, su);
    up_end.record(su);
    pinfo.upload_bytes = bytes;
    // The proving scratch is allocated while the copies cross the link (an allocation does not
    // wait for them): a switch from a locked image then costs little more than its copy.
    w.resize(n_vars);
    abc.resize(3 * (size_t)domain);
    ntt.reserve(log_domain);
    CUZK_CUDA_CHECK(cudaEventCreateWithFlags(&w_ready, cudaEventDisableTiming));
    for (auto& e : abc_ready) CUZK_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    reserve_scratch();
    CUZK_CUDA_CHECK(cudaEventSynchronize(up_end.get()));
    float up_ms = 0;
    CUZK_CUDA_CHECK(cudaEventElapsedTime(&up_ms, up_start.get(), up_end.get()));
    pinfo.upload_ms = up_ms;  // the copies' span on the device
    if (!zk.points_unchecked.empty()) check_points(zk.points_unchecked);
    CUZK_CUDA_CHECK(cudaDeviceSynchronize());
    build_tables(opt.precompute);
  }

  bool c_needed() const { return n_vars > n_public + 1; }

  // Room for B proofs' vectors at once (grown, never shrunk: a key keeps its largest batch's).
  void ensure_vectors(u32 B) {
    while (B > 1 && h_lanes.size() < std::min(B, kHLanes))
      h_lanes.push_back(std::make_unique<HLane>(ntt_passes, log_domain));
    if (B <= vectors) return;
    w.resize((size_t)B * n_vars);
    abc.resize(3 * (size_t)B * domain);
    vectors = B;
  }
  // Where proof v of a batch of B runs its H stage: s_h and ntt alone, else its lane's.
  cudaStream_t h_stream(u32 v, u32 B) const { return B == 1 ? s_h.get() : h_lanes[v % h_lanes.size()]->s.get(); }
  NttEngine<DFr>& h_ntt(u32 v, u32 B) { return B == 1 ? ntt : h_lanes[v % h_lanes.size()]->ntt; }
  // Every lane that a batch of B used has ended before what s_h queues next.
  void join_h_lanes(u32 B) {
    if (B == 1) return;
    for (u32 l = 0; l < std::min<u32>(B, (u32)h_lanes.size()); l++) {
      h_lanes[l]->done.record(h_lanes[l]->s.get());
      CUZK_CUDA_CHECK(cudaStreamWaitEvent(s_h.get(), h_lanes[l]->done.get(), 0));
    }
  }
  DFr* w_of(u32 v) { return w.get() + (size_t)v * n_vars; }
  // a (i = 0), b (1) or c (2) of proof v of a batch of B.
  DFr* abc_of(int i, u32 v, u32 B) { return abc.get() + ((size_t)i * B + v) * domain; }

  // The H lane of B proofs from w alone (on the device once w_ready): a = A w, b = B w, c = a o b
  // with the resident matrices, the H stage, then the H MSM.
  void eval_h_lane(RawMsms* outs, u32 B) {
    auto t2 = std::chrono::steady_clock::now();
    const size_t n = domain;
    for (u32 v = 0; v < B; v++) {
      DFr *a = abc_of(0, v, B), *b = abc_of(1, v, B), *c = abc_of(2, v, B);
      cudaStream_t s = h_stream(v, B);
      if (v < kHLanes) CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, w_ready, 0));  // each stream's first
      spans.run("eval", s, [&] {
        // Named through Dev<C>, not Impl's alias: nvcc's launch stub must not name the private Impl.
        k_eval_abc<typename Dev<C>::Fr><<<grid_for(n, kEvalThreads), kEvalThreads, 0, s>>>(
            a_rp.get(), a_col.get(), a_val.get(), b_rp.get(), b_col.get(), b_val.get(), w_of(v), domain, a, b, c);
        CUZK_CUDA_LAUNCHED("k_eval_abc");
      });
      spans.run("ntt", s, [&] { h_ntt(v, B).h_stage(a, b, c, log_domain); });
    }
    join_h_lanes(B);
    s_h.sync();
    t.h_stage_ms = ms_since(t2);
    h_msm(outs, B);
  }
  // The checks the host reader left to the device (ZKeyMemory::ForDevice), over the uploaded sets;
  // throws FormatError naming the file, the section and the first bad point, as the reader would.
  void check_points(const std::string& path) {
    const auto t0 = std::chrono::steady_clock::now();
    DevBuf<unsigned long long> first(kSets);
    CUZK_CUDA_CHECK(cudaMemsetAsync(first.get(), 0xff, kSets * sizeof(unsigned long long), s_up.get()));
    // The kernel named through Dev<C>, not Impl's aliases: nvcc's launch stub must not name the
    // private Impl.
    using A1 = typename Dev<C>::G1Affine;
    using A2 = typename Dev<C>::G2Affine;
    using F1 = typename Dev<C>::Fq;
    using F2 = typename Dev<C>::Fq2;
    const F1 g1b = same_bytes<F1>(host::curve_b<typename C::G1Curve>());  // b as the device holds it
    const F2 g2b = same_bytes<F2>(host::curve_b<typename C::G2Curve>());
    auto grid = [](size_t n) { return grid_for(n, 256); };
    for (int k : {kSetA, kSetB1, kSetC, kSetH}) {
      const size_t n = set_points(k);
      if (n == 0) continue;
      const A1* pts = k == kSetA ? a.get() : k == kSetB1 ? b1.get() : k == kSetC ? c.get() : h.get();
      k_check_points<A1, F1><<<grid(n), 256, 0, s_up.get()>>>(pts, (u32)n, g1b, first.get() + k);
      CUZK_CUDA_LAUNCHED("k_check_points");
    }
    if (const size_t n = set_points(kSetB2)) {
      k_check_points<A2, F2><<<grid(n), 256, 0, s_up.get()>>>(b2.get(), (u32)n, g2b, first.get() + kSetB2);
      CUZK_CUDA_LAUNCHED("k_check_points");
    }
    unsigned long long got[kSets];
    CUZK_CUDA_CHECK(cudaMemcpyAsync(got, first.get(), sizeof got, cudaMemcpyDeviceToHost, s_up.get()));
    s_up.sync();
    pinfo.check_ms = ms_since(t0);
    static const char* const kSection[kSets] = {"section 5 (A)", "section 6 (B1)", "section 7 (B2)", "section 8 (C)",
                                                "section 9 (H)"};
    for (int k = 0; k < kSets; k++)
      if (got[k] != ~0ull)
        throw FormatError(path + ": " + kSection[k] + ": point " + std::to_string(got[k] / 4) + " " +
                          (got[k] % 4 == 1 ? "has a coordinate not below the field modulus q" : "is not on the curve"));
  }

  size_t set_points(int k) const {
    return k == kSetH ? domain : k == kSetC ? (c_needed() ? n_vars - n_public - 1 : 0) : n_vars;
  }

  // Both engines' plain plans at full width when they fit in free device memory beside a headroom;
  // otherwise in window batches (MsmEngine::set_entry_cap), the engine needing more memory giving
  // up a window per batch at a time. A 2^27 key's points take 77 GB of the H200's 141, and the
  // plain plans at full width another 60.
  void size_msm_scratch() {
    constexpr size_t headroom = size_t(1) << 30;
    size_t fr = 0, tot = 0;
    CUZK_CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
    const size_t n[2] = {n_vars, domain}, xyzz[2] = {sizeof(DG2xyzz), sizeof(DG1xyzz)};
    int c[2], per[2];
    size_t unit[2];
    for (int e = 0; e < 2; e++) {
      c[e] = msm_window ? msm_window : msm_auto_window(n[e]);
      per[e] = msm_windows(c[e]);
      unit[e] = MsmEngine::bytes_per_window(n[e], c[e], xyzz[e]);
    }
    size_t avail = fr > headroom ? fr - headroom : 0;
    if (msm_scratch_cap) avail = std::min(avail, msm_scratch_cap);
    auto need = [&] { return per[0] * unit[0] + per[1] * unit[1]; };
    if (need() <= avail) return;
    while (need() > avail && (per[0] > 1 || per[1] > 1)) {
      int e = per[0] * unit[0] >= per[1] * unit[1] && per[0] > 1 ? 0 : per[1] > 1 ? 1 : 0;
      per[e]--;
    }
    if (need() > avail)
      throw GpuError("GPU prover: the MSMs need " + std::to_string(need() >> 20) +
                     " MiB of device memory even one window at a time; " + std::to_string(avail >> 20) +
                     " MiB are left for them beside the key");
    msm_capped = true;
    eng_w.set_entry_cap(n[0] * per[0]);
    eng_h.set_entry_cap(n[1] * per[1]);
    pinfo.msm_batches_w = (msm_windows(c[0]) + per[0] - 1) / per[0];
    pinfo.msm_batches_h = (msm_windows(c[1]) + per[1] - 1) / per[1];
  }

  // The MSM scratch of both engines' plain plans, which every proof may need.
  void reserve_scratch() {
    size_msm_scratch();
    eng_w.reserve(n_vars, 0, false, sizeof(DG2xyzz));
    eng_h.reserve(domain, 0, false, sizeof(DG1xyzz));
  }

  // After the plain scratch (reserve_scratch), a table per asked-for set, in order, while free
  // memory covers it with headroom, with the shared plans' scratch beside the first of each engine.
  void build_tables(const PrecomputeOptions& pre) {
    bool want = pre.enabled && !parse_sets(pre.sets).empty();
    if (want) {
      c_w = msm_window ? msm_window : msm_auto_window_shared(n_vars);
      c_h = msm_window ? msm_window : msm_auto_window_shared(domain);
    }
    // An engine's shared-plan scratch is reserved with its first table, and counted in that table's
    // fit: at 2^27 neither fits beside the key, and neither is taken.
    bool shared_reserved[2] = {false, false};
    pinfo.window_w = c_w;
    pinfo.window_h = c_h;
    std::vector<int> built, skipped;
    if (want) {
      int sms = 0, threads = 0;
      CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
      CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
      auto t0 = std::chrono::steady_clock::now();
      for (int k : parse_sets(pre.sets)) {
        size_t n = set_points(k);
        if (n == 0) continue;
        int win = k == kSetH ? c_h : c_w;
        size_t nw = (size_t)msm_windows(win);
        bool g2 = k == kSetB2;
        size_t bytes = n * nw * (g2 ? sizeof(DG2Affine) : sizeof(DG1Affine));
        // The build kernel keeps its per-window values in local memory (about 4.8 KB a thread for
        // G1, 9.7 KB for G2), which the driver reserves for every resident thread.
        size_t lmem = (g2 ? 10240 : 5120) * (size_t)sms * (size_t)threads;
        size_t fr = 0, tot = 0;
        CUZK_CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
        size_t plan_n = k == kSetH ? domain : n_vars;  // a shared plan needs plan_n * windows < 2^31
        const int e = k == kSetH ? 1 : 0;
        const size_t xyzz = e ? sizeof(DG1xyzz) : sizeof(DG2xyzz);
        size_t scratch = shared_reserved[e] ? 0 : MsmEngine::bytes_per_window(plan_n, win, xyzz) + plan_n * (nw - 1) * 16;
        if (plan_n * nw >= (size_t(1) << 31) || fr < bytes + scratch + lmem + pre.headroom_bytes) {
          skipped.push_back(k);
          continue;
        }
        try {
          if (!shared_reserved[e]) {
            (e ? eng_h : eng_w).reserve(plan_n, win, true, xyzz);
            shared_reserved[e] = true;
          }
          if (g2) build_table(b2, n, win, msm_precompute<DG2>);
          else build_table(k == kSetA ? a : k == kSetB1 ? b1 : k == kSetC ? c : h, n, win, msm_precompute<DG1>);
        } catch (const GpuError&) {  // refused after all (another process took the memory): plain path
          skipped.push_back(k);
          continue;
        }
        has_table[k] = true;
        built.push_back(k);
        pinfo.table_bytes += bytes;
        pinfo.table_extra_bytes += bytes / nw * (nw - 1);
      }
      pinfo.build_ms = ms_since(t0);
    }
    pinfo.sets = join_sets(built);
    pinfo.skipped = join_sets(skipped);
    size_t fr = 0, tot = 0;
    CUZK_CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
    pinfo.free_bytes = fr;
  }
  template <class DA, class Pre>
  void build_table(DevBuf<DA>& pts, size_t n, int win, Pre pre) {
    DevBuf<DA> table(n * (size_t)msm_windows(win));
    pre(pts.get(), n, win, table.get(), s_up.get());
    s_up.sync();
    pts = std::move(table);  // the table's first window is the points
  }

  bool tabled(int k) const { return use_tables && has_table[k]; }

  ~Impl() {
    if (w_ready) cudaEventDestroy(w_ready);
    for (auto e : abc_ready)
      if (e) cudaEventDestroy(e);
  }

  // The witness lane of B proofs (A, B1, B2, C over one digit plan of their w) on its own host
  // thread, since the MSM plan waits on small device-to-host copies; w must be queued on s_w
  // before this is called.
  std::future<void> witness_lane(RawMsms* outs, u32 B) {
    return std::async(std::launch::async, [this, outs, B] {
      auto t1 = std::chrono::steady_clock::now();
      set_device(device);
      SpanRecorder& sp = lane_spans;
      cudaStream_t s = s_w.get();
      // A witness as sparse as a PoRep partition's goes faster through a plain plan at the width its
      // bit lengths call for than over the tables (msm_prefer_plain); a batch is judged by one
      // proof's share of the bins.
      u64 hist[kMsmHistBins], one[kMsmHistBins];
      sp.run("msm_plan", s, [&] { eng_w.histogram(w.get(), (size_t)B * n_vars, hist); });
      for (int i = 0; i < kMsmHistBins; i++) one[i] = (hist[i] + B - 1) / B;
      const bool sparse = c_w > 0 && msm_prefer_plain(one, n_vars, c_w);  // c_w = 0: no tables
      const int c_plain = msm_window ? msm_window : msm_auto_window_hist(one);
      auto on_table = [&](int k) { return tabled(k) && !sparse; };
      // Sets with tables over one shared plan, the others over a plain plan of the same w.
      bool need[2] = {false, false};
      for (int k : {kSetA, kSetB1, kSetB2, kSetC})
        if (k != kSetC || c_needed()) need[on_table(k) ? 1 : 0] = true;
      for (u32 v = 0; v < B; v++) {
        outs[v].a = outs[v].b1 = outs[v].c = host::infinity<typename C::G1Curve>();
        outs[v].b2 = host::infinity<typename C::G2Curve>();
      }
      for (int shared = 1; shared >= 0; shared--) {
        if (!need[shared]) continue;
        auto msms = [&] {
          const bool on[4] = {on_table(kSetA) == (bool)shared, on_table(kSetB1) == (bool)shared,
                              on_table(kSetB2) == (bool)shared, c_needed() && on_table(kSetC) == (bool)shared};
          RawMsms& out = outs[0];
          if (B == 1 && !eng_w.latency_bound()) {  // each run fills the device: one after another, in the engine's scratch
            if (on[0]) out.a = host::add(out.a, sp.run("msm_a", s, [&] { return eng_w.run(a.get()); }));
            if (on[1]) out.b1 = host::add(out.b1, sp.run("msm_b1", s, [&] { return eng_w.run(b1.get()); }));
            if (on[2]) out.b2 = host::add(out.b2, sp.run("msm_b2", s, [&] { return eng_w.run(b2.get()); }));
            if (on[3]) out.c = host::add(out.c, sp.run("msm_c", s, [&] { return eng_w.run(c.get(), n_public + 1); }));
            return;
          }
          // Each run on a stream of its own, then every sum once all have ended (before the next plan).
          const cudaStream_t st[4] = {s, s_run[0].get(), s_run[1].get(), s_run[2].get()};
          for (int i = 1; i < 4; i++)  // before the spans open: a span is the run, not the wait
            if (on[i]) CUZK_CUDA_CHECK(cudaStreamWaitEvent(st[i], eng_w.planned(), 0));
          if (on[0]) sp.run("msm_a", st[0], [&] { eng_w.launch(a.get(), 0, st[0], run_scratch[0]); });
          if (on[1]) sp.run("msm_b1", st[1], [&] { eng_w.launch(b1.get(), 0, st[1], run_scratch[1]); });
          if (on[2]) sp.run("msm_b2", st[2], [&] { eng_w.launch(b2.get(), 0, st[2], run_scratch[2]); });
          if (on[3]) sp.run("msm_c", st[3], [&] { eng_w.launch(c.get(), n_public + 1, st[3], run_scratch[3]); });
          for (cudaStream_t x : st) CUZK_CUDA_CHECK(cudaStreamSynchronize(x));
          for (u32 v = 0; v < B; v++) {
            RawMsms& o = outs[v];
            if (on[0]) o.a = host::add(o.a, eng_w.result<DG1>(run_scratch[0], v));
            if (on[1]) o.b1 = host::add(o.b1, eng_w.result<DG1>(run_scratch[1], v));
            if (on[2]) o.b2 = host::add(o.b2, eng_w.result<DG2>(run_scratch[2], v));
            if (on[3]) o.c = host::add(o.c, eng_w.result<DG1>(run_scratch[3], v));
          }
        };
        int win = shared ? c_w : c_plain;
        for (int b = 0; b == 0 || b < eng_w.batches(); b++) {
          sp.run("msm_plan", s, [&] { eng_w.plan(w.get(), n_vars, win, shared != 0, b, hist, B); });
          msms();
        }
        if (!shared) t.batches_w = eng_w.batches();
      }
      t.witness_msms_ms = ms_since(t1);
    });
  }

  // The H lane's tail: the H MSM over the odd-coset values left in the first third of abc (B
  // proofs' end to end).
  void h_msm(RawMsms* outs, u32 B) {
    auto t3 = std::chrono::steady_clock::now();
    bool shared = tabled(kSetH);
    int win = shared ? c_h : msm_window;
    for (u32 v = 0; v < B; v++) outs[v].h = host::infinity<typename C::G1Curve>();
    for (int b = 0; b == 0 || b < eng_h.batches(); b++) {
      spans.run("msm_plan", s_h.get(), [&] { eng_h.plan(abc.get(), domain, win, shared, b, nullptr, B); });
      win = eng_h.window();
      if (B == 1) {
        outs[0].h = host::add(outs[0].h, spans.run("msm_h", s_h.get(), [&] { return eng_h.run(h.get()); }));
        continue;
      }
      spans.run("msm_h", s_h.get(), [&] { eng_h.launch(h.get(), 0, s_h.get(), h_scratch); });
      s_h.sync();
      for (u32 v = 0; v < B; v++) outs[v].h = host::add(outs[v].h, eng_h.result<DG1>(h_scratch, v));
    }
    t.h_msm_ms = ms_since(t3);
    t.batches_h = shared ? 0 : eng_h.batches();
  }

  // A proof starts: the origin of its spans goes on the witness stream, ahead of everything (the
  // other streams wait on that stream's events before their first stage).
  void begin_spans() {
    t.batches_w = t.batches_h = 0;
    spans.reset();
    lane_spans.reset();
    origin.record(s_w.get());
  }
  // Both lanes have ended: the spans of the proof, by start.
  void end_spans() {
    t.spans.clear();
    spans.collect(origin, t.spans);
    lane_spans.collect(origin, t.spans);
    std::stable_sort(t.spans.begin(), t.spans.end(),
                     [](const StageSpan& x, const StageSpan& y) { return x.start_ms < y.start_ms; });
  }
};

namespace {

// Runs body (the H lane) on this thread while lane runs; rethrows the first failure after both end.
template <class Body>
void join_lanes(std::future<void>& lane, Body&& body) {
  try {
    body();
  } catch (...) {
    try {
      lane.get();
    } catch (...) {
    }
    throw;
  }
  lane.get();
}

}  // namespace

template <class C>
GpuProver<C>::GpuProver(const groth16::ZKey<C>& zk, const groth16::ConstraintEvaluator<C>& ev, int device,
                        const GpuOptions& opt) {
  opt.validate();  // the caller's error, before any device work
  set_device(device);
  impl_ = std::make_unique<Impl>(zk, ev, device, opt);
}

template <class C>
GpuProver<C>::~GpuProver() {
  if (impl_) {
    cudaSetDevice(impl_->device);
    impl_.reset();
  }
}

template <class C>
int GpuProver<C>::device() const {
  return impl_->device;
}
template <class C>
ProverTimings GpuProver<C>::last_timings() const {
  return impl_->t;
}
template <class C>
PrecomputeInfo GpuProver<C>::precompute_info() const {
  return impl_->pinfo;
}
template <class C>
void GpuProver<C>::use_precomputed(bool on) {
  impl_->use_tables = on;
}

template <class C>
groth16::RawMsms<C> GpuProver<C>::run(const std::vector<Fr>& wit) {
  Impl& m = *impl_;
  if (wit.size() != m.n_vars)
    throw std::invalid_argument("witness has " + std::to_string(wit.size()) + " values, the zkey expects nVars=" +
                                std::to_string(m.n_vars));
  auto t0 = std::chrono::steady_clock::now();
  set_device(m.device);
  m.begin_spans();
  m.spans.run("copy", m.s_w.get(), [&] { m.staging.copy(m.w.get(), wit.data(), wit.size() * sizeof(Fr), m.s_w.get()); });
  CUZK_CUDA_CHECK(cudaEventRecord(m.w_ready, m.s_w.get()));
  m.t.upload_ms = ms_since(t0);  // host side: the last chunk is queued

  RawMsms out;
  auto lane = m.witness_lane(&out, 1);
  join_lanes(lane, [&] { m.eval_h_lane(&out, 1); });
  m.end_spans();
  m.t.total_ms = ms_since(t0);
  return out;
}

template <class C>
groth16::RawMsms<C> GpuProver<C>::run_synthesized(const SynthesizedView& sv) {
  return std::move(run_batch({sv}).front());
}

template <class C>
std::vector<groth16::RawMsms<C>> GpuProver<C>::run_batch(const std::vector<SynthesizedView>& views) {
  Impl& m = *impl_;
  const u32 B = (u32)views.size();
  if (B == 0) return {};
  const bool abc = views[0].a != nullptr;  // else they are evaluated here from w, as run() does
  for (const SynthesizedView& sv : views) {
    if (!sv.w || (!sv.a || !sv.b || !sv.c) != !sv.a)
      throw std::invalid_argument("synthesized vectors: a null vector (w, or some but not all of a, b, c)");
    if ((sv.a != nullptr) != abc)
      throw std::invalid_argument("a batch of proofs where some bring a, b, c and others do not");
    if (sv.n_vars != m.n_vars)
      throw std::invalid_argument("synthesized witness has " + std::to_string(sv.n_vars) +
                                  " values, the zkey expects nVars=" + std::to_string(m.n_vars));
    if (sv.domain_size != m.domain)
      throw std::invalid_argument("synthesized a/b/c have " + std::to_string(sv.domain_size) +
                                  " entries, the zkey's domainSize is " + std::to_string(m.domain));
  }
  if (B > 1 && B > batch_limit())
    throw std::invalid_argument("a batch of " + std::to_string(B) + " proofs: this key takes at most " +
                                std::to_string(batch_limit()) + " at once");
  auto t0 = std::chrono::steady_clock::now();
  set_device(m.device);
  m.ensure_vectors(B);
  const size_t n = m.domain;

  // Every w first, so that the long witness lane starts as early as possible.
  m.begin_spans();
  m.spans.run("copy", m.s_w.get(), [&] {
    for (u32 v = 0; v < B; v++) copy_in(m.staging, m.w_of(v), views[v].w, m.n_vars * sizeof(Fr), m.s_w.get());
  });
  CUZK_CUDA_CHECK(cudaEventRecord(m.w_ready, m.s_w.get()));
  std::vector<RawMsms> out(B);
  auto lane = m.witness_lane(out.data(), B);
  if (!abc) {
    m.t.upload_ms = ms_since(t0);
    join_lanes(lane, [&] { m.eval_h_lane(out.data(), B); });
    m.end_spans();
    m.t.total_ms = ms_since(t0);
    return out;
  }
  join_lanes(lane, [&] {
    // a, b, c on the upload stream (behind w, which shares the bus); the H stream transforms each
    // one as soon as its copy is done, while the next is still in flight.
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(m.s_up.get(), m.w_ready, 0));
    auto t2 = std::chrono::steady_clock::now();
    for (u32 v = 0; v < B; v++) {
      const Fr* src[3] = {views[v].a, views[v].b, views[v].c};
      cudaStream_t s = m.h_stream(v, B);
      NttEngine<typename Dev<C>::Fr>& ntt = m.h_ntt(v, B);
      for (int i = 0; i < 3; i++) {
        m.spans.run("copy", m.s_up.get(),
                    [&] { copy_in(m.staging, m.abc_of(i, v, B), src[i], n * sizeof(Fr), m.s_up.get()); });
        CUZK_CUDA_CHECK(cudaEventRecord(m.abc_ready[i], m.s_up.get()));
        CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, m.abc_ready[i], 0));
        m.spans.run("ntt", s, [&] { ntt.h_stage_vec(m.abc_of(i, v, B), m.log_domain); });
      }
      m.spans.run("ntt", s, [&] { ntt.h_combine(m.abc_of(0, v, B), m.abc_of(1, v, B), m.abc_of(2, v, B), m.log_domain); });
    }
    m.t.upload_ms = ms_since(t0);  // host side: the last copy is queued
    m.join_h_lanes(B);
    m.s_h.sync();
    m.t.h_stage_ms = ms_since(t2);
    m.h_msm(out.data(), B);
  });
  m.end_spans();
  m.t.total_ms = ms_since(t0);
  return out;
}

// Proofs of a small key leave most of the device idle: their MSMs are chains of dependent
// additions (MsmEngine::latency_bound), and a batch runs many such chains side by side in the same
// launches. Past about batch_points domain points a batch fills the device and gains little more,
// while its first proof waits for the last. On an H100 (BLS12-381) a 2^16 proof took 5.4 ms a proof
// in batches of 4 (2^18 points), 2.8 ms in batches of 32 (2^21); a 2^13 proof 0.72 ms in batches of
// 32 and 0.63 ms in batches of 256 (2^21).
template <class C>
size_t GpuProver<C>::batch_limit() const {
  constexpr size_t kMaxBatch = 256;
  const Impl& m = *impl_;
  if (m.msm_capped) return 1;  // the plans already run in window batches
  size_t by_work = std::clamp<size_t>(m.batch_points >> m.log_domain, 1, kMaxBatch);
  if (by_work <= m.vectors) return by_work;  // the room is there already
  // Device memory a proof of a batch takes: its vectors, its plans' digit entries (all windows, as
  // for random scalars) and its buckets, twice over for the runs side by side. The batch must leave
  // half of what is free, beside 1 GiB.
  using G1x = typename Dev<C>::G1xyzz;
  using G2x = typename Dev<C>::G2xyzz;
  const int cw = msm_auto_window(m.n_vars), ch = msm_auto_window(m.domain);
  const size_t per = sizeof(typename Dev<C>::Fr) * ((size_t)m.n_vars + 3 * (size_t)m.domain) +
                     2 * (msm_windows(cw) * MsmEngine::bytes_per_window(m.n_vars, cw, sizeof(G2x)) +
                          msm_windows(ch) * MsmEngine::bytes_per_window(m.domain, ch, sizeof(G1x)));
  size_t fr = 0, tot = 0;
  set_device(m.device);
  CUZK_CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
  const size_t room = fr > (size_t(1) << 30) ? (fr - (size_t(1) << 30)) / 2 : 0;
  return std::clamp<size_t>(room / per, std::max<size_t>(m.vectors, 1), by_work);
}

template class GpuProver<Bls12_381>;
template class GpuProver<Bn254>;

// ---- host memory registration ----

bool host_registered(const void* p) noexcept {
  if (!p) return false;
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return at.type == cudaMemoryTypeHost;
}

void register_host(void* p, size_t bytes) {
  if (!p || bytes == 0) throw GpuError("register_host: empty range (null pointer or 0 bytes)");
  if (device_count() == 0) throw GpuError("register_host: no CUDA device is available");
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    set_device(0);
  }
  cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
  if (e == cudaErrorInvalidValue || e == cudaErrorNotPermitted || e == cudaErrorNotSupported) {
    // A read-only mapping (PROT_READ) is refused for writable registration; try it read-only.
    cudaGetLastError();
    e = cudaHostRegister(p, bytes, cudaHostRegisterPortable | cudaHostRegisterReadOnly);
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw GpuError("register_host(" + std::to_string(reinterpret_cast<uintptr_t>(p)) + ", " + std::to_string(bytes) +
                   " bytes) failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) +
                   (e == cudaErrorHostMemoryAlreadyRegistered ? " (the range overlaps a registered one)" : ""));
  }
}

void unregister_host(void* p) {
  if (!p) throw GpuError("unregister_host: null pointer");
  if (device_count() == 0) throw GpuError("unregister_host: no CUDA device is available");
  cudaError_t e = cudaHostUnregister(p);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw GpuError("unregister_host(" + std::to_string(reinterpret_cast<uintptr_t>(p)) + ") failed: " +
                   cudaGetErrorName(e) + ": " + cudaGetErrorString(e) +
                   (e == cudaErrorHostMemoryNotRegistered ? " (not the start of a registered range)" : ""));
  }
}

double h2d_bandwidth(int device, size_t bytes, int runs) {
  set_device(device);
  PinnedBuf<unsigned char> host;
  host.reserve(bytes);
  std::memset(host.get(), 1, bytes);  // touched: its pages exist before the timing
  DevBuf<unsigned char> dev(bytes);
  Event a, b;
  std::vector<double> bps;
  for (int i = 0; i < std::max(runs, 1) + 1; i++) {
    a.record(nullptr);
    CUZK_CUDA_CHECK(cudaMemcpyAsync(dev.get(), host.get(), bytes, cudaMemcpyHostToDevice, nullptr));
    b.record(nullptr);
    CUZK_CUDA_CHECK(cudaEventSynchronize(b.get()));
    float ms = 0;
    CUZK_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
    if (i > 0) bps.push_back(double(bytes) / (double(ms) / 1e3));  // the first is a warm-up
  }
  std::sort(bps.begin(), bps.end());
  return bps[bps.size() / 2];
}

// ---- device queries ----

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

DeviceInfo device_info(int device) {
  set_device(device);
  cudaDeviceProp p;
  CUZK_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceInfo d;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  int clk = 0;
  if (cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, device) == cudaSuccess) d.clock_mhz = clk / 1000;
  d.total_memory = p.totalGlobalMem;
  d.l2_bytes = p.l2CacheSize;
  size_t fr = 0, tot = 0;
  CUZK_CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
  d.free_memory = fr;
  return d;
}

size_t free_memory(int device) {
  set_device(device);
  size_t fr = 0, tot = 0;
  CUZK_CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
  return fr;
}

}  // namespace gpu
}  // namespace cuzk
