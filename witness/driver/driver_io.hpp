// What the driver and the tracer of a circom C++ witness generator share (both are compiled into an
// artefact, not into cuzk): where each main input value goes.
#pragma once
#include <vector>

#include "calcwit.hpp"
#include "circom.hpp"

namespace cuzk_driver {

// Where main input value k goes: circom sets inputs by (hash of the signal's name, index in it).
struct Slot {
  u64 hash;
  uint32_t index;
};

inline std::vector<Slot> input_slots(Circom_Circuit* c) {
  std::vector<Slot> s(get_main_input_signal_no(), Slot{0, 0});
  const uint start = get_main_input_signal_start();
  for (uint i = 0; i < get_size_of_input_hashmap(); i++) {
    const HashSignalInfo& h = c->InputHashMap[i];
    if (h.signalsize == 0) continue;
    for (u64 j = 0; j < h.signalsize; j++) {
      u64 pos = h.signalid - start + j;
      if (pos < s.size()) s[pos] = Slot{h.hash, uint32_t(j)};
    }
  }
  return s;
}

}  // namespace cuzk_driver
