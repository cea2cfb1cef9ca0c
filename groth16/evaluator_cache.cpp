// The compiled constraint evaluator cached on disk (ConstraintEvaluator::open_cached): every
// synthesis worker maps one read-only file instead of compiling the matrices into memory of its own.
//
// A cache file is trusted only after it has passed every check in csr_image::verify_header and
// verify_body, each time it is opened: it belongs to the zkey as the zkey is now (a digest of the
// zkey's header and coefficient sections: content, not file metadata, so a key replaced by one of
// the same size and time, or a recycled inode, is still noticed, and a key copied elsewhere is not
// rebuilt), and its bytes have the checksum they were written with. Files are never written in
// place: a builder writes a temporary file under an flock and renames it over the old one, so that
// a process that still maps the old file keeps a consistent copy. Nothing is fsynced: a file torn
// by a crash fails its checksum at the next start and is rebuilt.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <tuple>

#include "csr_image.hpp"
#include "parallel.hpp"
#include "prover.hpp"
#include "zkey_reader.hpp"

namespace cuzk {

namespace fs = std::filesystem;

namespace csr_image {

namespace {

constexpr uint64_t kHashBlock = 1 << 20;

Digest digest_of(XXH128_hash_t h) { return {h.low64, h.high64}; }

Digest header_digest(const Header& h) { return digest_of(XXH3_128bits(&h, offsetof(Header, header))); }

// The smallest index in [0, n) for which bad(i) holds, or n; in parallel.
template <class Pred>
uint64_t first_bad(uint64_t n, const Pred& bad) {
  return binfile::first_failure(n, [&](size_t i) -> const char* { return bad(i) ? "bad" : nullptr; }, 1 << 16).index;
}

}  // namespace

Digest blocked_hash(const uint8_t* p, uint64_t n) {
  const uint64_t blocks = (n + kHashBlock - 1) / kHashBlock;
  std::vector<uint64_t> h(blocks + 1);
  parallel_for(blocks, [&](size_t lo, size_t hi, size_t) {
    for (size_t b = lo; b < hi; b++) h[b] = XXH3_64bits(p + b * kHashBlock, std::min(kHashBlock, n - b * kHashBlock));
  });
  h[blocks] = n;
  return digest_of(XXH3_128bits(h.data(), h.size() * sizeof(uint64_t)));
}

Digest zkey_identity(const binfile::Reader& zkey) {
  std::vector<uint64_t> parts;
  for (uint32_t id : {1u, 2u, 4u}) {
    const binfile::SectionInfo* s = zkey.find(id);
    if (!s) zkey.fail(binfile::section_name(id, "of a zkey"), "missing");
    Digest d = blocked_hash(zkey.base() + s->offset, s->size);
    parts.insert(parts.end(), {id, s->size, d.lo, d.hi});
  }
  return digest_of(XXH3_128bits(parts.data(), parts.size() * sizeof(uint64_t)));
}

void seal(uint8_t* image) {
  Header h;
  std::memcpy(&h, image, sizeof h);
  h.body = blocked_hash(image + h.header_bytes, h.total_bytes - h.header_bytes);
  h.header = header_digest(h);
  std::memcpy(image, &h, sizeof h);
}

std::string verify_header(const uint8_t* image, uint64_t size, const Digest& zkey_id) {
  Header h;
  if (size < sizeof h) return "truncated: " + std::to_string(size) + " bytes, shorter than the header";
  std::memcpy(&h, image, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return "not a cuzk evaluator cache (wrong magic)";
  if (h.version != kVersion)
    return "format version " + std::to_string(h.version) + ", this build reads version " + std::to_string(kVersion);
  if (!(header_digest(h) == h.header)) return "header checksum mismatch";
  if (!(h.zkey_id == zkey_id)) return "made from another zkey (the key changed since)";
  const Layout L = layout(h.n_rows, h.a_nnz, h.b_nnz);
  if (h.header_bytes != kHeaderBytes || h.total_bytes != L.total)
    return "inconsistent header (sizes do not match the counts)";
  if (size != L.total)
    return "size " + std::to_string(size) + " bytes, the header says " + std::to_string(L.total) + " (truncated?)";
  return "";
}

std::string verify_body(const uint8_t* image) {
  Header h;
  std::memcpy(&h, image, sizeof h);
  const Layout L = layout(h.n_rows, h.a_nnz, h.b_nnz);
  if (!(blocked_hash(image + kHeaderBytes, L.total - kHeaderBytes) == h.body)) return "body checksum mismatch";
  // The evaluator indexes w and the arrays with these, so they are checked even under a good checksum.
  for (auto [rp_off, col_off, nnz, name] : {std::tuple{L.a_row_ptr, L.a_col, h.a_nnz, "A"},
                                            std::tuple{L.b_row_ptr, L.b_col, h.b_nnz, "B"}}) {
    const auto* rp = reinterpret_cast<const uint32_t*>(image + rp_off);
    const auto* col = reinterpret_cast<const uint32_t*>(image + col_off);
    if (rp[0] != 0 || rp[h.n_rows] != nnz) return std::string("row pointers of ") + name + " do not span its entries";
    if (first_bad(h.n_rows, [&](size_t i) { return rp[i] > rp[i + 1]; }) != h.n_rows)
      return std::string("row pointers of ") + name + " decrease";
    if (first_bad(nnz, [&](size_t i) { return col[i] >= h.n_vars; }) != nnz)
      return std::string("a column of ") + name + " is not below nVars";
  }
  return "";
}

}  // namespace csr_image

namespace {

using csr_image::Digest;

// An operating-system failure around the cache directory: open_cached then compiles in memory.
struct CacheIoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void io_fail(const std::string& path, const std::string& what) {
  throw CacheIoError(path + ": " + what + ": " + std::strerror(errno));
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// A whole-file mapping, unmapped with the last evaluator that uses it.
struct Mapping {
  void* p = MAP_FAILED;
  size_t n = 0;
  Mapping(void* p, size_t n) : p(p), n(n) {}
  ~Mapping() {
    if (p != MAP_FAILED) ::munmap(p, n);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  const uint8_t* bytes() const { return static_cast<const uint8_t*>(p); }
};

// The cache file's evaluator if the file is there and passes every check, else nothing and why.
template <class C>
std::optional<groth16::ConstraintEvaluator<C>> try_open(const std::string& path, const Digest& zkey_id, const ZKeyHeader& zh,
                                            std::string& why) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    why = errno == ENOENT ? "no cache file yet" : std::string("cannot open it: ") + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "not a regular file";
    return std::nullopt;
  }
  if ((uint64_t)st.st_size < csr_image::kHeaderBytes) {
    why = "truncated: " + std::to_string(st.st_size) + " bytes, shorter than the header page";
    return std::nullopt;
  }
  void* p = ::mmap(nullptr, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) {
    why = std::string("cannot map it: ") + std::strerror(errno);
    return std::nullopt;
  }
  auto map = std::make_shared<Mapping>(p, (size_t)st.st_size);
  why = csr_image::verify_header(map->bytes(), map->n, zkey_id);
  if (!why.empty()) return std::nullopt;
  // Huge mappings where the page cache holds large folios (the evaluator streams the arrays for every
  // partition); then one call maps every page (read right away by the checks, then by every
  // evaluation). Both are advice: kernels without them map small pages on first touch.
  ::madvise(p, map->n, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_READ
  ::madvise(p, map->n, MADV_POPULATE_READ);
#endif
  why = csr_image::verify_body(map->bytes());
  if (!why.empty()) return std::nullopt;
  groth16::ConstraintEvaluator<C> ev;
  csr_image::attach(ev, map->bytes());
  if (ev.n_rows != zh.domain_size || ev.n_vars != zh.n_vars) {
    why = "its counts are not the zkey's";
    return std::nullopt;
  }
  ev.storage = std::move(map);
  return ev;
}

// Compiles zk into a new file at `path`: written in full under a temporary name (its space reserved
// first, so that a full disk is an error here and never a SIGBUS while the mapping is filled), then
// renamed into place. The caller holds the lock.
template <class C>
void build(const groth16::ZKey<C>& zk, const Digest& zkey_id, const std::string& path) {
  uint64_t a_nnz, b_nnz;
  csr_image::count_nnz(zk, a_nnz, b_nnz);
  const uint64_t total = csr_image::layout(zk.domain_size, a_nnz, b_nnz).total;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  Fd fd(::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) io_fail(tmp, "cannot create");
  try {
    if (int e = ::posix_fallocate(fd.get(), 0, (off_t)total); e != 0) {
      errno = e;
      io_fail(tmp, "cannot reserve " + std::to_string(total) + " bytes");
    }
    void* p = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (p == MAP_FAILED) io_fail(tmp, "cannot map");
    Mapping map(p, total);
    ::madvise(p, total, MADV_HUGEPAGE);  // asks for large page-cache folios, which readers can map huge
    auto* image = static_cast<uint8_t*>(p);
    csr_image::fill(zk, a_nnz, b_nnz, image);
    csr_image::Header h;
    std::memcpy(&h, image, sizeof h);
    h.zkey_id = zkey_id;
    std::memcpy(image, &h, sizeof h);
    csr_image::seal(image);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    errno = e;
    io_fail(path, "cannot rename the finished file into place");
  }
}

// Temporary files of builders that died: only the lock holder calls this, so none is in use.
void remove_stale_temporaries(const std::string& path) {
  const fs::path p(path);
  const std::string prefix = p.filename().string() + ".tmp.";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(p.parent_path(), ec))
    if (e.path().filename().string().starts_with(prefix)) fs::remove(e.path(), ec);
}

// <stem of the zkey's file name>-<16 hex digits of the hash of its absolute path>.csr: one cache
// file per configured key, replaced (not accumulated) when that key changes.
std::string cache_file_name(const std::string& zkey_path) {
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(zkey_path), ec);
  if (ec) abs = fs::absolute(zkey_path);
  std::string stem = fs::path(zkey_path).stem().string(), clean;
  for (char ch : stem.substr(0, 64)) clean += std::isalnum((unsigned char)ch) || ch == '-' || ch == '_' || ch == '.' ? ch : '_';
  char hex[17];
  const std::string a = abs.string();
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)XXH3_64bits(a.data(), a.size()));
  return (clean.empty() ? "zkey" : clean) + "-" + hex + ".csr";
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

namespace groth16 {

template <class C>
ConstraintEvaluator<C> ConstraintEvaluator<C>::open_cached(const std::string& zkey_path, const std::string& cache_dir,
                                                           EvaluatorCacheReport* report) {
  const auto t0 = std::chrono::steady_clock::now();
  EvaluatorCacheReport rep;
  rep.path = (fs::path(cache_dir) / cache_file_name(zkey_path)).string();
  // Lazily mapped: only sections 1, 2 and 4 are read (hashed, and decoded if a build is needed).
  binfile::Reader zr(zkey_path, "zkey", 1, binfile::MapMode::Lazy);
  rep.zkey = read_zkey_header(zr);
  if (rep.zkey.curve != C::id)
    throw FormatError(zkey_path + ": the key is for " + curve_display_name(rep.zkey.curve) + ", not " +
                      C::display_name);
  const Digest id = csr_image::zkey_identity(zr);
  auto done = [&](ConstraintEvaluator<C> ev, EvaluatorCacheReport::Outcome outcome) {
    rep.outcome = outcome;
    rep.ms = ms_since(t0);
    if (report) *report = rep;
    return ev;
  };

  std::string why;
  if (auto ev = try_open<C>(rep.path, id, rep.zkey, why)) return done(std::move(*ev), EvaluatorCacheReport::Outcome::Hit);
  try {
    std::error_code ec;
    fs::create_directories(cache_dir, ec);
    if (ec) throw CacheIoError(cache_dir + ": cannot create the directory: " + ec.message());
    const std::string lock_path = rep.path + ".lock";
    Fd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (lock.get() < 0) io_fail(lock_path, "cannot open the lock file");
    while (::flock(lock.get(), LOCK_EX) != 0)
      if (errno != EINTR) io_fail(lock_path, "cannot lock");
    // Another process may have built it while this one waited for the lock.
    const std::string before = why;
    if (auto ev = try_open<C>(rep.path, id, rep.zkey, why)) {
      rep.reason = "built by another process meanwhile (" + before + ")";
      return done(std::move(*ev), EvaluatorCacheReport::Outcome::Hit);
    }
    rep.reason = why;
    remove_stale_temporaries(rep.path);
    build(read_zkey_coefficients<C>(zr), id, rep.path);
    std::string after;
    auto ev = try_open<C>(rep.path, id, rep.zkey, after);
    if (!ev) throw CacheIoError(rep.path + ": the file just written does not read back: " + after);
    return done(std::move(*ev), EvaluatorCacheReport::Outcome::Built);
  } catch (const CacheIoError& e) {
    rep.reason = e.what();
    return done(compile(read_zkey_coefficients<C>(zr)), EvaluatorCacheReport::Outcome::Uncached);
  }
}

template ConstraintEvaluator<Bls12_381> ConstraintEvaluator<Bls12_381>::open_cached(const std::string&,
                                                                                   const std::string&,
                                                                                   EvaluatorCacheReport*);
template ConstraintEvaluator<Bn254> ConstraintEvaluator<Bn254>::open_cached(const std::string&, const std::string&,
                                                                           EvaluatorCacheReport*);

}  // namespace groth16
}  // namespace cuzk
