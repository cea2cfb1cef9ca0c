// program.bin: reading, writing and checking a compiled witness program.
#include "witness/program.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "witness/program/ops.hpp"
#include "witness/engine.hpp"
#include "witness/program_eval.hpp"
#include "witness/layout_source.hpp"

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

std::string program_body(const Program& p) {
  std::string body;
  append(body, p.consts);
  append(body, p.nodes);
  append(body, p.guards);
  append(body, p.outputs);
  return body;
}

// Writes data to path through a temporary file renamed into place.
void write_atomically(const std::string& path, const std::vector<std::pair<const char*, size_t>>& parts) {
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
  bool ok = true;
  for (const auto& [d, n] : parts) ok = ok && write_all(d, n);
  ok = ok && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw WitnessError(path + ": cannot write: " + std::strerror(e));
  }
}

}  // namespace

uint64_t program_checksum(const Program& p) {
  const std::string body = program_body(p);
  return XXH3_64bits(body.data(), body.size());
}

std::optional<uint64_t> program_file_checksum(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  Header h;
  const bool ok = ::read(fd, &h, sizeof h) == ssize_t(sizeof h);
  ::close(fd);
  if (!ok || std::memcmp(h.magic, kMagic, 8) != 0 || h.version != Program::kVersion) return std::nullopt;
  return h.checksum;
}

void write_program(const std::string& path, const Program& p) {
  const std::string body = program_body(p);
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
  write_atomically(path, {{reinterpret_cast<const char*>(&h), sizeof h}, {body.data(), body.size()}});
}

namespace {

constexpr char kLayoutMagic[8] = {'C', 'Z', 'K', 'W', 'L', 'A', 'Y', '1'};
// Fixed-size header; then n_scalars u32, then per array {u64 offset, u64 count, u64 element bytes},
// then the arrays, each at an offset (from the file's start) that is a multiple of 64.
struct LayoutHeader {
  char magic[8];
  uint32_t n_scalars, n_arrays;
  char key[32];
  char source[32];  // kLayoutSource
  uint64_t prime[4];
  uint64_t program_checksum;
  uint64_t body_bytes;
  uint64_t checksum;  // XXH3-64 of everything after the header
};
static_assert(sizeof(LayoutHeader) == 136, "layout.bin header");
struct ArrayEntry {
  uint64_t offset, count, bytes;
};

void fill_identity(LayoutHeader& h, const LayoutMeta& meta) {
  std::memcpy(h.magic, kLayoutMagic, 8);
  std::memcpy(h.key, meta.key.data(), std::min<size_t>(meta.key.size(), sizeof h.key));
  std::memcpy(h.source, kLayoutSource, std::min<size_t>(std::strlen(kLayoutSource), sizeof h.source));
  std::memcpy(h.prime, meta.prime.data(), sizeof h.prime);
  h.program_checksum = meta.program_checksum;
}

}  // namespace

void write_layout(const std::string& path, const LayoutMeta& meta,
                  const std::vector<std::tuple<const void*, uint64_t, uint32_t>>& arrays) {
  LayoutHeader h{};
  fill_identity(h, meta);
  h.n_scalars = uint32_t(meta.scalars.size());
  h.n_arrays = uint32_t(arrays.size());
  std::string meta_bytes(reinterpret_cast<const char*>(meta.scalars.data()), meta.scalars.size() * 4);
  uint64_t at = sizeof h + meta_bytes.size() + arrays.size() * sizeof(ArrayEntry);
  std::vector<ArrayEntry> entries;
  for (const auto& [data, count, bytes] : arrays) {
    at = (at + 63) / 64 * 64;
    entries.push_back(ArrayEntry{at, count, bytes});
    at += count * bytes;
  }
  meta_bytes.append(reinterpret_cast<const char*>(entries.data()), entries.size() * sizeof(ArrayEntry));
  std::string body = meta_bytes;
  for (size_t i = 0; i < arrays.size(); i++) {
    body.resize(entries[i].offset - sizeof h, '\0');
    body.append(static_cast<const char*>(std::get<0>(arrays[i])), entries[i].count * entries[i].bytes);
  }
  h.body_bytes = body.size();
  h.checksum = XXH3_64bits(body.data(), body.size());
  write_atomically(path, {{reinterpret_cast<const char*>(&h), sizeof h}, {body.data(), body.size()}});
}

std::optional<MappedLayout> map_layout(const std::string& path, const LayoutMeta& meta,
                                       const std::vector<uint32_t>& element_bytes, std::string* why) {
  auto refuse = [&](const std::string& w) -> std::optional<MappedLayout> {
    if (why) *why = path + ": " + w;
    return std::nullopt;
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return refuse("absent");
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || uint64_t(st.st_size) < sizeof(LayoutHeader)) {
    ::close(fd);
    return refuse("not a layout");
  }
  const size_t size = size_t(st.st_size);
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return refuse(std::string("cannot map: ") + std::strerror(errno));
  std::shared_ptr<const void> map(m, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
  const auto* base = static_cast<const uint8_t*>(m);
  LayoutHeader h;
  std::memcpy(&h, base, sizeof h);
  LayoutHeader want{};
  fill_identity(want, meta);
  if (std::memcmp(h.magic, want.magic, 8) != 0) return refuse("not a layout");
  if (std::memcmp(h.source, want.source, sizeof h.source) != 0) return refuse("laid out by another build of cuzk");
  if (std::memcmp(h.key, want.key, sizeof h.key) != 0 || h.program_checksum != want.program_checksum ||
      std::memcmp(h.prime, want.prime, sizeof h.prime) != 0)
    return refuse("laid out from another program");
  if (h.body_bytes != size - sizeof h || h.n_arrays != element_bytes.size() || h.n_scalars > 64)
    return refuse("its sizes do not match its length (truncated?)");
  if (XXH3_64bits(base + sizeof h, size - sizeof h) != h.checksum) return refuse("checksum mismatch (damaged)");
  const uint64_t table = sizeof h + uint64_t(h.n_scalars) * 4;
  if (table + uint64_t(h.n_arrays) * sizeof(ArrayEntry) > size) return refuse("truncated");
  MappedLayout out;
  out.scalars.resize(h.n_scalars);
  std::memcpy(out.scalars.data(), base + sizeof h, out.scalars.size() * 4);
  for (uint32_t i = 0; i < h.n_arrays; i++) {
    ArrayEntry e;
    std::memcpy(&e, base + table + i * sizeof(ArrayEntry), sizeof e);
    if (e.bytes != element_bytes[i] || e.offset % 64 != 0 || e.offset > size || e.count > (size - e.offset) / e.bytes)
      return refuse("array " + std::to_string(i) + " is malformed");
    out.arrays.emplace_back(base + e.offset, e.count);
  }
  out.map = std::move(map);
  return out;
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
