// What happens to a partition after its work: the workers' reports (SynthDone, ProveDone), retries
// up to kMaxAttempts, completion from the result files, and the end of a job, done, failed or
// cancelled.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "shm/results.hpp"
#include "supervisor/helpers.hpp"
#include "supervisor/supervisor.hpp"
#include "timeline/events.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuzk::sup {

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string kv_of(const Worker& w, uint32_t partition, uint32_t slot, int device) {
  return tl::Kv()
      .add(tl::kPartition, partition)
      .add(tl::kWorker, w.name)
      .add(tl::kSlot, slot)
      .add(tl::kDevice, device)
      .str();
}

}  // namespace

void Supervisor::synthesis_ready(const Worker& w, ActiveJob& j, Device& d, uint32_t p, uint32_t slot) {
  parts_.set_state(j, p, PState::Ready);
  d.slots[slot].phase = SlotUse::Ready;
  j.times[p].ready = shm::monotonic_ns();
  event(tl::kSlotReady, j.rec.id, kv_of(w, p, slot, d.id));
}

void Supervisor::on_synth_done(Worker& w, const shm::Msg& m) {
  const std::optional<Task> t = Workers::end_task(w, m.job, m.partition, "synthesis reported");
  if (!t) return;
  Device* d = device(t->device);
  ActiveJob* j = parts_.find(m.job);
  const uint32_t slot = t->slot;
  if (!j || is_final(j->rec.state) || !queue_->holds(*j, m.partition)) {
    // Cancelled, failed or (a shared store) taken by another node meanwhile: whatever the worker
    // left, the slot is ours to free.
    if (d) parts_.release_slot(d->id, slot);
    schedule();
    return;
  }
  j->times[m.partition].synth_ms = m.ms[0];
  synth_sum_s_ += m.ms[0] / 1000, synth_count_++;
  if (m.status == shm::kOk) {
    if (m.flags & shm::kMsgWitnessProgram) witness_program_++;
    if (m.flags & shm::kMsgWitnessNative) witness_native_++;
    if (m.flags & shm::kMsgWitnessFallback) witness_fallback_++;
    if (!d || d->seg->state(slot) != shm::SlotState::Ready) {
      if (d) parts_.release_slot(d->id, slot);
      requeue(m.job, m.partition, "slot was not READY after synthesis", true);
    } else {
      synthesis_ready(w, *j, *d, m.partition, slot);
    }
  } else {
    if (d) parts_.release_slot(d->id, slot);
    if (m.status == shm::kBadInput) fail_job(*j, m.partition, m.text);
    else if (m.status == shm::kCancelled) requeue(m.job, m.partition, "cancelled by the worker", false);
    else requeue(m.job, m.partition, std::string(w.name) + ": " + m.text, true);
  }
  schedule();
}

void Supervisor::on_prove_done(Worker& w, const shm::Msg& m) {
  const std::optional<Task> t = Workers::end_task(w, m.job, m.partition, "proof reported");
  if (!t) return;
  Device* d = device(t->device);
  ActiveJob* j = parts_.find(m.job);
  const uint32_t slot = t->slot;
  if (!j || is_final(j->rec.state) || !queue_->holds(*j, m.partition)) {
    if (d && d->seg->state(slot) != shm::SlotState::Proving) parts_.release_slot(d->id, slot);
    schedule();
    return;
  }
  if (m.status == shm::kOk) {
    if (d) {
      d->slots[slot] = SlotUse{};  // the worker has set it FREE
      // The device's next READY slot goes out first: the bookkeeping below (the store, reading the
      // result files, a finished job's clean-up) then runs while the GPU proves, not before.
      key_order(*d);
      dispatch_proofs(*d);
    }
    j->times[m.partition].prove_ms = m.ms[0];
    prove_sum_s_ += m.ms[0] / 1000;
    complete_partition(*j, m.partition, m.text);
  } else if (m.status == shm::kFailed && d && d->seg->state(slot) == shm::SlotState::Ready) {
    // Prove again from the same slot (the worker restarts itself after a device error).
    d->slots[slot].phase = SlotUse::Ready;
    auto& p = j->rec.parts[m.partition];
    if (const std::string why = state_write_problem(); !why.empty()) {
      // The results could not be written (no space, a read-only or unwritable folder): not the
      // partition's fault. Its slot stays READY, and proving waits until writes succeed again
      // (check_disk_space).
      note_disk_full("a proof's result files could not be written (" + why + ")", state_low_space());
      schedule();
      return;
    }
    p.attempts++;
    p.error = m.text;
    if (p.attempts >= kMaxAttempts) {
      parts_.release_slot(d->id, slot);
      fail_job(*j, m.partition, std::string("proving failed ") + std::to_string(p.attempts) + " times: " + m.text);
    } else {
      parts_.set_state(*j, m.partition, PState::Ready);
    }
  } else {
    if (d) parts_.release_slot(d->id, slot);
    if (m.status == shm::kBadInput) fail_job(*j, m.partition, m.text);
    else requeue(m.job, m.partition, std::string(w.name) + ": " + m.text, m.status != shm::kCancelled);
  }
  schedule();
}

void Supervisor::requeue(uint64_t job, uint32_t p, const std::string& why, bool count_attempt) {
  ActiveJob* j = parts_.find(job);
  if (!j || is_final(j->rec.state) || !queue_->holds(*j, p)) return;
  PartitionRec& pr = j->rec.parts[p];
  if (count_attempt) pr.attempts++;
  pr.error = why;
  if (pr.attempts >= kMaxAttempts) return fail_job(*j, p, "gave up after " + std::to_string(pr.attempts) +
                                                            " attempts; last: " + why);
  spdlog::info("job {} partition {}: requeued ({})", job, p, why);
  queue_->requeue(*j, p);
}

void Supervisor::complete_partition(ActiveJob& j, uint32_t p, const std::string& result_dir) {
  PartitionRec& pr = j.rec.parts[p];
  try {
    pr.proof = read_file(shm::proof_file(result_dir, p));
    pr.pub = read_file(shm::public_file(result_dir, p));
  } catch (const std::exception& e) {
    return requeue(j.rec.id, p, std::string("result lost: ") + e.what(), true);
  }
  const PartTimes& t = j.times[p];
  const uint64_t now = shm::monotonic_ns();
  auto ms = [](uint64_t a, uint64_t b) { return a && b > a ? double(b - a) / 1e6 : 0.0; };
  json tj = {{"queue_ms", ms(t.queued, t.synth_start)},
             {"synth_ms", t.synth_ms},
             {"wait_ms", ms(t.ready, t.prove_start)},
             {"prove_ms", t.prove_ms},
             {"total_ms", ms(t.queued, now)}};
  pr.timings = tj.dump();
  pr.error.clear();
  const std::string done_kv = tl::Kv().add(tl::kPartition, p).ms(tl::kTotalMs, ms(t.queued, now)).str();
  pr.state = PState::Done;
  queue_->done(j, p, done_kv);
}

void Supervisor::fail_job(ActiveJob& j, uint32_t p, const std::string& why) {
  j.rec.parts[p].error = why;
  parts_failed_++;
  event(tl::kPartitionFailed, j.rec.id, tl::Kv().add(tl::kPartition, p).add(tl::kReason, why).str());
  spdlog::warn("job {} partition {} failed: {}", j.rec.id, p, why);
  j.rec.parts[p].state = PState::Failed;
  queue_->fail(j, p, why);
}

// Removing a job's copies of its witnesses (hundreds of MB at 2^22) can block for hundreds of ms
// while the disk is busy, so it runs on the thread pool: on the loop it held up every report.
void Supervisor::remove_job_files(const ActiveJob& j) {
  struct Removal {
    uv_work_t req{};
    Supervisor* self;
    std::vector<fs::path> dirs;
  };
  auto* w = new Removal{{}, this, {shm::job_results(cfg_.daemon.state_dir, j.rec.id)}};
  if (!j.upload_dir.empty()) w->dirs.emplace_back(j.upload_dir);
  w->req.data = w;
  removals_++;
  uv_queue_work(
      loop_, &w->req,
      [](uv_work_t* q) {
        std::error_code ec;
        for (const auto& d : static_cast<Removal*>(q->data)->dirs) fs::remove_all(d, ec);
      },
      [](uv_work_t* q, int) {
        std::unique_ptr<Removal> w(static_cast<Removal*>(q->data));
        w->self->removals_--;
        w->self->maybe_finish_shutdown();
      });
}

}  // namespace cuzk::sup
