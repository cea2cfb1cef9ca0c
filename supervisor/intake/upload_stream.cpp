// Streaming extraction of base64 witnesses from a spooled submission body (see upload_stream.hpp).
// A small JSON scanner follows the body's strings and nesting just far enough to find the values of
// witnesses[i].base64; it does not validate the JSON: everything it copies is parsed again by
// SubmitValidator, and a body it misreads only fails there.
#include "supervisor/intake/upload_stream.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "supervisor/intake/input_access.hpp"
#include "supervisor/intake/request_key.hpp"
#include "supervisor/store/state_writes.hpp"
#include "supervisor/store/job_store.hpp"

namespace cuzk::sup {

namespace {

int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

[[noreturn]] void io_error(const std::string& what, const std::string& path, int e) {
  throw_write_error(what + " (" + path + ")", e);
}

class FileOut {
 public:
  explicit FileOut(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) io_error("an uploaded witness", path_, errno);
  }
  ~FileOut() {
    if (fd_ >= 0) ::close(fd_);
  }
  void write(std::string& buf) {
    for (size_t off = 0; off < buf.size();) {
      ssize_t n = ::write(fd_, buf.data() + off, buf.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) io_error("an uploaded witness", path_, n < 0 ? errno : EIO);
      off += size_t(n);
    }
    buf.clear();
  }
  void close() {
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) io_error("an uploaded witness", path_, errno);
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// The header of a decoded witness, read back from its file.
void check_header(StreamedWitness& w) {
  int fd = ::open(w.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) io_error("read back an uploaded witness", w.path, errno);
  struct stat st{};
  ::fstat(fd, &st);
  try {
    w.info = wtns_info(uint64_t(st.st_size), [&](uint64_t off, void* buf, size_t n) {
      return ::pread(fd, buf, n, off_t(off)) == ssize_t(n);
    });
  } catch (const WtnsHeaderError& e) {
    w.problem = e.what();
  }
  ::close(fd);
}

// Follows the body byte by byte. Levels: 1 the body's object, 2 the "witnesses" array, 3 an entry.
class Scanner {
 public:
  Scanner(const std::string& dir, uint64_t max_json, size_t max_witnesses)
      : dir_(dir), max_json_(max_json), max_witnesses_(max_witnesses) {}

  void feed(const char* p, size_t n) {
    for (size_t i = 0; i < n; i++) step(p[i]);
    if (out_.json.size() > max_json_)
      throw SubmitError(413, "the request's JSON without its base64 witnesses exceeds " + std::to_string(max_json_) +
                                 " bytes (limits.upload_memory)");
  }
  StreamedBody finish() {
    if (file_) end_upload();  // an unterminated string: the JSON parse that follows refuses it
    return std::move(out_);
  }

 private:
  enum class Str { None, Key, Value, Upload };

  void step(char c) {
    switch (str_) {
      case Str::None: return structure(c);
      case Str::Key: return key_char(c);
      case Str::Value:
        out_.json.push_back(c);
        if (escaped_) escaped_ = false;
        else if (c == '\\') escaped_ = true;
        else if (c == '"') str_ = Str::None;
        return;
      case Str::Upload: return upload_char(c);
    }
  }

  void structure(char c) {
    switch (c) {
      case '{':
      case '[':
        if (depth_ < kLevels) type_[depth_] = c;
        depth_++;
        expect_key_ = c == '{';
        if (depth_ <= kLevels) key_[depth_ - 1].clear();
        break;
      case '}':
      case ']':
        if (depth_ > 0) depth_--;
        expect_key_ = false;
        break;
      case ',':
        expect_key_ = depth_ >= 1 && depth_ <= kLevels && type_[depth_ - 1] == '{';
        break;
      case ':': expect_key_ = false; break;
      case '"':
        if (expect_key_) {
          str_ = Str::Key;
          raw_key_.clear();
          out_.json.push_back(c);
          return;
        }
        if (depth_ == 3 && type_[0] == '{' && type_[1] == '[' && type_[2] == '{' && key_[0] == "witnesses" &&
            key_[2] == "base64") {
          begin_upload();
          return;
        }
        str_ = Str::Value;
        break;
      default: break;
    }
    out_.json.push_back(c);
  }

  void key_char(char c) {
    out_.json.push_back(c);
    if (escaped_) {
      escaped_ = false;
    } else if (c == '\\') {
      escaped_ = true;
    } else if (c == '"') {
      str_ = Str::None;
      if (depth_ >= 1 && depth_ <= kLevels) key_[depth_ - 1] = decoded_key();
      return;
    }
    if (raw_key_.size() <= kMaxKey) raw_key_.push_back(c);
  }
  std::string decoded_key() const {
    if (raw_key_.size() > kMaxKey) return std::string();  // a long key is none of those looked for
    if (raw_key_.find('\\') == std::string::npos) return raw_key_;
    try {
      return nlohmann::json::parse("\"" + raw_key_ + "\"").get<std::string>();
    } catch (const std::exception&) {
      return std::string();
    }
  }

  void begin_upload() {
    const size_t k = out_.witnesses.size();
    if (k >= max_witnesses_)
      throw SubmitError(400, "witnesses: more than " + std::to_string(max_witnesses_) +
                                 " uploaded entries (no circuit allows more partitions)");
    if (k == 0) {
      std::error_code ec;
      std::filesystem::create_directories(dir_, ec);
      if (ec) io_error("create the upload folder", dir_, ec.value());
    }
    StreamedWitness w;
    w.path = dir_ + "/upload-" + std::to_string(k) + ".wtns";
    w.digest = kDigestStart;
    out_.witnesses.push_back(std::move(w));
    file_ = std::make_unique<FileOut>(out_.witnesses.back().path);
    b64_ = Base64Decoder();
    esc_ = 0;
    str_ = Str::Upload;
    out_.json += "\"" + std::to_string(k) + "\"";
  }

  // A character of the base64 text, JSON escapes included (\/ and \uXXXX of ASCII stand for
  // themselves, \n \r \t \f are whitespace).
  void upload_char(char c) {
    if (esc_ == 1) {  // after a backslash
      esc_ = 0;
      switch (c) {
        case '/': return put('/');
        case 'n': case 'r': case 't': case 'f': return put(' ');
        case 'u': esc_ = 2, code_ = 0, hex_ = 0; return;
        default: return put('\x01');  // \" \\ \b: not base64
      }
    }
    if (esc_ == 2) {
      int v = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
      if (v < 0) {
        esc_ = 0;
        put('\x01');
        return step(c);  // the parse that follows reports the bad escape
      }
      code_ = code_ * 16 + uint32_t(v);
      if (++hex_ == 4) {
        esc_ = 0;
        put(code_ < 0x80 ? char(code_) : '\x01');
      }
      return;
    }
    if (c == '\\') {
      esc_ = 1;
      return;
    }
    if (c == '"') return end_upload();
    if (static_cast<unsigned char>(c) < 0x20) {
      // A raw control character: JSON allows none inside a string, so the body is not JSON, as an
      // in-memory parse would say. A byte no JSON text holds, after this string's placeholder,
      // makes the parse of the rest report it.
      out_.json += '\x01';
      return put('\x01');
    }
    put(c);
  }
  void put(char c) {
    if (b64_.ok()) b64_.put(c, bytes_);
    if (bytes_.size() >= kFlush) flush();
  }
  // The decoded bytes so far into the file, and into the upload's digest.
  void flush() {
    StreamedWitness& w = out_.witnesses.back();
    w.digest = digest_bytes(w.digest, bytes_.data(), bytes_.size());
    file_->write(bytes_);
  }
  void end_upload() {
    StreamedWitness& w = out_.witnesses.back();
    flush();
    file_->close();
    file_.reset();
    str_ = Str::None;
    w.valid_base64 = b64_.finish();
    if (w.valid_base64) check_header(w);
  }

  static constexpr int kLevels = 3;
  static constexpr size_t kMaxKey = 64;
  static constexpr size_t kFlush = 256 * 1024;
  const std::string dir_;
  const uint64_t max_json_;
  const size_t max_witnesses_;
  StreamedBody out_;
  Str str_ = Str::None;
  bool escaped_ = false;
  bool expect_key_ = false;
  uint64_t depth_ = 0;
  char type_[kLevels] = {};
  std::string key_[kLevels];  // the last key read at each level
  std::string raw_key_;
  std::unique_ptr<FileOut> file_;
  Base64Decoder b64_;
  std::string bytes_;
  int esc_ = 0;  // in an upload: 1 after a backslash, 2 in \uXXXX
  uint32_t code_ = 0;
  int hex_ = 0;
};

}  // namespace

bool Base64Decoder::put(char c, std::string& out) {
  if (!ok_) return false;
  if (is_space(c)) return true;
  if (c == '=') {
    if (n_ < 2) return ok_ = false;
    pad_++;
  } else {
    const int v = sextet(c);
    if (pad_ || v < 0) return ok_ = false;
    acc_ |= uint32_t(v) << (6 * (3 - n_));
  }
  if (++n_ == 4) {
    const char b[3] = {char(acc_ >> 16), char(acc_ >> 8), char(acc_)};
    out.append(b, size_t(3 - pad_));
    n_ = 0, acc_ = 0;
  }
  return true;
}

StreamedBody stream_uploads(const std::string& body_path, const std::string& dir, uint64_t max_json,
                            size_t max_witnesses) {
  int fd = ::open(body_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) io_error("read the request body", body_path, errno);
  Scanner scan(dir, max_json, max_witnesses);
  std::string buf(256 * 1024, '\0');
  try {
    for (;;) {
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) io_error("read the request body", body_path, errno);
      if (n == 0) break;
      scan.feed(buf.data(), size_t(n));
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return scan.finish();
}

}  // namespace cuzk::sup
