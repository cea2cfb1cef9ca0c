// Submission checks: field syntax, then each partition's witness or inputs. Messages name the field
// ("witnesses[2]", "inputs[1]") so that a client can find the entry; errors about a file's content
// describe what is wrong without quoting it.
#include "supervisor/intake/submission.hpp"

#include <algorithm>
#include <cctype>

#include "supervisor/intake/upload_stream.hpp"
#include "supervisor/intake/wtns_header.hpp"
#include "witness/inputs.hpp"

namespace cuzk::sup {

std::optional<uint64_t> parse_job_id(const std::string& text) {
  if (text.empty() || text.size() > 20 || text[0] == '0') return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = uint64_t(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}


using nlohmann::json;

namespace {

// Strict base64 (RFC 4648, padding required, whitespace ignored), as a spooled body's witnesses
// are decoded; nullopt when malformed.
std::optional<std::string> decode_base64(const std::string& in) {
  Base64Decoder d;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (char c : in)
    if (!d.put(c, out)) return std::nullopt;
  if (!d.finish()) return std::nullopt;
  return out;
}

[[noreturn]] void bad(const std::string& m) { throw SubmitError(400, m); }

// The one string member `key` of an object that has no other member, or nullopt.
std::optional<std::string> sole_string(const json& e, const char* key) {
  if (!e.is_object() || e.size() != 1 || !e.contains(key) || !e[key].is_string()) return std::nullopt;
  return e[key].get<std::string>();
}

// Circuit inputs against the generator's manifest; the library's message names the signal.
void check_inputs(const json& in, const witness::Manifest& m, const std::string& prefix) {
  try {
    witness::parse_inputs(in, m);
  } catch (const witness::InputError& e) {
    bad(prefix + ": " + e.what());
  } catch (const json::exception& e) {
    bad(prefix + ": " + e.what());
  }
}

}  // namespace

SubmitValidator::SubmitValidator(const config::Config& cfg, std::vector<ZKeyHeader> keys,
                                 const std::vector<std::optional<witness::Manifest>>& generators)
    : cfg_(cfg), keys_(std::move(keys)), generators_(generators), access_(cfg.daemon.input_dirs) {}

SubmitRequest SubmitValidator::parse(const std::string& text, Priority highest) const {
  json body;
  try {
    body = json::parse(text);
  } catch (const std::exception& e) {
    bad(std::string("body is not JSON: ") + e.what());
  }
  if (!body.is_object()) bad("body must be a JSON object");
  for (auto& [k, v] : body.items())
    if (k != "circuit" && k != "witnesses" && k != "inputs" && k != "priority" && k != "request_id")
      bad(k + ": unknown field (expected circuit, witnesses or inputs, priority, request_id)");
  if (!body.contains("circuit") || !body["circuit"].is_string()) bad("circuit: required string");
  const std::string name = body["circuit"];
  const config::CircuitConfig* cc = cfg_.find_circuit(name);
  if (!cc) {
    std::string names;
    for (auto& c : cfg_.circuits)
      if (!c.removed) names += (names.empty() ? "" : ", ") + c.name;
    bad("circuit: unknown circuit '" + name + "' (configured: " + names + ")");
  }
  SubmitRequest r;
  r.circuit = uint32_t(cc - cfg_.circuits.data());
  if (body.contains("priority")) {
    auto p = body["priority"].is_string() ? parse_priority(body["priority"]) : std::nullopt;
    if (!p) bad("priority: must be one of critical, high, normal, low");
    r.priority = *p;
    if (r.priority < highest)  // Critical is 0: a smaller value goes first
      throw SubmitError(403, std::string("priority: '") + to_string(r.priority) +
                                 "' is for operators; other clients may ask for at most '" + to_string(highest) +
                                 "' (daemon.max_client_priority)");
  }
  if (body.contains("request_id")) {
    const json& id = body["request_id"];
    if (!id.is_string() || id.get<std::string>().empty() || id.get<std::string>().size() > 128)
      bad("request_id: must be a string of 1 to 128 characters");
    r.request_id = id;
  }
  const bool w = body.contains("witnesses"), in = body.contains("inputs");
  if (w && in) bad("witnesses, inputs: give one of them, not both");
  if (!w && !in) bad("witnesses or inputs: one of them is required (an array with one entry per partition)");
  r.kind = in ? InputKind::Inputs : InputKind::Witnesses;
  const std::string field = to_string(r.kind);
  r.entries = std::move(body[field]);
  if (!r.entries.is_array() || r.entries.empty()) bad(field + ": must be a non-empty array (one entry per partition)");
  if (r.entries.size() > cc->max_partitions)
    bad(field + ": " + std::to_string(r.entries.size()) + " partitions, circuit " + name +
        " allows max_partitions=" + std::to_string(cc->max_partitions));
  if (in && !generators_.at(r.circuit))
    bad("inputs: circuit '" + name + "' has no witness generator (circuits[" + std::to_string(r.circuit) +
        "].witness_generator is not set); submit witnesses instead");
  return r;
}

std::vector<PreparedInput> SubmitValidator::prepare(const SubmitRequest& req, const FileReader& reader,
                                                    const StreamedBody* streamed) const {
  std::vector<PreparedInput> out;
  out.reserve(req.entries.size());
  const std::string name = to_string(req.kind);
  for (size_t i = 0; i < req.entries.size(); i++) {
    const std::string field = name + "[" + std::to_string(i) + "]";
    out.push_back(req.kind == InputKind::Inputs ? inputs_entry(req.entries[i], field, req.circuit, reader)
                                                : witness_entry(req.entries[i], field, req.circuit, reader, streamed));
    out.back().field = field;
  }
  return out;
}

PreparedInput SubmitValidator::witness_entry(const json& e, const std::string& field, uint32_t circuit,
                                             const FileReader& reader, const StreamedBody* streamed) const {
  PreparedInput p;
  WtnsInfo info{};
  std::string where;  // names the witness in messages
  try {
    if (auto b64 = streamed ? sole_string(e, "base64") : std::nullopt) {
      // Decoded and its header read already; the JSON holds its index.
      const std::optional<uint64_t> k = *b64 == "0" ? std::optional<uint64_t>(0) : parse_job_id(*b64);
      if (!k || *k >= streamed->witnesses.size() || !streamed->witnesses[*k].valid_base64)
        bad(field + ".base64: not valid base64");
      const StreamedWitness& w = streamed->witnesses[*k];
      where = field + " (uploaded)";
      if (!w.info) throw WtnsHeaderError(w.problem);
      info = *w.info;
      p.path = w.path;
      p.stored = true;
    } else if (auto b64 = sole_string(e, "base64")) {
      auto bytes = decode_base64(*b64);
      if (!bytes) bad(field + ".base64: not valid base64");
      p.content = std::move(*bytes);
      p.ext = ".wtns";
      where = field + " (uploaded)";
      info = wtns_info(p.content);
    } else {
      auto path = e.is_string() ? std::optional<std::string>(e.get<std::string>()) : sole_string(e, "path");
      if (!path) bad(field + ": must be a path string, {\"path\": ...} or {\"base64\": ...}");
      auto f = std::make_shared<const InputFile>(access_.open(*path, field, reader));
      where = field + ": " + f->path();
      info = wtns_info(f->size(), [&](uint64_t off, void* buf, size_t len) { return f->read_at(off, buf, len); });
      p.source = std::move(f);
      p.ext = ".wtns";
    }
  } catch (const WtnsHeaderError& err) {
    bad(where + ": " + err.what());
  }
  const ZKeyHeader& key = keys_.at(circuit);
  if (info.curve != key.curve)
    bad(where + ": is a " + curve_display_name(info.curve) + " (" + curve_snarkjs_name(info.curve) +
        ") witness but circuit " + cfg_.circuits[circuit].name + " is " + curve_display_name(key.curve) + " (" +
        curve_snarkjs_name(key.curve) + ")");
  if (info.count != key.n_vars)
    bad(where + ": has " + std::to_string(info.count) + " values, circuit " + cfg_.circuits[circuit].name +
        " expects nVars=" + std::to_string(key.n_vars) + " (a witness of another circuit?)");
  return p;
}

PreparedInput SubmitValidator::inputs_entry(const json& e, const std::string& field, uint32_t circuit,
                                            const FileReader& reader) const {
  const witness::Manifest& m = *generators_.at(circuit);
  if (!e.is_object()) bad(field + ": must be an object of input signals, or {\"path\": \"/abs/inputs.json\"}");
  PreparedInput p;
  p.ext = ".json";
  // {"path": ...} names a file, unless the circuit has an input signal called "path".
  if (!e.contains("path") || m.find("path")) {
    check_inputs(e, m, field);
    p.content = e.dump();
    return p;
  }
  auto path = sole_string(e, "path");
  if (!path)
    bad(field + ": {\"path\": ...} takes one string and no other keys (circuit " + cfg_.circuits[circuit].name +
        " has no input signal named 'path')");
  auto f = std::make_shared<const InputFile>(access_.open(*path, field, reader));
  const uint64_t limit = cfg_.limits.max_input_bytes;
  if (f->size() > limit)
    throw SubmitError(413, field + ": " + f->path() + " is " + std::to_string(f->size()) +
                               " bytes, larger than limits.max_input_bytes (" + std::to_string(limit) + " bytes)");
  // Read and parsed by read_inputs_file, off the event loop; the worker reads the daemon's copy.
  p.source = std::move(f);
  p.signals = std::make_shared<const witness::Manifest>(m);
  return p;
}

void read_inputs_file(PreparedInput& p) {
  const std::string where = p.field + ": " + p.source->path();
  p.content = p.source->read_all(p.source->size(), p.field);
  json in;
  try {
    in = json::parse(p.content);
  } catch (const json::parse_error& err) {
    // The parser's own message quotes the text around the error: only its position is given.
    bad(where + ": is not valid JSON (syntax error at byte " + std::to_string(err.byte) + ")");
  } catch (const json::out_of_range&) {  // 1e400: its message would quote the number
    bad(where + ": has a number out of range (give large values as decimal strings)");
  }
  if (!in.is_object()) bad(where + ": is not a JSON object of input signals");
  check_inputs(in, *p.signals, where);
  p.source.reset();
  p.signals.reset();
}

}  // namespace cuzk::sup
