#include "stage_spans.hpp"

#include <algorithm>

namespace cuzk {

double union_ms(std::vector<std::pair<double, double>> iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, cur_start = 0, cur_end = 0;
  bool open = false;
  for (const auto& [a, b] : iv) {
    if (!(b > a)) continue;
    if (open && a <= cur_end) {
      cur_end = std::max(cur_end, b);
      continue;
    }
    if (open) total += cur_end - cur_start;
    cur_start = a, cur_end = b, open = true;
  }
  if (open) total += cur_end - cur_start;
  return total;
}

StageBusy summarize_spans(const std::vector<StageSpan>& spans) {
  StageBusy out;
  std::vector<std::pair<double, double>> all;
  std::vector<std::vector<std::pair<double, double>>> per;
  for (const StageSpan& s : spans) {
    all.push_back({s.start_ms, s.end_ms});
    size_t i = 0;
    while (i < out.stages.size() && out.stages[i].first != s.stage) i++;
    if (i == out.stages.size()) {
      out.stages.push_back({s.stage, 0.0});
      per.emplace_back();
    }
    per[i].push_back({s.start_ms, s.end_ms});
  }
  for (size_t i = 0; i < per.size(); i++) out.stages[i].second = union_ms(std::move(per[i]));
  out.total_ms = union_ms(std::move(all));
  return out;
}

}  // namespace cuzk
