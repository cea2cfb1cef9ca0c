// Many nodes' queue (queue.hpp), in PostgreSQL ([store] url). This node claims partitions of its
// circuits as it has room for them (an idle synthesis worker and a free slot each), renews the
// leases of what it holds on the tick, and reports each partition's progress and end under its
// lease (shared_queue.cpp). Submissions go into the database, and a job's state comes from it, so
// that any node answers for any job (shared_intake.cpp). The store thread does the talking, so
// that nothing on the loop waits for the database.
#pragma once
#include <uv.h>

#include <memory>
#include <string>
#include <vector>

#include "supervisor/admission.hpp"
#include "supervisor/intake/job_access.hpp"
#include "supervisor/intake/submission.hpp"
#include "supervisor/long_polls.hpp"
#include "supervisor/queue.hpp"
#include "supervisor/store/store_thread.hpp"

namespace cuzk::sup {

class SharedQueue final : public QueueService {
 public:
  // Connects and migrates before the loop starts, waiting (and telling systemd so) while the
  // database cannot be reached; then ends the leases an earlier run of this node left.
  explicit SharedQueue(const QueueContext& c);

  std::vector<CircuitRec> stored_circuits() override { return std::move(stored_); }
  void recover() override {}  // nothing is this node's until it claims it

  void submit(const Submission& s, Reply r) override;
  void get(uint64_t id, double wait_s, const Viewer& viewer, Reply r) override;
  void cancel(uint64_t id, const Viewer& viewer, Reply r) override;

  bool holds(const ActiveJob& j, uint32_t p) const override;
  void progress(ActiveJob& j, uint32_t p, bool) override { report(j, p, ""); }  // a claim makes a job Running
  void requeue(ActiveJob& j, uint32_t p) override;
  void done(ActiveJob& j, uint32_t p, const std::string& done_kv) override;
  void fail(ActiveJob& j, uint32_t p, const std::string& why) override;
  void want_work() override;

  void add_circuit(const CircuitRec& rec, std::function<void(bool)> added,
                   std::function<void(int, const std::string&)> refused) override;
  void remove_circuit(const std::string& name, std::function<void()> removed,
                      std::function<void(int, const std::string&)> refused) override;
  void serving(const std::vector<std::string>& names) override { circuits_ = names; }
  bool watch_circuits(std::function<void(std::vector<CircuitRec>)> got,
                      std::function<void(const std::string&)> failed) override;

  void tick() override;
  size_t held() const override { return 0; }
  bool flush_held() override { return true; }
  void drain() override;
  void stop() override;
  void close() override;

  JobStore::Counts counts() override { return counts_; }
  nlohmann::json status() const override;
  std::string metrics() const override;

 private:
  size_t claim_room() const;
  // The shared queue's unfinished jobs, as of the last renewal (and this node's submissions since).
  uint64_t unfinished() const { return counts_.jobs[int(JState::Queued)] + counts_.jobs[int(JState::Running)]; }
  void adopt(Claimed& c);
  void renew_leases();
  // Sends the partition's local state to the store under its lease.
  void report(ActiveJob& j, uint32_t p, const std::string& done_kv);
  void on_reported(const Lease& lease, PState sent, const ReportOutcome& o, const std::string& done_kv);
  void forget_partition(const Lease& lease);
  void forget_job_if_idle(uint64_t id);
  void drop_job(ActiveJob& j);
  void store_job(const SubmitRequest& sr, const std::string& submitter, std::vector<PreparedInput> inputs, Reply r);
  void poll(uint64_t id, uint64_t deadline_ns, Reply r, Viewer viewer);

  QueueContext c_;
  std::unique_ptr<StoreThread> store_;
  std::string where_;                  // the server, for logs and status (no password)
  std::vector<CircuitRec> stored_;     // start-up: the store's runtime circuits
  std::vector<std::string> circuits_;  // the circuits this node knows: the only ones it claims (serving())
  bool claiming_ = false, renewing_ = false;
  uint64_t next_claim_ns_ = 0, next_renew_ns_ = 0;
  uint64_t claims_ = 0, taken_over_ = 0, lost_ = 0, conflicts_ = 0;
  uint64_t stays_ = 0;  // jobs taken up here (each stay's uploads in a folder of its own)
  JobStore::Counts counts_;      // the whole queue's, as of the last renewal
  LongPolls polls_;  // long polls waiting for their next look at the store
  Admission admission_;
};

}  // namespace cuzk::sup
