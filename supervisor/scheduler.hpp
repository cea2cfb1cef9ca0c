// The scheduler: which queued partition goes to which idle synthesis worker and free slot, and
// which READY slots go to each device's GPU worker, in what order (dispatch.cpp). A partition is
// synthesized only into a free slot, which is the backpressure that keeps synthesis from running
// ahead of the GPUs. Where the keys do not all fit a device, the order favours the circuits whose
// key it has (key_order), and each device's resident keys are kept here from its GPU worker's
// Key messages. What a dispatch does to the partition and its slot is Partitions'.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "shm/messages.hpp"
#include "supervisor/circuits.hpp"
#include "supervisor/partitions.hpp"
#include "supervisor/queue.hpp"
#include "supervisor/state_folder.hpp"
#include "supervisor/supervisor_types.hpp"
#include "supervisor/timeline.hpp"
#include "supervisor/workers.hpp"

namespace cuzk::sup {

class Scheduler {
 public:
  // draining: called after each round while the daemon drains (its stop waits for the slots).
  Scheduler(const config::Config& cfg, const Circuits& circuits, std::vector<Device>& devices, Workers& workers,
            Partitions& parts, const StateFolder& state, const Phase& phase, Timeline& timeline,
            std::function<void()> draining)
      : cfg_(cfg),
        circuits_(circuits),
        devices_(devices),
        workers_(workers),
        parts_(parts),
        state_(state),
        phase_(phase),
        timeline_(timeline),
        draining_(std::move(draining)) {}
  // Before the loop: the queue that is told when this node has room for work.
  void attach(Queue& q) { queue_ = &q; }

  // After every event that can free capacity: queued partitions to synthesis workers and free
  // slots, READY slots to the GPU workers, and the queue told of the room left.
  void schedule();
  // The moment a proof's slot is free: d's GPU worker gets its next READY slot first.
  void prove_next(Device& d);
  // The tick: a circuit that waits for its key becomes overdue with time alone.
  void tick();
  // A GPU worker's key loaded onto its device, or evicted.
  void note_key(int device, const shm::Key& k);
  // Synthesis workers idle with partitions queued and no free slot: their waits begin or end
  // (SLOT_WAIT, written when one ends: at w's next dispatch, with the job it takes, or otherwise).
  void track_slot_waits();
  void end_slot_wait(Worker& w, uint64_t job, const std::string& kv);
  // Partitions this node could start synthesizing now: idle synthesis workers, as far as free slots
  // of devices with a working GPU worker go.
  size_t room() const;

 private:
  bool dispatch_synth();
  void dispatch_proofs(Device& d);
  void key_order(Device& d);  // d.key_warm and d.key_overdue, from now

  const config::Config& cfg_;
  const Circuits& circuits_;
  std::vector<Device>& devices_;
  Workers& workers_;
  Partitions& parts_;
  const StateFolder& state_;
  const Phase& phase_;
  Timeline& timeline_;
  std::function<void()> draining_;
  Queue* queue_ = nullptr;
};

}  // namespace cuzk::sup
