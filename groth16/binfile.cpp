#include "binfile.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>
#include <stdexcept>

#include "hugepages.hpp"

namespace cuzk::binfile {

void fail(const std::string& path, const std::string& where, const std::string& what) {
  throw FormatError(path + ": " + where + ": " + what);
}

std::string section_name(uint32_t id, const char* label) {
  return "section " + std::to_string(id) + " (" + label + ")";
}

// ---------------------------------------------------------------------------------------------
// MappedFile

// Opens path read-only, refusing a directory (and, with regular_only, anything but a regular file);
// st receives its fstat. Throws FormatError naming the file. The open itself never blocks (a FIFO
// with no writer would hold it forever); reads of an accepted pipe block as usual.
static int open_input(const std::string& path, struct stat& st, bool regular_only) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(path, "open", std::strerror(errno));
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    fail(path, "open", std::strerror(e));
  }
  if (S_ISDIR(st.st_mode) || (regular_only && !S_ISREG(st.st_mode))) {
    ::close(fd);
    fail(path, "open", S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

MappedFile::MappedFile(const std::string& path, MapMode mode) {
  struct stat st;
  int fd = open_input(path, st, false);
  if (S_ISREG(st.st_mode)) {
    size_ = (uint64_t)st.st_size;
    if (size_ > 0) {
      // MAP_POPULATE maps the whole (usually cached) file in one call instead of one fault per
      // 64 KiB read-around window as the decoders walk it.
      const int populate = mode == MapMode::Populate ? MAP_POPULATE : 0;
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | populate, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const uint8_t*>(p);
        mapped_ = true;
        ::close(fd);
        return;
      }
    }
  }
  // Pipes, character devices, or a refused mapping: read everything.
  uint8_t buf[1 << 16];
  for (;;) {
    ssize_t k = ::read(fd, buf, sizeof buf);
    if (k < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      fail(path, "read", std::strerror(e));
    }
    if (k == 0) break;
    heap_.insert(heap_.end(), buf, buf + k);
  }
  ::close(fd);
  data_ = heap_.data();
  size_ = heap_.size();
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

// ---------------------------------------------------------------------------------------------
// Cursor

void Cursor::fail(const std::string& what) const { binfile::fail(path_, where_, what); }

const uint8_t* Cursor::bytes(uint64_t n, const char* what) {
  if (n > size_ - pos_)
    fail("ends early: " + std::string(what) + " needs " + std::to_string(n) + " bytes at offset " +
         std::to_string(pos_) + " but the section has only " + std::to_string(size_ - pos_) + " left");
  const uint8_t* p = data_ + pos_;
  pos_ += n;
  return p;
}

uint32_t Cursor::u32(const char* what) {
  uint32_t v;
  std::memcpy(&v, bytes(4, what), 4);
  return v;
}

uint64_t Cursor::u64(const char* what) {
  uint64_t v;
  std::memcpy(&v, bytes(8, what), 8);
  return v;
}

void Cursor::expect_remaining(uint64_t expected, const std::string& what) {
  if (remaining() != expected)
    fail("size mismatch: " + what + " needs " + std::to_string(expected) + " bytes but the section has " +
         std::to_string(remaining()) + " left");
}

void Cursor::expect_end() {
  if (pos_ != size_)
    fail("size mismatch: " + std::to_string(size_ - pos_) + " unexpected bytes after the last field (section size " +
         std::to_string(size_) + ")");
}

// ---------------------------------------------------------------------------------------------
// Reader

// What is wrong with a magic other than the expected one. The iden3 formats are named (a .wtns given
// for a .zkey is a common mistake); any other first bytes are never quoted, because the daemon reads
// files on behalf of clients that may not be allowed to read them.
static std::string magic_mismatch(const uint8_t* m, const char* expected) {
  for (const char* known : {"zkey", "wtns", "r1cs"})
    if (std::memcmp(m, known, 4) == 0)
      return std::string("magic \"") + known + "\": this is a ." + known + " file, not a ." + expected + " file";
  return std::string("bad magic: not a .") + expected + " file";
}

std::vector<SectionInfo> parse_container(const std::string& path, uint64_t n, const char* magic, uint32_t version,
                                         const std::function<void(uint64_t, size_t, void*)>& read_at) {
  if (n < 12)
    fail(path, "header",
         "the file is " + std::to_string(n) + " bytes, shorter than the 12-byte header (magic, version, section count)");
  uint8_t head[12];
  read_at(0, 12, head);
  if (std::memcmp(head, magic, 4) != 0) fail(path, "header", magic_mismatch(head, magic));
  uint32_t ver, count;
  std::memcpy(&ver, head + 4, 4);
  std::memcpy(&count, head + 8, 4);
  if (ver != version)
    fail(path, "header", "version " + std::to_string(ver) + " is not supported (expected " + std::to_string(version) + ")");
  uint64_t pos = 12;
  std::set<uint32_t> seen;
  std::vector<SectionInfo> sections;
  for (uint32_t i = 0; i < count; i++) {
    if (n - pos < 12)
      fail(path, "section table",
           "the file ends after " + std::to_string(i) + " of the " + std::to_string(count) +
               " sections the header announces (truncated?)");
    uint8_t sh[12];
    read_at(pos, 12, sh);
    SectionInfo s;
    std::memcpy(&s.id, sh, 4);
    std::memcpy(&s.size, sh + 4, 8);
    pos += 12;
    std::string where = "section " + std::to_string(s.id);
    if (s.size > n - pos)
      fail(path, where,
           "size " + std::to_string(s.size) + " extends past the end of the file (only " + std::to_string(n - pos) +
               " bytes left; truncated?)");
    if (!seen.insert(s.id).second) fail(path, where, "appears twice");
    s.offset = pos;
    pos += s.size;
    sections.push_back(s);
  }
  if (pos != n)
    fail(path, "trailing data",
         std::to_string(n - pos) + " bytes after the last of the " + std::to_string(count) + " sections");
  return sections;
}

Reader::Reader(const std::string& path, const char* magic, uint32_t version, MapMode mode)
    : path_(path), file_(std::make_shared<const MappedFile>(path, mode)) {
  const uint8_t* d = file_->data();
  sections_ = parse_container(path, file_->size(), magic, version,
                              [d](uint64_t off, size_t n, void* out) { std::memcpy(out, d + off, n); });
}

const SectionInfo* Reader::find(uint32_t id) const {
  for (const auto& s : sections_)
    if (s.id == id) return &s;
  return nullptr;
}

Cursor Reader::section(uint32_t id, const std::string& name) const {
  const SectionInfo* s = find(id);
  if (!s) fail(name, "missing");
  return Cursor(path_, name, file_->data() + s->offset, s->size);
}

// ---------------------------------------------------------------------------------------------
// PreadFile

PreadFile::PreadFile(const std::string& path) : path_(path) {
  struct stat st;
  fd_ = open_input(path, st, true);
  size_ = (uint64_t)st.st_size;
}

PreadFile::~PreadFile() { ::close(fd_); }

void PreadFile::read_at(uint64_t offset, size_t n, void* out, const std::string& where) const {
  auto* p = static_cast<uint8_t*>(out);
  size_t done = 0;
  while (done < n) {
    ssize_t k = ::pread(fd_, p + done, n - done, (off_t)(offset + done));
    if (k < 0) {
      if (errno == EINTR) continue;
      fail(path_, where, std::string("read failed: ") + std::strerror(errno));
    }
    if (k == 0)
      fail(path_, where,
           "the file ends at byte " + std::to_string(offset + done) + ", before the " + std::to_string(n) +
               " bytes at offset " + std::to_string(offset) + " (truncated while it was read?)");
    done += (size_t)k;
  }
}

std::vector<SectionInfo> PreadFile::sections(const char* magic, uint32_t version) const {
  return parse_container(path_, size_, magic, version,
                         [this](uint64_t off, size_t n, void* out) { read_at(off, n, out, "header"); });
}

// ---------------------------------------------------------------------------------------------
// Writer

Writer::Writer(const std::string& path, const char* magic, uint32_t version, uint32_t n_sections)
    : path_(path), tmp_(path + ".partial." + std::to_string(::getpid())), declared_(n_sections) {
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) io_fail("cannot create");
  std::setvbuf(f_, nullptr, _IOFBF, 1 << 22);
  if (std::fwrite(magic, 1, 4, f_) != 4 || std::fwrite(&version, 4, 1, f_) != 1 ||
      std::fwrite(&n_sections, 4, 1, f_) != 1)
    io_fail("write failed");
}

Writer::~Writer() {
  if (f_) std::fclose(f_);
  if (!closed_) std::remove(tmp_.c_str());
}

void Writer::io_fail(const char* what) {
  int e = errno;
  throw std::runtime_error(path_ + ": " + what + ": " + std::strerror(e));
}

void Writer::begin_section(uint32_t id, uint64_t size) {
  if (in_section_ || written_sections_ >= declared_)
    throw std::logic_error(path_ + ": section " + std::to_string(id) + " started out of order");
  if (std::fwrite(&id, 4, 1, f_) != 1 || std::fwrite(&size, 8, 1, f_) != 1) io_fail("write failed");
  in_section_ = true;
  section_left_ = size;
}

void Writer::write(const void* p, size_t n) {
  if (!in_section_ || n > section_left_)
    throw std::logic_error(path_ + ": write beyond the declared section size");
  if (n && std::fwrite(p, 1, n, f_) != n) io_fail("write failed");
  section_left_ -= n;
}

void Writer::end_section() {
  if (!in_section_ || section_left_ != 0)
    throw std::logic_error(path_ + ": section ended " + std::to_string(section_left_) + " bytes short of its size");
  in_section_ = false;
  written_sections_++;
}

void Writer::close() {
  if (in_section_ || written_sections_ != declared_)
    throw std::logic_error(path_ + ": closed with " + std::to_string(written_sections_) + " of " +
                           std::to_string(declared_) + " sections written");
  FILE* f = f_;
  f_ = nullptr;
  if (std::fflush(f) != 0) {
    std::fclose(f);
    io_fail("write failed");
  }
  if (std::fclose(f) != 0) io_fail("write failed");
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) io_fail("cannot rename the finished file into place");
  closed_ = true;
}

// ---------------------------------------------------------------------------------------------
// Primes

static bool le_equals(const uint8_t* le, uint32_t n8, const uint64_t* limbs, uint32_t nlimbs) {
  if (n8 != nlimbs * 8) return false;
  return std::memcmp(le, limbs, n8) == 0;  // little-endian host: limbs are already the LE bytes
}

std::optional<KnownPrime> identify_prime(const uint8_t* le, uint32_t n8) {
  std::optional<KnownPrime> found;
  for (CurveId id : {CurveId::bls12_381, CurveId::bn254})
    with_curve(id, [&]<class C>() {
      if (le_equals(le, n8, C::FqParams::MOD, C::FqParams::N)) found = KnownPrime{id, FieldKind::Base};
      if (le_equals(le, n8, C::FrParams::MOD, C::FrParams::N)) found = KnownPrime{id, FieldKind::Scalar};
    });
  return found;
}

static std::string field_words(CurveId curve, FieldKind kind) {
  return std::string(curve_display_name(curve)) + (kind == FieldKind::Base ? "'s base field prime q" : "'s scalar field prime r");
}

CurveId expect_known_prime(Cursor& c, uint32_t n8, const uint8_t* prime, FieldKind kind, const char* field_name) {
  std::optional<KnownPrime> got = identify_prime(prime, n8);
  const char* want = kind == FieldKind::Base ? "base field prime q" : "scalar field prime r";
  if (!got)
    c.fail(std::string(field_name) + " (" + std::to_string(n8) + " bytes) is the " + want +
           " of no supported curve (BN254 alias bn128, BLS12-381)");
  if (got->kind != kind)
    c.fail(std::string(field_name) + " is " + field_words(got->curve, got->kind) + ", not a " + want);
  return got->curve;
}

void expect_prime(Cursor& c, uint32_t n8, const uint8_t* prime, CurveId want, FieldKind kind, const char* field_name) {
  CurveId got = expect_known_prime(c, n8, prime, kind, field_name);
  if (got != want)
    c.fail(std::string(field_name) + " is " + field_words(got, kind) + ": the file is for " + curve_display_name(got) +
           ", not " + curve_display_name(want));
}

// ---------------------------------------------------------------------------------------------
// Points

namespace {

// nullptr when the coordinate is canonical, else the message (naming the component of an Fq2).
template <class P>
const char* non_canonical(const Fp<P>& v, const char* bad) {
  return Fp<P>::is_canonical(v.l) ? nullptr : bad;
}
template <class F, int X>
const char* non_canonical(const Fp2<F, X>& v, const char* bad_c0, const char* bad_c1) {
  return !F::is_canonical(v.c0.l) ? bad_c0 : !F::is_canonical(v.c1.l) ? bad_c1 : nullptr;
}

// y^2 = x^3 + b with b computed once per curve; the curve's b() may re-encode it per call.
template <class Aff>
const typename Aff::F& curve_b() {
  static const typename Aff::F b = Aff::Curve::b();
  return b;
}

}  // namespace

template <class Aff>
const char* check_point(const Aff& p) {
  const char* why;
  if constexpr (requires { p.x.c0; })
    why = non_canonical(p.x, "has x.c0 not below the field modulus q", "has x.c1 not below the field modulus q");
  else
    why = non_canonical(p.x, "has x not below the field modulus q");
  if (why) return why;
  if constexpr (requires { p.y.c0; })
    why = non_canonical(p.y, "has y.c0 not below the field modulus q", "has y.c1 not below the field modulus q");
  else
    why = non_canonical(p.y, "has y not below the field modulus q");
  if (why) return why;
  if (p.is_inf()) return nullptr;
  if (p.y.sqr() != p.x.sqr() * p.x + curve_b<Aff>()) return "is not on the curve";
  return nullptr;
}

// Checks n points in parallel, reading each from src; with dst, copies it there first (the structs
// share the file's layout). The on-curve test (3 Fq multiplies for G1, about 12 for G2) dominates.
// Fails naming the first bad point.
template <class Aff>
static void check_points(const std::string& path, const std::string& where, const uint8_t* src, size_t n, Aff* dst) {
  curve_b<Aff>();  // initialise the static before the threads start
  Failure f = first_failure(
      n,
      [&](size_t i) {
        if (!dst) return check_point(reinterpret_cast<const Aff*>(src)[i]);
        std::memcpy(&dst[i], src + i * sizeof(Aff), sizeof(Aff));
        return check_point(dst[i]);
      },
      1 << 11);
  if (f.why) fail(path, where, "point " + std::to_string(f.index) + " " + f.why);
}

template <class Aff>
std::vector<Aff> decode_points(const std::string& path, const std::string& where, const uint8_t* src, size_t n) {
  std::vector<Aff> out;
  resize_huge(out, n);
  check_points(path, where, src, n, out.data());
  return out;
}

// In place when the mapping allows it: the checks read the file's bytes directly, and nothing is
// allocated or copied. Otherwise into storage that is advised for huge pages and filled by the
// parallel copy itself (no value-initialisation pass before it).
template <class Aff>
PointArray<Aff> decode_point_array(const std::string& path, const std::string& where, const uint8_t* src, size_t n,
                                   std::shared_ptr<const MappedFile> mapping, DeferredChecks* later) {
  PointArray<Aff> out;
  Aff* dst = nullptr;
  if (mapping && reinterpret_cast<uintptr_t>(src) % alignof(Aff) == 0) {
    out = PointArray<Aff>::view(mapping, reinterpret_cast<const Aff*>(src), n);
  } else {
    out = PointArray<Aff>::uninitialized(n, &dst);
    advise_huge_pages(dst, n * sizeof(Aff));
  }
  // The closure holds the array (its storage) and the mapping src lies in, so it may run later.
  auto work = [path, where, src, n, dst, keep = out, file = std::move(mapping)] {
    check_points(path, where, src, n, dst);
  };
  if (later)
    later->push_back(std::move(work));
  else
    work();
  return out;
}

#define CUZK_BINFILE_POINTS(Aff)                                                                             \
  template const char* check_point<Aff>(const Aff&);                                                     \
  template std::vector<Aff> decode_points<Aff>(const std::string&, const std::string&, const uint8_t*, size_t); \
  template PointArray<Aff> decode_point_array<Aff>(const std::string&, const std::string&, const uint8_t*, size_t, \
                                                   std::shared_ptr<const MappedFile>, DeferredChecks*);
CUZK_BINFILE_POINTS(bls12_381::G1Affine)
CUZK_BINFILE_POINTS(bls12_381::G2Affine)
CUZK_BINFILE_POINTS(bn254::G1Affine)
CUZK_BINFILE_POINTS(bn254::G2Affine)
#undef CUZK_BINFILE_POINTS

}  // namespace cuzk::binfile
