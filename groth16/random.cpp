#include "random.hpp"

#include <sys/random.h>

#include <cerrno>
#include <system_error>

namespace cuzk {

using bls12_381::Fr;
using bls12_381::FrParams;

// Fills buf completely from getrandom(2), retrying on EINTR and short reads.
static void os_random(void* buf, size_t len) {
  auto* p = static_cast<unsigned char*>(buf);
  while (len) {
    ssize_t got = getrandom(p, len, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "getrandom");
    }
    p += got;
    len -= (size_t)got;
  }
}

// Rejection sampling: 255 random bits are below r with probability r/2^255 ~ 0.91, and a value
// accepted that way is exactly uniform on [0, r).
Fr random_fr() {
  for (;;) {
    bls12_381::Scalar v;
    os_random(v.l, sizeof v.l);
    v.l[3] &= ~(uint64_t(1) << 63);
    if (Fr::is_canonical(v.l)) return Fr::from_plain(v);
  }
}

}  // namespace cuzk
