// Opening the circuits' witness generators, with systemd kept informed during long builds.
#include "supervisor/generators.hpp"

#include <systemd/sd-daemon.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "witness/build.hpp"

namespace cuzk::sup {

namespace {

// Start-up may take as long as a compiler needs: while alive, this tells systemd every 20 s to wait
// 60 s more, so that a build that hangs still ends in a start timeout once it stops reporting.
class StartupKeepAlive {
 public:
  explicit StartupKeepAlive(const std::string& status) {
    sd_notify(0, ("STATUS=" + status).c_str());
    t_ = std::thread([this] {
      std::unique_lock<std::mutex> lk(mu_);
      do sd_notify(0, "EXTEND_TIMEOUT_USEC=60000000");
      while (!cv_.wait_for(lk, std::chrono::seconds(20), [this] { return done_; }));
    });
  }
  ~StartupKeepAlive() {
    {
      std::lock_guard<std::mutex> g(mu_);
      done_ = true;
    }
    cv_.notify_one();
    t_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread t_;
};

}  // namespace

witness::Manifest open_generator(const config::CircuitConfig& c, const ZKeyHeader& key, const std::string& state_dir,
                                 const std::string& field) {
  spdlog::info("circuit {}: opening the witness generator {}", c.name, c.witness_generator);
  witness::Manifest m;
  try {
    m = witness::open_generator(c.witness_generator, state_dir + "/witness",
                                [&](const std::string& line) { spdlog::info("circuit {}: {}", c.name, line); });
  } catch (const witness::WitnessError& e) {
    throw config::ConfigError(field, e.what());
  }
  const char* key_curve = curve_snarkjs_name(key.curve);
  if (m.curve() != key_curve)
    throw config::ConfigError(field, "the generator in " + m.dir + " computes witnesses over " +
                                         (m.curve().empty() ? std::string("an unknown prime") : m.curve()) + " but " +
                                         c.zkey + " is a " + key_curve + " key (compile the circuit with --prime " +
                                         key_curve + ")");
  if (m.n_witness != key.n_vars)
    throw config::ConfigError(field, "the generator in " + m.dir + " makes witnesses of " + std::to_string(m.n_witness) +
                                         " values but " + c.zkey + " expects nVars=" + std::to_string(key.n_vars) +
                                         " (a generator of another circuit?)");
  spdlog::info("circuit {}: witness generator ready ({}: {} input values, {} witness values)", c.name, m.dir,
               m.n_inputs, m.n_witness);
  return m;
}

std::vector<std::optional<witness::Manifest>> open_generators(const config::Config& cfg,
                                                              const std::vector<ZKeyHeader>& keys) {
  std::vector<std::optional<witness::Manifest>> out(cfg.circuits.size());
  for (size_t i = 0; i < cfg.circuits.size(); i++) {
    const config::CircuitConfig& c = cfg.circuits[i];
    if (c.witness_generator.empty()) continue;
    StartupKeepAlive alive("circuit " + c.name + ": preparing the witness generator " + c.witness_generator);
    out[i] = open_generator(c, keys.at(i), cfg.daemon.state_dir,
                            "circuits[" + std::to_string(i) + "].witness_generator");
  }
  return out;
}

}  // namespace cuzk::sup
