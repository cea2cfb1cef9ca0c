// What the artefact builds share (circom's C++ output and circom's .wasm alike): running the tools
// under their keepers (witness/tool.hpp) with their output in a log, waiting for each by its own
// pid, the objects shared between builds, and hashing what goes into a build.
#pragma once
#include <sys/resource.h>
#include <sys/types.h>
#include <xxhash.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "witness/build.hpp"
#include "witness/manifest.hpp"
#include "witness/scratch.hpp"

namespace cuzk::witness::build_tools {

std::string read_file(const std::filesystem::path& p);
std::string tail_of(const std::string& s, size_t n);

// Runs argv with stdout and stderr to out_fd, or appended to log, under a keeper (start_tool: it dies
// with this process; cpu_seconds as there); returns the keeper's pid (or throws WitnessError, naming
// the setup script that installs the tools).
pid_t spawn(const std::vector<std::string>& argv, int out_fd, rlim_t cpu_seconds = 0);
pid_t spawn(const std::vector<std::string>& argv, const std::string& log, rlim_t cpu_seconds = 0);
// Its exit status, 128 + the signal when killed.
int wait_for(pid_t pid);
// Output of a short command (a tool's version, for the cache keys); "" when it cannot run. It goes
// to a file in memory, which no folder keeps if this process is killed.
std::string command_output(const std::vector<std::string>& argv);

// The compile steps running at once, each waited for by its own pid: this code also runs inside the
// supervisor, whose workers are children of the same process, reaped by libuv. A waitpid(-1) here
// would take a worker's exit, and the supervisor would never learn that the worker died.
class Children {
 public:
  Children() = default;
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;
  ~Children();  // after an exception: the rest are still reaped, never left as zombies
  bool empty() const { return list_.empty(); }
  size_t size() const { return list_.size(); }
  void start(pid_t pid, size_t tag);
  // Waits until one of them exits and reaps that one alone: its tag and exit status (as wait_for).
  std::pair<size_t, int> wait_one();

 private:
  struct Child {
    pid_t pid;
    int fd;  // its pidfd, or -1
    size_t tag;
  };
  std::vector<Child> list_;
};

// One step of a build: a command and the log its output goes to. A step that is not optional stops
// the build when it fails; an optional one (the tracer's) leaves the rest to go on.
struct Step {
  std::vector<std::string> argv;
  std::string log;
  bool optional = false;
};
// Runs the steps, at most one per core at a time, each announced to log as "<what>: <tool> <source>".
// Returns the index of each step that failed. After a required step fails, or a tool cannot start
// (`cannot_start` says why), no more are started; those running are still waited for.
std::vector<size_t> run_steps(const std::vector<Step>& steps, const Log& log, const std::string& what,
                              std::string* cannot_start);

// The objects that builds share (a runtime compiled once per toolchain and sources) under
// <cache>/<key>. Unless they are all there, they are made in a scratch folder of this process's own
// (a ScratchDir: swept once this process is gone), which keep() renames into place once complete, so
// that a concurrent build never sees half of them; of two concurrent builds of the same key, the
// second rename fails and that build uses its own copy, which is removed with this object.
class SharedObjects {
 public:
  SharedObjects(const std::filesystem::path& cache, const std::string& key, std::vector<std::string> files);
  ~SharedObjects();
  SharedObjects(const SharedObjects&) = delete;
  SharedObjects& operator=(const SharedObjects&) = delete;
  bool hit() const { return hit_; }
  const std::filesystem::path& dir() const { return dir_; }  // where the objects are, or are to be made
  const std::filesystem::path& cached() const { return cached_; }
  void keep();

 private:
  bool complete(const std::filesystem::path& d) const;
  std::filesystem::path cached_, dir_;
  std::optional<ScratchDir> scratch_;
  std::vector<std::string> files_;
  bool hit_ = false;
};

// An XXH3-128 hash of length-prefixed parts and files, as 32 hex digits.
class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  void add(const std::string& part);
  // Files are hashed in blocks: a large circuit's .sym alone is hundreds of MB.
  void add_file(const std::filesystem::path& f);
  std::string hex() const;

 private:
  XXH3_state_t* st_;
};

// Signal names of the main inputs from circom's .sym ("id,witness,component,main.name[i]..."), for
// the signal ids in [lo, hi); the element index of arrays dropped ("in[0][2]" -> "in").
std::map<uint64_t, std::string> sym_names(const std::filesystem::path& sym, uint64_t lo, uint64_t hi);

// The manifest of the executable at <work>/generator, from its --describe output (`dat` is its
// argument), its inputs named from circom's .sym when there is one. `src` names the sources in errors.
Manifest describe(const std::string& src, const std::filesystem::path& work, const std::string& dat,
                  const std::string& circuit, const std::filesystem::path& sym, const std::string& key);

}  // namespace cuzk::witness::build_tools
