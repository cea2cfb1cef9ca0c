// config/: TOML parsing, whole-file validation (each error names its dotted key), CPU sets, byte
// counts, and the shipped example config.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "config/config.hpp"

namespace fs = std::filesystem;
using namespace cuzk::config;

namespace {

// A scratch directory with a fake proving key and r1cs (only the magic is checked at load).
class ConfigTest : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    char tmpl[] = "/tmp/cuzk_config_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    write("keys/a.zkey", std::string("zkey") + std::string(60, '\0'));
    write("keys/b.zkey", std::string("zkey") + std::string(60, '\0'));
    write("keys/a.r1cs", std::string("r1cs") + std::string(60, '\0'));
    write("keys/not_a_key.zkey", "wtns____");
    write("token.txt", "s3cret-token\n");
    write("empty_token.txt", "\n\n");
  }
  void TearDown() override { fs::remove_all(dir); }

  void write(const std::string& rel, const std::string& body) {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel, std::ios::binary) << body;
  }
  std::string path(const std::string& rel) const { return (dir / rel).string(); }

  // The smallest valid config, plus `extra` TOML.
  std::string minimal(const std::string& extra = "") const {
    return extra + "\n[[circuits]]\nname = \"a\"\nzkey = \"keys/a.zkey\"\n";
  }
  Config parse(const std::string& text) const { return parse_config(text, path("cuzk.toml"), dir.string()); }

  // Parses text that must fail; returns the error.
  ConfigError error_of(const std::string& text) const {
    try {
      parse(text);
    } catch (const ConfigError& e) {
      return e;
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return ConfigError("<none>", "");
  }
};

#define EXPECT_CONFIG_ERROR(text, key_, substr)                                         \
  do {                                                                                  \
    ConfigError e_ = error_of(text);                                                    \
    EXPECT_EQ(e_.key, key_) << e_.what();                                               \
    EXPECT_NE(std::string(e_.what()).find(substr), std::string::npos) << e_.what();     \
    EXPECT_EQ(std::string(e_.what()).rfind(std::string(key_) + ": ", 0), 0u) << e_.what(); \
  } while (0)

TEST_F(ConfigTest, MinimalConfigHasTheDocumentedDefaults) {
  Config c = parse(minimal());
  Config d;  // the struct defaults
  EXPECT_EQ(c.daemon.instance, "default");
  EXPECT_EQ(c.daemon.state_dir, d.daemon.state_dir);
  EXPECT_EQ(c.daemon.socket, "/run/cuzk/cuzk.sock");
  EXPECT_EQ(c.daemon.socket_mode, 0660u);
  EXPECT_EQ(c.daemon.tcp, "");
  EXPECT_EQ(c.daemon.token, "");
  EXPECT_EQ(c.daemon.heartbeat_interval_ms, 1000u);
  EXPECT_EQ(c.daemon.heartbeat_timeout_ms, 10000u);
  EXPECT_EQ(c.synthesis.workers, 1u);
  EXPECT_TRUE(c.synthesis.cpus.empty());
  EXPECT_EQ(c.gpu.backend, "cpu");
  EXPECT_EQ(c.gpu.devices, std::vector<int>{0});
  EXPECT_EQ(c.gpu.slots, 2u);
  EXPECT_EQ(c.limits.memory_budget, 0u);
  EXPECT_EQ(c.limits.max_upload_bytes, 1ull << 30);
  EXPECT_EQ(c.limits.upload_memory, 64ull << 20);
  EXPECT_EQ(c.limits.max_input_bytes, 16ull << 20);
  EXPECT_EQ(c.limits.max_connections, 512u);
  EXPECT_EQ(c.limits.header_timeout_ms, 10000u);
  EXPECT_EQ(c.limits.idle_timeout_ms, 60000u);
  EXPECT_EQ(c.timeline.format, "csv");
  EXPECT_EQ(c.timeline.path, "");
  ASSERT_EQ(c.circuits.size(), 1u);
  EXPECT_EQ(c.circuits[0].zkey, path("keys/a.zkey"));  // resolved against the config's directory
  EXPECT_EQ(c.circuits[0].r1cs, "");
  EXPECT_EQ(c.circuits[0].max_partitions, 16u);
  EXPECT_EQ(c.circuits[0].witness_generator, "");
  EXPECT_TRUE(c.daemon.input_dirs.empty());  // no path submissions unless configured
  EXPECT_EQ(c.synthesis.witness_timeout_s, 600u);
  EXPECT_EQ(c.daemon.max_client_priority, "high");  // critical is for operators
  EXPECT_EQ(c.synthesis.witness_engine, "program");
  EXPECT_EQ(c.synthesis.abc, "gpu");
  EXPECT_TRUE(c.gpu.verify);  // never report a proof that does not verify
  EXPECT_EQ(c.source, path("cuzk.toml"));
}

TEST_F(ConfigTest, EveryKeySetIsReadBack) {
  const std::string text = R"(
[daemon]
instance = "node-2_b"
state_dir = "state"
socket = "/run/cuzk2/api.sock"
socket_mode = "0600"
tcp = "127.0.0.1:9820"
tcp_allow_remote = false
token_file = "token.txt"
log_level = "debug"
max_client_priority = "critical"
heartbeat_interval_ms = 500
heartbeat_timeout_ms = 2000
shutdown_grace_ms = 5000
input_dirs = ["in/../in", "KEYDIR", "link_to_in"]

[synthesis]
workers = 2
cpus = ["0-3", "4-5,7"]
threads = 3
witness_timeout_s = 0
witness_engine = "native"
abc = "cpu"

[gpu]
backend = "cuda"
devices = [1, 0]
slots = 4
cpus = ["8", "9-10"]
threads = 2
verify = false

[[circuits]]
name = "a"
zkey = "keys/a.zkey"
r1cs = "keys/a.r1cs"
max_partitions = 10
witness_generator = "gen/a_cpp"

[[circuits]]
name = "porep.c2-32G"
zkey = "KEYDIR/b.zkey"

[limits]
memory_budget = "64GiB"
upload_memory = "8MiB"
max_input_bytes = "2MiB"
restart_backoff_initial_ms = 200
restart_backoff_max_ms = 200
restart_intensity = 3
restart_period_s = 10
max_queued_jobs = 7
max_upload_bytes = 1048576
max_connections = 9
header_timeout_ms = 1500
idle_timeout_ms = 2500

[timeline]
enabled = false
path = "logs/tl.log"
format = "csv"
also_stderr = true
)";
  std::string t = text;
  t.replace(t.find("KEYDIR"), 6, path("keys"));
  t.replace(t.find("KEYDIR"), 6, path("keys"));
  fs::create_directories(dir / "in");
  fs::create_directories(dir / "gen/a_cpp");
  fs::create_directory_symlink(dir / "in", dir / "link_to_in");
  Config c = parse(t);
  EXPECT_EQ(c.daemon.instance, "node-2_b");
  EXPECT_EQ(c.daemon.state_dir, path("state"));
  EXPECT_EQ(c.daemon.socket, "/run/cuzk2/api.sock");
  EXPECT_EQ(c.daemon.socket_mode, 0600u);
  EXPECT_EQ(c.daemon.tcp, "127.0.0.1:9820");
  EXPECT_EQ(c.daemon.token_file, path("token.txt"));
  EXPECT_EQ(c.daemon.token, "s3cret-token");  // read at load, newline stripped
  EXPECT_EQ(c.daemon.log_level, "debug");
  EXPECT_EQ(c.daemon.max_client_priority, "critical");
  EXPECT_EQ(c.daemon.heartbeat_interval_ms, 500u);
  EXPECT_EQ(c.daemon.heartbeat_timeout_ms, 2000u);
  EXPECT_EQ(c.daemon.shutdown_grace_ms, 5000u);
  // Absolute and canonical: ".." and symlinks resolved, so requests' resolved paths compare with them.
  const std::string in = fs::canonical(dir / "in").string();
  EXPECT_EQ(c.daemon.input_dirs, (std::vector<std::string>{in, fs::canonical(dir / "keys").string(), in}));
  EXPECT_EQ(c.synthesis.witness_timeout_s, 0u);
  EXPECT_EQ(c.synthesis.witness_engine, "native");
  EXPECT_EQ(c.synthesis.abc, "cpu");
  EXPECT_EQ(c.synthesis.workers, 2u);
  ASSERT_EQ(c.synthesis.cpus.size(), 2u);
  EXPECT_EQ(c.synthesis.cpus[0].cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(c.synthesis.cpus[1].cpus, (std::vector<int>{4, 5, 7}));
  EXPECT_EQ(c.synthesis.cpus[1].text, "4-5,7");
  EXPECT_EQ(c.synthesis.threads, 3u);
  EXPECT_EQ(c.gpu.backend, "cuda");
  EXPECT_EQ(c.gpu.devices, (std::vector<int>{1, 0}));
  EXPECT_EQ(c.gpu.slots, 4u);
  ASSERT_EQ(c.gpu.cpus.size(), 2u);
  EXPECT_EQ(c.gpu.cpus[1].cpus, (std::vector<int>{9, 10}));
  EXPECT_EQ(c.gpu.threads, 2u);
  EXPECT_FALSE(c.gpu.verify);
  ASSERT_EQ(c.circuits.size(), 2u);
  EXPECT_EQ(c.circuits[0].r1cs, path("keys/a.r1cs"));
  EXPECT_EQ(c.circuits[0].witness_generator, path("gen/a_cpp"));
  EXPECT_EQ(c.circuits[1].witness_generator, "");
  EXPECT_EQ(c.circuits[0].max_partitions, 10u);
  EXPECT_EQ(c.circuits[1].name, "porep.c2-32G");
  EXPECT_EQ(c.circuits[1].zkey, path("keys/b.zkey"));
  EXPECT_EQ(c.limits.memory_budget, 64ull << 30);
  EXPECT_EQ(c.limits.upload_memory, 8ull << 20);
  EXPECT_EQ(c.limits.max_input_bytes, 2ull << 20);
  EXPECT_EQ(c.limits.restart_backoff_initial_ms, 200u);
  EXPECT_EQ(c.limits.restart_backoff_max_ms, 200u);
  EXPECT_EQ(c.limits.restart_intensity, 3u);
  EXPECT_EQ(c.limits.restart_period_s, 10u);
  EXPECT_EQ(c.limits.max_queued_jobs, 7u);
  EXPECT_EQ(c.limits.max_upload_bytes, 1048576u);
  EXPECT_EQ(c.limits.max_connections, 9u);
  EXPECT_EQ(c.limits.header_timeout_ms, 1500u);
  EXPECT_EQ(c.limits.idle_timeout_ms, 2500u);
  EXPECT_FALSE(c.timeline.enabled);
  EXPECT_EQ(c.timeline.path, path("logs/tl.log"));
  EXPECT_TRUE(c.timeline.also_stderr);

  ASSERT_NE(c.find_circuit("porep.c2-32G"), nullptr);
  EXPECT_EQ(c.find_circuit("porep.c2-32G")->zkey, path("keys/b.zkey"));
  EXPECT_EQ(c.find_circuit("a"), &c.circuits[0]);
  EXPECT_EQ(c.find_circuit("nope"), nullptr);
}

TEST_F(ConfigTest, LoadConfigResolvesPathsAgainstTheFilesDirectory) {
  write("etc/cuzk.toml", "[daemon]\nstate_dir = \"../var\"\n[[circuits]]\nname = \"a\"\nzkey = \"../keys/a.zkey\"\n");
  // Load from another working directory, through a relative path, to show the file's directory wins.
  fs::path old = fs::current_path();
  fs::current_path(dir / "keys");
  Config c = load_config("../etc/cuzk.toml");
  fs::current_path(old);
  EXPECT_EQ(c.circuits[0].zkey, path("keys/a.zkey"));
  EXPECT_EQ(c.daemon.state_dir, path("var"));
  EXPECT_EQ(c.source, path("etc/cuzk.toml"));
}

TEST_F(ConfigTest, MissingFileIsAConfigError) {
  try {
    load_config(path("nope.toml"));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.toml"), std::string::npos) << e.what();
  }
}

TEST_F(ConfigTest, SyntaxErrorReportsLineAndColumn) {
  ConfigError e = error_of("[daemon]\ninstance = \"x\"\nlog_level = info\n");
  EXPECT_EQ(e.key, "");
  EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("column"), std::string::npos) << e.what();
}

TEST_F(ConfigTest, UnknownSectionsAndKeysAreErrors) {
  EXPECT_CONFIG_ERROR(minimal("[deamon]\n"), "deamon", "did you mean \"daemon\"");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nsocet = \"/x\"\n"), "daemon.socet", "did you mean \"socket\"");
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nworker = 2\n"), "synthesis.worker", "unknown key");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nbackends = \"cpu\"\n"), "gpu.backends", "unknown key");
  EXPECT_CONFIG_ERROR(minimal("[limits]\nfoo = 1\n"), "limits.foo", "unknown key");
  EXPECT_CONFIG_ERROR(minimal("[timeline]\nformats = \"csv\"\n"), "timeline.formats", "unknown key");
  EXPECT_CONFIG_ERROR(minimal() + "[[circuits]]\nname = \"b\"\nzkey = \"keys/b.zkey\"\nzky = \"x\"\n",
                      "circuits[1].zky", "did you mean \"zkey\"");
  EXPECT_CONFIG_ERROR(minimal("top = 1\n"), "top", "unknown section");
  // Unknown keys are reported even when another value in the table is also bad.
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nworkers = 0\nthreds = 1\n"), "synthesis.threds", "unknown key");
}

TEST_F(ConfigTest, TypesAreChecked) {
  EXPECT_CONFIG_ERROR(minimal("daemon = 3\n"), "daemon", "must be a table");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ninstance = 3\n"), "daemon.instance", "must be a string, not an integer");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntcp_allow_remote = \"yes\"\n"), "daemon.tcp_allow_remote", "must be a boolean");
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nworkers = \"2\"\n"), "synthesis.workers", "must be an integer, not a string");
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nworkers = 2.0\n"), "synthesis.workers", "must be an integer, not a float");
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\ncpus = \"0-3\"\n"), "synthesis.cpus", "must be an array");
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nworkers = 2\ncpus = [\"0-3\", 4]\n"), "synthesis.cpus[1]",
                      "must be a CPU set string");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\ndevices = [0, \"1\"]\n"), "gpu.devices[1]", "must be an integer");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nverify = 1\n"), "gpu.verify", "must be a boolean");
  EXPECT_CONFIG_ERROR(minimal("[limits]\nmemory_budget = 1.5\n"), "limits.memory_budget", "byte count");
  EXPECT_CONFIG_ERROR(minimal("[timeline]\npath = false\n"), "timeline.path", "must be a string");
  EXPECT_CONFIG_ERROR("[circuits]\nname = \"a\"\n", "circuits", "array of tables");
  EXPECT_CONFIG_ERROR("circuits = [\"a\"]\n", "circuits", "array of tables");
}

TEST_F(ConfigTest, DaemonValuesAreChecked) {
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ninstance = \"a b\"\n"), "daemon.instance", "A-Z a-z 0-9 _ -");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ninstance = \"\"\n"), "daemon.instance", "1 to 32");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ninstance = \"" + std::string(33, 'x') + "\"\n"), "daemon.instance", "1 to 32");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nstate_dir = \"\"\n"), "daemon.state_dir", "must not be empty");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nsocket = \"/" + std::string(120, 's') + "\"\n"), "daemon.socket", "107");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nsocket_mode = \"660x\"\n"), "daemon.socket_mode", "octal");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nsocket_mode = \"0668\"\n"), "daemon.socket_mode", "octal");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nsocket_mode = \"4660\"\n"), "daemon.socket_mode", "0777");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nsocket_mode = 660\n"), "daemon.socket_mode", "decimal");
  EXPECT_EQ(parse(minimal("[daemon]\nsocket_mode = 0o640\n")).daemon.socket_mode, 0640u);
  EXPECT_EQ(parse(minimal("[daemon]\nsocket_mode = \"600\"\n")).daemon.socket_mode, 0600u);
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nlog_level = \"verbose\"\n"), "daemon.log_level", "one of");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nmax_client_priority = \"urgent\"\n"), "daemon.max_client_priority",
                      "one of critical, high, normal, low");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nheartbeat_interval_ms = 1000\nheartbeat_timeout_ms = 1000\n"),
                      "daemon.heartbeat_timeout_ms", "greater than daemon.heartbeat_interval_ms");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nheartbeat_interval_ms = 20000\n"), "daemon.heartbeat_timeout_ms",
                      "greater than");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nheartbeat_interval_ms = -1\n"), "daemon.heartbeat_interval_ms", "between");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nshutdown_grace_ms = 99999999999\n"), "daemon.shutdown_grace_ms", "between");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ninput_dirs = \"keys\"\n"), "daemon.input_dirs", "must be an array");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ninput_dirs = [\"keys\", \"nope\"]\n"), "daemon.input_dirs[1]",
                      "does not exist");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ninput_dirs = [\"keys/a.zkey\"]\n"), "daemon.input_dirs[0]",
                      "is not a directory");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ninput_dirs = [\"\"]\n"), "daemon.input_dirs[0]", "must not be empty");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ninput_dirs = [3]\n"), "daemon.input_dirs[0]", "directory path");
  // The state directory (job store, uploads) is never readable through a request.
  fs::create_directories(dir / "state/in");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nstate_dir = \"state\"\ninput_dirs = [\"keys\", \".\"]\n"),
                      "daemon.input_dirs[1]", "overlaps daemon.state_dir");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nstate_dir = \"state\"\ninput_dirs = [\"state/in\"]\n"),
                      "daemon.input_dirs[0]", "overlaps daemon.state_dir");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nstate_dir = \"state/new\"\ninput_dirs = [\"state\"]\n"),
                      "daemon.input_dirs[0]", "overlaps daemon.state_dir");
}

TEST_F(ConfigTest, TcpNeedsATokenAndLoopback) {
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntcp = \"127.0.0.1:9000\"\n"), "daemon.tcp", "token");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntcp = \"0.0.0.0:9000\"\ntoken = \"t\"\n"), "daemon.tcp", "tcp_allow_remote");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntcp = \"127.0.0.1\"\ntoken = \"t\"\n"), "daemon.tcp", "host:port");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntcp = \"127.0.0.1:99999\"\ntoken = \"t\"\n"), "daemon.tcp", "port");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntcp = \"::1:80\"\ntoken = \"t\"\n"), "daemon.tcp", "brackets");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntcp = \":80\"\ntoken = \"t\"\n"), "daemon.tcp", "host is empty");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntoken = \"has space\"\n"), "daemon.token", "without spaces");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntoken = \"a\"\ntoken_file = \"token.txt\"\n"), "daemon.token_file", "not both");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntoken_file = \"missing.txt\"\n"), "daemon.token_file", "cannot read");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntoken_file = \"empty_token.txt\"\n"), "daemon.token_file", "empty");
  // A device is refused at once: /dev/zero used to be read without end (the start hung while memory
  // grew); a FIFO would have blocked it.
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntoken_file = \"/dev/zero\"\n"), "daemon.token_file", "not a regular file");
  std::ofstream(dir / "long_token.txt") << std::string(5000, 'x');
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntoken_file = \"long_token.txt\"\n"), "daemon.token_file", "longer than 4096");
  EXPECT_EQ(parse(minimal("[daemon]\ntcp = \"[::1]:9000\"\ntoken = \"t\"\n")).daemon.tcp, "[::1]:9000");
  EXPECT_EQ(parse(minimal("[daemon]\ntcp = \"localhost:9000\"\ntoken_file = \"token.txt\"\n")).daemon.token,
            "s3cret-token");
  EXPECT_EQ(parse(minimal("[daemon]\ntcp = \"0.0.0.0:9000\"\ntcp_allow_remote = true\ntoken = \"t\"\n")).daemon.tcp,
            "0.0.0.0:9000");
}

TEST_F(ConfigTest, SynthesisAndGpuValuesAreChecked) {
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nworkers = 0\n"), "synthesis.workers", "between 1 and");
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nworkers = 2\ncpus = [\"0-3\"]\n"), "synthesis.cpus",
                      "one CPU set per worker");
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nworkers = 2\ncpus = [\"0-3\", \"4-\"]\n"), "synthesis.cpus[1]",
                      "not a CPU number");
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nworkers = 2\ncpus = [\"0-3\", \"\"]\n"), "synthesis.cpus[1]", "empty");
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nthreads = -2\n"), "synthesis.threads", "between 0 and");
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nwitness_timeout_s = -1\n"), "synthesis.witness_timeout_s", "between 0 and");
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nwitness_engine = \"wasm\"\n"), "synthesis.witness_engine",
                      "\"program\" or \"native\"");
  EXPECT_CONFIG_ERROR(minimal("[synthesis]\nabc = \"tpu\"\n"), "synthesis.abc", "\"cpu\" or \"gpu\"");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nverify = 1\n"), "gpu.verify", "boolean");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nbackend = \"opencl\"\n"), "gpu.backend", "\"cuda\" or \"cpu\"");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\ndevices = []\n"), "gpu.devices", "at least one device");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\ndevices = [0, 1, 0]\n"), "gpu.devices[2]", "listed twice");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\ndevices = [-1]\n"), "gpu.devices[0]", "between 0 and");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nslots = 0\n"), "gpu.slots", "between 1 and");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\ndevices = [0, 1]\ncpus = [\"0\"]\n"), "gpu.cpus", "one CPU set per device");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\ncpus = [\"3-1\"]\n"), "gpu.cpus[0]", "backwards");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nprecompute = \"all\"\n"), "gpu.precompute", "comma-separated list");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nprecompute = \"a,h,a\"\n"), "gpu.precompute", "twice");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nprecompute = \"a,,h\"\n"), "gpu.precompute", "comma-separated list");
  EXPECT_EQ(parse(minimal("[gpu]\nprecompute = \"h,b2\"\n")).gpu.precompute, "h,b2");
  EXPECT_EQ(parse(minimal("[gpu]\nprecompute = \"off\"\n")).gpu.precompute, "off");
  EXPECT_EQ(parse(minimal("")).gpu.precompute, "auto");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nmsm_window = 7\n"), "gpu.msm_window", "0 (automatic) or 8..22");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nmsm_window = 23\n"), "gpu.msm_window", "between 0 and 22");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nntt_passes = 9\n"), "gpu.ntt_passes", "between 0 and 8");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nprecompute_headroom_mb = -1\n"), "gpu.precompute_headroom_mb", "between 0 and");
  Config t = parse(minimal("[gpu]\nmsm_window = 20\nntt_passes = 4\nprecompute_headroom_mb = 512\n"));
  EXPECT_EQ(t.gpu.msm_window, 20u);
  EXPECT_EQ(t.gpu.ntt_passes, 4u);
  EXPECT_EQ(t.gpu.precompute_headroom_mb, 512u);
  EXPECT_EQ(parse(minimal("")).gpu.msm_window, 0u);
  // cpus = [] is "no pinning", whatever the number of workers.
  EXPECT_TRUE(parse(minimal("[synthesis]\nworkers = 3\ncpus = []\n")).synthesis.cpus.empty());
}

TEST_F(ConfigTest, CircuitsAreChecked) {
  EXPECT_CONFIG_ERROR("", "circuits", "at least one [[circuits]]");
  EXPECT_CONFIG_ERROR("[daemon]\ninstance = \"x\"\n", "circuits", "at least one");
  EXPECT_CONFIG_ERROR("circuits = []\n", "circuits", "at least one");
  EXPECT_CONFIG_ERROR("[[circuits]]\nzkey = \"keys/a.zkey\"\n", "circuits[0].name", "required");
  EXPECT_CONFIG_ERROR("[[circuits]]\nname = \"a\"\n", "circuits[0].zkey", "required");
  EXPECT_CONFIG_ERROR("[[circuits]]\nname = \"a/b\"\nzkey = \"keys/a.zkey\"\n", "circuits[0].name", "A-Z a-z 0-9 _ . -");
  EXPECT_CONFIG_ERROR(minimal() + "[[circuits]]\nname = \"a\"\nzkey = \"keys/b.zkey\"\n", "circuits[1].name",
                      "duplicate circuit name \"a\" (also circuits[0])");
  EXPECT_CONFIG_ERROR("[[circuits]]\nname = \"a\"\nzkey = \"keys/missing.zkey\"\n", "circuits[0].zkey",
                      "does not exist");
  EXPECT_CONFIG_ERROR("[[circuits]]\nname = \"a\"\nzkey = \"keys\"\n", "circuits[0].zkey", "not a regular file");
  EXPECT_CONFIG_ERROR("[[circuits]]\nname = \"a\"\nzkey = \"keys/not_a_key.zkey\"\n", "circuits[0].zkey",
                      "not a zkey file");
  EXPECT_CONFIG_ERROR(minimal() + "[[circuits]]\nname = \"b\"\nzkey = \"keys/b.zkey\"\nr1cs = \"keys/b.r1cs\"\n",
                      "circuits[1].r1cs", "does not exist");
  EXPECT_CONFIG_ERROR("[[circuits]]\nname = \"a\"\nzkey = \"keys/a.zkey\"\nr1cs = \"keys/b.zkey\"\n",
                      "circuits[0].r1cs", "not a r1cs file");
  EXPECT_CONFIG_ERROR("[[circuits]]\nname = \"a\"\nzkey = \"keys/a.zkey\"\nmax_partitions = 0\n",
                      "circuits[0].max_partitions", "between 1 and");
  EXPECT_CONFIG_ERROR("[[circuits]]\nname = \"a\"\nzkey = \"keys/a.zkey\"\nwitness_generator = \"gen/nope_cpp\"\n",
                      "circuits[0].witness_generator", "does not exist");
  EXPECT_CONFIG_ERROR(minimal() + "[[circuits]]\nname = \"b\"\nzkey = \"keys/b.zkey\"\nwitness_generator = \"keys/b.zkey\"\n",
                      "circuits[1].witness_generator", "neither a directory nor a WebAssembly module");
  // circom's .wasm is a generator too.
  write("gen/b.wasm", std::string("\0asm\1\0\0\0", 8));
  Config c = parse(minimal() + "[[circuits]]\nname = \"b\"\nzkey = \"keys/b.zkey\"\nwitness_generator = \"gen/b.wasm\"\n");
  EXPECT_EQ(c.circuits[1].witness_generator, path("gen/b.wasm"));
  // The zkey must be readable by the daemon's user; root reads everything, so only check as non-root.
  if (geteuid() != 0) {
    fs::permissions(dir / "keys/b.zkey", fs::perms::none);
    EXPECT_CONFIG_ERROR("[[circuits]]\nname = \"a\"\nzkey = \"keys/b.zkey\"\n", "circuits[0].zkey", "cannot read");
  }
}

TEST_F(ConfigTest, AdminTokenAndKeyDirsAreChecked) {
  Config c = parse(minimal("[daemon]\nadmin_token_file = \"token.txt\"\nkey_dirs = [\"keys\"]\n"));
  EXPECT_EQ(c.daemon.admin_token, "s3cret-token");
  EXPECT_EQ(c.daemon.key_dirs, std::vector<std::string>{fs::canonical(dir / "keys").string()});
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nadmin_token = \"a\"\nadmin_token_file = \"token.txt\"\n"),
                      "daemon.admin_token_file", "not both");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nadmin_token = \"has space\"\n"), "daemon.admin_token", "without spaces");
  // The clients' token must not make its holders operators.
  EXPECT_CONFIG_ERROR(minimal("[daemon]\ntoken = \"same\"\nadmin_token = \"same\"\n"), "daemon.admin_token",
                      "must differ");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nkey_dirs = [\"nope\"]\n"), "daemon.key_dirs[0]", "does not exist");
  // Room in the slot rings for circuits to come: any count of values, a power-of-two domain.
  Config r = parse(minimal("[gpu]\nslot_vars = 5000000\nslot_domain = 4194304\n"));
  EXPECT_EQ(r.gpu.slot_vars, 5000000u);
  EXPECT_EQ(r.gpu.slot_domain, 4194304u);
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nslot_domain = 3000000\n"), "gpu.slot_domain", "power of two");
  EXPECT_CONFIG_ERROR(minimal("[gpu]\nslot_domain = 536870912\n"), "gpu.slot_domain", "between 0 and");
  EXPECT_CONFIG_ERROR(minimal("[daemon]\nstate_dir = \"keys/state\"\nkey_dirs = [\"keys\"]\n"), "daemon.key_dirs[0]",
                      "overlaps daemon.state_dir");
}

// POST /v1/circuits bodies: the keys of a [[circuits]] entry, checked the same way, named alone,
// and every file inside daemon.key_dirs.
TEST_F(ConfigTest, ACircuitFromJsonIsCheckedLikeTheFilesEntries) {
  using nlohmann::json;
  const std::vector<std::string> dirs = {fs::canonical(dir / "keys").string()};
  const CircuitConfig c = circuit_from_json(
      json{{"name", "b"}, {"zkey", path("keys/b.zkey")}, {"r1cs", path("keys/a.r1cs")}, {"max_partitions", 4}}, dirs);
  EXPECT_EQ(c.name, "b");
  EXPECT_EQ(c.zkey, fs::canonical(path("keys/b.zkey")).string());
  EXPECT_EQ(c.r1cs, fs::canonical(path("keys/a.r1cs")).string());
  EXPECT_EQ(c.max_partitions, 4u);
  EXPECT_TRUE(c.runtime);
  EXPECT_FALSE(c.removed);
  // What the store keeps reads back the same.
  const CircuitConfig back = circuit_from_json(json::parse(circuit_json(c).dump()), dirs);
  EXPECT_EQ(back.name, c.name);
  EXPECT_EQ(back.zkey, c.zkey);
  EXPECT_EQ(back.r1cs, c.r1cs);
  EXPECT_EQ(back.max_partitions, c.max_partitions);
  auto error = [&](const json& body, const std::vector<std::string>& in = {}) -> std::string {
    try {
      circuit_from_json(body, in.empty() ? dirs : in);
    } catch (const OutsideKeyDirs& e) {
      return std::string("outside: ") + e.what();
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "<no error>";
  };
  EXPECT_EQ(error(json{{"zkey", path("keys/b.zkey")}}), "name: is required");
  EXPECT_EQ(error(json{{"name", "b"}, {"zkey", "keys/b.zkey"}}), "zkey: must be an absolute path, got \"keys/b.zkey\"");
  EXPECT_EQ(error(json{{"name", "b"}, {"zkey", path("keys/b.zkey")}, {"zkye", 1}}).rfind("zkye: unknown key", 0), 0u);
  EXPECT_EQ(error(json{{"name", "b"}, {"zkey", json::array()}}), "zkey: must be a string, not an array");
  EXPECT_EQ(error(json{{"name", "b"}, {"zkey", nullptr}}), "zkey: must not be null");
  EXPECT_EQ(error(json{{"name", "b"}, {"zkey", path("keys/missing.zkey")}}).rfind("zkey: cannot resolve", 0), 0u);
  EXPECT_NE(error(json{{"name", "b"}, {"zkey", path("keys/not_a_key.zkey")}}).find("not a zkey file"),
            std::string::npos);
  EXPECT_NE(error(json::array()).find("JSON object"), std::string::npos);
  // Outside the key folders, by its path or through a symlink: refused before the file is read,
  // and a path outside is not even looked up (a missing one is refused the same way).
  EXPECT_EQ(error(json{{"name", "b"}, {"zkey", path("token.txt")}}).rfind("outside: zkey: ", 0), 0u);
  EXPECT_EQ(error(json{{"name", "b"}, {"zkey", path("no/such.zkey")}}).rfind("outside: zkey: ", 0), 0u);
  EXPECT_EQ(error(json{{"name", "b"}, {"zkey", path("keys/../token.txt")}}).rfind("outside: zkey: ", 0), 0u);
  fs::create_symlink(dir / "token.txt", dir / "keys/link.zkey");
  EXPECT_EQ(error(json{{"name", "b"}, {"zkey", path("keys/link.zkey")}}).rfind("outside: zkey: ", 0), 0u);
  EXPECT_EQ(error(json{{"name", "b"}, {"zkey", path("keys/b.zkey")}, {"witness_generator", dir.string()}})
                .rfind("outside: witness_generator: ", 0),
            0u);
  try {
    circuit_from_json(json{{"name", "b"}, {"zkey", path("keys/b.zkey")}}, {});
    ADD_FAILURE() << "no key_dirs took a circuit";
  } catch (const OutsideKeyDirs& e) {
    EXPECT_NE(std::string(e.what()).find("none is set"), std::string::npos);
  }
}

// The workers learn runtime circuits from <state_dir>/circuits.toml, at the supervisor's indices.
TEST_F(ConfigTest, RuntimeCircuitsReachTheWorkersAtTheSameIndices) {
  Config sup = parse(minimal("[daemon]\nstate_dir = \"state\"\n"));
  fs::create_directories(sup.daemon.state_dir);
  Config worker = sup;
  EXPECT_EQ(load_runtime_circuits(worker), 0u);  // no file yet
  const std::vector<std::string> dirs = {fs::canonical(dir / "keys").string()};
  CircuitConfig b = circuit_from_json(nlohmann::json{{"name", "b"}, {"zkey", path("keys/b.zkey")}}, dirs);
  sup.circuits.push_back(b);
  sup.circuits.back().removed = true;  // removed ones keep their place
  b.witness_generator = path("keys");
  sup.circuits.push_back(b);           // the same name again, added after the removal
  write_runtime_circuits(sup);
  EXPECT_EQ(load_runtime_circuits(worker), 2u);
  ASSERT_EQ(worker.circuits.size(), 3u);
  EXPECT_FALSE(worker.circuits[0].runtime);
  EXPECT_EQ(worker.circuits[2].name, "b");
  EXPECT_EQ(worker.circuits[2].witness_generator, path("keys"));  // as written
  EXPECT_TRUE(worker.circuits[2].runtime);
  EXPECT_EQ(load_runtime_circuits(worker), 0u);  // nothing new
  EXPECT_EQ(sup.find_circuit("b"), &sup.circuits[2]);
  // Files that went away after their circuit was added do not stop a worker learning the others.
  fs::remove(dir / "keys/b.zkey");
  sup.circuits.push_back(circuit_from_json(nlohmann::json{{"name", "c"}, {"zkey", path("keys/a.zkey")}}, dirs));
  write_runtime_circuits(sup);
  EXPECT_EQ(load_runtime_circuits(worker), 1u);
  EXPECT_EQ(worker.circuits.at(3).name, "c");
  // The same list again (a restart) writes nothing, so a full disk does not stop a start; none
  // leaves no file.
  struct stat before {}, after {};
  ASSERT_EQ(::stat(runtime_circuits_path(sup).c_str(), &before), 0);
  write_runtime_circuits(sup);
  ASSERT_EQ(::stat(runtime_circuits_path(sup).c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  sup.circuits.resize(1);
  write_runtime_circuits(sup);
  EXPECT_FALSE(fs::exists(runtime_circuits_path(sup)));
}

TEST_F(ConfigTest, LimitsAndTimelineAreChecked) {
  EXPECT_CONFIG_ERROR(minimal("[limits]\nmemory_budget = \"64 gigs\"\n"), "limits.memory_budget", "unknown unit");
  EXPECT_CONFIG_ERROR(minimal("[limits]\nmemory_budget = -1\n"), "limits.memory_budget", "negative");
  EXPECT_EQ(parse(minimal("[limits]\nmemory_budget = \"2TB\"\n")).limits.memory_budget, 2000000000000ull);
  EXPECT_EQ(parse(minimal("[limits]\nmemory_budget = 12345\n")).limits.memory_budget, 12345u);
  EXPECT_CONFIG_ERROR(minimal("[limits]\nrestart_backoff_initial_ms = 5000\nrestart_backoff_max_ms = 1000\n"),
                      "limits.restart_backoff_initial_ms", "restart_backoff_max_ms");
  EXPECT_CONFIG_ERROR(minimal("[limits]\nrestart_backoff_max_ms = 10\n"), "limits.restart_backoff_initial_ms",
                      "not be greater");
  EXPECT_CONFIG_ERROR(minimal("[limits]\nrestart_intensity = 0\n"), "limits.restart_intensity", "between 1 and");
  EXPECT_CONFIG_ERROR(minimal("[limits]\nrestart_period_s = 0\n"), "limits.restart_period_s", "between 1 and");
  EXPECT_CONFIG_ERROR(minimal("[limits]\nmax_queued_jobs = 0\n"), "limits.max_queued_jobs", "between 1 and");
  EXPECT_CONFIG_ERROR(minimal("[limits]\nmax_upload_bytes = 0\n"), "limits.max_upload_bytes", "greater than 0");
  EXPECT_CONFIG_ERROR(minimal("[limits]\nmax_input_bytes = 0\n"), "limits.max_input_bytes", "greater than 0");
  EXPECT_CONFIG_ERROR(minimal("[limits]\nmax_connections = 0\n"), "limits.max_connections", "between 1 and");
  EXPECT_CONFIG_ERROR(minimal("[limits]\nheader_timeout_ms = -1\n"), "limits.header_timeout_ms", "between 0 and");
  EXPECT_CONFIG_ERROR(minimal("[limits]\nidle_timeout_ms = \"1m\"\n"), "limits.idle_timeout_ms", "integer");
  EXPECT_CONFIG_ERROR(minimal("[timeline]\nformat = \"json\"\n"), "timeline.format", "\"csv\"");
}

// [store]: SQLite unless a PostgreSQL URI is given; the node's name and the lease are checked.
TEST_F(ConfigTest, StoreIsChecked) {
  const Config d = parse(minimal());
  EXPECT_EQ(d.store.url, "");
  EXPECT_EQ(d.store.node_id, "");
  EXPECT_EQ(d.store.lease_ms, 30000u);
  EXPECT_EQ(d.store.poll_ms, 500u);
  const Config c = parse(minimal("[store]\nurl = \"postgresql://cuzk@db/cuzk\"\nnode_id = \"gpu-7/a\"\n"
                                 "lease_ms = 5000\npoll_ms = 50\n"));
  EXPECT_EQ(c.store.url, "postgresql://cuzk@db/cuzk");
  EXPECT_EQ(c.store.node_id, "gpu-7/a");
  EXPECT_EQ(c.store.lease_ms, 5000u);
  EXPECT_EQ(c.store.poll_ms, 50u);
  EXPECT_CONFIG_ERROR(minimal("[store]\nurl = \"mysql://x\"\n"), "store.url", "PostgreSQL URI");
  EXPECT_CONFIG_ERROR(minimal("[store]\nnode_id = \"a b\"\n"), "store.node_id", "1 to 128 characters");
  EXPECT_CONFIG_ERROR(minimal("[store]\nlease_ms = 100\n"), "store.lease_ms", "between 1000 and");
  EXPECT_CONFIG_ERROR(minimal("[store]\npoll = 1\n"), "store.poll", "unknown key");
}

TEST_F(ConfigTest, ErrorsCarryTheLine) {
  ConfigError e = error_of(minimal("[gpu]\n\n\nbackend = \"gpu\"\n"));
  EXPECT_EQ(e.key, "gpu.backend");
  EXPECT_NE(std::string(e.what()).find("(line 4)"), std::string::npos) << e.what();
}

TEST(CpuSet, Parses) {
  CpuSet s = parse_cpuset("0-3,8,10-11", "k");
  EXPECT_EQ(s.cpus, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(s.text, "0-3,8,10-11");
  EXPECT_EQ(parse_cpuset("5", "k").cpus, std::vector<int>{5});
  EXPECT_EQ(parse_cpuset("7,1-2,2", "k").cpus, (std::vector<int>{1, 2, 7}));  // sorted, de-duplicated
  EXPECT_EQ(parse_cpuset(" 0 - 1 , 4 ", "k").cpus, (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(parse_cpuset("3-3", "k").cpus, std::vector<int>{3});
  EXPECT_FALSE(parse_cpuset("0", "k").empty());
}

TEST(CpuSet, RejectsBadForms) {
  for (const char* bad : {"", " ", "a", "1-", "-1", "1,,2", ",1", "1,", "1-2-3", "3-1", "0x3", "1.5", "99999999",
                          "1024", "0-2000", "+1"}) {
    try {
      parse_cpuset(bad, "synthesis.cpus[0]");
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key, "synthesis.cpus[0]") << bad;
    }
  }
}

TEST(SlotNeeds, FollowTheWorkersPerDevice) {
  Config c;
  auto needs = [&](uint32_t workers, size_t devices) {
    c.synthesis.workers = workers;
    c.gpu.devices.resize(devices);
    SlotNeeds n = slot_needs(c);
    return std::make_pair(n.minimum, n.recommended);
  };
  EXPECT_EQ(needs(1, 1), std::make_pair(2u, 3u));  // the default 2 slots suffice for one worker
  EXPECT_EQ(needs(4, 1), std::make_pair(5u, 6u));
  EXPECT_EQ(needs(4, 2), std::make_pair(3u, 4u));
  EXPECT_EQ(needs(5, 2), std::make_pair(4u, 5u));  // one device gets three workers
  EXPECT_EQ(needs(1, 4), std::make_pair(2u, 3u));
  EXPECT_GE(Config{}.gpu.slots, slot_needs(Config{}).minimum);
}

TEST(Bytes, Parses) {
  EXPECT_EQ(parse_bytes("0", "k"), 0u);
  EXPECT_EQ(parse_bytes("1073741824", "k"), 1073741824u);
  EXPECT_EQ(parse_bytes("64GiB", "k"), 64ull << 30);
  EXPECT_EQ(parse_bytes("512MiB", "k"), 512ull << 20);
  EXPECT_EQ(parse_bytes("2TB", "k"), 2000000000000ull);
  EXPECT_EQ(parse_bytes("2TiB", "k"), 2ull << 40);
  EXPECT_EQ(parse_bytes("100B", "k"), 100u);
  EXPECT_EQ(parse_bytes("4 KiB", "k"), 4096u);
  EXPECT_EQ(parse_bytes("4kb", "k"), 4000u);
  EXPECT_EQ(parse_bytes("16G", "k"), 16ull << 30);
  EXPECT_EQ(parse_bytes("1.5GiB", "k"), 3ull << 29);
  EXPECT_EQ(parse_bytes("15PiB", "k"), 15ull << 50);
  EXPECT_EQ(parse_bytes("18446744073709551615", "k"), UINT64_MAX);
}

TEST(Bytes, RejectsBadForms) {
  for (const char* bad : {"", "GiB", "-1", "-1GiB", "12XB", "1.GiB", "1.5B", "1e9", "0x10", "18446744073709551616",
                          "20000PiB", "64 GiB extra", "1,5GiB"}) {
    try {
      parse_bytes(bad, "limits.memory_budget");
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key, "limits.memory_budget") << bad;
    }
  }
}

TEST(ValidateCpus, ChecksAgainstTheAffinityMask) {
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  int first = -1;
  for (int i = 0; i < CPU_SETSIZE && first < 0; ++i)
    if (CPU_ISSET(i, &mask)) first = i;
  ASSERT_GE(first, 0);
  Config c;
  c.synthesis.workers = 2;
  c.synthesis.cpus = {parse_cpuset(std::to_string(first), "x"), parse_cpuset(std::to_string(first), "x")};
  EXPECT_NO_THROW(validate_cpus(c));
  int missing = -1;
  for (int i = CPU_SETSIZE - 1; i >= 0 && missing < 0; --i)
    if (!CPU_ISSET(i, &mask)) missing = i;
  ASSERT_GE(missing, 0);
  c.gpu.cpus = {parse_cpuset(std::to_string(missing), "x")};
  try {
    validate_cpus(c);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key, "gpu.cpus[0]");
    EXPECT_NE(std::string(e.what()).find("not available"), std::string::npos) << e.what();
  }
}

// The shipped example parses (with its example zkey path pointed at the repository's merkle key),
// and documents every key the parser knows.
TEST(ExampleConfig, ParsesAndDocumentsEveryKey) {
  const std::string src = CUZK_SOURCE_DIR;
  std::ifstream f(src + "/config/cuzk.example.toml");
  ASSERT_TRUE(f) << "config/cuzk.example.toml is missing";
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  const std::string example_key = "/var/lib/cuzk/keys/merkle.zkey";
  size_t at = text.find(example_key);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, example_key.size(), src + "/examples/merkle/merkle.zkey");
  Config c;
  try {
    c = parse_config(text, src + "/config/cuzk.example.toml", src + "/config");
  } catch (const ConfigError& e) {
    FAIL() << e.what();
  }
  // The example sets every key to its default.
  Config d;
  EXPECT_EQ(c.daemon.instance, d.daemon.instance);
  EXPECT_EQ(c.daemon.state_dir, d.daemon.state_dir);
  EXPECT_EQ(c.daemon.socket, d.daemon.socket);
  EXPECT_EQ(c.daemon.socket_mode, d.daemon.socket_mode);
  EXPECT_EQ(c.daemon.heartbeat_interval_ms, d.daemon.heartbeat_interval_ms);
  EXPECT_EQ(c.daemon.heartbeat_timeout_ms, d.daemon.heartbeat_timeout_ms);
  EXPECT_EQ(c.daemon.shutdown_grace_ms, d.daemon.shutdown_grace_ms);
  EXPECT_EQ(c.daemon.max_client_priority, d.daemon.max_client_priority);
  EXPECT_EQ(c.synthesis.workers, d.synthesis.workers);
  EXPECT_EQ(c.gpu.backend, d.gpu.backend);
  EXPECT_EQ(c.gpu.devices, d.gpu.devices);
  EXPECT_EQ(c.gpu.slots, d.gpu.slots);
  EXPECT_EQ(c.circuits.at(0).max_partitions, CircuitConfig{}.max_partitions);
  EXPECT_EQ(c.limits.memory_budget, d.limits.memory_budget);
  EXPECT_EQ(c.limits.restart_backoff_initial_ms, d.limits.restart_backoff_initial_ms);
  EXPECT_EQ(c.limits.restart_backoff_max_ms, d.limits.restart_backoff_max_ms);
  EXPECT_EQ(c.limits.restart_intensity, d.limits.restart_intensity);
  EXPECT_EQ(c.limits.restart_period_s, d.limits.restart_period_s);
  EXPECT_EQ(c.limits.max_queued_jobs, d.limits.max_queued_jobs);
  EXPECT_EQ(c.limits.max_upload_bytes, d.limits.max_upload_bytes);
  EXPECT_EQ(c.limits.upload_memory, d.limits.upload_memory);
  EXPECT_EQ(c.limits.max_input_bytes, d.limits.max_input_bytes);
  EXPECT_EQ(c.limits.max_connections, d.limits.max_connections);
  EXPECT_EQ(c.limits.header_timeout_ms, d.limits.header_timeout_ms);
  EXPECT_EQ(c.limits.idle_timeout_ms, d.limits.idle_timeout_ms);
  EXPECT_EQ(c.timeline.enabled, d.timeline.enabled);
  EXPECT_EQ(c.daemon.input_dirs, d.daemon.input_dirs);
  EXPECT_EQ(c.synthesis.witness_timeout_s, d.synthesis.witness_timeout_s);
  EXPECT_EQ(c.gpu.verify, d.gpu.verify);
  EXPECT_EQ(c.circuits.at(0).witness_generator, CircuitConfig{}.witness_generator);

  // Every known key is written out (uncommented) in the example.
  toml::table root = toml::parse(ss.str());
  for (const std::string& k : known_keys()) {
    std::string path = k;
    size_t arr = path.find("[]");
    bool present;
    if (arr != std::string::npos) {
      const toml::array* a = root[path.substr(0, arr)].as_array();
      present = a && !a->empty() && a->get(0)->as_table()->contains(path.substr(arr + 3));
    } else {
      present = static_cast<bool>(root.at_path(path));
    }
    EXPECT_TRUE(present) << k << " is not in config/cuzk.example.toml";
  }
}

}  // namespace
