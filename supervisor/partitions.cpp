// A partition's life on this node (partitions.hpp): queued, synthesized into a slot, READY, proved
// or retried, done or failed, and the slots it held freed.
#include "supervisor/partitions.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "shm/results.hpp"
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

}  // namespace

ActiveJob& Partitions::add(ActiveJob j) {
  const uint64_t id = j.rec.id;
  j.times.resize(j.rec.parts.size());
  ActiveJob& a = jobs_.insert_or_assign(id, std::move(j)).first->second;
  const uint64_t now = shm::monotonic_ns();
  for (const PartitionRec& p : a.rec.parts)
    if (p.state == PState::Queued) a.times[p.index].queued = now, enqueue(a, p.index);
  return a;
}

ActiveJob* Partitions::synthesize(std::set<Key>::const_iterator it, Device& d, uint32_t slot, const Worker& w) {
  const auto [prio, id, p] = *it;
  pending_.erase(it);
  ActiveJob* j = find(id);
  if (!j || is_final(j->rec.state) || j->rec.parts[p].state != PState::Queued) return nullptr;
  // Told to the store first; a restart queues it again whatever state the store has for it.
  set_state(*j, p, PState::Synthesizing);
  d.seg->assign(slot, {w.id, w.epoch}, id, p, j->circuit);
  d.slots[slot] = SlotUse{true, id, p, SlotUse::Synth};
  j->times[p].synth_start = shm::monotonic_ns();
  return j;
}

shm::SlotWork Partitions::hand_over(ActiveJob& j, Device& d, uint32_t slot, const Worker& g) {
  SlotUse& u = d.slots[slot];
  d.seg->hand_over(slot, {g.id, g.epoch});
  u.phase = SlotUse::Proving;
  j.times[u.partition].prove_start = shm::monotonic_ns();
  return {u.job, u.partition, slot, j.circuit, d.id};
}

void Partitions::set_state(ActiveJob& j, uint32_t p, PState s) {
  j.rec.parts[p].state = s;
  // A job runs from its first partition's synthesis on.
  const bool started = s == PState::Synthesizing && j.rec.state == JState::Queued;
  if (started) j.rec.state = JState::Running;
  queue_->progress(j, p, started);
}

void Partitions::synthesized(const Worker& w, const Task& t, const shm::SynthDone& m) {
  Device* d = device(t.device);
  ActiveJob* j = find(t.job);
  if (!j || is_final(j->rec.state) || !queue_->holds(*j, t.partition)) {
    // Cancelled, failed or (a shared store) taken by another node meanwhile: whatever the worker
    // left, the slot is ours to free.
    if (d) release_slot(d->id, t.slot);
    return;
  }
  j->times[t.partition].synth_ms = m.synth_ms;
  stats_.synth_sum_s += m.synth_ms / 1000, stats_.synth_count++;
  if (m.status == shm::kOk) {
    if (m.engine == shm::WitnessEngine::Program) stats_.witness_program++;
    if (m.engine == shm::WitnessEngine::Native) stats_.witness_native++;
    if (m.engine == shm::WitnessEngine::Fallback) stats_.witness_fallback++;
    if (m.traced) stats_.witness_traced++;
    if (d && d->seg->state(t.slot) == shm::SlotState::Ready) return ready(w, *j, *d, t.partition, t.slot);
    if (d) release_slot(d->id, t.slot);
    return requeue(t.job, t.partition, "slot was not READY after synthesis", true);
  }
  if (d) release_slot(d->id, t.slot);
  if (m.status == shm::kBadInput) fail(*j, t.partition, m.error);
  else if (m.status == shm::kCancelled) requeue(t.job, t.partition, "cancelled by the worker", false);
  else requeue(t.job, t.partition, w.name + ": " + m.error, true);
}

void Partitions::proved(const Worker& w, const Task& t, const shm::ProveDone& m) {
  Device* d = device(t.device);
  ActiveJob* j = find(t.job);
  if (!j || is_final(j->rec.state) || !queue_->holds(*j, t.partition)) {
    // The worker is done with the slot, whatever its word says: freed while it still holds this
    // task (nothing else can have been given a slot this task holds).
    if (d && holds_slot(*d, t)) release_slot(d->id, t.slot);
    return;
  }
  if (m.status == shm::kOk) {
    if (d) {
      // The worker set the slot FREE before its report; set again here, so that a word a crash or
      // a stray write left otherwise cannot keep the slot from dispatch (which takes FREE slots).
      release_slot(d->id, t.slot);
      prove_next_(*d);
    }
    j->times[t.partition].prove_ms = m.prove_ms;
    stats_.prove_sum_s += m.prove_ms / 1000;
    return complete(*j, t.partition, shm::job_results(state_.dir(), t.job).string());
  }
  if (m.status == shm::kFailed && d && d->seg->state(t.slot) == shm::SlotState::Ready) {
    // Prove again from the same slot (the worker restarts itself after a device error).
    PartitionRec& p = j->rec.parts[t.partition];
    if (const std::string why = state_.write_problem(); !why.empty()) {
      // The results could not be written (no space, a read-only or unwritable folder): not the
      // partition's fault. Its slot stays READY, and proving waits until writes succeed again
      // (Supervisor::check_disk_space).
      state_.note_full("a proof's result files could not be written (" + why + ")", state_.low_space());
      return prove_again(*j, *d, t.partition, t.slot);
    }
    p.attempts++;
    p.error = m.error;
    if (p.attempts < kMaxAttempts) return prove_again(*j, *d, t.partition, t.slot);
    release_slot(d->id, t.slot);
    return fail(*j, t.partition, "proving failed " + std::to_string(p.attempts) + " times: " + m.error);
  }
  if (d) release_slot(d->id, t.slot);
  if (m.status == shm::kBadInput) fail(*j, t.partition, m.error);
  else requeue(t.job, t.partition, w.name + ": " + m.error, m.status != shm::kCancelled);
}

void Partitions::ready(const Worker& w, ActiveJob& j, Device& d, uint32_t p, uint32_t slot) {
  set_state(j, p, PState::Ready);
  d.slots[slot].phase = SlotUse::Ready;
  j.times[p].ready = shm::monotonic_ns();
  timeline_.event(
      tl::kSlotReady, j.rec.id,
      tl::Kv().add(tl::kPartition, p).add(tl::kWorker, w.name).add(tl::kSlot, slot).add(tl::kDevice, d.id).str());
}

void Partitions::prove_again(ActiveJob& j, Device& d, uint32_t p, uint32_t slot) {
  d.seg->force(slot, shm::SlotState::Ready);
  d.slots[slot].phase = SlotUse::Ready;
  set_state(j, p, PState::Ready);
}

void Partitions::requeue(uint64_t job, uint32_t p, const std::string& why, bool count_attempt) {
  ActiveJob* j = find(job);
  if (!j || is_final(j->rec.state) || !queue_->holds(*j, p)) return;
  PartitionRec& pr = j->rec.parts[p];
  if (count_attempt) pr.attempts++;
  pr.error = why;
  if (pr.attempts >= kMaxAttempts)
    return fail(*j, p, "gave up after " + std::to_string(pr.attempts) + " attempts; last: " + why);
  spdlog::info("job {} partition {}: requeued ({})", job, p, why);
  queue_->requeue(*j, p);
}

void Partitions::complete(ActiveJob& j, uint32_t p, const std::string& result_dir) {
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
  pr.state = PState::Done;
  queue_->done(j, p, tl::Kv().add(tl::kPartition, p).ms(tl::kTotalMs, ms(t.queued, now)).str());
}

void Partitions::recover_proof(const Task& t, const std::string& result_dir, const std::string& why_lost) {
  ActiveJob* j = find(t.job);
  if (Device* d = device(t.device); d && holds_slot(*d, t)) release_slot(d->id, t.slot);
  if (!j || is_final(j->rec.state)) return;
  if (fs::exists(shm::proof_file(result_dir, t.partition)) && fs::exists(shm::public_file(result_dir, t.partition)))
    complete(*j, t.partition, result_dir);
  else
    requeue(t.job, t.partition, why_lost, false);
}

void Partitions::fail(ActiveJob& j, uint32_t p, const std::string& why) {
  j.rec.parts[p].error = why;
  timeline_.event(tl::kPartitionFailed, j.rec.id, tl::Kv().add(tl::kPartition, p).add(tl::kReason, why).str());
  spdlog::warn("job {} partition {} failed: {}", j.rec.id, p, why);
  j.rec.parts[p].state = PState::Failed;
  queue_->fail(j, p, why);
}

bool Partitions::holds_slot(const Device& d, const Task& t) {
  if (t.slot >= d.slots.size()) return false;
  const SlotUse& u = d.slots[t.slot];
  return u.used && u.job == t.job && u.partition == t.partition;
}

void Partitions::release_slot(int device, uint32_t slot) {
  for (Device& d : devices_)
    if (d.id == device && slot < d.slots.size()) {
      d.slots[slot] = SlotUse{};
      d.seg->release(slot);
    }
}

void Partitions::stop(uint64_t job, int64_t p) {
  for (auto it = pending_.begin(); it != pending_.end();)
    it = std::get<1>(*it) == job && (p < 0 || std::get<2>(*it) == p) ? pending_.erase(it) : std::next(it);
  for (Device& d : devices_)
    for (uint32_t s = 0; s < d.slots.size(); s++) {
      SlotUse& u = d.slots[s];
      if (!u.used || u.job != job || (p >= 0 && u.partition != p)) continue;
      if (u.phase == SlotUse::Ready && d.seg->transition(s, shm::SlotState::Ready, shm::SlotState::Free))
        u = SlotUse{};  // nobody holds it: free now
      else
        d.seg->cancel(s);  // its owner frees it
    }
}

}  // namespace cuzk::sup
