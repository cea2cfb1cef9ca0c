// The circuits served, by index (circuits.hpp): the configured ones opened at start, the runtime
// ones restored from the store, added and removed through the API, and synced from other nodes.
#include "supervisor/circuits.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "supervisor/generators.hpp"
#include "supervisor/helpers.hpp"
#include "supervisor/intake/job_access.hpp"
#include "timeline/events.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuzk::sup {

// The checks of a circuit, off the loop: nothing here touches the supervisor.
struct CircuitCheck {
  uv_work_t req{};
  Circuits* self = nullptr;
  void (Circuits::*after)(CircuitCheck&) = nullptr;  // on the loop, once checked
  std::string name;                   // as asked for ("" when the body has none)
  int64_t added_ms = 0;               // the store's circuits: when it was added there
  json body;                          // the circuit as asked for (an API request or the store)
  config::Config cfg;                 // what it is checked against: key_dirs, the budget, the state folder
  uint64_t max_vars = 0, max_domain = 0;  // the slot rings'
  std::shared_ptr<http::Responder> r;     // an API request's answer, or null (the store's circuits)
  // The result: the circuit, its key's header and its generator; or an HTTP status and why.
  config::CircuitConfig cc;
  ZKeyHeader key;
  std::optional<witness::Manifest> generator;
  int status = 0;
  std::string error;
};

namespace {

constexpr uint64_t kCircuitSyncNs = 5'000'000'000ull;  // a shared store's circuits, looked at this often

void check_steps(CircuitCheck& c) {
  try {
    c.cc = config::circuit_from_json(c.body, c.cfg.daemon.key_dirs);
  } catch (const config::OutsideKeyDirs& e) {
    c.status = 403, c.error = e.what();
    return;
  } catch (const config::ConfigError& e) {
    c.status = 400, c.error = e.what();
    return;
  }
  try {
    c.key = read_zkey_header(c.cc.zkey);
  } catch (const std::exception& e) {
    c.status = 422, c.error = "zkey: " + c.cc.zkey + " is not a usable proving key: " + e.what();
    return;
  }
  if (std::string why = key_over_budget(c.key, c.cc.name, c.cfg.gpu.key_memory); !why.empty()) {
    c.status = 422, c.error = why;
    return;
  }
  if (std::string why = r1cs_problem(c.cc, c.key); !why.empty()) {
    c.status = 422, c.error = "r1cs: " + why;
    return;
  }
  if (c.key.n_vars > c.max_vars || c.key.domain_size > c.max_domain) {
    c.status = 422;
    c.error = "circuit '" + c.cc.name + "' needs slots for " + std::to_string(c.key.n_vars) + " variables and a domain of " +
              std::to_string(c.key.domain_size) + "; the slot rings, sized at start, hold " +
              std::to_string(c.max_vars) + " and " + std::to_string(c.max_domain) +
              ": raise gpu.slot_vars and gpu.slot_domain (or configure the circuit in the file) and restart";
    return;
  }
  if (c.cc.witness_generator.empty()) return;
  try {
    c.generator = open_generator(c.cc, c.key, c.cfg.daemon.state_dir, "witness_generator");
  } catch (const config::ConfigError& e) {
    c.status = 422, c.error = e.what();
  }
}

// Nothing a check meets (a folder it may not list, a full cache, a malformed manifest) escapes the
// thread pool: it is the circuit's refusal.
void run_check(CircuitCheck& c) {
  try {
    check_steps(c);
  } catch (const std::exception& e) {
    c.status = 422, c.error = std::string("circuit '") + c.name + "' cannot be served: " + e.what();
  }
}

std::string name_of(const json& body) {
  return body.is_object() && body.contains("name") && body["name"].is_string() ? body["name"].get<std::string>() : "";
}

}  // namespace

std::vector<ZKeyHeader> read_keys(const config::Config& cfg) {
  std::vector<ZKeyHeader> dims;
  for (size_t i = 0; i < cfg.circuits.size(); i++) {
    try {
      dims.push_back(read_zkey_header(cfg.circuits[i].zkey));
    } catch (const std::exception& e) {
      throw config::ConfigError("circuits[" + std::to_string(i) + "].zkey",
                                cfg.circuits[i].zkey + " is not a usable proving key: " + e.what());
    }
    // A key larger than the whole gpu.key_memory could never be loaded. (With the default, each GPU
    // worker checks against its device's memory and exits 78 the same way.)
    if (std::string why = key_over_budget(dims.back(), cfg.circuits[i].name, cfg.gpu.key_memory); !why.empty())
      throw config::ConfigError("gpu.key_memory", why);
    if (std::string why = r1cs_problem(cfg.circuits[i], dims.back()); !why.empty())
      throw config::ConfigError("circuits[" + std::to_string(i) + "].r1cs", why);
  }
  return dims;
}

std::string r1cs_problem(const config::CircuitConfig& c, const ZKeyHeader& key) {
  if (c.r1cs.empty()) return "";
  try {
    return r1cs_key_mismatch(read_r1cs_header(c.r1cs), c.r1cs, key, c.zkey);
  } catch (const std::exception& e) {
    return c.r1cs + " is not a usable r1cs: " + e.what();
  }
}

Circuits::Circuits(config::Config& cfg, uv_loop_t* loop, Timeline& timeline, const Partitions& parts,
                   const Phase& phase, std::function<void()> ended)
    : cfg_(cfg), loop_(loop), timeline_(timeline), parts_(parts), phase_(phase), ended_(std::move(ended)) {}

Circuits::~Circuits() = default;

void Circuits::open_configured() {
  keys_ = read_keys(cfg_);
  generators_ = open_generators(cfg_, keys_);
}

std::optional<uint32_t> Circuits::index(const std::string& name) const {
  for (size_t i = cfg_.circuits.size(); i-- > 0;)
    if (cfg_.circuits[i].name == name) return uint32_t(i);
  return std::nullopt;
}

const std::string* Circuits::removed_unserved(const std::string& name) const {
  auto it = removed_unserved_.find(name);
  return it == removed_unserved_.end() ? nullptr : &it->second;
}

// Start-up, before the workers: the store's runtime circuits, each checked here as it would be when
// added; one that fails (its files gone or moved out of key_dirs, a configured circuit of the same
// name) is listed as not served, with why, and the daemon starts without it. A removed one that the
// store keeps for its unfinished jobs is served for them, marked removed: it takes no new job.
void Circuits::restore(CircuitStore& q, const std::vector<CircuitRec>& stored, uint64_t max_vars, uint64_t max_domain) {
  queue_ = &q;
  max_vars_ = max_vars, max_domain_ = max_domain;
  for (const CircuitRec& rec : stored) {
    if (rec.removed && cfg_.find_circuit(rec.name)) {
      // Its jobs are bound by name: the configured circuit of that name would prove them with
      // another key. recover() fails them, naming the circuit.
      spdlog::warn("circuit {} (added at run time, removed; jobs unfinished): the config file has a circuit of this "
                   "name, so its jobs cannot finish",
                   rec.name);
      removed_unserved_[rec.name] = "the config file now has another circuit of this name";
      continue;
    }
    if (cfg_.find_circuit(rec.name)) {
      unserved_[rec.name] = {"the config file has a circuit of this name, which is served instead", shm::monotonic_ns()};
      spdlog::warn("circuit {} (added at run time): {}", rec.name, unserved_[rec.name].why);
      continue;
    }
    CircuitCheck c;
    c.name = rec.name, c.added_ms = rec.added_ms;
    prime_check(c);
    c.body = json::parse(rec.config, nullptr, false);
    if (c.body.is_discarded()) c.status = 500, c.error = "its stored entry is not JSON";
    if (!c.status) run_check(c);
    if (c.status && rec.removed) {
      removed_unserved_[rec.name] = c.error;
      spdlog::warn("circuit {} (added at run time, removed; jobs unfinished) cannot be served for its jobs: {}",
                   rec.name, c.error);
      continue;
    }
    if (c.status) {
      unserved_[rec.name] = {c.error, shm::monotonic_ns()};
      spdlog::warn("circuit {} (added at run time) is not served by this node: {}", rec.name, c.error);
      continue;
    }
    serve_circuit(std::move(c.cc), c.key, std::move(c.generator), rec.added_ms);
    if (rec.removed) {
      cfg_.circuits.back().removed = true;
      runtime_added_ms_.erase(rec.name);
      spdlog::info("circuit {}: removed, served for its unfinished jobs only", rec.name);
    }
  }
  // Always written: an earlier run's file must not give the workers circuits this run does not have.
  try {
    config::write_runtime_circuits(cfg_);
  } catch (const std::exception& e) {
    // A full or unwritable state folder: the workers could not learn these circuits, so this run
    // serves none of them (none has been seen by a worker yet). The daemon starts as it would on
    // such a disk, its submissions refused until writes succeed; a restart then serves them.
    while (!cfg_.circuits.empty() && cfg_.circuits.back().runtime) withdraw_last(e.what());
    spdlog::error("circuits added at run time are not served until a restart: {}", e.what());
    // An earlier run's list left in place would give the workers other circuits at these indices.
    std::error_code ec;
    fs::remove(config::runtime_circuits_path(cfg_), ec);
    if (ec) throw std::runtime_error("cannot remove " + config::runtime_circuits_path(cfg_) + ": " + ec.message());
  }
  claimable();
  validator_ = std::make_unique<SubmitValidator>(cfg_, keys_, generators_);
}

// Appends a checked circuit to those served, where the workers find it by the same index.
void Circuits::serve_circuit(config::CircuitConfig cc, const ZKeyHeader& key, std::optional<witness::Manifest> gen,
                             int64_t added_ms) {
  const std::string name = cc.name;
  cfg_.circuits.push_back(std::move(cc));
  keys_.push_back(key);
  generators_.push_back(std::move(gen));
  unserved_.erase(name);
  runtime_added_ms_[name] = added_ms;
  if (validator_) validator_ = std::make_unique<SubmitValidator>(cfg_, keys_, generators_);
  spdlog::info("circuit {}: served (added at run time, index {})", name, cfg_.circuits.size() - 1);
}

// Takes back the circuit appended last, which no worker has seen (its list could not be written).
void Circuits::withdraw_last(const std::string& why) {
  const std::string name = cfg_.circuits.back().name;
  unserved_[name] = {"the workers' list of circuits could not be written: " + why, shm::monotonic_ns()};
  runtime_added_ms_.erase(name);
  cfg_.circuits.pop_back(), keys_.pop_back(), generators_.pop_back();
  if (validator_) validator_ = std::make_unique<SubmitValidator>(cfg_, keys_, generators_);
}

// Appends a checked circuit and writes the workers' list; false, the circuit listed unavailable
// with why, when the list cannot be written.
bool Circuits::publish(CircuitCheck& c) {
  const std::string name = c.cc.name;
  serve_circuit(std::move(c.cc), c.key, std::move(c.generator), c.added_ms);
  try {
    config::write_runtime_circuits(cfg_);
  } catch (const std::exception& e) {
    withdraw_last(e.what());
    spdlog::error("circuit {}: not served: {}", name, e.what());
    return false;
  }
  claimable();
  timeline_.event(tl::kCircuitAdd, 0, tl::Kv().add(tl::kCircuit, name).add(tl::kIndex, cfg_.circuits.size() - 1).str());
  return true;
}

// A shared store: the circuits this node claims partitions of, every one it knows (a removed
// one's jobs still finish).
void Circuits::claimable() {
  std::vector<std::string> names;
  for (const auto& c : cfg_.circuits)
    if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
  queue_->serving(names);
}

uint64_t Circuits::key_budget() const {
  if (cfg_.gpu.key_memory) return cfg_.gpu.key_memory;
  uint64_t least = 0;
  for (const auto& [device, b] : budgets_)
    if (b && (!least || b < least)) least = b;
  return least;
}

void Circuits::handle(const http::Request& req, std::shared_ptr<http::Responder> r) {
  const std::string& p = req.path;
  const bool op = is_operator(req, uint32_t(::geteuid()));
  if (p == "/v1/circuits") {
    if (req.method == "GET")
      return r->send(http::Response::json(200, list(op).dump(-1, ' ', false, json::error_handler_t::replace)));
    if (req.method != "POST") return r->send(http::Response::error(405, "use GET or POST for " + p));
  } else if (req.method != "DELETE") {
    return r->send(http::Response::error(405, "use DELETE for " + p));
  }
  if (!op)
    return r->send(http::Response::error(
        403, "adding and removing circuits is for operators: root or the daemon's own user on the unix socket, or "
             "daemon.admin_token over TCP"));
  if (phase_.draining) return r->send(http::Response::error(503, "the daemon is stopping"));
  if (p == "/v1/circuits") return add(req, std::move(r));
  return remove(p.substr(std::string("/v1/circuits/").size()), std::move(r));
}

void Circuits::add(const http::Request& req, std::shared_ptr<http::Responder> r) {
  if (req.body_file) return r->send(http::Response::error(413, "a circuit's entry is a small JSON object"));
  auto* c = new CircuitCheck;
  c->r = std::move(r);
  try {
    c->body = json::parse(req.body);
  } catch (const json::exception& e) {
    c->r->send(http::Response::error(400, std::string("body is not JSON: ") + e.what()));
    delete c;
    return;
  }
  const std::string name = c->name = name_of(c->body);
  if (!name.empty() && (cfg_.find_circuit(name) || unserved_.count(name) || checking_.count(name))) {
    c->r->send(http::Response::error(409, "circuit '" + name + "' exists already (GET /v1/circuits lists them)"));
    delete c;
    return;
  }
  // Jobs are bound to their circuit by name: a removed circuit's jobs must end before another
  // circuit takes the name, or they would be proved with its key.
  for (const auto& [id, j] : parts_.jobs())
    if (cfg_.circuits[j.circuit].name == name) {
      c->r->send(http::Response::error(409, "jobs of the removed circuit '" + name + "' are unfinished (job " +
                                                std::to_string(id) + "): add it again once they end"));
      delete c;
      return;
    }
  if (!name.empty()) checking_.insert(name);
  check(c, &Circuits::after_check);
}

// What a check needs of this daemon: the config (key_dirs, the state folder), the budget a key may
// take, the rings' room.
void Circuits::prime_check(CircuitCheck& c) const {
  c.cfg = cfg_;
  c.cfg.gpu.key_memory = key_budget();
  c.max_vars = max_vars_, c.max_domain = max_domain_;
}

// c checked on the thread pool against this daemon's config and rings, then `after` on the loop.
void Circuits::check(CircuitCheck* c, void (Circuits::*after)(CircuitCheck&)) {
  c->self = this;
  c->after = after;
  prime_check(*c);
  c->req.data = c;
  checks_++;
  uv_queue_work(
      loop_, &c->req, [](uv_work_t* q) { run_check(*static_cast<CircuitCheck*>(q->data)); },
      [](uv_work_t* q, int) {
        std::unique_ptr<CircuitCheck> c(static_cast<CircuitCheck*>(q->data));
        Circuits* self = c->self;
        self->checks_--;
        (self->*(c->after))(*c);
        self->ended_();
      });
}

// Back on the loop: a checked circuit is kept in the store, then served; the answer says which.
void Circuits::after_check(CircuitCheck& c) {
  if (c.status) {
    checking_.erase(c.name);
    return c.r->send(http::Response::error(c.status, c.error));
  }
  const CircuitRec rec{c.cc.name, config::circuit_json(c.cc).dump(-1, ' ', false, json::error_handler_t::replace),
                       wall_ms()};
  c.added_ms = rec.added_ms;
  auto check = std::make_shared<CircuitCheck>(std::move(c));
  auto serve = [this, check] {
    checking_.erase(check->name);
    const std::string name = check->cc.name;
    if (!publish(*check))
      return check->r->send(http::Response::error(
          503, "circuit '" + name + "' is stored but not served until the daemon restarts: the workers' list of "
                                    "circuits could not be written"));
    check->r->send(http::Response::json(
        201, entry(uint32_t(cfg_.circuits.size() - 1), true).dump(-1, ' ', false, json::error_handler_t::replace)));
  };
  auto taken = [this, check] {
    checking_.erase(check->name);
    check->r->send(
        http::Response::error(409, "circuit '" + check->cc.name + "' exists already (GET /v1/circuits lists them)"));
  };
  queue_->add_circuit(
      rec, [serve, taken](bool added) { added ? serve() : taken(); },
      [this, check](int status, const std::string& why) {
        checking_.erase(check->name);
        check->r->send(http::Response::error(status, why));
      });
}

// The store forgets the circuit; this node stops taking jobs for it and lets its jobs finish.
void Circuits::remove(const std::string& name, std::shared_ptr<http::Responder> r) {
  const config::CircuitConfig* cc = cfg_.find_circuit(name);
  // A stored circuit this node does not serve (even one a configured circuit's name shadows) is
  // the store's to forget.
  if (cc && !cc->runtime && !unserved_.count(name))
    return r->send(http::Response::error(409, "circuit '" + name + "' is in the config file: remove it there and "
                                              "reload (SIGHUP)"));
  if (!cc && !unserved_.count(name)) return r->send(http::Response::error(404, "no circuit '" + name + "'"));
  auto forget = [this, name, r] {
    unserved_.erase(name);
    uint64_t unfinished = 0;
    for (uint32_t i = 0; i < cfg_.circuits.size(); i++) {
      config::CircuitConfig& c = cfg_.circuits[i];
      if (c.name != name || !c.runtime || c.removed) continue;
      c.removed = true;
      runtime_added_ms_.erase(name);
      for (const auto& [id, j] : parts_.jobs()) unfinished += j.circuit == i;
      timeline_.event(tl::kCircuitRemove, 0, tl::Kv().add(tl::kCircuit, name).add(tl::kIndex, i).str());
      spdlog::info("circuit {}: removed; {} of its jobs here finish first", name, unfinished);
    }
    r->send(http::Response::json(200, json{{"name", name}, {"removed", true}, {"unfinished_jobs", unfinished}}
                                          .dump(-1, ' ', false, json::error_handler_t::replace)));
  };
  queue_->remove_circuit(name, forget,
                         [r](int status, const std::string& why) { r->send(http::Response::error(status, why)); });
}

// Where other nodes share the store (a shared queue): circuits they added are checked and served
// here when this node has their files; those removed elsewhere stop taking jobs here.
void Circuits::sync() {
  if (syncing_ || phase_.draining || shm::monotonic_ns() < next_sync_ns_) return;
  next_sync_ns_ = shm::monotonic_ns() + kCircuitSyncNs;
  syncing_ = true;
  const bool watched = queue_->watch_circuits(
      [this](std::vector<CircuitRec> stored) {
        syncing_ = false;
        std::map<std::string, int64_t> in_store;  // name -> when it was added there; not removed
        for (const CircuitRec& rec : stored)
          if (!rec.removed) in_store[rec.name] = rec.added_ms;
        // Removed elsewhere, or removed and added again (another entry under the same name): the
        // one served here takes no new jobs.
        for (uint32_t i = 0; i < cfg_.circuits.size(); i++) {
          config::CircuitConfig& c = cfg_.circuits[i];
          if (!c.runtime || c.removed) continue;
          auto it = in_store.find(c.name);
          auto served = runtime_added_ms_.find(c.name);
          if (it != in_store.end() && served != runtime_added_ms_.end() && served->second == it->second) continue;
          c.removed = true;
          runtime_added_ms_.erase(c.name);
          timeline_.event(tl::kCircuitRemove, 0, tl::Kv().add(tl::kCircuit, c.name).add(tl::kIndex, i).str());
          spdlog::info("circuit {}: removed (or replaced) by another node; its jobs here finish first", c.name);
        }
        for (auto it = unserved_.begin(); it != unserved_.end();)
          it = in_store.count(it->first) ? std::next(it) : unserved_.erase(it);
        // Added elsewhere, and those this node could not serve, checked again every 100 polls for
        // work (50 s by default), at least every look: their files may have come.
        const uint64_t now = shm::monotonic_ns(),
                       retry_ns = std::max<uint64_t>(kCircuitSyncNs, 100ull * cfg_.store.poll_ms * 1'000'000ull);
        for (const CircuitRec& rec : stored) {
          if (rec.removed || cfg_.find_circuit(rec.name) || checking_.count(rec.name)) continue;
          if (auto u = unserved_.find(rec.name); u != unserved_.end() && now - u->second.at_ns < retry_ns) continue;
          auto* c = new CircuitCheck;
          c->name = rec.name, c->added_ms = rec.added_ms;
          c->body = json::parse(rec.config, nullptr, false);
          checking_.insert(rec.name);
          check(c, &Circuits::after_stored_check);
        }
      },
      [this](const std::string& why) {
        syncing_ = false;
        spdlog::debug("circuits: {}", why);
      });
  if (!watched) syncing_ = false;  // this daemon is the store's only writer
}

void Circuits::after_stored_check(CircuitCheck& c) {
  checking_.erase(c.name);
  if (!c.status && c.cc.name != c.name) c.status = 422, c.error = "its stored entry names another circuit";
  if (c.status) {
    unserved_[c.name] = {c.error, shm::monotonic_ns()};
    spdlog::warn("circuit {} (added by another node) is not served by this node: {}", c.name, c.error);
    return;
  }
  if (cfg_.find_circuit(c.name)) return;
  publish(c);
}

// One circuit for GET /v1/circuits; paths only for operators.
json Circuits::entry(uint32_t i, bool paths) const {
  const config::CircuitConfig& c = cfg_.circuits[i];
  json e = {{"name", c.name},
            {"source", c.runtime ? "runtime" : "config"},
            {"state", c.removed ? "removed" : "serving"},
            {"curve", curve_snarkjs_name(keys_[i].curve)},
            {"n_vars", keys_[i].n_vars},
            {"domain_size", keys_[i].domain_size},
            {"max_partitions", c.max_partitions},
            {"inputs", generators_[i].has_value()}};
  if (paths) {
    json f = config::circuit_json(c);
    f.erase("name");
    f.erase("max_partitions");
    e["files"] = f;
  }
  return e;
}

json Circuits::list(bool paths) const {
  json list = json::array();
  for (uint32_t i = 0; i < cfg_.circuits.size(); i++) {
    if (cfg_.circuits[i].removed) {
      bool jobs = false;  // a removed circuit is listed while its jobs finish
      for (const auto& [id, j] : parts_.jobs()) jobs = jobs || j.circuit == i;
      if (!jobs) continue;
    }
    list.push_back(entry(i, paths));
  }
  for (const auto& [name, u] : unserved_)  // why names files: for operators only
    list.push_back({{"name", name},
                    {"source", "runtime"},
                    {"state", "unavailable"},
                    {"error", paths ? u.why : "not served by this node (an operator's list says why)"}});
  return {{"circuits", list}};
}

}  // namespace cuzk::sup
