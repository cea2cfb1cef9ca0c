// The JSON body of POST /v1/proofs through the submission checks (SubmitValidator::parse and
// prepare): fields, witnesses by path or as base64 uploads (their .wtns headers), inline and file
// circuit inputs. Invariants in api_env.hpp: refusals are SubmitErrors with a 4xx status, and an
// accepted submission is one a worker can use.
#include "fuzz/api_env.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const cuzk::fuzz::ApiEnv env;
  env.submit(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
