// The helpers every artefact build uses: tools run under their keepers, waited for by pid, the
// objects builds share, and the hashes of the cache keys.
#include "witness/build_tools.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/pidfd.hpp"
#include "witness/tool.hpp"

namespace cuzk::witness::build_tools {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw WitnessError(p.string() + ": cannot read");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tail_of(const std::string& s, size_t n) { return s.size() > n ? "..." + s.substr(s.size() - n) : s; }

pid_t spawn(const std::vector<std::string>& argv, int out_fd, rlim_t cpu_seconds) {
  try {
    return start_tool(argv, out_fd, cpu_seconds);
  } catch (const WitnessError& e) {
    throw WitnessError(std::string(e.what()) + " (run scripts/setup.sh, which installs g++, nasm, GMP and wabt)");
  }
}

pid_t spawn(const std::vector<std::string>& argv, const std::string& log, rlim_t cpu_seconds) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw WitnessError(log + ": cannot open: " + std::strerror(errno));
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close{fd};
  return spawn(argv, fd, cpu_seconds);
}

int wait_for(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

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

Children::~Children() {
  while (!empty()) wait_one();
}

void Children::start(pid_t pid, size_t tag) { list_.push_back({pid, open_pidfd(pid), tag}); }

std::pair<size_t, int> Children::wait_one() {
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

std::vector<size_t> run_steps(const std::vector<Step>& steps, const Log& log, const std::string& what,
                              std::string* cannot_start) {
  const size_t jobs = std::max(1u, std::thread::hardware_concurrency());
  Children running;
  std::vector<size_t> failed;
  bool stop = false;
  size_t next = 0;
  while (next < steps.size() || !running.empty()) {
    while (!stop && next < steps.size() && running.size() < jobs) {
      const std::vector<std::string>& a = steps[next].argv;
      if (log) log(what + ": " + a[0] + " " + a[a.size() - 3]);
      try {
        running.start(spawn(a, steps[next].log), next);
      } catch (const WitnessError& e) {
        if (cannot_start) *cannot_start = e.what();
        failed.push_back(next);
        stop = true;
      }
      next++;
    }
    if (running.empty()) break;
    const auto [step, status] = running.wait_one();
    if (status == 0) continue;
    failed.push_back(step);
    if (!steps[step].optional) stop = true;
  }
  std::sort(failed.begin(), failed.end());
  return failed;
}

SharedObjects::SharedObjects(const fs::path& cache, const std::string& key, std::vector<std::string> files)
    : cached_(cache / key), dir_(cached_), files_(std::move(files)) {
  hit_ = complete(cached_);
  if (!hit_) dir_ = scratch_.emplace(cache, key).path();
}

SharedObjects::~SharedObjects() = default;

bool SharedObjects::complete(const fs::path& d) const {
  for (const std::string& f : files_)
    if (!fs::is_regular_file(d / f)) return false;
  return true;
}

void SharedObjects::keep() {
  if (hit_ || !scratch_) return;
  std::error_code ec;
  if (fs::exists(cached_, ec) && !complete(cached_)) fs::remove_all(cached_, ec);  // a damaged entry
  fs::rename(scratch_->path(), cached_, ec);
  if (ec) return;
  dir_ = cached_;
  scratch_->keep();
  scratch_.reset();  // its lock released: the folder is the cache's now
}

Hasher::Hasher() : st_(XXH3_createState()) { XXH3_128bits_reset(st_); }
Hasher::~Hasher() { XXH3_freeState(st_); }

void Hasher::add(const std::string& part) {
  uint64_t n = part.size();
  XXH3_128bits_update(st_, &n, sizeof n);
  XXH3_128bits_update(st_, part.data(), part.size());
}

void Hasher::add_file(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  if (!in) throw WitnessError(f.string() + ": cannot read");
  uint64_t n = fs::file_size(f);
  XXH3_128bits_update(st_, &n, sizeof n);
  std::vector<char> buf(1 << 20);
  while (in.read(buf.data(), std::streamsize(buf.size())) || in.gcount() > 0)
    XXH3_128bits_update(st_, buf.data(), size_t(in.gcount()));
}

std::string Hasher::hex() const {
  XXH128_hash_t h = XXH3_128bits_digest(st_);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

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
    while (!n.empty() && n.back() == ']') {
      size_t b = n.rfind('[');
      if (b == std::string::npos) break;
      n.erase(b);
    }
    names.emplace(id, n);
  }
  return names;
}

Manifest describe(const std::string& src, const fs::path& work, const std::string& dat, const std::string& circuit,
                  const fs::path& sym, const std::string& key) {
  const std::string out = (work / "describe.json").string();
  if (wait_for(spawn({(work / "generator").string(), "--describe", dat}, out)) != 0)
    throw WitnessError("the witness generator of " + src + " cannot describe its circuit: " +
                       tail_of(read_file(out), 1000));
  nlohmann::json d;
  try {
    d = nlohmann::json::parse(read_file(out));
  } catch (const nlohmann::json::exception&) {
    throw WitnessError("the witness generator of " + src + " printed an unreadable description");
  }
  fs::remove(out);
  if (d.value("limbs", 0) != 4)
    throw WitnessError(src + ": the circuit's prime is not 4 x 64 bits (BLS12-381 or BN254 expected)");
  Manifest m;
  m.dir = work.string();
  m.circuit = circuit;
  m.key = key;
  for (int i = 0; i < 4; i++) m.prime[i] = std::stoull(d["prime"][i].get<std::string>(), nullptr, 16);
  m.n_witness = d["n_witness"];
  m.n_signals = d["n_signals"];
  m.input_start = d["input_start"];
  m.n_inputs = d["n_inputs"];
  const auto names = sym_names(sym, m.input_start, uint64_t(m.input_start) + m.n_inputs);
  m.names_known = !sym.empty();
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

}  // namespace cuzk::witness::build_tools
