// Running a compiled witness program fast. The runner lays the program out once, when it is made:
//   - each witness value is computed straight into its place in w, and every other value into a
//     register that is reused once its last reader has run, so that the working set stays small
//     enough for the caches however long the program is;
//   - circom's bit extraction, `(x >> k) & 1` (Num2Bits, the adders of SHA-256), becomes one
//     operation, and a value whose bits are taken several times leaves Montgomery form once;
//   - a product with a value known to be 0 or 1 (an extracted bit, a comparison, 1 - such a value)
//     is a choice, not a Montgomery multiplication: Num2Bits' and SHA-256's sums of bits times
//     powers of two, which are most of the products in bit-heavy circuits. Such a choice added to
//     or subtracted from a sum is one instruction with it (x + (s ? y : 0)), and the choices are
//     made with masks, not branches, since the bits of a hash are unpredictable;
//   - identities of such a value s fold away: s * (s - 1) and s * (1 - s) are 0 and s * s is s,
//     x + 0 and x - 0 are x. Num2Bits asserts out * (out - 1) === 0 of every bit it makes; for a
//     bit the runner extracted, the assert always holds and costs nothing;
//   - a product with 2, 4, 8 or 16 (SHA-256's xors double their terms) is a few additions;
//   - each guard is checked in the chunk that computes its value, so a refused input stops early, and
//     an assert of an equality (circom's `===`, checked by its generated code) compares the two
//     sides without making the equality's 0 or 1;
//   - the instructions are cut into chunks (kDefaultChunk) in program order. A value read only
//     inside the chunk that makes it lives in the chunk's registers (a few hundred, which stay in
//     L1); one read by a later chunk gets a place of its own. Within a chunk, instructions of one
//     kind are put one after another where their operands allow, for the dispatch's branch.
// The layout is kept beside the program (layout.bin, save_layout): later processes map it
// (open_layout) instead of laying the program out again.
// The semantics are program::apply's: only the layout and the fused forms are the runner's.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
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
  // A product with 2^k for k up to this is k doublings; one costs a fifth to a tenth of a
  // Montgomery product.
  static constexpr uint32_t kMaxDoublings = 4;
  // `chunk` is the chunk length in instructions (tests make it small).
  explicit ProgramRunner(const Program& p, uint32_t chunk = kDefaultChunk) : chunk_(std::max<uint32_t>(chunk, 1)) {
    lay_out(p);
    view(consts_, expect_, code_, copies_, chunk_begin_);
  }
  ProgramRunner(const ProgramRunner&) = delete;
  ProgramRunner& operator=(const ProgramRunner&) = delete;

  // The layout kept in a file (program.hpp's layout.bin) for program `p_checksum` of the artefact
  // `key`: saved by the process that laid the program out, mapped by the next ones, which then do no
  // work per instruction before their first witness. open_layout returns nullptr (with *why) when
  // the file is absent or belongs to anything else.
  void save_layout(const std::string& path, const std::string& key, uint64_t p_checksum) const {
    write_layout(path, meta(key, p_checksum, {chunk_, n_inputs_, arena_size_, n_local_}),
                 {{c_.consts.p, c_.consts.n, sizeof(Fr)},
                  {c_.expect.p, c_.expect.n, sizeof(Fr)},
                  {c_.code.p, c_.code.n, sizeof(Instr)},
                  {c_.copies.p, c_.copies.n, sizeof(Instr)},
                  {c_.chunk_begin.p, c_.chunk_begin.n, sizeof(uint32_t)}});
  }
  static std::unique_ptr<ProgramRunner> open_layout(const std::string& path, const std::string& key,
                                                    uint64_t p_checksum, std::string* why = nullptr) {
    auto m = map_layout(path, meta(key, p_checksum, {}),
                        {sizeof(Fr), sizeof(Fr), sizeof(Instr), sizeof(Instr), sizeof(uint32_t)}, why);
    if (!m) return nullptr;
    std::unique_ptr<ProgramRunner> r(new ProgramRunner(kDefaultChunk));
    auto arr = [&](size_t i, auto& span) {
      span.p = static_cast<const std::remove_const_t<std::remove_reference_t<decltype(*span.p)>>*>(m->arrays[i].first);
      span.n = m->arrays[i].second;
    };
    arr(0, r->c_.consts);
    arr(1, r->c_.expect);
    arr(2, r->c_.code);
    arr(3, r->c_.copies);
    arr(4, r->c_.chunk_begin);
    const auto& cb = r->c_.chunk_begin;
    bool ok = m->scalars.size() == 4 && cb.n >= 2 && cb[0] == 0 && cb[cb.n - 1] == r->c_.code.n;
    for (size_t i = 1; ok && i < cb.n; i++) ok = cb[i - 1] <= cb[i];
    if (ok) {
      r->chunk_ = m->scalars[0], r->n_inputs_ = m->scalars[1], r->arena_size_ = m->scalars[2], r->n_local_ = m->scalars[3];
      ok = uint64_t(r->n_inputs_) + r->c_.consts.n <= r->arena_size_;
    }
    if (!ok) {
      if (why) *why = path + ": its sizes are inconsistent";
      return nullptr;
    }
    r->map_ = std::move(m->map);
    return r;
  }

  // Evaluates the program on `inputs` (n_inputs values, normal form, each below p) and writes the
  // n_witness values, Montgomery form, to w. Unless the outcome is Ok, w holds partial results.
  // Safe to call from several threads at once (each call has its own registers).
  Result run(const Value* inputs, Fr* w) const {
    std::vector<Fr> arena(arena_size_), local(n_local_);
    for (uint32_t i = 0; i < n_inputs_; i++) arena[i] = to_fr<Fr>(inputs[i]);
    std::copy(c_.consts.begin(), c_.consts.end(), arena.begin() + n_inputs_);
    Result failed;
    for (uint32_t c = 0; c + 1 < c_.chunk_begin.size(); c++)
      if (!run_chunk(c, arena.data(), local.data(), w, &failed)) return failed;
    Fr* const base[3] = {arena.data(), nullptr, w};
    for (const Instr& c : c_.copies) base[c.dst >> kShift][c.dst & kIndex] = base[c.a >> kShift][c.a & kIndex];
    return Result{};
  }

  // The layout's figures, for benchmarks.
  size_t instructions() const { return c_.code.size() + c_.copies.size(); }
  uint32_t registers() const { return n_local_; }
  uint32_t shared_values() const { return arena_size_ - n_inputs_ - uint32_t(c_.consts.size()); }
  uint32_t chunks() const { return uint32_t(c_.chunk_begin.size() - 1); }
  bool mapped() const { return map_ != nullptr; }  // the layout came from a file
  // How many instructions of each kind the layout made, most frequent first.
  std::vector<std::pair<uint64_t, std::string>> instruction_counts() const {
    std::vector<uint64_t> n(kOpsEnd, 0);
    for (const Instr& in : c_.code) n[in.op]++;
    n[kCopy] += c_.copies.size();
    std::vector<std::pair<uint64_t, std::string>> out;
    for (uint32_t op = 0; op < kOpsEnd; op++)
      if (n[op]) out.emplace_back(n[op], op < program::kOpCount ? program::op_name(op) : kNames[op - program::kOpCount]);
    std::sort(out.rbegin(), out.rend());
    return out;
  }

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
    kSelAdd,                   // dst = a + (b ? c : 0), for b known to be 0 or 1
    kSelSub,                   // dst = a - (b ? c : 0)
    kDouble,                   // dst = a * 2^b, for b <= kMaxDoublings: b additions, not a product
    kTable,                    // dst = bit (a + 2b + 4c) of table, for a, b, c known to be 0 or 1
    kDropped,                  // a guard that always holds (layout only)
    kOpsEnd,
  };
  static constexpr const char* kNames[uint32_t(kOpsEnd) - uint32_t(program::kOpCount)] = {
      "Bit", "ToInt", "IntBit", "Select", "GuardZero", "GuardNonzero", "GuardEqual", "GuardSame", "GuardDiffer",
      "Copy", "SelAdd", "SelSub", "Double", "Table", "Dropped"};
  struct Instr {
    uint32_t op, dst, a, b, c = 0;  // c: the third operand of kSelAdd, kSelSub and kTable
    uint32_t table = 0;             // kTable's truth table
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
    for (uint32_t t = c_.chunk_begin[c]; t < c_.chunk_begin[c + 1]; t++) {
      const Instr& in = c_.code[t];
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
        case kSelect: at(in.dst) = masked(at(in.b), at(in.a)); break;
        case kSelAdd: at(in.dst) = at(in.a) + masked(at(in.c), at(in.b)); break;
        case kSelSub: at(in.dst) = at(in.a) - masked(at(in.c), at(in.b)); break;
        case kTable: {
          const uint32_t k = nonzero(at(in.a)) | nonzero(at(in.b)) << 1 | nonzero(at(in.c)) << 2;
          at(in.dst) = with_mask(Fr::one(), uint64_t(0) - ((in.table >> k) & 1));
          break;
        }
        case kDouble: {
          Fr x = at(in.a);
          for (uint32_t k = 0; k < in.b; k++) x = x + x;
          at(in.dst) = x;
          break;
        }
        case kGuardZero:
          if (!at(in.a).is_zero()) return *failed = Result{Outcome::GuardFailed, in.dst}, false;
          break;
        case kGuardNonzero:
          if (at(in.a).is_zero()) return *failed = Result{Outcome::GuardFailed, in.dst}, false;
          break;
        case kGuardEqual:
          if (at(in.a) != c_.expect[in.b]) return *failed = Result{Outcome::GuardFailed, in.dst}, false;
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

  // Choices without branches: a hash's bits are as likely 0 as 1, and a mispredicted branch costs
  // more than the few limb operations.
  static Fr with_mask(const Fr& x, uint64_t mask) {
    Fr r;
    for (int i = 0; i < Fr::N; i++) r.l[i] = x.l[i] & mask;
    return r;
  }
  static Fr bit(const uint64_t* limbs, uint32_t k) {
    return with_mask(Fr::one(), uint64_t(0) - ((limbs[k / 64] >> (k % 64)) & 1));
  }
  static uint32_t nonzero(const Fr& s) {
    uint64_t any = 0;
    for (int i = 0; i < Fr::N; i++) any |= s.l[i];
    return any != 0;
  }
  // x if s is not zero, else 0 (s is 0 or 1).
  static Fr masked(const Fr& x, const Fr& s) { return with_mask(x, uint64_t(0) - nonzero(s)); }
  static bool is_guard(uint32_t op) { return op >= kGuardZero && op <= kGuardDiffer; }
  // Whether the instruction reads b as a value (not an immediate, not unused).
  static bool reads_b(uint32_t op) {
    return op == kSelect || op == kTable || op == kGuardSame || op == kGuardDiffer || reads_c(op) ||
           (op < program::kOpCount && binary(op));
  }
  static bool reads_c(uint32_t op) { return op == kSelAdd || op == kSelSub || op == kTable; }
  // Calls f on each value the instruction reads.
  template <class F>
  static void reads(const Instr& in, F&& f) {
    f(in.a);
    if (reads_b(in.op)) f(in.b);
    if (reads_c(in.op)) f(in.c);
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
    //    fused, identities folded: a node equal to an earlier value is that value (same[]), and
    //    every later reader reads the earlier value instead.
    std::vector<Instr> node(p.nodes.size());
    std::vector<uint8_t> boolean(n_values, 0);
    std::vector<uint32_t> same(n_values);
    // Values that an undefined operation (circom's integer division by zero) may reach: a fold
    // never drops the reading of one, so that the input still goes to the native generator.
    std::vector<uint8_t> may_fail(n_values, 0);
    uint32_t zero = UINT32_MAX;  // the constant 0, where the program has it
    for (uint32_t v = 0; v < n_values; v++) same[v] = v;
    for (uint32_t v = p.n_inputs; v < first; v++) {
      uint64_t c = 0;
      boolean[v] = const_small(v, &c) && c <= 1;
      if (boolean[v] && c == 0 && zero == UINT32_MAX) zero = v;
    }
    auto is_one = [&](uint32_t v) {
      uint64_t c = 0;
      return const_small(v, &c) && c == 1;
    };
    auto node_of = [&](uint32_t v) -> const Instr* { return v >= first ? &node[v - first] : nullptr; };
    uint32_t unit = UINT32_MAX;  // the constant 1, where the program has it
    for (uint32_t v = p.n_inputs; v < first && unit == UINT32_MAX; v++)
      if (is_one(v)) unit = v;

    // Small functions of values known to be 0 or 1. A sum or product over at most three such
    // values (circom's xor3, ch and maj of SHA-256, e.g. a * (1 - 2b - 2c + 4bc) + b + c - 2bc)
    // takes at most eight values, one for each assignment of its inputs, which the layout
    // computes exactly with small integers. Where all eight are 0 or 1, the value is itself 0 or
    // 1, and it is one table lookup instead of the instructions that made it.
    struct Fn {
      uint32_t s[3];  // the inputs, each 0 or 1
      uint32_t n;     // how many
      int8_t t[8];    // the value for each assignment k of the inputs (input j is bit j of k)
    };
    std::vector<Fn> fns;
    std::vector<uint32_t> fn_of(n_values, UINT32_MAX);
    const Value& prime = p.prime;
    // A value as a function: a small constant, an input of its own, or what the layout found.
    auto as_fn = [&](uint32_t v, Fn* f) {
      *f = Fn{};
      if (v >= p.n_inputs && v < first) {
        const Value& c = p.consts[v - p.n_inputs];
        const Value neg = program::u256::sub(prime, c);
        int64_t x;
        if (!(c[1] | c[2] | c[3]) && c[0] <= 127) x = int64_t(c[0]);
        else if (!(neg[1] | neg[2] | neg[3]) && neg[0] <= 128) x = -int64_t(neg[0]);
        else return false;
        for (int8_t& t : f->t) t = int8_t(x);
        return true;
      }
      if (boolean[v]) {
        *f = Fn{{v, 0, 0}, 1, {0, 1, 0, 1, 0, 1, 0, 1}};
        return true;
      }
      if (fn_of[v] == UINT32_MAX) return false;
      *f = fns[fn_of[v]];
      return true;
    };
    // The inputs of the function being made, and the value of input v under assignment k of them
    // (an input of an operand that is not one of them is a function of them).
    uint32_t in_s[6], in_n = 0;
    auto bit_of = [&](auto&& self, uint32_t v, uint32_t k) -> uint32_t {
      for (uint32_t j = 0; j < in_n; j++)
        if (in_s[j] == v) return (k >> j) & 1;
      const Fn& f = fns[fn_of[v]];
      uint32_t kv = 0;
      for (uint32_t j = 0; j < f.n; j++) kv |= self(self, f.s[j], k) << j;
      return uint32_t(f.t[kv]);
    };
    auto value_of = [&](const Fn& f, uint32_t k) {
      uint32_t kv = 0;
      for (uint32_t j = 0; j < f.n; j++) kv |= bit_of(bit_of, f.s[j], k) << j;
      return int64_t(f.t[kv]);
    };
    // The function of node op(a, b), or false.
    auto make_fn = [&](uint32_t op, uint32_t a, uint32_t b, Fn* out) {
      Fn fa, fb;
      if (!as_fn(a, &fa) || (op != program::Neg && !as_fn(b, &fb))) return false;
      if (op == program::Neg) fb = Fn{};
      in_n = 0;
      for (const Fn* f : {&fa, &fb})
        for (uint32_t j = 0; j < f->n; j++)
          if (std::find(in_s, in_s + in_n, f->s[j]) == in_s + in_n) in_s[in_n++] = f->s[j];
      // Too many inputs: drop one that is a function of the others (bc beside b and c).
      while (in_n > 3) {
        uint32_t drop = in_n;
        for (uint32_t j = 0; j < in_n && drop == in_n; j++) {
          if (fn_of[in_s[j]] == UINT32_MAX) continue;
          const Fn& f = fns[fn_of[in_s[j]]];
          bool within = true;
          for (uint32_t m = 0; m < f.n; m++)
            within &= f.s[m] != in_s[j] && std::find(in_s, in_s + in_n, f.s[m]) != in_s + in_n;
          if (within) drop = j;
        }
        if (drop == in_n) return false;
        in_s[drop] = in_s[--in_n];
      }
      *out = Fn{{in_s[0], in_s[1], in_s[2]}, in_n, {}};
      for (uint32_t k = 0; k < 8; k++) {
        const uint32_t kk = k & ((1u << in_n) - 1);  // the inputs beyond n are not read
        const int64_t x = value_of(fa, kk), y = value_of(fb, kk);
        const int64_t r = op == program::Add ? x + y : op == program::Sub ? x - y : op == program::Mul ? x * y : -x;
        if (r < -128 || r > 127) return false;
        out->t[k] = int8_t(r);
      }
      return true;
    };
    for (size_t i = 0; i < p.nodes.size(); i++) {
      const ProgramNode& n = p.nodes[i];
      Instr in{n.op, uint32_t(first + i), same[n.a], same[n.b]};
      may_fail[in.dst] = n.op == program::Idiv || n.op == program::Mod || may_fail[in.a] || (binary(n.op) && may_fail[in.b]);
      uint64_t one = 0;
      if (n.op == program::Band) {
        uint32_t x = UINT32_MAX;
        if (is_one(in.b)) x = in.a;
        else if (is_one(in.a)) x = in.b;
        if (x != UINT32_MAX) {
          uint64_t k = 0;
          in = Instr{kBit, in.dst, x, 0};
          const Instr* shr = node_of(x);
          if (shr && shr->op == program::Shr && const_small(shr->b, &k) && k < bits)
            in = Instr{kBit, in.dst, shr->a, uint32_t(k)};
        }
      }
      uint32_t is = UINT32_MAX;  // the earlier value this node equals
      if ((n.op == program::Add || n.op == program::Sub || n.op == program::Mul || n.op == program::Neg) &&
          !may_fail[in.dst]) {
        Fn f;
        if (make_fn(n.op, in.a, in.b, &f)) {
          fn_of[in.dst] = uint32_t(fns.size());
          fns.push_back(f);
          bool bits = true, same_t = true;
          uint32_t table = 0;
          for (uint32_t k = 0; k < 8; k++) {
            bits &= f.t[k] == 0 || f.t[k] == 1;
            same_t &= f.t[k] == f.t[0];
            table |= uint32_t(f.t[k] == 1) << k;
          }
          // A product of two such values, and 1 minus one, are made as they are (a choice).
          const bool plain = (n.op == program::Mul && boolean[in.a] && boolean[in.b]) ||
                             (n.op == program::Sub && is_one(in.a) && boolean[in.b]);
          // A constant is that constant (s * (s - 1) is 0), the identity of one input is it.
          if (bits && !plain) {
            boolean[in.dst] = 1;
            if (same_t) is = f.t[0] ? unit : zero;
            else if (f.n == 1 && f.t[0] == 0) is = f.s[0];
            else {
              node[i] = Instr{kTable, in.dst, f.s[0], f.s[f.n > 1 ? 1 : 0], f.s[f.n > 2 ? 2 : 0], table};
              continue;
            }
          }
        }
      }
      // Values known to be 0 or 1, and products with them.
      if (is == UINT32_MAX) switch (in.op) {
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
          } else if (const_small(in.a, &one) || const_small(in.b, &one)) {
            // A product with 2, 4, 8 or 16 (circom's 2 * x in SHA-256's xors) is a few doublings.
            const uint32_t x = const_small(in.a, &one) ? in.b : in.a;
            if (one >= 2 && (one & (one - 1)) == 0 && uint32_t(__builtin_ctzll(one)) <= kMaxDoublings)
              in = Instr{kDouble, in.dst, x, uint32_t(__builtin_ctzll(one))};
          }
          break;
        case program::Sub:
          if (const_small(in.a, &one) && one == 1 && boolean[in.b]) boolean[in.dst] = 1;
          break;
        default: break;
      }
      // Identities the tables leave: s * s = s for s in {0, 1}, s * 0 = 0, x + 0 = x - 0 = x.
      if (is == UINT32_MAX) {
        if (in.op == kSelect && !may_fail[in.a] && !may_fail[in.b]) {
          if (in.b == in.a) is = in.a;
          else if (in.a == zero || in.b == zero) is = zero;
        } else if (in.op == program::Add && in.a == zero) {
          is = in.b;
        } else if ((in.op == program::Add || in.op == program::Sub) && in.b == zero) {
          is = in.a;
        }
      }
      if (is != UINT32_MAX) {
        same[in.dst] = is;  // the node is never read, so never needed
        node[i] = Instr{kCopy, in.dst, is, 0};
        continue;
      }
      // A choice added to a sum, or subtracted from it, is made by the addition.
      if (in.op == program::Add || in.op == program::Sub) {
        const Instr* sb = node_of(in.b);
        const Instr* sa = node_of(in.a);
        if (sb && sb->op == kSelect) in = Instr{in.op == program::Add ? kSelAdd : kSelSub, in.dst, in.a, sb->a, sb->b};
        else if (in.op == program::Add && sa && sa->op == kSelect) in = Instr{kSelAdd, in.dst, in.b, sa->a, sa->b};
      }
      node[i] = in;
    }
    std::vector<uint32_t> outputs(p.outputs.size());
    for (size_t j = 0; j < outputs.size(); j++) outputs[j] = same[p.outputs[j]];

    // Guards as instructions; an equality's guard compares its two sides.
    std::vector<Instr> guard(p.guards.size());
    std::vector<uint32_t> guard_at(p.guards.size());  // the value after which the guard is checked
    for (uint32_t g = 0; g < p.guards.size(); g++) {
      const ProgramGuard& gd = p.guards[g];
      const uint32_t v = same[gd.value];
      const bool eq = v >= first && node[v - first].op == program::Eq && gd.kind != program::kMustEqual;
      if (eq) {
        const Instr& e = node[v - first];
        // A guard that two equal values are equal always holds (Num2Bits' out * (out - 1) === 0).
        guard[g] = e.a == e.b && gd.kind == program::kMustBeNonzero && !may_fail[e.a]
                       ? Instr{kDropped, g, 0, 0}
                       : Instr{gd.kind == program::kMustBeNonzero ? kGuardSame : kGuardDiffer, g, e.a, e.b};
      } else if (gd.kind == program::kMustBeZero && v == zero) {
        guard[g] = Instr{kDropped, g, 0, 0};
      } else if (gd.kind == program::kMustEqual) {
        expect_.push_back(to_fr<Fr>(gd.expect));
        guard[g] = Instr{kGuardEqual, g, v, uint32_t(expect_.size() - 1)};
      } else {
        guard[g] = Instr{gd.kind == program::kMustBeZero ? kGuardZero : kGuardNonzero, g, v, 0};
      }
      guard_at[g] = v;
    }

    // 2. What reaches a witness value or a guard.
    std::vector<uint8_t> needed(n_values, 0);
    for (uint32_t v : outputs) needed[v] = 1;
    for (const Instr& g : guard)
      if (g.op != kDropped) reads(g, [&](uint32_t v) { needed[v] = 1; });
    for (size_t i = node.size(); i-- > 0;)
      if (needed[first + i]) reads(node[i], [&](uint32_t v) { needed[v] = 1; });

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
      if (guard[g].op == kDropped) continue;
      if (guard_at[g] < first) seq.push_back(guard[g]);
      else guards_of_node[guard_at[g] - first].push_back(g);
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

    // 4b. Within each chunk, instructions of one kind run one after another wherever their
    //     operands allow (a list schedule that keeps the last kind while it can, otherwise takes
    //     the earliest ready instruction): the dispatch's indirect branch is then mostly predicted.
    //     Values are never overwritten, so only an instruction's operands order it.
    {
      std::vector<uint32_t> def_at(n_all, UINT32_MAX), pending(chunk_), first_user(chunk_ + 1), users;
      std::vector<std::vector<uint32_t>> ready(kOpsEnd);
      std::vector<size_t> head(kOpsEnd);
      std::vector<Instr> out;
      for (uint32_t w0 = 0; w0 < seq.size(); w0 += chunk_) {
        const uint32_t n = std::min<uint32_t>(chunk_, uint32_t(seq.size() - w0));
        for (uint32_t k = 0; k < n; k++)
          if (!is_guard(seq[w0 + k].op)) def_at[seq[w0 + k].dst] = k;
        // Users of each instruction of the window, as lists.
        std::fill(first_user.begin(), first_user.end(), 0);
        for (uint32_t k = 0; k < n; k++) {
          pending[k] = 0;
          reads(seq[w0 + k], [&](uint32_t v) {
            if (def_at[v] != UINT32_MAX && def_at[v] < k) first_user[def_at[v] + 1]++, pending[k]++;
          });
        }
        for (uint32_t k = 0; k < n; k++) first_user[k + 1] += first_user[k];
        users.resize(first_user[n]);
        {
          std::vector<uint32_t> fill(first_user.begin(), first_user.begin() + n);
          for (uint32_t k = 0; k < n; k++)
            reads(seq[w0 + k], [&](uint32_t v) {
              if (def_at[v] != UINT32_MAX && def_at[v] < k) users[fill[def_at[v]]++] = k;
            });
        }
        for (auto& r : ready) r.clear();
        std::fill(head.begin(), head.end(), 0);
        for (uint32_t k = 0; k < n; k++)
          if (!pending[k]) ready[seq[w0 + k].op].push_back(k);
        out.clear();
        uint32_t last = UINT32_MAX;
        for (uint32_t done = 0; done < n; done++) {
          // Lists are in the order instructions became ready, not by position, so the earliest
          // ready one is the smallest head.
          if (last == UINT32_MAX || head[last] == ready[last].size()) {
            last = UINT32_MAX;
            for (uint32_t op = 0; op < kOpsEnd; op++)
              if (head[op] < ready[op].size() && (last == UINT32_MAX || ready[op][head[op]] < ready[last][head[last]]))
                last = op;
          }
          const uint32_t k = ready[last][head[last]++];
          out.push_back(seq[w0 + k]);
          for (uint32_t u = first_user[k]; u < first_user[k + 1]; u++)
            if (--pending[users[u]] == 0) ready[seq[w0 + users[u]].op].push_back(users[u]);
        }
        std::copy(out.begin(), out.end(), seq.begin() + w0);
        for (uint32_t k = 0; k < n; k++)
          if (!is_guard(out[k].op)) def_at[out[k].dst] = UINT32_MAX;
      }
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
      const uint32_t v = outputs[j];
      if (v >= first && loc[v] == UINT32_MAX) loc[v] = kInW | j;
      else copies_.push_back(Instr{kCopy, kInW | j, v, 0});
    }
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
      if (reads_c(in.op)) out.c = loc[in.c];
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

  explicit ProgramRunner(uint32_t chunk) : chunk_(chunk) {}
  static LayoutMeta meta(const std::string& key, uint64_t p_checksum, std::vector<uint32_t> scalars) {
    LayoutMeta m;
    m.key = key;
    m.program_checksum = p_checksum;
    std::memcpy(m.prime.data(), Fr::Params::MOD, sizeof m.prime);
    m.scalars = std::move(scalars);
    return m;
  }
  template <class T>
  struct Span {
    const T* p = nullptr;
    size_t n = 0;
    const T* begin() const { return p; }
    const T* end() const { return p + n; }
    size_t size() const { return n; }
    const T& operator[](size_t i) const { return p[i]; }
  };
  // What run() reads: the vectors lay_out made, or the mapped file.
  struct Code {
    Span<Fr> consts, expect;
    Span<Instr> code, copies;
    Span<uint32_t> chunk_begin;  // chunk c is code[chunk_begin[c], chunk_begin[c + 1])
  };
  void view(const std::vector<Fr>& consts, const std::vector<Fr>& expect, const std::vector<Instr>& code,
            const std::vector<Instr>& copies, const std::vector<uint32_t>& chunk_begin) {
    c_ = Code{{consts.data(), consts.size()},
              {expect.data(), expect.size()},
              {code.data(), code.size()},
              {copies.data(), copies.size()},
              {chunk_begin.data(), chunk_begin.size()}};
  }

  uint32_t chunk_;
  uint32_t n_inputs_ = 0, arena_size_ = 0, n_local_ = 0;
  // What lay_out makes.
  std::vector<Fr> consts_, expect_;
  std::vector<Instr> code_, copies_;
  std::vector<uint32_t> chunk_begin_;
  Code c_;
  std::shared_ptr<const void> map_;  // a layout file, mapped
};

}  // namespace cuzk::witness
