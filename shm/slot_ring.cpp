// Segment creation and mapping over Boost.Interprocess (shared_memory_object + mapped_region).
#include "shm/slot_ring.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <time.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>

namespace bip = boost::interprocess;

namespace cuzk::shm {

namespace {
constexpr uint64_t kPage = 4096;
uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }
uint64_t vec_bytes(uint64_t n) { return round_up(n * kElemBytes, kPage); }
uint64_t header_bytes(uint32_t n_slots) {
  return round_up(sizeof(SegmentHeader) + uint64_t(n_slots) * sizeof(SlotHeader) + 64, kPage);
}
uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}
}  // namespace

const char* to_string(SlotState s) {
  switch (s) {
    case SlotState::Free: return "free";
    case SlotState::Synthesizing: return "synthesizing";
    case SlotState::Ready: return "ready";
    case SlotState::Proving: return "proving";
  }
  return "invalid";
}

uint64_t slot_bytes_for(uint64_t max_vars, uint64_t max_domain, bool abc) {
  return vec_bytes(max_vars) + (abc ? 3 * vec_bytes(max_domain) : 0);
}

uint64_t segment_bytes_for(uint32_t n_slots, uint64_t max_vars, uint64_t max_domain, bool abc) {
  return header_bytes(n_slots) + uint64_t(n_slots) * slot_bytes_for(max_vars, max_domain, abc);
}

std::string ring_prefix(const std::string& instance) {
  unsigned char r[8];
  size_t got = 0;
  while (got < sizeof r) {
    const ssize_t n = ::getrandom(r + got, sizeof r - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    got += size_t(n);
  }
  char hex[2 * sizeof r + 1];
  for (size_t i = 0; i < sizeof r; i++) std::snprintf(hex + 2 * i, 3, "%02x", r[i]);
  return "cuzk." + instance + "." + hex;
}

bool is_ring_prefix(const std::string& s) {
  const size_t dot = s.rfind('.');
  if (s.rfind("cuzk.", 0) != 0 || dot == std::string::npos || dot <= 5 || s.size() - dot - 1 != 16) return false;
  if (s.find_first_not_of("0123456789abcdef", dot + 1) != std::string::npos) return false;
  const std::string inst = s.substr(5, dot - 5);
  return inst.size() <= 32 &&
         inst.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == std::string::npos;
}

std::string segment_name(const std::string& prefix, int device) { return prefix + ".dev" + std::to_string(device); }

namespace {
// Free or total bytes of the filesystem on /dev/shm (0 when it cannot be read).
uint64_t shm_bytes(bool free) {
  struct statvfs st;
  if (statvfs("/dev/shm", &st) != 0) return 0;
  return uint64_t(free ? st.f_bavail : st.f_blocks) * st.f_frsize;
}

std::string mib(uint64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MiB", double(bytes) / (1 << 20));
  return b;
}

// Why the segment open as fd is not one that this process's user made for itself ("" when it is):
// another user's, or one that other users may open too, is not the daemon's ring.
std::string not_own(int fd, const std::string& name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return "cannot fstat /dev/shm/" + name + ": " + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "/dev/shm/" + name + " is not a regular file";
  if (st.st_uid != ::geteuid())
    return "/dev/shm/" + name + " is owned by uid " + std::to_string(st.st_uid) + ", not by this daemon's user (uid " +
           std::to_string(::geteuid()) + ")";
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    return "/dev/shm/" + name + " has mode " + mode + ": other users may open it";
  }
  return "";
}
}  // namespace

uint64_t shm_free_bytes() { return shm_bytes(true); }
uint64_t shm_size_bytes() { return shm_bytes(false); }

void Segment::out_of_range(uint32_t i) const {
  throw std::out_of_range("slot " + std::to_string(i) + " of " + std::to_string(hdr_->n_slots));
}

struct Segment::Impl {
  bip::shared_memory_object obj;
  bip::mapped_region region;
};

char* Segment::vec(uint32_t i, int k) const {
  (void)slot(i);  // range check
  if (k >= 1 && !abc_in_slots()) throw std::logic_error("the slots of " + name_ + " hold w only (synthesis.abc = \"gpu\")");
  char* p = reinterpret_cast<char*>(base_) + hdr_->header_bytes + uint64_t(i) * hdr_->slot_bytes;
  if (k >= 1) p += vec_bytes(hdr_->max_vars);          // past w
  if (k >= 2) p += vec_bytes(hdr_->max_domain) * (k - 1);  // past a (and b)
  return p;
}

std::unique_ptr<Segment> Segment::create(const std::string& prefix, int device, uint32_t n_slots,
                                         uint64_t max_vars, uint64_t max_domain, bool abc) {
  if (n_slots == 0) throw std::invalid_argument("a slot ring needs at least one slot");
  const std::string name = segment_name(prefix, device);
  const uint64_t total = segment_bytes_for(n_slots, max_vars, max_domain, abc);
  const uint64_t free_bytes = shm_free_bytes();
  if (total > free_bytes) {
    const uint64_t size = shm_size_bytes();
    throw NoRoom("/dev/shm has " + mib(free_bytes) + " free of " + mib(size) + ", the slot ring " + name + " needs " +
                     mib(total) + " (" + std::to_string(n_slots) + " slots)",
                 total, free_bytes, size);
  }
  std::unique_ptr<Segment> s(new Segment);
  s->impl_ = std::make_unique<Impl>();
  bool made = false;  // only a segment made here is ever removed here
  try {
    try {
      s->impl_->obj = bip::shared_memory_object(bip::create_only, name.c_str(), bip::read_write, bip::permissions(0600));
    } catch (const bip::interprocess_exception& e) {
      if (e.get_error_code() != bip::already_exists_error) throw;
      struct stat st {};
      const std::string owner = ::stat(("/dev/shm/" + name).c_str(), &st) == 0
                                    ? " (owned by uid " + std::to_string(st.st_uid) + ")"
                                    : std::string();
      throw NameTaken("/dev/shm/" + name + " exists already" + owner + ": it was not made by this daemon and is not used");
    }
    made = true;
    if (std::string why = not_own(s->impl_->obj.get_mapping_handle().handle, name); !why.empty())
      throw std::runtime_error("shared memory " + name + ": " + why);
    s->impl_->obj.truncate(bip::offset_t(total));
    // Reserve the pages now: tmpfs allocates lazily, and a page it cannot allocate at first touch
    // is a SIGBUS in whichever worker touches it.
    int fd = s->impl_->obj.get_mapping_handle().handle;
    int rc = posix_fallocate(fd, 0, off_t(total));
    if (rc == ENOSPC)  // taken by someone else since the check above
      throw NoRoom("cannot reserve " + mib(total) + " in /dev/shm for " + name + ": " +
                       std::strerror(rc),
                   total, shm_free_bytes(), shm_size_bytes());
    if (rc != 0)
      throw std::runtime_error("cannot reserve " + std::to_string(total >> 20) + " MiB in /dev/shm for " + name + ": " +
                               std::strerror(rc));
    s->impl_->region = bip::mapped_region(s->impl_->obj, bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    if (made) bip::shared_memory_object::remove(name.c_str());
    throw std::runtime_error("shared memory " + name + ": " + e.what());
  } catch (...) {
    if (made) bip::shared_memory_object::remove(name.c_str());
    throw;
  }
  s->name_ = name;
  s->base_ = s->impl_->region.get_address();
  s->size_ = total;
  s->hdr_ = reinterpret_cast<SegmentHeader*>(s->base_);
  SegmentHeader& h = *s->hdr_;
  h.version = kSegmentVersion;
  h.device = uint32_t(device);
  h.n_slots = n_slots;
  h.header_bytes = uint32_t(header_bytes(n_slots));
  h.slot_bytes = slot_bytes_for(max_vars, max_domain, abc);
  h.flags = abc ? kSegmentAbc : 0;
  h.max_vars = max_vars;
  h.max_domain = max_domain;
  h.total_bytes = total;
  h.created_ns = now_ns();
  std::snprintf(h.instance, sizeof(h.instance), "%s", prefix.c_str());
  for (uint32_t i = 0; i < n_slots; i++) {
    SlotHeader* sh = &s->slot(i);
    new (sh) SlotHeader{};
    sh->state.store(uint32_t(SlotState::Free));
    sh->cancel.store(0);
  }
  std::atomic_thread_fence(std::memory_order_release);
  h.magic = kSegmentMagic;  // written last: a worker that sees the magic sees a complete header
  return s;
}

std::unique_ptr<Segment> Segment::open(const std::string& prefix, int device) {
  const std::string name = segment_name(prefix, device);
  std::unique_ptr<Segment> s(new Segment);
  s->impl_ = std::make_unique<Impl>();
  try {
    s->impl_->obj = bip::shared_memory_object(bip::open_only, name.c_str(), bip::read_write);
    // Checked before a byte of it is mapped: a segment the daemon did not make is never used.
    if (std::string why = not_own(s->impl_->obj.get_mapping_handle().handle, name); !why.empty())
      throw std::runtime_error("shared memory " + name + ": " + why + "; not a slot ring of this daemon, not used");
    s->impl_->region = bip::mapped_region(s->impl_->obj, bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    throw std::runtime_error("shared memory " + name + ": " + e.what());
  }
  s->name_ = name;
  s->base_ = s->impl_->region.get_address();
  s->size_ = s->impl_->region.get_size();
  s->hdr_ = reinterpret_cast<SegmentHeader*>(s->base_);
  const SegmentHeader& h = *s->hdr_;
  if (s->size_ < sizeof(SegmentHeader) || h.magic != kSegmentMagic)
    throw std::runtime_error("shared memory " + name + ": not a cuzk slot ring (bad magic)");
  if (h.version != kSegmentVersion)
    throw std::runtime_error("shared memory " + name + ": version " + std::to_string(h.version) + ", this build reads " +
                             std::to_string(kSegmentVersion));
  if (h.device != uint32_t(device) || h.total_bytes != s->size_)
    throw std::runtime_error("shared memory " + name + ": header does not match the segment");
  return s;
}

bool Segment::remove(const std::string& prefix, int device) { return remove_name(segment_name(prefix, device)); }

bool Segment::remove_name(const std::string& name) {
  // /dev/shm is sticky: once its owner is this user, no one else can put another file at the name.
  struct stat st {};
  if (::lstat(("/dev/shm/" + name).c_str(), &st) != 0 || st.st_uid != ::geteuid()) return false;
  return bip::shared_memory_object::remove(name.c_str());
}

Segment::~Segment() = default;

}  // namespace cuzk::shm
