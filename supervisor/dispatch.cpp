// Scheduling: pairs queued partitions with idle synthesis workers and free slots, and READY slots
// with their device's GPU worker, which holds up to kProofsInFlight of them. A partition is synthesized only into a free slot, which is
// the backpressure that keeps synthesis from running ahead of the GPUs.
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <tuple>

#include <spdlog/spdlog.h>

#include "supervisor/supervisor.hpp"
#include "timeline/events.hpp"

namespace cuzk::sup {

void Supervisor::release_slot(int dev, uint32_t slot) {
  Device* d = device(dev);
  if (!d || slot >= d->slots.size()) return;
  d->slots[slot] = SlotUse{};
  d->seg->force(slot, shm::SlotState::Free);
}

void Supervisor::schedule() {
  if (stopping_) return;
  while (!draining_ && dispatch_synth()) {
  }
  for (auto& d : devices_) dispatch_proofs(d);
  track_slot_waits();
  claim_more();
  maybe_finish_shutdown();
}

// Called once dispatch_synth has placed what it could: a synthesis worker that is still idle while
// partitions are queued has no free slot to write into. Its wait is written as one SLOT_WAIT when
// it ends: at its next dispatch (with the job it takes), or when the queue empties or it stops.
void Supervisor::track_slot_waits() {
  const bool queued = !pending_.empty() && !draining_;
  const uint64_t now = shm::monotonic_ns();
  for (auto& w : workers_) {
    if (w->kind != WorkerKind::Synth) continue;
    const bool waiting = queued && w->state == WorkerState::Idle && w->tasks.empty();
    if (waiting && !w->slot_wait_ns) w->slot_wait_ns = now;
    else if (!waiting && w->slot_wait_ns) end_slot_wait(*w, 0, "");
  }
}

void Supervisor::end_slot_wait(Worker& w, uint64_t job, const std::string& kv) {
  if (!w.slot_wait_ns) return;
  const double ms = double(shm::monotonic_ns() - w.slot_wait_ns) / 1e6;
  w.slot_wait_ns = 0;
  event(tl::kSlotWait, job, tl::Kv().add(tl::kWorker, w.name).ms(tl::kWaitMs, ms).raw(kv).str());
}

// Assigns the best pending partition to an idle synthesis worker and a free slot. Backpressure:
// nothing is synthesized without a free slot to put it in.
bool Supervisor::dispatch_synth() {
  if (pending_.empty()) return false;
  Worker* sw = nullptr;
  for (auto& w : workers_)
    if (w->kind == WorkerKind::Synth && w->state == WorkerState::Idle && w->tasks.empty()) {
      sw = w.get();
      break;
    }
  if (!sw) return false;
  // The device with the most free slots whose GPU worker is not failed.
  Device* best = nullptr;
  uint32_t best_slot = 0;
  size_t best_free = 0;
  for (auto& d : devices_) {
    if (!d.gpu || d.gpu->state == WorkerState::Failed) continue;
    size_t n = 0;
    uint32_t first = 0;
    for (uint32_t s = 0; s < d.slots.size(); s++)
      if (!d.slots[s].used && d.seg->state(s) == shm::SlotState::Free) {
        if (n++ == 0) first = s;
      }
    if (n > best_free) best = &d, best_slot = first, best_free = n;
  }
  if (!best) return false;
  auto [prio, job_id, p] = *pending_.begin();
  pending_.erase(pending_.begin());
  ActiveJob* j = active(job_id);
  if (!j || is_final(j->rec.state) || j->rec.parts[p].state != PState::Queued) return true;
  // Durable first: the store says synthesizing before the worker hears of it.
  set_pstate(*j, p, PState::Synthesizing);
  if (j->rec.state == JState::Queued) {
    j->rec.state = JState::Running;
    if (store_) store_->set_job(job_id, JState::Running, "", 0);
  }
  shm::SlotHeader& h = best->seg->slot(best_slot);
  h.owner_worker = sw->id;
  h.owner_epoch = sw->epoch;
  h.job = job_id;
  h.partition = p;
  h.circuit = j->circuit;
  h.generation++;
  h.n_vars = 0;
  h.domain_size = 0;
  h.synth_end_ns = 0;
  h.cancel.store(0);
  best->seg->transition(best_slot, shm::SlotState::Free, shm::SlotState::Synthesizing);
  best->slots[best_slot] = SlotUse{true, job_id, p, SlotUse::Synth};
  end_slot_wait(*sw, job_id,
                tl::Kv().add(tl::kPartition, p).add(tl::kSlot, best_slot).add(tl::kDevice, best->id).str());
  sw->tasks.push_back({job_id, p, best_slot, best->id});
  set_state(*sw, WorkerState::Busy, "a partition to synthesize");
  j->times[p].synth_start = shm::monotonic_ns();
  shm::Msg m{};
  m.type = uint16_t(shm::MsgType::Synthesize);
  m.worker = sw->id, m.epoch = sw->epoch, m.job = job_id, m.partition = p, m.slot = best_slot;
  m.circuit = j->circuit, m.device = best->id, m.t_ns = shm::monotonic_ns();
  m.flags = j->rec.input == InputKind::Inputs ? shm::kMsgFromInputs : 0;
  m.set_text(j->rec.parts[p].witness);
  if (::send(sw->fd, &m, sizeof m, MSG_NOSIGNAL) != ssize_t(sizeof m))
    spdlog::warn("{}: could not send work (its exit will requeue it)", sw->name);
  return true;
}

void Supervisor::note_key(Worker& w, const shm::Msg& m) {
  Device* d = device(w.device);
  if (!d || m.circuit >= cfg_.circuits.size()) return;
  if (d->keys.size() < cfg_.circuits.size()) d->keys.resize(cfg_.circuits.size());
  DeviceKey& k = d->keys[m.circuit];
  // The number after "key=" in the event's k=v list.
  auto number = [&](const char* key) -> double {
    const std::string text = "," + std::string(m.text), want = "," + std::string(key) + "=";
    const size_t at = text.find(want);
    return at == std::string::npos ? 0 : std::strtod(text.c_str() + at + want.size(), nullptr);
  };
  k.bytes = uint64_t(number(tl::kBytes));
  if (!std::strcmp(m.name, tl::kKeyLoad)) {
    k.resident = true;
    k.loads++;
    k.load_ms = number(tl::kLoadMs);
  } else {
    k.resident = false;
    k.evictions++;
  }
}

// Hands the device's best READY slots to its GPU worker, until it holds kProofsInFlight: the
// highest priority first; within one priority, slots whose key is resident on the device (or will
// be, for a proof the worker already holds) before those whose key would have to be loaded, unless
// one of those has waited gpu.key_wait_ms; then the oldest job.
void Supervisor::dispatch_proofs(Device& d) {
  Worker* g = d.gpu;
  if (disk_full_) return;  // its results could not be written; READY slots wait for space
  const uint64_t now = shm::monotonic_ns(), bound_ns = uint64_t(cfg_.gpu.key_wait_ms) * 1000000;
  while (g && (g->state == WorkerState::Idle || g->state == WorkerState::Busy) && g->tasks.size() < kProofsInFlight) {
    std::vector<bool> warm(cfg_.circuits.size());
    for (uint32_t c = 0; c < warm.size(); c++) warm[c] = d.key_resident(c);
    for (const Task& t : g->tasks)
      if (ActiveJob* j = active(t.job); j && j->circuit < warm.size()) warm[j->circuit] = true;
    int best = -1;
    using Order = std::tuple<int, int, uint64_t, uint32_t>;  // priority, key to load, job id (age), partition
    Order best_key{};
    for (uint32_t s = 0; s < d.slots.size(); s++) {
      const SlotUse& u = d.slots[s];
      if (!u.used || u.phase != SlotUse::Ready) continue;
      ActiveJob* j = active(u.job);
      if (!j) {
        release_slot(d.id, s);
        continue;
      }
      const bool cold = j->circuit < warm.size() && !warm[j->circuit] &&
                        now - j->times[u.partition].ready < bound_ns;
      Order k{int(j->rec.priority), cold, u.job, u.partition};
      if (best < 0 || k < best_key) best = int(s), best_key = k;
    }
    if (best < 0) return;
    SlotUse& u = d.slots[best];
    ActiveJob& j = *active(u.job);
    shm::SlotHeader& h = d.seg->slot(uint32_t(best));
    h.owner_worker = g->id;
    h.owner_epoch = g->epoch;
    u.phase = SlotUse::Proving;
    g->tasks.push_back({u.job, u.partition, uint32_t(best), d.id});
    if (g->state == WorkerState::Idle) set_state(*g, WorkerState::Busy, "a slot to prove");
    j.times[u.partition].prove_start = shm::monotonic_ns();
    shm::Msg m{};
    m.type = uint16_t(shm::MsgType::Prove);
    m.worker = g->id, m.epoch = g->epoch, m.job = u.job, m.partition = u.partition, m.slot = uint32_t(best);
    m.circuit = j.circuit, m.device = d.id, m.t_ns = shm::monotonic_ns();
    if (::send(g->fd, &m, sizeof m, MSG_NOSIGNAL) != ssize_t(sizeof m))
      spdlog::warn("{}: could not send work (its exit will repair the slot)", g->name);
    // Stored after the GPU has its work: a restart requeues READY and PROVING partitions alike.
    set_pstate(j, u.partition, PState::Proving);
  }
}

}  // namespace cuzk::sup
