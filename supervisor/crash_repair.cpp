// Crash repair: the table of what to do with a dead worker's task, and the code that applies a row
// of it with the verbs a report uses (Partitions), or hands a failed GPU worker's ready partitions
// back to synthesis.
#include "supervisor/crash_repair.hpp"

#include <spdlog/spdlog.h>

#include "shm/results.hpp"
#include "supervisor/partitions.hpp"

namespace cuzk::sup {

namespace {

using K = WorkerKind;
using St = shm::SlotState;

constexpr RepairRule kRules[] = {
    {K::Synth, St::Free, Repair::Resynthesize,
     "synthesis freed the slot (cancelled, or a failure) but died before reporting it", "died during synthesis"},
    {K::Synth, St::Synthesizing, Repair::Resynthesize, "synthesis was writing the slot: its contents are partial",
     "died during synthesis"},
    {K::Synth, St::Ready, Repair::AdoptSynthesis,
     "synthesis finished writing the slot and died before reporting it: a, b, c are complete", ""},
    {K::Synth, St::Proving, Repair::Resynthesize,
     "a slot being proved is not a synthesis worker's task: nothing in it can be trusted as its work",
     "died during synthesis"},
    {K::Gpu, St::Free, Repair::CompleteFromResults,
     "the GPU worker frees the slot only after writing both result files, or after a failure that wrote none",
     "died after freeing its slot"},
    {K::Gpu, St::Synthesizing, Repair::CompleteFromResults,
     "a slot being synthesized is not a GPU worker's task: only complete result files count",
     "died after freeing its slot"},
    {K::Gpu, St::Ready, Repair::ProveAgain,
     "the GPU worker died before it took the slot: a, b, c are intact in shared memory", ""},
    {K::Gpu, St::Proving, Repair::ProveAgain,
     "the GPU worker died while proving: a, b, c are intact in shared memory, so no new synthesis is needed", ""},
};

}  // namespace

std::span<const RepairRule> repair_table() { return kRules; }

RepairRule repair_rule(WorkerKind kind, shm::SlotState slot, bool slot_is_its, bool job_live) {
  if (!slot_is_its)
    return {kind, slot, Repair::Nothing, "the slot was freed and given to another task meanwhile", ""};
  if (!job_live) return {kind, slot, Repair::Release, "the task's job was cancelled or failed meanwhile", ""};
  for (const RepairRule& r : kRules)
    if (r.kind == kind && r.slot == slot) return r;
  // A word outside the four states (a damaged header): nothing of the task in the slot can be used.
  RepairRule r = repair_rule(kind, kind == K::Synth ? St::Synthesizing : St::Free, true, true);
  r.slot = slot;
  return r;
}

void Partitions::repair(const Worker& w, const Task& t) {
  Device* d = device(t.device);
  if (!d || t.slot >= d->slots.size()) return;
  ActiveJob* j = find(t.job);
  const RepairRule rule = repair_rule(w.kind, d->seg->state(t.slot), holds_slot(*d, t),
                                      j && !is_final(j->rec.state) && queue_->holds(*j, t.partition));
  spdlog::debug("{}: job {} partition {} slot {} ({}): {}", w.name, t.job, t.partition, t.slot,
                shm::to_string(rule.slot), rule.reason);
  switch (rule.action) {
    case Repair::Nothing: return;
    case Repair::Release: release_slot(d->id, t.slot); return;
    case Repair::Resynthesize:
      release_slot(d->id, t.slot);
      requeue(t.job, t.partition, w.name + " " + rule.requeue_why, false);
      return;
    case Repair::AdoptSynthesis:
      ready(w, *j, *d, t.partition, t.slot);
      spdlog::info("job {} partition {}: slot {} was READY when {} died: synthesis adopted", t.job, t.partition,
                   t.slot, w.name);
      return;
    case Repair::ProveAgain:
      prove_again(*j, *d, t.partition, t.slot);
      spdlog::info("job {} partition {}: slot {} back to READY after {} died", t.job, t.partition, t.slot, w.name);
      return;
    case Repair::CompleteFromResults:
      recover_proof(t, shm::job_results(state_.dir(), t.job).string(), w.name + " " + rule.requeue_why);
      return;
  }
}

void Partitions::resynthesize_device(Device& d) {
  for (uint32_t s = 0; s < d.slots.size(); s++)
    if (d.slots[s].used && d.slots[s].phase != SlotUse::Synth) {
      const uint64_t job = d.slots[s].job;
      const uint32_t p = d.slots[s].partition;
      release_slot(d.id, s);
      requeue(job, p, "device " + std::to_string(d.id) + " has no working GPU worker", false);
    }
}

}  // namespace cuzk::sup
