// Partitions without processes: a partition into its slot, the workers' reports on it (READY,
// proved, retried, failed), stale reports and stops, against a real slot ring and a queue that
// records what it is told.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "shm/results.hpp"
#include "supervisor/crash_repair.hpp"
#include "supervisor/partitions.hpp"

using namespace cuzk::sup;
using cuzk::shm::SlotState;
namespace fs = std::filesystem;
namespace shm = cuzk::shm;

namespace {

// What the partitions told the queue, in order. Like the local queue, a requeue queues the
// partition again here.
struct RecordingQueue final : Queue {
  Partitions* parts = nullptr;
  bool holding = true;  // every partition is this node's
  std::vector<std::string> told;

  void submit(const Submission&, Reply) override {}
  void get(uint64_t, double, const Viewer&, Reply) override {}
  void cancel(uint64_t, const Viewer&, Reply) override {}
  bool holds(const ActiveJob&, uint32_t) const override { return holding; }
  void progress(ActiveJob& j, uint32_t p, bool job_started) override {
    told.push_back("progress " + std::to_string(p) + " " + to_string(j.rec.parts[p].state) +
                   (job_started ? ", job running" : ""));
  }
  void requeue(ActiveJob& j, uint32_t p) override {
    told.push_back("requeue " + std::to_string(p));
    parts->set_state(j, p, PState::Queued);
    parts->enqueue(j, p);
  }
  void done(ActiveJob&, uint32_t p, const std::string&) override { told.push_back("done " + std::to_string(p)); }
  void fail(ActiveJob&, uint32_t p, const std::string& why) override {
    told.push_back("fail " + std::to_string(p) + ": " + why);
  }
  void want_work() override {}
};

class PartitionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_dir_ = fs::temp_directory_path() / ("cuzk-partitions-" + std::to_string(::getpid()));
    fs::create_directories(shm::results_root(state_dir_.string()));
    fs::create_directories(state_dir_ / "uploads");
    state_ = std::make_unique<StateFolder>(state_dir_.string());
    Device d;
    d.id = 0;
    d.seg = shm::Segment::create("ptest" + std::to_string(::getpid()), 0, 3, 16, 16);
    d.slots.resize(3);
    devices_.push_back(std::move(d));
    parts_ = std::make_unique<Partitions>(devices_, *state_, timeline_);
    queue_.parts = parts_.get();
    parts_->attach(queue_, [this](Device& d) { next_(d); });
    synth_.kind = WorkerKind::Synth, synth_.id = 1, synth_.epoch = 4, synth_.name = "synth0";
    gpu_.kind = WorkerKind::Gpu, gpu_.id = 2, gpu_.epoch = 7, gpu_.name = "gpu0";
  }
  void TearDown() override {
    devices_.clear();
    shm::Segment::remove("ptest" + std::to_string(::getpid()), 0);
    fs::remove_all(state_dir_);
  }

  // A job of n partitions, all queued.
  ActiveJob& add_job(uint64_t id, uint32_t n) {
    ActiveJob j;
    j.rec.id = id;
    for (uint32_t i = 0; i < n; i++) {
      PartitionRec p;
      p.index = i;
      j.rec.parts.push_back(p);
    }
    return parts_->add(std::move(j));
  }
  shm::Segment& seg() { return *devices_[0].seg; }
  // The first queued partition into slot s, as the scheduler sends it; the task the worker holds.
  Task synthesize(uint32_t s) {
    ActiveJob* j = parts_->synthesize(parts_->pending().begin(), devices_[0], s, synth_);
    EXPECT_NE(j, nullptr);
    return {j->rec.id, devices_[0].slots[s].partition, s, 0};
  }
  // A worker's report on task t: a synthesis's, a proof's.
  static shm::SynthDone synthesis(const Task& t, int32_t status, const std::string& error = "") {
    return shm::Msg::synth_done(work(t), status, shm::WitnessEngine::None, 5, 0, 0, error).body.synth_done;
  }
  static shm::ProveDone proof(const Task& t, int32_t status, const std::string& error = "") {
    return shm::Msg::prove_done(work(t), status, 5, error).body.prove_done;
  }
  static shm::SlotWork work(const Task& t) { return {t.job, t.partition, t.slot, 0, t.device}; }
  // The synthesis worker's side: the slot written and READY, then its report.
  void synthesis_reported(const Task& t) {
    ASSERT_TRUE(seg().transition(t.slot, SlotState::Synthesizing, SlotState::Ready));
    parts_->synthesized(synth_, t, synthesis(t, shm::kOk));
  }
  // The scheduler's side of a proof: the slot handed to the GPU worker.
  void prove(const Task& t) {
    ActiveJob* j = parts_->find(t.job);
    devices_[0].slots[t.slot].phase = SlotUse::Proving;
    parts_->set_state(*j, t.partition, PState::Proving);
    ASSERT_TRUE(seg().transition(t.slot, SlotState::Ready, SlotState::Proving));
  }
  // A job of one partition, synthesized into slot 0 and handed to the GPU worker.
  Task proving(uint64_t id) {
    add_job(id, 1);
    const Task t = synthesize(0);
    synthesis_reported(t);
    prove(t);
    return t;
  }
  // A new job's partition goes into slot s, as dispatch gives it only a FREE slot.
  void expect_slot_reused(uint32_t s) {
    ASSERT_FALSE(devices_[0].slots[s].used);
    ASSERT_EQ(seg().state(s), SlotState::Free) << "dispatch would never use the slot again";
    add_job(next_job_, 1);
    const Task t = synthesize(s);
    EXPECT_EQ(t.job, next_job_++);
    EXPECT_EQ(seg().state(s), SlotState::Synthesizing);
  }
  // The GPU worker's side of a proof: result files written under the job's folder, the slot FREE.
  std::string proof_written(const Task& t) {
    const fs::path dir = shm::job_results(state_dir_.string(), t.job);
    fs::create_directories(dir);
    std::ofstream(shm::proof_file(dir, t.partition)) << "{\"pi_a\":1}";
    std::ofstream(shm::public_file(dir, t.partition)) << "[\"7\"]";
    seg().force(t.slot, SlotState::Free);
    return dir.string();
  }

  fs::path state_dir_;
  std::unique_ptr<StateFolder> state_;
  std::vector<Device> devices_;
  Timeline timeline_{0};  // opened nowhere
  std::unique_ptr<Partitions> parts_;
  RecordingQueue queue_;
  Worker synth_, gpu_;
  uint64_t next_job_ = 1000;
  // What the device's refill (prove_next) found each time: slot 0 free or not, and the last thing
  // the queue had been told by then.
  std::vector<std::string> refills_;
  std::function<void(Device&)> next_ = [this](Device& d) {
    refills_.push_back(std::string(d.slots[0].used ? "slot used" : "slot free") + ", " + queue_.told.back());
  };
};

}  // namespace

TEST_F(PartitionsTest, APartitionIsStoredSynthesizingBeforeItsSlotIsWritten) {
  ActiveJob& j = add_job(11, 2);
  ASSERT_EQ(parts_->pending().size(), 2u);
  const Task t = synthesize(1);
  EXPECT_EQ(t.partition, 0u);
  EXPECT_EQ(parts_->pending().size(), 1u);
  EXPECT_EQ(queue_.told, (std::vector<std::string>{"progress 0 synthesizing, job running"}));
  EXPECT_EQ(j.rec.state, JState::Running);
  EXPECT_EQ(seg().state(1), SlotState::Synthesizing);
  EXPECT_EQ(seg().slot(1).owner_worker, synth_.id);
  EXPECT_EQ(seg().slot(1).owner_epoch, synth_.epoch);
  EXPECT_EQ(seg().slot(1).job, 11u);
  EXPECT_TRUE(devices_[0].slots[1].used);
  // The job runs already: its second partition does not start it again.
  synthesize(2);
  EXPECT_EQ(queue_.told.back(), "progress 1 synthesizing");
}

TEST_F(PartitionsTest, AQueuedEntryOfAnEndedJobIsDropped) {
  ActiveJob& j = add_job(12, 1);
  j.rec.state = JState::Cancelled;
  EXPECT_EQ(parts_->synthesize(parts_->pending().begin(), devices_[0], 0, synth_), nullptr);
  EXPECT_TRUE(parts_->pending().empty());
  EXPECT_EQ(seg().state(0), SlotState::Free);
  EXPECT_TRUE(queue_.told.empty());
}

TEST_F(PartitionsTest, AReadySlotWaitsForTheGpuThenTheProofCompletesThePartition) {
  ActiveJob& j = add_job(13, 1);
  const Task t = synthesize(0);
  synthesis_reported(t);
  EXPECT_EQ(j.rec.parts[0].state, PState::Ready);
  EXPECT_EQ(devices_[0].slots[0].phase, SlotUse::Ready);
  EXPECT_EQ(parts_->stats().synth_count, 1u);
  prove(t);
  proof_written(t);
  parts_->proved(gpu_, t, proof(t, shm::kOk));
  // The device is refilled with the slot free and before the partition's bookkeeping.
  EXPECT_EQ(refills_, (std::vector<std::string>{"slot free, progress 0 proving"}));
  EXPECT_EQ(queue_.told.back(), "done 0");
  EXPECT_EQ(j.rec.parts[0].state, PState::Done);
  EXPECT_EQ(j.rec.parts[0].proof, "{\"pi_a\":1}");
  EXPECT_EQ(j.rec.parts[0].pub, "[\"7\"]");
  EXPECT_NE(j.rec.parts[0].timings.find("\"total_ms\""), std::string::npos);
  EXPECT_FALSE(devices_[0].slots[0].used);
}

TEST_F(PartitionsTest, AProofWhoseResultFilesAreGoneIsSynthesizedAgain) {
  const Task t = proving(14);
  ActiveJob& j = *parts_->find(14);
  seg().force(t.slot, SlotState::Free);
  parts_->proved(gpu_, t, proof(t, shm::kOk));  // its result files were never written
  EXPECT_EQ(j.rec.parts[0].state, PState::Queued);
  EXPECT_EQ(j.rec.parts[0].attempts, 1u);
  EXPECT_NE(j.rec.parts[0].error.find("result lost"), std::string::npos);
  EXPECT_EQ(parts_->pending().size(), 1u);
}

TEST_F(PartitionsTest, ASynthesisThatLeftItsSlotNotReadyCountsAnAttempt) {
  ActiveJob& j = add_job(15, 1);
  const Task t = synthesize(0);
  parts_->synthesized(synth_, t, synthesis(t, shm::kOk));  // slot still SYNTHESIZING
  EXPECT_EQ(seg().state(0), SlotState::Free);
  EXPECT_FALSE(devices_[0].slots[0].used);
  EXPECT_EQ(j.rec.parts[0].state, PState::Queued);
  EXPECT_EQ(j.rec.parts[0].attempts, 1u);
  EXPECT_EQ(queue_.told.back(), "progress 0 queued");
}

TEST_F(PartitionsTest, BadInputFailsTheJobAtOnce) {
  add_job(16, 1);
  const Task t = synthesize(0);
  seg().force(t.slot, SlotState::Free);
  parts_->synthesized(synth_, t, synthesis(t, shm::kBadInput, "constraint 3 is not satisfied"));
  EXPECT_EQ(queue_.told.back(), "fail 0: constraint 3 is not satisfied");
  EXPECT_FALSE(devices_[0].slots[0].used);
}

TEST_F(PartitionsTest, ACancelledSynthesisCountsNoAttempt) {
  ActiveJob& j = add_job(17, 1);
  const Task t = synthesize(0);
  parts_->synthesized(synth_, t, synthesis(t, shm::kCancelled));
  EXPECT_EQ(j.rec.parts[0].state, PState::Queued);
  EXPECT_EQ(j.rec.parts[0].attempts, 0u);
}

TEST_F(PartitionsTest, TheThirdFailedSynthesisFailsTheJob) {
  ActiveJob& j = add_job(18, 1);
  for (int i = 0; i < 2; i++) {
    const Task t = synthesize(0);
    parts_->synthesized(synth_, t, synthesis(t, shm::kFailed, "out of memory"));
    EXPECT_EQ(j.rec.parts[0].state, PState::Queued);
  }
  const Task t = synthesize(0);
  parts_->synthesized(synth_, t, synthesis(t, shm::kFailed, "out of memory"));
  EXPECT_EQ(j.rec.parts[0].attempts, kMaxAttempts);
  EXPECT_EQ(queue_.told.back(), "fail 0: gave up after 3 attempts; last: synth0: out of memory");
}

TEST_F(PartitionsTest, AFailedProofIsProvedAgainFromTheSameSlotThenFails) {
  ActiveJob& j = add_job(19, 1);
  const Task t = synthesize(0);
  synthesis_reported(t);
  for (uint32_t i = 1; i < kMaxAttempts; i++) {
    prove(t);
    seg().force(t.slot, SlotState::Ready);  // the worker gave the slot back
    parts_->proved(gpu_, t, proof(t, shm::kFailed, "device error"));
    EXPECT_EQ(j.rec.parts[0].state, PState::Ready);
    EXPECT_EQ(j.rec.parts[0].attempts, i);
    EXPECT_EQ(devices_[0].slots[0].phase, SlotUse::Ready);
  }
  prove(t);
  seg().force(t.slot, SlotState::Ready);
  parts_->proved(gpu_, t, proof(t, shm::kFailed, "device error"));
  EXPECT_EQ(queue_.told.back(), "fail 0: proving failed 3 times: device error");
  EXPECT_EQ(seg().state(0), SlotState::Free);
  EXPECT_TRUE(refills_.empty());
}

TEST_F(PartitionsTest, AFailedProofWhoseResultsCannotBeWrittenWaitsWithoutAnAttempt) {
  const Task t = proving(20);
  ActiveJob& j = *parts_->find(20);
  seg().force(t.slot, SlotState::Ready);
  fs::remove_all(shm::results_root(state_dir_.string()));
  std::ofstream(shm::results_root(state_dir_.string())) << "not a folder";
  parts_->proved(gpu_, t, proof(t, shm::kFailed, "cannot write the proof"));
  EXPECT_TRUE(state_->full());
  EXPECT_EQ(j.rec.parts[0].attempts, 0u);
  EXPECT_EQ(devices_[0].slots[0].phase, SlotUse::Ready);
  EXPECT_EQ(seg().state(0), SlotState::Ready);
}

TEST_F(PartitionsTest, AReportOnAPartitionNoLongerHeldOnlyFreesTheSlot) {
  ActiveJob& j = add_job(21, 1);
  const Task t = synthesize(0);
  queue_.holding = false;
  const size_t told = queue_.told.size();
  ASSERT_TRUE(seg().transition(t.slot, SlotState::Synthesizing, SlotState::Ready));
  parts_->synthesized(synth_, t, synthesis(t, shm::kOk));
  EXPECT_EQ(queue_.told.size(), told);
  EXPECT_EQ(seg().state(0), SlotState::Free);
  EXPECT_FALSE(devices_[0].slots[0].used);
  EXPECT_EQ(j.rec.parts[0].state, PState::Synthesizing);
}

TEST_F(PartitionsTest, AStaleProofReportFreesItsSlotWhateverItsWord) {
  const Task t = proving(22);
  queue_.holding = false;
  parts_->proved(gpu_, t, proof(t, shm::kOk));  // the word still says PROVING
  EXPECT_EQ(seg().state(0), SlotState::Free);
  EXPECT_FALSE(devices_[0].slots[0].used);
  EXPECT_TRUE(refills_.empty());
  queue_.holding = true;
  expect_slot_reused(0);
}

TEST_F(PartitionsTest, AStaleReportLeavesASlotGivenToAnotherTask) {
  const Task t = proving(25);
  queue_.holding = false;
  devices_[0].slots[0].job = 26;  // the slot is another task's now
  parts_->proved(gpu_, t, proof(t, shm::kOk));
  EXPECT_EQ(seg().state(0), SlotState::Proving);
  EXPECT_TRUE(devices_[0].slots[0].used);
}

// Every slot is FREE once its partition has ended, whatever a crash or a stray write left in its
// state word: dispatch only takes FREE slots, so a slot left otherwise would be lost until restart.
TEST_F(PartitionsTest, TheSlotOfAProvedPartitionIsUsedAgainWhateverItsWordSaid) {
  for (const uint32_t damaged : {uint32_t(SlotState::Proving), uint32_t(SlotState::Ready), 0x5a5a5a5au}) {
    SCOPED_TRACE(damaged);
    const Task t = proving(30 + damaged % 7);
    proof_written(t);
    seg().slot(t.slot).state.store(damaged);
    parts_->proved(gpu_, t, proof(t, shm::kOk));
    EXPECT_EQ(queue_.told.back(), "done 0");
    EXPECT_EQ(refills_.back().substr(0, 9), "slot free");
    EXPECT_EQ(seg().state(t.slot), SlotState::Free);
    expect_slot_reused(t.slot);
    parts_->release_slot(0, t.slot);
  }
}

TEST_F(PartitionsTest, ACrashedGpuWorkersSlotIsUsedAgainWhateverItsWordSaid) {
  // Its results written: the partition completes from them.
  const Task t = proving(40);
  const std::string dir = proof_written(t);
  seg().slot(t.slot).state.store(0x77);
  parts_->recover_proof(t, dir, "gpu0 died after freeing its slot");
  EXPECT_EQ(queue_.told.back(), "done 0");
  EXPECT_EQ(parts_->find(40)->rec.parts[0].state, PState::Done);
  EXPECT_EQ(seg().state(t.slot), SlotState::Free);
  expect_slot_reused(t.slot);
  parts_->release_slot(0, t.slot);
  // None written: the partition is synthesized again, in a slot that is free again too.
  const Task u = proving(42);
  seg().force(u.slot, SlotState::Synthesizing);
  parts_->recover_proof(u, (state_dir_ / "nowhere").string(), "gpu0 died after freeing its slot");
  EXPECT_EQ(parts_->find(42)->rec.parts[0].state, PState::Queued);
  EXPECT_EQ(parts_->find(42)->rec.parts[0].attempts, 0u);
  EXPECT_EQ(parts_->find(42)->rec.parts[0].error, "gpu0 died after freeing its slot");
  EXPECT_EQ(seg().state(u.slot), SlotState::Free);
  EXPECT_FALSE(devices_[0].slots[u.slot].used);
}

TEST_F(PartitionsTest, StoppingAJobFreesItsReadySlotsAndCancelsTheRest) {
  add_job(23, 3);
  const Task a = synthesize(0);
  const Task b = synthesize(1);
  synthesis_reported(b);
  ASSERT_EQ(parts_->pending().size(), 1u);
  parts_->stop(23);
  EXPECT_TRUE(parts_->pending().empty());
  EXPECT_EQ(seg().state(b.slot), SlotState::Free);
  EXPECT_FALSE(devices_[0].slots[b.slot].used);
  EXPECT_EQ(seg().state(a.slot), SlotState::Synthesizing);
  EXPECT_EQ(seg().slot(a.slot).cancel.load(), 1u);
}

TEST_F(PartitionsTest, StoppingOnePartitionLeavesTheOthers) {
  add_job(24, 2);
  const Task a = synthesize(0);
  parts_->stop(24, 1);
  EXPECT_TRUE(parts_->pending().empty());
  EXPECT_EQ(seg().slot(a.slot).cancel.load(), 0u);
}

// Crash repair, row by row: the code that applies each row of the table (Partitions::repair), on a
// task whose worker died with its slot in that row's state. Whatever the row, the slot ends FREE
// (and dispatch can use it again) or READY for the task's partition, never anything else.
class CrashRepairTest : public PartitionsTest {
 protected:
  // The task of a worker of `kind` that died with its slot's word at `word`, its partition's
  // result files written when `results`.
  Task died(WorkerKind kind, uint32_t word, bool results) {
    Task t;
    if (kind == WorkerKind::Synth) {
      add_job(next_job_++, 1);
      t = synthesize(0);
    } else {
      t = proving(next_job_++);
      if (results) proof_written(t);
    }
    seg().slot(t.slot).state.store(word);
    return t;
  }
  const Worker& worker(WorkerKind kind) const { return kind == WorkerKind::Synth ? synth_ : gpu_; }
  // The slot after a repair: READY and used for t's partition, Ready; or FREE, unused and taken by
  // the next synthesis.
  void expect_slot_kept_or_free(const Task& t) {
    const SlotUse& u = devices_[0].slots[t.slot];
    if (u.used) {
      EXPECT_EQ(seg().state(t.slot), SlotState::Ready);
      EXPECT_EQ(u.phase, SlotUse::Ready);
      EXPECT_TRUE(Partitions::holds_slot(devices_[0], t));
      EXPECT_EQ(parts_->find(t.job)->rec.parts[t.partition].state, PState::Ready);
      parts_->release_slot(0, t.slot);
    }
    expect_slot_reused(t.slot);
    parts_->release_slot(0, t.slot);
  }
};

TEST_F(CrashRepairTest, EveryRowLeavesTheSlotFreeOrReadyAndThePartitionWhereTheRowSays) {
  for (const RepairRule& row : repair_table()) {
    for (const bool results : {false, true}) {
      SCOPED_TRACE(std::string(row.kind == WorkerKind::Synth ? "synthesis" : "GPU") + " worker, slot " +
                   shm::to_string(row.slot) + (results ? ", results written" : ""));
      const Task t = died(row.kind, uint32_t(row.slot), results);
      parts_->repair(worker(row.kind), t);
      const PartitionRec& p = parts_->find(t.job)->rec.parts[t.partition];
      switch (row.action) {
        case Repair::Resynthesize: EXPECT_EQ(p.state, PState::Queued); break;
        case Repair::AdoptSynthesis:
        case Repair::ProveAgain: EXPECT_EQ(p.state, PState::Ready); break;
        case Repair::CompleteFromResults: EXPECT_EQ(p.state, results ? PState::Done : PState::Queued); break;
        default: ADD_FAILURE() << "the table has a row that does nothing";
      }
      EXPECT_EQ(p.attempts, 0u) << "a crash counts no attempt";
      if (p.state == PState::Queued) {
        EXPECT_EQ(parts_->pending().size(), 1u);
        parts_->stop(t.job);
      }
      expect_slot_kept_or_free(t);
    }
  }
}

TEST_F(CrashRepairTest, ADamagedSlotWordIsRepairedLikeAWordOfNoUse) {
  for (const WorkerKind kind : {WorkerKind::Synth, WorkerKind::Gpu}) {
    SCOPED_TRACE(kind == WorkerKind::Synth ? "synthesis" : "GPU");
    const Task t = died(kind, 0x5a5a5a5au, true);
    parts_->repair(worker(kind), t);
    EXPECT_EQ(parts_->find(t.job)->rec.parts[t.partition].state, kind == WorkerKind::Synth ? PState::Queued : PState::Done);
    parts_->stop(t.job);
    expect_slot_kept_or_free(t);
  }
}

TEST_F(CrashRepairTest, AnEndedJobsSlotIsFreedAndAnotherTasksSlotLeftAlone) {
  const Task ended = died(WorkerKind::Gpu, uint32_t(SlotState::Proving), false);
  parts_->find(ended.job)->rec.state = JState::Cancelled;
  parts_->repair(gpu_, ended);
  expect_slot_kept_or_free(ended);
  const Task other = died(WorkerKind::Gpu, uint32_t(SlotState::Proving), false);
  devices_[0].slots[other.slot].job = 999;  // the slot was given to another task meanwhile
  parts_->repair(gpu_, other);
  EXPECT_EQ(seg().state(other.slot), SlotState::Proving);
  EXPECT_TRUE(devices_[0].slots[other.slot].used);
}

TEST_F(CrashRepairTest, AFailedGpuWorkersReadySlotsGoBackToSynthesis) {
  const Task t = proving(next_job_++);
  seg().force(t.slot, SlotState::Ready);
  devices_[0].slots[t.slot].phase = SlotUse::Ready;
  parts_->resynthesize_device(devices_[0]);
  EXPECT_EQ(parts_->find(t.job)->rec.parts[t.partition].state, PState::Queued);
  EXPECT_EQ(parts_->find(t.job)->rec.parts[t.partition].attempts, 0u);
  parts_->stop(t.job);
  expect_slot_kept_or_free(t);
}
