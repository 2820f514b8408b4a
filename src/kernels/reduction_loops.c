// Reduction and arg-reduction loops, compiled once per ISA level (see
// isa.h). Contiguous runs are reduced into an array of independent lanes
// that the compiler keeps in vector registers, then the lanes are folded
// pairwise; float sums of long runs also split recursively (pairwise
// summation), so their rounding error grows with log(n), not n.

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "base/half.h"
#include "kernels/reduction.h"

// Elements per recursion leaf of pairwise sums (each lane then adds up to
// kPairwiseBlock / lanes values in sequence).
enum { kPairwiseBlock = 16384 };

// Rows shorter than this are reduced by a plain loop (no lane setup).
enum { kShortRow = 16 };

// A short run's pairwise fold of its lanes, unrolled whole: the compiler
// otherwise keeps it a loop over memory, most of a short row's cost (the
// order of the operations is the same). Long runs keep the loop, which
// they amortise (and which compiles much faster).
#define LOOM_UNROLLED _Pragma("GCC unroll 8")

#define ID(x) (x)
#define F16_LOAD(x) loom__half_to_float(x)
#define F16_STORE(x) loom__float_to_half(x)
#define BF16_LOAD(x) loom__bfloat16_to_float(x)
#define BF16_STORE(x) loom__float_to_bfloat16(x)
#define BOOL_LOAD(x) ((uint8_t)((x) != 0))

// Accumulation operators: OP(a, v) with a the accumulator and v a loaded
// value (both of the accumulator type). Integer sums and products wrap
// (two's complement) as TensorFlow's do; they are computed in an unsigned
// type at least as wide as int, so overflow is defined.
#define OP_ADD(a, v) ((a) + (v))
#define OP_MUL(a, v) ((a) * (v))
// NaN propagates, as in TensorFlow's Max and Min (Eigen::PropagateNaN).
#define OP_FMAX(a, v) (((v) > (a) || (v) != (v)) ? (v) : (a))
#define OP_FMIN(a, v) (((v) < (a) || (v) != (v)) ? (v) : (a))
#define OP_IMAX(a, v) ((v) > (a) ? (v) : (a))
#define OP_IMIN(a, v) ((v) < (a) ? (v) : (a))
#define OP_AND(a, v) ((uint8_t)((a) & (v)))
#define OP_OR(a, v) ((uint8_t)((a) | (v)))

#define FINAL_ID(a, count) (a)
#define FINAL_FDIV(a, count) ((a) / (count))
// Integer means divide the wide sum (truncating); an empty mean is 0.
#define FINAL_IDIV(a, count) ((count) ? (a) / (count) : 0)

// One set of loops: name, input type T, accumulator ACC, conversions,
// identity, operator, a faster operator for long runs (FASTOP), whether
// long runs must be checked for NaN because FASTOP skips it (NANCHECK),
// whether long runs are summed pairwise, and the final step. The operators
// are macros or functions of (a, v) over ACC values.
//
// NaN check: float Max/Min take the plain vector max/min (which skips NaN)
// and add v * 0 into probe lanes, which turns NaN only for NaN or an
// infinity in the run; only then is the run reduced again exactly.
#define REDUCE_LOOPS(name, T, ACC, LOAD, STORE, IDENT, OP, FASTOP, NANCHECK,   \
                     PAIRWISE, FINAL)                                          \
  enum {                                                                       \
    name##_lanes = 256 / sizeof(ACC), /* four vectors of AVX-512 */            \
    name##_few = 64 / sizeof(ACC)     /* one */                                \
  };                                                                           \
  /* Short runs: one vector of lanes, cheap to set up and fold. */             \
  static ACC LOOM_ISA_FN(name##_contig_few)(const T* restrict x, int64_t n) {  \
    ACC lane[name##_few];                                                      \
    for (int j = 0; j < name##_few; ++j) lane[j] = (IDENT);                    \
    int64_t i = 0;                                                             \
    for (; i + name##_few <= n; i += name##_few) {                             \
      for (int j = 0; j < name##_few; ++j) {                                   \
        ACC v = (ACC)LOAD(x[i + j]);                                           \
        lane[j] = OP(lane[j], v);                                              \
      }                                                                        \
    }                                                                          \
    for (int j = 0; i + j < n; ++j) {                                          \
      ACC v = (ACC)LOAD(x[i + j]);                                             \
      lane[j] = OP(lane[j], v);                                                \
    }                                                                          \
    LOOM_UNROLLED                                                              \
    for (int width = name##_few / 2; width > 0; width /= 2) {                  \
      LOOM_UNROLLED                                                            \
      for (int j = 0; j < width; ++j) lane[j] = OP(lane[j], lane[j + width]);  \
    }                                                                          \
    return lane[0];                                                            \
  }                                                                            \
  static ACC LOOM_ISA_FN(name##_contig)(const T* restrict x, int64_t n) {      \
    if ((PAIRWISE) && n > kPairwiseBlock) {                                    \
      int64_t half = (n / 2) & ~(int64_t)(name##_lanes - 1);                   \
      ACC left = LOOM_ISA_FN(name##_contig)(x, half);                          \
      ACC right = LOOM_ISA_FN(name##_contig)(x + half, n - half);              \
      return OP(left, right);                                                  \
    }                                                                          \
    if (n < 4 * name##_lanes) return LOOM_ISA_FN(name##_contig_few)(x, n);     \
    ACC lane[name##_lanes];                                                    \
    ACC probe[name##_lanes];                                                   \
    for (int j = 0; j < name##_lanes; ++j) {                                   \
      lane[j] = (IDENT);                                                       \
      probe[j] = 0;                                                            \
    }                                                                          \
    int64_t i = 0;                                                             \
    for (; i + name##_lanes <= n; i += name##_lanes) {                         \
      for (int j = 0; j < name##_lanes; ++j) {                                 \
        ACC v = (ACC)LOAD(x[i + j]);                                           \
        lane[j] = FASTOP(lane[j], v);                                          \
        if (NANCHECK) probe[j] += v * (ACC)0;                                  \
      }                                                                        \
    }                                                                          \
    for (int j = 0; i + j < n; ++j) {                                          \
      ACC v = (ACC)LOAD(x[i + j]);                                             \
      lane[j] = FASTOP(lane[j], v);                                            \
      if (NANCHECK) probe[j] += v * (ACC)0;                                    \
    }                                                                          \
    if (NANCHECK) {                                                            \
      ACC total = 0;                                                           \
      for (int j = 0; j < name##_lanes; ++j) total += probe[j];                \
      if (total != total) return LOOM_ISA_FN(name##_contig_few)(x, n);         \
    }                                                                          \
    for (int width = name##_lanes / 2; width > 0; width /= 2) {                \
      for (int j = 0; j < width; ++j) {                                        \
        lane[j] = FASTOP(lane[j], lane[j + width]);                            \
      }                                                                        \
    }                                                                          \
    return lane[0];                                                            \
  }                                                                            \
  static void LOOM_ISA_FN(name##_init)(void* acc_, int64_t n) {                \
    ACC* acc = acc_;                                                           \
    for (int64_t i = 0; i < n; ++i) acc[i] = (IDENT);                          \
  }                                                                            \
  static void LOOM_ISA_FN(name##_rows)(                                        \
      const void* x_, int64_t stride, int64_t rows, int64_t len, void* acc_) { \
    const T* x = x_;                                                           \
    ACC* acc = acc_;                                                           \
    if (len < kShortRow) {                                                     \
      for (int64_t i = 0; i < rows; ++i) {                                     \
        const T* row = x + i * stride;                                         \
        ACC a = acc[i];                                                        \
        for (int64_t l = 0; l < len; ++l) {                                    \
          ACC v = (ACC)LOAD(row[l]);                                           \
          a = OP(a, v);                                                        \
        }                                                                      \
        acc[i] = a;                                                            \
      }                                                                        \
      return;                                                                  \
    }                                                                          \
    for (int64_t i = 0; i < rows; ++i) {                                       \
      ACC v = LOOM_ISA_FN(name##_contig)(x + i * stride, len);                 \
      acc[i] = OP(acc[i], v);                                                  \
    }                                                                          \
  }                                                                            \
  /* Eight rows at a time, folded pairwise before they meet acc: acc is        \
     loaded and stored once per eight rows, and eight streams are read at      \
     once. */                                                                  \
  static void LOOM_ISA_FN(name##_columns)(                                     \
      const void* x_, int64_t stride, int64_t rows, int64_t k, void* acc_) {   \
    const T* x = x_;                                                           \
    ACC* restrict acc = acc_;                                                  \
    int64_t r = 0;                                                             \
    for (; r + 8 <= rows; r += 8) {                                            \
      const T* restrict r0 = x + r * stride;                                   \
      const T* restrict r1 = r0 + stride;                                      \
      const T* restrict r2 = r1 + stride;                                      \
      const T* restrict r3 = r2 + stride;                                      \
      const T* restrict r4 = r3 + stride;                                      \
      const T* restrict r5 = r4 + stride;                                      \
      const T* restrict r6 = r5 + stride;                                      \
      const T* restrict r7 = r6 + stride;                                      \
      for (int64_t j = 0; j < k; ++j) {                                        \
        ACC v0 = (ACC)LOAD(r0[j]), v1 = (ACC)LOAD(r1[j]);                      \
        ACC v2 = (ACC)LOAD(r2[j]), v3 = (ACC)LOAD(r3[j]);                      \
        ACC v4 = (ACC)LOAD(r4[j]), v5 = (ACC)LOAD(r5[j]);                      \
        ACC v6 = (ACC)LOAD(r6[j]), v7 = (ACC)LOAD(r7[j]);                      \
        ACC a = OP(OP(v0, v1), OP(v2, v3));                                    \
        ACC b = OP(OP(v4, v5), OP(v6, v7));                                    \
        acc[j] = OP(acc[j], OP(a, b));                                         \
      }                                                                        \
    }                                                                          \
    for (; r < rows; ++r) {                                                    \
      const T* restrict row = x + r * stride;                                  \
      for (int64_t j = 0; j < k; ++j) {                                        \
        ACC v = (ACC)LOAD(row[j]);                                             \
        acc[j] = OP(acc[j], v);                                                \
      }                                                                        \
    }                                                                          \
  }                                                                            \
  static void LOOM_ISA_FN(name##_combine)(void* acc_, const void* src_,        \
                                          int64_t n) {                         \
    ACC* restrict acc = acc_;                                                  \
    const ACC* restrict src = src_;                                            \
    for (int64_t i = 0; i < n; ++i) acc[i] = OP(acc[i], src[i]);               \
  }                                                                            \
  static void LOOM_ISA_FN(name##_finish)(const void* acc_, int64_t n,          \
                                         int64_t count, void* out_) {          \
    const ACC* restrict acc = acc_;                                            \
    T* restrict out = out_;                                                    \
    const ACC divisor = (ACC)count;                                            \
    (void)divisor;                                                             \
    for (int64_t i = 0; i < n; ++i) out[i] = STORE(FINAL(acc[i], divisor));    \
  }

#define LOOPS_ENTRY(name, ACC, cascade_)                                \
  {                                                                     \
    .acc_size = sizeof(ACC), .cascade = cascade_,                       \
    .init = LOOM_ISA_FN(name##_init), .rows = LOOM_ISA_FN(name##_rows), \
    .columns = LOOM_ISA_FN(name##_columns),                             \
    .combine = LOOM_ISA_FN(name##_combine),                             \
    .finish = LOOM_ISA_FN(name##_finish)                                \
  }

// Integer operators in a wide unsigned type (defined overflow).
#define DEFINE_INT_OPS(suffix, T, W)       \
  static inline T suffix##_add(T a, T v) { \
    return (T)((W)a + (W)v);               \
  }                                        \
  static inline T suffix##_mul(T a, T v) { \
    return (T)((W)a * (W)v);               \
  }

DEFINE_INT_OPS(i32, int32_t, uint32_t)
DEFINE_INT_OPS(i64, int64_t, uint64_t)
DEFINE_INT_OPS(u8, uint8_t, uint32_t)
DEFINE_INT_OPS(i8, int8_t, uint32_t)
DEFINE_INT_OPS(i16, int16_t, uint32_t)
DEFINE_INT_OPS(u16, uint16_t, uint32_t)
DEFINE_INT_OPS(u32, uint32_t, uint32_t)
DEFINE_INT_OPS(u64, uint64_t, uint64_t)

// Floats: every op; f16 and bf16 accumulate in float.
#define FLOAT_REDUCE(suffix, T, ACC, LOAD, STORE, INF)                         \
  REDUCE_LOOPS(sum_##suffix, T, ACC, LOAD, STORE, 0, OP_ADD, OP_ADD, 0, 1,     \
               FINAL_ID)                                                       \
  REDUCE_LOOPS(mean_##suffix, T, ACC, LOAD, STORE, 0, OP_ADD, OP_ADD, 0, 1,    \
               FINAL_FDIV)                                                     \
  REDUCE_LOOPS(prod_##suffix, T, ACC, LOAD, STORE, 1, OP_MUL, OP_MUL, 0, 0,    \
               FINAL_ID)                                                       \
  REDUCE_LOOPS(max_##suffix, T, ACC, LOAD, STORE, -(INF), OP_FMAX, OP_IMAX, 1, \
               0, FINAL_ID)                                                    \
  REDUCE_LOOPS(min_##suffix, T, ACC, LOAD, STORE, (INF), OP_FMIN, OP_IMIN, 1,  \
               0, FINAL_ID)

FLOAT_REDUCE(f32, float, float, ID, ID, INFINITY)
FLOAT_REDUCE(f64, double, double, ID, ID, (double)INFINITY)
FLOAT_REDUCE(f16, uint16_t, float, F16_LOAD, F16_STORE, INFINITY)
FLOAT_REDUCE(bf16, uint16_t, float, BF16_LOAD, BF16_STORE, INFINITY)

// Integers: sums and products wrap in T; means sum in a 64-bit type of the
// same signedness (TensorFlow's int64 / uint64 intermediate) and divide.
#define INT_REDUCE(suffix, T, WIDE, WIDE_ADD, LOWEST, HIGHEST)                \
  REDUCE_LOOPS(sum_##suffix, T, T, ID, ID, 0, suffix##_add, suffix##_add, 0,  \
               0, FINAL_ID)                                                   \
  REDUCE_LOOPS(mean_##suffix, T, WIDE, ID, (T), 0, WIDE_ADD, WIDE_ADD, 0, 0,  \
               FINAL_IDIV)                                                    \
  REDUCE_LOOPS(prod_##suffix, T, T, ID, ID, 1, suffix##_mul, suffix##_mul, 0, \
               0, FINAL_ID)                                                   \
  REDUCE_LOOPS(max_##suffix, T, T, ID, ID, (LOWEST), OP_IMAX, OP_IMAX, 0, 0,  \
               FINAL_ID)                                                      \
  REDUCE_LOOPS(min_##suffix, T, T, ID, ID, (HIGHEST), OP_IMIN, OP_IMIN, 0, 0, \
               FINAL_ID)

INT_REDUCE(i32, int32_t, int64_t, i64_add, INT32_MIN, INT32_MAX)
INT_REDUCE(i64, int64_t, int64_t, i64_add, INT64_MIN, INT64_MAX)
INT_REDUCE(u8, uint8_t, uint64_t, OP_ADD, 0, UINT8_MAX)
INT_REDUCE(i8, int8_t, int64_t, i64_add, INT8_MIN, INT8_MAX)
INT_REDUCE(i16, int16_t, int64_t, i64_add, INT16_MIN, INT16_MAX)
INT_REDUCE(u16, uint16_t, uint64_t, OP_ADD, 0, UINT16_MAX)
INT_REDUCE(u32, uint32_t, uint64_t, OP_ADD, 0, UINT32_MAX)
INT_REDUCE(u64, uint64_t, uint64_t, OP_ADD, 0, UINT64_MAX)

REDUCE_LOOPS(all_bool, uint8_t, uint8_t, BOOL_LOAD, ID, 1, OP_AND, OP_AND, 0, 0,
             FINAL_ID)
REDUCE_LOOPS(any_bool, uint8_t, uint8_t, BOOL_LOAD, ID, 0, OP_OR, OP_OR, 0, 0,
             FINAL_ID)

#define FLOAT_ROW(op, cascade)                              \
  [LOOM_ELEM_F32] = LOOPS_ENTRY(op##_f32, float, cascade),  \
  [LOOM_ELEM_F64] = LOOPS_ENTRY(op##_f64, double, cascade), \
  [LOOM_ELEM_F16] = LOOPS_ENTRY(op##_f16, float, cascade),  \
  [LOOM_ELEM_BF16] = LOOPS_ENTRY(op##_bf16, float, cascade)
#define INT_ROW(op, W32, W64)                                \
  [LOOM_ELEM_I32] = LOOPS_ENTRY(op##_i32, W32(int32_t), 0),  \
  [LOOM_ELEM_I64] = LOOPS_ENTRY(op##_i64, int64_t, 0),       \
  [LOOM_ELEM_U8] = LOOPS_ENTRY(op##_u8, W64(uint8_t), 0),    \
  [LOOM_ELEM_I8] = LOOPS_ENTRY(op##_i8, W32(int8_t), 0),     \
  [LOOM_ELEM_I16] = LOOPS_ENTRY(op##_i16, W32(int16_t), 0),  \
  [LOOM_ELEM_U16] = LOOPS_ENTRY(op##_u16, W64(uint16_t), 0), \
  [LOOM_ELEM_U32] = LOOPS_ENTRY(op##_u32, W64(uint32_t), 0), \
  [LOOM_ELEM_U64] = LOOPS_ENTRY(op##_u64, uint64_t, 0)
// Accumulator types of the integer rows: the input type, or for Mean the
// 64-bit type of its signedness.
#define SAME(T) T
#define WIDE_SIGNED(T) int64_t
#define WIDE_UNSIGNED(T) uint64_t

const loom__reduce_table_t LOOM_ISA_FN(loom__reduce_loops) = {
    [LOOM_REDUCE_SUM] = {FLOAT_ROW(sum, 1), INT_ROW(sum, SAME, SAME)},
    [LOOM_REDUCE_MEAN] = {FLOAT_ROW(mean, 1),
                          INT_ROW(mean, WIDE_SIGNED, WIDE_UNSIGNED)},
    [LOOM_REDUCE_PROD] = {FLOAT_ROW(prod, 0), INT_ROW(prod, SAME, SAME)},
    [LOOM_REDUCE_MAX] = {FLOAT_ROW(max, 0), INT_ROW(max, SAME, SAME)},
    [LOOM_REDUCE_MIN] = {FLOAT_ROW(min, 0), INT_ROW(min, SAME, SAME)},
    [LOOM_REDUCE_ALL] = {[LOOM_ELEM_BOOL] = LOOPS_ENTRY(all_bool, uint8_t, 0)},
    [LOOM_REDUCE_ANY] = {[LOOM_ELEM_BOOL] = LOOPS_ENTRY(any_bool, uint8_t, 0)},
};

//===----------------------------------------------------------------------===//
// ArgMax / ArgMin
//===----------------------------------------------------------------------===//

enum { kArgLanes = 32 };

// name, input type T, value type V, conversion, start value, comparison
// BETTER(v, best).
#define ARG_LOOPS(name, T, V, LOAD, START, BETTER)                             \
  static void LOOM_ISA_FN(name##_init)(void* best_, int64_t* index,            \
                                       int64_t n) {                            \
    V* best = best_;                                                           \
    for (int64_t i = 0; i < n; ++i) {                                          \
      best[i] = (START);                                                       \
      index[i] = 0;                                                            \
    }                                                                          \
  }                                                                            \
  /* The first position of the best value of x[0, n) (START and -1 when        \
     nothing beats START). */                                                  \
  static V LOOM_ISA_FN(name##_contig)(const T* restrict x, int64_t n,          \
                                      int64_t* out_index) {                    \
    V best[kArgLanes];                                                         \
    int64_t where[kArgLanes];                                                  \
    for (int j = 0; j < kArgLanes; ++j) {                                      \
      best[j] = (START);                                                       \
      where[j] = -1;                                                           \
    }                                                                          \
    int64_t i = 0;                                                             \
    for (; i + kArgLanes <= n; i += kArgLanes) {                               \
      for (int j = 0; j < kArgLanes; ++j) {                                    \
        V v = (V)LOAD(x[i + j]);                                               \
        int better = BETTER(v, best[j]);                                       \
        best[j] = better ? v : best[j];                                        \
        where[j] = better ? i + j : where[j];                                  \
      }                                                                        \
    }                                                                          \
    for (int j = 0; i + j < n; ++j) {                                          \
      V v = (V)LOAD(x[i + j]);                                                 \
      if (BETTER(v, best[j])) {                                                \
        best[j] = v;                                                           \
        where[j] = i + j;                                                      \
      }                                                                        \
    }                                                                          \
    V b = (START);                                                             \
    int64_t at = -1;                                                           \
    for (int j = 0; j < kArgLanes; ++j) {                                      \
      if (where[j] < 0) continue;                                              \
      if (at < 0 || BETTER(best[j], b) || (best[j] == b && where[j] < at)) {   \
        b = best[j];                                                           \
        at = where[j];                                                         \
      }                                                                        \
    }                                                                          \
    *out_index = at;                                                           \
    return b;                                                                  \
  }                                                                            \
  static void LOOM_ISA_FN(name##_rows)(                                        \
      const void* x_, int64_t stride, int64_t rows, int64_t len,               \
      int64_t first, void* best_, int64_t* index) {                            \
    const T* x = x_;                                                           \
    V* best = best_;                                                           \
    for (int64_t r = 0; r < rows; ++r) {                                       \
      int64_t at;                                                              \
      V v = LOOM_ISA_FN(name##_contig)(x + r * stride, len, &at);              \
      if (at >= 0 && BETTER(v, best[r])) {                                     \
        best[r] = v;                                                           \
        index[r] = first + at;                                                 \
      }                                                                        \
    }                                                                          \
  }                                                                            \
  static void LOOM_ISA_FN(name##_columns)(                                     \
      const void* x_, int64_t stride, int64_t rows, int64_t k, int64_t first,  \
      void* best_, int64_t* restrict index) {                                  \
    const T* x = x_;                                                           \
    V* restrict best = best_;                                                  \
    for (int64_t r = 0; r < rows; ++r) {                                       \
      const T* restrict row = x + r * stride;                                  \
      const int64_t position = first + r;                                      \
      for (int64_t j = 0; j < k; ++j) {                                        \
        V v = (V)LOAD(row[j]);                                                 \
        int better = BETTER(v, best[j]);                                       \
        best[j] = better ? v : best[j];                                        \
        index[j] = better ? position : index[j];                               \
      }                                                                        \
    }                                                                          \
  }                                                                            \
  static void LOOM_ISA_FN(name##_combine)(                                     \
      void* best_, int64_t* index, const void* src_, const int64_t* src_index, \
      int64_t n) {                                                             \
    V* best = best_;                                                           \
    const V* src = src_;                                                       \
    for (int64_t i = 0; i < n; ++i) {                                          \
      if (BETTER(src[i], best[i])) {                                           \
        best[i] = src[i];                                                      \
        index[i] = src_index[i];                                               \
      }                                                                        \
    }                                                                          \
  }

#define GREATER(v, b) ((v) > (b))
#define LESS(v, b) ((v) < (b))

#define ARG_PAIR(suffix, T, V, LOAD, LOWEST, HIGHEST)       \
  ARG_LOOPS(argmax_##suffix, T, V, LOAD, (LOWEST), GREATER) \
  ARG_LOOPS(argmin_##suffix, T, V, LOAD, (HIGHEST), LESS)

// Eigen's NumTraits<T>::lowest() and highest(): finite extremes.
ARG_PAIR(f32, float, float, ID, -FLT_MAX, FLT_MAX)
ARG_PAIR(f64, double, double, ID, -DBL_MAX, DBL_MAX)
ARG_PAIR(f16, uint16_t, float, F16_LOAD, -65504.0f, 65504.0f)
ARG_PAIR(bf16, uint16_t, float, BF16_LOAD, -3.38953139e38f, 3.38953139e38f)
ARG_PAIR(i32, int32_t, int32_t, ID, INT32_MIN, INT32_MAX)
ARG_PAIR(i64, int64_t, int64_t, ID, INT64_MIN, INT64_MAX)
ARG_PAIR(u8, uint8_t, uint8_t, ID, 0, UINT8_MAX)
ARG_PAIR(i8, int8_t, int8_t, ID, INT8_MIN, INT8_MAX)
ARG_PAIR(i16, int16_t, int16_t, ID, INT16_MIN, INT16_MAX)
ARG_PAIR(u16, uint16_t, uint16_t, ID, 0, UINT16_MAX)
ARG_PAIR(u32, uint32_t, uint32_t, ID, 0, UINT32_MAX)
ARG_PAIR(u64, uint64_t, uint64_t, ID, 0, UINT64_MAX)
ARG_PAIR(bool, uint8_t, uint8_t, BOOL_LOAD, 0, 1)

#define ARG_ENTRY(name, V)                                                    \
  {                                                                           \
    .value_size = sizeof(V), .init = LOOM_ISA_FN(name##_init),                \
    .rows = LOOM_ISA_FN(name##_rows), .columns = LOOM_ISA_FN(name##_columns), \
    .combine = LOOM_ISA_FN(name##_combine)                                    \
  }
#define ARG_ROW(op)                                \
  [LOOM_ELEM_F32] = ARG_ENTRY(op##_f32, float),    \
  [LOOM_ELEM_F64] = ARG_ENTRY(op##_f64, double),   \
  [LOOM_ELEM_F16] = ARG_ENTRY(op##_f16, float),    \
  [LOOM_ELEM_BF16] = ARG_ENTRY(op##_bf16, float),  \
  [LOOM_ELEM_I32] = ARG_ENTRY(op##_i32, int32_t),  \
  [LOOM_ELEM_I64] = ARG_ENTRY(op##_i64, int64_t),  \
  [LOOM_ELEM_U8] = ARG_ENTRY(op##_u8, uint8_t),    \
  [LOOM_ELEM_I8] = ARG_ENTRY(op##_i8, int8_t),     \
  [LOOM_ELEM_I16] = ARG_ENTRY(op##_i16, int16_t),  \
  [LOOM_ELEM_U16] = ARG_ENTRY(op##_u16, uint16_t), \
  [LOOM_ELEM_U32] = ARG_ENTRY(op##_u32, uint32_t), \
  [LOOM_ELEM_U64] = ARG_ENTRY(op##_u64, uint64_t), \
  [LOOM_ELEM_BOOL] = ARG_ENTRY(op##_bool, uint8_t)

const loom__arg_table_t LOOM_ISA_FN(loom__arg_loops) = {
    [LOOM_ARG_MAX] = {ARG_ROW(argmax)},
    [LOOM_ARG_MIN] = {ARG_ROW(argmin)},
};
