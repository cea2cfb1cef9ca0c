// Scheduling (scheduler.hpp): pairs queued partitions with idle synthesis workers and free slots,
// and READY slots with their device's GPU worker, which holds up to proofs_in_flight of them.

#include <algorithm>
#include <climits>
#include <tuple>

#include <spdlog/spdlog.h>

#include "supervisor/scheduler.hpp"
#include "timeline/events.hpp"

namespace cuzk::sup {

void Scheduler::schedule() {
  if (phase_.stopping) return;
  for (auto& d : devices_) key_order(d);
  while (!phase_.draining && dispatch_synth()) {
  }
  for (auto& d : devices_) dispatch_proofs(d);
  track_slot_waits();
  queue_->want_work();
  if (phase_.draining) draining_();
}

size_t Scheduler::room() const {
  size_t free_slots = 0;
  for (const Device& d : devices_) {
    if (!d.gpu || d.gpu->state == WorkerState::Failed) continue;
    for (uint32_t s = 0; s < d.slots.size(); s++)
      free_slots += !d.slots[s].used && d.seg->state(s) == shm::SlotState::Free;
  }
  return std::min(workers_.idle_synth_count(), free_slots);
}

void Scheduler::prove_next(Device& d) {
  key_order(d);
  dispatch_proofs(d);
}

void Scheduler::tick() {
  for (const auto& d : devices_)
    if (std::any_of(d.key_cold_since.begin(), d.key_cold_since.end(), [](uint64_t t) { return t != 0; }))
      return schedule();
}

// Called once dispatch_synth has placed what it could: a synthesis worker that is still idle while
// partitions are queued has no free slot to write into. Its wait is written as one SLOT_WAIT when
// it ends: at its next dispatch (with the job it takes), or when the queue empties or it stops.
void Scheduler::track_slot_waits() {
  const bool queued = !parts_.pending().empty() && !phase_.draining;
  const uint64_t now = shm::monotonic_ns();
  for (auto& w : workers_) {
    if (w->kind != WorkerKind::Synth) continue;
    const bool waiting = queued && w->state == WorkerState::Idle && w->tasks.empty();
    if (waiting && !w->slot_wait_ns) w->slot_wait_ns = now;
    else if (!waiting && w->slot_wait_ns) end_slot_wait(*w, 0, "");
  }
}

void Scheduler::end_slot_wait(Worker& w, uint64_t job, const std::string& kv) {
  if (!w.slot_wait_ns) return;
  const double ms = double(shm::monotonic_ns() - w.slot_wait_ns) / 1e6;
  w.slot_wait_ns = 0;
  timeline_.event(tl::kSlotWait, job, tl::Kv().add(tl::kWorker, w.name).ms(tl::kWaitMs, ms).raw(kv).str());
}

// Where keys do not all fit a device (gpu.key_memory), loading one costs seconds at 2^22, so work
// for the keys a device has goes first, and a device with such work to come does not load another
// key meanwhile. Within one priority a circuit is "warm" on a device while its key is resident
// there or a proof its GPU worker holds needs it. A circuit with work waiting and no key on the
// device starts a clock; once it has waited gpu.key_wait_ms it is "overdue": it counts as warm, and
// its work goes before that of the warm circuits of its priority, however much older theirs is, so
// that every circuit is served within that bound; and each key, once loaded, serves a run of
// partitions rather than one. With gpu.key_wait_ms = 0 there is no waiting: every circuit counts
// as warm and the oldest work goes first.
void Scheduler::key_order(Device& d) {
  const size_t n = circuits_.size();
  d.key_warm.assign(n, false);
  d.key_overdue.assign(n, false);
  d.key_cold_since.resize(n, 0);
  for (uint32_t c = 0; c < n; c++) d.key_warm[c] = d.key_resident(c);
  if (d.gpu)
    for (const Task& t : d.gpu->tasks)
      if (ActiveJob* j = parts_.find(t.job); j && j->circuit < n) d.key_warm[j->circuit] = true;
  d.warm_work_priority = INT_MAX;
  if (std::find(d.key_warm.begin(), d.key_warm.end(), false) == d.key_warm.end()) {  // every key resident
    std::fill(d.key_cold_since.begin(), d.key_cold_since.end(), 0);
    return;
  }
  std::vector<bool> waiting(n, false);
  for (const auto& [prio, job, p] : parts_.pending())
    if (ActiveJob* j = parts_.find(job); j && j->circuit < n) waiting[j->circuit] = true;
  for (const SlotUse& u : d.slots)
    if (u.used && u.phase != SlotUse::Proving)
      if (ActiveJob* j = parts_.find(u.job); j && j->circuit < n) waiting[j->circuit] = true;
  const uint64_t now = shm::monotonic_ns(), bound = uint64_t(cfg_.gpu.key_wait_ms) * 1000000;
  for (uint32_t c = 0; c < n; c++) {
    if (d.key_resident(c) || !waiting[c]) {
      d.key_cold_since[c] = 0;
      continue;
    }
    if (!d.key_cold_since[c]) d.key_cold_since[c] = now;
    if (now - d.key_cold_since[c] >= bound) {
      d.key_warm[c] = true;
      d.key_overdue[c] = bound > 0;
    }
  }
  // The most urgent priority of work still to come for warm circuits: in d's slots, or pending
  // while it can reach a slot (one is free, or the proofs the GPU worker holds will free one).
  auto note = [&](const ActiveJob* j) {
    if (j && j->circuit < n && d.key_warm[j->circuit])
      d.warm_work_priority = std::min(d.warm_work_priority, int(j->rec.priority));
  };
  bool room = d.gpu && !d.gpu->tasks.empty();
  for (const SlotUse& u : d.slots) room = room || !u.used;
  if (room)
    for (const auto& [prio, job, p] : parts_.pending()) {
      if (prio >= d.warm_work_priority) break;  // in priority order: nothing more urgent follows
      note(parts_.find(job));
    }
  for (const SlotUse& u : d.slots)
    if (u.used && u.phase != SlotUse::Proving) note(parts_.find(u.job));
}

// Assigns the best pending partition to an idle synthesis worker and a free slot: the first of
// the highest priority whose circuit is overdue on the device (key_order), else the first whose
// circuit is warm, else the first of that priority. Backpressure: nothing is synthesized without a free slot to put it in.
bool Scheduler::dispatch_synth() {
  const auto& pending = parts_.pending();
  if (pending.empty()) return false;
  Worker* sw = workers_.idle_synth();
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
  // Within the most urgent priority: the first partition of an overdue circuit, else of a warm
  // one, else of a circuit with a slot on the device already (its key is next), else the first.
  // The scan goes past the first warm partition only while some circuit is overdue.
  auto pick = pending.begin();
  int pick_rank = 4;
  const size_t nc = best->key_warm.size();
  const int top = std::find(best->key_overdue.begin(), best->key_overdue.end(), true) != best->key_overdue.end() ? 0 : 1;
  for (auto it = pending.begin(); it != pending.end() && std::get<0>(*it) == std::get<0>(*pending.begin()); ++it) {
    ActiveJob* j = parts_.find(std::get<1>(*it));
    int rank = 3;
    if (!j || j->circuit >= nc) {
      rank = 1;
    } else if (best->key_overdue[j->circuit]) {
      rank = 0;
    } else if (best->key_warm[j->circuit]) {
      rank = 1;
    } else {
      for (const SlotUse& u : best->slots)
        if (u.used)
          if (ActiveJob* o = parts_.find(u.job); o && o->circuit == j->circuit) rank = 2;
    }
    if (rank < pick_rank) pick = it, pick_rank = rank;
    if (rank <= top) break;
  }
  ActiveJob* j = parts_.synthesize(pick, *best, best_slot, *sw);
  if (!j) return true;
  const shm::SlotWork work{j->rec.id, best->slots[best_slot].partition, best_slot, j->circuit, best->id};
  end_slot_wait(*sw, work.job,
                tl::Kv().add(tl::kPartition, work.partition).add(tl::kSlot, best_slot).add(tl::kDevice, best->id).str());
  Workers::assign(*sw, {work.job, work.partition, best_slot, best->id}, "a partition to synthesize");
  const shm::Msg m =
      shm::Msg::synthesize(work, j->rec.input == InputKind::Inputs, j->rec.parts[work.partition].witness);
  if (!Workers::send(*sw, m)) spdlog::warn("{}: could not send work (its exit will requeue it)", sw->name);
  return true;
}

void Scheduler::note_key(int device, const shm::Key& m) {
  Device* d = find_device(devices_, device);
  if (!d || m.circuit >= circuits_.size()) return;
  if (d->keys.size() < circuits_.size()) d->keys.resize(circuits_.size());
  DeviceKey& k = d->keys[m.circuit];
  k.bytes = m.bytes;
  if (m.resident) {
    k.resident = true;
    k.loads++;
    k.load_ms = m.load_ms;
  } else {
    k.resident = false;
    k.evictions++;
  }
}

// Hands the device's best READY slots to its GPU worker, until it holds proofs_in_flight: the
// highest priority first; within one priority, slots of overdue circuits (key_order), then of warm
// ones, then the others, each the oldest job first. A slot whose key would have to be loaded waits
// while work as urgent for a warm circuit is still to come, until its circuit is overdue.
void Scheduler::dispatch_proofs(Device& d) {
  Worker* g = d.gpu;
  if (state_.full()) return;  // its results could not be written; READY slots wait for space
  const size_t in_flight = proofs_in_flight(cfg_.gpu);
  while (g && (g->state == WorkerState::Idle || g->state == WorkerState::Busy) && g->tasks.size() < in_flight) {
    int best = -1;
    using Order = std::tuple<int, int, uint64_t, uint32_t>;  // priority, key rank, job id (age), partition
    Order best_key{};
    for (uint32_t s = 0; s < d.slots.size(); s++) {
      const SlotUse& u = d.slots[s];
      if (!u.used || u.phase != SlotUse::Ready) continue;
      ActiveJob* j = parts_.find(u.job);
      if (!j) {
        parts_.release_slot(d.id, s);
        continue;
      }
      const int prio = int(j->rec.priority);
      const bool known = j->circuit < d.key_warm.size();
      const bool cold = known && !d.key_warm[j->circuit];
      if (cold && d.warm_work_priority <= prio) continue;
      const int rank = known && d.key_overdue[j->circuit] ? 0 : cold ? 2 : 1;  // overdue, warm, key to load
      Order k{prio, rank, u.job, u.partition};
      if (best < 0 || k < best_key) best = int(s), best_key = k;
    }
    if (best < 0) return;
    ActiveJob& j = *parts_.find(d.slots[best].job);
    const shm::SlotWork work = parts_.hand_over(j, d, uint32_t(best), *g);
    Workers::assign(*g, {work.job, work.partition, work.slot, d.id}, "a slot to prove");
    if (!Workers::send(*g, shm::Msg::prove(work)))
      spdlog::warn("{}: could not send work (its exit will repair the slot)", g->name);
    // Stored after the GPU has its work: a restart requeues READY and PROVING partitions alike.
    parts_.set_state(j, work.partition, PState::Proving);
  }
}

}  // namespace cuzk::sup
