// The header of a .wtns file checked at submission without reading all its values: the container
// (magic, version, section table against the file's size), the field (the scalar field of a curve
// cuzk proves on), the number of values, and the first value (w[0] must be 1). Reads a few dozen
// bytes whatever the file's size, and its messages never quote the file's bytes.
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "math/curves.hpp"

namespace cuzk::sup {

// Why a file is not a usable .wtns; the caller prefixes the field and path.
struct WtnsHeaderError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// read(off, buf, n): exactly n bytes at off, false when the file is shorter.
using ReadAt = std::function<bool(uint64_t off, void* buf, size_t n)>;

struct WtnsInfo {
  uint32_t count;  // nWitness
  CurveId curve;   // whose scalar field the values are in
};
// The witness's number of values and curve. size: the file's size in bytes.
WtnsInfo wtns_info(uint64_t size, const ReadAt& read);
// The same of a whole .wtns held in memory (an uploaded witness).
WtnsInfo wtns_info(std::string_view bytes);

}  // namespace cuzk::sup
