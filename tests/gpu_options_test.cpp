// The GPU options' one grammar (common/gpu_options.hpp), which the config file, the kernels and
// `cuzk bench` share.
#include "common/gpu_options.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace go = cuzk::gpu_options;

TEST(GpuOptions, PrecomputeListsAreSetsInPriorityOrder) {
  EXPECT_EQ(go::parse_precompute_sets("h,a"), (std::vector<int>{4, 0}));
  EXPECT_EQ(go::parse_precompute_sets(" b2 , c"), (std::vector<int>{2, 3}));
  EXPECT_EQ(go::parse_precompute_sets("a,b1,b2,c,h"), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_NO_THROW(go::check_precompute("auto"));
  EXPECT_NO_THROW(go::check_precompute("off"));
}

TEST(GpuOptions, APrecomputeListIsStrict) {
  auto message = [](const std::string& spec) {
    try {
      go::check_precompute(spec);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  for (const char* bad : {"", "all", "a,,h", "a,", "H", "a;h", "b3"})
    EXPECT_NE(message(bad).find("comma-separated list of a, b1, b2, c, h"), std::string::npos) << bad;
  EXPECT_EQ(message("a,h,a"), "lists \"a\" twice");
}

TEST(GpuOptions, WindowAndPassRanges) {
  for (int w : {0, 8, 22}) EXPECT_NO_THROW(go::check_msm_window(w));
  for (int w : {-1, 7, 23}) EXPECT_THROW(go::check_msm_window(w), std::invalid_argument);
  for (int p : {0, 1, 8}) EXPECT_NO_THROW(go::check_ntt_passes(p));
  for (int p : {-1, 9}) EXPECT_THROW(go::check_ntt_passes(p), std::invalid_argument);
}
