// The supervisor's two rule tables, without processes: which worker state may follow which
// (workers.cpp), and what crash repair does by worker kind and slot state (crash_repair.cpp); what
// a worker sent before its exit, read before its task is repaired. And the rule that the
// supervisor's own code collects only the exits of the processes it started.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "supervisor/crash_repair.hpp"
#include "supervisor/workers.hpp"
#include "witness/build.hpp"

using namespace cuzk::sup;
using cuzk::shm::SlotState;

namespace {

constexpr WorkerState kStates[] = {WorkerState::Starting, WorkerState::Idle,   WorkerState::Busy,
                                   WorkerState::Exited,   WorkerState::Backoff, WorkerState::Failed,
                                   WorkerState::Stopped};
constexpr SlotState kSlotStates[] = {SlotState::Free, SlotState::Synthesizing, SlotState::Ready, SlotState::Proving};
constexpr WorkerKind kKinds[] = {WorkerKind::Synth, WorkerKind::Gpu};

}  // namespace

TEST(WorkerState, NamesAreThoseTheApiReports) {
  std::set<std::string> names;
  for (WorkerState s : kStates) names.insert(to_string(s));
  EXPECT_EQ(names, (std::set<std::string>{"starting", "idle", "busy", "exited", "backoff", "failed", "stopped"}));
}

TEST(WorkerState, TheLifeOfAWorker) {
  using S = WorkerState;
  // spawn, ready, a task, its report, a crash, a restart, a config error, the daemon's stop
  const std::pair<S, S> path[] = {{S::Starting, S::Starting}, {S::Starting, S::Idle}, {S::Idle, S::Busy},
                                  {S::Busy, S::Idle},         {S::Idle, S::Busy},     {S::Busy, S::Exited},
                                  {S::Exited, S::Backoff},    {S::Backoff, S::Starting}, {S::Starting, S::Exited},
                                  {S::Exited, S::Failed},     {S::Failed, S::Stopped}};
  for (auto [from, to] : path) EXPECT_TRUE(transition_allowed(from, to)) << to_string(from) << " -> " << to_string(to);
}

TEST(WorkerState, ChangesTheSchedulerNeverMakes) {
  using S = WorkerState;
  const std::pair<S, S> never[] = {
      {S::Busy, S::Busy},        // a second task to a busy worker
      {S::Starting, S::Busy},    // a task before the worker said Hello
      {S::Backoff, S::Idle},     // work for a worker with no process
      {S::Exited, S::Idle},      {S::Exited, S::Starting},  // respawned without the backoff
      {S::Failed, S::Starting},  {S::Failed, S::Backoff},   // a failed worker is not restarted
      {S::Stopped, S::Starting}, {S::Stopped, S::Backoff},  // nor a stopped one
      {S::Idle, S::Stopped},     {S::Busy, S::Stopped},     // a running worker stops through its exit
      {S::Idle, S::Failed},      {S::Busy, S::Backoff},
  };
  for (auto [from, to] : never) EXPECT_FALSE(transition_allowed(from, to)) << to_string(from) << " -> " << to_string(to);
}

TEST(WorkerState, OnlyIdleAndBusyAreUp) {
  for (WorkerState s : kStates)
    EXPECT_EQ(is_up(s), s == WorkerState::Idle || s == WorkerState::Busy) << to_string(s);
}

TEST(CrashRepair, OneRowPerKindAndSlotState) {
  std::set<std::pair<WorkerKind, SlotState>> keys;
  for (const RepairRule& r : repair_table()) {
    EXPECT_TRUE(keys.insert({r.kind, r.slot}).second) << "two rows for one key";
    EXPECT_NE(std::string(r.reason), "");
    EXPECT_NE(r.action, Repair::Nothing);
    EXPECT_NE(r.action, Repair::Release);
    const bool requeues = r.action == Repair::Resynthesize || r.action == Repair::CompleteFromResults;
    EXPECT_EQ(std::string(r.requeue_why).empty(), !requeues) << r.reason;
  }
  EXPECT_EQ(keys.size(), std::size(kKinds) * std::size(kSlotStates));
}

TEST(CrashRepair, TheLookupReturnsTheRow) {
  for (WorkerKind k : kKinds)
    for (SlotState s : kSlotStates) {
      const RepairRule r = repair_rule(k, s, true, true);
      EXPECT_EQ(r.kind, k);
      EXPECT_EQ(r.slot, s);
    }
}

TEST(CrashRepair, WorkIsRedoneFromTheFurthestIntactStep) {
  using K = WorkerKind;
  EXPECT_EQ(repair_rule(K::Synth, SlotState::Synthesizing, true, true).action, Repair::Resynthesize);
  EXPECT_EQ(repair_rule(K::Synth, SlotState::Free, true, true).action, Repair::Resynthesize);
  EXPECT_EQ(repair_rule(K::Synth, SlotState::Ready, true, true).action, Repair::AdoptSynthesis);
  EXPECT_EQ(repair_rule(K::Gpu, SlotState::Ready, true, true).action, Repair::ProveAgain);
  EXPECT_EQ(repair_rule(K::Gpu, SlotState::Proving, true, true).action, Repair::ProveAgain);
  EXPECT_EQ(repair_rule(K::Gpu, SlotState::Free, true, true).action, Repair::CompleteFromResults);
  EXPECT_STREQ(repair_rule(K::Synth, SlotState::Synthesizing, true, true).requeue_why, "died during synthesis");
  EXPECT_STREQ(repair_rule(K::Gpu, SlotState::Free, true, true).requeue_why, "died after freeing its slot");
}

TEST(CrashRepair, AnotherTasksSlotIsLeftAloneAndAnEndedJobsSlotFreed) {
  for (WorkerKind k : kKinds)
    for (SlotState s : kSlotStates) {
      EXPECT_EQ(repair_rule(k, s, false, true).action, Repair::Nothing);
      EXPECT_EQ(repair_rule(k, s, false, false).action, Repair::Nothing);
      EXPECT_EQ(repair_rule(k, s, true, false).action, Repair::Release);
    }
}

TEST(CrashRepair, ADamagedSlotWordTrustsNothingInTheSlot) {
  const SlotState damaged = SlotState(7);
  EXPECT_EQ(repair_rule(WorkerKind::Synth, damaged, true, true).action, Repair::Resynthesize);
  EXPECT_EQ(repair_rule(WorkerKind::Gpu, damaged, true, true).action, Repair::CompleteFromResults);
  EXPECT_EQ(repair_rule(WorkerKind::Gpu, damaged, true, true).slot, damaged);
}

// A worker that reports a task and exits at once: its exit is handled with the report still in its
// channel. The report is read first and handled as a report; only the task it still held is
// returned for crash repair, and a message of an older epoch is dropped.
TEST(WorkerExit, WhatTheWorkerSentBeforeItsExitIsReadFirst) {
  int fds[2];
  cuzk::shm::make_socketpair(fds);
  Worker w;
  w.kind = WorkerKind::Gpu, w.id = 3, w.epoch = 2, w.name = "gpu0";
  w.channel = std::make_unique<cuzk::shm::Channel>(fds[0], true);
  w.state = WorkerState::Busy;
  w.tasks = {Task{11, 0, 1, 0}, Task{12, 1, 2, 0}};
  auto send = [&](uint32_t epoch, uint64_t job, uint32_t partition) {
    cuzk::shm::Msg m = cuzk::shm::Msg::prove_done({job, partition, 0, 0, 0}, cuzk::shm::kOk, 1, "");
    m.worker = 3, m.epoch = epoch;
    ASSERT_EQ(::send(fds[1], &m, sizeof m, 0), ssize_t(sizeof m));
  };
  send(2, 11, 0);  // its report of the first task
  send(1, 12, 1);  // an older epoch's: not this process's
  ::close(fds[1]);  // the process is gone
  std::vector<uint64_t> reported;
  const std::vector<Task> held = Workers::exited(w, [&](const cuzk::shm::Msg& m) {
    reported.push_back(m.body.prove_done.work.job);
    Workers::end_task(w, m.body.prove_done.work.job, m.body.prove_done.work.partition, "reported");
  });
  EXPECT_EQ(reported, std::vector<uint64_t>{11});
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].job, 12u);
  EXPECT_EQ(w.state, WorkerState::Exited);
  EXPECT_EQ(w.channel, nullptr);
  EXPECT_TRUE(w.tasks.empty());
}

// The supervisor builds witness generators (a circuit added at run time, a reload's check) while
// its workers, children of the same process, run and are collected by libuv. A build waits for its
// own compiler processes alone: another child's exit stays for its parent to collect. The other
// child here has exited before the build starts, so a build that waited for any child would take
// its exit first.
TEST(SupervisorChildren, BuildingAGeneratorLeavesAnotherChildsExitToItsParent) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("cuzk-build-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path src = dir / "c_cpp";
  fs::create_directories(src);
  for (const char* f : {"c.dat", "c.cpp", "calcwit.cpp", "calcwit.hpp", "circom.hpp", "fr.cpp", "fr.hpp", "fr.asm",
                        "main.cpp"})
    std::ofstream(src / f) << "#error not circom output\n";
  const pid_t other = ::fork();
  ASSERT_GE(other, 0);
  if (other == 0) ::_exit(7);
  siginfo_t si{};
  ASSERT_EQ(::waitid(P_PID, id_t(other), &si, WEXITED | WNOWAIT), 0);  // exited, not collected
  EXPECT_THROW(cuzk::witness::build_generator(src.string(), (dir / "out").string(), (dir / "cache").string()),
               cuzk::witness::WitnessError);
  int st = 0;
  EXPECT_EQ(::waitpid(other, &st, WNOHANG), other) << "the build collected the exit of a process it did not start";
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 7);
  fs::remove_all(dir);
}
