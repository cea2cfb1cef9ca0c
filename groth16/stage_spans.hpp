// Where a proof's compute time went: spans of time per stage, as a backend measures them (CUDA
// events on the device's streams, or the CPU's clock), and the busy time they add up to when some
// of them overlap (stages on concurrent streams).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace cuzk {

struct StageSpan {
  std::string stage;      // "ntt", "msm_a", "copy", ...
  double start_ms = 0;    // from the proof's start
  double end_ms = 0;
};

// Total length of the union of [start, end) intervals: overlapping time counts once. Empty or
// reversed intervals count nothing.
double union_ms(std::vector<std::pair<double, double>> intervals);

struct StageBusy {
  double total_ms = 0;                                   // union of every span
  std::vector<std::pair<std::string, double>> stages;    // union per stage, in first-seen order
};
StageBusy summarize_spans(const std::vector<StageSpan>& spans);

}  // namespace cuzk
