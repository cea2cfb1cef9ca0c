// The job queue as the supervisor sees it: three interfaces by who uses them (Queue: the API and
// the partitions; CircuitStore: Circuits; QueueService: the supervisor), two classes behind them.
// - LocalQueue (local_queue.hpp): one node. The queue is the supervisor's memory, journalled into
//   SQLite under state_dir; the API answers from memory.
// - SharedQueue (shared_queue.hpp): many nodes. The queue is PostgreSQL; this node claims the
//   partitions it has room for under leases, reports under them, and the API answers from the
//   database.
// The supervisor calls these verbs and never asks which queue it holds. Each verb is called on
// the loop; a queue that must wait for its store answers later, on the loop, through the callbacks
// or replies it was given. No HTTP type reaches them: the API (api.cpp) makes its requests into
// Submissions and Viewers, and its connections into Replies.
#pragma once
#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "supervisor/intake/client.hpp"
#include "supervisor/intake/submission.hpp"
#include "supervisor/store/job_store.hpp"
#include "supervisor/supervisor_types.hpp"

namespace cuzk::sup {

class Partitions;
class Circuits;
class Scheduler;
class StateFolder;
class Timeline;

// A client's answer as a queue gives it: a status and a JSON body, or an error's message; the API
// makes it an HTTP response.
struct Answer {
  int status = 0;     // 0: not an answer (one comes later)
  std::string body;   // JSON, for a status that is not an error
  std::string error;  // the message, for an error
  static Answer json(int status, std::string body) { return {status, std::move(body), {}}; }
  static Answer refusal(int status, std::string why) { return {status, {}, std::move(why)}; }
  static Answer later() { return {}; }
};

// Where one request's answer goes, once, now or later on the loop: the API's connection, seen
// without its HTTP types (send and alive are the API's, for what `to` is).
class Reply {
 public:
  using Send = void (*)(void* to, Answer a);
  using Alive = bool (*)(const void* to);
  Reply(std::shared_ptr<void> to, Send send, Alive alive) : to_(std::move(to)), send_(send), alive_(alive) {}
  void send(Answer a) const { send_(to_.get(), std::move(a)); }
  // Whether the client still waits for it.
  bool alive() const { return alive_(to_.get()); }

 private:
  std::shared_ptr<void> to_;
  Send send_;
  Alive alive_;
};

// A submission as the queue takes it: its body (in memory, or a file the API spooled it to, kept
// while `spool` is held) and its client.
struct Submission {
  const std::string& body;
  std::string spool_path;             // "" when the body is in memory
  std::shared_ptr<const void> spool;  // keeps spool_path until the queue lets go of it
  Client client;
};

// What a queue works with, given at its construction: the loop, the configuration and this node's
// id, the parts of the supervisor it reads and changes, and two of the supervisor's verbs.
struct QueueContext {
  uv_loop_t* loop;
  const config::Config& cfg;
  const std::string& node_id;  // store.node_id, or <hostname>/<instance>
  Partitions& parts;
  Circuits& circuits;
  Scheduler& scheduler;
  StateFolder& state;
  Timeline& timeline;
  const Phase& phase;
  // Work the daemon's stop waits for has ended (a write answered, a submission finished).
  std::function<void()> settled;
  // A job's results and uploads removed, off the loop (the stop waits for that too).
  std::function<void(const ActiveJob&)> remove_files;

  // Calls settled where it matters: only a draining daemon waits for work to end.
  void settle() const {
    if (phase.draining) settled();
  }
};

// A job's and its partitions' life on this node: what the API and the partitions use.
class Queue {
 public:
  virtual ~Queue() = default;

  // The API's job requests (docs/API.md), its checks made (Admission). Each answers through r, now
  // or later. viewer: who asks, and so which jobs it may see (another's read as missing).
  virtual void submit(const Submission& s, Reply r) = 0;
  virtual void get(uint64_t id, double wait_s, const Viewer& viewer, Reply r) = 0;
  virtual void cancel(uint64_t id, const Viewer& viewer, Reply r) = 0;

  // A partition this node works on. holds: whether it is still this node's (a shared queue's lease
  // may have gone to another node); a report on one it does not hold is ignored.
  virtual bool holds(const ActiveJob& j, uint32_t p) const = 0;
  // j.rec.parts[p].state changed while the partition stays this node's (Synthesizing, Ready,
  // Proving); the store hears of it before the worker does where that matters. job_started: j
  // became Running with it (its first partition's synthesis), told in the same write.
  virtual void progress(ActiveJob& j, uint32_t p, bool job_started) = 0;
  // Back to the queue, to be synthesized again (here, or by whichever node claims it next).
  virtual void requeue(ActiveJob& j, uint32_t p) = 0;
  // Proved: j.rec.parts[p] holds the proof, public signals and timings. done_kv: PROOF_DONE's keys.
  virtual void done(ActiveJob& j, uint32_t p, const std::string& done_kv) = 0;
  // The partition failed for good, and with it the job (its error is j.rec.parts[p].error).
  virtual void fail(ActiveJob& j, uint32_t p, const std::string& why) = 0;
  // Work this node could take: a shared queue claims partitions for it; a local one has them all.
  virtual void want_work() = 0;
};

// Circuits added and removed at run time, kept in the store: what Circuits uses.
class CircuitStore {
 public:
  virtual ~CircuitStore() = default;
  // Start-up: the circuits the store keeps.
  virtual std::vector<CircuitRec> stored_circuits() = 0;
  // Then one of the callbacks runs, on the loop: added(false) when the name is taken; refused(status,
  // why) when the store cannot take the change now.
  virtual void add_circuit(const CircuitRec& rec, std::function<void(bool added)> added,
                           std::function<void(int status, const std::string& why)> refused) = 0;
  virtual void remove_circuit(const std::string& name, std::function<void()> removed,
                              std::function<void(int status, const std::string& why)> refused) = 0;
  // The circuits this node serves, by name: the only ones a shared queue claims partitions of.
  virtual void serving(const std::vector<std::string>& names) = 0;
  // Where other nodes may add and remove circuits: reads the store's list (got or failed, later)
  // and returns true. False where this daemon is the store's only writer: nothing is read.
  virtual bool watch_circuits(std::function<void(std::vector<CircuitRec>)> got,
                              std::function<void(const std::string&)> failed) = 0;
};

// A queue as the supervisor runs it: both of the above, and its start, tick, drain and stop.
class QueueService : public Queue, public CircuitStore {
 public:
  // Start-up, before the loop: the jobs an earlier run left that are this node's to finish.
  virtual void recover() = 0;
  // The loop's tick; changes the store could not write (a full disk) and writing them again.
  virtual void tick() = 0;
  virtual size_t held() const = 0;
  virtual bool flush_held() = 0;
  // Work whose end the loop still waits for (writes, submissions on the thread pool): the loop is
  // not stopped before it.
  virtual bool busy() const { return false; }
  // Draining: partitions queued here and not started may go to other nodes now.
  virtual void drain() = 0;
  // Stopping: every unfinished partition of this node is queued again in the store.
  virtual void stop() = 0;
  // The loop is ending: timers closed, what the store still has to write written (bounded wait).
  virtual void close() = 0;
  // What GET /v1/status and /metrics report of the queue.
  virtual JobStore::Counts counts() = 0;
  virtual nlohmann::json status() const = 0;
  virtual std::string metrics() const = 0;
};

// The submission checks of the circuits served now, for Admission.
std::function<const SubmitValidator&()> validator_of(const Circuits& circuits);

// A new job's record, before its partitions: what the accepted submission asked for, of circuit
// (its name), from submitter, created now.
JobRec job_record(const SubmitRequest& sr, const std::string& circuit, const std::string& submitter);
// The job as GET /v1/proofs/{id} shows it (docs/API.md).
nlohmann::ordered_json job_json(const JobRec& j);

// The cuzk_store_* metrics, the same names on both queues (a local queue's store is always up).
struct StoreMetrics {
  bool up = true;
  uint64_t claims = 0, taken_over = 0, lost = 0, conflicts = 0, reconnects = 0, waiting = 0;
};
std::string store_metrics(const StoreMetrics& m);
// cuzk_jobs_total and cuzk_partitions_total: the store's jobs and partitions by state, every state.
std::string counts_metrics(const JobStore::Counts& c);

}  // namespace cuzk::sup
