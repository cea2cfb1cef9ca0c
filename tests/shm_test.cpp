// The slot ring and the control messages, in one process and across fork().
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <nlohmann/json.hpp>

#include "shm/messages.hpp"
#include "math/bls12_381.hpp"
#include "shm/slot_ring.hpp"

using namespace cuzk::shm;
using Fr = cuzk::bls12_381::Fr;

namespace {
std::string test_instance() { return "test" + std::to_string(getpid()); }
}  // namespace

// A ring whose slots hold w only (synthesis.abc = "gpu"): smaller by a, b, c, and no a, b, c to take.
TEST(SlotRing, WitnessOnlySlots) {
  const std::string inst = test_instance();
  auto seg = Segment::create(inst, 5, 3, 100, 256, false);
  EXPECT_FALSE(seg->abc_in_slots());
  EXPECT_EQ(seg->size(), segment_bytes_for(3, 100, 256, false));
  EXPECT_LT(segment_bytes_for(3, 100, 256, false), segment_bytes_for(3, 100, 256));
  EXPECT_EQ(seg->header().slot_bytes, slot_bytes_for(100, 256, false));
  EXPECT_GE(reinterpret_cast<char*>(seg->w<Fr>(1)), reinterpret_cast<char*>(seg->w<Fr>(0) + 100));
  EXPECT_THROW(seg->a<Fr>(0), std::logic_error);
  auto worker = Segment::open(inst, 5);
  EXPECT_FALSE(worker->abc_in_slots());
  EXPECT_EQ(worker->header().max_domain, 256u);
  auto full = Segment::create(inst, 6, 1, 100, 256);
  EXPECT_TRUE(full->abc_in_slots());
  Segment::remove(inst, 5);
  Segment::remove(inst, 6);
}

TEST(SlotRing, CreateOpenLayoutAndTransitions) {
  const std::string inst = test_instance();
  auto seg = Segment::create(inst, 3, 4, 100, 256);
  EXPECT_EQ(seg->name(), inst + ".dev3");
  EXPECT_EQ(seg->n_slots(), 4u);
  EXPECT_EQ(seg->size(), segment_bytes_for(4, 100, 256));
  for (uint32_t i = 0; i < 4; i++) {
    EXPECT_EQ(seg->state(i), SlotState::Free);
    // Each vector is page aligned and the four do not overlap, nor do slots.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(seg->w<Fr>(i)) % 4096, 0u);
    EXPECT_GE(reinterpret_cast<char*>(seg->a<Fr>(i)), reinterpret_cast<char*>(seg->w<Fr>(i) + 100));
    EXPECT_GE(reinterpret_cast<char*>(seg->b<Fr>(i)), reinterpret_cast<char*>(seg->a<Fr>(i) + 256));
    EXPECT_GE(reinterpret_cast<char*>(seg->c<Fr>(i)), reinterpret_cast<char*>(seg->b<Fr>(i) + 256));
    if (i + 1 < 4) {
      EXPECT_GE(reinterpret_cast<char*>(seg->w<Fr>(i + 1)), reinterpret_cast<char*>(seg->c<Fr>(i) + 256));
    }
  }
  EXPECT_LE(reinterpret_cast<char*>(seg->c<Fr>(3) + 256), reinterpret_cast<char*>(seg->base()) + seg->size());
  EXPECT_THROW(seg->slot(4), std::out_of_range);

  auto other = Segment::open(inst, 3);  // a second mapping sees the same memory
  seg->w<Fr>(2)[5] = Fr::one();
  EXPECT_EQ(other->w<Fr>(2)[5], Fr::one());
  EXPECT_TRUE(seg->transition(2, SlotState::Free, SlotState::Synthesizing));
  EXPECT_FALSE(other->transition(2, SlotState::Free, SlotState::Synthesizing));
  EXPECT_TRUE(other->transition(2, SlotState::Synthesizing, SlotState::Ready));
  EXPECT_EQ(seg->state(2), SlotState::Ready);
  seg->force(2, SlotState::Free);
  EXPECT_EQ(other->state(2), SlotState::Free);

  EXPECT_THROW(Segment::open(inst, 4), std::runtime_error);  // no such device
  // A name that exists is never taken over, even one this process made: the ring stays as it was.
  EXPECT_THROW(Segment::create(inst, 3, 2, 10, 16), NameTaken);
  EXPECT_EQ(Segment::open(inst, 3)->n_slots(), 4u);
  EXPECT_TRUE(Segment::remove(inst, 3));
  EXPECT_FALSE(Segment::remove(inst, 3));
}

TEST(SlotRing, NamesHaveARandomPart) {
  const std::string a = ring_prefix("inst-1"), b = ring_prefix("inst-1");
  EXPECT_EQ(a.rfind("cuzk.inst-1.", 0), 0u) << a;
  EXPECT_EQ(a.size(), std::string("cuzk.inst-1.").size() + 16) << a;
  EXPECT_NE(a, b);
  EXPECT_TRUE(is_ring_prefix(a));
  EXPECT_FALSE(is_ring_prefix("cuzk.inst-1"));
  EXPECT_FALSE(is_ring_prefix("cuzk.inst-1.0123456789abcdeg"));
  EXPECT_FALSE(is_ring_prefix("cuzk.../x.0123456789abcdef"));
  EXPECT_FALSE(is_ring_prefix("other.inst.0123456789abcdef"));
  EXPECT_EQ(segment_name(a, 2), a + ".dev2");
}

// A segment that others may open, or that another user owns, is not mapped by a worker, and the
// supervisor neither takes over nor removes another user's.
TEST(SlotRing, RefusesSegmentsItDidNotMake) {
  const std::string inst = test_instance() + "foreign";
  auto seg = Segment::create(inst, 0, 1, 8, 8);
  struct stat st {};
  ASSERT_EQ(::stat(("/dev/shm/" + seg->name()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::chmod(("/dev/shm/" + seg->name()).c_str(), 0666), 0);
  try {
    Segment::open(inst, 0);
    ADD_FAILURE() << "a world-writable segment was mapped";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("mode 0666"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/dev/shm/" + seg->name()), std::string::npos) << e.what();
  }
  if (::geteuid() == 0) {  // another user's segment (root can give it away)
    ASSERT_EQ(::chmod(("/dev/shm/" + seg->name()).c_str(), 0600), 0);
    ASSERT_EQ(::chown(("/dev/shm/" + seg->name()).c_str(), 65534, 65534), 0);
    try {
      Segment::open(inst, 0);
      ADD_FAILURE() << "another user's segment was mapped";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("owned by uid 65534"), std::string::npos) << e.what();
    }
    EXPECT_THROW(Segment::create(inst, 0, 1, 8, 8), NameTaken);
    EXPECT_FALSE(Segment::remove(inst, 0));
    EXPECT_EQ(::stat(("/dev/shm/" + seg->name()).c_str(), &st), 0) << "another user's segment was removed";
    ASSERT_EQ(::chown(("/dev/shm/" + seg->name()).c_str(), 0, 0), 0);
  }
  EXPECT_TRUE(Segment::remove(inst, 0));
}

TEST(SlotRing, RefusesMoreThanDevShmHolds) {
  uint64_t free_bytes = shm_free_bytes();
  ASSERT_GT(free_bytes, 0u);
  uint64_t domain = free_bytes / 32 + 1;  // one slot larger than all free space
  try {
    Segment::create(test_instance(), 0, 1, 1, domain);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/shm has"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(Segment::remove(test_instance(), 0));
}

TEST(SlotRing, CrossProcessHandOff) {
  const std::string inst = test_instance();
  auto seg = Segment::create(inst, 0, 1, 8, 8);
  ASSERT_TRUE(seg->transition(0, SlotState::Free, SlotState::Synthesizing));
  pid_t pid = fork();
  if (pid == 0) {
    auto s = Segment::open(inst, 0);
    for (int i = 0; i < 8; i++) s->a<Fr>(0)[i] = Fr::from_u64(uint64_t(i) + 7);
    _exit(s->transition(0, SlotState::Synthesizing, SlotState::Ready) ? 0 : 1);
  }
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  EXPECT_EQ(seg->state(0), SlotState::Ready);
  for (int i = 0; i < 8; i++) EXPECT_EQ(seg->a<Fr>(0)[i], Fr::from_u64(uint64_t(i) + 7));
  Segment::remove(inst, 0);
}

TEST(Messages, RoundTripAndRejectsForeignDatagrams) {
  int fds[2];
  make_socketpair(fds);
  Channel a(fds[0]), b(fds[1]);
  Msg m;
  m.type = uint16_t(MsgType::Synthesize);
  m.job = 42;
  m.partition = 3;
  m.set_text("/tmp/w.wtns");
  // Garbage of the wrong size, then a right-sized datagram with a bad magic and one with a newer
  // version: all dropped; the good message after them arrives.
  char junk[10] = {};
  ASSERT_EQ(::send(fds[0], junk, sizeof(junk), 0), ssize_t(sizeof(junk)));
  Msg bad = m;
  bad.magic = 1;
  ASSERT_EQ(::send(fds[0], &bad, sizeof(bad), 0), ssize_t(sizeof(bad)));
  Msg newer = m;
  newer.version = kMsgVersion + 1;
  ASSERT_EQ(::send(fds[0], &newer, sizeof(newer), 0), ssize_t(sizeof(newer)));
  ASSERT_TRUE(a.send(m));
  Msg got;
  ASSERT_TRUE(b.recv(got));
  EXPECT_EQ(got.job, 42u);
  EXPECT_EQ(got.partition, 3u);
  EXPECT_STREQ(got.text, "/tmp/w.wtns");
  EXPECT_EQ(b.dropped(), 3u);
  close(fds[0]);
  EXPECT_FALSE(b.recv(got));  // EOF
  close(fds[1]);
}

// A worker that must exit while its main thread waits for work wakes that thread this way, and
// still reports on the way out.
TEST(Messages, StopReceivingWakesABlockedRecvAndKeepsSending) {
  int fds[2];
  make_socketpair(fds);
  Channel a(fds[0]), b(fds[1]);
  std::atomic<int> got{-1};
  std::thread reader([&] {
    Msg m;
    got = b.recv(m) ? 1 : 0;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(got.load(), -1);  // still blocked: nothing was sent
  b.stop_receiving();
  reader.join();
  EXPECT_EQ(got.load(), 0);
  Msg m;
  m.type = uint16_t(MsgType::ProveDone);
  m.job = 7;
  ASSERT_TRUE(b.send(m));
  Msg back;
  ASSERT_TRUE(a.recv(back));
  EXPECT_EQ(back.job, 7u);
  EXPECT_FALSE(b.recv(back));
  close(fds[0]);
  close(fds[1]);
}

// A message's text becomes a job's error and so part of its JSON, which nlohmann refuses to dump
// unless it is UTF-8 (type_error 316, thrown from the supervisor's loop: the daemon aborted). Text
// cut inside a character by set_text, or raw bytes, must come out of decode_msg as valid UTF-8.
TEST(Messages, DecodedTextIsValidUtf8) {
  auto decoded = [](const std::string& text) {
    Msg m;
    std::memcpy(m.text, text.data(), std::min(text.size(), sizeof(m.text)));
    Msg got;
    EXPECT_TRUE(decode_msg(&m, sizeof(m), got));
    return std::string(got.text);
  };
  EXPECT_EQ(decoded("plain ascii"), "plain ascii");
  EXPECT_EQ(decoded("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(decoded("cut \xd0"), "cut ?");                   // a 2-byte character cut by set_text
  EXPECT_EQ(decoded("\xff\x80 \xc0\xaf \xed\xa0\x80"), "?? ?? ???");  // stray, overlong, surrogate
  EXPECT_EQ(decoded("\xf4\x90\x80\x80 \xe2\x82"), "???? ??");  // past U+10FFFF, truncated
  // set_text truncates at 1015 bytes whatever the characters: here inside the last "é".
  Msg m;
  m.set_text(std::string(1014, 'a') + "\xc3\xa9");
  Msg got;
  ASSERT_TRUE(decode_msg(&m, sizeof(m), got));
  nlohmann::json j;
  j["error"] = got.text;
  EXPECT_NO_THROW((void)j.dump());
  Msg name;
  std::memcpy(name.name, "EV\xfe", 3);
  ASSERT_TRUE(decode_msg(&name, sizeof(name), got));
  EXPECT_STREQ(got.name, "EV?");
}
