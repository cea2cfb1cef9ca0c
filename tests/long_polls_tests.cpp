// Long polls without a daemon: a wait answered for its job, by its timer, or ended by close(), on
// a loop of the test's own. Whichever way a wait ends, its timer is closed and what it held (the
// responder, the timeout's callback) is freed: the loop closes with no handle left.
#include <gtest/gtest.h>
#include <uv.h>

#include <memory>
#include <string>
#include <vector>

#include "supervisor/long_polls.hpp"

using namespace cuzk;
using namespace cuzk::sup;

namespace {

// A client that keeps the statuses it is answered with.
struct Answers {
  std::vector<int> got;
};

Reply reply(const std::shared_ptr<Answers>& a) {
  return Reply(
      a, [](void* to, Answer x) { static_cast<Answers*>(to)->got.push_back(x.status); },
      [](const void*) { return true; });
}

class LongPollsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(uv_loop_init(&loop_), 0); }
  void TearDown() override {
    polls_.reset();
    uv_run(&loop_, UV_RUN_NOWAIT);                       // the timers' close callbacks
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a handle was left open";
  }
  uv_loop_t loop_{};
  std::unique_ptr<LongPolls> polls_ = std::make_unique<LongPolls>(&loop_);
};

LongPolls::Timeout never() {
  return [](const Reply&) { ADD_FAILURE() << "a timer fired"; };
}

}  // namespace

TEST_F(LongPollsTest, AJobsEndAnswersEveryWaitForItOnce) {
  auto a = std::make_shared<Answers>(), b = std::make_shared<Answers>(), other = std::make_shared<Answers>();
  polls_->wait(1, 3600000, reply(a), never());
  polls_->wait(1, 3600000, reply(b), never());
  polls_->wait(2, 3600000, reply(other), never());
  int made = 0;
  auto make = [&] {
    made++;
    return Answer::json(200, "{}");
  };
  polls_->answer(3, make);  // nobody waits: nothing is made
  EXPECT_EQ(made, 0);
  polls_->answer(1, make);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(a->got, std::vector<int>{200});
  EXPECT_EQ(b->got, std::vector<int>{200});
  EXPECT_TRUE(other->got.empty());
  EXPECT_EQ(polls_->size(), 1u);
  polls_->answer(1, make);  // answered already
  EXPECT_EQ(a->got.size(), 1u);
  polls_->close();
  EXPECT_TRUE(other->got.empty());
}

TEST_F(LongPollsTest, ATimerAnswersAndMayWaitAgain) {
  auto r = std::make_shared<Answers>();
  int looks = 0;
  LongPolls::Timeout look = [&](const Reply& x) {
    if (++looks < 3) return polls_->wait(7, 0, x, look);
    x.send(Answer::json(200, "{}"));
  };
  polls_->wait(7, 0, reply(r), look);
  uv_run(&loop_, UV_RUN_DEFAULT);  // until no timer is left
  EXPECT_EQ(looks, 3);
  EXPECT_EQ(r->got, std::vector<int>{200});
  EXPECT_EQ(polls_->size(), 0u);
}

// The loop ends with requests still waiting: each wait ends unanswered and frees its responder.
TEST_F(LongPollsTest, ClosingEndsEveryWaitAndFreesWhatItHolds) {
  std::weak_ptr<Answers> held;
  {
    auto r = std::make_shared<Answers>();
    held = r;
    polls_->wait(4, 3600000, reply(r), never());
    polls_->wait(5, 3600000, reply(r), never());
  }
  polls_->close();
  EXPECT_EQ(polls_->size(), 0u);
  uv_run(&loop_, UV_RUN_NOWAIT);
  EXPECT_TRUE(held.expired()) << "a closed wait still holds its responder";
}
