// A worker's main() and message loop, shared by cuzk-synth-worker and cuzk-gpu-worker.
#include "worker/worker_main.hpp"

#include <cstdio>
#include <exception>
#include <utility>

#include "common/exit_codes.hpp"
#include "groth16/parallel.hpp"

namespace cuzk::worker {

int worker_main(int argc, char** argv, const WorkerProgram& program) {
  const char* prog = program.name;
  WorkerArgs args = parse_worker_args(argc, argv, prog);
  die_with_parent();
  config::Config cfg;
  try {
    cfg = config::load_config(args.config);
    config::load_runtime_circuits(cfg);  // the circuits added at run time, at the supervisor's indices
  } catch (const config::ConfigError& e) {
    std::fprintf(stderr, "%s: %s\n", prog, e.what());
    return exit_status::kConfig;
  }
  const Placement place = program.placement(cfg);
  if (args.index >= place.count) {
    std::fprintf(stderr, "%s: --index %u but %s\n", prog, args.index, place.count_text.c_str());
    return exit_status::kConfig;
  }
  // Pin before any thread exists, so that every thread inherits the set.
  size_t threads = 0;
  try {
    threads = pin_worker(place.cpus->empty() ? std::vector<int>{} : (*place.cpus)[args.index].cpus, place.threads);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s[%u]: %s\n", prog, place.cpus_key.c_str(), args.index, e.what());
    return exit_status::kConfig;
  }
  if (threads) set_thread_count(threads);
  try {
    return program.run(std::move(cfg), args);
  } catch (const config::ConfigError& e) {  // what only the worker can tell (a key beyond its device's memory)
    std::fprintf(stderr, "%s: %s\n", prog, e.what());
    return exit_status::kConfig;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", prog, e.what());
    return exit_status::kFailure;
  }
}

int serve(WorkerLink& link, const shm::Msg& hello, shm::MsgType work,
          const std::function<bool(const shm::Msg&)>& handle) {
  link.send(hello);
  shm::Msg m;
  while (link.recv(m)) {
    if (m.type == uint16_t(shm::MsgType::Shutdown)) return exit_status::kOk;
    if (m.type == uint16_t(work) && !handle(m)) return exit_status::kFailure;
  }
  return exit_status::kOk;  // the supervisor closed the channel
}

}  // namespace cuzk::worker
