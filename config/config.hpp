// The daemon's configuration: one TOML file (toml++), parsed and validated as a whole at start into
// these typed structs. Every process of the daemon (supervisor and workers) reads the same file, and
// the circuits added at run time that the supervisor lists for the workers (load_runtime_circuits).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace cuzk::config {

// A configuration error. `key` is the dotted TOML path ("synthesis.cpus[1]", "circuits[0].zkey").
struct ConfigError : std::runtime_error {
  std::string key;
  ConfigError(std::string k, const std::string& what)
      : std::runtime_error((k.empty() ? std::string("config") : k) + ": " + what), key(std::move(k)) {}
};

// A CPU set such as "0-3,8,10-11": the sorted, de-duplicated CPU numbers, and the text it came from.
struct CpuSet {
  std::vector<int> cpus;
  std::string text;
  bool empty() const { return cpus.empty(); }
};
// Throws ConfigError(key, ...) on a malformed list. Does not check the CPUs exist (see validate_cpus).
CpuSet parse_cpuset(const std::string& text, const std::string& key);

struct DaemonConfig {
  std::string instance = "default";   // [A-Za-z0-9_-]{1,32}; names the shm segments, so two daemons can share a host
  std::string state_dir = "/var/lib/cuzk";  // SQLite job store, uploaded witnesses, results
  std::string socket = "/run/cuzk/cuzk.sock";  // unix socket of the HTTP API
  uint32_t socket_mode = 0660;        // from the TOML string "0660"
  std::string tcp;                    // "" = off; else "host:port" (loopback unless tcp_allow_remote)
  bool tcp_allow_remote = false;
  std::string token;                  // bearer token required on TCP (required when tcp is set), or:
  std::string token_file;             // read the token from this file (one line)
  std::string log_level = "info";     // trace, debug, info, warn, error
  uint32_t heartbeat_interval_ms = 1000;
  uint32_t heartbeat_timeout_ms = 10000;  // a worker silent this long is killed and treated as crashed
  uint32_t shutdown_grace_ms = 30000;     // SIGTERM: how long to drain in-flight work before persisting it
  // Directories whose files a request may name by path (absolute, canonical: symlinks resolved).
  // Empty: every path in a request is refused; witnesses and inputs must be sent in the request.
  std::vector<std::string> input_dirs;
  // Directories under which the files of a circuit added at run time (POST /v1/circuits) must lie,
  // the same way. Empty: circuits come from this file only.
  std::vector<std::string> key_dirs;
  // Bearer token that makes a TCP client an operator (adding and removing circuits), or a file
  // holding it; "" = no operator over TCP (root and the daemon's own user on the socket are).
  std::string admin_token, admin_token_file;
  // The highest priority a client that is not an operator may give a job: "critical", "high",
  // "normal" or "low". Operators may give any; a client asking for more gets 403.
  std::string max_client_priority = "high";
};

struct SynthesisConfig {
  uint32_t workers = 1;               // >= 1
  std::vector<CpuSet> cpus;           // empty, or exactly `workers` entries; each worker pins itself to its set
  uint32_t threads = 0;               // threads per worker; 0 = the size of its CPU set (or all cores)
  uint32_t witness_timeout_s = 600;   // longest run of one witness generation; 0 = no limit
  std::string witness_engine = "program";  // "program" (compiled witness program, native where it cannot run) | "native"
  std::string abc = "gpu";  // where a = A w, b = B w, c = a o b are evaluated: "gpu" (the GPU worker) | "cpu" (synthesis)
};

struct GpuConfig {
  std::string backend = "cpu";        // "cuda" or "cpu"
  std::vector<int> devices = {0};     // CUDA device ids; for the cpu backend, labels of the CPU "devices"
  uint32_t slots = 2;                 // slots per device ring, >= 1
  uint32_t batch = 32;                // most proofs of one key proved in one pass on a device, 1..256
  std::vector<CpuSet> cpus;           // empty, or one per device: the worker's own host-side CPUs
  uint32_t threads = 0;               // host threads per gpu worker; 0 = the size of its CPU set
  bool verify = true;                 // verify every proof before reporting it (never report one that fails)
  // cuda: precomputed window tables of the resident keys' point sets. "auto" (default: every set
  // that fits in device memory), "off", or a priority list of sets such as "h,a" (from a, b1, b2,
  // c, h).
  std::string precompute = "auto";
  uint32_t precompute_headroom_mb = 2048;  // cuda: device memory (MiB) the tables must leave free
  uint32_t msm_window = 0;   // cuda: window of the MSMs over precomputed bases, 8..22; 0 automatic
  uint32_t ntt_passes = 0;   // cuda: at least this many NTT passes, 1..8; 0 automatic
  // Memory (bytes, "24GiB" in TOML) each GPU worker's resident keys may take where they prove: device
  // memory for cuda, host memory for cpu. 0: cuda, the device's memory less precompute_headroom_mb;
  // cpu, no limit. Keys beyond it are loaded on demand, the least recently used one giving way.
  uint64_t key_memory = 0;
  // Host memory (bytes) in which keys given back by the device are kept parsed (page-locked, cuda),
  // so that loading one again is a copy at the host link's speed, not a file read; 0: none kept.
  uint64_t key_host_memory = 0;
  // Longest a circuit with work waiting for its key waits behind circuits whose keys a device has
  // (ms): before its key's first load there; after it, twenty of its measured loads at most.
  uint32_t key_wait_ms = 10000;
  // The slot rings' room for circuits added at run time, beyond the configured circuits' largest:
  // witness values (a zkey's nVars) and the domain (a power of two). 0: the configured circuits'.
  uint64_t slot_vars = 0, slot_domain = 0;
};

struct CircuitConfig {
  std::string name;                   // [A-Za-z0-9_.-]{1,64}, unique
  std::string zkey;                   // must exist and be readable (header checked at start)
  std::string r1cs;                   // optional ("" = none): when set, synthesis checks every constraint C*w = (A*w)(B*w)
  uint32_t max_partitions = 16;       // per job
  // Optional ("" = none): circom's --wasm output (<name>.wasm or its <name>_js/ folder), its --c
  // output folder (<name>_cpp/) or a `cuzk witness build` artefact (a folder with manifest.json).
  // When set, jobs may carry circuit inputs instead of witnesses.
  std::string witness_generator;
  // Added at run time (POST /v1/circuits), after the file's circuits. A removed one keeps its place
  // while the daemon runs, so that the indices the workers know stay the same and its jobs finish,
  // but takes no new jobs (find_circuit skips it).
  bool runtime = false, removed = false;
};

struct LimitsConfig {
  uint64_t memory_budget = 0;         // bytes ("64GiB" in TOML); 0 = no limit. Bounds the slot rings and upload_memory.
  uint32_t restart_backoff_initial_ms = 1000;
  uint32_t restart_backoff_max_ms = 30000;
  uint32_t restart_intensity = 5;     // restarts within restart_period_s before the worker is marked failed
  uint32_t restart_period_s = 60;
  uint32_t max_queued_jobs = 10000;
  uint64_t max_upload_bytes = 1ull << 30;  // largest accepted HTTP body
  // Request bodies the supervisor holds in memory, all connections together; a body that would go
  // past it, and any body over 1 MiB, is written to <state_dir>/spool/ as it arrives instead.
  // Counted in memory_budget with the slot rings.
  uint64_t upload_memory = 64ull << 20;
  // The largest circuit inputs file a submission may name (each of its "inputs" entries that is
  // {"path": ...}): a larger one is refused with 413 before it is read. Such a file is read and
  // parsed on a helper thread, and its parse takes many times its size in memory.
  uint64_t max_input_bytes = 16ull << 20;
  // API connections (unix socket and TCP together) open at once; one more is answered 503 and
  // closed. Must fit the process's descriptor limit (checked at start).
  uint32_t max_connections = 512;
  uint32_t header_timeout_ms = 10000;  // a request's line and headers must arrive within this (408); 0 = none
  uint32_t idle_timeout_ms = 60000;    // a connection silent this long, owing no answer, is closed; 0 = never
};

struct TimelineConfig {
  bool enabled = true;
  std::string path;                   // "" = <state_dir>/timeline.log
  std::string format = "csv";         // "csv": TIMELINE,<ms>,<EVENT>,<job>,<k=v,...> lines
  bool also_stderr = false;           // echo merged lines to the supervisor's log
};

struct StoreConfig {
  // "" = the SQLite store in daemon.state_dir, for one node. "postgresql://user@host/db?..." (a libpq
  // URI) = a PostgreSQL database shared by every node that serves one queue.
  std::string url;
  std::string node_id;       // "" = <hostname>/<instance>; unique among the nodes sharing a database
  uint32_t lease_ms = 30000;  // a claimed partition's lease, renewed every third of it; expired, another node takes it
  uint32_t poll_ms = 500;     // how often a node with room looks for queued partitions
};

struct Config {
  std::string source;                 // the file it was read from ("" for an embedded default)
  DaemonConfig daemon;
  SynthesisConfig synthesis;
  GpuConfig gpu;
  std::vector<CircuitConfig> circuits;  // >= 1
  LimitsConfig limits;
  TimelineConfig timeline;
  StoreConfig store;
  const CircuitConfig* find_circuit(const std::string& name) const;  // not removed
};

// A path of a runtime circuit that does not resolve inside daemon.key_dirs.
struct OutsideKeyDirs : ConfigError {
  using ConfigError::ConfigError;
};
// A circuit added at run time, from the JSON object of POST /v1/circuits: the keys of a [[circuits]]
// entry, checked as the file's are (ConfigError names the key, e.g. "zkey: ..."), every path
// absolute and inside one of key_dirs as written (else OutsideKeyDirs, before anything outside is
// looked up) and with its symlinks resolved; the paths come back canonical. Marked runtime.
CircuitConfig circuit_from_json(const nlohmann::json& body, const std::vector<std::string>& key_dirs);
// The entry as JSON, for the job store and the API (what circuit_from_json reads back).
nlohmann::ordered_json circuit_json(const CircuitConfig& c);

// The runtime circuits as the workers learn them: <state_dir>/circuits.toml lists the runtime
// entries of c.circuits in order (removed ones too: their jobs may still run), so that a worker
// finds circuit i at the same index as the supervisor. Written whole and renamed into place.
std::string runtime_circuits_path(const Config& c);
void write_runtime_circuits(const Config& c);
// Appends the file's circuits that c does not have yet; returns how many. No file: none.
size_t load_runtime_circuits(Config& c);

// Reads and validates the whole file. Throws ConfigError naming the first bad key (unknown keys are
// errors too, so a typo never silently falls back to a default). Relative paths are resolved against
// the directory of the config file.
Config load_config(const std::string& path);
// The same from TOML text; base_dir resolves relative paths.
Config parse_config(const std::string& toml_text, const std::string& source, const std::string& base_dir);

// Checks that every configured CPU exists on this host (sched_getaffinity of the process); throws
// ConfigError naming the key otherwise. Separate so that tests can parse configs for other hosts.
void validate_cpus(const Config& c);

// A byte count such as 1073741824, "512MiB", "64GiB", "2TB". Throws ConfigError(key, ...).
uint64_t parse_bytes(const std::string& text, const std::string& key);

// gpu.slots per device for the configured synthesis workers, which spread over the devices
// (w = ceil(workers / devices) per device). Below `minimum` (w + 1) some of them can never write
// while the GPU proves a slot: they wait for slots and the GPU for their work. `recommended`
// (w + 2) also gives the GPU worker its second slot, the next proof it holds while it proves (or
// finishes) the last, so that the next proof starts as soon as the last one's compute ends.
struct SlotNeeds {
  uint32_t minimum = 0, recommended = 0;
};
SlotNeeds slot_needs(const Config& c);

// Every key the parser accepts, as dotted paths ("daemon.socket", "circuits[].zkey"), in file order.
// Used to check that the example config documents all of them.
std::vector<std::string> known_keys();

}  // namespace cuzk::config
