#include "supervisor/partitions.hpp"

#include "shm/messages.hpp"

namespace cuzk::sup {

ActiveJob* Partitions::find(uint64_t id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

ActiveJob& Partitions::add(ActiveJob j) {
  const uint64_t id = j.rec.id;
  j.times.resize(j.rec.parts.size());
  ActiveJob& a = jobs_.insert_or_assign(id, std::move(j)).first->second;
  const uint64_t now = shm::monotonic_ns();
  for (const PartitionRec& p : a.rec.parts)
    if (p.state == PState::Queued) a.times[p.index].queued = now, enqueue(a, p.index);
  return a;
}

Partitions::Key Partitions::take(std::set<Key>::const_iterator it) {
  const Key k = *it;
  pending_.erase(it);
  return k;
}

void Partitions::set_state(ActiveJob& j, uint32_t p, PState s) {
  j.rec.parts[p].state = s;
  queue_->progress(j, p);
  // A job runs from its first partition's synthesis on.
  if (s == PState::Synthesizing && j.rec.state == JState::Queued) {
    j.rec.state = JState::Running;
    queue_->started(j);
  }
}

void Partitions::release_slot(int device, uint32_t slot) {
  for (Device& d : devices_)
    if (d.id == device && slot < d.slots.size()) {
      d.slots[slot] = SlotUse{};
      d.seg->force(slot, shm::SlotState::Free);
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
        d.seg->slot(s).cancel.store(1, std::memory_order_release);  // its owner frees it
    }
}

}  // namespace cuzk::sup
