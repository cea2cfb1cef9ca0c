// Requests that wait on the loop for a job: the long polls of GET /v1/proofs/{id}?wait=S. Each is
// answered once, by answer() for its job or by its own timer, whichever comes first; close() ends
// every wait unanswered. A wait's timer and what it holds (the responder, the timeout's callback)
// live in one record, freed in each of the three cases.
#pragma once
#include <uv.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include "supervisor/queue.hpp"

namespace cuzk::sup {

class LongPolls {
 public:
  using Timeout = std::function<void(const Reply&)>;

  explicit LongPolls(uv_loop_t* loop) : loop_(loop) {}
  ~LongPolls() { close(); }
  LongPolls(const LongPolls&) = delete;
  LongPolls& operator=(const LongPolls&) = delete;

  // r waits for job id for ms at most; when nothing has answered it by then, timeout(r) does.
  void wait(uint64_t id, uint64_t ms, Reply r, Timeout timeout);
  // Every request waiting for job id is answered with make()'s answer (made only when one waits).
  void answer(uint64_t id, const std::function<Answer()>& make);
  size_t size() const { return polls_.size(); }
  // The loop is ending: every wait ends unanswered, its timer closed and its record freed once
  // libuv is done with the timer (the next turn of the loop).
  void close();

 private:
  struct Poll;
  void end(Poll* p);  // out of polls_, timer closed; the record is freed by the close callback

  uv_loop_t* loop_;
  std::multimap<uint64_t, Poll*> polls_;
};

}  // namespace cuzk::sup
