// POST /v1/proofs validation without a daemon: the request's fields, witnesses and circuit inputs
// (against an in-memory generator manifest), the daemon.input_dirs rules for paths, the bounded
// .wtns header check, and the job store's migration from the schema before input kinds.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "groth16/formats.hpp"
#include "common/log_escape.hpp"
#include "supervisor/admission.hpp"
#include "supervisor/intake/input_access.hpp"
#include "supervisor/intake/job_access.hpp"
#include "supervisor/intake/request_key.hpp"
#include "supervisor/store/sqlite_store.hpp"
#include "supervisor/intake/submission.hpp"
#include "supervisor/timeline.hpp"
#include "supervisor/intake/upload_stream.hpp"
#include "supervisor/intake/wtns_header.hpp"
#include "supervisor/queue.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;
using namespace cuzk::sup;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Stands for /etc/shadow: a file the daemon can read and its clients must never see a byte of.
const std::string kSecret = "root:$6$s3cretsalt$hash:19000:0:99999:7:::\n";

void write_file(const fs::path& p, const std::string& body) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << body;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// The bytes a prepared input stands for: a client's file opened at submission, an upload already
// stored, or content.
std::string bytes_of(const PreparedInput& p) {
  if (p.source) return p.source->read_all(UINT64_MAX, p.field);
  return p.path.empty() ? p.content : slurp(p.path);
}

// base64 by hand: the tests must not share the daemon's decoders.
std::string to_base64(const std::string& bytes) {
  std::string b64;
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = uint32_t(uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) n |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) n |= uint8_t(bytes[i + 2]);
    b64 += t[n >> 18];
    b64 += t[(n >> 12) & 63];
    b64 += i + 1 < bytes.size() ? t[(n >> 6) & 63] : '=';
    b64 += i + 2 < bytes.size() ? t[n & 63] : '=';
  }
  return b64;
}

// A witness of n values (w[0] = 1), as snarkjs writes it.
void write_witness(const fs::path& p, size_t n) {
  std::vector<Fr> w(n, Fr::from_u64(7));
  w[0] = Fr::one();
  write_wtns(p.string(), w);
}

witness::Manifest test_manifest() {
  witness::Manifest m;
  m.dir = "/nonexistent/artefact";
  m.circuit = "gen";
  m.prime = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull, 0x73eda753299d7d48ull};  // BLS12-381 r
  m.n_witness = 9;
  m.n_inputs = 5;
  m.names_known = true;
  m.inputs = {{"alpha", witness::fnv1a("alpha"), 0, 1}, {"vec", witness::fnv1a("vec"), 1, 4}};
  return m;
}

struct Api : ::testing::Test {
  fs::path root, in, out;
  config::Config cfg;
  std::vector<std::optional<witness::Manifest>> gens;
  std::unique_ptr<SubmitValidator> v;
  FileReader reader{FileReader::Operator};  // who submits: root or the daemon's user unless a test says

  void SetUp() override {
    char tmpl[] = "/tmp/cuzk_api_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root = fs::canonical(tmpl);
    in = root / "in";
    out = root / "out";
    fs::create_directories(in / "dir");
    fs::create_directories(out);
    write_witness(in / "ok.wtns", 5);
    write_witness(in / "gen.wtns", 9);
    write_witness(out / "ok.wtns", 5);
    write_file(out / "shadow", kSecret);
    write_file(in / "shadow_copy", kSecret);
    fs::create_symlink(out / "shadow", in / "link_out");
    fs::create_symlink(in / "ok.wtns", in / "link_in.wtns");
    ASSERT_EQ(::mkfifo((in / "fifo").c_str(), 0600), 0);
    write_file(in / "inputs.json", R"({"alpha": 3, "vec": [1, 2, 3, 4]})");
    write_file(in / "bad_inputs.json", R"({"alpha": 3, "vec": [1, 2, 3]})");
    write_file(in / "array.json", "[1, 2]");

    config::CircuitConfig plain;
    plain.name = "plain";
    plain.max_partitions = 2;
    config::CircuitConfig gen;
    gen.name = "gen";
    gen.witness_generator = "/nonexistent/gen_cpp";
    cfg.circuits = {plain, gen};
    cfg.daemon.input_dirs = {in.string()};
    gens = {std::nullopt, test_manifest()};
    make_validator();
  }
  void TearDown() override { fs::remove_all(root); }
  void make_validator() {
    std::vector<ZKeyHeader> keys = {{5, 1, 8, 0, CurveId::bls12_381}, {9, 1, 16, 0, CurveId::bls12_381}};
    v = std::make_unique<SubmitValidator>(cfg, keys, gens);
  }

  // As the daemon does: the inputs files are read (on the thread pool) after prepare.
  std::vector<PreparedInput> submit(const json& body) {
    std::vector<PreparedInput> p = v->prepare(v->parse(body.dump(), Priority::Critical), reader);
    for (PreparedInput& in : p)
      if (in.signals) read_inputs_file(in);
    return p;
  }
  // The refusal of body: its status and message.
  std::pair<int, std::string> refusal(const json& body) {
    try {
      submit(body);
    } catch (const SubmitError& e) {
      return {e.status, e.what()};
    }
    ADD_FAILURE() << "accepted: " << body.dump();
    return {0, ""};
  }
  // Bodies for the circuit without a generator ("plain") and the one with ("gen").
  json witnesses(std::vector<json> ws) { return witnesses_raw(json(std::move(ws))); }
  json inputs(std::vector<json> is) { return inputs_raw(json(std::move(is))); }
  json witnesses_raw(json ws) { return json{{"circuit", "plain"}, {"witnesses", std::move(ws)}}; }
  json inputs_raw(json is) { return json{{"circuit", "gen"}, {"inputs", std::move(is)}}; }
};

#define EXPECT_REFUSED(body, status_, substr)                                                   \
  do {                                                                                          \
    auto [st_, msg_] = refusal(body);                                                           \
    EXPECT_EQ(st_, status_) << msg_;                                                            \
    EXPECT_NE(msg_.find(substr), std::string::npos) << "message: " << msg_ << "\nwant: " << substr; \
  } while (0)

// No refusal may carry any part of the secret file.
#define EXPECT_NO_ECHO(body)                                                        \
  do {                                                                              \
    auto [st_, msg_] = refusal(body);                                               \
    EXPECT_EQ(msg_.find("root"), std::string::npos) << msg_;                        \
    EXPECT_EQ(msg_.find("s3cret"), std::string::npos) << msg_;                      \
    EXPECT_EQ(msg_.find("19000"), std::string::npos) << msg_;                       \
  } while (0)

}  // namespace

TEST_F(Api, ExactlyOneOfWitnessesAndInputs) {
  EXPECT_REFUSED((json{{"circuit", "gen"}}), 400, "witnesses or inputs: one of them is required");
  json both = inputs({json{{"alpha", 1}, {"vec", json::array({1, 2, 3, 4})}}});
  both["witnesses"] = json::array({(in / "gen.wtns").string()});
  EXPECT_REFUSED(both, 400, "not both");
  EXPECT_REFUSED(witnesses_raw(json::array()), 400, "witnesses: must be a non-empty array");
  EXPECT_REFUSED(inputs_raw(json::array()), 400, "inputs: must be a non-empty array");
  EXPECT_REFUSED(inputs_raw(json::object()), 400, "inputs: must be a non-empty array");
  EXPECT_REFUSED(witnesses_raw("x.wtns"), 400, "witnesses: must be a non-empty array");
}

TEST_F(Api, RequestFieldsAreChecked) {
  const json x = json::array({"/x"});
  EXPECT_REFUSED((json{{"circuit", "plain"}, {"witness", json::array()}}), 400, "witness: unknown field");
  EXPECT_REFUSED((json{{"circuit", "nope"}, {"witnesses", x}}), 400, "unknown circuit 'nope' (configured: plain, gen)");
  EXPECT_REFUSED((json{{"witnesses", x}}), 400, "circuit: required string");
  EXPECT_REFUSED((json{{"circuit", "plain"}, {"witnesses", x}, {"priority", "urgent"}}), 400, "priority");
  EXPECT_REFUSED((json{{"circuit", "plain"}, {"witnesses", x}, {"request_id", ""}}), 400, "request_id");
  EXPECT_REFUSED(json::array(), 400, "body must be a JSON object");
  try {
    v->parse("{oops", Priority::Critical);
    ADD_FAILURE();
  } catch (const SubmitError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_NE(std::string(e.what()).find("not JSON"), std::string::npos);
  }
  // max_partitions counts the entries of either kind.
  const std::string w = (in / "ok.wtns").string();
  EXPECT_REFUSED(witnesses({w, w, w}), 400, "allows max_partitions=2");
  json body = inputs({json::object()});
  body["priority"] = "high";
  body["request_id"] = "r-1";
  SubmitRequest r = v->parse(body.dump(), Priority::Critical);
  EXPECT_EQ(r.circuit, 1u);
  EXPECT_EQ(r.kind, InputKind::Inputs);
  EXPECT_EQ(r.priority, Priority::High);
  EXPECT_EQ(r.request_id, "r-1");
}

// A client that is not an operator may ask for at most daemon.max_client_priority (its highest):
// above it is a 403 naming the field and the key; at or below it the job is taken as asked.
TEST_F(Api, PrioritiesAboveWhatTheClientMayAskForAre403NamingTheField) {
  const json body = witnesses({(in / "ok.wtns").string()});
  auto with = [&](const char* p) {
    json b = body;
    b["priority"] = p;
    return b.dump();
  };
  try {
    v->parse(with("critical"), Priority::High);
    ADD_FAILURE() << "critical accepted from a client whose highest is high";
  } catch (const SubmitError& e) {
    EXPECT_EQ(e.status, 403);
    EXPECT_STREQ(e.what(), "priority: 'critical' is for operators; other clients may ask for at most 'high' "
                           "(daemon.max_client_priority)");
  }
  try {
    v->parse(with("high"), Priority::Normal);
    ADD_FAILURE() << "high accepted from a client whose highest is normal";
  } catch (const SubmitError& e) {
    EXPECT_EQ(e.status, 403);
    EXPECT_NE(std::string(e.what()).find("priority: 'high'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(v->parse(with("high"), Priority::High).priority, Priority::High);
  EXPECT_EQ(v->parse(with("low"), Priority::High).priority, Priority::Low);
  EXPECT_EQ(v->parse(body.dump(), Priority::Normal).priority, Priority::Normal);  // the default
  EXPECT_EQ(v->parse(with("critical"), Priority::Critical).priority, Priority::Critical);
}

TEST_F(Api, InputsNeedAWitnessGenerator) {
  EXPECT_REFUSED((json{{"circuit", "plain"}, {"inputs", json::array({json{{"alpha", 1}}})}}), 400,
                 "circuit 'plain' has no witness generator (circuits[0].witness_generator is not set)");
}

TEST_F(Api, MalformedInputsEntries) {
  EXPECT_REFUSED(inputs({1}), 400, "inputs[0]: must be an object of input signals");
  EXPECT_REFUSED(inputs({"/abs/inputs.json"}), 400, "inputs[0]: must be an object");
  EXPECT_REFUSED(inputs({json::array({1, 2})}), 400, "inputs[0]: must be an object");
  EXPECT_REFUSED(inputs({json{{"path", (in / "inputs.json").string()}, {"alpha", 1}}}), 400,
                 "inputs[0]: {\"path\": ...} takes one string and no other keys");
  EXPECT_REFUSED(inputs({json{{"path", 3}}}), 400, "inputs[0]: {\"path\": ...} takes one string");
  // The second entry is named when the first is fine.
  json good = {{"alpha", 3}, {"vec", json::array({1, 2, 3, 4})}};
  EXPECT_REFUSED(inputs({good, 7}), 400, "inputs[1]: must be an object");
}

TEST_F(Api, InlineInputsAreCheckedSignalBySignal) {
  const json vec = json::array({1, 2, 3, 4});
  json good = {{"alpha", 3}, {"vec", vec}};
  auto p = submit(inputs({good, good}));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].path, "");  // stored by the daemon, like an upload
  EXPECT_EQ(p[1].ext, ".json");
  EXPECT_EQ(json::parse(p[1].content), good);
  // The library names the signal; the partition is named in front of it.
  auto [st1, m1] = refusal(inputs({good, json{{"vec", vec}}}));
  EXPECT_EQ(st1, 400);
  EXPECT_EQ(m1.rfind("inputs[1]: ", 0), 0u) << m1;
  EXPECT_NE(m1.find("alpha"), std::string::npos) << m1;  // missing
  auto [st2, m2] = refusal(inputs({json{{"alpha", 3}, {"vec", json::array({1, 2, 3})}}}));
  EXPECT_EQ(m2.rfind("inputs[0]: ", 0), 0u) << m2;
  EXPECT_NE(m2.find("vec"), std::string::npos) << m2;  // wrong length
  auto [st3, m3] = refusal(inputs({json{{"alpha", 3}, {"vec", vec}, {"bogus_signal", 1}}}));
  EXPECT_EQ(m3.rfind("inputs[0]: ", 0), 0u) << m3;
  EXPECT_NE(m3.find("bogus_signal"), std::string::npos) << m3;  // not an input
  auto [st4, m4] = refusal(inputs({json{{"alpha", "twelve"}, {"vec", vec}}}));
  EXPECT_EQ(m4.rfind("inputs[0]: ", 0), 0u) << m4;
  EXPECT_NE(m4.find("alpha"), std::string::npos) << m4;  // not an integer
}

TEST_F(Api, InputsFilesAreReadInsideInputDirs) {
  auto p = submit(inputs({json{{"path", (in / "inputs.json").string()}}}));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].path, "");  // the bytes are read once and stored: the path is not opened again
  EXPECT_EQ(p[0].content, slurp(in / "inputs.json"));
  EXPECT_EQ(p[0].ext, ".json");
  auto [st, m] = refusal(inputs({json{{"path", (in / "bad_inputs.json").string()}}}));
  EXPECT_EQ(st, 400);
  EXPECT_EQ(m.rfind("inputs[0]: " + (in / "bad_inputs.json").string() + ": ", 0), 0u) << m;
  EXPECT_NE(m.find("vec"), std::string::npos) << m;
  EXPECT_REFUSED(inputs({json{{"path", (in / "array.json").string()}}}), 400, "is not a JSON object of input signals");
  // Not JSON: the position of the error, never the text around it.
  EXPECT_REFUSED(inputs({json{{"path", (in / "shadow_copy").string()}}}), 400, "is not valid JSON (syntax error at byte");
  EXPECT_NO_ECHO(inputs({json{{"path", (in / "shadow_copy").string()}}}));
  // A number too large for a double: refused as a client error, without quoting it (it used to
  // escape as nlohmann's out_of_range, answered 500 with the number in the message).
  write_file(in / "huge.json", R"({"alpha": 1e400123, "vec": [1, 2, 3, 4]})");
  EXPECT_REFUSED(inputs({json{{"path", (in / "huge.json").string()}}}), 400, "has a number out of range");
  EXPECT_EQ(refusal(inputs({json{{"path", (in / "huge.json").string()}}})).second.find("400123"), std::string::npos);
  EXPECT_REFUSED(inputs({json{{"path", (out / "shadow").string()}}}), 403, "outside daemon.input_dirs");
  EXPECT_REFUSED(inputs({json{{"path", (in / "link_out").string()}}}), 403, "resolves outside daemon.input_dirs");
  EXPECT_REFUSED(inputs({json{{"path", (in / "dir").string()}}}), 400, "is a directory");
  EXPECT_REFUSED(inputs({json{{"path", (in / "fifo").string()}}}), 400, "is not a regular file");
  // An inputs file over limits.max_input_bytes is refused before it is read, naming the file.
  const uint64_t size = fs::file_size(in / "inputs.json");
  cfg.limits.max_input_bytes = size - 1;
  make_validator();
  EXPECT_REFUSED(inputs({json{{"path", (in / "inputs.json").string()}}}), 413,
                 "inputs[0]: " + (in / "inputs.json").string() + " is " + std::to_string(size) +
                     " bytes, larger than limits.max_input_bytes (" + std::to_string(size - 1) + " bytes)");
  cfg.limits.max_input_bytes = size;
  make_validator();
  EXPECT_EQ(submit(inputs({json{{"path", (in / "inputs.json").string()}}}))[0].content, slurp(in / "inputs.json"));
}

// prepare only opens an inputs file (the event loop runs it); read_inputs_file reads and checks
// it later, on the thread pool, from the file opened at submission.
TEST_F(Api, InputsFilesAreReadAfterPrepare) {
  auto p = v->prepare(v->parse(inputs({json{{"path", (in / "bad_inputs.json").string()}}}).dump(), Priority::Critical), reader);
  ASSERT_EQ(p.size(), 1u);
  ASSERT_TRUE(p[0].source && p[0].signals);
  EXPECT_EQ(p[0].content, "");
  try {
    read_inputs_file(p[0]);
    ADD_FAILURE() << "accepted";
  } catch (const SubmitError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(std::string(e.what()).rfind("inputs[0]: " + (in / "bad_inputs.json").string() + ": ", 0), 0u) << e.what();
  }
  const std::string original = slurp(in / "inputs.json");
  p = v->prepare(v->parse(inputs({json{{"path", (in / "inputs.json").string()}}}).dump(), Priority::Critical), reader);
  fs::remove(in / "inputs.json");
  write_file(in / "inputs.json", R"({"alpha": 4, "vec": [1, 2, 3, 4]})");
  read_inputs_file(p[0]);
  EXPECT_EQ(p[0].content, original);
  EXPECT_FALSE(p[0].source);
}

TEST_F(Api, WitnessPathsMustResolveInsideInputDirs) {
  auto p = submit(witnesses({(in / "ok.wtns").string(), json{{"path", (in / "link_in.wtns").string()}}}));
  ASSERT_EQ(p.size(), 2u);
  ASSERT_TRUE(p[0].source && p[1].source);
  EXPECT_EQ(p[0].source->path(), (in / "ok.wtns").string());
  EXPECT_EQ(p[1].source->path(), (in / "ok.wtns").string());  // symlinks inside resolve to their target
  EXPECT_EQ(p[0].path, "");  // the daemon keeps the opened file (a copy), never the path
  EXPECT_EQ(bytes_of(p[1]), slurp(in / "ok.wtns"));
  // Outside, by name, through "..", through a symlink inside: 403 naming the rule.
  EXPECT_REFUSED(witnesses({(out / "ok.wtns").string()}), 403, "witnesses[0]: " + (out / "ok.wtns").string() +
                                                                   ": outside daemon.input_dirs");
  EXPECT_REFUSED(witnesses({(in / ".." / "out" / "ok.wtns").string()}), 403, "outside daemon.input_dirs");
  EXPECT_REFUSED(witnesses({(in / "link_out").string()}), 403, "resolves outside daemon.input_dirs");
  EXPECT_REFUSED(witnesses({"/etc/shadow"}), 403, "outside daemon.input_dirs");
  // Whether a file outside exists is not told: a missing one gets the same answer.
  EXPECT_REFUSED(witnesses({(out / "missing.wtns").string()}), 403, "outside daemon.input_dirs");
  EXPECT_NO_ECHO(witnesses({(out / "shadow").string()}));
  EXPECT_NO_ECHO(witnesses({(in / "link_out").string()}));
  // Inside: clear errors, never "no such file" for something that exists.
  EXPECT_REFUSED(witnesses({(in / "dir").string()}), 400, "is a directory");
  EXPECT_REFUSED(witnesses({(in / "fifo").string()}), 400, "is not a regular file");
  EXPECT_REFUSED(witnesses({(in / "missing.wtns").string()}), 400, "no such file");
  EXPECT_REFUSED(witnesses({"ok.wtns"}), 400, "must be an absolute path");
  EXPECT_REFUSED(witnesses({""}), 400, "empty path");
  // A readable file that is not a witness: named as such, without its bytes.
  EXPECT_REFUSED(witnesses({(in / "shadow_copy").string()}), 400, "is not a .wtns file (bad magic)");
  EXPECT_NO_ECHO(witnesses({(in / "shadow_copy").string()}));
  EXPECT_REFUSED(witnesses({json{{"path", (in / "ok.wtns").string()}, {"base64", ""}}}), 400,
                 "must be a path string, {\"path\": ...} or {\"base64\": ...}");
  EXPECT_REFUSED(witnesses({7}), 400, "witnesses[0]: must be a path string");
}

// JSON may carry "\u0000" inside a path; every system call would stop at it and check a shorter
// path than the one stored. Refused with 400 naming the field, with or without input_dirs.
TEST_F(Api, PathsWithANulAreRefusedNamingTheField) {
  const std::string nul_path = (in / "ok.wtns").string() + std::string(1, '\0') + "/../../etc/shadow";
  EXPECT_REFUSED(witnesses({(in / "ok.wtns").string(), nul_path}), 400, "witnesses[1]: the path contains a NUL");
  EXPECT_REFUSED(witnesses({json{{"path", nul_path}}}), 400, "witnesses[0]: the path contains a NUL");
  EXPECT_REFUSED(inputs({json{{"path", (in / "inputs.json").string() + std::string(1, '\0')}}}), 400,
                 "inputs[0]: the path contains a NUL");
  // Parsed from the request's JSON text, as the daemon receives it.
  const std::string body = R"({"circuit": "plain", "witnesses": [")" + (in / "ok.wtns").string() + R"(\u0000x"]})";
  try {
    v->prepare(v->parse(body, Priority::Critical), reader);
    ADD_FAILURE() << "accepted";
  } catch (const SubmitError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_NE(std::string(e.what()).find("witnesses[0]: the path contains a NUL"), std::string::npos) << e.what();
  }
  cfg.daemon.input_dirs.clear();
  make_validator();
  EXPECT_REFUSED(witnesses({nul_path}), 400, "witnesses[0]: the path contains a NUL");
}

// A file is read for a client only if the client could read it itself: the file by its mode bits
// for the client's uid and groups, and every folder above it searchable. A file it may not read
// and one that does not exist are the same 403, which quotes nothing of the file (runs as root to
// give the files other owners).
TEST_F(Api, PathsAreReadOnlyForClientsThatMayReadThem) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files other owners";
  const uint32_t uid = 4242, gid = 4343, group = 4444;
  auto put = [&](const fs::path& p, const std::string& body, uint32_t owner, uint32_t grp, mode_t mode) {
    write_file(p, body);
    ASSERT_EQ(::chown(p.c_str(), owner, grp), 0);
    ASSERT_EQ(::chmod(p.c_str(), mode), 0);
  };
  const std::string wtns = slurp(in / "ok.wtns");
  put(in / "root_only.json", R"({"alpha": "TOPSECRET-abc123", "vec": ["hidden"]})", 0, 0, 0600);
  put(in / "root_only.wtns", wtns, 0, 0, 0600);
  put(in / "mine.wtns", wtns, uid, 0, 0600);
  put(in / "group.wtns", wtns, 0, group, 0640);
  put(in / "world.wtns", wtns, 0, 0, 0644);
  fs::create_directories(in / "closed");
  put(in / "closed" / "world.wtns", wtns, 0, 0, 0644);
  ASSERT_EQ(::chmod((in / "closed").c_str(), 0700), 0);
  // The test's folder (mkdtemp makes it 0700) searchable by others, as /tmp above it is.
  ASSERT_EQ(::chmod(root.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(in.c_str(), 0755), 0);

  reader = FileReader{FileReader::User, uid, gid, {}};
  auto denied = [&](const std::string& name) {
    return "witnesses[0]: " + (in / name).string() + ": no such file, or one this client may not read";
  };
  EXPECT_REFUSED(witnesses({(in / "root_only.wtns").string()}), 403, denied("root_only.wtns"));
  EXPECT_REFUSED(witnesses({(in / "group.wtns").string()}), 403, denied("group.wtns"));
  EXPECT_REFUSED(witnesses({(in / "closed" / "world.wtns").string()}), 403, denied("closed/world.wtns"));
  EXPECT_REFUSED(witnesses({(in / "missing.wtns").string()}), 403, denied("missing.wtns"));  // same answer
  EXPECT_EQ(bytes_of(submit(witnesses({(in / "mine.wtns").string()}))[0]), wtns);
  EXPECT_EQ(bytes_of(submit(witnesses({(in / "world.wtns").string()}))[0]), wtns);
  // An inputs file it may not read: refused before a byte of it is looked at.
  auto [st, m] = refusal(inputs({json{{"path", (in / "root_only.json").string()}}}));
  EXPECT_EQ(st, 403) << m;
  EXPECT_EQ(m.find("TOPSECRET"), std::string::npos) << m;
  EXPECT_EQ(m.find("hidden"), std::string::npos) << m;
  EXPECT_EQ(m.find("alpha"), std::string::npos) << m;
  // Its groups open the group's files.
  reader.groups = {group};
  EXPECT_EQ(bytes_of(submit(witnesses({(in / "group.wtns").string()}))[0]), wtns);
  // A TCP client (no known user): only what everybody may read.
  reader = FileReader{};
  EXPECT_REFUSED(witnesses({(in / "mine.wtns").string()}), 403, denied("mine.wtns"));
  EXPECT_EQ(bytes_of(submit(witnesses({(in / "world.wtns").string()}))[0]), wtns);
  // root over the socket and operators read as the daemon does.
  reader = FileReader{FileReader::User, 0, 0, {}};
  EXPECT_EQ(bytes_of(submit(witnesses({(in / "closed" / "world.wtns").string()}))[0]), wtns);
}

// The file checked at submission is the one the job uses: once opened, swapping the path for a
// symlink (to a file outside input_dirs) changes nothing of what the daemon copies.
TEST_F(Api, AFileIsOpenedOnceAndCopied) {
  write_witness(out / "other.wtns", 5);
  write_witness(in / "swap.wtns", 5);
  const std::string original = slurp(in / "swap.wtns");
  std::vector<Fr> other(5, Fr::from_u64(9));
  other[0] = Fr::one();
  write_wtns((out / "other.wtns").string(), other);
  auto p = submit(witnesses({(in / "swap.wtns").string()}));
  ASSERT_TRUE(p[0].source);
  fs::remove(in / "swap.wtns");
  fs::create_symlink(out / "other.wtns", in / "swap.wtns");
  p[0].source->copy_to((root / "copy.wtns").string(), p[0].field);
  EXPECT_EQ(slurp(root / "copy.wtns"), original);
  struct stat st {};
  ASSERT_EQ(::stat((root / "copy.wtns").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // A copy never replaces a file already there.
  EXPECT_THROW(p[0].source->copy_to((root / "copy.wtns").string(), p[0].field), std::runtime_error);
  // The swapped path now resolves outside: refused.
  EXPECT_REFUSED(witnesses({(in / "swap.wtns").string()}), 403, "resolves outside daemon.input_dirs");
}

TEST_F(Api, EmptyInputDirsRefusesPathsButTakesContent) {
  cfg.daemon.input_dirs.clear();
  make_validator();
  EXPECT_REFUSED(witnesses({(in / "ok.wtns").string()}), 403, "daemon.input_dirs is empty");
  EXPECT_REFUSED(inputs({json{{"path", (in / "inputs.json").string()}}}), 403, "daemon.input_dirs is empty");
  const std::string bytes = slurp(in / "ok.wtns");
  const std::string b64 = to_base64(bytes);
  auto p = submit(witnesses({json{{"base64", b64}}}));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].content, bytes);
  EXPECT_EQ(p[0].ext, ".wtns");
  auto q = submit(inputs({json{{"alpha", 3}, {"vec", json::array({1, 2, 3, 4})}}}));
  EXPECT_EQ(q.size(), 1u);
  EXPECT_REFUSED(witnesses({json{{"base64", "@@@@"}}}), 400, "witnesses[0].base64: not valid base64");
}

TEST_F(Api, WitnessHeadersAreChecked) {
  EXPECT_REFUSED((json{{"circuit", "gen"}, {"witnesses", json::array({(in / "ok.wtns").string()})}}), 400,
                 "has 5 values, circuit gen expects nVars=9");
  const std::string bytes = slurp(in / "ok.wtns");
  write_file(in / "trunc.wtns", bytes.substr(0, 100));
  EXPECT_REFUSED(witnesses({(in / "trunc.wtns").string()}), 400, "trunc.wtns: is truncated");
  write_file(in / "tail.wtns", bytes + "x");
  EXPECT_REFUSED(witnesses({(in / "tail.wtns").string()}), 400, "has data after its last section");
  std::string v3 = bytes;
  v3[4] = 3;
  write_file(in / "v3.wtns", v3);
  EXPECT_REFUSED(witnesses({(in / "v3.wtns").string()}), 400, "unsupported version");
  std::string bn = bytes;  // the prime: BN254's scalar field (little-endian) at byte 28
  const uint8_t bn254_r[32] = {0x01, 0x00, 0x00, 0xf0, 0x93, 0xf5, 0xe1, 0x43, 0x91, 0x70, 0xb9,
                               0x79, 0x48, 0xe8, 0x33, 0x28, 0x5d, 0x58, 0x81, 0x81, 0xb6, 0x45,
                               0x50, 0xb8, 0x29, 0xa0, 0x31, 0xe1, 0x72, 0x4e, 0x64, 0x30};
  bn.replace(28, 32, reinterpret_cast<const char*>(bn254_r), 32);
  write_file(in / "bn.wtns", bn);
  EXPECT_REFUSED(witnesses({(in / "bn.wtns").string()}), 400, "BN254");
  write_file(in / "empty.wtns", "");
  EXPECT_REFUSED(witnesses({(in / "empty.wtns").string()}), 400, "is not a .wtns file");
  // w[0] is the constant wire: a witness whose first value is not 1 is the client's error at
  // submission, never work for a prover.
  for (const Fr& first : {Fr::from_u64(2), Fr::zero()}) {
    std::vector<Fr> w(5, Fr::from_u64(7));
    w[0] = first;
    write_wtns((in / "w0.wtns").string(), w);
    EXPECT_REFUSED(witnesses({(in / "w0.wtns").string()}), 400,
                   "witnesses[0]: " + (in / "w0.wtns").string() + ": is not a witness: its first value w[0]");
    EXPECT_REFUSED(witnesses({json{{"base64", to_base64(slurp(in / "w0.wtns"))}}}), 400,
                   "witnesses[0] (uploaded): is not a witness: its first value w[0], the constant wire, is not 1");
  }
}

// However large the file, the check reads its 12-byte header, two section headers, the 40-byte
// header section and the first value (w[0] = 1): never the other values.
// Admission, the one set of checks both queues run: a full queue refuses a new job, but a request
// with an id may name a job stored already, which it gets back full or not; the queue checks the
// room only once no stored job answers it.
TEST_F(Api, AdmissionChecksTheRoomWhereNoStoredJobCanAnswer) {
  cfg.limits.max_queued_jobs = 2;
  const Admission one_node(cfg, [this]() -> const SubmitValidator& { return *v; }, "");
  const Client client{"uid:0", reader, Priority::Critical};
  const std::string plain = witnesses({{{"path", (in / "ok.wtns").string()}}}).dump();
  json with_id = json::parse(plain);
  with_id["request_id"] = "r-1";
  try {
    one_node.admit(plain, client, 2);
    ADD_FAILURE() << "a new job was admitted into a full queue";
  } catch (const SubmitError& e) {
    EXPECT_EQ(e.status, 429);
    EXPECT_STREQ(e.what(), "2 jobs are unfinished (limits.max_queued_jobs); retry later");
  }
  EXPECT_EQ(one_node.admit(plain, client, 1).inputs.size(), 1u);
  const Admitted a = one_node.admit(with_id.dump(), client, 2);
  EXPECT_EQ(a.request.request_id, request_key("uid:0", "r-1"));
  EXPECT_FALSE(a.request.request_digest.empty());
  EXPECT_EQ(a.inputs.size(), 1u);
  EXPECT_THROW(one_node.check_room(2), SubmitError);
  EXPECT_NO_THROW(one_node.check_room(1));
  const Admission shared(cfg, [this]() -> const SubmitValidator& { return *v; }, " in the shared queue");
  try {
    shared.check_room(3);
    ADD_FAILURE() << "no refusal";
  } catch (const SubmitError& e) {
    EXPECT_STREQ(e.what(), "3 jobs are unfinished in the shared queue (limits.max_queued_jobs); retry later");
  }
}

TEST(WtnsHeader, ReadsOnlyTheHeader) {
  const uint32_t n = 1u << 26;  // 2 GiB of values that are never read
  std::string head(12 + 12 + 40 + 12 + 32, '\0');
  head[76] = 1;  // w[0]
  std::memcpy(head.data(), "wtns", 4);
  uint32_t u = 2;
  std::memcpy(head.data() + 4, &u, 4);
  std::memcpy(head.data() + 8, &u, 4);
  u = 1;
  std::memcpy(head.data() + 12, &u, 4);
  uint64_t len = 40;
  std::memcpy(head.data() + 16, &len, 8);
  u = 32;
  std::memcpy(head.data() + 24, &u, 4);
  std::memcpy(head.data() + 28, bls12_381::FrParams::MOD, 32);
  std::memcpy(head.data() + 60, &n, 4);
  u = 2;
  std::memcpy(head.data() + 64, &u, 4);
  len = uint64_t(n) * 32;
  std::memcpy(head.data() + 68, &len, 8);
  len -= 32;  // the values after w[0], beyond head
  uint64_t bytes_read = 0, calls = 0;
  uint32_t count = wtns_info(head.size() + len, [&](uint64_t off, void* buf, size_t k) {
                     bytes_read += k, calls++;
                     if (off + k > head.size()) ADD_FAILURE() << "read beyond the headers at " << off;
                     std::memcpy(buf, head.data() + off,
                                 std::min<size_t>(k, head.size() - std::min<size_t>(off, head.size())));
                     return true;
                   }).count;
  EXPECT_EQ(count, n);
  EXPECT_LE(bytes_read, 108u);
  EXPECT_LE(calls, 5u);
}

// A store written by the schema before input kinds (no jobs.input_kind, user_version 0) opens with
// its jobs, which read back as witness jobs; new jobs record their kind.
// The tables of the first schema; jobs' columns end open, for the later versions to add theirs.
const std::string kJobsV0 =
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE partitions(job_id INTEGER NOT NULL, idx INTEGER NOT NULL, witness TEXT NOT NULL,"
    " state INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '',"
    " proof TEXT NOT NULL DEFAULT '', public TEXT NOT NULL DEFAULT '', timings TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY(job_id, idx));"
    "CREATE TABLE jobs(id INTEGER PRIMARY KEY, request_id TEXT UNIQUE, circuit TEXT NOT NULL,"
    " priority INTEGER NOT NULL, state INTEGER NOT NULL, error TEXT NOT NULL DEFAULT '',"
    " created_ms INTEGER NOT NULL, finished_ms INTEGER NOT NULL DEFAULT 0";

// Writes a store with `sql` in a new temporary folder; returns the store's path.
std::string old_store(const std::string& sql) {
  char tmpl[] = "/tmp/cuzk_store_test.XXXXXX";
  EXPECT_NE(mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/jobs.sqlite";
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  return path;
}

TEST(JobStoreMigration, OpensAStoreOfThePreviousSchema) {
  const std::string path = old_store(kJobsV0 + ");"
        "INSERT INTO jobs(id, request_id, circuit, priority, state, created_ms) VALUES(4, 'old-1', 'merkle', 1, 1, 1000);"
        "INSERT INTO partitions(job_id, idx, witness, state) VALUES(4, 0, '/data/p0.wtns', 3);"
        "INSERT INTO partitions(job_id, idx, witness, state, proof) VALUES(4, 1, '/data/p1.wtns', 4, '{}');"
        "INSERT INTO jobs(id, circuit, priority, state, created_ms, finished_ms) VALUES(5, 'merkle', 2, 2, 1, 2);");
  const std::string tmpl = fs::path(path).parent_path().string();
  {
    SqliteStore s(path);
    auto j = s.load(4);
    ASSERT_TRUE(j);
    EXPECT_EQ(j->request_id, "old-1");
    EXPECT_EQ(j->input, InputKind::Witnesses);
    EXPECT_EQ(j->submitter, "");  // unknown: every client may read it, as before
    ASSERT_EQ(j->parts.size(), 2u);
    EXPECT_EQ(j->parts[0].witness, "/data/p0.wtns");
    EXPECT_EQ(j->parts[1].proof, "{}");
    EXPECT_EQ(s.find_request("old-1"), std::optional<uint64_t>(4));
    auto rec = s.recover();  // the running job comes back, its proving partition queued again
    ASSERT_EQ(rec.size(), 1u);
    EXPECT_EQ(rec[0].id, 4u);
    EXPECT_EQ(rec[0].parts[0].state, PState::Queued);
    EXPECT_EQ(s.load(5)->state, JState::Done);
    JobRec n;
    n.circuit = "gen";
    n.input = InputKind::Inputs;
    n.submitter = "unix:1000";
    PartitionRec part;
    part.witness = "/data/in.json";
    n.parts.push_back(part);
    s.insert(n);
    EXPECT_EQ(n.id, 6u);
    EXPECT_EQ(s.load(6)->input, InputKind::Inputs);
  }
  {
    SqliteStore again(path);  // migrated once; reopening changes nothing
    EXPECT_EQ(again.load(6)->input, InputKind::Inputs);
    EXPECT_EQ(again.load(6)->submitter, "unix:1000");
    EXPECT_EQ(again.load(4)->input, InputKind::Witnesses);
    EXPECT_TRUE(again.circuits().empty());  // the runtime circuits' table is there, empty
    EXPECT_TRUE(again.add_circuit({"late", "{}", 1}));
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(st, 0), SqliteStore::kSchemaVersion);
    sqlite3_finalize(st);
    // A store from a newer cuzk is refused rather than misread.
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  try {
    SqliteStore newer(path);
    ADD_FAILURE() << "a store of schema version 99 opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("newer cuzk"), std::string::npos) << e.what();
  }
  fs::remove_all(tmpl);
}

// A store of schema version 1 (input kinds, no submitters) opens with its jobs readable by every
// client, and records the submitter of new ones.
TEST(JobStoreMigration, OpensAStoreOfSchemaVersion1) {
  const std::string path = old_store(kJobsV0 + ", input_kind INTEGER NOT NULL DEFAULT 0);"
        "INSERT INTO jobs(id, circuit, priority, state, created_ms, input_kind) VALUES(3, 'gen', 2, 0, 1, 1);"
        "INSERT INTO partitions(job_id, idx, witness, state) VALUES(3, 0, '/data/in.json', 0);"
        "PRAGMA user_version = 1;");
  const std::string tmpl = fs::path(path).parent_path().string();
  SqliteStore s(path);
  auto j = s.load(3);
  ASSERT_TRUE(j);
  EXPECT_EQ(j->input, InputKind::Inputs);
  EXPECT_EQ(j->submitter, "");
  JobRec n;
  n.circuit = "gen";
  n.submitter = "tcp";
  n.parts.push_back(PartitionRec{});
  s.insert(n);
  EXPECT_EQ(s.load(n.id)->submitter, "tcp");
  fs::remove_all(tmpl);
}

// Only the canonical spelling of a job id reaches the job: no sign, leading zero, whitespace,
// embedded NUL or wrap-around.
// /metrics lists every job and partition state the store counts, each once under its own name:
// the lists come from the enumerations, so a state added there cannot be left out.
TEST(Metrics, EveryJobAndPartitionStateHasItsLine) {
  JobStore::Counts c;
  for (size_t s = 0; s < kJStates; s++) c.jobs[s] = 200 + s;
  for (size_t s = 0; s < kPStates; s++) c.parts[s] = 100 + s;
  const std::string text = counts_metrics(c);
  std::set<std::string> names;
  auto expect_line = [&](const std::string& metric, const std::string& state, uint64_t n) {
    names.insert(metric + " " + state);
    EXPECT_NE(text.find(metric + "{state=\"" + state + "\"} " + std::to_string(n) + "\n"), std::string::npos) << state;
  };
  for (size_t s = 0; s < kJStates; s++) expect_line("cuzk_jobs_total", to_string(JState(s)), 200 + s);
  for (size_t s = 0; s < kPStates; s++) expect_line("cuzk_partitions_total", to_string(PState(s)), 100 + s);
  EXPECT_EQ(names.size(), kJStates + kPStates);  // no two states share a name
  EXPECT_EQ(names.count("cuzk_jobs_total unknown") + names.count("cuzk_partitions_total unknown"), 0u);
  EXPECT_EQ(kJStates, size_t(JState::Cancelled) + 1);
  EXPECT_EQ(kPStates, size_t(PState::Cancelled) + 1);
}

TEST(JobIds, ParseStrictly) {
  EXPECT_EQ(parse_job_id("1"), std::optional<uint64_t>(1));
  EXPECT_EQ(parse_job_id("18446744073709551615"), std::optional<uint64_t>(UINT64_MAX));
  const std::vector<std::string> bads = {"", "0", "01", "-1", "+1", " 1", "1 ", std::string("1\0", 2), "1x", "0x1",
                                "-18446744073709551615", "18446744073709551616", "99999999999999999999999"};
  for (const std::string& bad : bads) EXPECT_EQ(parse_job_id(bad), std::nullopt) << "'" << bad << "'";
}

// The merged timeline writes worker events verbatim: a line break in a worker's event name or k=v
// text started a forged line of its own in timeline.log, which `cuzk waterfall` then read as an
// event, and a comma in the name shifted the job column.
TEST(TimelineLog, OneEventIsOneLine) {
  const std::string line = Timeline::format(0, 2000000, "SYNTH_END\nTIMELINE,0.000,JOB_DONE,7", 7,
                                            "partition=1\r\nTIMELINE,1.000,PROOF_DONE,7,partition=0");
  EXPECT_EQ(line, "TIMELINE,2.000,SYNTH_END_TIMELINE_0.000_JOB_DONE_7,7,partition=1__TIMELINE,1.000,PROOF_DONE,7,partition=0");
  EXPECT_EQ(Timeline::format(0, 1000000, "GPU_END", 0, "prove_ms=1.5,kernel_ms=1.2"),
            "TIMELINE,1.000,GPU_END,-,prove_ms=1.5,kernel_ms=1.2");
}

// Client-chosen text in a log message (a witness path with a line break, a carriage return that
// would rewrite the line on a terminal, an escape sequence) stays inside its one line.
TEST(SupervisorLog, ControlCharactersInMessagesAreEscaped) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  auto saved = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("escape-test", sink));
  cuzk::logging::set_escaped_pattern("%l supervisor: %*");
  const std::string path = "/in/a.wtns\n2026-12-01T00:00:00.000 critical supervisor: forged\r\t\x1b[2K\x7f";
  spdlog::warn("job 3 partition 0 failed: {}: does not satisfy constraint 1", path);
  spdlog::set_default_logger(saved);
  const std::string text = out.str();
  EXPECT_EQ(text,
            "warning supervisor: job 3 partition 0 failed: /in/a.wtns\\n2026-12-01T00:00:00.000 critical supervisor: "
            "forged\\r\\t\\x1b[2K\\x7f: does not satisfy constraint 1\n");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
  EXPECT_EQ(cuzk::logging::escape_control("a\x01" "b\xc3\xa9"), "a\\x01b\xc3\xa9");  // UTF-8 kept as it is
}

namespace {

// The outcome of one body through either path: the refusal, or each partition's bytes.
struct Outcome {
  int status = 0;
  std::string message;
  std::vector<std::string> parts;  // content, file bytes, or the path submitted
  bool operator==(const Outcome& o) const { return status == o.status && message == o.message && parts == o.parts; }
};
std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  os << o.status << " " << o.message;
  for (auto& p : o.parts) os << " [" << p.size() << " bytes]";
  return os;
}

}  // namespace

struct Streamed : Api {
  Outcome in_memory(const std::string& body) {
    Outcome o;
    try {
      for (auto& p : v->prepare(v->parse(body, Priority::Critical), reader)) o.parts.push_back(bytes_of(p));
    } catch (const SubmitError& e) {
      o.status = e.status, o.message = e.what();
    }
    return o;
  }
  // The same body as a spooled one: its uploads decoded into a folder, the rest checked after.
  Outcome streamed(const std::string& body, uint64_t max_json = 1 << 20) {
    write_file(root / "body", body);
    const fs::path dir = root / "up";
    fs::remove_all(dir);
    Outcome o;
    try {
      StreamedBody sb = stream_uploads((root / "body").string(), dir.string(), max_json, 2);
      for (auto& p : v->prepare(v->parse(sb.json, Priority::Critical), reader, &sb)) {
        EXPECT_EQ(p.stored, p.path.rfind(dir.string(), 0) == 0) << p.path;
        o.parts.push_back(bytes_of(p));
      }
    } catch (const SubmitError& e) {
      o.status = e.status, o.message = e.what();
    }
    return o;
  }
};

// Whatever the body, decoding its base64 witnesses from the spool file gives what decoding it in
// memory gives: the same bytes, or the same refusal naming the same entry.
TEST_F(Streamed, SameOutcomeAsInMemory) {
  const std::string ok = to_base64(slurp(in / "ok.wtns"));
  const std::string trunc = to_base64(slurp(in / "ok.wtns").substr(0, 50));
  const std::string path = (in / "ok.wtns").string();
  std::string spaced, escaped;
  for (size_t i = 0; i < ok.size(); i++) {
    spaced += ok[i];
    if (i % 7 == 3) spaced += i % 2 ? "\\n" : " ";
  }
  for (char c : ok) escaped += c == '/' ? std::string("\\/") : c == 'A' ? std::string("\\u0041") : std::string(1, c);
  const std::vector<std::string> bodies = {
      R"({"circuit":"plain","witnesses":[{"base64":")" + ok + R"("}]})",
      R"({"witnesses":[{"base64":")" + ok + R"("},")" + path + R"("],"circuit":"plain"})",
      R"({"circuit":"plain","witnesses":[{"base64":")" + spaced + R"("}]})",
      R"({"circuit":"plain","witnesses":[{"base64":")" + escaped + R"("}]})",
      R"({"circuit":"plain","witnesses":[{"base\u0036\u0034":")" + ok + R"("}]})",
      R"({"circuit":"plain","witnesses":[{"base64":")" + trunc + R"("}]})",
      R"({"circuit":"gen","witnesses":[{"base64":")" + ok + R"("}]})",
      R"({"circuit":"plain","witnesses":[{"base64":")" + ok + R"(","x":1}]})",
      R"({"circuit":"plain","witnesses":[{"base64":"@@@@"}]})",
      R"({"circuit":"plain","witnesses":[{"base64":"AB=C"}]})",
      R"({"circuit":"plain","witnesses":[{"base64":"A==="}]})",
      R"({"circuit":"plain","witnesses":[{"base64":"QUJD="}]})",
      R"({"circuit":"plain","witnesses":[{"base64":"QUI"}]})",
      R"({"circuit":"plain","witnesses":[{"base64":""}]})",
      R"({"circuit":"plain","witnesses":[{"base64":"QQ==\b"}]})",
      R"({"circuit":"plain","witnesses":[{"base64":"0"}]})",
      R"({"circuit":"plain","witnesses":[{"base64":7}]})",
      R"({"circuit":"plain","witnesses":[{"base64":")" + ok + R"("}])",
      R"({"circuit":"plain","witnesses":[{"base64":")" + ok.substr(0, 40),
      R"({"circuit":"plain","base64":")" + ok + R"(","witnesses":[")" + path + R"("]})",
      R"({"circuit":"gen","inputs":[{"alpha":"3","vec":[1,2,3,4]}]})",
      // Raw control characters in the base64 text: not JSON (a string holds none unescaped), though
      // the base64 decoder would skip \v, \f and \t as whitespace.
      R"({"circuit":"plain","witnesses":[{"base64":")" + ok.substr(0, 40) + "\v\v" + ok.substr(40) + R"("}]})",
      R"({"circuit":"plain","witnesses":[{"base64":")" + ok.substr(0, 40) + "\t" + ok.substr(40) + R"("}]})",
      R"({"circuit":"plain","witnesses":[{"base64":")" + ok.substr(0, 40) + "\n" + ok.substr(40) + R"("}]})",
  };
  for (const std::string& b : bodies) {
    Outcome mem = in_memory(b), str = streamed(b);
    const std::string not_json = "body is not JSON";
    if (mem.message.rfind(not_json, 0) == 0) {  // the parser's position is in the shorter text
      EXPECT_EQ(str.status, 400);
      EXPECT_EQ(str.message.rfind(not_json, 0), 0u) << str.message;
      continue;
    }
    EXPECT_EQ(mem, str) << b.substr(0, 200);
  }
  EXPECT_EQ(in_memory(bodies[0]).parts, std::vector<std::string>{slurp(in / "ok.wtns")});
}

// Request ids are per submitter class; a request's digest is the same for the same body whether it
// was held in memory or spooled, and differs when the priority, an entry or an uploaded byte does.
TEST_F(Streamed, RequestDigestsTellBodiesApart) {
  EXPECT_NE(request_key("unix:1000", "r-1"), request_key("unix:1001", "r-1"));
  EXPECT_NE(request_key("unix:1000", "r-1"), request_key("tcp", "r-1"));
  EXPECT_EQ(request_id_of(request_key("unix:1000", "r-1")), "r-1");
  EXPECT_EQ(request_id_of("legacy-id"), "legacy-id");
  auto digest_of = [&](const std::string& body, bool spooled) {
    if (!spooled) {
      const SubmitRequest sr = v->parse(body, Priority::Critical);
      return request_digest(sr, v->prepare(sr, reader), nullptr);
    }
    write_file(root / "body", body);
    fs::remove_all(root / "up");
    StreamedBody sb = stream_uploads((root / "body").string(), (root / "up").string(), 1 << 20, 2);
    const SubmitRequest sr = v->parse(sb.json, Priority::Critical);
    return request_digest(sr, v->prepare(sr, reader, &sb), &sb);
  };
  std::string other = slurp(in / "ok.wtns");
  other[other.size() - 1] ^= 1;  // the last value changed, the header the same
  const std::string ok = to_base64(slurp(in / "ok.wtns")), path = (in / "ok.wtns").string();
  const std::string a = R"({"circuit":"plain","witnesses":[{"base64":")" + ok + R"("},")" + path + R"("]})";
  EXPECT_EQ(digest_of(a, false), digest_of(a, true));
  const std::vector<std::string> others = {
      R"({"circuit":"plain","priority":"high","witnesses":[{"base64":")" + ok + R"("},")" + path + R"("]})",
      R"({"circuit":"plain","witnesses":[{"base64":")" + to_base64(other) + R"("},")" + path + R"("]})",
      R"({"circuit":"plain","witnesses":[{"base64":")" + ok + R"("}]})",
      R"({"circuit":"plain","witnesses":[")" + path + R"(",{"base64":")" + ok + R"("}]})",
  };
  for (const std::string& b : others) {
    EXPECT_NE(digest_of(b, false), digest_of(a, false)) << b.substr(0, 120);
    EXPECT_EQ(digest_of(b, false), digest_of(b, true)) << b.substr(0, 120);
  }
}

TEST_F(Streamed, BoundsWhatStaysInMemory) {
  const std::string ok = to_base64(slurp(in / "ok.wtns"));
  // The JSON without its base64 text is bounded; the base64 text is not counted.
  const std::string body = R"({"circuit":"plain","witnesses":[{"base64":")" + ok + R"("}]})";
  EXPECT_EQ(streamed(body, 80).status, 0);
  Outcome o = streamed(R"({"circuit":"plain","request_id":")" + std::string(100, 'r') + R"(","witnesses":[]})", 80);
  EXPECT_EQ(o.status, 413);
  EXPECT_NE(o.message.find("limits.upload_memory"), std::string::npos) << o.message;
  // No more upload files than any circuit's max_partitions.
  o = streamed(R"({"circuit":"plain","witnesses":[{"base64":"QQ=="},{"base64":"QQ=="},{"base64":"QQ=="}]})");
  EXPECT_EQ(o.status, 400);
  EXPECT_NE(o.message.find("more than 2 uploaded entries"), std::string::npos) << o.message;
}

TEST(Base64Decoder, DecodesInPiecesLikeTheWhole) {
  std::string bytes;
  for (int n = 0; n < 40; n++) {
    const std::string b64 = to_base64(bytes);
    Base64Decoder d;
    std::string out;
    for (char c : b64) ASSERT_TRUE(d.put(c, out)) << b64;
    EXPECT_TRUE(d.finish());
    EXPECT_EQ(out, bytes);
    if (!b64.empty()) {
      Base64Decoder cut;
      std::string o2;
      for (size_t i = 0; i + 1 < b64.size(); i++) cut.put(b64[i], o2);
      EXPECT_FALSE(cut.finish()) << b64;
    }
    bytes.push_back(char(n * 37 + 11));
  }
  for (const char* bad : {"=", "A=", "AB=C", "A===", "ABC==", "AB==AB==", "A-BC", "AB\x80="}) {
    Base64Decoder d;
    std::string out;
    for (const char* p = bad; *p; p++) d.put(*p, out);
    EXPECT_FALSE(d.finish()) << bad;
  }
}

// Socket clients see their own jobs (by uid), TCP token holders the jobs submitted over TCP; root
// and the daemon's own user see all of them; jobs of a store from before submitters were recorded
// stay visible to every client.
TEST(JobAccess, SubmitterClasses) {
  auto unix_req = [](uint32_t uid) {
    http::Request r;
    r.peer.unix_creds = true;
    r.peer.uid = uid, r.peer.gid = 100;
    return r;
  };
  http::Request tcp;
  tcp.via_tcp = true;
  const uint32_t daemon = 997;
  EXPECT_EQ(submitter_of(unix_req(1000)), "unix:1000");
  EXPECT_EQ(submitter_of(tcp), "tcp");
  EXPECT_TRUE(may_access("unix:1000", unix_req(1000), daemon));
  EXPECT_FALSE(may_access("unix:1000", unix_req(1001), daemon));
  EXPECT_FALSE(may_access("unix:1000", tcp, daemon));
  EXPECT_FALSE(may_access("tcp", unix_req(1000), daemon));
  EXPECT_TRUE(may_access("tcp", tcp, daemon));
  EXPECT_TRUE(may_access("unix:1000", unix_req(0), daemon));
  EXPECT_TRUE(may_access("tcp", unix_req(daemon), daemon));
  EXPECT_TRUE(may_access("", unix_req(1001), daemon));
  EXPECT_TRUE(may_access("", tcp, daemon));
  http::Request unknown;  // a unix peer without credentials sees only what every client sees
  EXPECT_FALSE(may_access("unix:?", unknown, daemon));
  // Operators: root and the daemon's user on the socket, and TCP with the admin token.
  http::Request admin = tcp;
  admin.admin = true;
  EXPECT_TRUE(is_operator(unix_req(0), daemon));
  EXPECT_TRUE(is_operator(unix_req(daemon), daemon));
  EXPECT_TRUE(is_operator(admin, daemon));
  EXPECT_FALSE(is_operator(unix_req(1000), daemon));
  EXPECT_FALSE(is_operator(tcp, daemon));
  EXPECT_FALSE(is_operator(unknown, daemon));
  http::Request forged = unix_req(1000);  // only a TCP request carries the admin token
  forged.admin = true;
  EXPECT_FALSE(is_operator(forged, daemon));
  EXPECT_TRUE(may_access("unix:1000", admin, daemon));
  EXPECT_FALSE(may_access("unix:0", unknown, daemon));
}

// Operators may give any priority; other clients at most daemon.max_client_priority.
// What the queues are given instead of the request, a Viewer, lets a client see exactly the jobs
// may_access lets it see.
TEST(JobAccess, AViewerSeesWhatMayAccessAllows) {
  const uint32_t daemon = uint32_t(::geteuid());
  std::vector<http::Request> clients(6);
  clients[0].peer.unix_creds = true, clients[0].peer.uid = 1000;
  clients[1].peer.unix_creds = true, clients[1].peer.uid = 1001;
  clients[2].peer.unix_creds = true, clients[2].peer.uid = daemon;
  clients[3].via_tcp = true;
  clients[4].via_tcp = true, clients[4].admin = true;  // clients[5]: a unix peer without credentials
  for (size_t i = 0; i < clients.size(); i++)
    for (const char* owner : {"unix:1000", "unix:1001", "tcp", "", "unix:?", "unix:0"})
      EXPECT_EQ(viewer_of(clients[i])(owner), may_access(owner, clients[i], daemon)) << "client " << i << ", " << owner;
}

TEST(JobAccess, OnlyOperatorsMayGoAboveTheClientsHighestPriority) {
  http::Request self, other, tcp;
  self.peer.unix_creds = other.peer.unix_creds = true;
  self.peer.uid = uint32_t(::geteuid());
  other.peer.uid = self.peer.uid + 1;
  tcp.via_tcp = true;
  http::Request admin = tcp;
  admin.admin = true;
  EXPECT_EQ(highest_priority(self, "high"), Priority::Critical);
  EXPECT_EQ(highest_priority(admin, "low"), Priority::Critical);
  EXPECT_EQ(highest_priority(other, "high"), Priority::High);
  EXPECT_EQ(highest_priority(tcp, "high"), Priority::High);
  EXPECT_EQ(highest_priority(tcp, "normal"), Priority::Normal);
  EXPECT_EQ(highest_priority(tcp, "critical"), Priority::Critical);
}
