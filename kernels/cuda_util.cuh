// CUDA runtime plumbing for the .cu files: checked calls that throw GpuError, owning device and
// pinned buffers, streams and events, a device guard.
#pragma once
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "gpu_api.hpp"

namespace cuzk {
namespace gpu {

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* what, const char* file, int line) {
  throw GpuError(std::string("CUDA error in ") + what + " (" + file + ":" + std::to_string(line) +
                 "): " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

#define CUZK_CUDA_CHECK(call)                                                     \
  do {                                                                            \
    cudaError_t cuzk_err_ = (call);                                               \
    if (cuzk_err_ != cudaSuccess) ::cuzk::gpu::throw_cuda(cuzk_err_, #call, __FILE__, __LINE__); \
  } while (0)
// After a kernel launch: a bad configuration shows up here, faults at the next synchronisation.
#define CUZK_CUDA_LAUNCHED(name) CUZK_CUDA_CHECK(cudaGetLastError())

// Owning device allocation of n elements of T (uninitialised). Grows only on request.
template <class T>
class DevBuf {
 public:
  DevBuf() = default;
  explicit DevBuf(size_t n) { resize(n); }
  ~DevBuf() { release(); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  DevBuf(DevBuf&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DevBuf& operator=(DevBuf&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  // Discards the contents when it has to grow.
  void reserve(size_t n) {
    if (n <= n_) return;
    resize(n);
  }
  void resize(size_t n) {
    release();
    if (n == 0) return;
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, n * sizeof(T));
    if (e != cudaSuccess) {
      cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      throw GpuError("device allocation of " + std::to_string(n * sizeof(T)) + " bytes failed (" +
                     cudaGetErrorString(e) + "; " + std::to_string(free_b >> 20) + " MiB free of " +
                     std::to_string(total_b >> 20) + " MiB)");
    }
    p_ = static_cast<T*>(p);
    n_ = n;
  }
  void release() {
    if (p_) cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
  }
  T* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

// Page-locked host buffer, so that copies run at full bus speed and asynchronously.
template <class T>
class PinnedBuf {
 public:
  PinnedBuf() = default;
  ~PinnedBuf() {
    if (p_) cudaFreeHost(p_);
  }
  PinnedBuf(const PinnedBuf&) = delete;
  PinnedBuf& operator=(const PinnedBuf&) = delete;
  void reserve(size_t n) {
    if (n <= n_) return;
    if (p_) cudaFreeHost(p_);
    p_ = nullptr;
    n_ = 0;
    void* p = nullptr;
    CUZK_CUDA_CHECK(cudaMallocHost(&p, n * sizeof(T)));
    p_ = static_cast<T*>(p);
    n_ = n;
  }
  T* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

// Makes `device` current for the calling thread (CUDA's current device is per thread).
inline void set_device(int device) {
  int n = device_count();
  if (device < 0 || device >= n)
    throw GpuError("CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(n) +
                   " device(s) present)");
  CUZK_CUDA_CHECK(cudaSetDevice(device));
}

// A stream owned for the lifetime of an engine.
class Stream {
 public:
  Stream() { CUZK_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const { CUZK_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

// An owned CUDA event (timing enabled unless flags say otherwise).
class Event {
 public:
  explicit Event(unsigned flags = cudaEventDefault) { CUZK_CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags)); }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) { CUZK_CUDA_CHECK(cudaEventRecord(e_, s)); }
  // Milliseconds from `from` to this event, once this one has completed (waits for it).
  float ms_since(const Event& from) const {
    CUZK_CUDA_CHECK(cudaEventSynchronize(e_));
    float ms = 0;
    CUZK_CUDA_CHECK(cudaEventElapsedTime(&ms, from.e_, e_));
    return ms;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

inline unsigned grid_for(size_t n, unsigned threads) {
  size_t g = (n + threads - 1) / threads;
  if (g > 0x7fffffffull) throw GpuError("launch of " + std::to_string(n) + " threads is too large");
  return (unsigned)(g == 0 ? 1 : g);
}

}  // namespace gpu
}  // namespace cuzk
