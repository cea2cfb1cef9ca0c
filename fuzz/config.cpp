// The daemon's TOML configuration, parsed from a string (toml++ compiled into the target, so that
// its parser is instrumented too). Relative paths resolve against a scratch directory that holds
// a zkey and an r1cs stub, a token file, a generator folder and an input directory, so that valid
// configurations get past the file checks. Invariants: every refusal is a ConfigError (never
// another exception or a crash), and an accepted configuration satisfies what the daemon relies on.
#include <fcntl.h>

#include <fstream>

#include "config/config.hpp"
#include "fuzz/fuzz_util.hpp"

using namespace cuzk;

static std::string g_dir;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A path in the configuration may name /dev/stdin: let it read nothing rather than wait.
  int fd = ::open("/dev/null", O_RDONLY);
  if (fd >= 0) ::dup2(fd, 0);
  g_dir = fuzz::scratch_dir();
  std::ofstream(g_dir + "/c.zkey") << "zkey";
  std::ofstream(g_dir + "/c.r1cs") << "r1cs";
  std::ofstream(g_dir + "/token") << "s3cret\n";
  std::filesystem::create_directories(g_dir + "/gen");
  std::filesystem::create_directories(g_dir + "/in");
  std::filesystem::create_directories(g_dir + "/state");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  config::Config c;
  try {
    c = config::parse_config(text, "fuzz.toml", g_dir);
  } catch (const config::ConfigError&) {
    return 0;
  }
  FUZZ_CHECK(!c.circuits.empty(), "a configuration without circuits was accepted");
  FUZZ_CHECK(c.synthesis.workers >= 1 && c.gpu.slots >= 1 && !c.gpu.devices.empty(), "zero workers, slots or devices");
  FUZZ_CHECK(c.synthesis.cpus.empty() || c.synthesis.cpus.size() == c.synthesis.workers, "synthesis.cpus count");
  FUZZ_CHECK(c.gpu.cpus.empty() || c.gpu.cpus.size() == c.gpu.devices.size(), "gpu.cpus count");
  FUZZ_CHECK(c.daemon.heartbeat_timeout_ms > c.daemon.heartbeat_interval_ms, "heartbeat timeout not above interval");
  FUZZ_CHECK(c.daemon.socket.size() <= 107, "a unix socket path longer than sun_path was accepted");
  FUZZ_CHECK(c.daemon.socket_mode <= 0777, "socket mode with special bits");
  FUZZ_CHECK(c.limits.max_upload_bytes > 0, "max_upload_bytes 0");
  FUZZ_CHECK(c.daemon.tcp.empty() || !c.daemon.token.empty(), "TCP without a token");
  for (const auto& set : c.synthesis.cpus)
    for (int cpu : set.cpus) FUZZ_CHECK(cpu >= 0 && cpu < CPU_SETSIZE, "a CPU outside cpu_set_t");
  for (const auto& cc : c.circuits) FUZZ_CHECK(c.find_circuit(cc.name) == &cc, "two circuits of one name");
  try {
    config::validate_cpus(c);
  } catch (const config::ConfigError&) {
  }
  config::SlotNeeds n = config::slot_needs(c);
  FUZZ_CHECK(n.minimum >= 2 && n.recommended == n.minimum + 1, "slot_needs");
  return 0;
}
