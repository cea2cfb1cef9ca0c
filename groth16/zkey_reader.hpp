// The zkey readers that synthesis needs, over a container the caller opened itself, so that it can
// map the key lazily and hash the very bytes it decodes (the evaluator cache). Internal to groth16/.
#pragma once
#include "binfile.hpp"
#include "formats.hpp"

namespace cuzk {

// As read_zkey_header / read_zkey_coefficients (formats.hpp), from an open "zkey" v1 container.
ZKeyHeader read_zkey_header(const binfile::Reader& r);
namespace groth16 {
template <class C>
ZKey<C> read_zkey_coefficients(const binfile::Reader& r);
}

}  // namespace cuzk
