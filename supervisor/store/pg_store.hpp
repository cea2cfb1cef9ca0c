// The PostgreSQL job store ([store] url), shared by every node that serves one queue. The database
// is the queue: nodes claim partitions with SELECT ... FOR UPDATE SKIP LOCKED under a lease, and
// every change a node makes is conditional on the lease it still holds. Blocking (libpq): the
// supervisor calls it from its store thread only (store_thread.hpp), never from the event loop.
#pragma once
#include <memory>

#include "supervisor/store/job_store.hpp"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace cuzk::sup {

class PgStore final : public JobStore {
 public:
  // The schema version this build writes (the row of table cuzk_schema_version). An older schema is
  // migrated when the store opens, under an advisory lock so that nodes starting together migrate
  // once; a newer one is refused.
  static constexpr int kSchemaVersion = 5;

  // Connects to `url` (a libpq connection string or postgresql:// URI) and migrates the schema.
  // Throws StoreUnavailable when the server cannot be reached, std::runtime_error otherwise.
  explicit PgStore(std::string url);
  ~PgStore() override;
  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;

  const char* backend() const override { return "postgresql"; }
  bool connected() const override;
  // The server as "host:port/database" (never the password), for logs and status.
  std::string where() const;

  bool insert(JobRec& job) override;
  std::optional<uint64_t> find_request(const std::string& request_id) override;
  std::optional<JobRec> load(uint64_t id) override;
  std::vector<JobRec> list(const std::vector<JState>& states, size_t limit) override;
  Counts counts() override;
  CancelOutcome cancel(uint64_t id, const std::string& why, int64_t now_ms) override;
  std::vector<Claimed> claim(const std::string& node, const std::vector<std::string>& circuits, size_t n,
                             uint32_t lease_ms) override;
  std::vector<Lease> renew(const std::string& node, const std::vector<Lease>& held, uint32_t lease_ms) override;
  ReportOutcome report(const std::string& node, const Lease& lease, const PartitionRec& p, int64_t now_ms) override;
  size_t release(const std::string& node) override;
  std::vector<CircuitRec> circuits() override;
  bool add_circuit(const CircuitRec& c) override;
  bool remove_circuit(const std::string& name) override;
  size_t forget_removed_circuits() override;

 private:
  class Tx;
  struct ResultDeleter {
    void operator()(PGresult* r) const;
  };
  using Result = std::unique_ptr<PGresult, ResultDeleter>;
  // One statement with text parameters (nullopt = NULL; `binary` marks bytea parameters).
  struct Param {
    std::optional<std::string> value;
    bool binary = false;
  };
  Result exec(const char* sql, const std::vector<Param>& params = {});
  void connect();
  void migrate();
  // Runs `body` in a transaction, again after a deadlock or serialization failure (a few times).
  template <class F>
  auto transaction(F&& body);
  std::optional<JState> lock_job(uint64_t id);
  void finish_job(uint64_t id, JState st, const std::string& error, int64_t now_ms);

  std::string url_;
  PGconn* conn_ = nullptr;
};

}  // namespace cuzk::sup
