// The GPU worker's proving keys within a memory budget (gpu.key_memory): keys stay resident while
// they fit; beyond that the least recently used key gives its memory back and is loaded again when
// a proof needs it. A key given back keeps its parsed host copy within gpu.key_host_memory, so that
// loading it again is an upload rather than a file read. The policy only: what a load or an eviction
// does is the key's own (CachedKey), so that the policy is tested without a device.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cuzk::gpuw {

// What one load took, by part; 0 for a part the load did not do.
struct LoadParts {
  double read_ms = 0;     // the file read and parsed, its points checked
  double prepare_ms = 0;  // the key's image made: matrices compiled, its arrays page-locked
  double upload_ms = 0;   // the points and matrices copied to the device
  double check_ms = 0;    // the points checked there (a key read for the device to check)
  double tables_ms = 0;   // the precomputed tables built there
  size_t upload_bytes = 0;
  size_t table_bytes = 0;   // what its tables took beyond the key's own needs (a device's)
  size_t pinned_bytes = 0;  // host memory of its image page-locked for the loads
};

// One circuit's proving key as the cache drives it.
class CachedKey {
 public:
  virtual ~CachedKey() = default;
  // Makes the key resident, taking at most `limit` bytes beyond what the key itself needs (0: no
  // limit): a device cuts its precomputed tables to fit, never the key. Returns the bytes it took
  // and fills `parts`. Reads the file unless a host copy is there. reuse: the host copy is to serve
  // later loads (keys come and go within a host budget), so the load prepares it for them (a
  // device page-locks it). Throws what the load throws; nothing is resident then.
  virtual size_t load(size_t limit, bool reuse, LoadParts& parts) = 0;
  // Gives the memory of a resident key back. Its host copy stays.
  virtual void evict() = 0;
  // Drops the host copy of a key that is not resident: its next load reads the file.
  virtual void drop_host() = 0;
  virtual bool has_host() const = 0;
  // Why the key can never be loaded (its file unreadable, larger than the budget), or "": such a
  // key is never preloaded, and using it throws std::invalid_argument with this text, evicting nothing.
  virtual std::string refusal() const { return ""; }
};

struct KeyEvent {
  enum Kind { Load, Evict } kind;
  size_t key;
  size_t bytes;          // what the key takes, or took, where it proves
  double load_ms = 0;    // Load: the load's wall time
  bool from_host = false;  // Load: from the host copy, not the file
  LoadParts parts;         // Load: where its time went
  double evict_ms = 0;     // Evict: giving the memory back
  bool kept_on_host = false;  // Evict: the host copy stays
};

class KeyCache {
 public:
  // budget: bytes all resident keys may take together, 0 for no limit. host_budget: bytes of host
  // copies of keys that are not resident. estimates[i]: the least key i takes (its points and
  // matrices, from the header), until a load measures it.
  KeyCache(std::vector<std::unique_ptr<CachedKey>> keys, std::vector<size_t> estimates, size_t budget,
           size_t host_budget, std::function<void(const KeyEvent&)> report);
  // At start: every key, in order, while it fits beside those before it.
  void preload();
  // A key learnt later (a circuit added at run time), as key size(); not loaded until used.
  void add(std::unique_ptr<CachedKey> key, size_t estimate);
  // Makes key i resident, giving back the least recently used others as the budget needs, and marks
  // it the most recently used. Returns it.
  CachedKey& use(size_t i);
  bool resident(size_t i) const { return slots_.at(i).resident; }
  // What key i takes where it proves: measured once it has been loaded, else its estimate.
  size_t bytes(size_t i) const;
  size_t resident_bytes() const;
  size_t budget() const { return budget_; }
  size_t size() const { return slots_.size(); }
  // Whether every key fits at once by what each needs without tables (measured once loaded, the
  // header's estimate before): then each may add an equal share of what is left (precomputed
  // tables); otherwise keys take no more than they need, and come and go.
  bool all_fit() const { return all_fit_; }

 private:
  struct Slot {
    std::unique_ptr<CachedKey> key;
    // estimate: the header's; measured: what the last load took; need: that without its tables.
    size_t estimate = 0, measured = 0, need = 0;
    bool resident = false;
    uint64_t last_use = 0;  // of the device copy while resident, of the host copy after
  };
  void load(size_t i);
  void evict(size_t i, size_t loading);
  // The least recently used resident key other than `keep`, or size() when there is none.
  size_t lru_resident(size_t keep) const;
  void trim_host(size_t loading);
  void share_rest();  // all_fit_ and share_ from what the keys need: measured, else estimated
  std::vector<Slot> slots_;
  size_t budget_, host_budget_;
  size_t share_ = 0;  // bytes each key may add beyond its estimate when all fit
  bool all_fit_ = true;
  uint64_t clock_ = 0;
  std::function<void(const KeyEvent&)> report_;
};

}  // namespace cuzk::gpuw
