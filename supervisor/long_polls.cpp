// Long polls (long_polls.hpp).
#include "supervisor/long_polls.hpp"

#include <optional>
#include <utility>
#include <vector>

namespace cuzk::sup {

struct LongPolls::Poll {
  uv_timer_t timer{};
  LongPolls* owner = nullptr;
  std::optional<Reply> r;
  Timeout timeout;
  std::multimap<uint64_t, Poll*>::iterator at;
};

void LongPolls::wait(uint64_t id, uint64_t ms, Reply r, Timeout timeout) {
  auto* p = new Poll;
  p->owner = this;
  p->r = std::move(r);
  p->timeout = std::move(timeout);
  p->at = polls_.emplace(id, p);
  uv_timer_init(loop_, &p->timer);
  p->timer.data = p;
  uv_timer_start(
      &p->timer,
      [](uv_timer_t* t) {
        auto* p = static_cast<Poll*>(t->data);
        const Reply r = std::move(*p->r);
        Timeout timeout = std::move(p->timeout);
        p->owner->end(p);
        timeout(r);  // may wait again (a shared queue looks at the store once more)
      },
      ms, 0);
}

void LongPolls::end(Poll* p) {
  polls_.erase(p->at);
  uv_timer_stop(&p->timer);
  uv_close(reinterpret_cast<uv_handle_t*>(&p->timer), [](uv_handle_t* h) { delete static_cast<Poll*>(h->data); });
}

void LongPolls::answer(uint64_t id, const std::function<Answer()>& make) {
  auto [lo, hi] = polls_.equal_range(id);
  if (lo == hi) return;
  std::vector<Poll*> waiting;
  for (auto it = lo; it != hi; ++it) waiting.push_back(it->second);
  const Answer a = make();
  for (Poll* p : waiting) {
    const Reply r = std::move(*p->r);
    end(p);
    r.send(a);
  }
}

void LongPolls::close() {
  while (!polls_.empty()) end(polls_.begin()->second);
}

}  // namespace cuzk::sup
