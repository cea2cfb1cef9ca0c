// TOML (toml++) to the typed Config of config.hpp, with whole-file validation.
//
// Every check throws ConfigError(key, message) where key is the dotted TOML path of the offending
// value. Unknown sections and keys are errors, so that a typo never silently falls back to a default.
// Within a table, unknown keys are reported before any value is checked, so a misspelt key is named
// as such rather than as a missing value.
#include "config/config.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include <nlohmann/json.hpp>

#include "common/gpu_options.hpp"

namespace cuzk::config {
namespace {

namespace fs = std::filesystem;

// Largest CPU number accepted in a CPU set: the workers pin with a fixed-size cpu_set_t.
constexpr int kMaxCpu = CPU_SETSIZE - 1;

std::string quote(const std::string& s) { return "\"" + s + "\""; }

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "an unknown type";
  }
}

// " (line N)" for a node that came from the text, "" otherwise.
std::string where(const toml::node& n) {
  const auto& src = n.source();
  if (src.begin.line == 0) return "";
  return " (line " + std::to_string(src.begin.line) + ")";
}

[[noreturn]] void fail(const std::string& key, const std::string& msg, const toml::node* n = nullptr) {
  throw ConfigError(key, n ? msg + where(*n) : msg);
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string suggestion(const std::string& unknown, const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = 3;  // only suggest close matches
  for (const auto& k : known) {
    size_t d = edit_distance(unknown, k);
    if (d < best_d) best_d = d, best = k;
  }
  return best.empty() ? "" : " (did you mean " + quote(best) + "?)";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Resolves a relative path against base_dir (or the working directory when base_dir is empty).
std::string resolve(const std::string& p, const std::string& base_dir) {
  if (p.empty()) return p;
  fs::path path(p);
  if (path.is_absolute()) return path.lexically_normal().string();
  fs::path base = base_dir.empty() ? fs::current_path() : fs::path(base_dir);
  if (base.is_relative()) base = fs::absolute(base);
  return (base / path).lexically_normal().string();
}

// Reads one table, remembering which keys were looked at.
class Section {
 public:
  Section(const toml::table* t, std::string path) : t_(t), path_(std::move(path)) {}

  std::string key(const std::string& k) const { return path_.empty() ? k : path_ + "." + k; }

  // Every key of the table must be one of `known`.
  void allow_only(const std::vector<std::string>& known) const {
    if (!t_) return;
    for (auto&& [k, v] : *t_) {
      std::string name(k.str());
      if (std::find(known.begin(), known.end(), name) == known.end())
        fail(key(name), "unknown key" + suggestion(name, known) + "; known keys: " + join(known), &v);
    }
  }

  const toml::node* node(const std::string& k) const { return t_ ? t_->get(k) : nullptr; }

  bool has(const std::string& k) const { return node(k) != nullptr; }

  void str(const std::string& k, std::string& out) const {
    const toml::node* n = node(k);
    if (!n) return;
    if (!n->is_string()) fail(key(k), "must be a string, not " + type_name(*n), n);
    out = n->as_string()->get();
  }

  // A string that must be one of `choices`.
  void choice(const std::string& k, std::string& out, const std::vector<std::string>& choices) const {
    str(k, out);
    if (std::find(choices.begin(), choices.end(), out) == choices.end())
      fail(key(k), "must be one of " + join(choices) + ", got " + quote(out), node(k));
  }

  void boolean(const std::string& k, bool& out) const {
    const toml::node* n = node(k);
    if (!n) return;
    if (!n->is_boolean()) fail(key(k), "must be a boolean (true or false), not " + type_name(*n), n);
    out = n->as_boolean()->get();
  }

  template <typename T>
  void integer(const std::string& k, T& out, int64_t min, int64_t max) const {
    const toml::node* n = node(k);
    if (!n) return;
    out = static_cast<T>(checked_integer(key(k), *n, min, max));
  }

  static int64_t checked_integer(const std::string& key, const toml::node& n, int64_t min, int64_t max) {
    if (!n.is_integer()) fail(key, "must be an integer, not " + type_name(n), &n);
    int64_t v = n.as_integer()->get();
    if (v < min || v > max) {
      std::string range = max == INT64_MAX ? ">= " + std::to_string(min)
                                           : "between " + std::to_string(min) + " and " + std::to_string(max);
      fail(key, "must be " + range + ", got " + std::to_string(v), &n);
    }
    return v;
  }

  // A byte count: a non-negative integer, or a string such as "64GiB".
  void bytes(const std::string& k, uint64_t& out) const {
    const toml::node* n = node(k);
    if (!n) return;
    if (n->is_integer()) {
      int64_t v = n->as_integer()->get();
      if (v < 0) fail(key(k), "must not be negative, got " + std::to_string(v), n);
      out = static_cast<uint64_t>(v);
    } else if (n->is_string()) {
      try {
        out = parse_bytes(n->as_string()->get(), key(k));
      } catch (const ConfigError& e) {
        fail(key(k), std::string(e.what()).substr(e.key.size() + 2), n);
      }
    } else {
      fail(key(k), "must be a byte count (an integer, or a string such as \"64GiB\"), not " + type_name(*n), n);
    }
  }

  // An array; returns nullptr when the key is absent.
  const toml::array* array(const std::string& k) const {
    const toml::node* n = node(k);
    if (!n) return nullptr;
    if (!n->is_array()) fail(key(k), "must be an array, not " + type_name(*n), n);
    return n->as_array();
  }

  std::vector<CpuSet> cpusets(const std::string& k) const {
    std::vector<CpuSet> out;
    const toml::array* a = array(k);
    if (!a) return out;
    for (size_t i = 0; i < a->size(); ++i) {
      const toml::node& e = *a->get(i);
      std::string ek = key(k) + "[" + std::to_string(i) + "]";
      if (!e.is_string()) fail(ek, "must be a CPU set string such as \"0-3,8\", not " + type_name(e), &e);
      try {
        out.push_back(parse_cpuset(e.as_string()->get(), ek));
      } catch (const ConfigError& err) {
        fail(ek, std::string(err.what()).substr(err.key.size() + 2), &e);
      }
    }
    return out;
  }

  const toml::table* table() const { return t_; }
  const std::string& path() const { return path_; }

 private:
  const toml::table* t_;
  std::string path_;
};

// The top-level section `name` as a table, or nullptr when absent.
const toml::table* section(const toml::table& root, const std::string& name) {
  const toml::node* n = root.get(name);
  if (!n) return nullptr;
  if (!n->is_table()) fail(name, "must be a table ([" + name + "]), not " + type_name(*n), n);
  return n->as_table();
}

bool valid_name(const std::string& s, size_t max_len, const std::string& extra) {
  if (s.empty() || s.size() > max_len) return false;
  for (unsigned char ch : s)
    if (!std::isalnum(ch) && extra.find(static_cast<char>(ch)) == std::string::npos) return false;
  return true;
}

// Opens `path` and checks that it is a readable regular file starting with `magic`.
void check_file(const std::string& key, const std::string& path, const std::string& magic, const toml::node* n) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) fail(key, "file " + quote(path) + " does not exist", n);
  if (!fs::is_regular_file(st)) fail(key, quote(path) + " is not a regular file", n);
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(key, "cannot read " + quote(path) + ": " + std::strerror(errno), n);
  char buf[4] = {};
  f.read(buf, 4);
  if (f.gcount() != 4 || std::string(buf, 4) != magic)
    fail(key, quote(path) + " is not a " + magic + " file (it does not start with " + quote(magic) + ")", n);
}

// Checks that `path` is an existing directory (readability is checked by whoever opens it).
void check_dir(const std::string& key, const std::string& path, const toml::node* n) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) fail(key, "directory " + quote(path) + " does not exist", n);
  if (!fs::is_directory(st)) fail(key, quote(path) + " is not a directory", n);
}

// A witness generator: a folder (circom's <name>_cpp or <name>_js, or an artefact) or circom's .wasm,
// whose first bytes are the wasm magic. What it holds is checked by whoever opens it.
void check_generator(const std::string& key, const std::string& path, const toml::node* n) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) fail(key, quote(path) + " does not exist", n);
  if (fs::is_directory(st)) return;
  if (!fs::is_regular_file(st)) fail(key, quote(path) + " is neither a directory nor a .wasm file", n);
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(key, "cannot read " + quote(path) + ": " + std::strerror(errno), n);
  char buf[4] = {};
  f.read(buf, 4);
  if (f.gcount() != 4 || std::string(buf, 4) != std::string("\0asm", 4))
    fail(key, quote(path) + " is neither a directory nor a WebAssembly module (circom's .wasm)", n);
}

// An array of existing directories, made absolute (against base_dir) and canonical, so that a
// request's path can be compared with them after its own symlinks are resolved.
std::vector<std::string> input_dirs(const Section& s, const std::string& k, const std::string& base_dir) {
  std::vector<std::string> out;
  const toml::array* a = s.array(k);
  if (!a) return out;
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::node& e = *a->get(i);
    const std::string ek = s.key(k) + "[" + std::to_string(i) + "]";
    if (!e.is_string()) fail(ek, "must be a directory path (a string), not " + type_name(e), &e);
    const std::string& text = e.as_string()->get();
    if (text.empty()) fail(ek, "must not be empty", &e);
    const std::string abs = resolve(text, base_dir);
    check_dir(ek, abs, &e);
    std::error_code ec;
    fs::path canon = fs::canonical(abs, ec);
    if (ec) fail(ek, "cannot resolve " + quote(abs) + ": " + ec.message(), &e);
    out.push_back(canon.string());
  }
  return out;
}

// "host:port" or "[v6]:port". Returns host; throws on a malformed address.
std::string check_tcp(const std::string& key, const std::string& s, bool allow_remote, const toml::node* n) {
  std::string host, port;
  if (!s.empty() && s[0] == '[') {
    size_t close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':')
      fail(key, "must be \"host:port\" or \"[ipv6]:port\", got " + quote(s), n);
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
  } else {
    size_t colon = s.rfind(':');
    if (colon == std::string::npos || s.find(':') != colon)
      fail(key, "must be \"host:port\" (an IPv6 host goes in brackets), got " + quote(s), n);
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
  }
  if (host.empty()) fail(key, "the host is empty in " + quote(s), n);
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), ::isdigit) ||
      std::stoi(port) < 1 || std::stoi(port) > 65535)
    fail(key, "the port must be a number between 1 and 65535, got " + quote(port), n);
  bool loopback = host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
  if (!loopback && !allow_remote)
    fail(key, quote(host) + " is not a loopback address; set daemon.tcp_allow_remote = true to listen on it", n);
  return host;
}

// Parses "0660" (or a TOML octal integer 0o660) into a mode.
uint32_t socket_mode(const std::string& key, const toml::node& n) {
  if (n.is_integer()) {
    auto* v = n.as_integer();
    if (!(v->flags() & toml::value_flags::format_as_octal))
      fail(key, "must be an octal string such as \"0660\" (the integer " + std::to_string(v->get()) +
                    " is decimal; write \"0" + std::to_string(v->get()) + "\" or 0o" + std::to_string(v->get()) + ")",
           &n);
    if (v->get() < 0 || v->get() > 0777) fail(key, "must be a permission mode between 0000 and 0777", &n);
    return static_cast<uint32_t>(v->get());
  }
  if (!n.is_string()) fail(key, "must be an octal string such as \"0660\", not " + type_name(n), &n);
  const std::string& s = n.as_string()->get();
  if (s.size() < 3 || s.size() > 4 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '7'; }))
    fail(key, "must be an octal permission mode such as \"0660\", got " + quote(s), &n);
  uint32_t m = static_cast<uint32_t>(std::stoul(s, nullptr, 8));
  if (m > 0777) fail(key, "must be a permission mode between 0000 and 0777 (no setuid/setgid/sticky bits), got " + quote(s), &n);
  return m;
}

// The first line of a regular file, read no further than kMaxTokenLine bytes: a device such as
// /dev/zero would otherwise be read without end, and a FIFO or /dev/stdin would block the start.
constexpr size_t kMaxTokenLine = 4096;

std::string read_token_file(const std::string& key, const std::string& path, const toml::node* n) {
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
    fail(key, "token file " + quote(path) + " is not a regular file", n);
  std::ifstream f(path);
  if (!f) fail(key, "cannot read token file " + quote(path) + ": " + std::strerror(errno), n);
  char buf[kMaxTokenLine];
  f.read(buf, sizeof buf);
  const std::string head(buf, size_t(f.gcount()));
  const size_t nl = head.find('\n');
  if (nl == std::string::npos && head.size() == sizeof buf)
    fail(key, "token file " + quote(path) + ": its first line is longer than " + std::to_string(kMaxTokenLine) + " bytes",
         n);
  std::string line = trim(head.substr(0, nl));
  if (line.empty()) fail(key, "token file " + quote(path) + " is empty (its first line is the token)", n);
  return line;
}

void check_token(const std::string& key, const std::string& token, const toml::node* n) {
  if (token.empty()) fail(key, "must not be empty", n);
  for (unsigned char c : token)
    if (c <= 0x20 || c >= 0x7f) fail(key, "must be printable ASCII without spaces (it is sent in an HTTP header)", n);
}

const std::vector<std::string> kSections = {"daemon", "synthesis", "gpu", "circuits", "limits", "timeline", "store"};
const std::vector<std::string> kDaemonKeys = {"instance",   "state_dir",        "socket",           "socket_mode",
                                              "tcp",        "tcp_allow_remote", "token",            "token_file",
                                              "log_level",  "heartbeat_interval_ms", "heartbeat_timeout_ms",
                                              "shutdown_grace_ms", "input_dirs", "key_dirs",
                                              "admin_token",      "admin_token_file", "max_client_priority"};
const std::vector<std::string> kSynthesisKeys = {"workers", "cpus", "threads", "witness_timeout_s", "witness_engine",
                                                  "abc"};
const std::vector<std::string> kGpuKeys = {"backend",    "devices",    "slots",      "batch",
                                           "cpus",       "threads",    "verify",
                                           "precompute", "precompute_headroom_mb", "msm_window",
                                           "ntt_passes", "key_memory", "key_host_memory", "key_wait_ms",
                                           "slot_vars",  "slot_domain"};
const std::vector<std::string> kCircuitKeys = {"name", "zkey", "r1cs", "max_partitions", "witness_generator"};
const std::vector<std::string> kLimitsKeys = {"memory_budget",     "restart_backoff_initial_ms", "restart_backoff_max_ms",
                                              "restart_intensity", "restart_period_s",           "max_queued_jobs",
                                              "max_upload_bytes",  "max_connections",            "header_timeout_ms",
                                              "idle_timeout_ms",   "upload_memory",              "max_input_bytes"};
const std::vector<std::string> kTimelineKeys = {"enabled", "path", "format", "also_stderr"};
const std::vector<std::string> kStoreKeys = {"url", "node_id", "lease_ms", "poll_ms"};

void parse_daemon(const toml::table& root, const std::string& base_dir, DaemonConfig& d) {
  Section s(section(root, "daemon"), "daemon");
  s.allow_only(kDaemonKeys);
  s.str("instance", d.instance);
  if (!valid_name(d.instance, 32, "_-"))
    fail("daemon.instance", "must be 1 to 32 characters from A-Z a-z 0-9 _ -, got " + quote(d.instance), s.node("instance"));

  s.str("state_dir", d.state_dir);
  if (d.state_dir.empty()) fail("daemon.state_dir", "must not be empty", s.node("state_dir"));
  d.state_dir = resolve(d.state_dir, base_dir);

  s.str("socket", d.socket);
  if (d.socket.empty()) fail("daemon.socket", "must not be empty", s.node("socket"));
  d.socket = resolve(d.socket, base_dir);
  if (d.socket.size() > 107)  // sizeof(sockaddr_un::sun_path) - 1
    fail("daemon.socket", "is " + std::to_string(d.socket.size()) + " bytes long; a unix socket path may have at most 107",
         s.node("socket"));
  if (const toml::node* n = s.node("socket_mode")) d.socket_mode = socket_mode("daemon.socket_mode", *n);

  s.boolean("tcp_allow_remote", d.tcp_allow_remote);
  s.str("tcp", d.tcp);
  s.str("token", d.token);
  s.str("token_file", d.token_file);
  // An empty token or token_file means "not set".
  if (!d.token.empty() && !d.token_file.empty())
    fail("daemon.token_file", "set either daemon.token or daemon.token_file, not both", s.node("token_file"));
  if (!d.token.empty()) check_token("daemon.token", d.token, s.node("token"));
  if (!d.token_file.empty()) {
    d.token_file = resolve(d.token_file, base_dir);
    d.token = read_token_file("daemon.token_file", d.token_file, s.node("token_file"));
    check_token("daemon.token_file", d.token, s.node("token_file"));
  }
  s.str("admin_token", d.admin_token);
  s.str("admin_token_file", d.admin_token_file);
  if (!d.admin_token.empty() && !d.admin_token_file.empty())
    fail("daemon.admin_token_file", "set either daemon.admin_token or daemon.admin_token_file, not both",
         s.node("admin_token_file"));
  if (!d.admin_token.empty()) check_token("daemon.admin_token", d.admin_token, s.node("admin_token"));
  if (!d.admin_token_file.empty()) {
    d.admin_token_file = resolve(d.admin_token_file, base_dir);
    d.admin_token = read_token_file("daemon.admin_token_file", d.admin_token_file, s.node("admin_token_file"));
    check_token("daemon.admin_token_file", d.admin_token, s.node("admin_token_file"));
  }
  // Otherwise a client with the clients' token would be an operator too.
  if (!d.admin_token.empty() && d.admin_token == d.token)
    fail(d.admin_token_file.empty() ? "daemon.admin_token" : "daemon.admin_token_file",
         "must differ from the clients' token (daemon.token)",
         s.node(d.admin_token_file.empty() ? "admin_token" : "admin_token_file"));
  if (!d.tcp.empty()) {
    check_tcp("daemon.tcp", d.tcp, d.tcp_allow_remote, s.node("tcp"));
    if (d.token.empty())
      fail("daemon.tcp", "TCP needs a bearer token: set daemon.token or daemon.token_file", s.node("tcp"));
  }

  s.choice("max_client_priority", d.max_client_priority, {"critical", "high", "normal", "low"});
  s.choice("log_level", d.log_level, {"trace", "debug", "info", "warn", "error"});

  s.integer("heartbeat_interval_ms", d.heartbeat_interval_ms, 10, 3600000);
  s.integer("heartbeat_timeout_ms", d.heartbeat_timeout_ms, 1, 86400000);
  if (d.heartbeat_timeout_ms <= d.heartbeat_interval_ms)
    fail("daemon.heartbeat_timeout_ms",
         "must be greater than daemon.heartbeat_interval_ms (" + std::to_string(d.heartbeat_interval_ms) + "), got " +
             std::to_string(d.heartbeat_timeout_ms),
         s.node("heartbeat_timeout_ms"));
  s.integer("shutdown_grace_ms", d.shutdown_grace_ms, 0, 86400000);
  d.input_dirs = input_dirs(s, "input_dirs", base_dir);
  d.key_dirs = input_dirs(s, "key_dirs", base_dir);
  // Requests must never reach the daemon's own files (the job store, other jobs' uploads).
  std::error_code ec;
  const std::string state = fs::weakly_canonical(d.state_dir, ec).string();
  auto below = [](const std::string& p, const std::string& dir) {
    return p == dir || p.rfind(dir == "/" ? dir : dir + "/", 0) == 0;
  };
  for (const char* k : {"input_dirs", "key_dirs"}) {
    const std::vector<std::string>& dirs = std::string(k) == "input_dirs" ? d.input_dirs : d.key_dirs;
    for (size_t i = 0; i < dirs.size(); ++i) {
      const std::string& in = dirs[i];
      if (below(state, in) || below(in, state))
        fail("daemon." + std::string(k) + "[" + std::to_string(i) + "]",
             quote(in) + " overlaps daemon.state_dir (" + quote(state) +
                 "); requests must not reach the daemon's own files",
             s.array(k)->get(i));
    }
  }
}

void parse_synthesis(const toml::table& root, SynthesisConfig& sy) {
  Section s(section(root, "synthesis"), "synthesis");
  s.allow_only(kSynthesisKeys);
  s.integer("workers", sy.workers, 1, 1024);
  sy.cpus = s.cpusets("cpus");
  if (!sy.cpus.empty() && sy.cpus.size() != sy.workers)
    fail("synthesis.cpus",
         "has " + std::to_string(sy.cpus.size()) + " CPU sets but synthesis.workers = " + std::to_string(sy.workers) +
             "; give exactly one CPU set per worker (or none)",
         s.node("cpus"));
  s.integer("threads", sy.threads, 0, 4096);
  s.integer("witness_timeout_s", sy.witness_timeout_s, 0, 86400 * 7);
  s.str("witness_engine", sy.witness_engine);
  if (sy.witness_engine != "program" && sy.witness_engine != "native")
    fail("synthesis.witness_engine", "must be \"program\" or \"native\", got " + quote(sy.witness_engine),
         s.node("witness_engine"));
  s.str("abc", sy.abc);
  if (sy.abc != "cpu" && sy.abc != "gpu")
    fail("synthesis.abc", "must be \"cpu\" or \"gpu\", got " + quote(sy.abc), s.node("abc"));
}

void parse_gpu(const toml::table& root, GpuConfig& g) {
  Section s(section(root, "gpu"), "gpu");
  s.allow_only(kGpuKeys);
  s.str("backend", g.backend);
  if (g.backend != "cuda" && g.backend != "cpu")
    fail("gpu.backend", "must be \"cuda\" or \"cpu\", got " + quote(g.backend), s.node("backend"));
  if (const toml::array* a = s.array("devices")) {
    if (a->empty()) fail("gpu.devices", "must list at least one device", s.node("devices"));
    g.devices.clear();
    std::map<int64_t, size_t> seen;
    for (size_t i = 0; i < a->size(); ++i) {
      std::string ek = "gpu.devices[" + std::to_string(i) + "]";
      int64_t v = Section::checked_integer(ek, *a->get(i), 0, 1023);
      if (auto it = seen.find(v); it != seen.end())
        fail(ek, "device " + std::to_string(v) + " is listed twice (also gpu.devices[" + std::to_string(it->second) + "])",
             a->get(i));
      seen[v] = i;
      g.devices.push_back(static_cast<int>(v));
    }
  }
  s.integer("slots", g.slots, 1, 1024);
  s.integer("batch", g.batch, 1, 256);
  g.cpus = s.cpusets("cpus");
  if (!g.cpus.empty() && g.cpus.size() != g.devices.size())
    fail("gpu.cpus",
         "has " + std::to_string(g.cpus.size()) + " CPU sets but gpu.devices lists " + std::to_string(g.devices.size()) +
             " device(s); give exactly one CPU set per device (or none)",
         s.node("cpus"));
  s.integer("threads", g.threads, 0, 4096);
  s.boolean("verify", g.verify);
  s.str("precompute", g.precompute);
  try {
    gpu_options::check_precompute(g.precompute);
  } catch (const std::invalid_argument& e) {
    fail("gpu.precompute", e.what(), s.node("precompute"));
  }
  s.integer("precompute_headroom_mb", g.precompute_headroom_mb, 0, 1 << 24);
  s.integer("msm_window", g.msm_window, 0, gpu_options::kMsmWindowMax);
  try {
    gpu_options::check_msm_window(int(g.msm_window));
  } catch (const std::invalid_argument& e) {
    fail("gpu.msm_window", e.what(), s.node("msm_window"));
  }
  s.integer("ntt_passes", g.ntt_passes, 0, gpu_options::kNttPassesMax);
  s.bytes("key_memory", g.key_memory);
  s.bytes("key_host_memory", g.key_host_memory);
  s.integer("key_wait_ms", g.key_wait_ms, 0, 3600000);
  s.integer("slot_vars", g.slot_vars, 0, int64_t(1) << 32);
  s.integer("slot_domain", g.slot_domain, 0, int64_t(1) << 28);
  if (g.slot_domain & (g.slot_domain - 1))
    fail("gpu.slot_domain", "must be a power of two (a domain size), got " + std::to_string(g.slot_domain),
         s.node("slot_domain"));
}

// One [[circuits]] entry; its keys are named under `path`. A path relative to base_dir, or, with
// base_dir "", refused unless absolute. check_files: that each file exists and is of its kind.
CircuitConfig parse_circuit(const toml::table& t, const std::string& path, const std::string& base_dir,
                            bool check_files) {
  Section s(&t, path);
  s.allow_only(kCircuitKeys);
  CircuitConfig c;
  if (!s.has("name")) fail(s.key("name"), "is required", &t);
  s.str("name", c.name);
  if (!valid_name(c.name, 64, "_.-"))
    fail(s.key("name"), "must be 1 to 64 characters from A-Z a-z 0-9 _ . -, got " + quote(c.name), s.node("name"));
  auto file = [&](const std::string& k, std::string& out) {
    s.str(k, out);
    if (out.empty()) return;
    if (base_dir.empty() && !fs::path(out).is_absolute())
      fail(s.key(k), "must be an absolute path, got " + quote(out), s.node(k));
    out = resolve(out, base_dir);
  };
  if (!s.has("zkey")) fail(s.key("zkey"), "is required (the circuit's snarkjs .zkey proving key)", &t);
  s.str("zkey", c.zkey);
  if (c.zkey.empty()) fail(s.key("zkey"), "must not be empty", s.node("zkey"));
  file("zkey", c.zkey);
  file("r1cs", c.r1cs);  // "" = no r1cs
  file("witness_generator", c.witness_generator);  // "" = none
  if (check_files) {
    check_file(s.key("zkey"), c.zkey, "zkey", s.node("zkey"));
    if (!c.r1cs.empty()) check_file(s.key("r1cs"), c.r1cs, "r1cs", s.node("r1cs"));
    if (!c.witness_generator.empty())
      check_generator(s.key("witness_generator"), c.witness_generator, s.node("witness_generator"));
  }
  s.integer("max_partitions", c.max_partitions, 1, 65536);
  return c;
}

void parse_circuits(const toml::table& root, const std::string& base_dir, std::vector<CircuitConfig>& out) {
  const toml::node* n = root.get("circuits");
  if (!n) fail("circuits", "at least one [[circuits]] entry (name and zkey) is required");
  if (n->is_array() && n->as_array()->empty())
    fail("circuits", "at least one [[circuits]] entry (name and zkey) is required", n);
  if (!n->is_array() || !n->as_array()->is_array_of_tables())
    fail("circuits", "must be an array of tables, written [[circuits]], not " +
                         (n->is_array() ? std::string("an array of other values") : type_name(*n)), n);
  const toml::array& a = *n->as_array();
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string path = "circuits[" + std::to_string(i) + "]";
    CircuitConfig c = parse_circuit(*a.get(i)->as_table(), path, base_dir, true);
    if (auto it = names.find(c.name); it != names.end())
      fail(path + ".name", "duplicate circuit name " + quote(c.name) + " (also circuits[" + std::to_string(it->second) + "])",
           a.get(i)->as_table()->get("name"));
    names[c.name] = i;
    out.push_back(std::move(c));
  }
}

void parse_limits(const toml::table& root, LimitsConfig& l) {
  Section s(section(root, "limits"), "limits");
  s.allow_only(kLimitsKeys);
  s.bytes("memory_budget", l.memory_budget);
  s.integer("restart_backoff_initial_ms", l.restart_backoff_initial_ms, 0, 86400000);
  s.integer("restart_backoff_max_ms", l.restart_backoff_max_ms, 0, 86400000);
  if (l.restart_backoff_initial_ms > l.restart_backoff_max_ms)
    fail("limits.restart_backoff_initial_ms",
         "must not be greater than limits.restart_backoff_max_ms (" + std::to_string(l.restart_backoff_max_ms) +
             "), got " + std::to_string(l.restart_backoff_initial_ms),
         s.node("restart_backoff_initial_ms") ? s.node("restart_backoff_initial_ms") : s.node("restart_backoff_max_ms"));
  s.integer("restart_intensity", l.restart_intensity, 1, 1000000);
  s.integer("restart_period_s", l.restart_period_s, 1, 86400 * 7);
  s.integer("max_queued_jobs", l.max_queued_jobs, 1, 100000000);
  s.bytes("max_upload_bytes", l.max_upload_bytes);
  if (l.max_upload_bytes == 0) fail("limits.max_upload_bytes", "must be greater than 0", s.node("max_upload_bytes"));
  s.bytes("upload_memory", l.upload_memory);
  s.bytes("max_input_bytes", l.max_input_bytes);
  if (l.max_input_bytes == 0) fail("limits.max_input_bytes", "must be greater than 0", s.node("max_input_bytes"));
  s.integer("max_connections", l.max_connections, 1, 1000000);
  s.integer("header_timeout_ms", l.header_timeout_ms, 0, 3600000);
  s.integer("idle_timeout_ms", l.idle_timeout_ms, 0, 86400000);
}

void parse_timeline(const toml::table& root, const std::string& base_dir, TimelineConfig& t) {
  Section s(section(root, "timeline"), "timeline");
  s.allow_only(kTimelineKeys);
  s.boolean("enabled", t.enabled);
  s.str("path", t.path);
  t.path = resolve(t.path, base_dir);
  s.str("format", t.format);
  if (t.format != "csv") fail("timeline.format", "must be \"csv\", got " + quote(t.format), s.node("format"));
  s.boolean("also_stderr", t.also_stderr);
}

void parse_store(const toml::table& root, StoreConfig& st) {
  Section s(section(root, "store"), "store");
  s.allow_only(kStoreKeys);
  s.str("url", st.url);
  if (!st.url.empty() && st.url.rfind("postgresql://", 0) != 0 && st.url.rfind("postgres://", 0) != 0)
    fail("store.url", "must be a PostgreSQL URI (postgresql://...), or empty for the SQLite store in daemon.state_dir",
         s.node("url"));
  s.str("node_id", st.node_id);
  if (!st.node_id.empty() && !valid_name(st.node_id, 128, "_-.:/@"))
    fail("store.node_id", "must be 1 to 128 characters from A-Z a-z 0-9 _ - . : / @, got " + quote(st.node_id),
         s.node("node_id"));
  s.integer("lease_ms", st.lease_ms, 1000, 3600000);
  s.integer("poll_ms", st.poll_ms, 10, 60000);
}

std::string cpuset_text(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

CpuSet parse_cpuset(const std::string& text, const std::string& key) {
  CpuSet out;
  out.text = text;
  std::string t = trim(text);
  if (t.empty()) throw ConfigError(key, "empty CPU set (write CPU numbers and ranges such as \"0-3,8\")");
  auto number = [&](const std::string& s) -> int {
    std::string n = trim(s);
    if (n.empty() || n.size() > 6 || !std::all_of(n.begin(), n.end(), ::isdigit))
      throw ConfigError(key, "bad CPU set " + quote(text) + ": " + quote(n) +
                                 " is not a CPU number (write numbers and ranges such as \"0-3,8\")");
    int v = std::stoi(n);
    if (v > kMaxCpu)
      throw ConfigError(key, "bad CPU set " + quote(text) + ": CPU " + n + " is above the largest supported CPU (" +
                                 std::to_string(kMaxCpu) + ")");
    return v;
  };
  std::set<int> cpus;
  std::string item;
  size_t pos = 0;
  while (true) {
    size_t comma = t.find(',', pos);
    item = t.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (trim(item).empty()) throw ConfigError(key, "bad CPU set " + quote(text) + ": empty item between commas");
    size_t dash = item.find('-');
    if (dash == std::string::npos) {
      cpus.insert(number(item));
    } else {
      if (item.find('-', dash + 1) != std::string::npos)
        throw ConfigError(key, "bad CPU set " + quote(text) + ": " + quote(trim(item)) + " is not a range like \"0-3\"");
      int lo = number(item.substr(0, dash)), hi = number(item.substr(dash + 1));
      if (lo > hi)
        throw ConfigError(key, "bad CPU set " + quote(text) + ": range " + quote(trim(item)) + " is backwards");
      for (int c = lo; c <= hi; ++c) cpus.insert(c);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  out.cpus.assign(cpus.begin(), cpus.end());
  return out;
}

uint64_t parse_bytes(const std::string& text, const std::string& key) {
  std::string t = trim(text);
  auto bad = [&](const std::string& why) -> ConfigError {
    return ConfigError(key, "bad byte count " + quote(text) + ": " + why);
  };
  if (t.empty()) throw bad("empty (write e.g. 1073741824, \"512MiB\" or \"64GiB\")");
  size_t i = 0;
  std::string whole, frac;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) whole += t[i++];
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) frac += t[i++];
    if (frac.empty()) throw bad("a digit must follow the decimal point");
  }
  if (whole.empty()) throw bad(t[0] == '-' ? "must not be negative" : "must start with a number");
  std::string unit = trim(t.substr(i));
  std::string lower;
  for (char c : unit) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::map<std::string, unsigned __int128> units = {
      {"", 1},
      {"b", 1},
      {"k", 1ull << 10},
      {"kib", 1ull << 10},
      {"kb", 1000ull},
      {"m", 1ull << 20},
      {"mib", 1ull << 20},
      {"mb", 1000ull * 1000},
      {"g", 1ull << 30},
      {"gib", 1ull << 30},
      {"gb", 1000ull * 1000 * 1000},
      {"t", 1ull << 40},
      {"tib", 1ull << 40},
      {"tb", 1000ull * 1000 * 1000 * 1000},
      {"p", 1ull << 50},
      {"pib", 1ull << 50},
      {"pb", 1000ull * 1000 * 1000 * 1000 * 1000},
  };
  auto it = units.find(lower);
  if (it == units.end())
    throw bad("unknown unit " + quote(unit) + " (use B, KiB, MiB, GiB, TiB, PiB or KB, MB, GB, TB, PB; K, M, G, T, P are binary)");
  if (whole.size() + frac.size() > 30) throw bad("too large");
  unsigned __int128 mant = 0, scale = 1;
  for (char c : whole + frac) mant = mant * 10 + static_cast<unsigned>(c - '0');
  for (size_t k = 0; k < frac.size(); ++k) scale *= 10;
  unsigned __int128 num = mant * it->second;
  if (num / it->second != mant) throw bad("too large");
  if (num % scale != 0) throw bad("not a whole number of bytes");
  unsigned __int128 v = num / scale;
  if (v > static_cast<unsigned __int128>(UINT64_MAX)) throw bad("too large (more than 2^64-1 bytes)");
  return static_cast<uint64_t>(v);
}

const CircuitConfig* Config::find_circuit(const std::string& name) const {
  for (const auto& c : circuits)
    if (c.name == name && !c.removed) return &c;
  return nullptr;
}

CircuitConfig circuit_from_json(const nlohmann::json& body, const std::vector<std::string>& key_dirs) {
  if (!body.is_object()) throw ConfigError("", "a circuit must be a JSON object with the keys of a [[circuits]] entry");
  toml::table t;
  for (const auto& [k, v] : body.items()) {
    if (v.is_string()) t.insert(k, v.get<std::string>());
    else if (v.is_number_integer()) t.insert(k, v.get<int64_t>());
    else if (v.is_number_float()) t.insert(k, v.get<double>());
    else if (v.is_boolean()) t.insert(k, v.get<bool>());
    else if (v.is_array()) t.insert(k, toml::array{});  // named by the key's own check
    else if (v.is_object()) t.insert(k, toml::table{});
    else throw ConfigError(k, "must not be null");
  }
  CircuitConfig c = parse_circuit(t, "", "", false);
  for (auto [k, p] : {std::pair<const char*, std::string*>{"zkey", &c.zkey}, {"r1cs", &c.r1cs},
                      {"witness_generator", &c.witness_generator}}) {
    if (p->empty()) continue;
    auto inside = [&](const std::string& path) {
      return std::any_of(key_dirs.begin(), key_dirs.end(),
                         [&](const std::string& d) { return path.rfind(d == "/" ? d : d + "/", 0) == 0; });
    };
    const std::string outside = quote(*p) + " is not inside daemon.key_dirs" +
                                (key_dirs.empty() ? std::string(" (none is set: this daemon serves the circuits of its "
                                                                "config file only)")
                                                  : " (" + join(key_dirs) + ")");
    // As written first, so that nothing outside is even looked up; then with its symlinks resolved.
    if (!inside(fs::path(*p).lexically_normal().string())) throw OutsideKeyDirs(k, outside);
    std::error_code ec;
    const std::string canon = fs::canonical(*p, ec).string();
    if (ec) throw ConfigError(k, "cannot resolve " + quote(*p) + ": " + ec.message());
    if (!inside(canon)) throw OutsideKeyDirs(k, outside);
    *p = canon;
  }
  check_file("zkey", c.zkey, "zkey", nullptr);
  if (!c.r1cs.empty()) check_file("r1cs", c.r1cs, "r1cs", nullptr);
  if (!c.witness_generator.empty()) check_generator("witness_generator", c.witness_generator, nullptr);
  c.runtime = true;
  return c;
}

nlohmann::ordered_json circuit_json(const CircuitConfig& c) {
  nlohmann::ordered_json j = {{"name", c.name}, {"zkey", c.zkey}};
  if (!c.r1cs.empty()) j["r1cs"] = c.r1cs;
  if (!c.witness_generator.empty()) j["witness_generator"] = c.witness_generator;
  j["max_partitions"] = c.max_partitions;
  return j;
}

std::string runtime_circuits_path(const Config& c) { return (fs::path(c.daemon.state_dir) / "circuits.toml").string(); }

void write_runtime_circuits(const Config& c) {
  toml::array entries;
  for (const CircuitConfig& cc : c.circuits) {
    if (!cc.runtime) continue;
    toml::table t;
    t.insert("name", cc.name);
    t.insert("zkey", cc.zkey);
    if (!cc.r1cs.empty()) t.insert("r1cs", cc.r1cs);
    if (!cc.witness_generator.empty()) t.insert("witness_generator", cc.witness_generator);
    t.insert("max_partitions", int64_t(cc.max_partitions));
    entries.push_back(std::move(t));
  }
  const std::string path = runtime_circuits_path(c), tmp = path + ".tmp";
  std::error_code ec;
  if (entries.empty()) {  // no file: nothing to write on a full disk
    fs::remove(path, ec);
    if (ec) throw std::runtime_error("cannot remove " + path + ": " + ec.message());
    return;
  }
  toml::table root;
  root.insert("circuits", std::move(entries));
  std::ostringstream text;
  text << "# The circuits added at run time (POST /v1/circuits), after the config file's, in the order\n"
          "# the workers know them by. The supervisor writes it at start from the job store and at every\n"
          "# change; do not edit.\n"
       << toml::toml_formatter(root) << "\n";
  {
    // The same list as the file has (a restart): nothing to write, as on a full disk.
    std::ifstream old(path, std::ios::binary);
    std::stringstream had;
    had << old.rdbuf();
    if (old && had.str() == text.str()) return;
  }
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text.str();
    f.flush();
    if (!f) {
      const int err = errno;
      fs::remove(tmp, ec);
      throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(err));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) throw std::runtime_error("cannot replace " + path + ": " + ec.message());
}

size_t load_runtime_circuits(Config& c) {
  const std::string path = runtime_circuits_path(c);
  std::error_code ec;
  if (!fs::exists(path, ec)) return 0;
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw ConfigError("", path + ": " + std::string(e.description()));
  }
  const toml::array* a = root["circuits"].as_array();
  if (!a) return 0;
  size_t from_file = 0;
  for (const auto& cc : c.circuits) from_file += !cc.runtime;
  size_t added = 0;
  for (size_t i = 0; i < a->size(); ++i) {
    if (from_file + i < c.circuits.size()) continue;  // known already: indices never change while the daemon runs
    const toml::table* t = a->get(i)->as_table();
    if (!t) throw ConfigError("", path + ": circuits[" + std::to_string(i) + "] is not a table");
    // Not checked against the disk here: a worker that proves it opens the files and says so.
    CircuitConfig cc = parse_circuit(*t, path + ": circuits[" + std::to_string(i) + "]", "", false);
    cc.runtime = true;
    c.circuits.push_back(std::move(cc));
    added++;
  }
  return added;
}

SlotNeeds slot_needs(const Config& c) {
  const uint32_t devices = std::max<uint32_t>(1, uint32_t(c.gpu.devices.size()));
  const uint32_t per_device = (c.synthesis.workers + devices - 1) / devices;
  return {per_device + 1, per_device + 2};
}

Config parse_config(const std::string& toml_text, const std::string& source, const std::string& base_dir) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw ConfigError("", "TOML syntax error at line " + std::to_string(b.line) + ", column " +
                              std::to_string(b.column) + ": " + std::string(e.description()));
  }
  for (auto&& [k, v] : root) {
    std::string name(k.str());
    if (std::find(kSections.begin(), kSections.end(), name) == kSections.end())
      fail(name, "unknown section" + suggestion(name, kSections) + "; known sections: " + join(kSections), &v);
  }
  Config c;
  c.source = source;
  parse_daemon(root, base_dir, c.daemon);
  parse_synthesis(root, c.synthesis);
  parse_gpu(root, c.gpu);
  parse_circuits(root, base_dir, c.circuits);
  parse_limits(root, c.limits);
  parse_timeline(root, base_dir, c.timeline);
  parse_store(root, c.store);
  return c;
}

std::vector<std::string> known_keys() {
  std::vector<std::string> out;
  auto add = [&](const std::string& prefix, const std::vector<std::string>& keys) {
    for (const auto& k : keys) out.push_back(prefix + k);
  };
  add("daemon.", kDaemonKeys);
  add("synthesis.", kSynthesisKeys);
  add("gpu.", kGpuKeys);
  add("circuits[].", kCircuitKeys);
  add("limits.", kLimitsKeys);
  add("timeline.", kTimelineKeys);
  add("store.", kStoreKeys);
  return out;
}

Config load_config(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) abs = path;
  abs = abs.lexically_normal();
  if (fs::is_directory(abs, ec)) throw ConfigError("", "config file " + quote(abs.string()) + " is a directory");
  std::ifstream f(abs, std::ios::binary);
  if (!f) throw ConfigError("", "cannot read config file " + quote(abs.string()) + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw ConfigError("", "cannot read config file " + quote(abs.string()));
  return parse_config(ss.str(), abs.string(), abs.parent_path().string());
}

void validate_cpus(const Config& c) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0)
    throw ConfigError("", std::string("sched_getaffinity failed: ") + std::strerror(errno));
  std::vector<int> allowed;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &mask)) allowed.push_back(i);
  auto check = [&](const std::vector<CpuSet>& sets, const std::string& key) {
    for (size_t i = 0; i < sets.size(); ++i)
      for (int cpu : sets[i].cpus)
        if (!CPU_ISSET(cpu, &mask))
          throw ConfigError(key + "[" + std::to_string(i) + "]",
                            "CPU " + std::to_string(cpu) + " is not available to this process (allowed CPUs: " +
                                cpuset_text(allowed) + ")");
  };
  check(c.synthesis.cpus, "synthesis.cpus");
  check(c.gpu.cpus, "gpu.cpus");
}

}  // namespace cuzk::config
