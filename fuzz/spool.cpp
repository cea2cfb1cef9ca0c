// A POST /v1/proofs body as the daemon takes it when it was spooled to a file: its base64 witnesses
// decoded by stream_uploads (the JSON scanner that finds them, the streaming base64 decoder, the
// .wtns header check), then the rest through SubmitValidator. Invariant (api_env.hpp): the same
// outcome as the body checked in memory, the same refusal or partitions with the same bytes.
#include "fuzz/api_env.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const cuzk::fuzz::ApiEnv env;
  env.compare_streamed(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
