// The `cuzk` subcommands that talk to a running daemon (submit, await, status, cancel) and those that
// read its timeline log (timeline export, waterfall). See docs/API.md for the API they use.
#pragma once
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/exit_codes.hpp"
#include "http_client.hpp"

namespace CLI {
class App;
}

namespace cuzk::cli {

// Exit codes of the daemon client, beyond those in commands.hpp (0 ok, 2 bad input or a refused
// request, 64 usage, 74 daemon unreachable); their values are in common/exit_codes.hpp.
enum ClientExit : int {
  kJobFailed = exit_status::kFailure,         // await: the job failed or was cancelled
  kServerError = exit_status::kSoftware,      // the daemon answered 5xx
  kTryLater = exit_status::kTryLater,         // 429 (queue full) or 503 (draining)
  kNoPermission = exit_status::kNoPermission, // 401/403 (TCP token)
  kTimedOut = exit_status::kTimedOut,         // await: the timeout passed first (like timeout(1))
};

// Maps an HTTP status that is not 2xx to an exit code.
int exit_code_for_status(int status);
// The message of a JSON error body {"error": {"message": ...}}, else the body or "HTTP <status>".
std::string error_message(const HttpResponse& r);

struct SubmitArgs {
  std::string circuit;
  std::vector<std::string> witnesses;
  std::vector<std::string> inputs;  // circuit inputs JSON files, sent inline (instead of witnesses)
  std::string priority;    // empty: the daemon's default
  std::string request_id;  // empty: none
  bool upload = false;     // send the witness bytes (base64) instead of paths
};
int cmd_submit(const HttpClient& c, const SubmitArgs& a, std::ostream& out = std::cout,
               std::ostream& err = std::cerr);
// The body of POST /v1/proofs for `a`; throws std::invalid_argument for a file it cannot use.
std::string submit_body(const SubmitArgs& a);
// POST /v1/proofs with `body`: 0 and the job's id, or an exit code and why (the daemon's message).
int post_job(const HttpClient& c, const std::string& body, std::string& id, std::string& error);

struct AwaitArgs {
  std::string job;
  std::string out_dir;
  double timeout_s = -1;      // < 0: no timeout
  double reconnect_s = 60;    // how long the daemon may be unreachable (e.g. restarting) before giving up
  double max_poll_s = 600;    // longest single long poll
};
int cmd_await(const HttpClient& c, const AwaitArgs& a, std::ostream& err = std::cerr);
// A job waited for: rc 0 when it is done with a proof for every partition, else an exit code and
// why. `job` is the final job with its partitions' proofs, null when it was not seen final.
struct AwaitResult {
  int rc = 0;
  nlohmann::ordered_json job;
  std::string error;
};
// Long-polls the job of `a` until it is final, a.timeout_s passes, or the daemon stays unreachable
// for a.reconnect_s; a notice goes to `err` when it starts retrying. a.out_dir is not used.
AwaitResult await_final(const HttpClient& c, const AwaitArgs& a, std::ostream& err);
// Writes DIR/proof_<i>.json and DIR/public_<i>.json of each partition of `job` that has a proof
// (DIR exists); throws std::runtime_error when a file cannot be written.
void write_proofs(const nlohmann::ordered_json& job, const std::string& dir);
int cmd_status(const HttpClient& c, bool json, std::ostream& out = std::cout, std::ostream& err = std::cerr);
int cmd_cancel(const HttpClient& c, const std::string& job, std::ostream& out = std::cout,
               std::ostream& err = std::cerr);

struct CircuitArgs {
  std::string name, zkey, r1cs, witness_generator;  // add: paths made absolute here
  uint32_t max_partitions = 0;                       // 0: the daemon's default
};
// POST /v1/circuits, GET /v1/circuits, DELETE /v1/circuits/<name> (docs/API.md, "Circuits").
int cmd_circuit_add(const HttpClient& c, const CircuitArgs& a, std::ostream& out = std::cout,
                    std::ostream& err = std::cerr);
int cmd_circuit_list(const HttpClient& c, bool json, std::ostream& out = std::cout, std::ostream& err = std::cerr);
int cmd_circuit_remove(const HttpClient& c, const std::string& name, std::ostream& out = std::cout,
                       std::ostream& err = std::cerr);

// A member of a JSON object as text: a string as is, another value as JSON, dflt when absent or null.
std::string str_or(const nlohmann::ordered_json& j, const char* key, const std::string& dflt = "-");

// Writes one JSON value the way snarkjs writes proof.json / public.json (JSON.stringify(x, null, 1)).
std::string snarkjs_dump(const std::string& json_text);

// Adds submit, await, status, cancel, circuit, load, timeline export and waterfall to `app`. After parsing, the
// returned function runs the selected one and gives its exit code, or nullopt if none was selected.
std::function<std::optional<int>()> add_daemon_subcommands(CLI::App& app);

}  // namespace cuzk::cli
