// The fused optimizer updates, compiled once per ISA level (see isa.h).
// Written with the level's vector intrinsics: the compiler does not
// vectorise sqrt under C's errno rules, and Adam needs one per element.
// Each formula is evaluated in TensorFlow's order with separate multiplies
// and adds (no FMA), so results do not depend on the level. A tail shorter
// than a vector goes through padded copies and the same vector code.

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/elementwise_half.h"
#include "kernels/training_ops.h"

#if defined(__AVX512F__)
#define F_LANES 16
#define D_LANES 8
typedef __m512 vf_t;
typedef __m512d vd_t;
#define F_LOAD _mm512_loadu_ps
#define F_STORE _mm512_storeu_ps
#define F_SET1 _mm512_set1_ps
#define F_ADD _mm512_add_ps
#define F_SUB _mm512_sub_ps
#define F_MUL _mm512_mul_ps
#define F_DIV _mm512_div_ps
#define F_SQRT _mm512_sqrt_ps
#define D_LOAD _mm512_loadu_pd
#define D_STORE _mm512_storeu_pd
#define D_SET1 _mm512_set1_pd
#define D_ADD _mm512_add_pd
#define D_SUB _mm512_sub_pd
#define D_MUL _mm512_mul_pd
#define D_DIV _mm512_div_pd
#define D_SQRT _mm512_sqrt_pd
#elif defined(__AVX2__)
#define F_LANES 8
#define D_LANES 4
typedef __m256 vf_t;
typedef __m256d vd_t;
#define F_LOAD _mm256_loadu_ps
#define F_STORE _mm256_storeu_ps
#define F_SET1 _mm256_set1_ps
#define F_ADD _mm256_add_ps
#define F_SUB _mm256_sub_ps
#define F_MUL _mm256_mul_ps
#define F_DIV _mm256_div_ps
#define F_SQRT _mm256_sqrt_ps
#define D_LOAD _mm256_loadu_pd
#define D_STORE _mm256_storeu_pd
#define D_SET1 _mm256_set1_pd
#define D_ADD _mm256_add_pd
#define D_SUB _mm256_sub_pd
#define D_MUL _mm256_mul_pd
#define D_DIV _mm256_div_pd
#define D_SQRT _mm256_sqrt_pd
#else
#define F_LANES 4
#define D_LANES 2
typedef __m128 vf_t;
typedef __m128d vd_t;
#define F_LOAD _mm_loadu_ps
#define F_STORE _mm_storeu_ps
#define F_SET1 _mm_set1_ps
#define F_ADD _mm_add_ps
#define F_SUB _mm_sub_ps
#define F_MUL _mm_mul_ps
#define F_DIV _mm_div_ps
#define F_SQRT _mm_sqrt_ps
#define D_LOAD _mm_loadu_pd
#define D_STORE _mm_storeu_pd
#define D_SET1 _mm_set1_pd
#define D_ADD _mm_add_pd
#define D_SUB _mm_sub_pd
#define D_MUL _mm_mul_pd
#define D_DIV _mm_div_pd
#define D_SQRT _mm_sqrt_pd
#endif

//===----------------------------------------------------------------------===//
// One vector of each update; P is F (float) or D (double), V its vector
// type, c the scalars broadcast. var, s1, s2 and g point at the vector's
// first element.
//===----------------------------------------------------------------------===//

#define GD_BODY(P, V, var, s1, s2, g, c) \
  P##_STORE(var, P##_SUB(P##_LOAD(var), P##_MUL(P##_LOAD(g), c[0])))

#define MOMENTUM_BODY(P, V, var, s1, s2, g, c)                 \
  do {                                                         \
    V a_ = P##_ADD(P##_MUL(P##_LOAD(s1), c[1]), P##_LOAD(g));  \
    P##_STORE(s1, a_);                                         \
    P##_STORE(var, P##_SUB(P##_LOAD(var), P##_MUL(a_, c[0]))); \
  } while (0)

#define MOMENTUM_NESTEROV_BODY(P, V, var, s1, s2, g, c)                     \
  do {                                                                      \
    V g_ = P##_LOAD(g);                                                     \
    V a_ = P##_ADD(P##_MUL(P##_LOAD(s1), c[1]), g_);                        \
    P##_STORE(s1, a_);                                                      \
    V step_ = P##_ADD(P##_MUL(g_, c[0]), P##_MUL(P##_MUL(a_, c[1]), c[0])); \
    P##_STORE(var, P##_SUB(P##_LOAD(var), step_));                          \
  } while (0)

#define KERAS_BODY(P, V, var, s1, s2, g, c)                                  \
  do {                                                                       \
    V a_ = P##_SUB(P##_MUL(P##_LOAD(s1), c[1]), P##_MUL(P##_LOAD(g), c[0])); \
    P##_STORE(s1, a_);                                                       \
    P##_STORE(var, P##_ADD(P##_LOAD(var), a_));                              \
  } while (0)

#define KERAS_NESTEROV_BODY(P, V, var, s1, s2, g, c)                         \
  do {                                                                       \
    V gl_ = P##_MUL(P##_LOAD(g), c[0]);                                      \
    V a_ = P##_SUB(P##_MUL(P##_LOAD(s1), c[1]), gl_);                        \
    P##_STORE(s1, a_);                                                       \
    P##_STORE(var, P##_ADD(P##_LOAD(var), P##_SUB(P##_MUL(a_, c[1]), gl_))); \
  } while (0)

// c: alpha, beta1, 1 - beta1, 1 - beta2, epsilon.
#define ADAM_MOMENTS(P, V, s1, s2, g, c, g_, m_, v_)             \
  V g_ = P##_LOAD(g);                                            \
  V m_ = P##_LOAD(s1);                                           \
  V v_ = P##_LOAD(s2);                                           \
  m_ = P##_ADD(m_, P##_MUL(P##_SUB(g_, m_), c[2]));              \
  v_ = P##_ADD(v_, P##_MUL(P##_SUB(P##_MUL(g_, g_), v_), c[3])); \
  P##_STORE(s1, m_);                                             \
  P##_STORE(s2, v_)

#define ADAM_BODY(P, V, var, s1, s2, g, c)                                  \
  do {                                                                      \
    ADAM_MOMENTS(P, V, s1, s2, g, c, g_, m_, v_);                           \
    V d_ = P##_ADD(P##_SQRT(v_), c[4]);                                     \
    P##_STORE(var, P##_SUB(P##_LOAD(var), P##_DIV(P##_MUL(m_, c[0]), d_))); \
  } while (0)

#define ADAM_NESTEROV_BODY(P, V, var, s1, s2, g, c)                         \
  do {                                                                      \
    ADAM_MOMENTS(P, V, s1, s2, g, c, g_, m_, v_);                           \
    V d_ = P##_ADD(P##_SQRT(v_), c[4]);                                     \
    V n_ = P##_ADD(P##_MUL(g_, c[2]), P##_MUL(c[1], m_));                   \
    P##_STORE(var, P##_SUB(P##_LOAD(var), P##_DIV(P##_MUL(n_, c[0]), d_))); \
  } while (0)

//===----------------------------------------------------------------------===//
// Loops over [begin, end)
//===----------------------------------------------------------------------===//

// T the element type, V its vector, P the macro prefix, S the args' scalar
// field (f32 or f64).
#define TRAIN_LOOP(name, T, V, P, LANES, S, BODY)                           \
  static void LOOM_ISA_FN(name)(const loom__train_args_t* a, int64_t begin, \
                                int64_t end) {                              \
    T* var = (T*)a->var + begin;                                            \
    T* s1 = a->slot1 ? (T*)a->slot1 + begin : NULL;                         \
    T* s2 = a->slot2 ? (T*)a->slot2 + begin : NULL;                         \
    const T* g = (const T*)a->grad + begin;                                 \
    V c[kTrainMaxScalars];                                                  \
    for (int k = 0; k < kTrainMaxScalars; ++k) c[k] = P##_SET1(a->S[k]);    \
    int64_t n = end - begin;                                                \
    int64_t i = 0;                                                          \
    for (; i + LANES <= n; i += LANES) {                                    \
      BODY(P, V, var + i, s1 + i, s2 + i, g + i, c);                        \
    }                                                                       \
    if (i == n) return;                                                     \
    /* The tail, padded with zeros (their results are dropped); a      */   \
    /* variable passed in two roles keeps one copy, as in the body.    */   \
    T tv[LANES] = {0}, t1[LANES] = {0}, t2[LANES] = {0}, tg[LANES] = {0};   \
    T* p1 = s1 == var ? tv : t1;                                            \
    T* p2 = s2 == var ? tv : s2 == s1 ? p1 : t2;                            \
    size_t bytes = sizeof(T) * (size_t)(n - i);                             \
    memcpy(tv, var + i, bytes);                                             \
    memcpy(tg, g + i, bytes);                                               \
    if (s1) memcpy(p1, s1 + i, bytes);                                      \
    if (s2) memcpy(p2, s2 + i, bytes);                                      \
    BODY(P, V, tv, p1, p2, tg, c);                                          \
    memcpy(var + i, tv, bytes);                                             \
    if (s1) memcpy(s1 + i, p1, bytes);                                      \
    if (s2) memcpy(s2 + i, p2, bytes);                                      \
  }

// 16-bit floats: blocks widened to float, updated by the float loop, and
// narrowed back (rounding to nearest even).
#define HALF_TRAIN_LOOP(name, f32_name, to_f32, from_f32)                   \
  static void LOOM_ISA_FN(name)(const loom__train_args_t* a, int64_t begin, \
                                int64_t end) {                              \
    float bv[kHalfBlock], b1[kHalfBlock], b2[kHalfBlock], bg[kHalfBlock];   \
    loom__train_args_t block = *a;                                          \
    block.var = bv;                                                         \
    /* A variable passed in two roles keeps one block. */                   \
    block.slot1 = !a->slot1 ? NULL : a->slot1 == a->var ? bv : b1;          \
    block.slot2 = !a->slot2              ? NULL                             \
                  : a->slot2 == a->var   ? bv                               \
                  : a->slot2 == a->slot1 ? block.slot1                      \
                                         : b2;                              \
    block.grad = bg;                                                        \
    uint16_t* var = a->var;                                                 \
    uint16_t* s1 = a->slot1;                                                \
    uint16_t* s2 = a->slot2;                                                \
    const uint16_t* g = a->grad;                                            \
    for (int64_t i = begin; i < end; i += kHalfBlock) {                     \
      int64_t m = end - i < kHalfBlock ? end - i : kHalfBlock;              \
      to_f32(var + i, bv, m);                                               \
      to_f32(g + i, bg, m);                                                 \
      if (s1) to_f32(s1 + i, block.slot1, m);                               \
      if (s2) to_f32(s2 + i, block.slot2, m);                               \
      LOOM_ISA_FN(f32_name)(&block, 0, m);                                  \
      from_f32(bv, var + i, m);                                             \
      if (s1) from_f32(block.slot1, s1 + i, m);                             \
      if (s2) from_f32(block.slot2, s2 + i, m);                             \
    }                                                                       \
  }

#define TRAIN_LOOPS(op, BODY)                                     \
  TRAIN_LOOP(op##_f32, float, vf_t, F, F_LANES, f32, BODY)        \
  TRAIN_LOOP(op##_f64, double, vd_t, D, D_LANES, f64, BODY)       \
  HALF_TRAIN_LOOP(op##_f16, op##_f32, loom__half_to_float_n,      \
                  loom__float_to_half_n)                          \
  HALF_TRAIN_LOOP(op##_bf16, op##_f32, loom__bfloat16_to_float_n, \
                  loom__float_to_bfloat16_n)

TRAIN_LOOPS(gd, GD_BODY)
TRAIN_LOOPS(momentum, MOMENTUM_BODY)
TRAIN_LOOPS(momentum_nesterov, MOMENTUM_NESTEROV_BODY)
TRAIN_LOOPS(keras, KERAS_BODY)
TRAIN_LOOPS(keras_nesterov, KERAS_NESTEROV_BODY)
TRAIN_LOOPS(adam, ADAM_BODY)
TRAIN_LOOPS(adam_nesterov, ADAM_NESTEROV_BODY)

#define ROW(op)                                 \
  {                                             \
    [LOOM_TRAIN_F32] = LOOM_ISA_FN(op##_f32),   \
    [LOOM_TRAIN_F64] = LOOM_ISA_FN(op##_f64),   \
    [LOOM_TRAIN_F16] = LOOM_ISA_FN(op##_f16),   \
    [LOOM_TRAIN_BF16] = LOOM_ISA_FN(op##_bf16), \
  }

const loom__train_table_t LOOM_ISA_FN(loom__train_loops) = {
    [LOOM_TRAIN_GRADIENT_DESCENT] = ROW(gd),
    [LOOM_TRAIN_MOMENTUM] = ROW(momentum),
    [LOOM_TRAIN_MOMENTUM_NESTEROV] = ROW(momentum_nesterov),
    [LOOM_TRAIN_KERAS_MOMENTUM] = ROW(keras),
    [LOOM_TRAIN_KERAS_MOMENTUM_NESTEROV] = ROW(keras_nesterov),
    [LOOM_TRAIN_ADAM] = ROW(adam),
    [LOOM_TRAIN_ADAM_NESTEROV] = ROW(adam_nesterov),
};
