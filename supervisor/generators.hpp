// Witness generators at start-up: each circuit's witness_generator is opened (compiled into the
// state directory's cache when it is circom's source folder) before any worker starts, so that the
// workers find it built, and checked against the circuit's zkey.
#pragma once
#include <optional>
#include <vector>

#include "config/config.hpp"
#include "groth16/formats.hpp"
#include "witness/manifest.hpp"

namespace cuzk::sup {

// One entry per configured circuit: its generator's manifest, or nullopt without witness_generator.
// keys: the circuits' zkey headers, in the same order. A generator that cannot be opened or built,
// or that makes witnesses of another size than the zkey's nVars, is a config::ConfigError naming
// circuits[i].witness_generator (the supervisor exits 78). While a build runs, systemd is told
// that start-up goes on (EXTEND_TIMEOUT_USEC) and what it is doing (STATUS).
std::vector<std::optional<witness::Manifest>> open_generators(const config::Config& cfg,
                                                              const std::vector<ZKeyHeader>& keys);

// One circuit's: opened (built into <state_dir>/witness when it is circom's source folder) and
// checked against its key; a config::ConfigError under `field` otherwise. It may run for minutes
// (a compiler), off the loop.
witness::Manifest open_generator(const config::CircuitConfig& c, const ZKeyHeader& key, const std::string& state_dir,
                                 const std::string& field);

}  // namespace cuzk::sup
