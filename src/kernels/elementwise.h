// Element-wise kernels: dtype slots, loop signatures, and the driver that
// broadcasts operands, forwards a buffer when it can, and runs loops over
// the thread pool.

#ifndef LOOM_KERNELS_ELEMENTWISE_H_
#define LOOM_KERNELS_ELEMENTWISE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/isa.h"
#include "loom/dtype.h"
#include "loom/kernel.h"

// The dtypes element-wise loops exist for (one table column each).
typedef enum loom__elem_slot_t {
  LOOM_ELEM_F32 = 0,
  LOOM_ELEM_F64,
  LOOM_ELEM_I32,
  LOOM_ELEM_I64,
  LOOM_ELEM_U8,
  LOOM_ELEM_I8,
  LOOM_ELEM_I16,
  LOOM_ELEM_U16,
  LOOM_ELEM_U32,
  LOOM_ELEM_U64,
  LOOM_ELEM_BOOL,
  LOOM_ELEM_F16,
  LOOM_ELEM_BF16,
  LOOM_ELEM_SLOTS,
} loom__elem_slot_t;

// The slot of `dtype`, or -1.
int loom__elem_slot(loom_dtype_t dtype);

// out[i] = f(a[i * sa], b[i * sb]) for i in [0, n); strides in elements
// (0: the operand is broadcast). `out` may be `a` or `b` exactly (a
// forwarded buffer); no other overlap.
typedef void (*loom__binary_loop_fn_t)(const void* a, int64_t sa, const void* b,
                                       int64_t sb, void* out, int64_t n);

// As loom__binary_loop_fn_t for ops some inputs are invalid for (integer
// division by zero, integers to negative powers): returns false when any
// element was invalid (the op then fails; those results are unspecified).
typedef bool (*loom__binary_checked_loop_fn_t)(const void* a, int64_t sa,
                                               const void* b, int64_t sb,
                                               void* out, int64_t n);

// out[i] = f(a[i * sa], b[i * sb], c[i * sc]); `out` may be any of the
// inputs exactly.
typedef void (*loom__ternary_loop_fn_t)(const void* a, int64_t sa,
                                        const void* b, int64_t sb,
                                        const void* c, int64_t sc, void* out,
                                        int64_t n);

typedef enum loom__binary_op_t {
  LOOM_BINARY_ADD = 0,
  LOOM_BINARY_SUB,
  LOOM_BINARY_MUL,
  LOOM_BINARY_REAL_DIV,
  LOOM_BINARY_MAXIMUM,
  LOOM_BINARY_MINIMUM,
  LOOM_BINARY_SQUARED_DIFFERENCE,
  // Floats: x / y. Integers: truncating, checked (checked table).
  LOOM_BINARY_DIV,
  // Floats: floor(x / y). Integers: rounding down, checked.
  LOOM_BINARY_FLOOR_DIV,
  // The remainder of FloorDiv: the sign of y (TensorFlow's FloorMod).
  LOOM_BINARY_FLOOR_MOD,
  // Floats: trunc(x / y). Integers: as DIV.
  LOOM_BINARY_TRUNCATE_DIV,
  // C's fmod / %: the sign of x.
  LOOM_BINARY_TRUNCATE_MOD,
  // Floats: pow. Signed integers: checked (negative exponents fail).
  LOOM_BINARY_POW,
  LOOM_BINARY_OPS,
} loom__binary_op_t;

typedef loom__binary_loop_fn_t loom__binary_table_t[LOOM_BINARY_OPS]
                                                   [LOOM_ELEM_SLOTS];
typedef loom__binary_checked_loop_fn_t
    loom__binary_checked_table_t[LOOM_BINARY_OPS][LOOM_ELEM_SLOTS];

// One table per ISA level (elementwise_binary_loops.c, built per level);
// NULL entries: no loop for that op and dtype.
extern const loom__binary_table_t loom__binary_loops_baseline;
extern const loom__binary_table_t loom__binary_loops_avx2;
extern const loom__binary_table_t loom__binary_loops_avx512;
extern const loom__binary_checked_table_t loom__binary_checked_loops_baseline;
extern const loom__binary_checked_table_t loom__binary_checked_loops_avx2;
extern const loom__binary_checked_table_t loom__binary_checked_loops_avx512;

// Loops that write with streaming (non-temporal) stores, for outputs far
// bigger than the cache; NULL where there is none.
extern const loom__binary_table_t loom__binary_stream_loops_baseline;
extern const loom__binary_table_t loom__binary_stream_loops_avx2;
extern const loom__binary_table_t loom__binary_stream_loops_avx512;

// The loop for (op, dtype) at this CPU's level, or NULL.
loom__binary_loop_fn_t loom__binary_loop(loom__binary_op_t op,
                                         loom_dtype_t dtype);
// Its streaming-store form, or NULL.
loom__binary_loop_fn_t loom__binary_stream_loop(loom__binary_op_t op,
                                                loom_dtype_t dtype);
// The checked loop for (op, dtype), or NULL (the op cannot fail for it).
loom__binary_checked_loop_fn_t loom__binary_checked_loop(loom__binary_op_t op,
                                                         loom_dtype_t dtype);

// Comparisons and logical ops: bool results (elementwise_compare_loops.c).
typedef enum loom__compare_op_t {
  LOOM_COMPARE_LESS = 0,
  LOOM_COMPARE_LESS_EQUAL,
  LOOM_COMPARE_GREATER,
  LOOM_COMPARE_GREATER_EQUAL,
  LOOM_COMPARE_EQUAL,
  LOOM_COMPARE_NOT_EQUAL,
  LOOM_COMPARE_LOGICAL_AND,  // bool only
  LOOM_COMPARE_LOGICAL_OR,   // bool only
  LOOM_COMPARE_OPS,
} loom__compare_op_t;

typedef loom__binary_loop_fn_t loom__compare_table_t[LOOM_COMPARE_OPS]
                                                    [LOOM_ELEM_SLOTS];

extern const loom__compare_table_t loom__compare_loops_baseline;
extern const loom__compare_table_t loom__compare_loops_avx2;
extern const loom__compare_table_t loom__compare_loops_avx512;

loom__binary_loop_fn_t loom__compare_loop(loom__compare_op_t op,
                                          loom_dtype_t dtype);

// The loops of Select, ClipByValue, AddN and BiasAddGrad
// (elementwise_select_loops.c).
typedef struct loom__select_loops_t {
  // out = a ? b : c with a bool; by element size 1, 2, 4, 8 (index log2).
  loom__ternary_loop_fn_t select[4];
  // out = max(min(a, c), b): t, clip_value_min, clip_value_max.
  loom__ternary_loop_fn_t clip[LOOM_ELEM_SLOTS];
  // acc[i] += in[i] for i in [0, n): acc in the accumulation type (float
  // for the 16-bit floats, else the element type; integers wrap).
  void (*accumulate[LOOM_ELEM_SLOTS])(void* acc, const void* in, int64_t n);
  // *acc += the sum of in[0, n), in the accumulation type.
  void (*sum[LOOM_ELEM_SLOTS])(const void* in, int64_t n, void* acc);
  // out[i] = acc[i], narrowed from the accumulation type.
  void (*narrow[LOOM_ELEM_SLOTS])(const void* acc, void* out, int64_t n);
} loom__select_loops_t;

extern const loom__select_loops_t loom__select_loops_baseline;
extern const loom__select_loops_t loom__select_loops_avx2;
extern const loom__select_loops_t loom__select_loops_avx512;

// The table for this CPU's level.
const loom__select_loops_t* loom__select_loops(void);

// Bytes of one accumulator element for `dtype` (see `accumulate`).
size_t loom__accumulator_size(loom_dtype_t dtype);

//===----------------------------------------------------------------------===//
// Drivers
//===----------------------------------------------------------------------===//

// Runs a broadcasting binary op in a kernel: inputs 0 and 1, output 0 of
// dtype `out_dtype`'s slot. Reuses an input's buffer when it has the
// output's shape and dtype and nobody else holds it. Failures go to ctx.
void loom__binary_compute(loom_kernel_context_t* ctx,
                          loom__binary_loop_fn_t loop,
                          int64_t cost_per_element);

// The general element-wise call: inputs 0 .. num_operands - 1 broadcast
// together (NumPy rules) into output 0.
typedef struct loom__elementwise_call_t {
  int32_t num_operands;  // 2 or 3
  // Shapes the inputs are read as (NULL: the tensor's own); each must have
  // its tensor's element count (e.g. a bias [C] read as [C, 1, 1]).
  const loom_shape_t* shapes[3];
  // Exactly one loop: binary (2 operands), checked (2) or ternary (3).
  loom__binary_loop_fn_t binary;
  // Optional: `binary` with streaming stores, used when the output is a
  // fresh buffer of at least loom__elementwise_stream_bytes().
  loom__binary_loop_fn_t binary_streaming;
  loom__binary_checked_loop_fn_t checked;
  loom__ternary_loop_fn_t ternary;
  // The error when a checked loop fails (INVALID_ARGUMENT, after the op's
  // name), e.g. "Integer division by zero".
  const char* error_message;
  // Relative cost of one element (1: an add).
  int64_t cost_per_element;
  // Inputs whose buffer may become the output (bit i: input i) when they
  // have the output's dtype and shape; 0 means all.
  uint32_t forwardable;
} loom__elementwise_call_t;

void loom__elementwise_compute(loom_kernel_context_t* ctx,
                               const loom__elementwise_call_t* call);

// Fills a call for a two-operand op from its loop (checked when the op and
// dtype have one) and runs it; "no CPU loop" when neither exists.
void loom__binary_compute_op(loom_kernel_context_t* ctx, loom__binary_op_t op,
                             int64_t cost_per_element);

// The call loom__binary_compute_op makes for (op, dtype), into *call; false
// when there is no loop.
bool loom__binary_call_initialize(loom__binary_op_t op, loom_dtype_t dtype,
                                  int64_t cost_per_element,
                                  loom__elementwise_call_t* call);

// Writes TensorFlow's form of a fully defined shape, "[2,3]" ("[]" for a
// scalar), into text (LOOM_SHAPE_TEXT_SIZE bytes).
enum { LOOM_SHAPE_TEXT_SIZE = LOOM_MAX_RANK * 21 + 3 };
void loom__format_dims(const loom_shape_t* shape, char* text);

// Elements below which an element-wise op of cost 1 stays on the calling
// thread; costlier ops split sooner.
enum { kElementwiseMinParallelWork = 32768 };

// Outputs at least this big (bytes) are written with streaming stores where
// a loop has them: the size of the last-level cache (at least 8 MB), which
// such an output would not stay in anyway.
int64_t loom__elementwise_stream_bytes(void);

#endif  // LOOM_KERNELS_ELEMENTWISE_H_
