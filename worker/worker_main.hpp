// The part of a worker process that is the same for every kind of worker: its main() from the
// command line to the exit status, and the loop that takes the supervisor's messages. A worker's
// own file keeps only its work: how it gets ready, and how it handles one message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "shm/messages.hpp"
#include "worker/worker_runtime.hpp"

namespace cuzk::worker {

// Where a worker of one kind finds its place in the config.
struct Placement {
  size_t count = 0;                                    // workers of this kind; --index must be below it
  std::string count_text;                              // how the config says so: "synthesis.workers = 2"
  const std::vector<config::CpuSet>* cpus = nullptr;   // the kind's CPU sets: empty, or one per worker
  std::string cpus_key;                                // their key: "synthesis.cpus"
  uint32_t threads = 0;                                // threads per worker; 0: the size of its CPU set
};

struct WorkerProgram {
  const char* name = "";  // the executable's name, which starts its error messages
  std::function<Placement(const config::Config&)> placement;
  // Builds the worker and runs it until the supervisor stops it; returns the exit status.
  std::function<int(config::Config, const WorkerArgs&)> run;
};

// A worker's whole main(). Parses the arguments the supervisor passes (exit 64 when they are
// wrong), dies with the supervisor, loads the config (exit 78 on an error, or when --index names no
// worker of this kind), pins the process to its CPUs before any thread exists and sets the thread
// count, then runs the worker. An exception out of the worker exits 1, and the supervisor restarts it.
int worker_main(int argc, char** argv, const WorkerProgram& program);

// The message loop: sends `hello` (the worker is ready), then hands every message of type `work`
// to `handle` until the supervisor sends Shutdown or closes the channel, which exits 0. `handle`
// returns false when the worker must exit 1 to be restarted.
int serve(WorkerLink& link, const shm::Msg& hello, shm::MsgType work,
          const std::function<bool(const shm::Msg&)>& handle);

}  // namespace cuzk::worker
