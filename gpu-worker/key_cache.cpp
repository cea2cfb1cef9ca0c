#include "gpu-worker/key_cache.hpp"

#include <chrono>
#include <stdexcept>
#include <utility>

namespace cuzk::gpuw {

KeyCache::KeyCache(std::vector<std::unique_ptr<CachedKey>> keys, std::vector<size_t> estimates, size_t budget,
                   size_t host_budget, std::function<void(const KeyEvent&)> report)
    : budget_(budget), host_budget_(host_budget), report_(std::move(report)) {
  if (keys.size() != estimates.size()) throw std::invalid_argument("KeyCache: one estimate per key");
  for (size_t i = 0; i < keys.size(); i++) {
    Slot s;
    s.key = std::move(keys[i]);
    s.estimate = estimates[i];
    slots_.push_back(std::move(s));
  }
  share_rest();
}

void KeyCache::add(std::unique_ptr<CachedKey> key, size_t estimate) {
  Slot s;
  s.key = std::move(key);
  s.estimate = estimate;
  slots_.push_back(std::move(s));
  // Keys loaded before keep what they took; a load that needs their room gives it back (load()).
  share_rest();
}

void KeyCache::share_rest() {
  size_t total = 0, n = 0;
  for (const Slot& s : slots_)
    if (s.key->refusal().empty()) total += s.need ? s.need : s.estimate, n++;
  all_fit_ = budget_ == 0 || total <= budget_;
  share_ = budget_ && all_fit_ && n ? (budget_ - total) / n : 0;
}

size_t KeyCache::bytes(size_t i) const {
  const Slot& s = slots_.at(i);
  return s.measured ? s.measured : s.estimate;
}

size_t KeyCache::resident_bytes() const {
  size_t n = 0;
  for (const Slot& s : slots_)
    if (s.resident) n += s.measured;
  return n;
}

void KeyCache::preload() {
  for (size_t i = 0; i < slots_.size(); i++)
    if (slots_[i].key->refusal().empty() && (!budget_ || resident_bytes() + bytes(i) <= budget_)) use(i);
}

CachedKey& KeyCache::use(size_t i) {
  Slot& s = slots_.at(i);
  if (std::string why = s.key->refusal(); !why.empty()) throw std::invalid_argument(why);
  if (!s.resident) load(i);
  s.last_use = ++clock_;
  return *s.key;
}

size_t KeyCache::lru_resident(size_t keep) const {
  size_t best = slots_.size();
  for (size_t j = 0; j < slots_.size(); j++)
    if (j != keep && slots_[j].resident && (best == slots_.size() || slots_[j].last_use < slots_[best].last_use))
      best = j;
  return best;
}

void KeyCache::load(size_t i) {
  Slot& s = slots_[i];
  // Room first, by what the key is known or expected to take.
  if (budget_)
    for (size_t j; resident_bytes() + bytes(i) > budget_ && (j = lru_resident(i)) < slots_.size();) evict(j, i);
  // When every key fits, each may add an equal share of the rest (a device's tables); otherwise a
  // key takes what it needs and no more, so that as many keys as possible stay resident.
  const size_t limit = budget_ ? (s.need ? s.need : s.estimate) + share_ : 0;
  const bool from_host = s.key->has_host();
  const auto t0 = std::chrono::steady_clock::now();
  size_t took;
  LoadParts parts;
  // Host copies serve later loads only where keys are given back and copies are kept.
  const bool reuse = !all_fit_ && host_budget_ > 0;
  try {
    took = s.key->load(limit, reuse, parts);
  } catch (...) {
    // The estimate was short of what the device needs (its MSM scratch): with the others given
    // back, once more.
    if (lru_resident(i) == slots_.size()) throw;
    for (size_t j; (j = lru_resident(i)) < slots_.size();) evict(j, i);
    parts = {};
    took = s.key->load(limit, reuse, parts);
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  s.measured = took ? took : s.estimate;
  s.need = s.measured > parts.table_bytes ? s.measured - parts.table_bytes : s.measured;
  share_rest();  // a key that needs more than its header said may leave the keys no longer all fitting
  s.resident = true;
  s.last_use = ++clock_;
  KeyEvent e{KeyEvent::Load, i, s.measured, ms, from_host, false};
  e.parts = parts;
  report_(e);
  // A key larger than its estimate may leave the others over the budget.
  if (budget_)
    for (size_t j; resident_bytes() > budget_ && (j = lru_resident(i)) < slots_.size();) evict(j, i);
  trim_host(i);
}

void KeyCache::evict(size_t i, size_t loading) {
  Slot& s = slots_[i];
  const auto t0 = std::chrono::steady_clock::now();
  s.key->evict();
  KeyEvent e{KeyEvent::Evict, i, s.measured, 0, false, false};
  e.evict_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  s.resident = false;
  s.last_use = ++clock_;
  trim_host(loading);
  e.kept_on_host = s.key->has_host();
  report_(e);
}

// Host copies of keys that are not resident, least recently used dropped first, within host_budget;
// never the copy of the key being loaded.
void KeyCache::trim_host(size_t loading) {
  for (;;) {
    size_t held = 0, oldest = slots_.size();
    for (size_t j = 0; j < slots_.size(); j++) {
      const Slot& s = slots_[j];
      if (s.resident || j == loading || !s.key->has_host()) continue;
      held += s.estimate;
      if (oldest == slots_.size() || s.last_use < slots_[oldest].last_use) oldest = j;
    }
    if (held <= host_budget_ || oldest == slots_.size()) return;
    slots_[oldest].key->drop_host();
  }
}

}  // namespace cuzk::gpuw
