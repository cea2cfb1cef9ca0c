// Request framing as RFC 9112 has it, where the http-parser library is lenient: checked on the
// bytes before the parser sees them. Every line of a request's head, of a chunk-size line and of
// a trailer ends in CRLF (no bare LF, no CR without LF); no header line begins with a space or tab
// (obs-fold); the data of each chunk is followed by exactly CRLF. Content-Length and
// Transfer-Encoding are read as far as is needed to tell where a body ends; their other errors are
// left to the parser.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace cuzk::http {

class StrictFraming {
 public:
  // The length of the longest prefix of data[0..n) that breaks no rule (n when all of it is well
  // framed), and in why the rule the next byte breaks. Does not advance.
  size_t check(const char* data, size_t n, std::string& why) const;
  // Advances over data[0..n), bytes the parser has consumed (a prefix of what check accepted).
  void advance(const char* data, size_t n);

 private:
  enum class St {
    LineStart,   // the start of a head's line (or of the request line)
    Line,        // inside a head line
    LineCR,      // a CR inside a head line: LF must follow
    Fixed,       // a Content-Length body: `left` bytes to skip
    SizeLine,    // a chunk-size line
    SizeCR,
    Data,        // chunk data: `left` bytes
    DataCR,      // after chunk data: CR, then
    DataLF,      // LF
  };
  // Over data[0..n): the offset of the first byte that breaks a rule (n when none).
  size_t run(const char* data, size_t n, std::string& why);
  // A byte of a line that must end in CRLF: -1 for a bare LF (why says so), 1 for the CR (the state
  // becomes cr), 0 for any other byte.
  int line_end(char c, St cr, const char* what, std::string& why);
  // One byte; false when it breaks a rule (why says which).
  bool step(char c, std::string& why);
  void end_of_line();
  void end_of_head();

  St st_ = St::LineStart;
  bool trailers_ = false;    // the head being read is a chunked body's trailer section
  bool any_line_ = false;    // the head has its request line
  bool chunked_ = false;
  uint64_t length_ = 0;      // Content-Length of the current head
  uint64_t left_ = 0;
  uint64_t size_ = 0;        // the chunk size being read
  bool size_digits_ = true;  // still reading its hex digits (an extension may follow)
  bool size_overflow_ = false;
  std::string line_;         // the current head line, its first 256 bytes
};

}  // namespace cuzk::http
