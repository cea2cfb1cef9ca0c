// The control plane's message decoder (shm::decode_msg), on datagrams of any size, and what the
// supervisor does with an accepted message's text: an Event becomes a timeline line, which
// `cuzk waterfall` and `cuzk timeline export` read back (cli/timeline.cpp). Invariants: only a
// datagram of exactly sizeof(Msg) with the magic, version and a known type is accepted, and then
// its header is copied verbatim; the text fields of its type are terminated and valid UTF-8 (they
// end up in the job's JSON); one event is one line of the log; the log reader refuses a line only
// with std::invalid_argument.
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
  uint16_t version = 0, type = 0;
  if (n >= 8) std::memcpy(&magic, data, 4), std::memcpy(&version, data + 4, 2), std::memcpy(&type, data + 6, 2);
  const bool known = type >= uint16_t(shm::MsgType::Hello) && type <= uint16_t(shm::MsgType::Key);
  FUZZ_CHECK(ok == (n == sizeof(shm::Msg) && magic == shm::kMsgMagic && version == shm::kMsgVersion && known),
             "accepted a datagram of the wrong size, magic, version or type, or refused a good one");
  if (!ok) return 0;
  FUZZ_CHECK(std::memcmp(&m, data, offsetof(shm::Msg, body)) == 0, "the header changed");
  auto text_ok = [](const char* field, size_t size) { return std::memchr(field, 0, size) && valid_utf8(field); };
  const shm::Msg::Body& b = m.body;
  switch (m.kind()) {
    case shm::MsgType::Hello:
      FUZZ_CHECK(text_ok(b.hello.backend, sizeof b.hello.backend) && text_ok(b.hello.cpus, sizeof b.hello.cpus),
                 "a Hello's text is unterminated or not UTF-8");
      break;
    case shm::MsgType::Synthesize:
      FUZZ_CHECK(text_ok(b.synthesize.input, sizeof b.synthesize.input), "an input path is unterminated or not UTF-8");
      break;
    case shm::MsgType::SynthDone:
      FUZZ_CHECK(text_ok(b.synth_done.error, sizeof b.synth_done.error), "an error is unterminated or not UTF-8");
      break;
    case shm::MsgType::ProveDone:
      FUZZ_CHECK(text_ok(b.prove_done.error, sizeof b.prove_done.error), "an error is unterminated or not UTF-8");
      break;
    case shm::MsgType::Event:
      FUZZ_CHECK(text_ok(b.event.name, sizeof b.event.name) && text_ok(b.event.kv, sizeof b.event.kv),
                 "an event's text is unterminated or not UTF-8");
      break;
    default: return 0;
  }
  if (m.kind() != shm::MsgType::Event) return 0;

  // Supervisor::on_message: an Event is written to the timeline.
  const std::string line = sup::Timeline::format(1000, m.t_ns, b.event.name, b.event.job, b.event.kv);
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
