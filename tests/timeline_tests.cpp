// The timeline tools (`cuzk timeline export`, `cuzk waterfall`) on hand-made logs whose numbers are
// known: every figure asserted below follows from the timestamps of the log above it.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/timeline.hpp"
#include "cli/waterfall.hpp"

using namespace cuzk;
using nlohmann::json;
namespace tlc = cuzk::cli::timeline;
using tlc::State;

namespace {

std::vector<tlc::Event> parse(const char* log, size_t* skipped = nullptr) {
  std::istringstream in(log);
  return tlc::read_log(in, skipped);
}

double ms(const tlc::Lane& l, State s) { return l.ms[size_t(s)]; }
double ms(const tlc::JobStats& j, State s) { return j.ms[size_t(s)]; }

const tlc::Lane& lane(const tlc::Waterfall& w, const std::string& worker) {
  for (const auto& l : w.lanes)
    if (l.worker == worker) return l;
  throw std::runtime_error("no lane " + worker);
}

const tlc::JobStats& job(const tlc::Waterfall& w, const std::string& id) {
  for (const auto& j : w.jobs)
    if (j.job == id) return j;
  throw std::runtime_error("no job " + id);
}

json chrome(const std::vector<tlc::Event>& ev) {
  std::ostringstream out;
  tlc::export_chrome(ev, out);
  return json::parse(out.str());
}

std::vector<json> slices(const json& trace, const std::string& cat) {
  std::vector<json> out;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == cat) out.push_back(e);
  return out;
}

// A log in the older format: no WORKER_READY, read_ms instead of witness_ms, no kernel_ms.
// One device; synthesis 0-2 s and 2-6 s, GPU 2.5-4.5 s and 6-9 s, job done at 10 s.
// GPU busy 5 s of a 10 s span (50%); idle 0-2 s waiting on synthesis, 2-2.5 s slot ready,
// 4.5-6 s waiting on synthesis, 9-10 s no work.
const char* kOldLog = R"(some daemon log line
TIMELINE,0.000,DAEMON_START,-,worker=supervisor
TIMELINE,0.000,JOB_SUBMIT,1,worker=supervisor,partitions=2,priority=normal
TIMELINE,0.000,SYNTH_START,1,worker=synth0,partition=0,slot=0,device=0
TIMELINE,2000.000,SYNTH_END,1,worker=synth0,partition=0,slot=0,device=0,synth_ms=2000.0,read_ms=1.0
TIMELINE,2000.000,SLOT_READY,1,worker=synth0,partition=0,slot=0,device=0
TIMELINE,2000.000,SYNTH_START,1,worker=synth0,partition=1,slot=1,device=0
TIMELINE,2500.000,GPU_PICKUP,1,worker=gpu0,partition=0,slot=0,device=0,wait_ms=500
TIMELINE,2500.000,GPU_START,1,worker=gpu0,partition=0,slot=0,device=0
TIMELINE,4500.000,GPU_END,1,worker=gpu0,partition=0,slot=0,device=0,prove_ms=2000,h_ms=500
TIMELINE,4500.000,PROOF_DONE,1,worker=gpu0,partition=0,slot=0,device=0,total_ms=4500
INFO cuzk: TIMELINE,6000.000,SYNTH_END,1,worker=synth0,partition=1,slot=1,device=0,synth_ms=4000.0,read_ms=3.0
TIMELINE,6000.000,SLOT_READY,1,worker=synth0,partition=1,slot=1,device=0
TIMELINE,6000.000,GPU_PICKUP,1,worker=gpu0,partition=1,slot=1,device=0,wait_ms=0
TIMELINE,6000.000,GPU_START,1,worker=gpu0,partition=1,slot=1,device=0
TIMELINE,9000.000,GPU_END,1,worker=gpu0,partition=1,slot=1,device=0,prove_ms=3000,h_ms=700
TIMELINE,9000.000,PROOF_DONE,1,worker=gpu0,partition=1,slot=1,device=0,total_ms=9000
TIMELINE,10000.000,JOB_DONE,1,worker=supervisor,state=done
TIMELINE,garbage
)";

// Two jobs of one partition, one synthesis worker, one device. Synthesis 0-1 s (witness 400 ms,
// eval 550 ms) and 1-2.3 s (witness 500, eval 700); proofs 1-2 s (kernels 900 ms) and 2.3-3.3 s
// (kernels 600 ms). The GPU waits 1 s for the first synthesis and exactly 300 ms (2.0-2.3 s) for
// the second. GPU busy 2 s of 3.3 s, kernels 1.5 s.
const char* kGpuWaits = R"(TIMELINE,0.000,DAEMON_START,-,pid=1,instance=t,unix_ms=1700000000000
TIMELINE,0.000,JOB_SUBMIT,1,partitions=1,priority=normal,circuit=c
TIMELINE,0.000,JOB_SUBMIT,2,partitions=1,priority=normal,circuit=c
TIMELINE,0.000,SYNTH_START,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,1000.000,SYNTH_END,1,partition=0,worker=synth0,slot=0,device=0,synth_ms=1000.000,witness_ms=400.000,eval_ms=550.000,source=wtns,status=0
TIMELINE,1000.000,SLOT_READY,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,1000.000,SYNTH_START,2,partition=0,worker=synth0,slot=1,device=0
TIMELINE,1000.000,GPU_PICKUP,1,partition=0,worker=gpu0,slot=0,device=0,wait_ms=0.000
TIMELINE,1000.000,GPU_START,1,partition=0,worker=gpu0,slot=0,device=0
TIMELINE,2000.000,GPU_END,1,partition=0,worker=gpu0,slot=0,device=0,prove_ms=1000.000,kernel_ms=900.000,kernel_ntt_ms=300.000,kernel_msm_ms=600.000
TIMELINE,2000.000,PROOF_DONE,1,partition=0,total_ms=2000.000
TIMELINE,2000.000,JOB_DONE,1,state=done
TIMELINE,2300.000,SYNTH_END,2,partition=0,worker=synth0,slot=1,device=0,synth_ms=1300.000,witness_ms=500.000,eval_ms=700.000,source=inputs,status=0
TIMELINE,2300.000,SLOT_READY,2,partition=0,worker=synth0,slot=1,device=0
TIMELINE,2300.000,GPU_PICKUP,2,partition=0,worker=gpu0,slot=1,device=0,wait_ms=0.000
TIMELINE,2300.000,GPU_START,2,partition=0,worker=gpu0,slot=1,device=0
TIMELINE,3300.000,GPU_END,2,partition=0,worker=gpu0,slot=1,device=0,prove_ms=1000.000,kernel_ms=600.000
TIMELINE,3300.000,PROOF_DONE,2,partition=0,total_ms=3300.000
TIMELINE,3300.000,JOB_DONE,2,state=done
)";

// Two synthesis workers, two slots, three partitions. synth0 finishes p0 at 0.5 s and waits for a
// slot until the first proof frees one at 1.5 s (1 s, charged to job 1, whose p2 it then takes);
// synth1 finishes p1 at 0.6 s and waits 0.9 s until the queue is empty. The GPU waits 0.5 s for the
// first synthesis, then proves without a break until 3.5 s.
const char* kSlotWaits = R"(TIMELINE,0.000,DAEMON_START,-,pid=1,instance=t,unix_ms=1700000000000
TIMELINE,0.000,JOB_SUBMIT,1,partitions=3,priority=normal,circuit=c
TIMELINE,0.000,SYNTH_START,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,0.000,SYNTH_START,1,partition=1,worker=synth1,slot=1,device=0
TIMELINE,500.000,SYNTH_END,1,partition=0,worker=synth0,slot=0,device=0,synth_ms=500.000,witness_ms=200.000,eval_ms=300.000,source=wtns,status=0
TIMELINE,500.000,SLOT_READY,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,500.000,GPU_PICKUP,1,partition=0,worker=gpu0,slot=0,device=0,wait_ms=0.000
TIMELINE,500.000,GPU_START,1,partition=0,worker=gpu0,slot=0,device=0
TIMELINE,600.000,SYNTH_END,1,partition=1,worker=synth1,slot=1,device=0,synth_ms=600.000,witness_ms=250.000,eval_ms=350.000,source=wtns,status=0
TIMELINE,600.000,SLOT_READY,1,partition=1,worker=synth1,slot=1,device=0
TIMELINE,1500.000,GPU_END,1,partition=0,worker=gpu0,slot=0,device=0,prove_ms=1000.000,kernel_ms=800.000
TIMELINE,1500.000,PROOF_DONE,1,partition=0,total_ms=1500.000
TIMELINE,1500.000,SLOT_WAIT,1,worker=synth0,wait_ms=1000.000,partition=2,slot=0,device=0
TIMELINE,1500.000,SLOT_WAIT,-,worker=synth1,wait_ms=900.000
TIMELINE,1500.000,SYNTH_START,1,partition=2,worker=synth0,slot=0,device=0
TIMELINE,1500.000,GPU_PICKUP,1,partition=1,worker=gpu0,slot=1,device=0,wait_ms=900.000
TIMELINE,1500.000,GPU_START,1,partition=1,worker=gpu0,slot=1,device=0
TIMELINE,2000.000,SYNTH_END,1,partition=2,worker=synth0,slot=0,device=0,synth_ms=500.000,witness_ms=100.000,eval_ms=400.000,source=wtns,status=0
TIMELINE,2000.000,SLOT_READY,1,partition=2,worker=synth0,slot=0,device=0
TIMELINE,2500.000,GPU_END,1,partition=1,worker=gpu0,slot=1,device=0,prove_ms=1000.000,kernel_ms=800.000
TIMELINE,2500.000,PROOF_DONE,1,partition=1,total_ms=2500.000
TIMELINE,2500.000,GPU_PICKUP,1,partition=2,worker=gpu0,slot=0,device=0,wait_ms=500.000
TIMELINE,2500.000,GPU_START,1,partition=2,worker=gpu0,slot=0,device=0
TIMELINE,3500.000,GPU_END,1,partition=2,worker=gpu0,slot=0,device=0,prove_ms=1000.000,kernel_ms=800.000
TIMELINE,3500.000,PROOF_DONE,1,partition=2,total_ms=3500.000
TIMELINE,3500.000,JOB_DONE,1,state=done
)";

// A restarted daemon: job 7 recovered at 0; the GPU worker spawns at 5 ms and loads its keys until
// 8405 ms, while its one partition has been READY since 530 ms. The GPU's 8.4 s before its proof are
// "worker starting", not pickup latency.
const char* kRestart = R"(TIMELINE,0.000,DAEMON_START,-,pid=1,instance=t,unix_ms=1700000000000
TIMELINE,0.000,JOB_RECOVERED,7,partitions=1,priority=normal,circuit=c
TIMELINE,5.000,WORKER_START,-,worker=synth0,kind=synth,pid=10,epoch=1
TIMELINE,5.000,WORKER_START,-,worker=gpu0,kind=gpu,device=0,pid=11,epoch=1
TIMELINE,20.000,WORKER_READY,-,worker=synth0,kind=synth,pid=10,epoch=1,startup_ms=15.000
TIMELINE,30.000,SYNTH_START,7,partition=0,worker=synth0,slot=0,device=0
TIMELINE,530.000,SYNTH_END,7,partition=0,worker=synth0,slot=0,device=0,synth_ms=500.000,witness_ms=200.000,eval_ms=250.000,source=wtns,status=0
TIMELINE,530.000,SLOT_READY,7,partition=0,worker=synth0,slot=0,device=0
TIMELINE,8405.000,WORKER_READY,-,worker=gpu0,kind=gpu,device=0,pid=11,epoch=1,startup_ms=8400.000
TIMELINE,8405.000,GPU_PICKUP,7,partition=0,worker=gpu0,slot=0,device=0,wait_ms=7875.000
TIMELINE,8405.000,GPU_START,7,partition=0,worker=gpu0,slot=0,device=0
TIMELINE,9405.000,GPU_END,7,partition=0,worker=gpu0,slot=0,device=0,prove_ms=1000.000,kernel_ms=900.000
TIMELINE,9405.000,PROOF_DONE,7,partition=0,total_ms=9405.000
TIMELINE,9405.000,JOB_DONE,7,state=done
)";

// Two circuits, one key resident at a time: job 2's partition is READY at 1.1 s, and its key is
// loaded (300 ms) after the GPU picks it up, before its proof starts at 1.4 s.
const char* kKeySwitch = R"(TIMELINE,0.000,DAEMON_START,-,pid=1,instance=t,unix_ms=1700000000000
TIMELINE,0.000,WORKER_READY,-,worker=gpu0,kind=gpu,device=0,pid=11,epoch=1,startup_ms=0.000
TIMELINE,0.000,JOB_SUBMIT,1,partitions=1,priority=normal,circuit=a
TIMELINE,0.000,JOB_SUBMIT,2,partitions=1,priority=normal,circuit=b
TIMELINE,0.000,SYNTH_START,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,100.000,SYNTH_END,1,partition=0,worker=synth0,slot=0,device=0,synth_ms=100.000,witness_ms=40.000,eval_ms=50.000,source=wtns,status=0
TIMELINE,100.000,SLOT_READY,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,100.000,GPU_PICKUP,1,partition=0,worker=gpu0,slot=0,device=0,wait_ms=0.000
TIMELINE,100.000,GPU_START,1,partition=0,worker=gpu0,slot=0,device=0
TIMELINE,100.000,SYNTH_START,2,partition=0,worker=synth0,slot=1,device=0
TIMELINE,1100.000,SYNTH_END,2,partition=0,worker=synth0,slot=1,device=0,synth_ms=1000.000,witness_ms=400.000,eval_ms=500.000,source=wtns,status=0
TIMELINE,1100.000,SLOT_READY,2,partition=0,worker=synth0,slot=1,device=0
TIMELINE,1100.000,GPU_END,1,partition=0,worker=gpu0,slot=0,device=0,prove_ms=1000.000,kernel_ms=900.000
TIMELINE,1100.000,PROOF_DONE,1,partition=0,total_ms=1100.000
TIMELINE,1100.000,JOB_DONE,1,state=done
TIMELINE,1100.000,GPU_PICKUP,2,partition=0,worker=gpu0,slot=1,device=0,wait_ms=0.000
TIMELINE,1100.000,KEY_EVICT,2,worker=gpu0,device=0,circuit=a,bytes=1000,host=dropped,partition=0,slot=1
TIMELINE,1400.000,KEY_LOAD,2,worker=gpu0,device=0,circuit=b,bytes=1000,load_ms=300.000,source=file,file_ms=120.000,prepare_ms=80.000,upload_ms=50.000,upload_bytes=2000000000,check_ms=5.000,tables_ms=40.000,partition=0,slot=1
TIMELINE,1400.000,GPU_START,2,partition=0,worker=gpu0,slot=1,device=0
TIMELINE,2400.000,GPU_END,2,partition=0,worker=gpu0,slot=1,device=0,prove_ms=1000.000,kernel_ms=900.000
TIMELINE,2400.000,PROOF_DONE,2,partition=0,total_ms=2400.000
TIMELINE,2400.000,JOB_DONE,2,state=done
)";

// The GPU worker is killed in the middle of a proof at 1 s, respawned at 2 s, ready at 4 s, and
// proves the partition again from its slot: down 1 s, starting 2 s.
const char* kCrash = R"(TIMELINE,0.000,DAEMON_START,-,pid=1,instance=t,unix_ms=1700000000000
TIMELINE,0.000,JOB_SUBMIT,1,partitions=1,priority=normal,circuit=c
TIMELINE,0.000,SYNTH_START,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,100.000,SYNTH_END,1,partition=0,worker=synth0,slot=0,device=0,synth_ms=100.000,witness_ms=40.000,eval_ms=50.000,source=wtns,status=0
TIMELINE,100.000,SLOT_READY,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,100.000,GPU_PICKUP,1,partition=0,worker=gpu0,slot=0,device=0,wait_ms=0.000
TIMELINE,100.000,GPU_START,1,partition=0,worker=gpu0,slot=0,device=0
TIMELINE,1000.000,WORKER_EXIT,1,worker=gpu0,kind=gpu,pid=11,status=0,signal=9,partition=0,slot=0,device=0
TIMELINE,2000.000,WORKER_START,-,worker=gpu0,kind=gpu,device=0,pid=12,epoch=2
TIMELINE,4000.000,WORKER_READY,-,worker=gpu0,kind=gpu,device=0,pid=12,epoch=2,startup_ms=2000.000
TIMELINE,4000.000,GPU_PICKUP,1,partition=0,worker=gpu0,slot=0,device=0,wait_ms=3900.000
TIMELINE,4000.000,GPU_START,1,partition=0,worker=gpu0,slot=0,device=0
TIMELINE,5000.000,GPU_END,1,partition=0,worker=gpu0,slot=0,device=0,prove_ms=1000.000,kernel_ms=700.000
TIMELINE,5000.000,PROOF_DONE,1,partition=0,total_ms=5000.000
TIMELINE,5000.000,JOB_DONE,1,state=done
)";

// Two daemon runs in one log (the supervisor appends): the first is killed during a proof at
// 110 ms; the second starts 5 s later by the wall clock, recovers the job and proves it.
const char* kTwoRuns = R"(TIMELINE,0.000,DAEMON_START,-,pid=1,instance=t,unix_ms=1000000
TIMELINE,0.000,WORKER_START,-,worker=synth0,kind=synth,pid=10,epoch=1
TIMELINE,0.000,WORKER_START,-,worker=gpu0,kind=gpu,device=0,pid=11,epoch=1
TIMELINE,1.000,WORKER_READY,-,worker=synth0,kind=synth,pid=10,epoch=1,startup_ms=1.000
TIMELINE,2.000,WORKER_READY,-,worker=gpu0,kind=gpu,device=0,pid=11,epoch=1,startup_ms=2.000
TIMELINE,10.000,JOB_SUBMIT,1,partitions=1,priority=normal,circuit=c
TIMELINE,10.000,SYNTH_START,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,110.000,SYNTH_END,1,partition=0,worker=synth0,slot=0,device=0,synth_ms=100.000,witness_ms=50.000,eval_ms=50.000,source=wtns,status=0
TIMELINE,110.000,SLOT_READY,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,110.000,GPU_PICKUP,1,partition=0,worker=gpu0,slot=0,device=0,wait_ms=0.000
TIMELINE,110.000,GPU_START,1,partition=0,worker=gpu0,slot=0,device=0
TIMELINE,0.000,DAEMON_START,-,pid=2,instance=t,unix_ms=1005000
TIMELINE,0.000,JOB_RECOVERED,1,partitions=1,priority=normal,circuit=c
TIMELINE,0.000,WORKER_START,-,worker=synth0,kind=synth,pid=20,epoch=1
TIMELINE,0.000,WORKER_START,-,worker=gpu0,kind=gpu,device=0,pid=21,epoch=1
TIMELINE,1.000,WORKER_READY,-,worker=synth0,kind=synth,pid=20,epoch=1,startup_ms=1.000
TIMELINE,10.000,SYNTH_START,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,110.000,SYNTH_END,1,partition=0,worker=synth0,slot=0,device=0,synth_ms=100.000,witness_ms=50.000,eval_ms=50.000,source=wtns,status=0
TIMELINE,110.000,SLOT_READY,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,1000.000,WORKER_READY,-,worker=gpu0,kind=gpu,device=0,pid=21,epoch=1,startup_ms=1000.000
TIMELINE,1000.000,GPU_PICKUP,1,partition=0,worker=gpu0,slot=0,device=0,wait_ms=890.000
TIMELINE,1000.000,GPU_START,1,partition=0,worker=gpu0,slot=0,device=0
TIMELINE,1500.000,GPU_END,1,partition=0,worker=gpu0,slot=0,device=0,prove_ms=500.000,kernel_ms=450.000
TIMELINE,1500.000,PROOF_DONE,1,partition=0,total_ms=1500.000
TIMELINE,1500.000,JOB_DONE,1,state=done
)";

// Whether every element of an XML text is closed, in order (no parser dependency).
bool balanced_xml(const std::string& s, std::string& why) {
  std::vector<std::string> open;
  for (size_t i = s.find('<'); i != std::string::npos; i = s.find('<', i + 1)) {
    size_t j = s.find('>', i);
    if (j == std::string::npos) return why = "unterminated tag", false;
    std::string tag = s.substr(i + 1, j - i - 1);
    if (tag.empty() || tag[0] == '?' || tag[0] == '!' || tag.back() == '/') continue;
    std::string name = tag.substr(tag[0] == '/', tag.find_first_of(" \t\n") - (tag[0] == '/'));
    if (tag[0] != '/') {
      open.push_back(name);
    } else if (open.empty() || open.back() != name) {
      return why = "</" + name + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">"), false;
    } else {
      open.pop_back();
    }
  }
  if (!open.empty()) return why = "<" + open.back() + "> is never closed", false;
  return true;
}

}  // namespace

TEST(Timeline, ParsesLines) {
  size_t skipped = 0;
  auto ev = parse(kOldLog, &skipped);
  EXPECT_EQ(skipped, 1u);
  ASSERT_EQ(ev.size(), 17u);
  EXPECT_EQ(ev[0].name, "DAEMON_START");
  EXPECT_EQ(ev[0].job, "");
  EXPECT_EQ(ev[3].name, "SYNTH_END");
  EXPECT_DOUBLE_EQ(ev[3].num("synth_ms"), 2000.0);
  EXPECT_EQ(ev[3].get("worker"), "synth0");
  EXPECT_EQ(ev[3].job, "1");
  // The prefixed line was found and sorted into place.
  EXPECT_EQ(ev[10].name, "SYNTH_END");
  EXPECT_DOUBLE_EQ(ev[10].ms, 6000.0);
}

TEST(Timeline, LaterDaemonRunsFollowByTheWallClock) {
  auto ev = parse(kTwoRuns);
  ASSERT_EQ(ev.size(), 25u);
  size_t starts = 0;
  for (size_t i = 1; i < ev.size(); i++) EXPECT_LE(ev[i - 1].ms, ev[i].ms);
  for (const auto& e : ev) {
    if (e.name != "DAEMON_START") continue;
    EXPECT_DOUBLE_EQ(e.ms, starts ? 5000.0 : 0.0);  // unix_ms 1005000 - 1000000
    EXPECT_EQ(e.run, starts++);
  }
  EXPECT_EQ(starts, 2u);
  EXPECT_DOUBLE_EQ(ev.back().ms, 6500.0);
  // Without unix_ms the second run follows the first one's last event.
  std::string plain = kTwoRuns;
  plain.replace(plain.find(",unix_ms=1005000"), 16, "");
  auto ev2 = parse(plain.c_str());
  for (const auto& e : ev2)
    if (e.name == "DAEMON_START" && e.run == 1) {
      EXPECT_DOUBLE_EQ(e.ms, 110.0);
    }
}

TEST(Timeline, ChromeExportIsValidAndComplete) {
  auto j = chrome(parse(kOldLog));
  ASSERT_TRUE(j["traceEvents"].is_array());
  int synth = 0, gpu = 0, instants = 0;
  std::map<std::string, int> thread_names;
  for (const auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph"));
    ASSERT_TRUE(e.contains("pid"));
    ASSERT_TRUE(e.contains("tid"));
    std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "thread_name") thread_names[e["args"]["name"]] = e["pid"];
      continue;
    }
    ASSERT_TRUE(e["ts"].is_number());
    if (ph == "X") {
      ASSERT_TRUE(e["dur"].is_number());
      if (e["cat"] == "synth") {
        synth++;
        if (e["args"]["partition"] == 1) {
          EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 2000.0 * 1000);
          EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 4000.0 * 1000);
          EXPECT_EQ(e["name"], "synth job 1 p1");
        }
      }
      if (e["cat"] == "gpu") {
        gpu++;
        EXPECT_EQ(e["pid"], 3);
      }
    } else if (ph == "i") {
      instants++;
    }
  }
  EXPECT_EQ(synth, 2);
  EXPECT_EQ(gpu, 2);
  EXPECT_EQ(instants, 17 - 8);
  EXPECT_EQ(thread_names.count("synth0"), 1u);
  EXPECT_EQ(thread_names.count("gpu0 (device 0)"), 1u);
  EXPECT_EQ(thread_names.count("supervisor"), 1u);
  // read_ms of the older format is the witness time.
  auto wit = slices(j, "synth.witness");
  ASSERT_EQ(wit.size(), 2u);
  EXPECT_DOUBLE_EQ(wit[1]["dur"].get<double>(), 3000.0);
}

TEST(Timeline, ChromeExportNestsWitnessAndEvalAndShowsWaits) {
  auto j = chrome(parse(kGpuWaits));
  auto wit = slices(j, "synth.witness"), ev = slices(j, "synth.eval");
  ASSERT_EQ(wit.size(), 2u);
  ASSERT_EQ(ev.size(), 2u);
  // The second synthesis: 1000 ms + witness 500 ms, then eval 700 ms.
  EXPECT_DOUBLE_EQ(wit[1]["ts"].get<double>(), 1000.0 * 1000);
  EXPECT_DOUBLE_EQ(wit[1]["dur"].get<double>(), 500.0 * 1000);
  EXPECT_DOUBLE_EQ(ev[1]["ts"].get<double>(), 1500.0 * 1000);
  EXPECT_DOUBLE_EQ(ev[1]["dur"].get<double>(), 700.0 * 1000);
  EXPECT_EQ(wit[1]["tid"], slices(j, "synth")[1]["tid"]);

  auto w = chrome(parse(kSlotWaits));
  auto waits = slices(w, "slot_wait");
  ASSERT_EQ(waits.size(), 2u);
  for (const auto& x : waits) {
    EXPECT_DOUBLE_EQ(x["ts"].get<double>() + x["dur"].get<double>(), 1500.0 * 1000);
    EXPECT_DOUBLE_EQ(x["dur"].get<double>(), x["args"]["wait_ms"].get<double>() * 1000);
  }
  for (const auto& e : w["traceEvents"]) EXPECT_NE(e["name"], "SLOT_WAIT") << "a slice, not an instant";

  auto s = chrome(parse(kRestart));
  auto starting = slices(s, "starting");
  ASSERT_EQ(starting.size(), 2u);
  for (const auto& x : starting) {
    EXPECT_DOUBLE_EQ(x["ts"].get<double>(), 5000.0);
    EXPECT_TRUE(x["dur"] == 15000.0 || x["dur"] == 8400000.0) << x.dump();
  }
}

TEST(Timeline, ChromeExportClosesIntervalsCutByACrash) {
  std::istringstream in(
      "TIMELINE,0.000,GPU_START,5,worker=gpu0,partition=0,slot=2,device=0\n"
      "TIMELINE,100.500,WORKER_EXIT,-,worker=gpu0,pid=77,status=-1,signal=9\n"
      "TIMELINE,1000.000,GPU_START,5,worker=gpu0,partition=0,slot=2,device=0\n"
      "TIMELINE,1500.000,GPU_END,5,worker=gpu0,partition=0,slot=2,device=0,prove_ms=500\n");
  auto j = chrome(tlc::read_log(in));
  auto xs = slices(j, "gpu");
  ASSERT_EQ(xs.size(), 2u);
  EXPECT_EQ(xs[0]["args"]["cut_short"], "interrupted");
  EXPECT_DOUBLE_EQ(xs[0]["dur"].get<double>(), 100500.0);
  EXPECT_FALSE(xs[1]["args"].contains("cut_short"));
  // Down from the exit until its next work.
  auto down = slices(j, "down");
  ASSERT_EQ(down.size(), 1u);
  EXPECT_DOUBLE_EQ(down[0]["ts"].get<double>(), 100500.0);
  EXPECT_DOUBLE_EQ(down[0]["dur"].get<double>(), 899500.0);
}

TEST(Timeline, WaterfallOfAnOlderLog) {
  auto w = tlc::analyze(parse(kOldLog));
  EXPECT_DOUBLE_EQ(w.start_ms, 0);
  EXPECT_DOUBLE_EQ(w.end_ms, 10000);
  EXPECT_EQ(w.proofs, 2u);
  EXPECT_DOUBLE_EQ(w.sec_per_proof, 5.0);
  ASSERT_EQ(w.devices.size(), 1u);
  const auto& d = w.devices[0];
  EXPECT_EQ(d.device, "0");
  EXPECT_EQ(d.worker, "gpu0");
  EXPECT_NEAR(d.util, 0.5, 1e-9);
  EXPECT_NEAR(d.busy_ms, 5000, 1e-6);
  EXPECT_NEAR(d.idle_waiting_synth_ms, 3500, 1e-6);
  EXPECT_NEAR(d.idle_ready_ms, 500, 1e-6);
  EXPECT_NEAR(d.idle_no_work_ms, 1000, 1e-6);
  EXPECT_FALSE(d.kernel_reported);
  ASSERT_EQ(d.gaps.size(), 3u);
  EXPECT_EQ(d.gaps[0].cause, "waiting on synthesis");
  EXPECT_DOUBLE_EQ(d.gaps[0].end_ms, 2500);
  EXPECT_EQ(d.gaps[1].cause, "waiting on synthesis");
  EXPECT_EQ(d.gaps[2].cause, "no work");
  EXPECT_EQ(d.proofs, 2u);
  ASSERT_EQ(w.rows.size(), 2u);
  EXPECT_EQ(w.rows[0].worker, "synth0");
  EXPECT_NEAR(w.rows[0].busy_ms, 6000, 1e-6);
  EXPECT_EQ(w.rows[1].worker, "gpu0");
  EXPECT_NEAR(ms(lane(w, "synth0"), State::Witness), 4, 1e-9);  // read_ms 1 + 3
  EXPECT_DOUBLE_EQ(w.medians.at("SYNTH_END.synth_ms").first, 3000);
  EXPECT_DOUBLE_EQ(w.medians.at("GPU_END.prove_ms").first, 2500);
  EXPECT_DOUBLE_EQ(w.medians.at("GPU_PICKUP.wait_ms").first, 250);
  EXPECT_DOUBLE_EQ(w.medians.at("synth").first, 3000);
  EXPECT_DOUBLE_EQ(w.medians.at("gpu").first, 2500);
  std::ostringstream out;
  tlc::render_waterfall(w, out, 20);
  std::string s = out.str();
  EXPECT_NE(s.find("device 0 (gpu0): GPU busy (wall, GPU_START→GPU_END) 50.0% (5.000 s of 10.000 s) | kernels busy not "
                   "reported | 2 proofs"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("5.000 s/proof"), std::string::npos) << s;
  EXPECT_NE(s.find("waiting on synthesis 3.500 s"), std::string::npos) << s;
  // 20 buckets of 0.5 s: gpu0 waits on synthesis for 4, has a slot ready for 1, proves 4, waits 3,
  // proves 6, has no work for 2.
  EXPECT_NE(s.find("gpu0   |ssssp####sss######..|"), std::string::npos) << s;
  EXPECT_NE(s.find("synth0 |############........|"), std::string::npos) << s;
}

TEST(Timeline, WaterfallGpuWaitedExactly300msOnSynthesis) {
  auto w = tlc::analyze(parse(kGpuWaits));
  EXPECT_DOUBLE_EQ(w.span_ms, 3300);
  EXPECT_EQ(w.proofs, 2u);
  ASSERT_EQ(w.devices.size(), 1u);
  const auto& d = w.devices[0];
  EXPECT_DOUBLE_EQ(d.busy_ms, 2000);
  EXPECT_DOUBLE_EQ(d.idle_waiting_synth_ms, 1300);
  EXPECT_DOUBLE_EQ(d.idle_ready_ms, 0);
  EXPECT_DOUBLE_EQ(d.idle_starting_ms, 0);
  EXPECT_DOUBLE_EQ(d.idle_no_work_ms, 0);
  EXPECT_TRUE(d.kernel_reported);
  EXPECT_DOUBLE_EQ(d.kernel_ms, 1500);
  ASSERT_EQ(d.gaps.size(), 2u);
  EXPECT_DOUBLE_EQ(d.gaps[1].start_ms, 2000);
  EXPECT_DOUBLE_EQ(d.gaps[1].end_ms, 2300);
  EXPECT_EQ(d.gaps[1].cause, "waiting on synthesis");
  // Per job: the GPU's wait goes to the job it proved next.
  EXPECT_DOUBLE_EQ(ms(job(w, "1"), State::WaitingOnSynthesis), 1000);
  EXPECT_DOUBLE_EQ(ms(job(w, "2"), State::WaitingOnSynthesis), 300);
  EXPECT_DOUBLE_EQ(ms(job(w, "2"), State::Witness), 500);
  EXPECT_DOUBLE_EQ(ms(job(w, "2"), State::Eval), 700);
  EXPECT_DOUBLE_EQ(ms(job(w, "2"), State::SynthOther), 100);
  EXPECT_DOUBLE_EQ(ms(job(w, "2"), State::Proving), 1000);
  EXPECT_DOUBLE_EQ(job(w, "1").kernel_ms, 900);
  EXPECT_EQ(job(w, "2").proofs, 1u);
  // Per worker: witness and evaluation apart.
  const auto& s0 = lane(w, "synth0");
  EXPECT_DOUBLE_EQ(ms(s0, State::Witness), 900);
  EXPECT_DOUBLE_EQ(ms(s0, State::Eval), 1250);
  EXPECT_DOUBLE_EQ(ms(s0, State::SynthOther), 150);
  EXPECT_DOUBLE_EQ(ms(s0, State::NoWork), 1000);
  EXPECT_EQ(s0.done, 2u);
  EXPECT_DOUBLE_EQ(w.medians.at("GPU_END.kernel_ms").first, 750);
  // The steady state runs from the first GPU_START (1 s) to the last GPU_END (3.3 s): the 1 s wait
  // for the first synthesis is start-up, the 0.3 s wait between the proofs is inside it.
  EXPECT_DOUBLE_EQ(d.steady.start_ms, 1000);
  EXPECT_DOUBLE_EQ(d.steady.end_ms, 3300);
  EXPECT_EQ(d.steady.proofs, 2u);
  EXPECT_DOUBLE_EQ(d.steady.busy_ms, 2000);
  EXPECT_DOUBLE_EQ(d.steady.kernel_ms, 1500);
  EXPECT_DOUBLE_EQ(d.steady.median_proof_ms, 1000);
  EXPECT_DOUBLE_EQ(d.steady.sec_per_proof(), 1.15);
  EXPECT_DOUBLE_EQ(d.steady.idle[size_t(State::WaitingOnSynthesis)], 300);
  EXPECT_DOUBLE_EQ(d.startup[size_t(State::WaitingOnSynthesis)], 1000);
  EXPECT_DOUBLE_EQ(d.startup[size_t(State::NoWork)], 0);

  std::ostringstream out;
  tlc::render_waterfall(w, out, 33);
  std::string s = out.str();
  EXPECT_NE(s.find("GPU busy (wall, GPU_START→GPU_END) 60.6% (2.000 s of 3.300 s) | kernels busy 45.5% (1.500 s) | 2 "
                   "proofs"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("0.300 s at +2.000 s (waiting on synthesis)"), std::string::npos) << s;
  EXPECT_NE(s.find("steady state (first GPU_START → last GPU_END, 2.300 s): 2 proofs, 1.1500 s/proof, +15.0% against "
                   "the median proof (1.0000 s); GPU busy 87.0%, kernels busy 65.2%\n"
                   "      idle inside 0.300 s: waiting on synthesis 0.300 s\n"
                   "    start-up before the first proof 1.000 s: waiting on synthesis 1.000 s\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  synth0         2.300     0.900     1.250     0.150     0.000"), std::string::npos) << s;
  EXPECT_NE(s.find("  2             1     1.300     0.500     0.700     0.000     1.000     0.600        0.300"),
            std::string::npos)
      << s;
}

// The supervisor writes PROOF_DONE after it has read the proof's files: from GPU_END on, nothing is
// left to synthesize, so that stretch is no work rather than waiting on synthesis.
// Two devices proving one job side by side: each has its steady state, and together they prove 4
// partitions in the 250 ms from the first GPU_START (gpu0, 100 ms) to the last GPU_END (gpu1, 350 ms).
TEST(Timeline, WaterfallTwoDevicesTogether) {
  const char* log = R"(TIMELINE,0.000,DAEMON_START,-,pid=1,instance=t,unix_ms=1700000000000
TIMELINE,0.000,JOB_SUBMIT,1,partitions=4,priority=normal,circuit=c
TIMELINE,100.000,GPU_START,1,partition=0,worker=gpu0,slot=0,device=0
TIMELINE,150.000,GPU_START,1,partition=1,worker=gpu1,slot=0,device=1
TIMELINE,200.000,GPU_END,1,partition=0,worker=gpu0,slot=0,device=0,prove_ms=100.000,kernel_ms=90.000
TIMELINE,200.000,GPU_START,1,partition=2,worker=gpu0,slot=1,device=0
TIMELINE,250.000,GPU_END,1,partition=1,worker=gpu1,slot=0,device=1,prove_ms=100.000,kernel_ms=90.000
TIMELINE,250.000,GPU_START,1,partition=3,worker=gpu1,slot=1,device=1
TIMELINE,300.000,GPU_END,1,partition=2,worker=gpu0,slot=1,device=0,prove_ms=100.000,kernel_ms=90.000
TIMELINE,350.000,GPU_END,1,partition=3,worker=gpu1,slot=1,device=1,prove_ms=100.000,kernel_ms=90.000
TIMELINE,350.000,JOB_DONE,1,state=done
)";
  auto w = tlc::analyze(parse(log));
  ASSERT_EQ(w.devices.size(), 2u);
  for (const auto& d : w.devices) {
    EXPECT_EQ(d.steady.proofs, 2u) << d.device;
    EXPECT_DOUBLE_EQ(d.steady.end_ms - d.steady.start_ms, 200) << d.device;
    EXPECT_DOUBLE_EQ(d.steady.kernel_ms, 180) << d.device;
  }
  EXPECT_DOUBLE_EQ(w.devices[0].steady.start_ms, 100);
  EXPECT_DOUBLE_EQ(w.devices[1].steady.end_ms, 350);
  std::ostringstream out;
  tlc::render_waterfall(w, out, 20);
  const std::string s = out.str();
  EXPECT_NE(s.find("  2 devices, steady state together (0.250 s): 4 proofs, 0.0625 s/proof (16.00 proofs/s)\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("device 1 (gpu1): GPU busy"), std::string::npos) << s;
}

TEST(Timeline, WaterfallAProofIsDoneAtItsGpuEnd) {
  std::string log = kGpuWaits;
  for (const char* ev : {"TIMELINE,3300.000,PROOF_DONE", "TIMELINE,3300.000,JOB_DONE"})
    log.replace(log.find(ev), std::strlen("TIMELINE,3300.000"), "TIMELINE,3310.000");
  auto w = tlc::analyze(parse(log.c_str()));
  EXPECT_DOUBLE_EQ(w.span_ms, 3310);
  ASSERT_EQ(w.devices.size(), 1u);
  EXPECT_DOUBLE_EQ(w.devices[0].idle_waiting_synth_ms, 1300);
  EXPECT_DOUBLE_EQ(w.devices[0].idle_no_work_ms, 10);
}

// Pickup latency lasts from SLOT_READY until the proof starts, the GPU worker's own preparation
// after GPU_PICKUP included.
TEST(Timeline, WaterfallPickupLatencyEndsAtGpuStart) {
  auto w = tlc::analyze(parse(R"(TIMELINE,0.000,JOB_SUBMIT,1,partitions=1,priority=normal,circuit=c
TIMELINE,0.000,SYNTH_START,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,100.000,SYNTH_END,1,partition=0,worker=synth0,slot=0,device=0,synth_ms=100.000,witness_ms=50.000,eval_ms=50.000,source=wtns,status=0
TIMELINE,100.000,SLOT_READY,1,partition=0,worker=synth0,slot=0,device=0
TIMELINE,150.000,GPU_PICKUP,1,partition=0,worker=gpu0,slot=0,device=0,wait_ms=50.000
TIMELINE,400.000,GPU_START,1,partition=0,worker=gpu0,slot=0,device=0
TIMELINE,500.000,GPU_END,1,partition=0,worker=gpu0,slot=0,device=0,prove_ms=100.000,kernel_ms=90.000
TIMELINE,500.000,PROOF_DONE,1,partition=0,total_ms=500.000
TIMELINE,500.000,JOB_DONE,1,state=done
)"));
  ASSERT_EQ(w.devices.size(), 1u);
  EXPECT_DOUBLE_EQ(w.devices[0].idle_waiting_synth_ms, 100);
  EXPECT_DOUBLE_EQ(w.devices[0].idle_ready_ms, 300);
  EXPECT_DOUBLE_EQ(w.devices[0].busy_ms, 100);
}

TEST(Timeline, WaterfallSlotWaitsPerWorkerAndJob) {
  auto w = tlc::analyze(parse(kSlotWaits));
  EXPECT_DOUBLE_EQ(w.span_ms, 3500);
  const auto& s0 = lane(w, "synth0");
  const auto& s1 = lane(w, "synth1");
  EXPECT_DOUBLE_EQ(ms(s0, State::SlotWait), 1000);
  EXPECT_DOUBLE_EQ(ms(s1, State::SlotWait), 900);
  EXPECT_DOUBLE_EQ(ms(s0, State::NoWork), 1500);
  EXPECT_DOUBLE_EQ(ms(s1, State::NoWork), 2000);
  EXPECT_DOUBLE_EQ(ms(job(w, "1"), State::SlotWait), 1000);  // synth1's wait ended without a job
  ASSERT_EQ(w.devices.size(), 1u);
  EXPECT_DOUBLE_EQ(w.devices[0].busy_ms, 3000);
  EXPECT_DOUBLE_EQ(w.devices[0].idle_waiting_synth_ms, 500);
  EXPECT_DOUBLE_EQ(w.devices[0].idle_ready_ms, 0);
  std::ostringstream out;
  tlc::render_waterfall(w, out, 35);
  std::string s = out.str();
  // 35 buckets of 0.1 s: synth0 works 5, waits for a slot 10, works 5, then has no work.
  EXPECT_NE(s.find("synth0 |#####wwwwwwwwww#####...............|"), std::string::npos) << s;
  EXPECT_NE(s.find("synth1 |######wwwwwwwww....................|"), std::string::npos) << s;
}

TEST(Timeline, WaterfallTellsKeyLoadingFromPickupLatency) {
  auto w = tlc::analyze(parse(kRestart));
  ASSERT_EQ(w.devices.size(), 1u);
  const auto& d = w.devices[0];
  EXPECT_DOUBLE_EQ(w.start_ms, 0);
  EXPECT_DOUBLE_EQ(d.idle_starting_ms, 8400);
  EXPECT_DOUBLE_EQ(d.idle_ready_ms, 0);
  EXPECT_DOUBLE_EQ(d.idle_waiting_synth_ms, 5);  // recovered work outstanding before the worker spawned
  EXPECT_DOUBLE_EQ(d.busy_ms, 1000);
  EXPECT_DOUBLE_EQ(ms(job(w, "7"), State::Starting), 8400);
  EXPECT_EQ(job(w, "7").proofs, 1u);
  const auto& s0 = lane(w, "synth0");
  EXPECT_DOUBLE_EQ(ms(s0, State::Starting), 15);
  std::ostringstream out;
  tlc::render_waterfall(w, out);
  EXPECT_NE(out.str().find("worker starting (loading keys) 8.400 s"), std::string::npos) << out.str();
}

TEST(Timeline, WaterfallCountsALoadOfAKeyThatWasNotResident) {
  auto w = tlc::analyze(parse(kKeySwitch));
  ASSERT_EQ(w.devices.size(), 1u);
  const auto& d = w.devices[0];
  EXPECT_DOUBLE_EQ(d.busy_ms, 2000);
  EXPECT_DOUBLE_EQ(d.idle_key_load_ms, 300);  // not pickup latency, though a READY slot waited
  EXPECT_DOUBLE_EQ(d.idle_ready_ms, 0);
  EXPECT_DOUBLE_EQ(d.steady.idle[size_t(State::KeyLoad)], 300);
  EXPECT_DOUBLE_EQ(ms(job(w, "2"), State::KeyLoad), 300);  // charged to the job whose key it was
  std::ostringstream out;
  tlc::render_waterfall(w, out, 24);
  EXPECT_NE(out.str().find("loading a key 0.300 s"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("kkk"), std::string::npos) << out.str();
  // The load's parts, and the upload's rate.
  EXPECT_EQ(d.key_loads.loads, 1u);
  EXPECT_DOUBLE_EQ(d.key_loads.upload_ms, 50);
  EXPECT_NE(out.str().find("key loads 1, 0.300 s: file 0.120 s, prepare 0.080 s, upload 0.050 s (2.0 GB, 40.00 GB/s), "
                           "checks 0.005 s, tables 0.040 s"),
            std::string::npos)
      << out.str();
}

TEST(Timeline, WaterfallCountsAWorkerDownAndRestarting) {
  auto w = tlc::analyze(parse(kCrash));
  ASSERT_EQ(w.devices.size(), 1u);
  const auto& d = w.devices[0];
  EXPECT_DOUBLE_EQ(d.busy_ms, 900 + 1000);
  EXPECT_DOUBLE_EQ(d.idle_down_ms, 1000);
  EXPECT_DOUBLE_EQ(d.idle_starting_ms, 2000);
  EXPECT_DOUBLE_EQ(d.idle_ready_ms, 0);
  EXPECT_DOUBLE_EQ(d.idle_waiting_synth_ms, 100);
  EXPECT_EQ(d.proofs, 1u);
  EXPECT_DOUBLE_EQ(ms(job(w, "1"), State::Down), 1000);
}

TEST(Timeline, WaterfallAcrossADaemonRestart) {
  auto w = tlc::analyze(parse(kTwoRuns));
  EXPECT_DOUBLE_EQ(w.start_ms, 10);
  EXPECT_DOUBLE_EQ(w.end_ms, 6500);
  EXPECT_EQ(w.proofs, 1u);
  ASSERT_EQ(w.devices.size(), 1u);
  const auto& d = w.devices[0];
  EXPECT_DOUBLE_EQ(d.idle_waiting_synth_ms, 100);
  EXPECT_DOUBLE_EQ(d.idle_down_ms, 5000 - 110);    // the daemon was gone
  EXPECT_DOUBLE_EQ(d.idle_starting_ms, 1000);      // the new GPU worker loading its keys
  EXPECT_DOUBLE_EQ(d.idle_ready_ms, 0);
  EXPECT_DOUBLE_EQ(d.busy_ms, 500);
  EXPECT_EQ(d.proofs, 1u);
}

TEST(Timeline, WaterfallSvg) {
  auto w = tlc::analyze(parse(kGpuWaits));
  std::ostringstream out;
  tlc::render_svg(w, out);
  const std::string s = out.str();
  ASSERT_EQ(s.rfind("<?xml", 0), 0u) << s.substr(0, 200);
  EXPECT_EQ(s.substr(s.size() - 7), "</svg>\n");
  std::string why;
  EXPECT_TRUE(balanced_xml(s, why)) << why;
  EXPECT_NE(s.find("2 proofs in 3.300 s, 1.650 s/proof, GPU busy 60.6% (kernels 45.5%)"), std::string::npos);
  for (const char* label : {">synth0<", ">gpu0 (device 0)<", ">busy 60.6%, kernels 45.5%<", ">witness<", ">eval<",
                            ">slot wait<", ">kernels busy (share of the proof)<", ">waiting on synthesis<",
                            ">slot ready (pickup latency)<", ">worker starting (loading keys)<", ">worker down<",
                            ">no work<", ">0.0 s<", ">3.0 s<"})
    EXPECT_NE(s.find(label), std::string::npos) << label;
  // The 300 ms wait on the GPU lane (the second): 300 / 3300 of the 1006-pixel plot, from 2000 / 3300.
  EXPECT_NE(s.find("<rect x=\"779.70\" y=\"108.0\" width=\"91.45\" height=\"30.0\" fill=\"#e15759\"><title>waiting on "
                   "synthesis: 0.300 s</title></rect>"),
            std::string::npos)
      << s;
  // The second proof's kernel band: 600 of its 1000 ms.
  EXPECT_NE(s.find("width=\"182.91\" height=\"13.5\" fill=\"#5b2a7e\""), std::string::npos) << s;
  EXPECT_NE(s.find("<title>proof job 2 p0: 1000.0 ms, kernels busy 600.0 ms (60%)</title>"), std::string::npos);
  EXPECT_NE(s.find("<title>synthesis job 2 p0: 1300.0 ms (witness 500.0 ms, eval 700.0 ms)</title>"),
            std::string::npos);
}

TEST(Timeline, WaterfallSvgEscapesNames) {
  std::string log = kGpuWaits;
  for (size_t at; (at = log.find("worker=synth0")) != std::string::npos;) log.replace(at, 13, "worker=synth<&>");
  auto w = tlc::analyze(parse(log.c_str()));
  std::ostringstream out;
  tlc::render_svg(w, out);
  EXPECT_NE(out.str().find(">synth&lt;&amp;&gt;<"), std::string::npos);
  std::string why;
  EXPECT_TRUE(balanced_xml(out.str(), why)) << why;
}
