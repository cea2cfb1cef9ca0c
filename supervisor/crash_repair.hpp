// Crash repair: what the supervisor does with the task of a worker whose process exited (or was
// killed for missing its heartbeats). The state of the task's slot says how far the task got, so
// the work goes back to the earliest step that must be redone: a slot whose a, b, c are complete
// is proved again, never synthesized again. The rules are a table keyed by the worker's kind and
// the slot's state (crash_repair.cpp), each row with its reason; Partitions::repair applies the
// row.
#pragma once
#include <span>

#include "shm/slot_ring.hpp"
#include "supervisor/workers.hpp"

namespace cuzk::sup {

enum class Repair {
  Nothing,              // the slot holds another task now: leave it
  Release,              // free the slot; the task's job has ended, so nothing is redone
  Resynthesize,         // free the slot and queue the partition for synthesis again
  AdoptSynthesis,       // keep the READY slot, as if the worker had reported its synthesis
  ProveAgain,           // put the slot back to READY: the device's GPU worker proves the same a, b, c
  CompleteFromResults,  // complete the partition from its result files; without both, Resynthesize
};

struct RepairRule {
  WorkerKind kind;
  shm::SlotState slot;
  Repair action;
  const char* reason;       // why the action is right, in words
  const char* requeue_why;  // for Resynthesize: the partition's error, after the worker's name
};

// The table: one row for each worker kind and slot state.
std::span<const RepairRule> repair_table();

// The rule for the task of a dead worker of `kind` whose slot is now in state `slot`.
// `slot_is_its`: the slot still holds the task's partition. `job_live`: the task's job is neither
// finished, failed nor cancelled. A slot that holds another task is left alone and the slot of an
// ended job is freed, whatever the kind and state; otherwise the table's row decides.
RepairRule repair_rule(WorkerKind kind, shm::SlotState slot, bool slot_is_its, bool job_live);

}  // namespace cuzk::sup
