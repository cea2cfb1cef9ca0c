// The slot rings, one shared-memory segment per device (shm/slot_ring.hpp): their size, from the
// circuits' keys and the room left for circuits added at run time, within limits.memory_budget;
// their names, with a random part new at each start and recorded in <state_dir>/rings so that the
// next start removes what a killed run left; their creation, which waits for room in /dev/shm; and
// their removal when the daemon ends.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "groth16/formats.hpp"
#include "shm/slot_ring.hpp"
#include "supervisor/supervisor_types.hpp"

namespace cuzk::sup {

struct RingSize {
  uint64_t max_vars = 1, max_domain = 1, per_ring = 0;
};
// The ring each device gets for circuits of these keys, checked against limits.memory_budget
// (ConfigError otherwise).
RingSize ring_size(const config::Config& cfg, const std::vector<ZKeyHeader>& keys);

class SlotRings {
 public:
  explicit SlotRings(const config::Config& cfg) : cfg_(cfg) {}
  ~SlotRings();  // removes the rings it made (a start that failed after making them)
  SlotRings(const SlotRings&) = delete;
  SlotRings& operator=(const SlotRings&) = delete;

  // Removes the rings an earlier run left (by <state_dir>/rings, where they are this user's), then
  // makes one ring of `size` per configured device under a new name: the devices, each with its
  // ring and its slots unused. Says so when gpu.slots is too few to keep the GPUs fed.
  std::vector<Device> create(const RingSize& size);
  // The rings' names less ".dev<N>", for the workers (--ring).
  const std::string& prefix() const { return prefix_; }
  // The daemon ends: its rings' names are removed (the workers' mappings stay valid until they exit).
  void remove();

 private:
  void remove_stale();
  void record_prefix();
  std::unique_ptr<shm::Segment> create_ring(int device, uint64_t max_vars, uint64_t max_domain, bool abc);
  void warn_if_few_slots(const std::vector<Device>& devices) const;

  const config::Config& cfg_;
  std::string prefix_;
  std::vector<int> made_;  // the devices whose ring this run made
};

}  // namespace cuzk::sup
