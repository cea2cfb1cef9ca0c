// a = A*w and b = B*w from the zkey's section-4 coefficients, as two CSR matrices.
#include <stdexcept>
#include <string>

#include "hugepages.hpp"
#include "parallel.hpp"
#include "prover.hpp"

namespace cuzk {
namespace {

// Builds one CSR matrix from the coefficients of `matrix` by a counting pass and a placement pass;
// within a row the entries keep the zkey's order (the sum does not depend on it).
void build_csr(const ZKey& zk, uint32_t matrix, std::vector<uint32_t>& row_ptr, HugeVec<uint32_t>& col,
               HugeVec<Fr>& val) {
  row_ptr.assign(zk.domain_size + 1, 0);
  for (const ZKeyCoef& e : zk.coefs) {
    if (e.matrix != matrix) continue;
    if (e.constraint >= zk.domain_size || e.signal >= zk.n_vars)
      throw std::invalid_argument("zkey coefficient (matrix " + std::to_string(e.matrix) + ", constraint " +
                                  std::to_string(e.constraint) + ", signal " + std::to_string(e.signal) +
                                  ") is outside domainSize=" + std::to_string(zk.domain_size) +
                                  ", nVars=" + std::to_string(zk.n_vars));
    row_ptr[e.constraint + 1]++;
  }
  for (uint32_t i = 0; i < zk.domain_size; i++) row_ptr[i + 1] += row_ptr[i];
  resize_huge(col, row_ptr.back());
  resize_huge(val, row_ptr.back());
  std::vector<uint32_t> cursor(row_ptr.begin(), row_ptr.end() - 1);
  for (const ZKeyCoef& e : zk.coefs) {
    if (e.matrix != matrix) continue;
    uint32_t p = cursor[e.constraint]++;
    col[p] = e.signal;
    val[p] = e.value;
  }
}

// One row of M*w. Coefficients equal to one (most of them in circom output) skip the multiply.
Fr row_dot(const std::vector<uint32_t>& row_ptr, const HugeVec<uint32_t>& col, const HugeVec<Fr>& val,
           const Fr* w, size_t row, const Fr& one) {
  Fr acc = Fr::zero();
  for (uint32_t p = row_ptr[row]; p < row_ptr[row + 1]; p++) acc += val[p] == one ? w[col[p]] : val[p] * w[col[p]];
  return acc;
}

}  // namespace

ConstraintEvaluator ConstraintEvaluator::compile(const ZKey& zk) {
  ConstraintEvaluator ev;
  ev.n_rows = zk.domain_size;
  ev.n_vars = zk.n_vars;
  // A and B are independent: one thread each (the compile is otherwise a serial ~20 ms at 2^16).
  parallel_for(
      2,
      [&](size_t b, size_t e, size_t) {
        for (size_t m = b; m < e; m++)
          if (m == 0)
            build_csr(zk, 0, ev.a_row_ptr, ev.a_col, ev.a_val);
          else
            build_csr(zk, 1, ev.b_row_ptr, ev.b_col, ev.b_val);
      },
      2);
  return ev;
}

void ConstraintEvaluator::evaluate(const std::vector<Fr>& w, std::vector<Fr>& a, std::vector<Fr>& b,
                                   std::vector<Fr>& c) const {
  if (w.size() != n_vars)
    throw std::invalid_argument("witness has " + std::to_string(w.size()) + " values, the zkey expects nVars=" +
                                std::to_string(n_vars));
  resize_huge(a, n_rows);
  resize_huge(b, n_rows);
  resize_huge(c, n_rows);
  evaluate_into(w.data(), a.data(), b.data(), c.data());
}

void ConstraintEvaluator::evaluate_into(const Fr* w, Fr* a, Fr* b, Fr* c) const {
  const Fr one = Fr::one();
  parallel_for(n_rows, [&](size_t lo, size_t hi, size_t) {
    for (size_t i = lo; i < hi; i++) {
      a[i] = row_dot(a_row_ptr, a_col, a_val, w, i, one);
      b[i] = row_dot(b_row_ptr, b_col, b_val, w, i, one);
      c[i] = a[i] * b[i];
    }
  });
}

}  // namespace cuzk
