// Circuit inputs (JSON) to field values, checked against the generator's input table.
#include "witness/inputs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

namespace cuzk::witness {

namespace {

using nlohmann::json;

// 256-bit unsigned arithmetic, just enough to parse a literal and compare it with p.
struct U256 {
  Value w{};
  // this = this * m + a; false on overflow past 2^256.
  bool mul_add(uint32_t m, uint32_t a) {
    if (w == Value{~0ull, ~0ull, ~0ull, ~0ull}) return false;  // already saturated
    unsigned __int128 carry = a;
    for (uint64_t& x : w) {
      unsigned __int128 t = (unsigned __int128)x * m + carry;
      x = uint64_t(t);
      carry = t >> 64;
    }
    return carry == 0;
  }
  bool less(const Value& o) const {
    for (int i = 3; i >= 0; i--)
      if (w[i] != o[i]) return w[i] < o[i];
    return false;
  }
  bool zero() const { return !(w[0] | w[1] | w[2] | w[3]); }
};

// p - v for 0 < v < p.
Value negate(const Value& p, const Value& v) {
  Value r{};
  unsigned __int128 borrow = 0;
  for (int i = 0; i < 4; i++) {
    unsigned __int128 t = (unsigned __int128)p[i] - v[i] - borrow;
    r[i] = uint64_t(t);
    borrow = (t >> 64) ? 1 : 0;
  }
  return r;
}

std::string clip(const std::string& s) { return s.size() > 40 ? s.substr(0, 37) + "..." : s; }

// Deepest nesting of objects (buses) and arrays (dimensions) taken, far beyond any circuit's: the
// walk below recurses once per level and builds each level's name, so an input nested tens of
// thousands deep (a few dozen KiB of brackets) would overflow the stack.
constexpr int kMaxDepth = 64;

class Parser {
 public:
  Parser(const Manifest& m) : m_(m), out_(m.n_inputs), set_(m.n_inputs, false) {}

  std::vector<Value> run(const json& in) {
    if (!in.is_object()) throw InputError("circuit inputs must be a JSON object of signal names");
    qualify("", in, 0);
    std::string missing;
    size_t n_missing = 0;
    for (const InputSignal& s : m_.inputs) {
      if (set_[s.offset]) continue;
      n_missing++;
      if (missing.size() < 200)
        missing += (missing.empty() ? "" : ", ") + display(s) + (s.size > 1 ? " (" + std::to_string(s.size) + " values)" : "");
    }
    if (n_missing)
      throw InputError(std::string(n_missing == 1 ? "missing input signal " : "missing input signals ") + missing +
                       (m_.names_known ? "" : " (names unknown: compile the circuit with circom --sym)"));
    return std::move(out_);
  }

 private:
  static std::string display(const InputSignal& s) {
    if (!s.name.empty()) return "'" + s.name + "'";
    return "#" + std::to_string(s.offset);
  }

  // circom's naming of inputs: nested objects (bus fields) join with '.', arrays of objects index
  // with [i]; any other value belongs to the signal named by its path.
  void qualify(const std::string& prefix, const json& v, int depth) {
    if (depth > kMaxDepth) too_deep(prefix);
    if (v.is_object()) {
      if (v.empty() && !prefix.empty()) return leaf(prefix, v, depth);
      for (auto& [k, x] : v.items()) qualify(prefix.empty() ? k : prefix + "." + k, x, depth + 1);
      return;
    }
    if (v.is_array() && !v.empty() && v[0].is_object()) {
      for (size_t i = 0; i < v.size(); i++) qualify(prefix + "[" + std::to_string(i) + "]", v[i], depth + 1);
      return;
    }
    leaf(prefix, v, depth);
  }

  [[noreturn]] static void too_deep(const std::string& name) {
    throw InputError("signal '" + clip(name) + "': nested more than " + std::to_string(kMaxDepth) + " levels deep");
  }

  void leaf(const std::string& name, const json& v, int depth) {
    const InputSignal* s = m_.find(name);
    if (!s) {
      std::string names;
      for (const InputSignal& x : m_.inputs)
        if (!x.name.empty() && names.size() < 200) names += (names.empty() ? "" : ", ") + x.name;
      throw InputError("signal '" + clip(name) + "' is not an input of the circuit" +
                       (names.empty() ? std::string() : " (its inputs: " + names + ")"));
    }
    if (set_[s->offset]) throw InputError("signal '" + name + "' is given twice");
    std::vector<Value> vals;
    flatten(name, v, vals, depth);
    if (vals.size() != s->size)
      throw InputError("signal '" + name + "' expects " + std::to_string(s->size) +
                       (s->size == 1 ? " value" : " values") + ", got " + std::to_string(vals.size()));
    for (size_t i = 0; i < vals.size(); i++) {
      out_[s->offset + i] = vals[i];
      set_[s->offset + i] = true;
    }
  }

  void flatten(const std::string& name, const json& v, std::vector<Value>& vals, int depth) {
    if (v.is_array()) {
      if (depth >= kMaxDepth) too_deep(name);
      for (size_t i = 0; i < v.size(); i++) flatten(name + "[" + std::to_string(i) + "]", v[i], vals, depth + 1);
      return;
    }
    if (vals.size() > (size_t(1) << 31)) throw InputError("signal '" + name + "': too many values");
    vals.push_back(number(name, v));
  }

  Value number(const std::string& name, const json& v) {
    const std::string where = "signal '" + name + "': ";
    bool neg = false;
    U256 x;
    if (v.is_number_unsigned()) {
      x.w[0] = v.get<uint64_t>();
    } else if (v.is_number_integer()) {
      int64_t i = v.get<int64_t>();
      neg = i < 0;
      x.w[0] = neg ? uint64_t(0) - uint64_t(i) : uint64_t(i);
    } else if (v.is_number_float()) {
      double d = v.get<double>();
      if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9007199254740992.0)
        throw InputError(where + v.dump() + " is not an exact integer (give large values as decimal strings)");
      neg = d < 0;
      x.w[0] = uint64_t(std::fabs(d));
    } else if (v.is_string()) {
      parse_string(where, v.get<std::string>(), x, neg);
    } else {
      throw InputError(where + "expected a number or a numeric string, got " + std::string(v.type_name()));
    }
    if (!x.less(m_.prime))
      throw InputError(where + "value is not below the field's prime" +
                       (m_.curve().empty() ? std::string() : " (" + m_.curve() + " scalar field)"));
    return neg && !x.zero() ? negate(m_.prime, x.w) : x.w;
  }

  static void parse_string(const std::string& where, const std::string& s, U256& x, bool& neg) {
    size_t i = 0;
    if (i < s.size() && s[i] == '-') {
      neg = true;
      i++;
    }
    uint32_t base = 10;
    if (s.size() >= i + 2 && s[i] == '0') {
      char c = char(s[i + 1] | 0x20);
      if (c == 'x') base = 16;
      if (c == 'o') base = 8;
      if (c == 'b') base = 2;
      if (base != 10) i += 2;
    }
    if (i == s.size()) throw InputError(where + "'" + clip(s) + "' is not a number");
    for (; i < s.size(); i++) {
      char c = s[i];
      uint32_t d = c >= '0' && c <= '9' ? uint32_t(c - '0')
                   : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? uint32_t((c | 0x20) - 'a' + 10)
                                                             : 99;
      if (d >= base)
        throw InputError(where + "'" + clip(s) + "' is not a " +
                         (base == 10 ? "decimal" : base == 16 ? "hex" : base == 8 ? "octal" : "binary") + " number");
      if (!x.mul_add(base, d)) x.w = {~0ull, ~0ull, ~0ull, ~0ull};  // past 2^256: surely not below p
    }
  }

  const Manifest& m_;
  std::vector<Value> out_;
  std::vector<bool> set_;
};

}  // namespace

std::vector<Value> parse_inputs(const json& in, const Manifest& m) { return Parser(m).run(in); }

std::vector<Value> read_inputs_file(const std::string& path, const Manifest& m, uint64_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw InputError(path + ": cannot stat: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path + (S_ISDIR(st.st_mode) ? ": is a directory" : ": is not a regular file"));
  }
  if (uint64_t(st.st_size) > max_bytes) {
    ::close(fd);
    throw InputError(path + ": " + std::to_string(st.st_size) + " bytes, more than the limit of " +
                     std::to_string(max_bytes));
  }
  std::string text(size_t(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t r = ::pread(fd, text.data() + got, text.size() - got, off_t(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += size_t(r);
  }
  ::close(fd);
  text.resize(got);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(path + ": not JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const json::out_of_range&) {  // a number literal too large for a double, such as 1e400
    throw InputError(path + ": a number is out of range (give large values as decimal strings)");
  }
  try {
    return parse_inputs(j, m);
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
}

}  // namespace cuzk::witness
