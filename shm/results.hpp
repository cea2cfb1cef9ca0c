// Where a GPU worker leaves a proved partition and the supervisor finds it: one layout for both
// processes, <state_dir>/results/<job>/<partition>.proof.json and .public.json. The GPU worker
// writes each under a temporary name and renames it into place, so a file found there is whole,
// and only a proof that verified has files (crash repair takes both files as a finished proof).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

namespace cuzk::shm {

inline std::filesystem::path results_root(const std::string& state_dir) {
  return std::filesystem::path(state_dir) / "results";
}
inline std::filesystem::path job_results(const std::string& state_dir, uint64_t job) {
  return results_root(state_dir) / std::to_string(job);
}
inline std::filesystem::path proof_file(const std::filesystem::path& job_dir, uint32_t partition) {
  return job_dir / (std::to_string(partition) + ".proof.json");
}
inline std::filesystem::path public_file(const std::filesystem::path& job_dir, uint32_t partition) {
  return job_dir / (std::to_string(partition) + ".public.json");
}

}  // namespace cuzk::shm
