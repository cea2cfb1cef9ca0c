/* cuzk's glue around wasm2c's translation of a circom .wasm. It is not compiled with cuzk: the
 * artefact build includes it twice in the translated module (module name "circuit"), before the code
 * with the declarations its hooks call, and after it, with CUZK_WASM_GLUE_DEFINE, for the entry points
 * that wasm_driver.cpp calls. Both sides use only these C functions, so the driver is compiled once for
 * every circuit.
 *
 * The hooks the build writes: each call the generated code makes to circom's runtime (Fr_mul, ...)
 * goes through one, which calls the runtime itself unless cuzk_tracing is set, and the tracer's
 * cuzk_trace_* function (wasm_driver.cpp) when it is. Addresses are offsets into the module's memory. */
#ifndef CUZK_WASM_GLUE_DEFINE
#ifndef CUZK_WASM_GLUE_DECLARED
#define CUZK_WASM_GLUE_DECLARED
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern int cuzk_tracing;
void cuzk_trace_binary(void* inst, unsigned op, uint32_t r, uint32_t a, uint32_t b);
void cuzk_trace_unary(void* inst, unsigned op, uint32_t r, uint32_t a);
uint32_t cuzk_trace_is_true(void* inst, uint32_t a);
uint32_t cuzk_trace_to_int(void* inst, uint32_t a);
/* which: 0 Fr_toNormal, 1 Fr_toLongNormal, 2 Fr_toMontgomery (all in place) */
void cuzk_trace_normalize(void* inst, unsigned which, uint32_t a);
/* setInputSignal's own calls: reading the input value, and comparing it with its short form */
uint32_t cuzk_trace_input_to_int(void* inst, uint32_t a);
uint32_t cuzk_trace_input_eq(void* inst, uint32_t a, uint32_t b);

#define CUZK_HOOK_BINARY(F, OP)                                                                     \
  static void cuzk_hook_##F(Z_circuit_instance_t* i, u32 r, u32 a, u32 b) {                        \
    if (cuzk_tracing) cuzk_trace_binary(i, OP, r, a, b);                                            \
    else w2c_##F(i, r, a, b);                                                                       \
  }
#define CUZK_HOOK_UNARY(F, OP)                                                                      \
  static void cuzk_hook_##F(Z_circuit_instance_t* i, u32 r, u32 a) {                               \
    if (cuzk_tracing) cuzk_trace_unary(i, OP, r, a);                                                \
    else w2c_##F(i, r, a);                                                                          \
  }
#define CUZK_HOOK_VALUE(F, TRACE)                                                                   \
  static u32 cuzk_hook_##F(Z_circuit_instance_t* i, u32 a) { return cuzk_tracing ? TRACE(i, a) : w2c_##F(i, a); }
#define CUZK_HOOK_NORMALIZE(F, WHICH)                                                               \
  static void cuzk_hook_##F(Z_circuit_instance_t* i, u32 a) {                                       \
    if (cuzk_tracing) cuzk_trace_normalize(i, WHICH, a);                                            \
    else w2c_##F(i, a);                                                                             \
  }
#define CUZK_HOOK_INPUT_TO_INT(F)                                                                   \
  static u32 cuzk_input_##F(Z_circuit_instance_t* i, u32 a) {                                       \
    return cuzk_tracing ? cuzk_trace_input_to_int(i, a) : w2c_##F(i, a);                           \
  }
#define CUZK_HOOK_INPUT_EQ(F)                                                                       \
  static u32 cuzk_input_##F(Z_circuit_instance_t* i, u32 a, u32 b) {                                \
    return cuzk_tracing ? cuzk_trace_input_eq(i, a, b) : w2c_##F(i, a, b);                          \
  }
#endif
#else
/* The entry points. The module's imports are the driver's (Z_runtimeZ_*), and the instance is this
 * process's one. */
static Z_circuit_instance_t cuzk_instance;

#ifdef CUZK_NATIVE_MUL
/* circom's Montgomery product (Fr_F1m_mul: x * y / 2^256 mod q, on 256-bit values in the module's
 * memory) with 64-bit words instead of the wasm's 32-bit ones. Both compute t = (x y + M q) / 2^256
 * for the one M in [0, 2^256) that makes it exact, then subtract q once when t carries past 2^256 or
 * is at least q, so they agree bit for bit on every input; the build's translation renamed the
 * wasm's own to cuzk_wasm_Fr_F1m_mul, which runs instead until cuzk_native_setup has compared them. */
static uint64_t cuzk_q[4], cuzk_qinv; /* q, and -1/q mod 2^64 */
static int cuzk_native_mul;

static inline void cuzk_mont_mul(uint8_t* rp, const uint8_t* xp, const uint8_t* yp) {
  uint64_t x[4], y[4], t[6] = {0, 0, 0, 0, 0, 0};
  memcpy(x, xp, 32);
  memcpy(y, yp, 32);
  for (int i = 0; i < 4; i++) {
    unsigned __int128 c = 0;
    for (int j = 0; j < 4; j++) {
      c += (unsigned __int128)x[j] * y[i] + t[j];
      t[j] = (uint64_t)c;
      c >>= 64;
    }
    c += t[4];
    t[4] = (uint64_t)c;
    t[5] = (uint64_t)(c >> 64);
    const uint64_t m = t[0] * cuzk_qinv;
    c = (unsigned __int128)m * cuzk_q[0] + t[0];
    c >>= 64;
    for (int j = 1; j < 4; j++) {
      c += (unsigned __int128)m * cuzk_q[j] + t[j];
      t[j - 1] = (uint64_t)c;
      c >>= 64;
    }
    c += t[4];
    t[3] = (uint64_t)c;
    t[4] = t[5] + (uint64_t)(c >> 64);
  }
  int sub = t[4] != 0;
  if (!sub) {
    sub = 1; /* t >= q */
    for (int j = 3; j >= 0; j--)
      if (t[j] != cuzk_q[j]) {
        sub = t[j] > cuzk_q[j];
        break;
      }
  }
  if (sub) {
    unsigned __int128 b = 0;
    for (int j = 0; j < 4; j++) {
      b = (unsigned __int128)t[j] - cuzk_q[j] - (uint64_t)(b >> 127);
      t[j] = (uint64_t)b;
    }
  }
  memcpy(rp, t, 32);
}

static void w2c_Fr_F1m_mul(Z_circuit_instance_t* i, u32 x, u32 y, u32 r) {
  if (cuzk_native_mul) {
    uint8_t* m = Z_circuitZ_memory(i)->data;
    cuzk_mont_mul(m + r, m + x, m + y);
  } else {
    cuzk_wasm_Fr_F1m_mul(i, x, y, r);
  }
}

/* Takes q from the module, then uses the native product only if it gives the wasm's results on edge
 * and pseudo-random operands, reduced or not, in 96 bytes at the end of memory (put back after). */
static void cuzk_native_setup(Z_circuit_instance_t* inst) {
  wasm_rt_memory_t* mem = Z_circuitZ_memory(inst);
  if (Z_circuitZ_getFieldNumLen32(inst) != 8 || mem->size < 4096) return;
  Z_circuitZ_getRawPrime(inst);
  for (u32 j = 0; j < 8; j++)
    ((uint32_t*)cuzk_q)[j] = Z_circuitZ_readSharedRWMemory(inst, j); /* little-endian words */
  if (!(cuzk_q[0] & 1)) return;
  uint64_t inv = 1; /* 1/q mod 2^64 by Newton's iteration */
  for (int k = 0; k < 6; k++) inv *= 2 - cuzk_q[0] * inv;
  cuzk_qinv = (uint64_t)0 - inv;
  const u32 at = (u32)(mem->size - 96);
  uint8_t keep[96], want[32], got[32];
  memcpy(keep, mem->data + at, 96);
  uint64_t s = 0x9e3779b97f4a7c15ull, v[2][4];
  int ok = 1;
  for (int n = 0; n < 2048 && ok; n++) {
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < 4; j++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        const int edge = (int)(s >> 60); /* some operands at the edges: 0, 1, q - 1, q, 2^256 - 1 */
        v[k][j] = edge == 0 ? 0 : edge == 1 ? (j == 0) : edge == 2 ? cuzk_q[j] - (j == 0)
                : edge == 3 ? cuzk_q[j] : edge == 4 ? ~(uint64_t)0 : s;
      }
    if (n % 3) v[0][3] %= cuzk_q[3] + 1, v[1][3] %= cuzk_q[3] + 1; /* mostly below q */
    memcpy(mem->data + at, v[0], 32);
    memcpy(mem->data + at + 32, v[1], 32);
    cuzk_wasm_Fr_F1m_mul(inst, at, at + 32, at + 64);
    memcpy(want, mem->data + at + 64, 32);
    cuzk_mont_mul(got, mem->data + at, mem->data + at + 32);
    ok = memcmp(want, got, 32) == 0;
  }
  memcpy(mem->data + at, keep, 96);
  cuzk_native_mul = ok;
}
#endif

void* cuzk_wasm_instantiate(struct Z_runtime_instance_t* host) {
  wasm_rt_init();
  Z_circuit_init_module();
  Z_circuit_instantiate(&cuzk_instance, host);
#ifdef CUZK_NATIVE_MUL
  cuzk_native_setup(&cuzk_instance);
#endif
  return &cuzk_instance;
}
int cuzk_wasm_native_mul(void) {
#ifdef CUZK_NATIVE_MUL
  return cuzk_native_mul;
#else
  return 0;
#endif
}
uint8_t* cuzk_wasm_memory(void* i, uint64_t* size) {
  wasm_rt_memory_t* m = Z_circuitZ_memory((Z_circuit_instance_t*)i);
  *size = m->size;
  return m->data;
}
uint32_t cuzk_wasm_grow(void* i, uint32_t pages) {
  return wasm_rt_grow_memory(Z_circuitZ_memory((Z_circuit_instance_t*)i), pages);
}
void cuzk_wasm_init(void* i, uint32_t sanity) { Z_circuitZ_init((Z_circuit_instance_t*)i, sanity); }
uint32_t cuzk_wasm_field_len32(void* i) { return Z_circuitZ_getFieldNumLen32((Z_circuit_instance_t*)i); }
void cuzk_wasm_raw_prime(void* i) { Z_circuitZ_getRawPrime((Z_circuit_instance_t*)i); }
uint32_t cuzk_wasm_read_shared(void* i, uint32_t j) { return Z_circuitZ_readSharedRWMemory((Z_circuit_instance_t*)i, j); }
void cuzk_wasm_write_shared(void* i, uint32_t j, uint32_t v) {
  Z_circuitZ_writeSharedRWMemory((Z_circuit_instance_t*)i, j, v);
}
uint32_t cuzk_wasm_witness_size(void* i) { return Z_circuitZ_getWitnessSize((Z_circuit_instance_t*)i); }
uint32_t cuzk_wasm_input_size(void* i) { return Z_circuitZ_getInputSize((Z_circuit_instance_t*)i); }
void cuzk_wasm_set_input(void* i, uint32_t msb, uint32_t lsb, uint32_t pos) {
  Z_circuitZ_setInputSignal((Z_circuit_instance_t*)i, msb, lsb, pos);
}
void cuzk_wasm_get_witness(void* i, uint32_t k) { Z_circuitZ_getWitness((Z_circuit_instance_t*)i, k); }
uint32_t cuzk_wasm_message_char(void* i) { return Z_circuitZ_getMessageChar((Z_circuit_instance_t*)i); }
/* The address of the input table's entry for a name's hash ({u64 hash, u32 signal, u32 size}), or 0. */
uint32_t cuzk_wasm_map_position(void* i, uint64_t hash) {
  return w2c_getInputSignalMapPosition((Z_circuit_instance_t*)i, hash);
}
#endif
