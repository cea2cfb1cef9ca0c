// A daemon's submission checks without a daemon, for the http and submit targets: two circuits
// ("w": witnesses only, nVars 4; "g": with a generator whose manifest has scalar, array and bus
// inputs plus one named "path"), daemon.input_dirs = one scratch folder holding a good and a bad
// witness and a good and a bad inputs file. Also the invariants that an accepted submission
// must meet.
#pragma once
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "fuzz/fuzz_util.hpp"
#include "groth16/formats.hpp"
#include "shm/messages.hpp"
#include "supervisor/intake/submission.hpp"
#include "supervisor/intake/upload_stream.hpp"
#include "supervisor/intake/wtns_header.hpp"
#include "witness/inputs.hpp"

namespace cuzk::fuzz {

struct ApiEnv {
  config::Config cfg;
  std::vector<std::optional<witness::Manifest>> generators;
  std::unique_ptr<sup::SubmitValidator> validator;
  // Submissions as root or the daemon's own user would send them: every file the fuzzer names is readable.
  const sup::FileReader operator_{sup::FileReader::Operator};

  ApiEnv() {
    namespace fs = std::filesystem;
    // A fixed folder, so that seeds can name its files; every process writes the same content,
    // each file by rename.
    const std::string in = (fs::temp_directory_path() / "cuzk-fuzz-inputs").string();
    fs::create_directories(in);
    using Fr = bls12_381::Fr;
    std::vector<Fr> w(4, Fr::from_u64(7));
    w[0] = Fr::one();
    bls12_381::write_wtns(in + "/good.wtns", w);
    bn254::write_wtns(in + "/bn254.wtns", std::vector<bn254::Fr>(4, bn254::Fr::one()));
    w.push_back(Fr::one());
    bls12_381::write_wtns(in + "/five.wtns", w);
    auto text = [&](const std::string& name, const std::string& body) {
      const std::string tmp = scratch_dir() + "/" + name;
      std::ofstream(tmp) << body;
      fs::rename(tmp, in + "/" + name);
    };
    text("in.json", R"({"a": "1", "v": ["2", "0x3", "-1"], "bus": {"x": 5}, "path": "7"})");
    text("bad.json", R"({"a": [1, 2]})");
    cfg.daemon.input_dirs = {fs::canonical(in).string()};
    cfg.limits.max_upload_bytes = 1 << 20;
    config::CircuitConfig c1, c2;
    c1.name = "w", c1.max_partitions = 4;
    c2.name = "g", c2.max_partitions = 4;
    cfg.circuits = {c1, c2};
    witness::Manifest m;
    m.dir = "/nonexistent";
    m.circuit = "g";
    m.prime = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull, 0x73eda753299d7d48ull};
    m.n_witness = 4;
    m.n_inputs = 6;
    m.names_known = true;
    m.inputs = {{"a", witness::fnv1a("a"), 0, 1},
                {"v", witness::fnv1a("v"), 1, 3},
                {"bus.x", witness::fnv1a("bus.x"), 4, 1},
                {"path", witness::fnv1a("path"), 5, 1}};
    generators = {std::nullopt, m};
    validator = std::make_unique<sup::SubmitValidator>(
        cfg, std::vector<ZKeyHeader>{{4, 1, 8, 0, CurveId::bls12_381}, {4, 1, 8, 0, CurveId::bn254}}, generators);
  }

  // Runs the submission checks on a request body. Refusals must be SubmitErrors with a client
  // status; whatever is accepted must be what a worker can use.
  void submit(const std::string& body) const {
    sup::SubmitRequest r;
    std::vector<sup::PreparedInput> prepared;
    try {
      r = validator->parse(body, sup::Priority::High);
      prepared = validator->prepare(r, operator_);
    } catch (const sup::SubmitError& e) {
      FUZZ_CHECK(e.status >= 400 && e.status < 500, "a refusal that is not a client error");
      return;
    }
    FUZZ_CHECK(r.circuit < cfg.circuits.size(), "circuit index");
    FUZZ_CHECK(!prepared.empty() && prepared.size() <= cfg.circuits[r.circuit].max_partitions, "partition count");
    for (const sup::PreparedInput& p : prepared) {
      FUZZ_CHECK(int(!p.path.empty()) + int(!p.content.empty()) + int(bool(p.source)) == 1,
                 "a partition with not exactly one of an upload path, content and an opened file");
      FUZZ_CHECK(p.path.empty() || p.stored, "a client's path kept instead of its opened file");
      if (p.source)
        FUZZ_CHECK(p.source->path().rfind(cfg.daemon.input_dirs[0] + "/", 0) == 0, "a file outside daemon.input_dirs");
      if (r.kind == sup::InputKind::Witnesses && !p.content.empty()) {
        // An uploaded witness: its header must pass the same check again, with the circuit's nVars
        // and curve.
        FUZZ_CHECK(p.ext == ".wtns", "uploaded witness extension");
        sup::WtnsInfo info = sup::wtns_info(p.content);
        FUZZ_CHECK(info.count == 4, "an uploaded witness of the wrong size was accepted");
        FUZZ_CHECK(info.curve == (r.circuit == 0 ? CurveId::bls12_381 : CurveId::bn254),
                   "an uploaded witness of the other curve was accepted");
      }
      if (r.kind == sup::InputKind::Inputs && !p.content.empty()) {
        // Inline inputs are stored as JSON that the worker parses again: it must still be valid.
        FUZZ_CHECK(p.ext == ".json", "inline inputs extension");
        const auto values = witness::parse_inputs(nlohmann::json::parse(p.content), *generators[r.circuit]);
        FUZZ_CHECK(values.size() == 6, "inputs of the wrong count");
      }
    }
  }

  // The body as the daemon takes it when it was spooled (its base64 witnesses decoded from a file
  // by stream_uploads, the rest checked after) must end as it does in memory: the same refusal
  // (a JSON syntax error may name another position), or partitions with the same bytes.
  void compare_streamed(const std::string& body) const {
    struct Outcome {
      int status = 0;
      std::string message;
      std::vector<std::string> parts;
    };
    auto read = [](const std::string& path) {
      std::ifstream f(path, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(f), {});
    };
    auto run = [&](bool streamed) {
      Outcome o;
      const std::string file = scratch_dir() + "/body", dir = scratch_dir() + "/up";
      std::filesystem::remove_all(dir);
      try {
        std::vector<sup::PreparedInput> prepared;
        if (streamed) {
          std::ofstream(file, std::ios::binary) << body;
          const sup::StreamedBody sb = sup::stream_uploads(file, dir, 1 << 20, 4);
          prepared = validator->prepare(validator->parse(sb.json, sup::Priority::High), operator_, &sb);
        } else {
          prepared = validator->prepare(validator->parse(body, sup::Priority::High), operator_);
        }
        for (const auto& p : prepared)
          o.parts.push_back(p.stored ? read(p.path) : p.source ? p.source->path() : p.content);
      } catch (const sup::SubmitError& e) {
        o.status = e.status, o.message = e.what();
      }
      return o;
    };
    const Outcome mem = run(false), str = run(true);
    FUZZ_CHECK(mem.status == str.status, "spooled and in-memory bodies answered with different statuses");
    // Two refusals differ in their text: a JSON syntax error's position is in the shorter text, and
    // more uploads than any circuit takes are refused before the circuit is looked at.
    if (mem.message.rfind("body is not JSON", 0) != 0 && str.message.find("uploaded entries") == std::string::npos)
      FUZZ_CHECK(mem.message == str.message, "spooled and in-memory bodies refused with different messages");
    FUZZ_CHECK(mem.parts == str.parts, "spooled and in-memory bodies accepted with different partitions");
  }
};

}  // namespace cuzk::fuzz
