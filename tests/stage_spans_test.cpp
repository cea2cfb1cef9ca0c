// Busy time from stage spans: overlaps count once, per stage and in total.
#include <gtest/gtest.h>

#include "groth16/stage_spans.hpp"

using namespace cuzk;

TEST(StageSpans, UnionCountsOverlapsOnce) {
  EXPECT_DOUBLE_EQ(union_ms({}), 0);
  EXPECT_DOUBLE_EQ(union_ms({{0, 10}}), 10);
  EXPECT_DOUBLE_EQ(union_ms({{0, 10}, {5, 15}}), 15);         // overlapping
  EXPECT_DOUBLE_EQ(union_ms({{5, 15}, {0, 10}, {20, 25}}), 20);  // unordered, with a hole
  EXPECT_DOUBLE_EQ(union_ms({{0, 10}, {10, 12}}), 12);          // touching
  EXPECT_DOUBLE_EQ(union_ms({{0, 100}, {10, 20}, {30, 40}}), 100);  // nested
  EXPECT_DOUBLE_EQ(union_ms({{3, 3}, {5, 2}, {1, 2}}), 1);      // empty and reversed count nothing
}

TEST(StageSpans, SummaryPerStageAndTotal) {
  // Two lanes: copy 0-2 and 4-6 beside ntt 2-8; msm_a 1-5 on the other stream.
  std::vector<StageSpan> spans = {
      {"copy", 0, 2}, {"msm_a", 1, 5}, {"ntt", 2, 8}, {"copy", 4, 6}, {"msm_b1", 10, 11}};
  StageBusy b = summarize_spans(spans);
  EXPECT_DOUBLE_EQ(b.total_ms, 9);  // [0, 8) and [10, 11)
  ASSERT_EQ(b.stages.size(), 4u);
  EXPECT_EQ(b.stages[0].first, "copy");
  EXPECT_DOUBLE_EQ(b.stages[0].second, 4);
  EXPECT_EQ(b.stages[1].first, "msm_a");
  EXPECT_DOUBLE_EQ(b.stages[1].second, 4);
  EXPECT_EQ(b.stages[2].first, "ntt");
  EXPECT_DOUBLE_EQ(b.stages[2].second, 6);
  EXPECT_EQ(b.stages[3].first, "msm_b1");
  EXPECT_DOUBLE_EQ(b.stages[3].second, 1);
  double sum = 0;
  for (const auto& [stage, ms] : b.stages) sum += ms;
  EXPECT_GT(sum, b.total_ms);  // the stages overlapped
  EXPECT_DOUBLE_EQ(summarize_spans({}).total_ms, 0);
}
