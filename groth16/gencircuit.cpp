// The benchmark circuit generator: a satisfiable R1CS whose snarkjs domain is exactly 2^log_n, with
// the texture of circom output (sparse rows, range checks producing many 0/1 values, small packed
// integers, full-size products and Poseidon-like S-boxes with dense mixing rows), and its witness.
//
// Layout: wire 0 = 1, wire 1 = the public output, wire 2 = the public input, wires 3..4 = private
// inputs, and then exactly one new wire per constraint: constraint c < nC-1 defines wire 5 + c, and
// the last constraint defines the output. nC = 2^log_n - 3 so that nC + nPublic + 1 = 2^log_n.
// Constraints are generated in blocks of kBlock rows, each from its own PRNG stream derived from
// (seed, block), so the circuit depends only on the seed, never on the thread count.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "parallel.hpp"
#include "setup.hpp"

namespace cuzk {

namespace {

constexpr uint32_t kFirstInternal = 5;
constexpr size_t kBlock = 4096;

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Everything that handles field elements, for the curve C.
template <class C>
struct Gen {
using Fr = typename C::Fr;
using LinearTerm = groth16::LinearTerm<C>;
using Constraint = groth16::Constraint<C>;

// xoshiro256**: fast, small-state, good enough for benchmark data (not for secrets).
struct Rng {
  uint64_t s[4];
  Rng(uint64_t seed, uint64_t stream) {
    uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ull);
    for (auto& v : s) v = splitmix64(x);
  }
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t next() {
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
    return r;
  }
  uint32_t below(uint32_t n) { return (uint32_t)(((next() >> 32) * n) >> 32); }
  // Uniform field element: a value of r's bit length below r read as Montgomery limbs (a bijection
  // of Fr).
  Fr field() {
    for (;;) {
      u64 l[4] = {next(), next(), next(), next() >> (256 - Fr::Params::BITS)};
      if (Fr::is_canonical(l)) return Fr::from_mont_limbs(l);
    }
  }
  // +-1..16, the kind of small coefficient circom leaves in linear combinations.
  Fr small() {
    Fr v = Fr::from_u64(1 + below(16));
    return next() & 1 ? -v : v;
  }
};

static Fr eval(const std::vector<LinearTerm>& lc, const std::vector<Fr>& w) {
  Fr acc = Fr::zero();
  for (const LinearTerm& t : lc) acc += t.coeff * w[t.wire];
  return acc;
}

// Fills constraints [c0, c1) (each defining wire kFirstInternal + c) and their witness values.
// Gadgets, picked at random while they fit in the block:
//   Num2Bits(k): k rows b*(b-1) = 0 and one packing row (sum 2^i b_i) * 1 = x (a dense row);
//   multiplication x*y = z of recent values;
//   S-box (x+k)^5 with a full-size round constant: three rows;
//   mux s*(y-x) = out - x on a recent bit s;
//   mixing row (m1 x + m2 y + m3 z) * (t + k) = out with full-size coefficients (Poseidon's MDS).
static void gen_block(uint64_t seed, size_t block, uint32_t c0, uint32_t c1, std::vector<Constraint>& cons,
               std::vector<Fr>& w) {
  Rng rng(seed, block + 1);
  const Fr one = Fr::one(), minus_one = -Fr::one();
  uint32_t vals[16], bits[16];  // rings of recent value wires and bit wires
  size_t n_vals = 0, n_bits = 0;
  auto push_val = [&](uint32_t wire) { vals[n_vals++ % 16] = wire; };
  auto push_bit = [&](uint32_t wire) { bits[n_bits++ % 16] = wire; };
  auto recent = [&]() { return vals[rng.below((uint32_t)std::min<size_t>(n_vals, 16))]; };
  // k distinct recent values (ring entries are distinct wires); circom never repeats a wire inside
  // one linear combination, and snarkjs's `wtns check` would misread such a row.
  auto distinct = [&](uint32_t* out, uint32_t k) {
    uint32_t avail = (uint32_t)std::min<size_t>(n_vals, 16);
    for (uint32_t i = 0; i < k; i++) {
      uint32_t j = rng.below(avail - i), pick = 0;
      for (uint32_t r = 0; r < avail; r++) {  // the j-th ring slot not taken yet
        bool taken = false;
        for (uint32_t q = 0; q < i; q++) taken |= out[q] == vals[r];
        if (!taken && j-- == 0) {
          pick = vals[r];
          break;
        }
      }
      out[i] = pick;
    }
  };
  auto have = [&](uint32_t k) { return n_vals >= k; };
  // Defines wire(c) by a*b = c_coef*wire with c_coef = +-1, and sets its witness value.
  auto emit = [&](uint32_t c, std::vector<LinearTerm> a, std::vector<LinearTerm> b, bool negate_c = false) {
    uint32_t out = kFirstInternal + c;
    Fr ab = eval(a, w) * eval(b, w);
    w[out] = negate_c ? -ab : ab;
    cons[c] = Constraint{std::move(a), std::move(b), {{out, negate_c ? minus_one : one}}};
    return out;
  };

  uint32_t c = c0;
  // Seed the block from the private inputs with fresh full-size constants.
  push_val(emit(c++, {{3, one}, {0, rng.field()}}, {{4, one}, {0, rng.field()}}));
  while (c < c1) {
    uint32_t room = c1 - c, pick = rng.below(100);
    if (pick < 5) {
      static const uint32_t widths[] = {8, 8, 8, 8, 16, 16, 16, 32, 32, 64};
      uint32_t k = widths[rng.below(10)];
      if (k + 1 <= room) {
        uint64_t x = k == 64 ? rng.next() : rng.next() & ((uint64_t(1) << k) - 1);
        std::vector<LinearTerm> pack;
        pack.reserve(k);
        Fr pow2 = one;
        for (uint32_t i = 0; i < k; i++, c++) {
          uint32_t b = kFirstInternal + c;
          w[b] = (x >> i) & 1 ? one : Fr::zero();
          cons[c] = Constraint{{{b, one}}, {{b, one}, {0, minus_one}}, {}};
          pack.push_back({b, pow2});
          pow2 = pow2.dbl();
          push_bit(b);
        }
        push_val(emit(c++, std::move(pack), {{0, one}}));
        continue;
      }
    }
    if (pick >= 45 && pick < 70 && room >= 3) {
      uint32_t x = recent();
      Fr k = rng.field();
      uint32_t t = emit(c++, {{x, one}, {0, k}}, {{x, one}, {0, k}});
      uint32_t t2 = emit(c++, {{t, one}}, {{t, one}});
      push_val(emit(c++, {{t2, one}}, {{x, one}, {0, k}}));
    } else if (pick >= 70 && pick < 85 && n_bits && have(2)) {
      uint32_t xy[2];
      distinct(xy, 2);
      uint32_t s = bits[rng.below((uint32_t)std::min<size_t>(n_bits, 16))], x = xy[0], y = xy[1];
      uint32_t out = kFirstInternal + c;
      // s*(y - x) = out - x, so out = x or y.
      Fr sel = w[s] * (w[y] - w[x]);
      w[out] = sel + w[x];
      cons[c++] = Constraint{{{s, one}}, {{y, one}, {x, minus_one}}, {{out, one}, {x, minus_one}}};
      push_val(out);
    } else if (pick >= 85 && have(3)) {
      uint32_t xyz[3];
      distinct(xyz, 3);
      uint32_t t = recent();
      push_val(emit(c++, {{xyz[0], rng.field()}, {xyz[1], rng.field()}, {xyz[2], rng.field()}},
                    {{t, rng.small()}, {0, rng.field()}}, rng.next() & 1));
    } else {
      push_val(emit(c++, {{recent(), one}}, {{recent(), one}}, rng.next() & 1));
    }
  }
}

};  // struct Gen

}  // namespace

namespace groth16 {

template <class C>
void gen_circuit(int log_n, uint64_t seed, R1cs<C>& r1cs, std::vector<typename C::Fr>& witness) {
  using Fr = typename C::Fr;
  using Constraint = groth16::Constraint<C>;
  constexpr int max_log = std::min(28, C::FrParams::TWO_ADICITY - 1);  // the H stage's coset needs 2n
  if (log_n < 4 || log_n > max_log)
    throw std::invalid_argument("gen-circuit: log_n must be between 4 and " + std::to_string(max_log) + " for " +
                                C::display_name + ", got " + std::to_string(log_n));
  const uint32_t n_cons = (uint32_t)((uint64_t(1) << log_n) - 3);
  r1cs = R1cs<C>{};
  r1cs.n_pub_out = 1;
  r1cs.n_pub_in = 1;
  r1cs.n_prv_in = 2;
  r1cs.n_wires = kFirstInternal + n_cons - 1;
  r1cs.n_labels = r1cs.n_wires;
  r1cs.constraints.clear();
  r1cs.constraints.resize(n_cons);
  witness.assign(r1cs.n_wires, Fr::zero());

  typename Gen<C>::Rng inputs(seed, 0);
  witness[0] = Fr::one();
  witness[2] = inputs.field();
  witness[3] = inputs.field();
  witness[4] = inputs.field();

  const uint32_t body = n_cons - 1;  // the last row defines the output
  const size_t n_blocks = (body + kBlock - 1) / kBlock;
  parallel_for(n_blocks, [&](size_t b0, size_t b1, size_t) {
    for (size_t b = b0; b < b1; b++)
      Gen<C>::gen_block(seed, b, (uint32_t)(b * kBlock), (uint32_t)std::min<size_t>(body, (b + 1) * kBlock),
                r1cs.constraints, witness);
  });

  // out = (last internal wire) * public input.
  uint32_t last = kFirstInternal + body - 1;
  witness[1] = witness[last] * witness[2];
  r1cs.constraints[body] = Constraint{{{last, Fr::one()}}, {{2, Fr::one()}}, {{1, Fr::one()}}};
}

template void gen_circuit<Bls12_381>(int, uint64_t, R1cs<Bls12_381>&, std::vector<Bls12_381::Fr>&);
template void gen_circuit<Bn254>(int, uint64_t, R1cs<Bn254>&, std::vector<Bn254::Fr>&);

}  // namespace groth16
}  // namespace cuzk
