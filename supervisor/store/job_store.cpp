// The names of the job store's enumerations, as the API and the timeline spell them.
#include "supervisor/store/job_store.hpp"

namespace cuzk::sup {

const char* to_string(Priority p) {
  switch (p) {
    case Priority::Critical: return "critical";
    case Priority::High: return "high";
    case Priority::Normal: return "normal";
    case Priority::Low: return "low";
  }
  return "normal";
}

std::optional<Priority> parse_priority(const std::string& s) {
  for (Priority p : {Priority::Critical, Priority::High, Priority::Normal, Priority::Low})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

#define CUZK_STATE_NAME(e, name) name,
const char* to_string(PState s) {
  static constexpr const char* n[] = {CUZK_PARTITION_STATES(CUZK_STATE_NAME)};
  return size_t(s) < kPStates ? n[size_t(s)] : "unknown";
}
const char* to_string(JState s) {
  static constexpr const char* n[] = {CUZK_JOB_STATES(CUZK_STATE_NAME)};
  return size_t(s) < kJStates ? n[size_t(s)] : "unknown";
}
#undef CUZK_STATE_NAME
const char* to_string(InputKind k) { return k == InputKind::Inputs ? "inputs" : "witnesses"; }
const char* file_extension(InputKind k) { return k == InputKind::Inputs ? ".json" : ".wtns"; }

}  // namespace cuzk::sup
