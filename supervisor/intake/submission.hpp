// POST /v1/proofs checked before anything is stored: first the request's fields, then each
// partition's input (a .wtns header or circuit inputs against the generator's manifest), reading
// only files inside daemon.input_dirs. Kept apart from the supervisor so that it can be tested
// without a daemon.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "groth16/formats.hpp"
#include "supervisor/intake/input_access.hpp"
#include "supervisor/store/job_store.hpp"
#include "supervisor/intake/upload_stream.hpp"
#include "witness/manifest.hpp"

namespace cuzk::sup {

// A job id as it appears in /v1/proofs/{id}: decimal digits only, no sign, no leading zero, no
// whitespace, within 64 bits and not 0. Anything else names no job (404), so that no spelling other
// than the canonical one reaches a job.
std::optional<uint64_t> parse_job_id(const std::string& text);

struct SubmitRequest {
  uint32_t circuit = 0;  // index in config.circuits
  Priority priority = Priority::Normal;
  std::string request_id;       // as the client gave it; the supervisor scopes it (request_key.hpp)
  std::string request_digest;   // set by the supervisor once the inputs are checked
  InputKind kind = InputKind::Witnesses;
  nlohmann::json entries;  // the "witnesses" or "inputs" array, one entry per partition
};

// One partition's input, checked: content the daemon stores (an uploaded .wtns, inline inputs
// written out as JSON, the bytes of a client's inputs file once read_inputs_file has read them),
// a client's file opened at submission (a .wtns is copied when the job is stored, an inputs file
// read and checked by read_inputs_file: its path is never opened again), or an upload already in
// the job's upload folder.
struct PreparedInput {
  std::string path;     // an upload already written to the job's upload folder (stored), else empty
  std::string content;  // bytes to store
  std::shared_ptr<const InputFile> source;  // a client's file to copy, when set
  // With source: a client's inputs file, within limits.max_input_bytes but not read yet; its bytes
  // are checked against these signals by read_inputs_file.
  std::shared_ptr<const witness::Manifest> signals;
  std::string field;    // "witnesses[2]": names the entry in messages
  std::string ext;      // ".wtns" or ".json": the stored file's extension
  bool stored = false;  // path is an upload already written to the job's upload folder
};

// Reads the client's inputs file of p (p.signals set), checks it as JSON circuit inputs against
// p.signals and keeps its bytes as p.content, then lets go of the file. Throws SubmitError(400)
// naming the entry and the file. Touches neither the configuration nor the validator, so that it
// runs on the thread pool: a large file would hold the event loop for seconds.
void read_inputs_file(PreparedInput& p);

class SubmitValidator {
 public:
  // keys: each circuit's zkey header (nVars, curve); generators: the opened witness generator per circuit
  // (nullopt without witness_generator). Both are indexed like cfg.circuits; cfg and generators
  // must outlive the validator.
  SubmitValidator(const config::Config& cfg, std::vector<ZKeyHeader> keys,
                  const std::vector<std::optional<witness::Manifest>>& generators);

  // The request's fields; throws SubmitError(400) naming the field, or SubmitError(403) for a
  // priority above `highest`, what this client may ask for (highest_priority). Touches no file.
  SubmitRequest parse(const std::string& body, Priority highest) const;
  // Every partition's input, in order; throws SubmitError naming the entry ("inputs[1]: ...").
  // A client's inputs file is opened and its size checked (413 over limits.max_input_bytes), but
  // read later, by read_inputs_file.
  // reader: the client, whose own permissions decide which files it may name. streamed: the
  // uploads of a spooled body (stream_uploads), whose base64 values the request's JSON names by
  // index.
  std::vector<PreparedInput> prepare(const SubmitRequest& req, const FileReader& reader,
                                     const StreamedBody* streamed = nullptr) const;

 private:
  PreparedInput witness_entry(const nlohmann::json& e, const std::string& field, uint32_t circuit,
                              const FileReader& reader, const StreamedBody* streamed) const;
  PreparedInput inputs_entry(const nlohmann::json& e, const std::string& field, uint32_t circuit,
                             const FileReader& reader) const;

  const config::Config& cfg_;
  std::vector<ZKeyHeader> keys_;
  const std::vector<std::optional<witness::Manifest>>& generators_;
  InputAccess access_;
};

}  // namespace cuzk::sup
