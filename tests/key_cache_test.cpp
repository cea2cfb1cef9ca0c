// The GPU worker's key budget: which keys stay resident, which give way, what each load may take,
// and which host copies are kept; with keys that only count, so that no device is needed.
#include "gpu-worker/key_cache.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>
#include <string>
#include <vector>

namespace {

using cuzk::gpuw::CachedKey;
using cuzk::gpuw::KeyCache;
using cuzk::gpuw::KeyEvent;

// A key that takes `base` bytes, plus whatever of the limit is left beyond it when `greedy` (a
// device's tables), and fails its load `fail_loads` times.
struct FakeKey : CachedKey {
  size_t base, greedy;
  std::vector<std::string>* log;
  std::string name;
  bool resident = false, host = false;
  int fail_loads = 0;
  size_t last_limit = 0;
  bool last_reuse = false;
  FakeKey(std::string n, size_t b, size_t g, std::vector<std::string>* l) : base(b), greedy(g), log(l), name(std::move(n)) {}
  size_t load(size_t limit, bool reuse, cuzk::gpuw::LoadParts& parts) override {
    last_limit = limit, last_reuse = reuse;
    parts.read_ms = host ? 0 : 4, parts.upload_ms = 2, parts.upload_bytes = base;
    if (fail_loads > 0) {
      fail_loads--;
      throw std::runtime_error("out of device memory");
    }
    log->push_back("load " + name + (host ? " host" : " file"));
    resident = host = true;
    parts.table_bytes = limit > base ? std::min(greedy, limit - base) : 0;
    return base + parts.table_bytes;
  }
  void evict() override {
    log->push_back("evict " + name);
    resident = false;
  }
  void drop_host() override {
    log->push_back("drop " + name);
    host = false;
  }
  bool has_host() const override { return host; }
  std::string refusal() const override { return refused; }
  std::string refused;
};

struct Fixture {
  std::vector<std::string> log;
  std::vector<KeyEvent> events;
  std::vector<FakeKey*> keys;
  std::unique_ptr<KeyCache> cache;
  // One key per entry of bases, each with an estimate of its base and `greedy` bytes of tables.
  Fixture(std::vector<size_t> bases, size_t budget, size_t host_budget, size_t greedy = 0) {
    std::vector<std::unique_ptr<CachedKey>> ks;
    for (size_t i = 0; i < bases.size(); i++) {
      auto k = std::make_unique<FakeKey>("k" + std::to_string(i), bases[i], greedy, &log);
      keys.push_back(k.get());
      ks.push_back(std::move(k));
    }
    cache = std::make_unique<KeyCache>(std::move(ks), bases, budget, host_budget,
                                       [this](const KeyEvent& e) { events.push_back(e); });
  }
  std::vector<std::string> take() { return std::exchange(log, {}); }
};

using Log = std::vector<std::string>;

TEST(KeyCache, EveryKeyThatFitsIsLoadedAtStartAndNeverReloaded) {
  Fixture f({100, 200, 300}, 600, 0);
  EXPECT_TRUE(f.cache->all_fit());
  f.cache->preload();
  EXPECT_EQ(f.take(), (Log{"load k0 file", "load k1 file", "load k2 file"}));
  for (int round = 0; round < 3; round++)
    for (size_t i = 0; i < 3; i++) f.cache->use(i);
  EXPECT_TRUE(f.take().empty());
  EXPECT_EQ(f.cache->resident_bytes(), 600u);
}

TEST(KeyCache, KeysThatAllFitShareWhatIsLeftForTables) {
  // 1000 of budget, 400 of keys: each may add (1000 - 400) / 2 = 300.
  Fixture f({100, 300}, 1000, 0, /*greedy=*/10000);
  f.cache->preload();
  EXPECT_EQ(f.keys[0]->last_limit, 400u);
  EXPECT_EQ(f.keys[1]->last_limit, 600u);
  EXPECT_EQ(f.cache->bytes(0), 400u);
  EXPECT_EQ(f.cache->bytes(1), 600u);
  EXPECT_EQ(f.cache->resident_bytes(), 1000u);
  EXPECT_TRUE(f.cache->resident(0) && f.cache->resident(1));
}

TEST(KeyCache, BeyondTheBudgetTheLeastRecentlyUsedGivesWay) {
  // Two of three fit; no key may take more than it needs.
  Fixture f({100, 100, 100}, 250, 0, /*greedy=*/1000);
  EXPECT_FALSE(f.cache->all_fit());
  f.cache->preload();
  EXPECT_EQ(f.take(), (Log{"load k0 file", "load k1 file"}));
  EXPECT_EQ(f.keys[0]->last_limit, 100u);
  EXPECT_FALSE(f.keys[0]->last_reuse);  // no host copy is kept: nothing to prepare for later loads
  f.cache->use(0);  // k1 is now the least recently used
  f.cache->use(2);
  EXPECT_EQ(f.take(), (Log{"evict k1", "drop k1", "load k2 file"}));
  EXPECT_TRUE(f.cache->resident(0));
  EXPECT_FALSE(f.cache->resident(1));
  f.cache->use(1);
  EXPECT_EQ(f.take(), (Log{"evict k0", "drop k0", "load k1 file"}));
  EXPECT_LE(f.cache->resident_bytes(), 250u);
  // The events: loads with their bytes, evictions saying the host copy went.
  ASSERT_EQ(f.events.size(), 6u);
  EXPECT_EQ(f.events[2].kind, KeyEvent::Evict);
  EXPECT_EQ(f.events[2].key, 1u);
  EXPECT_FALSE(f.events[2].kept_on_host);
  EXPECT_EQ(f.events[3].kind, KeyEvent::Load);
  EXPECT_EQ(f.events[3].bytes, 100u);
  EXPECT_FALSE(f.events[3].from_host);
  // A load's parts, as the key reported them.
  EXPECT_EQ(f.events[3].parts.read_ms, 4.0);
  EXPECT_EQ(f.events[3].parts.upload_ms, 2.0);
  EXPECT_EQ(f.events[3].parts.upload_bytes, 100u);
  EXPECT_GE(f.events[2].evict_ms, 0.0);
}

TEST(KeyCache, HostCopiesAreKeptWithinTheirBudgetLeastRecentlyUsedDroppedFirst) {
  // One key resident at a time; host copies of two more.
  Fixture f({100, 100, 100, 100}, 100, 200);
  f.cache->preload();
  for (size_t i : {1, 2, 3}) f.cache->use(i);
  // k0 was dropped when k3's load left three copies for room for two.
  EXPECT_EQ(f.take(), (Log{"load k0 file", "evict k0", "load k1 file", "evict k1", "load k2 file", "evict k2",
                           "drop k0", "load k3 file"}));
  f.cache->use(1);
  EXPECT_EQ(f.take(), (Log{"evict k3", "load k1 host"}));
  EXPECT_TRUE(f.events.back().from_host);
  EXPECT_TRUE(f.keys[1]->last_reuse);  // keys come and go, copies are kept: prepared for reuse
  EXPECT_EQ(f.events.back().parts.read_ms, 0.0);  // no file read
  EXPECT_EQ(f.events.back().parts.upload_ms, 2.0);
}

TEST(KeyCache, AKeyLargerThanItsEstimatePushesOthersOut) {
  Fixture f({100, 100}, 250, 0);
  f.cache->preload();
  f.take();
  f.keys[0]->base = 200;  // k0's next load takes 200: k1 no longer fits beside it
  f.cache->use(1);
  EXPECT_TRUE(f.take().empty());
  // Reload k0 after a forced eviction: 200 + 100 > 250.
  Fixture g({100, 100, 100}, 250, 0);
  g.keys[2]->base = 200;
  g.cache->preload();  // k0, k1
  g.take();
  g.cache->use(2);  // expected 100: k0 gives way; it takes 200: k1 gives way too
  EXPECT_EQ(g.take(), (Log{"evict k0", "drop k0", "load k2 file", "evict k1", "drop k1"}));
  EXPECT_EQ(g.cache->resident_bytes(), 200u);
  EXPECT_EQ(g.cache->bytes(2), 200u);
}

TEST(KeyCache, ALoadThatFailsIsTriedOnceMoreWithTheOthersGivenBack) {
  Fixture f({100, 100, 100}, 250, 0);
  f.cache->preload();  // k0, k1
  f.take();
  f.keys[2]->fail_loads = 1;
  f.cache->use(2);
  EXPECT_EQ(f.take(), (Log{"evict k0", "drop k0", "evict k1", "drop k1", "load k2 file"}));
  EXPECT_TRUE(f.cache->resident(2));
  // Alone on the device and still failing: the error goes to the proof, and nothing is resident.
  f.keys[0]->fail_loads = 2;
  EXPECT_THROW(f.cache->use(0), std::runtime_error);
  EXPECT_FALSE(f.cache->resident(0));
  EXPECT_EQ(f.cache->resident_bytes(), 0u);
}

}  // namespace

// A circuit added at run time brings its key later: it shares the budget from then on. One that
// can never be loaded is never preloaded, and using it is the proof's error, evicting nothing.
TEST(KeyCache, KeysLearntLaterAndKeysRefused) {
  Fixture f({100}, 1000, 0, /*greedy=*/10000);
  f.cache->preload();
  EXPECT_EQ(f.keys[0]->last_limit, 1000u);  // alone: the whole budget
  auto late = std::make_unique<FakeKey>("late", 300, 10000, &f.log);
  FakeKey* l = late.get();
  f.cache->add(std::move(late), 300);
  ASSERT_EQ(f.cache->size(), 2u);
  EXPECT_TRUE(f.cache->all_fit());
  f.take();
  f.cache->use(1);  // k0 took the whole budget for its tables: it gives way
  EXPECT_EQ(f.take(), (Log{"evict k0", "drop k0", "load late file"}));
  EXPECT_EQ(l->last_limit, 300u + (1000u - 400u) / 2);
  auto bad = std::make_unique<FakeKey>("bad", 5000, 0, &f.log);
  bad->refused = "circuit 'bad': its key needs 5000 bytes, more than gpu.key_memory";
  f.cache->add(std::move(bad), 5000);
  EXPECT_TRUE(f.cache->all_fit());  // a refused key takes no share
  try {
    f.cache->use(2);
    ADD_FAILURE() << "a refused key was used";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("more than gpu.key_memory"), std::string::npos);
  }
  EXPECT_TRUE(f.take().empty());
  EXPECT_TRUE(f.cache->resident(1));
  Fixture g({100, 100}, 0, 0);
  g.keys[1]->refused = "unreadable";
  g.cache->preload();
  EXPECT_EQ(g.take(), (Log{"load k0 file"}));
}

TEST(KeyCache, KeysThatNeedMoreThanTheirHeadersSayStopFittingAndComeAndGo) {
  // By the headers both keys fit (200 of 210); k0's load finds it needs 150, tables aside.
  Fixture f({100, 100}, 210, 500, /*greedy=*/1000);
  EXPECT_TRUE(f.cache->all_fit());
  f.keys[0]->base = 150;
  f.cache->preload();
  EXPECT_EQ(f.take(), (Log{"load k0 file"}));  // k1 no longer fits beside it
  EXPECT_FALSE(f.keys[0]->last_reuse);          // loaded while all seemed to fit
  EXPECT_FALSE(f.cache->all_fit());
  EXPECT_EQ(f.cache->bytes(0), 150u);
  // Now keys come and go, their host copies kept: each is loaded to be loaded again.
  f.cache->use(1);
  EXPECT_EQ(f.take(), (Log{"evict k0", "load k1 file"}));
  EXPECT_TRUE(f.keys[1]->last_reuse);
  EXPECT_EQ(f.keys[1]->last_limit, 100u);  // no share for tables once they do not all fit
  f.cache->use(0);
  EXPECT_EQ(f.take(), (Log{"evict k1", "load k0 host"}));
  EXPECT_TRUE(f.keys[0]->last_reuse);
}
