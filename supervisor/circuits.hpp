// The circuits this daemon serves, by index: those of the config file, then those added at run time
// (docs/API.md, "Circuits"), at indices every process agrees on. Circuits owns the list (kept in
// the config's circuits, which the workers read too), each circuit's key header and witness
// generator, the submission checks made against them, the key budget the GPU workers report, and
// the runtime list file the workers learn added circuits from (config::write_runtime_circuits). An
// operator adds a circuit by naming its files under daemon.key_dirs; it is checked as start-up
// checks a configured one (its key's header, the budget, the slot rings, its witness generator
// built) on the thread pool, kept in the job store, and appended to the list, so that nothing in
// flight is drained or disturbed. A removed circuit takes no new jobs; its jobs finish. With a
// shared store every node serves the circuits the store holds whose files it has.
#pragma once
#include <uv.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "groth16/formats.hpp"
#include "supervisor/http/http_server.hpp"
#include "supervisor/intake/submission.hpp"
#include "supervisor/partitions.hpp"
#include "supervisor/queue.hpp"
#include "supervisor/supervisor_types.hpp"
#include "supervisor/timeline.hpp"
#include "witness/manifest.hpp"

namespace cuzk::sup {

// Each configured circuit's zkey header, read completely enough to know the file is whole (its
// section table fits the file), and its r1cs's header where one is configured; throws ConfigError
// naming circuits[i].zkey or circuits[i].r1cs. `--check-config` runs it too.
std::vector<ZKeyHeader> read_keys(const config::Config& cfg);
// "" when c has no r1cs, or one whose header is readable and matches its key (curve, nWires =
// nVars, public signals); else why not, naming the file. A synthesis worker could not use it.
std::string r1cs_problem(const config::CircuitConfig& c, const ZKeyHeader& key);

struct CircuitCheck;

class Circuits {
 public:
  // cfg's circuits are the list. ended: called on the loop when a check on the thread pool ends
  // (the daemon's stop waits for those).
  Circuits(config::Config& cfg, uv_loop_t* loop, Timeline& timeline, const Partitions& parts, const Phase& phase,
           std::function<void()> ended);
  ~Circuits();

  // Start-up, before the loop: the configured circuits' keys and generators (throws ConfigError).
  void open_configured();
  // Then, with the rings sized: the store's runtime circuits served again where they can be, and
  // the workers' list written; q is told which circuits this node serves, now and on each change.
  void restore(CircuitStore& q, const std::vector<CircuitRec>& stored, uint64_t max_vars, uint64_t max_domain);

  size_t size() const { return cfg_.circuits.size(); }
  const config::CircuitConfig& operator[](uint32_t i) const { return cfg_.circuits[i]; }
  // The newest circuit of that name, removed or not (a removed circuit's jobs still finish).
  std::optional<uint32_t> index(const std::string& name) const;
  const std::vector<ZKeyHeader>& keys() const { return keys_; }
  bool has_generator(uint32_t i) const { return i < generators_.size() && generators_[i].has_value(); }
  // Why a removed runtime circuit that this start could not serve again cannot finish its jobs,
  // or null.
  const std::string* removed_unserved(const std::string& name) const;
  // Submissions are checked against the circuits served now.
  const SubmitValidator& validator() const { return *validator_; }

  // A GPU worker's Hello: what one key may take on its device.
  void note_key_budget(int device, uint64_t bytes) { budgets_[device] = bytes; }
  // What a key may take on this daemon's devices: gpu.key_memory, else the least a GPU worker
  // reported (its device's memory less the tables' headroom); 0 when none is known.
  uint64_t key_budget() const;

  // GET /v1/circuits, POST /v1/circuits, DELETE /v1/circuits/{name}.
  void handle(const http::Request& req, std::shared_ptr<http::Responder> r);
  // The tick: with a shared store, the circuits other nodes added or removed.
  void sync();
  // Checks running on the thread pool.
  size_t checking() const { return checks_; }

 private:
  void serve_circuit(config::CircuitConfig cc, const ZKeyHeader& key, std::optional<witness::Manifest> gen,
                     int64_t added_ms);
  void withdraw_last(const std::string& why);
  bool publish(CircuitCheck& c);
  void claimable();  // the queue hears which circuits this node serves
  void add(const http::Request& req, std::shared_ptr<http::Responder> r);
  void prime_check(CircuitCheck& c) const;
  void check(CircuitCheck* c, void (Circuits::*after)(CircuitCheck&));
  void after_check(CircuitCheck& c);
  void remove(const std::string& name, std::shared_ptr<http::Responder> r);
  void after_stored_check(CircuitCheck& c);
  nlohmann::json entry(uint32_t i, bool paths) const;
  nlohmann::json list(bool paths) const;

  config::Config& cfg_;
  uv_loop_t* loop_;
  Timeline& timeline_;
  const Partitions& parts_;
  const Phase& phase_;
  std::function<void()> ended_;
  CircuitStore* queue_ = nullptr;
  uint64_t max_vars_ = 0, max_domain_ = 0;                    // the slot rings'
  std::vector<ZKeyHeader> keys_;                              // per circuit: nVars, nPublic, domain size, curve
  std::vector<std::optional<witness::Manifest>> generators_;  // per circuit: its witness generator, if any
  std::unique_ptr<SubmitValidator> validator_;
  std::map<int, uint64_t> budgets_;  // by device: what a key may take there, as its GPU worker said
  struct Unserved {
    std::string why;
    uint64_t at_ns = 0;  // when it was last checked
  };
  std::map<std::string, Unserved> unserved_;  // runtime circuits of the store this node cannot serve
  // Removed runtime circuits the store keeps for their unfinished jobs that this start could not
  // serve again (files gone, a configured circuit took the name): why, for their jobs' failure.
  std::map<std::string, std::string> removed_unserved_;
  std::set<std::string> checking_;                   // runtime circuits being checked on the thread pool
  std::map<std::string, int64_t> runtime_added_ms_;  // runtime circuits served: when the store got each
  size_t checks_ = 0;
  bool syncing_ = false;
  uint64_t next_sync_ns_ = 0;
};

}  // namespace cuzk::sup
