// Running a witness generator. The generated code runs in its own process (the artefact's
// `generator --serve`), which forks once more for every witness: a failed assert, a segfault or an
// endless loop in circom's code is contained there and reported, never crashing the caller.
#pragma once
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "witness/manifest.hpp"

namespace cuzk::witness {

struct GenResult {
  enum Kind {
    Ok,
    Assert,     // the circuit rejected the inputs (a failed assert or constraint); message names it
    Crashed,    // the generated code died (signal or exit status); message says how, with its output tail
    Timeout,    // ran past the time limit; the generator was killed
    Cancelled,  // cancelled() turned true; the generator was killed
  } kind = Ok;
  std::string message;
  double ms = 0;
};

class Generator {
 public:
  explicit Generator(Manifest m);
  ~Generator();
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  const Manifest& manifest() const { return m_; }

  // Computes the witness for `inputs` (m.n_inputs values, signal order) and writes its n_witness
  // values, normal form, 32 bytes each, into the file `dest` at byte `offset` (a .wtns being written,
  // or a shared-memory slot under /dev/shm). Starts the generator process when none runs.
  // cancelled is polled every few milliseconds; timeout_ms = 0 means no limit.
  GenResult compute(const std::vector<Value>& inputs, const std::string& dest, uint64_t offset,
                    uint32_t timeout_ms = 0, const std::function<bool()>& cancelled = {});

 private:
  void start();
  void stop();
  Manifest m_;
  pid_t pid_ = -1;
  int fd_ = -1;  // request/reply socket
};

// The header of a .wtns file for m's witness (snarkjs's layout, byte for byte); the values follow it.
std::string wtns_header(const Manifest& m);

}  // namespace cuzk::witness
