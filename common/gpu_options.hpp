// The grammar of the GPU options, in one place for the config file (gpu.precompute, gpu.msm_window,
// gpu.ntt_passes), the kernels (GpuOptions) and `cuzk bench`'s flags. Host-only and free of
// toml++, so that nvcc can read it.
#pragma once
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk::gpu_options {

// The point sets of a key that may get precomputed MSM tables, by index.
inline constexpr const char* kPrecomputeSets[] = {"a", "b1", "b2", "c", "h"};
inline constexpr int kPrecomputeSetCount = 5;
inline constexpr int kMsmWindowMin = 8, kMsmWindowMax = 22;  // 0: the cost model's choice
inline constexpr int kNttPassesMax = 8;                        // 0: automatic

// A priority list of point sets such as "h,a" (spaces around a name are ignored): their indices in
// order. Throws std::invalid_argument for an unknown or empty name and for a name listed twice.
inline std::vector<int> parse_precompute_sets(const std::string& list) {
  std::vector<int> out;
  size_t i = 0;
  for (;;) {
    size_t j = list.find(',', i);
    if (j == std::string::npos) j = list.size();
    std::string name = list.substr(i, j - i);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    int k = 0;
    while (k < kPrecomputeSetCount && name != kPrecomputeSets[k]) k++;
    if (k == kPrecomputeSetCount)
      throw std::invalid_argument("must be \"auto\", \"off\" or a comma-separated list of a, b1, b2, c, h; got \"" +
                                  list + "\"");
    if (std::find(out.begin(), out.end(), k) != out.end())
      throw std::invalid_argument("lists \"" + name + "\" twice");
    out.push_back(k);
    if (j == list.size()) return out;
    i = j + 1;
  }
}

// gpu.precompute: "auto", "off" or a priority list; throws as parse_precompute_sets.
inline void check_precompute(const std::string& spec) {
  if (spec != "auto" && spec != "off") parse_precompute_sets(spec);
}

inline void check_msm_window(int w) {
  if (w != 0 && (w < kMsmWindowMin || w > kMsmWindowMax))
    throw std::invalid_argument("must be 0 (automatic) or " + std::to_string(kMsmWindowMin) + ".." +
                                std::to_string(kMsmWindowMax) + ", got " + std::to_string(w));
}

inline void check_ntt_passes(int p) {
  if (p < 0 || p > kNttPassesMax)
    throw std::invalid_argument("must be 0 (automatic) or 1.." + std::to_string(kNttPassesMax) + ", got " +
                                std::to_string(p));
}

}  // namespace cuzk::gpu_options
