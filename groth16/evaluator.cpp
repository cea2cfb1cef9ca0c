// a = A*w and b = B*w from the zkey's section-4 coefficients, as two CSR matrices laid out in one
// image (csr_image.hpp) that lives in memory of its own or in a mapped cache file.
#include <cstring>
#include <stdexcept>
#include <string>

#include "csr_image.hpp"
#include "hugepages.hpp"
#include "parallel.hpp"
#include "prover.hpp"

namespace cuzk {

namespace csr_image {

namespace {

constexpr uint64_t align64(uint64_t x) { return (x + 63) & ~uint64_t(63); }

// Builds one CSR matrix from the coefficients of `matrix` by a counting pass and a placement pass;
// within a row the entries keep the zkey's order (the sum does not depend on it).
template <class C>
void build_csr(const groth16::ZKey<C>& zk, uint32_t matrix, uint32_t* row_ptr, uint32_t* col, typename C::Fr* val) {
  std::memset(row_ptr, 0, (zk.domain_size + size_t(1)) * sizeof(uint32_t));
  for (const auto& e : zk.coefs) {
    if (e.matrix != matrix) continue;
    if (e.constraint >= zk.domain_size || e.signal >= zk.n_vars)
      throw std::invalid_argument("zkey coefficient (matrix " + std::to_string(e.matrix) + ", constraint " +
                                  std::to_string(e.constraint) + ", signal " + std::to_string(e.signal) +
                                  ") is outside domainSize=" + std::to_string(zk.domain_size) +
                                  ", nVars=" + std::to_string(zk.n_vars));
    row_ptr[e.constraint + 1]++;
  }
  for (uint32_t i = 0; i < zk.domain_size; i++) row_ptr[i + 1] += row_ptr[i];
  std::vector<uint32_t> cursor(row_ptr, row_ptr + zk.domain_size);
  for (const auto& e : zk.coefs) {
    if (e.matrix != matrix) continue;
    uint32_t p = cursor[e.constraint]++;
    col[p] = e.signal;
    val[p] = e.value;
  }
}

}  // namespace

Layout layout(uint32_t n_rows, uint64_t a_nnz, uint64_t b_nnz) {
  Layout L;
  uint64_t at = kHeaderBytes;
  auto take = [&](uint64_t bytes) {
    uint64_t off = at;
    at = align64(at + bytes);
    return off;
  };
  L.a_row_ptr = take((n_rows + uint64_t(1)) * sizeof(uint32_t));
  L.b_row_ptr = take((n_rows + uint64_t(1)) * sizeof(uint32_t));
  L.a_col = take(a_nnz * sizeof(uint32_t));
  L.b_col = take(b_nnz * sizeof(uint32_t));
  L.a_val = take(a_nnz * kValueBytes);
  L.b_val = take(b_nnz * kValueBytes);
  L.total = at;
  return L;
}

template <class C>
void count_nnz(const groth16::ZKey<C>& zk, uint64_t& a_nnz, uint64_t& b_nnz) {
  a_nnz = b_nnz = 0;
  for (const auto& e : zk.coefs) (e.matrix == 0 ? a_nnz : b_nnz)++;
}

template <class C>
void fill(const groth16::ZKey<C>& zk, uint64_t a_nnz, uint64_t b_nnz, uint8_t* image) {
  using Fr = typename C::Fr;
  static_assert(sizeof(Fr) == kValueBytes);
  if (a_nnz > UINT32_MAX || b_nnz > UINT32_MAX)
    throw std::invalid_argument("zkey has more than 2^32 - 1 coefficients in one matrix");
  const Layout L = layout(zk.domain_size, a_nnz, b_nnz);
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.header_bytes = kHeaderBytes;
  h.n_rows = zk.domain_size;
  h.n_vars = zk.n_vars;
  h.a_nnz = a_nnz;
  h.b_nnz = b_nnz;
  h.total_bytes = L.total;
  std::memset(image, 0, kHeaderBytes);
  std::memcpy(image, &h, sizeof h);
  auto at = [&](uint64_t off) { return image + off; };
  // A and B are independent: one thread each.
  parallel_for(
      2,
      [&](size_t b, size_t e, size_t) {
        for (size_t m = b; m < e; m++)
          if (m == 0)
            build_csr(zk, 0, (uint32_t*)at(L.a_row_ptr), (uint32_t*)at(L.a_col), (Fr*)at(L.a_val));
          else
            build_csr(zk, 1, (uint32_t*)at(L.b_row_ptr), (uint32_t*)at(L.b_col), (Fr*)at(L.b_val));
      },
      2);
  // The alignment gaps are part of the checksummed body: zero them.
  for (auto [end, next] : {std::pair{L.a_row_ptr + (zk.domain_size + uint64_t(1)) * 4, L.b_row_ptr},
                           {L.b_row_ptr + (zk.domain_size + uint64_t(1)) * 4, L.a_col},
                           {L.a_col + a_nnz * 4, L.b_col},
                           {L.b_col + b_nnz * 4, L.a_val},
                           {L.a_val + a_nnz * sizeof(Fr), L.b_val},
                           {L.b_val + b_nnz * sizeof(Fr), L.total}})
    std::memset(at(end), 0, next - end);
}

template <class C>
void attach(groth16::ConstraintEvaluator<C>& ev, const uint8_t* image) {
  using Fr = typename C::Fr;
  Header h;
  std::memcpy(&h, image, sizeof h);
  const Layout L = layout(h.n_rows, h.a_nnz, h.b_nnz);
  ev.n_rows = h.n_rows;
  ev.n_vars = h.n_vars;
  auto u32s = [&](uint64_t off, uint64_t n) { return std::span<const uint32_t>((const uint32_t*)(image + off), n); };
  auto frs = [&](uint64_t off, uint64_t n) { return std::span<const Fr>((const Fr*)(image + off), n); };
  ev.a_row_ptr = u32s(L.a_row_ptr, h.n_rows + uint64_t(1));
  ev.b_row_ptr = u32s(L.b_row_ptr, h.n_rows + uint64_t(1));
  ev.a_col = u32s(L.a_col, h.a_nnz);
  ev.b_col = u32s(L.b_col, h.b_nnz);
  ev.a_val = frs(L.a_val, h.a_nnz);
  ev.b_val = frs(L.b_val, h.b_nnz);
}

#define CUZK_CSR_IMAGE(C)                                                               \
  template void count_nnz<C>(const groth16::ZKey<C>&, uint64_t&, uint64_t&);          \
  template void fill<C>(const groth16::ZKey<C>&, uint64_t, uint64_t, uint8_t*);       \
  template void attach<C>(groth16::ConstraintEvaluator<C>&, const uint8_t*);
CUZK_CSR_IMAGE(Bls12_381)
CUZK_CSR_IMAGE(Bn254)
#undef CUZK_CSR_IMAGE

}  // namespace csr_image

namespace {

// One row of M*w. Coefficients equal to one (most of them in circom output) skip the multiply.
template <class Fr>
Fr row_dot(std::span<const uint32_t> row_ptr, std::span<const uint32_t> col, std::span<const Fr> val, const Fr* w,
           size_t row, const Fr& one) {
  Fr acc = Fr::zero();
  for (uint32_t p = row_ptr[row]; p < row_ptr[row + 1]; p++) acc += val[p] == one ? w[col[p]] : val[p] * w[col[p]];
  return acc;
}

}  // namespace

namespace groth16 {

template <class C>
ConstraintEvaluator<C> ConstraintEvaluator<C>::compile(const ZKey<C>& zk) {
  uint64_t a_nnz, b_nnz;
  csr_image::count_nnz(zk, a_nnz, b_nnz);
  auto image = std::make_shared<HugeVec<uint8_t>>();
  resize_huge(*image, csr_image::layout(zk.domain_size, a_nnz, b_nnz).total);
  csr_image::fill(zk, a_nnz, b_nnz, image->data());
  ConstraintEvaluator ev;
  csr_image::attach(ev, image->data());
  ev.storage = std::move(image);
  return ev;
}

template <class C>
void ConstraintEvaluator<C>::evaluate(const std::vector<Fr>& w, std::vector<Fr>& a, std::vector<Fr>& b,
                                   std::vector<Fr>& c) const {
  if (w.size() != n_vars)
    throw std::invalid_argument("witness has " + std::to_string(w.size()) + " values, the zkey expects nVars=" +
                                std::to_string(n_vars));
  resize_huge(a, n_rows);
  resize_huge(b, n_rows);
  resize_huge(c, n_rows);
  evaluate_into(w.data(), a.data(), b.data(), c.data());
}

template <class C>
void ConstraintEvaluator<C>::evaluate_into(const Fr* w, Fr* a, Fr* b, Fr* c) const {
  const Fr one = Fr::one();
  parallel_for_light(n_rows, [&](size_t lo, size_t hi, size_t) {
    for (size_t i = lo; i < hi; i++) {
      a[i] = row_dot(a_row_ptr, a_col, a_val, w, i, one);
      b[i] = row_dot(b_row_ptr, b_col, b_val, w, i, one);
      c[i] = a[i] * b[i];
    }
  });
}

template struct ConstraintEvaluator<Bls12_381>;
template struct ConstraintEvaluator<Bn254>;

}  // namespace groth16
}  // namespace cuzk
