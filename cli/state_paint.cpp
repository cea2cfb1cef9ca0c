#include "state_paint.hpp"

#include <algorithm>

namespace cuzk::cli::timeline {

std::vector<Segment> paint_states(double s, double e, std::vector<CounterChange> ch, const std::vector<State>& states,
                                  State idle) {
  auto rank = [](const CounterChange& c) { return c.reset ? 0 : c.delta > 0 ? 1 : 2; };
  std::stable_sort(ch.begin(), ch.end(), [&](const CounterChange& a, const CounterChange& b) {
    return a.ms != b.ms ? a.ms < b.ms : rank(a) < rank(b);
  });
  std::vector<long> count(states.size(), 0);
  auto apply = [&](const CounterChange& c) {
    long& n = count.at(c.counter);
    n = c.reset ? 0 : std::max(0L, n + c.delta);
  };
  auto current = [&] {
    for (size_t i = 0; i < count.size(); i++)
      if (count[i] > 0) return states[i];
    return idle;
  };
  std::vector<Segment> out;
  size_t i = 0;
  while (i < ch.size() && ch[i].ms <= s) apply(ch[i++]);
  double t = s;
  while (t < e) {
    const double next = i < ch.size() ? std::min(ch[i].ms, e) : e;
    if (next > t) {
      const State st = current();
      if (!out.empty() && out.back().state == st && out.back().end_ms == t) out.back().end_ms = next;
      else out.push_back({t, next, st});
    }
    t = next;
    while (i < ch.size() && ch[i].ms <= t) apply(ch[i++]);
  }
  return out;
}

}  // namespace cuzk::cli::timeline
