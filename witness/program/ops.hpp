// The operations of a compiled witness program: circom's field operations (its runtime's Fr_*
// functions), numbered once for the tracer that records them and the evaluator that runs them. This
// header is compiled into cuzk and, as text, into every artefact's tracer: it includes nothing.
#pragma once

namespace cuzk::witness::program {

// X(name, arity). Numbers are part of the program file format: append only.
#define CUZK_WITNESS_OPS(X) \
  X(Input, 0)               \
  X(Const, 0)               \
  X(Add, 2)                 \
  X(Sub, 2)                 \
  X(Mul, 2)                 \
  X(Neg, 1)                 \
  X(Square, 1)              \
  X(Band, 2)                \
  X(Bor, 2)                 \
  X(Bxor, 2)                \
  X(Bnot, 1)                \
  X(Shl, 2)                 \
  X(Shr, 2)                 \
  X(Eq, 2)                  \
  X(Neq, 2)                 \
  X(Lt, 2)                  \
  X(Gt, 2)                  \
  X(Leq, 2)                 \
  X(Geq, 2)                 \
  X(Land, 2)                \
  X(Lor, 2)                 \
  X(Lnot, 1)                \
  X(Idiv, 2)                \
  X(Mod, 2)                 \
  X(Pow, 2)                 \
  X(Inv, 1)                 \
  X(Div, 2)

enum Op : unsigned {
#define CUZK_OP_ENUM(name, arity) name,
  CUZK_WITNESS_OPS(CUZK_OP_ENUM)
#undef CUZK_OP_ENUM
      kOpCount
};

// What a guard asks of a value when the program runs: the path the trace took depended on it.
enum GuardKind : unsigned {
  kMustBeZero = 0,     // a branch or assert saw it false
  kMustBeNonzero = 1,  // a branch or assert saw it true
  kMustEqual = 2,      // an index or loop bound was taken from it (Fr_toInt): exactly this value
};

// The trace file the tracer writes and the build reads (one host: native byte order).
inline constexpr char kTraceMagic[8] = {'C', 'Z', 'K', 'T', 'R', 'C', 'E', '1'};
inline constexpr char kSelftestMagic[8] = {'C', 'Z', 'K', 'S', 'T', 'S', 'T', '1'};

}  // namespace cuzk::witness::program
