// Log lines carry strings that clients chose (paths, circuit names, request ids, a worker's report
// of them). A control character among them must not start a line of its own nor rewrite the one
// it is in (a "\n... critical ..." forged into the journal), so every message is written with its
// control characters escaped: \n, \r, \t as such, the others as \xHH.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

namespace cuzk::logging {

// Appends s to out with C0 control characters and DEL escaped; all other bytes unchanged.
template <class Out>
void append_escaped(Out& out, std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out.push_back(ch);
      continue;
    }
    out.push_back('\\');
    switch (c) {
      case '\n': out.push_back('n'); break;
      case '\r': out.push_back('r'); break;
      case '\t': out.push_back('t'); break;
      default:
        out.push_back('x');
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
    }
  }
}

inline std::string escape_control(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  append_escaped(out, s);
  return out;
}

// The pattern flag %* : the message with its control characters escaped (instead of %v).
class EscapedMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    append_escaped(dest, std::string_view(msg.payload.data(), msg.payload.size()));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<EscapedMessage>(); }
};

// Sets the default logger's pattern, in which %* stands for the escaped message.
inline void set_escaped_pattern(const std::string& pattern) {
  auto f = std::make_unique<spdlog::pattern_formatter>();
  f->add_flag<EscapedMessage>('*').set_pattern(pattern);
  spdlog::set_formatter(std::move(f));
}

}  // namespace cuzk::logging
