// Device spans of a proof's stages (StageSpan), from pairs of timing events recorded on the stream
// that runs each stage. A span lasts from when its stream reaches the opening event to when it
// reaches the closing one: host gaps between launches inside a stage count as busy; time between
// stages, and waits on other streams queued before the opening event, do not.
#pragma once
#include <algorithm>
#include <deque>
#include <type_traits>
#include <vector>

#include "cuda_util.cuh"

namespace cuzk {
namespace gpu {

// The spans one host thread records during a proof. Events are kept and reused from proof to proof.
class SpanRecorder {
 public:
  void reset() { used_ = 0; }
  // Opens a span of `stage` (a string literal) on stream s; close(id, s) ends it.
  size_t open(const char* stage, cudaStream_t s) {
    if (used_ == spans_.size()) spans_.emplace_back();
    Span& sp = spans_[used_];
    sp.stage = stage;
    sp.begin.record(s);
    return used_++;
  }
  void close(size_t id, cudaStream_t s) { spans_[id].end.record(s); }
  // Runs f(), which queues the stage's work on stream s, inside a span; returns what f() returns.
  template <class F>
  auto run(const char* stage, cudaStream_t s, F&& f) {
    const size_t id = open(stage, s);
    if constexpr (std::is_void_v<std::invoke_result_t<F>>) {
      f();
      close(id, s);
    } else {
      auto r = f();
      close(id, s);
      return r;
    }
  }
  // Appends every closed span, in ms from `origin` (recorded before any of them), waiting for its
  // events to complete.
  void collect(const Event& origin, std::vector<StageSpan>& out) const {
    for (size_t i = 0; i < used_; i++) {
      const Span& sp = spans_[i];
      const double a = std::max(0.0, (double)sp.begin.ms_since(origin));
      out.push_back({sp.stage, a, std::max(a, (double)sp.end.ms_since(origin))});
    }
  }

 private:
  struct Span {
    const char* stage = "";
    Event begin, end;
  };
  std::deque<Span> spans_;
  size_t used_ = 0;
};

}  // namespace gpu
}  // namespace cuzk
