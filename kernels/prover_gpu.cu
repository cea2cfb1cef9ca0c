// The device half of the Groth16 prover. The proving key (A, B1, B2, C, H points and the compiled
// A/B matrices) is uploaded once and stays resident. Per proof only the witness crosses the bus;
// two lanes then run concurrently on two streams:
//   witness lane: sort the witness digits once, then the A, B1, B2 and C MSMs over them;
//   H lane:       a = A w, b = B w, c = a o b on the device, the fused H stage, the H MSM.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>

#include "engines.cuh"
#include "groth16/parallel.hpp"
#include "host_math.hpp"

namespace cuzk {
namespace gpu {

namespace {

constexpr int kEvalThreads = 128;

// One constraint row per thread: a = sum A_rk w_k, b = sum B_rk w_k, c = a b. Coefficients equal to
// one (most of them in circom output) skip the multiply.
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

template <class D, class H>
void upload(DevBuf<D>& dst, const std::vector<H>& src) {
  static_assert(sizeof(D) == sizeof(H), "host and device layouts differ");
  dst.resize(std::max<size_t>(src.size(), 1));
  if (!src.empty()) CUZK_CUDA_CHECK(cudaMemcpy(dst.get(), src.data(), src.size() * sizeof(H), cudaMemcpyHostToDevice));
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

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

struct GpuProver::Impl {
  int device;
  u32 n_vars, n_public, domain;
  int log_domain;
  DevBuf<DG1Affine> a, b1, c, h;
  DevBuf<DG2Affine> b2;
  DevBuf<u32> a_rp, a_col, b_rp, b_col;
  DevBuf<DFr> a_val, b_val;
  DevBuf<DFr> w, abc;
  Stream s_w, s_h;
  MsmEngine eng_w{s_w.get()}, eng_h{s_h.get()};
  NttEngine ntt{s_h.get()};
  cudaEvent_t w_ready = nullptr;
  StagedUpload staging;
  Timings t;

  Impl(const ZKey& zk, const ConstraintEvaluator& ev, int dev)
      : device(dev), n_vars(zk.n_vars), n_public(zk.n_public), domain(zk.domain_size), log_domain(zk.log_domain) {
    if (ev.n_rows != domain || ev.n_vars != n_vars)
      throw std::invalid_argument("GPU prover: the constraint evaluator does not belong to this zkey");
    upload(a, zk.a);
    upload(b1, zk.b1);
    upload(b2, zk.b2);
    upload(c, zk.c);
    upload(h, zk.h);
    upload(a_rp, ev.a_row_ptr);
    upload(a_col, ev.a_col);
    upload(a_val, ev.a_val);
    upload(b_rp, ev.b_row_ptr);
    upload(b_col, ev.b_col);
    upload(b_val, ev.b_val);
    w.resize(n_vars);
    abc.resize(3 * (size_t)domain);
    ntt.reserve(log_domain);
    CUZK_CUDA_CHECK(cudaEventCreateWithFlags(&w_ready, cudaEventDisableTiming));
  }
  ~Impl() {
    if (w_ready) cudaEventDestroy(w_ready);
  }
};

GpuProver::GpuProver(const ZKey& zk, const ConstraintEvaluator& ev, int device) {
  set_device(device);
  impl_ = std::make_unique<Impl>(zk, ev, device);
}

GpuProver::~GpuProver() {
  if (impl_) {
    cudaSetDevice(impl_->device);
    impl_.reset();
  }
}

int GpuProver::device() const { return impl_->device; }
GpuProver::Timings GpuProver::last_timings() const { return impl_->t; }

RawMsms GpuProver::run(const std::vector<Fr>& wit) {
  Impl& m = *impl_;
  if (wit.size() != m.n_vars)
    throw std::invalid_argument("witness has " + std::to_string(wit.size()) + " values, the zkey expects nVars=" +
                                std::to_string(m.n_vars));
  auto t0 = std::chrono::steady_clock::now();
  set_device(m.device);
  m.staging.copy(m.w.get(), wit.data(), wit.size() * sizeof(Fr), m.s_w.get());
  CUZK_CUDA_CHECK(cudaEventRecord(m.w_ready, m.s_w.get()));
  m.t.upload_ms = ms_since(t0);  // host side: the last chunk is queued

  RawMsms out;
  // Witness lane on its own host thread (the MSM plan waits on small device-to-host copies).
  auto lane = std::async(std::launch::async, [&] {
    auto t1 = std::chrono::steady_clock::now();
    set_device(m.device);
    m.eng_w.plan(m.w.get(), m.n_vars);
    out.a = m.eng_w.run_g1(m.a.get());
    out.b1 = m.eng_w.run_g1(m.b1.get());
    out.b2 = m.eng_w.run_g2(m.b2.get());
    out.c = m.n_vars > m.n_public + 1 ? m.eng_w.run_g1(m.c.get(), m.n_public + 1) : host::g1_infinity();
    m.t.witness_msms_ms = ms_since(t1);
  });

  try {
    auto t2 = std::chrono::steady_clock::now();
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(m.s_h.get(), m.w_ready, 0));
    size_t n = m.domain;
    DFr* a = m.abc.get();
    DFr *b = a + n, *c = b + n;
    k_eval_abc<<<grid_for(n, kEvalThreads), kEvalThreads, 0, m.s_h.get()>>>(
        m.a_rp.get(), m.a_col.get(), m.a_val.get(), m.b_rp.get(), m.b_col.get(), m.b_val.get(), m.w.get(), m.domain,
        a, b, c);
    CUZK_CUDA_LAUNCHED("k_eval_abc");
    m.ntt.h_stage(a, b, c, m.log_domain);
    m.s_h.sync();
    m.t.h_stage_ms = ms_since(t2);
    auto t3 = std::chrono::steady_clock::now();
    m.eng_h.plan(a, n);
    out.h = m.eng_h.run_g1(m.h.get());
    m.t.h_msm_ms = ms_since(t3);
  } catch (...) {
    try {
      lane.get();
    } catch (...) {
    }
    throw;
  }
  lane.get();
  m.t.total_ms = ms_since(t0);
  return out;
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

}  // namespace gpu
}  // namespace cuzk
