// Running a compiled witness program fast. The runner lays the program out once, when it is made:
//   - each witness value is computed straight into its place in w, and every other value into a
//     register that is reused once its last reader has run, so that the working set stays small
//     enough for the caches however long the program is;
//   - circom's bit extraction, `(x >> k) & 1` (Num2Bits, the adders of SHA-256), becomes one
//     operation, and a value whose bits are taken several times leaves Montgomery form once;
//   - a product with a value known to be 0 or 1 (an extracted bit, a comparison, 1 - such a value)
//     is a choice, not a Montgomery multiplication: Num2Bits' and SHA-256's sums of bits times
//     powers of two, which are most of the products in bit-heavy circuits;
//   - each guard is checked right after its value is computed, so a refused input stops early, and
//     an assert of an equality (circom's `===`, checked by its generated code) compares the two
//     sides without making the equality's 0 or 1;
//   - the instructions are cut into chunks (kDefaultChunk) in program order. A value read only
//     inside the chunk that makes it lives in the chunk's registers (a few hundred, which stay in
//     L1); one read by a later chunk gets a place of its own.
// The semantics are program::apply's: only the layout and the fused forms are the runner's.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "witness/program.hpp"
#include "witness/program_eval.hpp"

namespace cuzk::witness {

template <class Fr>
class ProgramRunner {
 public:
  enum class Outcome {
    Ok,
    GuardFailed,  // the input takes another path through the generated code than the sample did
    Undefined,    // an operation circom's own code stops on (integer division by zero)
  };
  struct Result {
    Outcome outcome = Outcome::Ok;
    uint32_t where = 0;  // the guard, or the instruction that was undefined
  };

  static constexpr uint32_t kDefaultChunk = 2048;  // instructions
  // `chunk` is the chunk length in instructions (tests make it small).
  explicit ProgramRunner(const Program& p, uint32_t chunk = kDefaultChunk) : chunk_(std::max<uint32_t>(chunk, 1)) {
    lay_out(p);
  }

  // Evaluates the program on `inputs` (n_inputs values, normal form, each below p) and writes the
  // n_witness values, Montgomery form, to w. Unless the outcome is Ok, w holds partial results.
  // Safe to call from several threads at once (each call has its own registers).
  Result run(const Value* inputs, Fr* w) const {
    std::vector<Fr> arena(arena_size_), local(n_local_);
    for (uint32_t i = 0; i < n_inputs_; i++) arena[i] = to_fr<Fr>(inputs[i]);
    std::copy(consts_.begin(), consts_.end(), arena.begin() + n_inputs_);
    Result failed;
    for (uint32_t c = 0; c + 1 < chunk_begin_.size(); c++)
      if (!run_chunk(c, arena.data(), local.data(), w, &failed)) return failed;
    Fr* const base[3] = {arena.data(), nullptr, w};
    for (const Instr& c : copies_) base[c.dst >> kShift][c.dst & kIndex] = base[c.a >> kShift][c.a & kIndex];
    return Result{};
  }

  // The layout's figures, for benchmarks.
  size_t instructions() const { return code_.size() + copies_.size(); }
  uint32_t registers() const { return n_local_; }
  uint32_t shared_values() const { return arena_size_ - n_inputs_ - uint32_t(consts_.size()); }
  uint32_t chunks() const { return uint32_t(chunk_begin_.size() - 1); }

 private:
  // Instructions beyond the file's operations, made by the layout.
  enum : uint32_t {
    kBit = program::kOpCount,  // dst = bit b (an immediate) of a's integer: circom's (a >> b) & 1
    kToInt,                    // dst holds a's integer (normal-form limbs), read by the kIntBit after it
    kIntBit,                   // dst = bit b of the integer in a
    kSelect,                   // dst = a ? b : 0, for a known to be 0 or 1 (the product a * b)
    kGuardZero,                // a must be zero; dst is the guard's number
    kGuardNonzero,             // a must not be zero
    kGuardEqual,               // a must equal expect_[b]
    kGuardSame,                // a must equal b (a guard that a == b is true)
    kGuardDiffer,              // a must differ from b (a guard that a == b is false)
    kCopy,                     // dst = a
  };
  struct Instr {
    uint32_t op, dst, a, b;
  };
  // A location: the top two bits select the region, the rest is the index in it.
  static constexpr uint32_t kShift = 30, kIndex = (1u << kShift) - 1;
  static constexpr uint32_t kArena = 0u << kShift;  // inputs, constants, values read across chunks
  static constexpr uint32_t kLocal = 1u << kShift;  // the running chunk's registers
  static constexpr uint32_t kInW = 2u << kShift;    // w

  // Runs chunk c; false (with *failed set) where a guard fails or an operation is undefined.
  bool run_chunk(uint32_t c, Fr* arena, Fr* local, Fr* w, Result* failed) const {
    Fr* const base[3] = {arena, local, w};
    auto at = [&](uint32_t loc) -> Fr& { return base[loc >> kShift][loc & kIndex]; };
    bool undefined = false;
    for (uint32_t t = chunk_begin_[c]; t < chunk_begin_[c + 1]; t++) {
      const Instr& in = code_[t];
      switch (in.op) {
        case program::Add: at(in.dst) = at(in.a) + at(in.b); break;
        case program::Sub: at(in.dst) = at(in.a) - at(in.b); break;
        case program::Mul: at(in.dst) = at(in.a) * at(in.b); break;
        case program::Square: at(in.dst) = at(in.a) * at(in.a); break;
        case program::Neg: at(in.dst) = -at(in.a); break;
        case kBit: at(in.dst) = bit(at(in.a).to_plain().l, in.b); break;
        case kToInt: {
          const auto r = at(in.a).to_plain();
          std::memcpy(at(in.dst).l, r.l, sizeof r.l);
          break;
        }
        case kIntBit: at(in.dst) = bit(at(in.a).l, in.b); break;
        case kSelect: at(in.dst) = at(in.a).is_zero() ? Fr::zero() : at(in.b); break;
        case kGuardZero:
          if (!at(in.a).is_zero()) return *failed = Result{Outcome::GuardFailed, in.dst}, false;
          break;
        case kGuardNonzero:
          if (at(in.a).is_zero()) return *failed = Result{Outcome::GuardFailed, in.dst}, false;
          break;
        case kGuardEqual:
          if (at(in.a) != expect_[in.b]) return *failed = Result{Outcome::GuardFailed, in.dst}, false;
          break;
        case kGuardSame:
          if (at(in.a) != at(in.b)) return *failed = Result{Outcome::GuardFailed, in.dst}, false;
          break;
        case kGuardDiffer:
          if (at(in.a) == at(in.b)) return *failed = Result{Outcome::GuardFailed, in.dst}, false;
          break;
        default:
          at(in.dst) = program::apply<Fr>(in.op, at(in.a), at(in.b), undefined);
          if (undefined) return *failed = Result{Outcome::Undefined, t}, false;
      }
    }
    return true;
  }

  static Fr bit(const uint64_t* limbs, uint32_t k) {
    return (limbs[k / 64] >> (k % 64)) & 1 ? Fr::one() : Fr::zero();
  }
  static bool is_guard(uint32_t op) { return op >= kGuardZero && op <= kGuardDiffer; }
  // Whether the instruction reads b as a value (not an immediate, not unused).
  static bool reads_b(uint32_t op) {
    return op == kSelect || op == kGuardSame || op == kGuardDiffer || (op < program::kOpCount && binary(op));
  }
  static bool binary(uint32_t op) {
    switch (op) {
#define CUZK_OP_ARITY(name, arity) \
  case program::name: return arity == 2;
      CUZK_WITNESS_OPS(CUZK_OP_ARITY)
#undef CUZK_OP_ARITY
      default: return false;
    }
  }

  void lay_out(const Program& p) {
    if (std::memcmp(p.prime.data(), Fr::Params::MOD, sizeof p.prime) != 0)
      throw WitnessError("the witness program is over another field than this runner's");
    n_inputs_ = p.n_inputs;
    consts_.reserve(p.consts.size());
    for (const Value& v : p.consts) consts_.push_back(to_fr<Fr>(v));
    const uint32_t first = p.first_node();
    const uint64_t n_values = p.n_values();
    const unsigned bits = program::IntView<Fr>::get().bits;
    auto const_small = [&](uint32_t v, uint64_t* out) {
      if (v < p.n_inputs || v >= first) return false;
      const Value& c = p.consts[v - p.n_inputs];
      if (c[1] | c[2] | c[3]) return false;
      *out = c[0];
      return true;
    };

    // 1. Each node as an instruction over value numbers, bit extractions and products with bits
    //    fused.
    std::vector<Instr> node(p.nodes.size());
    std::vector<uint8_t> boolean(n_values, 0);
    for (uint32_t v = p.n_inputs; v < first; v++) {
      uint64_t c = 0;
      boolean[v] = const_small(v, &c) && c <= 1;
    }
    for (size_t i = 0; i < p.nodes.size(); i++) {
      const ProgramNode& n = p.nodes[i];
      Instr in{n.op, uint32_t(first + i), n.a, n.b};
      uint64_t one = 0;
      if (n.op == program::Band) {
        uint32_t x = UINT32_MAX;
        if (const_small(n.b, &one) && one == 1) x = n.a;
        else if (const_small(n.a, &one) && one == 1) x = n.b;
        if (x != UINT32_MAX) {
          uint64_t k = 0;
          in = Instr{kBit, in.dst, x, 0};
          if (x >= first && p.nodes[x - first].op == program::Shr && const_small(p.nodes[x - first].b, &k) && k < bits)
            in = Instr{kBit, in.dst, p.nodes[x - first].a, uint32_t(k)};
        }
      }
      // Values known to be 0 or 1, and products with them.
      switch (in.op) {
        case kBit:
        case program::Eq:
        case program::Neq:
        case program::Lt:
        case program::Gt:
        case program::Leq:
        case program::Geq:
        case program::Land:
        case program::Lor:
        case program::Lnot: boolean[in.dst] = 1; break;
        case program::Mul:
          if (boolean[in.a] || boolean[in.b]) {
            if (!boolean[in.a]) std::swap(in.a, in.b);
            boolean[in.dst] = boolean[in.b];
            in.op = kSelect;
          }
          break;
        case program::Sub:
          if (const_small(in.a, &one) && one == 1 && boolean[in.b]) boolean[in.dst] = 1;
          break;
        default: break;
      }
      node[i] = in;
    }

    // Guards as instructions; an equality's guard compares its two sides.
    std::vector<Instr> guard(p.guards.size());
    for (uint32_t g = 0; g < p.guards.size(); g++) {
      const ProgramGuard& gd = p.guards[g];
      const uint32_t v = gd.value;
      const bool eq = v >= first && node[v - first].op == program::Eq && gd.kind != program::kMustEqual;
      if (eq) {
        guard[g] = Instr{gd.kind == program::kMustBeNonzero ? kGuardSame : kGuardDiffer, g, node[v - first].a,
                         node[v - first].b};
      } else if (gd.kind == program::kMustEqual) {
        expect_.push_back(to_fr<Fr>(gd.expect));
        guard[g] = Instr{kGuardEqual, g, v, uint32_t(expect_.size() - 1)};
      } else {
        guard[g] = Instr{gd.kind == program::kMustBeZero ? kGuardZero : kGuardNonzero, g, v, 0};
      }
    }

    // 2. What reaches a witness value or a guard.
    std::vector<uint8_t> needed(n_values, 0);
    for (uint32_t v : p.outputs) needed[v] = 1;
    for (const Instr& g : guard) {
      needed[g.a] = 1;
      if (reads_b(g.op)) needed[g.b] = 1;
    }
    for (size_t i = node.size(); i-- > 0;) {
      if (!needed[first + i]) continue;
      needed[node[i].a] = 1;
      if (reads_b(node[i].op)) needed[node[i].b] = 1;
    }

    // 3. A value whose bits are taken more than once leaves Montgomery form once (kToInt); its
    //    integer is a value of its own, numbered after the program's.
    std::vector<uint32_t> bit_uses(n_values, 0), int_of(n_values, UINT32_MAX);
    for (size_t i = 0; i < node.size(); i++)
      if (needed[first + i] && node[i].op == kBit) bit_uses[node[i].a]++;
    uint64_t n_all = n_values;
    for (uint64_t v = 0; v < n_values; v++)
      if (bit_uses[v] > 1) int_of[v] = uint32_t(n_all++);
    if (n_all >= kIndex) throw WitnessError("the witness program is too large to lay out");

    // 4. The order: guards and integers of inputs and constants first, then each node followed by
    //    its integer and its guards.
    std::vector<std::vector<uint32_t>> guards_of_node(p.nodes.size());
    std::vector<Instr> seq;  // over value numbers
    auto after_value = [&](uint32_t v) {
      if (int_of[v] != UINT32_MAX) seq.push_back(Instr{kToInt, int_of[v], v, 0});
    };
    for (uint32_t v = 0; v < first; v++) after_value(v);
    for (uint32_t g = 0; g < p.guards.size(); g++) {
      if (p.guards[g].value < first) seq.push_back(guard[g]);
      else guards_of_node[p.guards[g].value - first].push_back(g);
    }
    for (size_t i = 0; i < node.size(); i++) {
      if (needed[first + i]) {
        Instr in = node[i];
        if (in.op == kBit && int_of[in.a] != UINT32_MAX) in = Instr{kIntBit, in.dst, int_of[in.a], in.b};
        seq.push_back(in);
        after_value(uint32_t(first + i));
      }
      for (uint32_t g : guards_of_node[i]) seq.push_back(guard[g]);  // where the guarded value was made
    }

    // 5. Places: a node that is a witness value is computed into w (its first wire; other wires
    //    holding the same value are copied at the end, as are inputs and constants). Another value
    //    read only in the chunk that makes it gets one of that chunk's registers, freed after its
    //    last reader; one read in a later chunk gets a place of its own in the arena.
    const uint32_t n_seq = uint32_t(seq.size());
    const uint32_t chunk = chunk_;
    auto chunk_of = [chunk](uint32_t t) { return t / chunk; };
    std::vector<uint32_t> loc(n_all, UINT32_MAX);
    for (uint32_t v = 0; v < first; v++) loc[v] = kArena | v;
    for (uint32_t j = 0; j < p.n_witness; j++) {
      const uint32_t v = p.outputs[j];
      if (v >= first && loc[v] == UINT32_MAX) loc[v] = kInW | j;
      else copies_.push_back(Instr{kCopy, kInW | j, v, 0});
    }
    auto reads = [&](const Instr& in, auto&& f) {
      f(in.a);
      if (reads_b(in.op)) f(in.b);
    };
    std::vector<uint32_t> def(n_all, UINT32_MAX), last(n_all, 0);
    for (uint32_t t = 0; t < n_seq; t++) {
      if (!is_guard(seq[t].op)) def[seq[t].dst] = last[seq[t].dst] = t;
      reads(seq[t], [&](uint32_t v) { last[v] = t; });
    }
    uint32_t n_shared = 0;
    for (uint64_t v = first; v < n_all; v++)
      if (def[v] != UINT32_MAX && loc[v] == UINT32_MAX && chunk_of(last[v]) != chunk_of(def[v]))
        loc[v] = kArena | (first + n_shared++);
    std::vector<uint32_t> free_regs;
    uint32_t n_regs = 0;
    code_.reserve(n_seq);
    for (uint32_t t = 0; t < n_seq; t++) {
      if (t % chunk == 0) {
        chunk_begin_.push_back(t);
        free_regs.clear();
        n_regs = 0;
      }
      const Instr& in = seq[t];
      Instr out = in;
      out.a = loc[in.a];
      if (reads_b(in.op)) out.b = loc[in.b];
      // Registers whose last reader is this instruction are free for its result.
      reads(in, [&](uint32_t v) {
        if (last[v] == t && (loc[v] >> kShift) == (kLocal >> kShift)) {
          free_regs.push_back(loc[v]);
          loc[v] = UINT32_MAX;  // freed once, even when read twice
        }
      });
      if (!is_guard(in.op)) {
        if (loc[in.dst] == UINT32_MAX) {
          if (free_regs.empty()) free_regs.push_back(kLocal | n_regs++);
          loc[in.dst] = free_regs.back();
          free_regs.pop_back();
          n_local_ = std::max(n_local_, n_regs);
        }
        out.dst = loc[in.dst];
      }
      code_.push_back(out);
    }
    chunk_begin_.push_back(n_seq);
    if (n_seq == 0) chunk_begin_ = {0, 0};
    for (Instr& c : copies_) c.a = loc[c.a];
    arena_size_ = first + n_shared;
  }

  uint32_t chunk_;
  uint32_t n_inputs_ = 0, arena_size_ = 0, n_local_ = 0;
  std::vector<Fr> consts_, expect_;
  std::vector<Instr> code_, copies_;
  std::vector<uint32_t> chunk_begin_;  // chunk c is code_[chunk_begin_[c], chunk_begin_[c + 1])
};

}  // namespace cuzk::witness
