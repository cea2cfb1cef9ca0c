// The benchmark circuit generator: a satisfiable R1CS whose snarkjs domain is exactly 2^log_n, with
// the texture of a real circuit (see GenProfile), and its witness.
//
// Layout: wire 0 = 1, wire 1 = the public output, wire 2 = the public input, wires 3..4 = private
// inputs, then the blocks' wires; the last constraint defines the output from the last wire.
// nC = 2^log_n - 3 so that nC + nPublic + 1 = 2^log_n. Constraints are generated in blocks, each
// from its own PRNG stream derived from (seed, block), so the circuit depends only on the seed, never
// on the thread count. In the circom profile every row defines exactly one new wire.
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

// One block of rows with its own wire numbers: a wire below kFirstInternal is the circuit's (the
// constant, the public and the private inputs, whose values w[0..4] hold), wire kFirstInternal + j
// is the block's j-th new wire, with value w[kFirstInternal + j]. The blocks' wires are laid out one
// block after the other when the circuit is assembled.
struct Block {
  std::vector<Constraint> rows;
  std::vector<Fr> w;
};

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

// The circom profile: `rows` constraints, row c defining the block's wire kFirstInternal + c.
// Gadgets, picked at random while they fit in the block:
//   Num2Bits(k): k rows b*(b-1) = 0 and one packing row (sum 2^i b_i) * 1 = x (a dense row);
//   multiplication x*y = z of recent values;
//   S-box (x+k)^5 with a full-size round constant: three rows;
//   mux s*(y-x) = out - x on a recent bit s;
//   mixing row (m1 x + m2 y + m3 z) * (t + k) = out with full-size coefficients (Poseidon's MDS).
static void circom_block(uint64_t seed, size_t block, uint32_t rows, Block& out) {
  Rng rng(seed, block + 1);
  std::vector<Constraint>& cons = out.rows;
  std::vector<Fr>& w = out.w;
  cons.resize(rows);
  w.resize(kFirstInternal + rows, Fr::zero());  // one new wire per row
  const uint32_t c1 = rows;
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

  uint32_t c = 0;
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


// The porep profile: the texture of a Filecoin PoRep partition, whose witness is overwhelmingly
// bits. Most rows are SHA-256 compression rounds over bit-decomposed 32-bit words, as bellman's
// SHA-256 gadget lays them out; a few are Merkle path levels hashed with a Poseidon-like S-box, which
// carry the full-size values. Per row kind (a, b, c are bit wires, k a constant):
//   xor:    (2a) * b = a + b - c                   Sigma/sigma functions: two per bit (one for SHR)
//   ch:     e * (f - g) = ch - g
//   maj:    t = a*b, u = a xor b, c * u = maj - t  (three rows)
//   add:    32 result bits and the carry bits, each r * (r - 1) = 0, then one packing row
//           (sum_words sum_i 2^i w_i + k) * 1 = sum_i 2^i r_i + 2^32 sum_j 2^j carry_j (dense; defines no wire)
//   Merkle: the path bit, the sibling (a wire with no row, as circom leaves inputs), left/right by a
//           mux on the bit, two S-box rounds (x+k)^5 and two mixing rows with full-size constants.
// A compression round with its message-schedule word is 544 rows. Merkle levels (11 rows each) are
// added as the block grows so that 6% of its wires are theirs, nearly all of them full-size.
struct Word {
  uint32_t v;
  uint32_t bit[32];  // wire of bit i (little-endian)
};

struct PorepBlock {
  Rng rng;
  Block& out;
  uint32_t room;
  const Fr one = Fr::one(), minus_one = -Fr::one();

  uint32_t wire(const Fr& v) {
    out.w.push_back(v);
    return (uint32_t)out.w.size() - 1;
  }
  void row(std::vector<LinearTerm> a, std::vector<LinearTerm> b, std::vector<LinearTerm> c) {
    out.rows.push_back(Constraint{std::move(a), std::move(b), std::move(c)});
    room--;
  }
  Fr bitval(uint32_t x, int i) const { return (x >> i) & 1 ? one : Fr::zero(); }
  // A bit wire constrained by b * (b - 1) = 0.
  uint32_t boolean(bool v) {
    uint32_t b = wire(v ? one : Fr::zero());
    row({{b, one}}, {{b, one}, {0, minus_one}}, {});
    return b;
  }
  uint32_t xor2(uint32_t a, uint32_t b) {
    uint32_t c = wire(out.w[a] == out.w[b] ? Fr::zero() : one);
    row({{a, Fr::from_u64(2)}}, {{b, one}}, {{a, one}, {b, one}, {c, minus_one}});
    return c;
  }
  Word input_word() {
    Word x{(uint32_t)rng.next(), {}};
    for (int i = 0; i < 32; i++) x.bit[i] = boolean((x.v >> i) & 1);
    return x;
  }
  // ROTR(x, r1) ^ ROTR(x, r2) ^ (shr ? SHR(x, r3) : ROTR(x, r3)).
  Word sigma(const Word& x, int r1, int r2, int r3, bool shr) {
    auto rotr = [](uint32_t v, int r) { return (v >> r) | (v << (32 - r)); };
    Word y{rotr(x.v, r1) ^ rotr(x.v, r2) ^ (shr ? x.v >> r3 : rotr(x.v, r3)), {}};
    for (int i = 0; i < 32; i++) {
      uint32_t t = xor2(x.bit[(i + r1) % 32], x.bit[(i + r2) % 32]);
      y.bit[i] = shr && i + r3 >= 32 ? t : xor2(t, x.bit[(i + r3) % 32]);
    }
    return y;
  }
  Word ch(const Word& e, const Word& f, const Word& g) {
    Word y{(e.v & f.v) ^ (~e.v & g.v), {}};
    for (int i = 0; i < 32; i++) {
      y.bit[i] = wire(bitval(y.v, i));
      row({{e.bit[i], one}}, {{f.bit[i], one}, {g.bit[i], minus_one}}, {{y.bit[i], one}, {g.bit[i], minus_one}});
    }
    return y;
  }
  Word maj(const Word& a, const Word& b, const Word& c) {
    Word y{(a.v & b.v) ^ (a.v & c.v) ^ (b.v & c.v), {}};
    for (int i = 0; i < 32; i++) {
      uint32_t t = wire(bitval(a.v & b.v, i));
      row({{a.bit[i], one}}, {{b.bit[i], one}}, {{t, one}});
      uint32_t u = xor2(a.bit[i], b.bit[i]);
      y.bit[i] = wire(bitval(y.v, i));
      row({{c.bit[i], one}}, {{u, one}}, {{y.bit[i], one}, {t, minus_one}});
    }
    return y;
  }
  // (sum of the words + k) mod 2^32.
  Word add(std::initializer_list<const Word*> xs, uint32_t k) {
    uint64_t sum = k;
    for (const Word* x : xs) sum += x->v;
    Word y{(uint32_t)sum, {}};
    for (int i = 0; i < 32; i++) y.bit[i] = boolean((y.v >> i) & 1);
    int carry_bits = 0;
    while ((uint64_t(1) << carry_bits) < xs.size() + (k ? 1 : 0)) carry_bits++;
    std::vector<LinearTerm> lhs, rhs;
    lhs.reserve(32 * xs.size() + 1);
    rhs.reserve(32 + carry_bits);
    Fr pow2 = one;
    for (int i = 0; i < 32; i++, pow2 = pow2.dbl()) {
      for (const Word* x : xs) lhs.push_back({x->bit[i], pow2});
      rhs.push_back({y.bit[i], pow2});
    }
    if (k) lhs.push_back({0, Fr::from_u64(k)});
    for (int j = 0; j < carry_bits; j++, pow2 = pow2.dbl()) rhs.push_back({boolean((sum >> (32 + j)) & 1), pow2});
    row(std::move(lhs), {{0, one}}, std::move(rhs));
    return y;
  }
  // One Merkle level over the running hash `cur`: returns the parent.
  uint32_t merkle_level(uint32_t cur) {
    uint32_t sib = wire(rng.field());
    uint32_t bit = boolean(rng.next() & 1);
    const Fr vc = out.w[cur], vs = out.w[sib];
    uint32_t l = wire(out.w[bit] == one ? vs : vc);
    row({{bit, one}}, {{sib, one}, {cur, minus_one}}, {{l, one}, {cur, minus_one}});
    uint32_t r = wire(vc + vs - out.w[l]);
    row({{cur, one}, {sib, one}, {l, minus_one}}, {{0, one}}, {{r, one}});
    auto sbox_mix = [&](uint32_t x, uint32_t p, uint32_t q) {
      Fr k = rng.field(), xk = out.w[x] + k;
      uint32_t x2 = wire(xk.sqr());
      row({{x, one}, {0, k}}, {{x, one}, {0, k}}, {{x2, one}});
      uint32_t x4 = wire(out.w[x2].sqr());
      row({{x2, one}}, {{x2, one}}, {{x4, one}});
      uint32_t x5 = wire(out.w[x4] * xk);
      row({{x4, one}}, {{x, one}, {0, k}}, {{x5, one}});
      Fr m1 = rng.field(), m2 = rng.field(), m3 = rng.field();
      uint32_t y = wire(m1 * out.w[x5] + m2 * out.w[p] + m3 * out.w[q]);
      row({{x5, m1}, {p, m2}, {q, m3}}, {{0, one}}, {{y, one}});
      return y;
    };
    uint32_t u = sbox_mix(l, r, sib);
    return sbox_mix(u, r, l);
  }

  static constexpr uint32_t kRoundRows = 544, kMerkleRows = 11, kStartRows = 24 * 32;
  // The Merkle levels' share of the block's wires, kept as rows are added (the rest are bits).
  static constexpr double kFullShare = 0.06;
  uint32_t merkle_wires = 0;

  void balance(uint32_t& cur) {
    while (room >= kMerkleRows && merkle_wires < kFullShare * (out.w.size() - kFirstInternal)) {
      cur = merkle_level(cur);
      merkle_wires += 12;
    }
  }

  void run() {
    // The leaf, from the private inputs: (in3 + k1) * (in4 + k2) = leaf.
    Fr k1 = rng.field(), k2 = rng.field();
    uint32_t cur = wire((out.w[3] + k1) * (out.w[4] + k2));
    row({{3, one}, {0, k1}}, {{4, one}, {0, k2}}, {{cur, one}});
    if (room < kStartRows + kRoundRows) {  // too small for a compression: bits and Merkle levels
      while (room > 0) {
        boolean(rng.next() & 1);
        balance(cur);
      }
      return;
    }
    Word st[8], msg[16];
    for (Word& x : st) x = input_word();
    for (Word& x : msg) x = input_word();
    for (uint32_t t = 0; room >= kRoundRows + 4 * kMerkleRows; t++) {
      // Message schedule: W_t = sigma1(W_t-2) + W_t-7 + sigma0(W_t-15) + W_t-16 (ring of 16).
      Word s1 = sigma(msg[(t + 14) % 16], 17, 19, 10, true), s0 = sigma(msg[(t + 1) % 16], 7, 18, 3, true);
      Word wt = add({&s1, &msg[(t + 9) % 16], &s0, &msg[t % 16]}, 0);
      msg[t % 16] = wt;
      // Compression round with state a..h = st[0..7].
      Word S1 = sigma(st[4], 6, 11, 25, false), c = ch(st[4], st[5], st[6]);
      Word t1 = add({&st[7], &S1, &c, &wt}, (uint32_t)rng.next());
      Word S0 = sigma(st[0], 2, 13, 22, false), m = maj(st[0], st[1], st[2]);
      Word t2 = add({&S0, &m}, 0);
      Word e = add({&st[3], &t1}, 0), a = add({&t1, &t2}, 0);
      for (int j = 7; j > 0; j--) st[j] = st[j - 1];
      st[0] = a;
      st[4] = e;
      balance(cur);
    }
    // The rest of the block: Sigma functions of the state, then single XOR rows.
    while (room >= 64 + 2 * kMerkleRows) {
      Word& x = st[rng.below(8)];
      x = sigma(x, 2, 13, 22, false);
      balance(cur);
    }
    while (room > 0) {
      const Word& x = st[rng.below(8)];
      uint32_t i = rng.below(32);
      xor2(x.bit[i], x.bit[(i + 1) % 32]);
      balance(cur);
    }
  }
};

static void porep_block(uint64_t seed, size_t block, uint32_t rows, Block& out) {
  out.rows.reserve(rows);
  PorepBlock g{Rng(seed, block + 1), out, rows};
  g.run();
}

};  // struct Gen

}  // namespace

namespace groth16 {

const char* to_string(GenProfile p) { return p == GenProfile::porep ? "porep" : "circom"; }

GenProfile parse_gen_profile(const std::string& s) {
  if (s == "circom") return GenProfile::circom;
  if (s == "porep") return GenProfile::porep;
  throw std::invalid_argument("gen-circuit: unknown profile '" + s + "' (circom or porep)");
}

namespace {

// The circuit as blocks: each generated on its own from (seed, block), so that it depends only on
// the seed, never on the thread count. base[b]: the circuit's wire number of block b's first wire.
template <class C>
struct Blocks {
  using Fr = typename C::Fr;
  std::vector<typename Gen<C>::Block> blocks;
  std::vector<uint32_t> base;
  uint32_t n_wires = 0, n_cons = 0;
  Fr inputs[kFirstInternal];

  uint32_t global(size_t b, uint32_t wire) const {
    return wire < kFirstInternal ? wire : base[b] + (wire - kFirstInternal);
  }
};

template <class C>
Blocks<C> gen_blocks(GenProfile profile, int log_n, uint64_t seed) {
  using Fr = typename C::Fr;
  constexpr int max_log = std::min(28, C::FrParams::TWO_ADICITY - 1);  // the H stage's coset needs 2n
  if (log_n < 4 || log_n > max_log)
    throw std::invalid_argument("gen-circuit: log_n must be between 4 and " + std::to_string(max_log) + " for " +
                                C::display_name + ", got " + std::to_string(log_n));
  Blocks<C> g;
  g.n_cons = (uint32_t)((uint64_t(1) << log_n) - 3);  // + 2 public rows + 1 = the domain
  typename Gen<C>::Rng inputs(seed, 0);
  g.inputs[0] = Fr::one();
  g.inputs[1] = Fr::zero();  // the output, set once the last wire is known
  g.inputs[2] = inputs.field();
  g.inputs[3] = inputs.field();
  g.inputs[4] = inputs.field();

  // The porep profile's blocks are larger: each starts from 24 fresh input words.
  const size_t block_rows = profile == GenProfile::porep ? 32768 : kBlock;
  const uint32_t body = g.n_cons - 1;  // the last row defines the output
  const size_t n_blocks = (body + block_rows - 1) / block_rows;
  g.blocks.resize(n_blocks);
  parallel_for(n_blocks, [&](size_t b0, size_t b1, size_t) {
    for (size_t b = b0; b < b1; b++) {
      auto& blk = g.blocks[b];
      blk.w.assign(g.inputs, g.inputs + kFirstInternal);
      uint32_t rows = (uint32_t)(std::min<size_t>(body, (b + 1) * block_rows) - b * block_rows);
      if (profile == GenProfile::porep)
        Gen<C>::porep_block(seed, b, rows, blk);
      else
        Gen<C>::circom_block(seed, b, rows, blk);
    }
  });
  g.base.resize(n_blocks);
  uint64_t next = kFirstInternal;
  for (size_t b = 0; b < n_blocks; b++) {
    g.base[b] = (uint32_t)next;
    next += g.blocks[b].w.size() - kFirstInternal;
  }
  if (next > UINT32_MAX) throw std::invalid_argument("gen-circuit: too many wires");
  g.n_wires = (uint32_t)next;
  return g;
}

// The witness, and the last row: out = (the last internal wire) * (the public input).
template <class C>
typename groth16::Constraint<C> assemble_witness(const Blocks<C>& g, std::vector<typename C::Fr>& witness) {
  using Fr = typename C::Fr;
  resize_huge(witness, g.n_wires);
  std::copy(g.inputs, g.inputs + kFirstInternal, witness.begin());
  parallel_for(g.blocks.size(), [&](size_t b0, size_t b1, size_t) {
    for (size_t b = b0; b < b1; b++)
      std::copy(g.blocks[b].w.begin() + kFirstInternal, g.blocks[b].w.end(), witness.begin() + g.base[b]);
  });
  uint32_t last = g.n_wires - 1;
  witness[1] = witness[last] * witness[2];
  return {{{last, Fr::one()}}, {{2, Fr::one()}}, {{1, Fr::one()}}};
}

}  // namespace

template <class C>
void gen_circuit(int log_n, uint64_t seed, R1cs<C>& r1cs, std::vector<typename C::Fr>& witness, GenProfile profile) {
  Blocks<C> g = gen_blocks<C>(profile, log_n, seed);
  r1cs = R1cs<C>{};
  r1cs.n_pub_out = 1;
  r1cs.n_pub_in = 1;
  r1cs.n_prv_in = 2;
  r1cs.n_wires = g.n_wires;
  r1cs.n_labels = r1cs.n_wires;
  r1cs.constraints.resize(g.n_cons);
  std::vector<size_t> row0(g.blocks.size() + 1, 0);
  for (size_t b = 0; b < g.blocks.size(); b++) row0[b + 1] = row0[b] + g.blocks[b].rows.size();
  r1cs.constraints.back() = assemble_witness(g, witness);
  parallel_for(g.blocks.size(), [&](size_t b0, size_t b1, size_t) {
    for (size_t b = b0; b < b1; b++) {
      auto& rows = g.blocks[b].rows;
      for (size_t i = 0; i < rows.size(); i++) {
        for (auto* lc : {&rows[i].a, &rows[i].b, &rows[i].c})
          for (auto& t : *lc) t.wire = g.global(b, t.wire);
        r1cs.constraints[row0[b] + i] = std::move(rows[i]);
      }
      std::vector<groth16::Constraint<C>>().swap(rows);
    }
  });
}

template <class C>
GenShape gen_circuit_coefs(int log_n, uint64_t seed, GenProfile profile, HugeVec<ZKeyCoef<C>>& coefs,
                           std::vector<typename C::Fr>& witness) {
  Blocks<C> g = gen_blocks<C>(profile, log_n, seed);
  const groth16::Constraint<C> last = assemble_witness(g, witness);
  // Each block's A and B terms in row order, then the blocks one after the other.
  const size_t nb = g.blocks.size();
  std::vector<std::vector<ZKeyCoef<C>>> per(nb);
  std::vector<size_t> row0(nb + 1, 0);
  for (size_t b = 0; b < nb; b++) row0[b + 1] = row0[b] + g.blocks[b].rows.size();
  parallel_for(nb, [&](size_t b0, size_t b1, size_t) {
    for (size_t b = b0; b < b1; b++) {
      auto& rows = g.blocks[b].rows;
      for (size_t i = 0; i < rows.size(); i++) {
        uint32_t row = (uint32_t)(row0[b] + i);
        for (const auto& t : rows[i].a) per[b].push_back({0, row, g.global(b, t.wire), t.coeff});
        for (const auto& t : rows[i].b) per[b].push_back({1, row, g.global(b, t.wire), t.coeff});
      }
      std::vector<groth16::Constraint<C>>().swap(rows);
    }
  });
  std::vector<size_t> off(nb + 1, 0);
  for (size_t b = 0; b < nb; b++) off[b + 1] = off[b] + per[b].size();
  const uint32_t last_row = g.n_cons - 1;
  resize_huge(coefs, off[nb] + last.a.size() + last.b.size());
  parallel_for(nb, [&](size_t b0, size_t b1, size_t) {
    for (size_t b = b0; b < b1; b++) {
      std::copy(per[b].begin(), per[b].end(), coefs.begin() + off[b]);
      std::vector<ZKeyCoef<C>>().swap(per[b]);
    }
  });
  size_t k = off[nb];
  for (const auto& t : last.a) coefs[k++] = {0, last_row, t.wire, t.coeff};
  for (const auto& t : last.b) coefs[k++] = {1, last_row, t.wire, t.coeff};
  return {g.n_wires, g.n_cons, 2};
}

#define CUZK_GEN_CIRCUIT(C)                                                                                     \
  template void gen_circuit<C>(int, uint64_t, R1cs<C>&, std::vector<C::Fr>&, GenProfile);                      \
  template GenShape gen_circuit_coefs<C>(int, uint64_t, GenProfile, HugeVec<ZKeyCoef<C>>&, std::vector<C::Fr>&);
CUZK_GEN_CIRCUIT(Bls12_381)
CUZK_GEN_CIRCUIT(Bn254)

}  // namespace groth16
}  // namespace cuzk
