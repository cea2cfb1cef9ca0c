// Builds circom's C++ witness generator into an artefact, and keeps a cache of them keyed by a hash
// of everything that goes into the executable, beside a cache of the objects that every circuit on
// the same prime shares (circom's runtime, cuzk's driver and tracer).
#include "witness/build.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/pidfd.hpp"
#include "witness/driver_source.hpp"
#include "witness/file_lock.hpp"
#include "witness/scratch.hpp"
#include "witness/tool.hpp"

namespace cuzk::witness {

namespace fs = std::filesystem;

namespace {

// The flags every object is compiled with. circom's own Makefile uses -O3; -O2 builds large generated
// circuits markedly faster at about the same witness speed.
const std::vector<std::string> kCxxFlags = {"-std=c++17", "-O2", "-fno-strict-aliasing", "-w"};

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw WitnessError(p.string() + ": cannot read");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tail_of(const std::string& s, size_t n) { return s.size() > n ? "..." + s.substr(s.size() - n) : s; }

// Runs argv with stdout and stderr appended to log (witness/tool.hpp: it dies with this process);
// returns its keeper's pid (or throws).
pid_t spawn(const std::vector<std::string>& argv, int log_fd) {
  try {
    return start_tool(argv, log_fd);
  } catch (const WitnessError& e) {
    throw WitnessError(std::string(e.what()) + " (run scripts/setup.sh, which installs g++, nasm and GMP)");
  }
}
pid_t spawn(const std::vector<std::string>& argv, const std::string& log) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw WitnessError(log + ": cannot open: " + std::strerror(errno));
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close{fd};
  return spawn(argv, fd);
}

int wait_for(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// The compile steps running at once, each waited for by its own pid: this code also runs inside the
// supervisor, whose workers are children of the same process, reaped by libuv. A waitpid(-1) here
// would take a worker's exit, and the supervisor would never learn that the worker died.
class Children {
 public:
  Children() = default;
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;
  ~Children() {  // after an exception: the rest are still reaped, never left as zombies
    while (!empty()) wait_one();
  }
  bool empty() const { return list_.empty(); }
  size_t size() const { return list_.size(); }
  void start(pid_t pid, size_t tag) { list_.push_back({pid, open_pidfd(pid), tag}); }
  // Waits until one of them exits and reaps that one alone: its tag and exit status (as wait_for).
  std::pair<size_t, int> wait_one() {
    size_t i = 0;
    // Without pidfds (a kernel older than 5.3), the oldest is waited for first.
    if (std::all_of(list_.begin(), list_.end(), [](const Child& c) { return c.fd >= 0; })) {
      std::vector<pollfd> fds;
      for (const Child& c : list_) fds.push_back({c.fd, POLLIN, 0});
      while (::poll(fds.data(), fds.size(), -1) < 0 && errno == EINTR) {
      }
      while (i + 1 < fds.size() && !fds[i].revents) i++;
    }
    const Child c = list_[i];
    list_.erase(list_.begin() + std::ptrdiff_t(i));
    const int status = wait_for(c.pid);
    if (c.fd >= 0) ::close(c.fd);
    return {c.tag, status};
  }

 private:
  struct Child {
    pid_t pid;
    int fd;  // its pidfd, or -1
    size_t tag;
  };
  std::vector<Child> list_;
};

// Output of a short command (compiler versions for the cache key); "" when it cannot run. It goes
// to a file in memory, which no folder keeps if this process is killed.
std::string command_output(const std::vector<std::string>& argv) {
  const int fd = ::memfd_create("cuzk-tool-output", MFD_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  try {
    if (wait_for(spawn(argv, fd)) == 0) {
      char buf[4096];
      ssize_t n;
      for (off_t at = 0; (n = ::pread(fd, buf, sizeof buf, at)) > 0; at += n) out.append(buf, size_t(n));
    }
  } catch (const WitnessError&) {
  }
  ::close(fd);
  return out;
}

// The folder circom wrote: <name>.cpp + <name>.dat, and its runtime files.
struct Sources {
  fs::path dir;
  std::string name;
  fs::path sym;  // <name>.sym beside the folder, when circom was run with --sym
};

Sources find_sources(const std::string& src) {
  Sources s;
  std::error_code ec;
  s.dir = fs::canonical(src, ec);
  if (ec) throw WitnessError(src + ": " + ec.message());
  if (!fs::is_directory(s.dir)) throw WitnessError(src + ": not a directory (expected circom's <name>_cpp folder)");
  std::vector<std::string> dats;
  for (const auto& e : fs::directory_iterator(s.dir))
    if (e.path().extension() == ".dat") dats.push_back(e.path().stem().string());
  if (dats.size() != 1)
    throw WitnessError(src + ": expected exactly one <name>.dat (circom --c output), found " +
                       std::to_string(dats.size()));
  s.name = dats[0];
  const std::string needed[] = {s.name + ".cpp", "calcwit.cpp", "calcwit.hpp", "circom.hpp",
                                "fr.cpp",          "fr.hpp",      "fr.asm",      "main.cpp"};
  for (const std::string& f : needed)
    if (!fs::is_regular_file(s.dir / f)) throw WitnessError(src + ": missing " + f + " (not circom --c output?)");
  fs::path sym = s.dir.parent_path() / (s.name + ".sym");
  if (fs::is_regular_file(sym)) s.sym = sym;
  return s;
}

// The versions of the tools that make the objects, for the cache keys.
struct Tools {
  std::string gxx, nasm, binutils;  // binutils: nm and objcopy, which make the tracer's copy of the runtime
};
Tools toolchain() {
  return {command_output({"g++", "--version"}), command_output({"nasm", "-v"}), command_output({"objcopy", "--version"})};
}

// An XXH3-128 hash of length-prefixed parts and files, as 32 hex digits.
class Hasher {
 public:
  Hasher() : st_(XXH3_createState()) { XXH3_128bits_reset(st_); }
  ~Hasher() { XXH3_freeState(st_); }
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  void add(const std::string& part) {
    uint64_t n = part.size();
    XXH3_128bits_update(st_, &n, sizeof n);
    XXH3_128bits_update(st_, part.data(), part.size());
  }
  // Files are hashed in blocks: a large circuit's .sym alone is hundreds of MB.
  void add_file(const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    if (!in) throw WitnessError(f.string() + ": cannot read");
    uint64_t n = fs::file_size(f);
    XXH3_128bits_update(st_, &n, sizeof n);
    std::vector<char> buf(1 << 20);
    while (in.read(buf.data(), std::streamsize(buf.size())) || in.gcount() > 0)
      XXH3_128bits_update(st_, buf.data(), size_t(in.gcount()));
  }
  std::string hex() const {
    XXH128_hash_t h = XXH3_128bits_digest(st_);
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                  static_cast<unsigned long long>(h.low64));
    return buf;
  }

 private:
  XXH3_state_t* st_;
};

// The regular files of the source folder, sorted, but for circom's Makefile (unused).
std::vector<fs::path> source_files(const Sources& s) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(s.dir))
    if (e.is_regular_file() && e.path().filename() != "Makefile") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string key_of(const Sources& s, const Tools& tools) {
  Hasher h;
  for (const char* src : {kDriverSource, kTracerSource, kDriverIoSource, kOpsSource}) h.add(src);
  for (const std::string& f : kCxxFlags) h.add(f);
  h.add(tools.gxx);
  h.add(tools.nasm);
  for (const fs::path& f : source_files(s)) {
    h.add(f.filename().string());
    h.add_file(f);
  }
  if (s.sym.empty()) h.add(std::string());
  else h.add_file(s.sym);
  return h.hex();
}

// Signal names of the main inputs from circom's .sym ("id,witness,component,main.name[i]...").
std::map<uint64_t, std::string> sym_names(const fs::path& sym, uint64_t lo, uint64_t hi) {
  std::map<uint64_t, std::string> names;
  if (sym.empty()) return names;
  std::ifstream f(sym);
  std::string line;
  while (std::getline(f, line)) {
    size_t c1 = line.find(','), c2 = c1 == std::string::npos ? c1 : line.find(',', c1 + 1),
           c3 = c2 == std::string::npos ? c2 : line.find(',', c2 + 1);
    if (c3 == std::string::npos) continue;
    uint64_t id = std::strtoull(line.c_str(), nullptr, 10);
    if (id < lo || id >= hi) continue;
    std::string n = line.substr(c3 + 1);
    if (n.rfind("main.", 0) != 0) continue;
    n = n.substr(5);
    // The signal's own name: drop the element index of arrays ("in[0][2]" -> "in").
    while (!n.empty() && n.back() == ']') {
      size_t b = n.rfind('[');
      if (b == std::string::npos) break;
      n.erase(b);
    }
    names.emplace(id, n);
  }
  return names;
}

// The objects that every generator links beside its circuit.o: circom's runtime and cuzk's driver.
const char* const kRuntimeObjects[] = {"fr_asm.o", "calcwit.o", "fr.o", "circom_main.o", "driver.o"};
// The tracer's: cuzk's tracer, and circom's runtime again with its own functions renamed Fr_* -> Rl_*.
const char* const kTracerObjects[] = {"tracer.o", "rl_fr.o", "rl_fr_asm.o"};
// What the steps below make of the same sources with the same tools; changed whenever they change.
const char* const kRuntimeRecipe = "runtime 1: main.cpp -Dmain=cuzk_circom_generated_main, objcopy Fr_* Rl_*";

// The key of the runtime objects: every file of the source folder but the circuit's own <name>.cpp
// and <name>.dat (circom writes the same runtime files for every circuit on the same prime; any other
// file there could be a header they include), cuzk's driver and tracer, the flags and the tools.
std::string runtime_key(const Sources& s, const Tools& tools) {
  Hasher h;
  h.add(kRuntimeRecipe);
  for (const char* src : {kDriverSource, kTracerSource, kDriverIoSource, kOpsSource}) h.add(src);
  for (const std::string& f : kCxxFlags) h.add(f);
  for (const std::string* t : {&tools.gxx, &tools.nasm, &tools.binutils}) h.add(*t);
  for (const fs::path& f : source_files(s)) {
    const std::string n = f.filename().string();
    if (n == s.name + ".cpp" || n == s.name + ".dat") continue;
    h.add(n);
    h.add_file(f);
  }
  return h.hex();
}

bool complete_runtime(const fs::path& dir) {
  for (const char* o : kRuntimeObjects)
    if (!fs::is_regular_file(dir / o)) return false;
  for (const char* o : kTracerObjects)
    if (!fs::is_regular_file(dir / o)) return false;
  return true;
}

// The tracer's copy of circom's runtime in dir, from fr.o and fr_asm.o there: its own functions
// renamed Fr_* -> Rl_* (same length, so C++ names stay well-formed). Returns "" or why it failed.
std::string rename_runtime(const fs::path& dir) {
  const std::string logf = (dir / "tracer.log").string();
  const std::string syms = (dir / "fr_symbols.txt").string();
  if (wait_for(spawn({"nm", "-g", "--defined-only", (dir / "fr.o").string(), (dir / "fr_asm.o").string()}, syms)) != 0)
    return "nm failed: " + tail_of(read_file(syms), 500);
  std::ofstream map(dir / "fr_rename.txt");
  std::istringstream in(read_file(syms));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string addr, type, name;
    if (!(ls >> addr >> type >> name) || (type != "T" && type != "W")) continue;
    const size_t at = name.find("Fr_");
    if (at == std::string::npos) continue;
    std::string renamed = name;
    renamed.replace(at, 3, "Rl_");
    map << name << " " << renamed << "\n";
  }
  map.close();
  for (const char* o : {"fr.o", "fr_asm.o"})
    if (wait_for(spawn({"objcopy", "--redefine-syms=" + (dir / "fr_rename.txt").string(), (dir / o).string(),
                        (dir / (std::string("rl_") + o)).string()},
                       logf)) != 0)
      return "objcopy failed: " + tail_of(read_file(logf), 500);
  return "";
}

// The tracer: the same circuit objects linked with cuzk's tracer in place of circom's runtime, whose
// own functions stay in, renamed, for the tracer's concrete values. A tracer that cannot be made
// leaves the generator usable: the reason is kept in tracer.failed, and the circuit runs on the
// native generator.
void link_tracer(const Sources& s, const fs::path& work, const fs::path& rt, const std::string& not_made,
                 const Log& log) {
  const std::string logf = (work / "tracer.log").string();
  auto fail = [&](const std::string& why) {
    std::ofstream(work / "tracer.failed") << why << "\n";
    if (log) log("witness tracer: " + why);
  };
  if (!not_made.empty()) return fail(not_made);
  std::vector<std::string> link = {"g++", "-no-pie", "-o", (work / "tracer").string(), (work / "circuit.o").string()};
  for (const char* o : {"calcwit.o", "circom_main.o", "tracer.o", "rl_fr.o", "rl_fr_asm.o"})
    link.push_back((rt / o).string());
  for (const char* a : {"-static-libstdc++", "-static-libgcc", "-Wl,-Bstatic", "-lgmp", "-Wl,-Bdynamic", "-pthread"})
    link.push_back(a);
  if (log) log("witness tracer " + s.name + ": linking");
  if (wait_for(spawn(link, logf)) != 0) return fail("linking the tracer failed: " + tail_of(read_file(logf), 1000));
  fs::remove(work / "tracer.log");
}

// Compiles the circuit into work, and the runtime objects into <runtime_cache>/<key> unless they are
// there already (at most `jobs` steps at a time), then links the generator and the tracer. Runtime
// objects are made in a folder of this process's own and renamed into place once complete, so a
// concurrent build never sees half of them; of two concurrent builds of the same key, the second
// rename fails and that build links its own copy, then removes it. A runtime whose tracer could not
// be made is not kept: the next build tries again.
void compile(const Sources& s, const fs::path& work, const fs::path& runtime_cache, const Tools& tools,
             const Log& log) {
  const std::string logf = (work / "build.log").string();
  const std::string inc = "-I" + s.dir.string();
  const fs::path cached = runtime_cache / runtime_key(s, tools);
  const bool hit = complete_runtime(cached);
  fs::path rt = cached;
  std::optional<ScratchDir> scratch;  // the runtime folder of this build alone, removed on every way out
  auto cxx = [&](const std::string& src, const fs::path& obj, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"g++"};
    a.insert(a.end(), kCxxFlags.begin(), kCxxFlags.end());
    a.insert(a.end(), extra.begin(), extra.end());
    a.insert(a.end(), {inc, "-c", src, "-o", obj.string()});
    return a;
  };
  struct Step {
    std::vector<std::string> argv;
    std::string log;
  };
  std::vector<Step> steps = {{cxx((s.dir / (s.name + ".cpp")).string(), work / "circuit.o"), logf}};
  const size_t tracer_step = 6;
  if (hit) {
    if (log) log("witness generator " + s.name + ": circom's runtime and cuzk's driver from " + cached.string());
  } else {
    rt = scratch.emplace(runtime_cache, cached.filename().string()).path();
    for (const auto& [name, text] : {std::pair{"driver.cpp", kDriverSource}, std::pair{"tracer.cpp", kTracerSource},
                                     std::pair{"cuzk_driver_io.hpp", kDriverIoSource},
                                     std::pair{"cuzk_ops.hpp", kOpsSource}}) {
      std::ofstream d(rt / name);
      d << text;
    }
    const std::string own = "-I" + rt.string();
    steps.push_back({{"nasm", "-felf64", (s.dir / "fr.asm").string(), "-o", (rt / "fr_asm.o").string()}, logf});
    steps.push_back({cxx((s.dir / "calcwit.cpp").string(), rt / "calcwit.o"), logf});
    steps.push_back({cxx((s.dir / "fr.cpp").string(), rt / "fr.o"), logf});
    steps.push_back({cxx((s.dir / "main.cpp").string(), rt / "circom_main.o", {"-Dmain=cuzk_circom_generated_main"}),
                     logf});
    steps.push_back({cxx((rt / "driver.cpp").string(), rt / "driver.o", {own}), logf});
    steps.push_back({cxx((rt / "tracer.cpp").string(), rt / "tracer.o", {own}), (rt / "tracer.log").string()});
  }
  const size_t jobs = std::max(1u, std::thread::hardware_concurrency());
  Children running;
  std::string failed, tracer_failed;
  size_t next = 0;
  while (next < steps.size() || !running.empty()) {
    while (failed.empty() && next < steps.size() && running.size() < jobs) {
      const std::vector<std::string>& a = steps[next].argv;
      if (log) log("witness generator " + s.name + ": " + a[0] + " " + a[a.size() - 3]);
      try {
        running.start(spawn(a, steps[next].log), next);
      } catch (const WitnessError& e) {
        failed = e.what();  // the steps already running are still waited for, and none more started
      }
      next++;
    }
    if (running.empty()) break;
    const auto [step, status] = running.wait_one();
    if (status == 0) continue;
    if (step == tracer_step)  // the generator is still made without it
      tracer_failed = "compiling the tracer against " + s.dir.string() + " failed: " +
                      tail_of(read_file(steps[step].log), 1000);
    else if (failed.empty())
      failed = steps[step].argv[0] + " failed";
  }
  if (!failed.empty())
    throw WitnessError("building the witness generator of " + s.dir.string() + ": " + failed + ": " +
                       tail_of(read_file(logf), 1500));
  if (!hit) {
    if (tracer_failed.empty()) tracer_failed = rename_runtime(rt);
    for (const char* f : {"driver.cpp", "tracer.cpp", "cuzk_driver_io.hpp", "cuzk_ops.hpp", "tracer.log",
                          "fr_symbols.txt", "fr_rename.txt"})
      fs::remove(rt / f);
    if (tracer_failed.empty()) {
      std::error_code ec;
      if (fs::exists(cached, ec) && !complete_runtime(cached)) fs::remove_all(cached, ec);  // a damaged entry
      fs::rename(rt, cached, ec);
      if (!ec) rt = cached, scratch->keep();
    }
  }
  std::vector<std::string> link = {"g++", "-no-pie", "-o", (work / "generator").string(), (work / "circuit.o").string()};
  for (const char* o : kRuntimeObjects) link.push_back((rt / o).string());
  for (const char* a : {"-static-libstdc++", "-static-libgcc", "-Wl,-Bstatic", "-lgmp", "-Wl,-Bdynamic", "-pthread"})
    link.push_back(a);
  if (log) log("witness generator " + s.name + ": linking");
  if (wait_for(spawn(link, logf)) != 0)
    throw WitnessError("linking the witness generator of " + s.dir.string() + " failed: " +
                       tail_of(read_file(logf), 1500));
  link_tracer(s, work, rt, tracer_failed, log);
  fs::remove(work / "circuit.o");
}

// Asks the new executable for its sizes and input table, and names the inputs from the .sym file.
Manifest describe(const Sources& s, const fs::path& work, const std::string& key) {
  const std::string out = (work / "describe.json").string();
  if (wait_for(spawn({(work / "generator").string(), "--describe", (work / "circuit.dat").string()}, out)) != 0)
    throw WitnessError("the witness generator of " + s.dir.string() + " cannot load its .dat: " +
                       tail_of(read_file(out), 1000));
  nlohmann::json d;
  try {
    d = nlohmann::json::parse(read_file(out));
  } catch (const nlohmann::json::exception&) {
    throw WitnessError("the witness generator of " + s.dir.string() + " printed an unreadable description");
  }
  fs::remove(out);
  if (d.value("limbs", 0) != 4)
    throw WitnessError(s.dir.string() + ": the circuit's prime is not 4 x 64 bits (BLS12-381 or BN254 expected)");
  Manifest m;
  m.dir = work.string();
  m.circuit = s.name;
  m.key = key;
  for (int i = 0; i < 4; i++) m.prime[i] = std::stoull(d["prime"][i].get<std::string>(), nullptr, 16);
  m.n_witness = d["n_witness"];
  m.n_signals = d["n_signals"];
  m.input_start = d["input_start"];
  m.n_inputs = d["n_inputs"];
  const auto names = sym_names(s.sym, m.input_start, uint64_t(m.input_start) + m.n_inputs);
  m.names_known = !s.sym.empty();
  for (const auto& e : d["inputs"]) {
    InputSignal in;
    in.hash = std::stoull(e["hash"].get<std::string>(), nullptr, 16);
    const uint64_t sig = e["signal"];
    in.offset = uint32_t(sig - m.input_start);
    in.size = e["size"];
    auto it = names.find(sig);
    if (it != names.end() && fnv1a(it->second) == in.hash) in.name = it->second;
    else m.names_known = false;
    m.inputs.push_back(in);
  }
  std::sort(m.inputs.begin(), m.inputs.end(), [](const InputSignal& a, const InputSignal& b) { return a.offset < b.offset; });
  return m;
}


// The runtime objects' cache under a generator cache.
fs::path runtime_cache_of(const std::string& cache_root) { return fs::path(cache_root) / "runtime"; }

Manifest build_into(const Sources& s, const fs::path& out, const std::string& key, const std::string& cache_root,
                    const Tools& tools, const Log& log) {
  ScratchDir scratch(out.parent_path(), out.filename().string());
  const fs::path& work = scratch.path();
  compile(s, work, runtime_cache_of(cache_root), tools, log);
  fs::copy_file(s.dir / (s.name + ".dat"), work / "circuit.dat");
  Manifest m = describe(s, work, key);
  write_manifest(work.string(), m);
  std::error_code ec;
  fs::remove_all(out, ec);
  fs::rename(work, out);
  scratch.keep();
  return read_manifest(out.string());
}


}  // namespace

void sweep_cache(const std::string& cache_root) {
  sweep_scratch(cache_root);
  sweep_scratch(runtime_cache_of(cache_root));
}

Manifest build_generator(const std::string& src, const std::string& out, const std::string& cache_root,
                         const Log& log) {
  Sources s = find_sources(src);
  fs::path o = fs::absolute(out).lexically_normal();
  if (o.filename().empty()) o = o.parent_path();
  std::error_code ec;
  fs::create_directories(o.parent_path(), ec);
  sweep_scratch(o.parent_path());
  sweep_cache(cache_root);
  const Tools tools = toolchain();
  return build_into(s, o, key_of(s, tools), cache_root, tools, log);
}

Manifest open_generator(const std::string& path, const std::string& cache_root, const Log& log) {
  if (is_artefact(path)) {
    std::error_code ec;
    Manifest m = read_manifest(fs::canonical(path, ec).string());
    if (::access(m.generator_path().c_str(), X_OK) != 0) throw WitnessError(m.generator_path() + ": not executable");
    return m;
  }
  Sources s = find_sources(path);
  std::error_code ec;
  fs::create_directories(cache_root, ec);
  if (ec) throw WitnessError(cache_root + ": " + ec.message());
  sweep_cache(cache_root);
  const Tools tools = toolchain();
  const std::string key = key_of(s, tools);
  const fs::path out = fs::path(cache_root) / (s.name + "-" + key.substr(0, 16));
  auto cached = [&]() -> std::optional<Manifest> {
    if (!is_artefact(out.string())) return std::nullopt;
    try {
      Manifest m = read_manifest(out.string());
      if (m.key == key && ::access(m.generator_path().c_str(), X_OK) == 0) return m;
    } catch (const WitnessError&) {
    }
    return std::nullopt;
  };
  if (auto m = cached()) return *m;
  FileLock lock((fs::path(cache_root) / ("." + out.filename().string() + ".lock")).string());
  if (auto m = cached()) return *m;  // another process built it while this one waited
  if (log) log("compiling the witness generator " + s.dir.string() + " into " + out.string());
  return build_into(s, out, key, cache_root, tools, log);
}

}  // namespace cuzk::witness
