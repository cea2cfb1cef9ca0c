// A POST /v1/proofs body that was spooled to a file (a large upload) is read here in pieces, off the
// event loop: every base64 witness in it is decoded straight into a .wtns file of the job's upload
// folder and its header checked, and what remains of the body (without the base64 text) is small
// enough for the ordinary checks of SubmitValidator. The supervisor's memory therefore does not grow
// with the size of the witnesses.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/intake/wtns_header.hpp"

namespace cuzk::sup {

// One "base64" value of a "witnesses" entry, decoded.
struct StreamedWitness {
  std::string path;             // the decoded bytes, inside the upload folder
  bool valid_base64 = false;    // the text was base64 (RFC 4648 with padding; whitespace ignored)
  std::optional<WtnsInfo> info;  // the .wtns header, when valid_base64 and the file is a usable .wtns
  std::string problem;          // otherwise why not (WtnsHeaderError's text, quoting nothing)
  uint64_t digest = 0;          // of the decoded bytes (request_key.hpp's digest_bytes)
};

struct StreamedBody {
  // The body with the k-th such base64 string replaced by the string "k" (its index in witnesses).
  std::string json;
  std::vector<StreamedWitness> witnesses;
};

// Reads the body at body_path and writes each {"base64": ...} entry of the top-level "witnesses"
// array to <dir>/upload-<k>.wtns (dir is created with the first). Throws SubmitError: 413 when the rest of the
// body exceeds max_json bytes, 400 with more than max_witnesses such entries; StateWriteFailed when the
// disk is full; std::runtime_error on another I/O error. The caller removes dir on any failure.
// Touches nothing but its arguments, so it runs on any thread.
StreamedBody stream_uploads(const std::string& body_path, const std::string& dir, uint64_t max_json,
                            size_t max_witnesses);

// Strict base64 (RFC 4648, padding required, ASCII whitespace ignored), fed in pieces.
class Base64Decoder {
 public:
  // Appends the decoded bytes of `c` to out; false (and stays false) once the text is not base64.
  bool put(char c, std::string& out);
  // The text has ended: true when it was complete base64.
  bool finish() const { return ok_ && n_ == 0; }
  bool ok() const { return ok_; }

 private:
  uint32_t acc_ = 0;  // sextets of the current group
  int n_ = 0;         // how many of the group are in
  int pad_ = 0;       // '=' seen
  bool ok_ = true;
};

}  // namespace cuzk::sup
