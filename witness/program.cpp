// program.bin: reading, writing and checking a compiled witness program.
#include "witness/program.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "witness/program/ops.hpp"
#include "witness/engine.hpp"
#include "witness/program_eval.hpp"

namespace cuzk::witness {

namespace {

constexpr char kMagic[8] = {'C', 'Z', 'K', 'W', 'P', 'R', 'O', 'G'};

// Fixed-size header; the body is consts, nodes, guards, outputs, in that order.
struct Header {
  char magic[8];
  uint32_t version;
  uint32_t n_inputs, n_witness, n_consts, n_nodes, n_guards;
  char key[32];
  uint64_t prime[4];
  uint64_t body_bytes;
  uint64_t checksum;  // XXH3-64 of the body
};
static_assert(sizeof(Header) == 112, "program.bin header");

constexpr unsigned kArity[] = {
#define CUZK_OP_ARITY(name, arity) arity,
    CUZK_WITNESS_OPS(CUZK_OP_ARITY)
#undef CUZK_OP_ARITY
};

template <class T>
void append(std::string& out, const std::vector<T>& v) {
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

}  // namespace

void write_program(const std::string& path, const Program& p) {
  std::string body;
  append(body, p.consts);
  append(body, p.nodes);
  append(body, p.guards);
  append(body, p.outputs);
  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  h.version = Program::kVersion;
  h.n_inputs = p.n_inputs;
  h.n_witness = p.n_witness;
  h.n_consts = uint32_t(p.consts.size());
  h.n_nodes = uint32_t(p.nodes.size());
  h.n_guards = uint32_t(p.guards.size());
  std::memcpy(h.key, p.key.data(), std::min<size_t>(p.key.size(), sizeof h.key));
  std::memcpy(h.prime, p.prime.data(), sizeof h.prime);
  h.body_bytes = body.size();
  h.checksum = XXH3_64bits(body.data(), body.size());
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw WitnessError(tmp + ": cannot create: " + std::strerror(errno));
  auto write_all = [&](const char* d, size_t n) {
    while (n) {
      ssize_t w = ::write(fd, d, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      d += w;
      n -= size_t(w);
    }
    return true;
  };
  bool ok = write_all(reinterpret_cast<const char*>(&h), sizeof h) && write_all(body.data(), body.size()) &&
            ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw WitnessError(path + ": cannot write: " + std::strerror(e));
  }
}

Program read_program(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw WitnessError(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  std::string data;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    data.resize(size_t(st.st_size));
    size_t got = 0;
    while (got < data.size()) {
      ssize_t r = ::read(fd, data.data() + got, data.size() - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += size_t(r);
    }
    data.resize(got);
  }
  ::close(fd);
  Header h;
  if (data.size() < sizeof h) throw WitnessError(path + ": too short for a program header");
  std::memcpy(&h, data.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, 8) != 0) throw WitnessError(path + ": not a cuzk witness program");
  if (h.version != Program::kVersion)
    throw WitnessError(path + ": program version " + std::to_string(h.version) + ", this cuzk reads version " +
                       std::to_string(Program::kVersion));
  const uint64_t want = uint64_t(h.n_consts) * sizeof(Value) + uint64_t(h.n_nodes) * sizeof(ProgramNode) +
                        uint64_t(h.n_guards) * sizeof(ProgramGuard) + uint64_t(h.n_witness) * sizeof(uint32_t);
  if (h.body_bytes != want || data.size() - sizeof h != want)
    throw WitnessError(path + ": its sizes do not match its length (truncated?)");
  const char* body = data.data() + sizeof h;
  if (XXH3_64bits(body, want) != h.checksum) throw WitnessError(path + ": checksum mismatch (damaged)");
  Program p;
  p.key.assign(h.key, strnlen(h.key, sizeof h.key));
  std::memcpy(p.prime.data(), h.prime, sizeof h.prime);
  p.n_inputs = h.n_inputs;
  p.n_witness = h.n_witness;
  auto take = [&](auto& v, uint32_t n) {
    v.resize(n);
    std::memcpy(v.data(), body, size_t(n) * sizeof(v[0]));
    body += size_t(n) * sizeof(v[0]);
  };
  take(p.consts, h.n_consts);
  take(p.nodes, h.n_nodes);
  take(p.guards, h.n_guards);
  take(p.outputs, h.n_witness);
  // Every reference points backwards, so evaluation in order never reads an unset value.
  const uint64_t first = p.first_node(), total = p.n_values();
  if (total > 0xffffffffull) throw WitnessError(path + ": more than 2^32 values");
  for (uint64_t i = 0; i < p.nodes.size(); i++) {
    const ProgramNode& n = p.nodes[i];
    const uint64_t self = first + i;
    if (n.op >= program::kOpCount || kArity[n.op] == 0 || n.a >= self || (kArity[n.op] == 2 && n.b >= self) ||
        (kArity[n.op] == 1 && n.b != 0))
      throw WitnessError(path + ": node " + std::to_string(i) + " is malformed");
  }
  for (size_t i = 0; i < p.consts.size(); i++)
    if (program::u256::cmp(p.consts[i], p.prime) >= 0)
      throw WitnessError(path + ": constant " + std::to_string(i) + " is not below the prime");
  for (size_t i = 0; i < p.guards.size(); i++)
    if (p.guards[i].value >= total || p.guards[i].kind > program::kMustEqual ||
        program::u256::cmp(p.guards[i].expect, p.prime) >= 0)
      throw WitnessError(path + ": guard " + std::to_string(i) + " is malformed");
  for (size_t i = 0; i < p.outputs.size(); i++)
    if (p.outputs[i] >= total) throw WitnessError(path + ": witness value " + std::to_string(i) + " is malformed");
  return p;
}

std::optional<Engine> parse_engine(const std::string& s) {
  if (s == "program") return Engine::Program;
  if (s == "native") return Engine::Native;
  return std::nullopt;
}

std::string hex_of(const Value& v) {
  char b[67];
  std::snprintf(b, sizeof b, "0x%016llx%016llx%016llx%016llx", static_cast<unsigned long long>(v[3]),
                static_cast<unsigned long long>(v[2]), static_cast<unsigned long long>(v[1]),
                static_cast<unsigned long long>(v[0]));
  return b;
}

const char* program::op_name(unsigned op) {
  static const char* const names[] = {
#define CUZK_OP_NAME(name, arity) #name,
      CUZK_WITNESS_OPS(CUZK_OP_NAME)
#undef CUZK_OP_NAME
  };
  return op < kOpCount ? names[op] : "?";
}

}  // namespace cuzk::witness
