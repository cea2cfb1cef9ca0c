// The compiled constraint evaluator as one block of memory, the same in memory and in its cache
// file: a header page, then the six CSR arrays, each 64-byte aligned, so that a read-only mapping of
// the file is evaluated from in place. Internal to groth16/ and its tests.
#pragma once
#include <cstdint>
#include <string>

#include "binfile.hpp"
#include "prover.hpp"

namespace cuzk::csr_image {

constexpr char kMagic[8] = {'c', 'u', 'z', 'k', 'c', 's', 'r', '\0'};
// Bumped whenever the header, the layout or the representation of the values (Montgomery form of
// Fr, little-endian limbs) changes: a file of another version is rebuilt, never read.
constexpr uint32_t kVersion = 1;
constexpr uint64_t kHeaderBytes = 4096;

// A 128-bit XXH3 digest.
struct Digest {
  uint64_t lo = 0, hi = 0;
  bool operator==(const Digest&) const = default;
};

// The first bytes of the image. Counts only: the array offsets follow from them (layout()).
struct Header {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;  // kHeaderBytes
  uint32_t n_rows, n_vars;
  uint64_t a_nnz, b_nnz;
  uint64_t total_bytes;   // the whole image, header page included
  Digest zkey_id;         // zkey_identity() of the zkey compiled
  Digest body;            // blocked_hash() of the bytes [header_bytes, total_bytes)
  Digest header;          // XXH3-128 of every byte of this struct before this field
};
static_assert(sizeof(Header) <= kHeaderBytes);

// Byte offsets of the arrays from the start of the image, and its size.
struct Layout {
  uint64_t a_row_ptr, b_row_ptr, a_col, b_col, a_val, b_val, total;
};
Layout layout(uint32_t n_rows, uint64_t a_nnz, uint64_t b_nnz);

// The number of coefficients of A and of B.
// Every matrix value is one scalar-field element: 32 bytes on both curves.
constexpr uint64_t kValueBytes = 32;

template <class C>
void count_nnz(const groth16::ZKey<C>& zk, uint64_t& a_nnz, uint64_t& b_nnz);

// Writes the header's counts and the CSR arrays of zk into image (layout(zk.domain_size, a_nnz,
// b_nnz).total bytes); the digests are left for seal(). Throws std::invalid_argument for a
// coefficient outside the key's domain or wires.
template <class C>
void fill(const groth16::ZKey<C>& zk, uint64_t a_nnz, uint64_t b_nnz, uint8_t* image);

// Points ev's arrays into the image (whose header counts are trusted: check them first).
template <class C>
void attach(groth16::ConstraintEvaluator<C>& ev, const uint8_t* image);

// XXH3 of n bytes in 1 MiB blocks hashed on thread_count() threads, then the blocks' hashes hashed
// with n, so that verifying a cache file of gigabytes runs at the speed of all the worker's cores.
Digest blocked_hash(const uint8_t* p, uint64_t n);

// What identifies a zkey's matrices: a digest of its sections 1 (protocol), 2 (header: primes,
// counts, key points) and 4 (coefficients), ids and sizes included.
Digest zkey_identity(const binfile::Reader& zkey);

// Computes the body and header digests of a filled image into its header.
void seal(uint8_t* image);

// Why an image of `size` bytes must not be used for the zkey of identity `zkey_id` ("" when it is
// sound), in two steps so that a stale or foreign file is turned down before its body is read.
// The header: magic, version, header digest, identity, sizes.
std::string verify_header(const uint8_t* image, uint64_t size, const Digest& zkey_id);
// Then the body: its digest, and the arrays themselves (row pointers rising from 0 to nnz, columns
// below n_vars), since the evaluator indexes memory with them.
std::string verify_body(const uint8_t* image);

}  // namespace cuzk::csr_image
