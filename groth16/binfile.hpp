// The iden3 binary container shared by .zkey, .wtns and .r1cs: a 4-byte magic, u32 version,
// u32 section count, then (u32 id, u64 size, data) per section, all little-endian.
// The reader maps the whole file, checks the container strictly (magic, version, every section
// inside the file, no duplicate ids, nothing after the last section) before any caller allocates
// from a count, and hands out bounds-checked cursors. The writer streams sections of known size
// into a temporary file that replaces the target only when everything was written.
// Also here: the strict decoders for field elements and curve points in the binary encodings,
// because every binary format needs the same checks (canonical, on the curve) and their parallel loops.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats.hpp"
#include "parallel.hpp"

namespace cuzk::binfile {

static_assert(std::endian::native == std::endian::little,
              "the binary formats are little-endian and are decoded by memcpy into limbs");
// Field and point structs are exactly their file encodings (n8 bytes per coordinate, x then y, c0
// then c1), so arrays of them are read and written with memcpy.
template <class C>
constexpr bool kFileLayout = sizeof(typename C::Fq) == C::FqParams::BYTES &&
                             sizeof(typename C::G1Affine) == 2 * C::FqParams::BYTES &&
                             sizeof(typename C::G2Affine) == 4 * C::FqParams::BYTES &&
                             sizeof(typename C::Fr) == C::FrParams::BYTES;
static_assert(kFileLayout<Bls12_381> && kFileLayout<Bn254>, "field and point structs must be their file encodings");

// Throws FormatError("<path>: <where>: <what>").
[[noreturn]] void fail(const std::string& path, const std::string& where, const std::string& what);

// How a regular file is mapped. Populate faults every page in at once, for decoders that walk the
// whole file (one call instead of a fault per read-around window). Lazy maps without touching, for
// callers that read the header and a few sections of a file of gigabytes (a zkey's coefficients).
enum class MapMode { Populate, Lazy };

// A read-only view of a whole file: mmap for regular files, a heap copy otherwise.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path, MapMode mode = MapMode::Populate);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  bool mapped_ = false;
  std::vector<uint8_t> heap_;
};

struct SectionInfo {
  uint32_t id;
  uint64_t offset;  // of the data, after the 12-byte section header
  uint64_t size;
};

// Bounds-checked sequential reads inside one section; every failure names the file and section.
class Cursor {
 public:
  Cursor(std::string path, std::string where, const uint8_t* data, uint64_t size)
      : path_(std::move(path)), where_(std::move(where)), data_(data), size_(size) {}
  uint32_t u32(const char* what);
  uint64_t u64(const char* what);
  // The next n bytes; fails when fewer remain.
  const uint8_t* bytes(uint64_t n, const char* what);
  uint64_t remaining() const { return size_ - pos_; }
  uint64_t size() const { return size_; }
  uint64_t pos() const { return pos_; }
  const uint8_t* data() const { return data_; }
  // Fails unless exactly `expected` bytes are left (checked before decoding arrays of that size).
  void expect_remaining(uint64_t expected, const std::string& what);
  void expect_end();
  [[noreturn]] void fail(const std::string& what) const;
  const std::string& where() const { return where_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_, where_;
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

// Checks the container of a file of `size` bytes against `magic` and `version` (every section inside
// the file, no duplicate ids, nothing after the last one) and returns its sections in file order.
// read_at(offset, n, out) supplies the bytes (n <= 12, always inside the file). Throws FormatError.
std::vector<SectionInfo> parse_container(const std::string& path, uint64_t size, const char* magic, uint32_t version,
                                         const std::function<void(uint64_t, size_t, void*)>& read_at);

// A parsed container over a mapped file.
class Reader {
 public:
  // Maps the file and checks the container against `magic` ("zkey") and `version`; throws FormatError.
  Reader(const std::string& path, const char* magic, uint32_t version, MapMode mode = MapMode::Populate);
  const std::string& path() const { return path_; }
  const std::vector<SectionInfo>& sections() const { return sections_; }  // file order
  const SectionInfo* find(uint32_t id) const;
  // The section's cursor; fails when the section is absent. `name` is e.g. "section 7 (B2)".
  Cursor section(uint32_t id, const std::string& name) const;
  [[noreturn]] void fail(const std::string& where, const std::string& what) const { binfile::fail(path_, where, what); }
  const uint8_t* base() const { return file_->data(); }
  // The mapping itself, for views that outlive the reader (PointArray::view).
  std::shared_ptr<const MappedFile> file() const { return file_; }

 private:
  std::string path_;
  std::shared_ptr<const MappedFile> file_;
  std::vector<SectionInfo> sections_;
};

// A regular file read with pread at given offsets, for readers that copy its bytes straight into
// memory of the caller's (a shared-memory slot) from several threads: no mapping to fault in or to
// tear down, and a file that shrinks while it is read gives an error instead of a SIGBUS.
class PreadFile {
 public:
  explicit PreadFile(const std::string& path);  // throws FormatError (missing, a directory, not a regular file)
  ~PreadFile();
  PreadFile(const PreadFile&) = delete;
  PreadFile& operator=(const PreadFile&) = delete;
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Reads exactly n bytes at offset into out; throws FormatError naming the file and `where` on an I/O
  // error or when the file ends first (it was truncated after it was opened).
  void read_at(uint64_t offset, size_t n, void* out, const std::string& where) const;
  // The container, checked as Reader checks it.
  std::vector<SectionInfo> sections(const char* magic, uint32_t version) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Streams a container whose section sizes are known before each section starts.
class Writer {
 public:
  Writer(const std::string& path, const char* magic, uint32_t version, uint32_t n_sections);
  ~Writer();  // removes the temporary file unless close() succeeded
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  void begin_section(uint32_t id, uint64_t size);
  void write(const void* p, size_t n);
  void u32(uint32_t v) { write(&v, 4); }
  void u64(uint64_t v) { write(&v, 8); }
  void end_section();
  // Flushes, checks every declared section was written, and renames over the target.
  void close();

 private:
  std::string path_, tmp_;
  FILE* f_ = nullptr;
  uint32_t declared_, written_sections_ = 0;
  uint64_t section_left_ = 0;
  bool in_section_ = false, closed_ = false;
  void io_fail(const char* what);
};

// Which prime a header's field is: a curve's base field q or scalar field r.
enum class FieldKind { Base, Scalar };
struct KnownPrime {
  CurveId curve;
  FieldKind kind;
};
// nullopt for a prime that is no field of a curve cuzk knows.
std::optional<KnownPrime> identify_prime(const uint8_t* le, uint32_t n8);
// The curve of a (n8, prime) pair that must be the `kind` field of some known curve; fails naming
// field_name and what the prime is otherwise.
CurveId expect_known_prime(Cursor& c, uint32_t n8, const uint8_t* prime, FieldKind kind, const char* field_name);
// Checks a (n8, prime) pair against the `kind` field of curve `want`; fails with a message that names
// the curve the file is for when it is another known curve.
void expect_prime(Cursor& c, uint32_t n8, const uint8_t* prime, CurveId want, FieldKind kind, const char* field_name);

// Runs body(i) -> const char* (nullptr = fine, else why item i is invalid) over [0, n) in parallel
// and returns the smallest failing index with its reason, so that messages do not depend on
// thread timing. Each chunk stops at its first failure; chunks start only above a `grain` of items.
struct Failure {
  size_t index;
  const char* why;  // nullptr when every item passed
};
template <class Body>
Failure first_failure(size_t n, const Body& body, size_t grain = 1 << 12) {
  size_t chunks = std::min(thread_count(), n / grain + 1);
  std::vector<Failure> per(chunks ? chunks : 1, Failure{n, nullptr});
  parallel_for(
      n,
      [&](size_t b, size_t e, size_t c) {
        for (size_t i = b; i < e; i++)
          if (const char* why = body(i)) {
            per[c] = {i, why};
            return;
          }
      },
      chunks);
  Failure best{n, nullptr};
  for (const Failure& f : per)
    if (f.why && f.index < best.index) best = f;
  return best;
}

// Decodes n affine points (G1 or G2 of any curve: 2 or 4 coordinates of n8 bytes, Montgomery LE
// limbs, all-zero = infinity) in parallel, checking every coordinate is below q and every point is on
// the curve. `where` names the section.
template <class Aff>
std::vector<Aff> decode_points(const std::string& path, const std::string& where, const uint8_t* src, size_t n);
// The same checks, into a PointArray: with `mapping` (the file src lies in) and src aligned for the
// point type, the array is a view of the file's bytes, checked in place; otherwise an owned copy
// (not zero-filled first).
// With `later`, the checks (and the copy) are not run but appended there, each closure holding what
// it needs alive; the array must not be read before its closure ran without throwing.
using DeferredChecks = std::vector<std::function<void()>>;
template <class Aff>
PointArray<Aff> decode_point_array(const std::string& path, const std::string& where, const uint8_t* src, size_t n,
                                   std::shared_ptr<const MappedFile> mapping, DeferredChecks* later = nullptr);
// Why a single point is invalid, or nullptr when it is fine.
template <class Aff>
const char* check_point(const Aff& p);

// Encodes points back to their file form (a memcpy on little-endian hosts).
template <class T>
void write_points(Writer& w, const std::vector<T>& pts) {
  w.write(pts.data(), pts.size() * sizeof(T));
}
template <class T>
void write_points(Writer& w, const PointArray<T>& pts) {
  w.write(pts.data(), pts.size() * sizeof(T));
}
template <class T>
void write_point(Writer& w, const T& p) {
  w.write(&p, sizeof p);
}

// Section name strings used in messages, e.g. section_name(7, "B2") = "section 7 (B2)".
std::string section_name(uint32_t id, const char* label);

}  // namespace cuzk::binfile
