// The `cuzk` daemon client against a small fake daemon (the real HTTP server with a scripted
// handler).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli/daemon_client.hpp"
#include "supervisor/http/http_server.hpp"
#include "tests/http_test_util.hpp"

using namespace cuzk;
using namespace cuzk::testing;
namespace fs = std::filesystem;
using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

const char* kProof = R"({"pi_a":["1","2","1"],"pi_b":[["3","4"],["5","6"],["1","0"]],"pi_c":["7","8","1"],"protocol":"groth16","curve":"bls12381"})";

std::string job_json(const std::string& id, const std::string& state, int parts, const std::string& error = "") {
  ojson j;
  j["id"] = id;
  j["circuit"] = "merkle";
  j["state"] = state;
  j["error"] = error.empty() ? ojson(nullptr) : ojson(error);
  j["partitions"] = ojson::array();
  for (int i = 0; i < parts; i++) {
    ojson p;
    p["index"] = i;
    bool done = state == "done" || (state == "failed" && i == 0);
    p["state"] = done ? "done" : state == "failed" ? "failed" : "proving";
    if (done) {
      p["proof"] = ojson::parse(kProof);
      p["public"] = {std::to_string(i + 10), "2"};
    }
    j["partitions"].push_back(p);
  }
  return j.dump();
}

struct FakeDaemon : ::testing::Test {
  LoopThread lt;
  std::unique_ptr<http::Server> server;
  std::string path = temp_socket_path("cli");
  std::vector<http::Request> seen;  // loop thread only, read after requests complete
  std::mutex mu;
  int polls17 = 0;
  fs::path out_dir = fs::temp_directory_path() / ("cuzk-await-" + std::to_string(getpid()));

  void SetUp() override {
    http::ServerOptions o;
    o.unix_path = path;
    server = std::make_unique<http::Server>(lt.loop(), o, [this](const http::Request& r, auto resp) { handle(r, resp); });
    server->start();
    lt.start();
    fs::remove_all(out_dir);
  }
  void TearDown() override {
    lt.stop([this] { server->close(); });
    server.reset();
    fs::remove_all(out_dir);
  }
  void later(std::shared_ptr<http::Responder> resp, uint64_t ms, http::Response r) {
    struct Ctx {
      std::shared_ptr<http::Responder> resp;
      http::Response r;
    };
    auto* t = new uv_timer_t;
    uv_timer_init(lt.loop(), t);
    t->data = new Ctx{resp, r};
    uv_timer_start(t, [](uv_timer_t* t) {
      auto* c = static_cast<Ctx*>(t->data);
      c->resp->send(c->r);
      delete c;
      uv_close(reinterpret_cast<uv_handle_t*>(t), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    }, ms, 0);
  }
  void handle(const http::Request& r, std::shared_ptr<http::Responder> resp) {
    {
      std::lock_guard<std::mutex> g(mu);
      seen.push_back(r);
    }
    if (r.method == "POST" && r.path == "/v1/proofs") {
      auto j = json::parse(r.body);
      if (j["circuit"] == "bad")
        return resp->send(http::Response::error(400, "witnesses[0]: /nope.wtns: no such file"));
      if (j["circuit"] == "full") return resp->send(http::Response::error(429, "too many queued jobs"));
      return resp->send(http::Response::json(201, R"({"id":"17","state":"queued","existing":false})"));
    }
    if (r.method == "GET" && r.path == "/v1/proofs/17") {
      // Running on the first poll (answered after a short hold), done on the second.
      if (polls17++ == 0) return later(resp, 100, http::Response::json(200, job_json("17", "running", 2)));
      return resp->send(http::Response::json(200, job_json("17", "done", 2)));
    }
    if (r.method == "GET" && r.path == "/v1/proofs/18")
      return resp->send(http::Response::json(200, job_json("18", "failed", 2, "partition 1: unsatisfied constraint 7")));
    if (r.method == "GET" && r.path == "/v1/proofs/19") {
      uint64_t wait = std::stoul(r.query.count("wait") ? r.query.at("wait") : "0");
      return later(resp, wait * 1000, http::Response::json(200, job_json("19", "running", 1)));
    }
    if (r.method == "DELETE" && r.path == "/v1/proofs/17")
      return resp->send(http::Response::json(200, R"({"id":"17","state":"cancelled"})"));
    if (r.method == "DELETE" && r.path == "/v1/proofs/20")
      return resp->send(http::Response::error(409, "job 20 is already done"));
    if (r.method == "GET" && r.path == "/v1/status")
      return resp->send(http::Response::json(200, R"({"instance":"default","pid":1234,"state":"running","uptime_s":12.5,"backend":"cpu",
        "workers":[{"name":"synth0","kind":"synth","index":0,"pid":1240,"cpus":"0-3","state":"idle","restarts":0,"epoch":1,"job":null,"partition":null},
                   {"name":"gpu0","kind":"gpu","index":0,"device":0,"pid":1242,"cpus":"8-9","state":"busy","restarts":1,"epoch":2,"job":"17","partition":3}],
        "devices":[{"id":0,"backend":"cpu","segment":"/cuzk.default.dev0","slots":4,"slot_bytes":4194304,"free":2,"synthesizing":1,"ready":0,"proving":1,
                    "keys":[{"circuit":"merkle","resident":true,"bytes":722064,"loads":3,"evictions":2,"last_load_ms":4.5},
                            {"circuit":"sector","resident":false,"bytes":0,"loads":0,"evictions":0,"last_load_ms":0}]}],
        "queues":{"jobs_queued":1,"jobs_running":2,"partitions_queued":7},"slots":[]})"));
    resp->send(http::Response::error(404, "no such job"));
  }
  cli::HttpClient client() { return cli::HttpClient(cli::Endpoint{path, "", ""}); }
  http::Request last() {
    std::lock_guard<std::mutex> g(mu);
    return seen.back();
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST_F(FakeDaemon, SubmitPrintsTheIdAndSendsAbsolutePaths) {
  cli::SubmitArgs a;
  a.circuit = "merkle";
  a.witnesses = {"p0.wtns", "/abs/p1.wtns", "sub/../p2.wtns"};
  a.priority = "high";
  a.request_id = "req-1";
  std::ostringstream out, err;
  EXPECT_EQ(cli::cmd_submit(client(), a, out, err), 0) << err.str();
  EXPECT_EQ(out.str(), "17\n");
  auto req = last();
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.path, "/v1/proofs");
  EXPECT_EQ(req.headers["content-type"], "application/json");
  auto j = json::parse(req.body);
  EXPECT_EQ(j["circuit"], "merkle");
  EXPECT_EQ(j["priority"], "high");
  EXPECT_EQ(j["request_id"], "req-1");
  ASSERT_EQ(j["witnesses"].size(), 3u);
  EXPECT_EQ(j["witnesses"][0], (fs::current_path() / "p0.wtns").string());
  EXPECT_EQ(j["witnesses"][1], "/abs/p1.wtns");
  EXPECT_EQ(j["witnesses"][2], (fs::current_path() / "p2.wtns").string());
}

TEST_F(FakeDaemon, SubmitErrorsMapToExitCodes) {
  cli::SubmitArgs a;
  a.circuit = "bad";
  a.witnesses = {"/nope.wtns"};
  std::ostringstream out, err;
  EXPECT_EQ(cli::cmd_submit(client(), a, out, err), 2);
  EXPECT_EQ(out.str(), "");
  EXPECT_NE(err.str().find("witnesses[0]: /nope.wtns: no such file"), std::string::npos) << err.str();
  a.circuit = "full";
  EXPECT_EQ(cli::cmd_submit(client(), a, out, err), cli::kTryLater);
  // No daemon at all: 74.
  cli::HttpClient none(cli::Endpoint{path + ".missing", "", ""});
  std::ostringstream err2;
  EXPECT_EQ(cli::cmd_submit(none, a, out, err2), 74);
  EXPECT_NE(err2.str().find("cannot connect"), std::string::npos) << err2.str();
}

TEST_F(FakeDaemon, SubmitUploadSendsBase64) {
  fs::create_directories(out_dir);
  auto w = out_dir / "w.wtns";
  { std::ofstream(w, std::ios::binary) << "wtns\x02"; }
  cli::SubmitArgs a;
  a.circuit = "merkle";
  a.witnesses = {w.string()};
  a.upload = true;
  std::ostringstream out, err;
  EXPECT_EQ(cli::cmd_submit(client(), a, out, err), 0) << err.str();
  auto j = json::parse(last().body);
  EXPECT_EQ(j["witnesses"][0]["base64"], "d3RucwI=");
}

TEST_F(FakeDaemon, SubmitInputsSendsEachFilesJsonInline) {
  fs::create_directories(out_dir);
  { std::ofstream(out_dir / "in0.json") << R"({"b": ["1", 2], "a": "0x10"})"; }
  { std::ofstream(out_dir / "in1.json") << R"({"a": "5", "b": [3, 4]})"; }
  cli::SubmitArgs a;
  a.circuit = "merkle";
  a.inputs = {(out_dir / "in0.json").string(), (out_dir / "in1.json").string()};
  std::ostringstream out, err;
  EXPECT_EQ(cli::cmd_submit(client(), a, out, err), 0) << err.str();
  EXPECT_EQ(out.str(), "17\n");
  auto j = ojson::parse(last().body);
  EXPECT_FALSE(j.contains("witnesses"));
  ASSERT_EQ(j["inputs"].size(), 2u);
  EXPECT_EQ(j["inputs"][0].dump(), R"({"b":["1",2],"a":"0x10"})");  // as written, key order kept
  EXPECT_EQ(j["inputs"][1]["a"], "5");
}

TEST_F(FakeDaemon, SubmitInputsThatAreNotJsonNameTheFile) {
  fs::create_directories(out_dir);
  { std::ofstream(out_dir / "good.json") << R"({"a": "1"})"; }
  { std::ofstream(out_dir / "bad.json") << "a = 1\n"; }
  { std::ofstream(out_dir / "list.json") << "[1, 2]"; }
  const size_t before = [&] {
    std::lock_guard<std::mutex> g(mu);
    return seen.size();
  }();
  cli::SubmitArgs a;
  a.circuit = "merkle";
  a.inputs = {(out_dir / "good.json").string(), (out_dir / "bad.json").string()};
  std::ostringstream out, err;
  EXPECT_EQ(cli::cmd_submit(client(), a, out, err), 2);
  EXPECT_NE(err.str().find((out_dir / "bad.json").string() + ": not a JSON file"), std::string::npos) << err.str();
  a.inputs = {(out_dir / "list.json").string()};
  std::ostringstream err2;
  EXPECT_EQ(cli::cmd_submit(client(), a, out, err2), 2);
  EXPECT_NE(err2.str().find("list.json: not a JSON object"), std::string::npos) << err2.str();
  a.inputs = {(out_dir / "missing.json").string()};
  std::ostringstream err3;
  EXPECT_EQ(cli::cmd_submit(client(), a, out, err3), 2);
  EXPECT_NE(err3.str().find("missing.json: cannot open"), std::string::npos) << err3.str();
  EXPECT_EQ(out.str(), "");
  std::lock_guard<std::mutex> g(mu);
  EXPECT_EQ(seen.size(), before);  // nothing was sent
}

TEST_F(FakeDaemon, AwaitWritesSnarkjsFilesAndExitsZero) {
  cli::AwaitArgs a;
  a.job = "17";
  a.out_dir = (out_dir / "deep" / "er").string();
  a.timeout_s = 30;
  std::ostringstream err;
  EXPECT_EQ(cli::cmd_await(client(), a, err), 0) << err.str();
  auto req = last();
  EXPECT_EQ(req.path, "/v1/proofs/17");
  EXPECT_TRUE(req.query.count("wait"));
  EXPECT_GE(std::stol(req.query["wait"]), 1);
  for (int i = 0; i < 2; i++) {
    auto proof = slurp(fs::path(a.out_dir) / ("proof_" + std::to_string(i) + ".json"));
    auto pub = slurp(fs::path(a.out_dir) / ("public_" + std::to_string(i) + ".json"));
    // JSON.stringify(x, null, 1) layout, keys in the daemon's order.
    EXPECT_EQ(proof, ojson::parse(kProof).dump(1));
    EXPECT_EQ(proof.rfind("{\n \"pi_a\": [\n  \"1\",", 0), 0u) << proof;
    EXPECT_LT(proof.find("\"protocol\""), proof.find("\"curve\""));
    EXPECT_EQ(pub, "[\n \"" + std::to_string(i + 10) + "\",\n \"2\"\n]");
  }
}

TEST_F(FakeDaemon, AwaitFailedJobExitsOneWithTheError) {
  cli::AwaitArgs a;
  a.job = "18";
  a.out_dir = out_dir.string();
  std::ostringstream err;
  EXPECT_EQ(cli::cmd_await(client(), a, err), 1);
  EXPECT_NE(err.str().find("unsatisfied constraint 7"), std::string::npos) << err.str();
  EXPECT_TRUE(fs::exists(out_dir / "proof_0.json"));  // the partition that was done
  EXPECT_FALSE(fs::exists(out_dir / "proof_1.json"));
}

TEST_F(FakeDaemon, AwaitTimesOutWith124) {
  cli::AwaitArgs a;
  a.job = "19";
  a.out_dir = out_dir.string();
  a.timeout_s = 1.5;
  std::ostringstream err;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(cli::cmd_await(client(), a, err), cli::kTimedOut);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(s, 1.0);
  EXPECT_LT(s, 5.0);
  EXPECT_NE(err.str().find("timed out"), std::string::npos) << err.str();
}

TEST_F(FakeDaemon, AwaitUnknownJobAndNoDaemon) {
  cli::AwaitArgs a;
  a.job = "99";
  a.out_dir = out_dir.string();
  std::ostringstream err;
  EXPECT_EQ(cli::cmd_await(client(), a, err), 2);
  EXPECT_NE(err.str().find("no such job"), std::string::npos);
  cli::HttpClient none(cli::Endpoint{path + ".missing", "", ""});
  a.reconnect_s = 0.5;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(cli::cmd_await(none, a, err), 74);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST_F(FakeDaemon, StatusJsonAndTable) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::cmd_status(client(), true, out, err), 0);
  auto j = json::parse(out.str());
  EXPECT_EQ(j["workers"][1]["kind"], "gpu");
  EXPECT_EQ(last().path, "/v1/status");
  std::ostringstream table;
  EXPECT_EQ(cli::cmd_status(client(), false, table, err), 0);
  std::string t = table.str();
  for (const char* s : {"synth0", "gpu0", "1240", "1242", "0-3", "8-9", "busy", "job 17 p3", "partitions queued"})
    EXPECT_NE(t.find(s), std::string::npos) << s << "\n" << t;
  // KIND is the kind alone; the GPU worker's device has its own column ("-" for synthesis workers).
  EXPECT_TRUE(std::regex_search(t, std::regex(R"(NAME +KIND +DEVICE +PID)"))) << t;
  EXPECT_TRUE(std::regex_search(t, std::regex(R"(synth0 +synth +- +1240 )"))) << t;
  EXPECT_TRUE(std::regex_search(t, std::regex(R"(gpu0 +gpu +0 +1242 )"))) << t;
  // Each device's keys, resident or not.
  EXPECT_TRUE(std::regex_search(t, std::regex(R"(0 +merkle +yes +722064 +3 +2 +4.5)"))) << t;
  EXPECT_TRUE(std::regex_search(t, std::regex(R"(0 +sector +no +0 +0 +0 +0)"))) << t;
}

TEST_F(FakeDaemon, CancelExitCodes) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::cmd_cancel(client(), "17", out, err), 0);
  EXPECT_EQ(last().method, "DELETE");
  EXPECT_EQ(last().path, "/v1/proofs/17");
  EXPECT_EQ(cli::cmd_cancel(client(), "20", out, err), 2);
  EXPECT_NE(err.str().find("already done"), std::string::npos);
  EXPECT_EQ(cli::cmd_cancel(client(), "404", out, err), 2);
}
