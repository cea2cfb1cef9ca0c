// The framing rules of http_framing.hpp, one byte at a time; bodies of known length are skipped
// in one step.
#include "supervisor/http/http_framing.hpp"

#include <algorithm>
#include <cctype>

namespace cuzk::http {

namespace {

constexpr size_t kKeep = 256;  // of a head line: enough for the two header fields read here

std::string lower_trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t')) a++;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t')) b--;
  std::string out = s.substr(a, b - a);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void StrictFraming::end_of_line() {
  // A header line of the head (not the request line, not a trailer): the two fields that decide
  // where the body ends.
  if (any_line_ && !trailers_) {
    const size_t colon = line_.find(':');
    if (colon != std::string::npos) {
      const std::string name = lower_trim(line_.substr(0, colon)), value = lower_trim(line_.substr(colon + 1));
      if (name == "content-length" && !value.empty() && value.size() <= 19 &&
          value.find_first_not_of("0123456789") == std::string::npos)
        length_ = std::stoull(value);
      if (name == "transfer-encoding") {
        const size_t comma = value.rfind(',');
        chunked_ = lower_trim(comma == std::string::npos ? value : value.substr(comma + 1)) == "chunked";
      }
    }
  }
  any_line_ = true;
  line_.clear();
}

void StrictFraming::end_of_head() {
  const bool was_trailers = trailers_;
  trailers_ = false;
  any_line_ = false;
  line_.clear();
  if (!was_trailers && chunked_) {
    st_ = St::SizeLine, size_ = 0, size_digits_ = true, size_overflow_ = false;
  } else if (!was_trailers && length_) {
    st_ = St::Fixed, left_ = length_;
  } else {
    st_ = St::LineStart;
  }
  chunked_ = false, length_ = 0;
}

// Whether c is the byte the framing requires here; otherwise why says what is wrong.
static bool expect(char c, char want, const char* wrong, std::string& why) {
  if (c == want) return true;
  why = wrong;
  return false;
}

int StrictFraming::line_end(char c, St cr, const char* what, std::string& why) {
  if (c == '\n') {
    why = std::string(what) + " ends in a bare LF (lines end in CRLF)";
    return -1;
  }
  if (c != '\r') return 0;
  st_ = cr;
  return 1;
}

bool StrictFraming::step(char c, std::string& why) {
  switch (st_) {
    case St::LineStart:
      if ((c == ' ' || c == '\t') && any_line_) {
        why = "a header line begins with whitespace (obs-fold line folding is not accepted)";
        return false;
      }
      [[fallthrough]];
    case St::Line:
      if (const int e = line_end(c, St::LineCR, "a line", why)) return e > 0;
      if (line_.size() < kKeep) line_ += c;
      st_ = St::Line;
      return true;
    case St::LineCR:
      if (!expect(c, '\n', "a CR is not followed by LF", why)) return false;
      if (line_.empty() && !any_line_ && !trailers_) {
        st_ = St::LineStart;  // an empty line before the request line is ignored (RFC 9112 2.2)
        return true;
      }
      if (line_.empty()) end_of_head();
      else end_of_line(), st_ = St::LineStart;
      return true;
    case St::Fixed:
      if (--left_ == 0) st_ = St::LineStart;
      return true;
    case St::SizeLine:
      if (const int e = line_end(c, St::SizeCR, "a chunk-size line", why)) return e > 0;
      if (size_digits_ && hex_value(c) >= 0) {
        if (size_ >> 60) size_overflow_ = true;
        size_ = size_ * 16 + uint64_t(hex_value(c));
      } else {
        size_digits_ = false;  // an extension (or junk, which the parser refuses)
      }
      return true;
    case St::SizeCR:
      if (!expect(c, '\n', "a CR in a chunk-size line is not followed by LF", why)) return false;
      if (size_overflow_) {
        st_ = St::LineStart;  // the parser refuses the size; nothing more to frame
      } else if (size_ == 0) {
        st_ = St::LineStart, trailers_ = true, any_line_ = true;  // trailer fields, then an empty line
      } else {
        st_ = St::Data, left_ = size_;
      }
      return true;
    case St::Data:
      if (--left_ == 0) st_ = St::DataCR;
      return true;
    case St::DataCR:
      if (!expect(c, '\r', "chunk data is longer than its chunk size (no CRLF after it)", why)) return false;
      st_ = St::DataLF;
      return true;
    case St::DataLF:
      if (!expect(c, '\n', "chunk data is not followed by CRLF", why)) return false;
      st_ = St::SizeLine, size_ = 0, size_digits_ = true, size_overflow_ = false;
      return true;
  }
  return true;
}

size_t StrictFraming::run(const char* data, size_t n, std::string& why) {
  for (size_t i = 0; i < n;) {
    if (st_ == St::Fixed || st_ == St::Data) {  // body bytes: skipped in one step
      const uint64_t k = std::min<uint64_t>(left_ - 1, n - i);
      left_ -= k, i += size_t(k);
      if (i == n) break;
    }
    if (!step(data[i], why)) return i;
    i++;
  }
  return n;
}

void StrictFraming::advance(const char* data, size_t n) {
  std::string why;
  run(data, n, why);
}

size_t StrictFraming::check(const char* data, size_t n, std::string& why) const {
  StrictFraming f = *this;
  return f.run(data, n, why);
}

}  // namespace cuzk::http
