// The control plane's message decoder (shm::decode_msg), on datagrams of any size, and what the
// supervisor does with an accepted message's text: an Event becomes a timeline line, which
// `cuzk waterfall` and `cuzk timeline export` read back (cli/timeline.cpp). Invariants: only a
// datagram of exactly sizeof(Msg) with the magic and version is accepted, and then it is copied
// verbatim apart from the NUL terminators; its strings are terminated and valid UTF-8 (they end up in
// the job's JSON); one event is one line of the log; the log reader refuses a line only with
// std::invalid_argument.
#include <cstring>
#include <sstream>

#include "cli/timeline.hpp"
#include "fuzz/fuzz_util.hpp"
#include "shm/messages.hpp"
#include "supervisor/timeline.hpp"

using namespace cuzk;

namespace {

bool valid_utf8(const char* s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  while (*p) {
    unsigned c = *p++;
    int more = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : -1;
    if (more < 0) return false;
    uint32_t cp = more == 0 ? c : more == 1 ? (c & 0x1f) : more == 2 ? (c & 0x0f) : (c & 0x07);
    for (int i = 0; i < more; i++, p++) {
      if ((*p & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (*p & 0x3f);
    }
    if ((more == 1 && cp < 0x80) || (more == 2 && cp < 0x800) || (more == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The supervisor reads datagrams into a buffer of sizeof(Msg) + 16 bytes; longer ones are cut.
  const size_t n = std::min(size, sizeof(shm::Msg) + 16);
  shm::Msg m;
  const bool ok = shm::decode_msg(data, n, m);
  uint32_t magic = 0;
  uint16_t version = 0;
  if (n >= 6) std::memcpy(&magic, data, 4), std::memcpy(&version, data + 4, 2);
  FUZZ_CHECK(ok == (n == sizeof(shm::Msg) && magic == shm::kMsgMagic && version == shm::kMsgVersion),
             "accepted a datagram of the wrong size, magic or version, or refused a good one");
  if (!ok) return 0;
  FUZZ_CHECK(std::memchr(m.text, 0, sizeof m.text) && std::memchr(m.name, 0, sizeof m.name), "unterminated string");
  FUZZ_CHECK(valid_utf8(m.text) && valid_utf8(m.name), "a decoded string is not valid UTF-8");
  FUZZ_CHECK(std::memcmp(&m, data, offsetof(shm::Msg, name)) == 0, "the fixed fields changed");

  // Supervisor::on_message: an Event is written to the timeline.
  const std::string line = sup::Timeline::format(1000, m.t_ns, m.name, m.job, m.text);
  FUZZ_CHECK(line.find('\n') == std::string::npos && line.find('\r') == std::string::npos,
             "one event became more than one line of the log");
  std::istringstream log(line + "\n" + line + "\n");
  size_t skipped = 0;
  try {
    cli::timeline::Event e;
    cli::timeline::parse_line(line, e);
    (void)cli::timeline::read_log(log, &skipped);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
