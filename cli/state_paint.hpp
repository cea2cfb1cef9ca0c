// Turns counters that rise and fall over time into a partition of a span into States: at each
// moment the state is that of the first counter, in priority order, above zero.
#pragma once
#include <vector>

#include "waterfall.hpp"

namespace cuzk::cli::timeline {

struct CounterChange {
  double ms = 0;
  size_t counter = 0;
  long delta = 0;      // counters never go below zero
  bool reset = false;  // sets the counter to zero instead (a new daemon run)
};

// Segments covering [start_ms, end_ms), adjacent equal states merged. states[i] is counter i's
// state; `idle` where every counter is zero. Changes at one moment apply resets first, then rises,
// then falls, so that a rise and a fall stamped alike never lose the rise.
std::vector<Segment> paint_states(double start_ms, double end_ms, std::vector<CounterChange> changes,
                                  const std::vector<State>& states, State idle);

}  // namespace cuzk::cli::timeline
