// What start-up would refuse, checked beforehand (preflight.cpp): by `--check-config`, and by a
// SIGHUP reload before it drains anything.
#pragma once
#include "config/config.hpp"

namespace cuzk::sup {

// Everything start-up would refuse with exit 78, checked without starting and without changing
// anything a running daemon uses: the CPU lists, the keys' headers, the witness generators against
// their keys (built into the state folder's cache if need be), the slot rings against
// limits.memory_budget and /dev/shm, the descriptor limit, and that the state folder and the
// socket's folder can be written. Throws config::ConfigError naming the key. A SIGHUP reload runs
// it whole, in the daemon (in_daemon). `--check-config`, run by an operator in another process,
// leaves out what depends on the daemon's user and limits (the folders, the descriptor limit) and
// checks only the generators that are artefacts already (compiling circom's sources into the state
// folder is left to the daemon's own user).
void preflight(const config::Config& cfg, bool in_daemon);

// Raises RLIMIT_NOFILE to what cfg needs (apply), or only checks that it can be (preflight).
void reserve_descriptors(const config::Config& cfg, bool apply);

}  // namespace cuzk::sup
