#include "random.hpp"

#include <sys/random.h>

#include <cerrno>
#include <system_error>

namespace cuzk {

void os_random(void* buf, size_t len) {
  auto* p = static_cast<unsigned char*>(buf);
  while (len) {  // retries on EINTR and short reads
    ssize_t got = getrandom(p, len, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "getrandom");
    }
    p += got;
    len -= (size_t)got;
  }
}

}  // namespace cuzk
