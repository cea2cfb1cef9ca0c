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

// An assignment's header is written by the supervisor's verbs alone, and both workers check a
// slot with one verb: its owner (worker and epoch), job and partition.
TEST(SlotRing, AnAssignmentIsWrittenByOneVerbAndCheckedByOne) {
  const std::string inst = test_instance();
  auto seg = Segment::create(inst, 7, 2, 8, 8);
  auto worker = Segment::open(inst, 7);
  const Owner synth{1, 4}, gpu{2, 7};
  seg->slot(1).cancel.store(1);
  ASSERT_TRUE(seg->assign(1, synth, 42, 3, 5));
  EXPECT_EQ(worker->state(1), SlotState::Synthesizing);
  EXPECT_EQ(worker->slot(1).circuit, 5u);
  EXPECT_EQ(worker->slot(1).generation, 1u);
  EXPECT_FALSE(worker->cancelled(1)) << "an assignment starts uncancelled";
  EXPECT_TRUE(worker->owned_by(1, synth, 42, 3));
  EXPECT_FALSE(worker->owned_by(1, {1, 3}, 42, 3)) << "an earlier epoch of the same worker";
  EXPECT_FALSE(worker->owned_by(1, synth, 42, 2));
  EXPECT_FALSE(worker->owned_by(1, synth, 41, 3));
  EXPECT_FALSE(seg->assign(1, gpu, 43, 0, 5)) << "a slot that is not FREE is not assigned";
  EXPECT_TRUE(worker->owned_by(1, synth, 42, 3));
  ASSERT_TRUE(worker->transition(1, SlotState::Synthesizing, SlotState::Ready));
  seg->hand_over(1, gpu);
  EXPECT_TRUE(worker->owned_by(1, gpu, 42, 3));
  EXPECT_FALSE(worker->owned_by(1, synth, 42, 3));
  seg->cancel(1);
  EXPECT_TRUE(worker->cancelled(1));
  seg->release(1);
  EXPECT_EQ(worker->state(1), SlotState::Free);
  ASSERT_TRUE(seg->assign(1, synth, 44, 0, 5));
  EXPECT_EQ(worker->slot(1).generation, 2u);
  EXPECT_EQ(worker->state(0), SlotState::Free);
  Segment::remove(inst, 7);
}

TEST(Messages, RoundTripAndRejectsForeignDatagrams) {
  int fds[2];
  make_socketpair(fds);
  Channel a(fds[0]), b(fds[1]);
  const Msg m = Msg::synthesize({42, 3, 1, 2, 0}, true, "/tmp/w.json");
  // Garbage of the wrong size, then right-sized datagrams with a bad magic, a newer version and a
  // type no one knows: all dropped; the good message after them arrives.
  char junk[10] = {};
  ASSERT_EQ(::send(fds[0], junk, sizeof(junk), 0), ssize_t(sizeof(junk)));
  Msg bad = m;
  bad.magic = 1;
  ASSERT_EQ(::send(fds[0], &bad, sizeof(bad), 0), ssize_t(sizeof(bad)));
  Msg newer = m;
  newer.version = kMsgVersion + 1;
  ASSERT_EQ(::send(fds[0], &newer, sizeof(newer), 0), ssize_t(sizeof(newer)));
  Msg unknown = m;
  unknown.type = 77;
  ASSERT_EQ(::send(fds[0], &unknown, sizeof(unknown), 0), ssize_t(sizeof(unknown)));
  ASSERT_TRUE(a.send(m));
  Msg got;
  ASSERT_TRUE(b.recv(got));
  ASSERT_EQ(got.kind(), MsgType::Synthesize);
  EXPECT_EQ(got.body.synthesize.work.job, 42u);
  EXPECT_EQ(got.body.synthesize.work.partition, 3u);
  EXPECT_EQ(got.body.synthesize.work.circuit, 2u);
  EXPECT_EQ(got.body.synthesize.from_inputs, 1u);
  EXPECT_STREQ(got.body.synthesize.input, "/tmp/w.json");
  EXPECT_EQ(b.dropped(), 4u);
  close(fds[0]);
  EXPECT_FALSE(b.recv(got));  // EOF
  close(fds[1]);
}

// Every fact the supervisor acts on is a field of its message's type: a GPU worker's key budget,
// which engine computed a witness, a key's residency. The supervisor's end reads without blocking.
TEST(Messages, FactsTravelAsNamedFields) {
  int fds[2];
  make_socketpair(fds);
  Channel worker(fds[0], true), supervisor(fds[1], true);
  ASSERT_TRUE(worker.send(Msg::hello(1, 8, 80ull << 30, "cuda", "0-7")));
  ASSERT_TRUE(worker.send(Msg::synth_done({9, 2, 1, 0, 1}, kOk, WitnessEngine::Fallback, 12.5, 10, 2, "")));
  ASSERT_TRUE(worker.send(Msg::key(3, true, 123456789, 3500)));
  ASSERT_TRUE(worker.send(Msg::prove_done({9, 2, 1, 0, 1}, kFailed, 7.5, "device error")));
  Msg m;
  ASSERT_EQ(supervisor.try_recv(m), Channel::Read::Got);
  ASSERT_EQ(m.kind(), MsgType::Hello);
  EXPECT_EQ(m.body.hello.key_budget, 80ull << 30);
  EXPECT_EQ(m.body.hello.threads, 8u);
  EXPECT_STREQ(m.body.hello.backend, "cuda");
  EXPECT_STREQ(m.body.hello.cpus, "0-7");
  ASSERT_EQ(supervisor.try_recv(m), Channel::Read::Got);
  ASSERT_EQ(m.kind(), MsgType::SynthDone);
  EXPECT_EQ(m.body.synth_done.engine, WitnessEngine::Fallback);
  EXPECT_EQ(m.body.synth_done.synth_ms, 12.5);
  ASSERT_EQ(supervisor.try_recv(m), Channel::Read::Got);
  ASSERT_EQ(m.kind(), MsgType::Key);
  EXPECT_EQ(m.body.key.circuit, 3u);
  EXPECT_EQ(m.body.key.resident, 1u);
  EXPECT_EQ(m.body.key.bytes, 123456789u);
  EXPECT_EQ(m.body.key.load_ms, 3500);
  ASSERT_EQ(supervisor.try_recv(m), Channel::Read::Got);
  ASSERT_EQ(m.kind(), MsgType::ProveDone);
  EXPECT_EQ(m.body.prove_done.work.job, 9u);
  EXPECT_EQ(m.body.prove_done.status, kFailed);
  EXPECT_STREQ(m.body.prove_done.error, "device error");
  EXPECT_EQ(supervisor.try_recv(m), Channel::Read::Empty);
  const char junk[3] = {};
  ASSERT_EQ(::send(fds[0], junk, sizeof(junk), 0), ssize_t(sizeof(junk)));
  EXPECT_EQ(supervisor.try_recv(m), Channel::Read::Dropped);
  ::shutdown(fds[0], SHUT_WR);
  EXPECT_EQ(supervisor.try_recv(m), Channel::Read::Closed);
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
  ASSERT_TRUE(b.send(Msg::prove_done({7, 0, 0, 0, 0}, kOk, 1, "")));
  Msg back;
  ASSERT_TRUE(a.recv(back));
  EXPECT_EQ(back.body.prove_done.work.job, 7u);
  EXPECT_FALSE(b.recv(back));
  close(fds[0]);
  close(fds[1]);
}

// A message's text becomes a job's error and so part of its JSON, which nlohmann refuses to dump
// unless it is UTF-8 (type_error 316, thrown from the supervisor's loop: the daemon aborted). Text
// cut inside a character by set_text, or raw bytes, must come out of decode_msg as valid UTF-8.
TEST(Messages, DecodedTextIsValidUtf8) {
  auto decoded = [](const std::string& text) {
    Msg m(MsgType::SynthDone);
    std::memcpy(m.body.synth_done.error, text.data(), std::min(text.size(), sizeof(m.body.synth_done.error)));
    Msg got;
    EXPECT_TRUE(decode_msg(&m, sizeof(m), got));
    return std::string(got.body.synth_done.error);
  };
  EXPECT_EQ(decoded("plain ascii"), "plain ascii");
  EXPECT_EQ(decoded("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(decoded("cut \xd0"), "cut ?");                   // a 2-byte character cut by set_text
  EXPECT_EQ(decoded("\xff\x80 \xc0\xaf \xed\xa0\x80"), "?? ?? ???");  // stray, overlong, surrogate
  EXPECT_EQ(decoded("\xf4\x90\x80\x80 \xe2\x82"), "???? ??");  // past U+10FFFF, truncated
  // set_text truncates at 1015 bytes whatever the characters: here inside the last "é".
  const Msg m = Msg::prove_done({}, kFailed, 0, std::string(1014, 'a') + "\xc3\xa9");
  Msg got;
  ASSERT_TRUE(decode_msg(&m, sizeof(m), got));
  nlohmann::json j;
  j["error"] = got.body.prove_done.error;
  EXPECT_NO_THROW((void)j.dump());
  Msg name = Msg::event(1, "", "k=v");
  std::memcpy(name.body.event.name, "EV\xfe", 3);
  ASSERT_TRUE(decode_msg(&name, sizeof(name), got));
  EXPECT_STREQ(got.body.event.name, "EV?");
}
