// Shared machinery of the shape and data-movement ops (array_*.c): reading
// index tensors, TensorFlow-style shape text, and the copy engines every
// op of the family runs on — a strided N-d copy (slices, broadcasts, tiles,
// transposes whose inner dimension stays put), a batch of 2-D block copies
// (concat, split, pack, unpack), a blocked 2-D transpose and a fill. All of
// them move elements of any fixed size, and string elements through the
// tstring API, and split large work over the thread pool.

#ifndef LOOM_KERNELS_ARRAY_INTERNAL_H_
#define LOOM_KERNELS_ARRAY_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/small_vector.h"
#include "kernels/isa.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"
#include "loom/kernel.h"
#include "loom/shape_inference.h"
#include "loom/thread_pool.h"
#include "tensor/checked_size.h"

// Registration of each file's ops and kernels (array_ops.c calls them all).
loom_status_t loom__register_array_shape_ops(void);
loom_status_t loom__register_array_constant_ops(void);
loom_status_t loom__register_array_transpose_ops(void);
loom_status_t loom__register_array_concat_ops(void);
loom_status_t loom__register_array_split_ops(void);
loom_status_t loom__register_array_slice_ops(void);
loom_status_t loom__register_array_pad_ops(void);
loom_status_t loom__register_array_gather_ops(void);
loom_status_t loom__register_array_indicator_ops(void);

// Every dtype the data-movement kernels handle (fixed-size elements and
// strings); type lists for the kernel tables.
#define LOOM_ARRAY_NUMERIC_TYPES                                             \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16, \
      LOOM_DTYPE_INT8, LOOM_DTYPE_INT16, LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, \
      LOOM_DTYPE_UINT8, LOOM_DTYPE_UINT16, LOOM_DTYPE_UINT32,                \
      LOOM_DTYPE_UINT64, LOOM_DTYPE_COMPLEX64, LOOM_DTYPE_COMPLEX128
#define LOOM_ARRAY_POD_TYPES LOOM_ARRAY_NUMERIC_TYPES, LOOM_DTYPE_BOOL
#define LOOM_ARRAY_ALL_TYPES LOOM_ARRAY_POD_TYPES, LOOM_DTYPE_STRING

// Bytes per element as stored (a loom_tstring_t for strings).
size_t loom__array_element_size(loom_dtype_t dtype);

// Element `index` of an integer tensor as int64 (a SCALAR tensor gives its
// one value for every index). Any integer dtype; 0 for others.
int64_t loom__array_index_at(const loom_tensor_t* tensor, int64_t index);

// Element `index` of a tensor of any real or bool dtype as a double (used
// for Range's scalars and for messages).
double loom__array_real_at(const loom_tensor_t* tensor, int64_t index);

// A status naming the op: INVALID_ARGUMENT with a printf message.
loom_status_t loom__array_invalid(const char* format, ...)
    __attribute__((format(printf, 1, 2)));

//===----------------------------------------------------------------------===//
// Checked shape arithmetic (tensor/checked_size.h applied to shapes)
//===----------------------------------------------------------------------===//
//
// A tensor that holds elements has a count that fits int64, so every
// product of some of its dims fits too. An empty tensor does not: its dims
// may be [2^40, 2^40, 0], whose first two multiply past int64. Kernels
// therefore return early on an empty input or output before they plan a
// copy, and compute the sizes of the plan with the helpers below.

// The product of shape->dims[begin, end) (each >= 0), with a zero dim
// anywhere in the range making it 0; -1 when it overflows int64.
int64_t loom__array_dims_product(const loom_shape_t* shape, int32_t begin,
                                 int32_t end);

// Row-major element strides of `shape`; false when one overflows int64
// (only an empty tensor's dims can), leaving them unusable.
LOOM_MUST_USE_RESULT bool loom__array_strides(const loom_shape_t* shape,
                                              int64_t* strides);

// OK when the element count of `shape` (unknown dims allowed: then OK)
// fits int64; otherwise INVALID_ARGUMENT "<op>: <argument> <values>: the
// size overflows int64", quoting values[0, n) as "[a, b, ...]".
// Records the caller's location.
#define loom__array_check_count(op, argument, values, n, shape)       \
  (loom_shape_is_fully_defined(shape)                                 \
       ? loom__size_product_checked_quoting(                          \
             (op), (argument), loom_shape_dims(shape), (shape)->rank, \
             (values), (n), NULL)                                     \
       : loom_ok_status())

// The thread pool of the kernel's host, or NULL (then work runs serially).
loom_thread_pool_t* loom__array_pool(loom_kernel_context_t* ctx);

// A shape of `rank` unknown dims (any rank up to LOOM_MAX_SHAPE_RANK).
loom_status_t loom__array_unknown_dims(int64_t rank, loom_shape_t* out);

// Reads the int attr `name` (the op's defaults fill it in).
int64_t loom__array_attr_int(const loom_op_attrs_t* attrs, const char* name,
                             int64_t fallback);

// Reads the list(int) attr `name` into values[0, capacity); returns the
// list's length (-1 when absent or not a list of ints).
int64_t loom__array_attr_ints(const loom_op_attrs_t* attrs, const char* name,
                              int64_t* values, int64_t capacity);

// Makes output `index` a view of `input`'s elements from element `offset`
// on, with `shape` (no copy, O(1)): a tensor over the same buffer (or, for
// a SCALAR input, a scalar of the new shape). A string tensor can only be
// viewed from its buffer's start; otherwise its elements are copied.
loom_status_t loom__array_set_view(loom_kernel_context_t* ctx, int32_t index,
                                   loom_tensor_t* input, int64_t offset,
                                   const loom_shape_t* shape);

// A kernel's inputs with their elements in memory: a SCALAR host tensor
// (one value standing for every element) is expanded to a dense copy,
// which `holders` keeps until loom__array_inputs_release. Kernels reached
// through the cpu handler get dense inputs anyway; loom_kernel_run passes
// tensors as they are.
// Up to 8 inputs need no allocation: tensors, then as many holders.
LOOM_DEFINE_SMALL_VECTOR(loom__array_tensor_vector, loom_tensor_t*, 16)

typedef struct loom__array_inputs_t {
  loom_tensor_t** tensors;  // in `storage`: the struct must not move
  int32_t count;
  bool expanded;  // some input was expanded (holders own it)
  loom__array_tensor_vector_t storage;
} loom__array_inputs_t;

loom_status_t loom__array_inputs_init(loom_kernel_context_t* ctx,
                                      loom__array_inputs_t* inputs);
void loom__array_inputs_release(loom__array_inputs_t* inputs);

// A kernel body: reads inputs[0, num_inputs) (expanded as above), sets the
// outputs, returns its failure.
typedef loom_status_t (*loom__array_run_fn_t)(loom_kernel_context_t* ctx,
                                              loom_tensor_t* const* inputs);

// Runs `fn` on the kernel's expanded inputs; a failure goes to ctx.
void loom__array_run(loom_kernel_context_t* ctx, loom__array_run_fn_t fn);

//===----------------------------------------------------------------------===//
// Copy engines
//===----------------------------------------------------------------------===//

enum { kArrayMaxCopyRank = 2 * LOOM_MAX_RANK };

// dst[i_0 * dst_strides[0] + ...] = src[i_0 * src_strides[0] + ...] for
// every index in dims (strides in elements; source strides may be 0 or
// negative). The caller orders the dims outermost first.
typedef struct loom__array_copy_t {
  int32_t rank;
  int64_t dims[kArrayMaxCopyRank];
  int64_t src_strides[kArrayMaxCopyRank];
  int64_t dst_strides[kArrayMaxCopyRank];
} loom__array_copy_t;

// Drops dims of size 1 and merges neighbours that both sides walk
// contiguously (at least one dim remains). False when some dim is 0.
bool loom__array_copy_collapse(const loom__array_copy_t* in,
                               loom__array_copy_t* out);

// Runs `copy` of `dtype` elements; `pool` may be NULL. Fails only when a
// string cannot be copied (RESOURCE_EXHAUSTED).
loom_status_t loom__array_copy(loom_thread_pool_t* pool, loom_dtype_t dtype,
                               const void* src, void* dst,
                               const loom__array_copy_t* copy);

// A strided copy as loom__array_copy_t of any rank: up to two copy dims
// per dim of a tensor of LOOM_MAX_SHAPE_RANK dims. Large (12 KB): only
// the paths above LOOM_MAX_RANK hold one.
enum { kArrayMaxAnyCopyRank = 2 * LOOM_MAX_SHAPE_RANK };
typedef struct loom__array_copy_any_t {
  int32_t rank;
  int64_t dims[kArrayMaxAnyCopyRank];
  int64_t src_strides[kArrayMaxAnyCopyRank];
  int64_t dst_strides[kArrayMaxAnyCopyRank];
} loom__array_copy_any_t;

// loom__array_copy_collapse of a copy of any rank, in place. False (the
// copy left as it was) when some dim is 0.
bool loom__array_copy_any_collapse(loom__array_copy_any_t* copy);

// Runs the copy `plan` (at most kArrayMaxCopyRank dims) of `dtype`
// elements; loom__array_copy is one.
typedef loom_status_t (*loom__array_copy_fn_t)(loom_thread_pool_t* pool,
                                               loom_dtype_t dtype,
                                               const void* src, void* dst,
                                               const loom__array_copy_t* plan);

// Runs `copy` (of any rank) with `run` (loom__array_copy when NULL). When
// more than kArrayMaxCopyRank dims remain after collapsing, the outer ones
// become a loop on the calling thread and each of its steps runs the inner
// kArrayMaxCopyRank dims with `run`: those hold at least 2^16 elements
// (every collapsed dim has two or more), enough for `pool` to take each
// step whole, and one step runs at a time, so the steps neither race nor
// oversubscribe the pool.
loom_status_t loom__array_copy_any(loom_thread_pool_t* pool, loom_dtype_t dtype,
                                   const void* src, void* dst,
                                   loom__array_copy_any_t* copy,
                                   loom__array_copy_fn_t run);

// One 2-D block: `rows` rows of `row_elements` elements, row r at
// src + r * src_stride and dst + r * dst_stride (elements).
typedef struct loom__array_block_t {
  const void* src;
  void* dst;
  int64_t rows;
  int64_t row_elements;
  int64_t src_stride;
  int64_t dst_stride;
} loom__array_block_t;

// Up to 16 blocks need no allocation.
LOOM_DEFINE_SMALL_VECTOR(loom__array_block_vector, loom__array_block_t, 16)

// `count` blocks (uninitialised) at `blocks`.
typedef struct loom__array_block_list_t {
  loom__array_block_vector_t storage;
  loom__array_block_t* blocks;
} loom__array_block_list_t;

static inline loom_status_t loom__array_block_list_init(
    loom__array_block_list_t* list, int64_t count) {
  loom__array_block_vector_initialize(&list->storage);
  LOOM_RETURN_IF_ERROR(loom__array_block_vector_resize_uninitialized(
      &list->storage, loom_allocator_default(), (size_t)count));
  list->blocks = loom__array_block_vector_data(&list->storage);
  return loom_ok_status();
}

static inline void loom__array_block_list_free(loom__array_block_list_t* list) {
  loom__array_block_vector_deinitialize(&list->storage,
                                        loom_allocator_default());
}

// Copies every block, balanced over the pool (`pool` may be NULL).
loom_status_t loom__array_copy_blocks(loom_thread_pool_t* pool,
                                      loom_dtype_t dtype,
                                      const loom__array_block_t* blocks,
                                      int64_t count);

// Sets dst[0, count) to *value (one element of dtype; a loom_tstring_t for
// strings).
loom_status_t loom__array_fill(loom_thread_pool_t* pool, loom_dtype_t dtype,
                               void* dst, int64_t count, const void* value);

// Copies one row of n elements with strides (elements) on the calling
// thread; strings are assigned. False when a string copy failed.
bool loom__array_copy_row(loom_dtype_t dtype, const void* src,
                          int64_t src_stride, void* dst, int64_t dst_stride,
                          int64_t n);

// Transposed outputs at least this large are written around the caches
// (non-temporal stores): a transpose writes each output line in pieces,
// and reading those lines in for ownership would cost as much as the
// transpose. (Contiguous copies do better with memcpy's own stores.)
enum { kArrayStreamBytes = 8 << 20 };

// The slot of an element size in the per-size tables (1, 2, 4, 8 and 16
// bytes), or -1.
int loom__array_size_slot(size_t size);

//===----------------------------------------------------------------------===//
// Row loops (array_copy_loops.c, built per ISA level)
//===----------------------------------------------------------------------===//

// dst[i * dst_stride] = src[i * src_stride] for i < n (elements).
typedef void (*loom__array_row_fn_t)(const void* src, int64_t src_stride,
                                     void* dst, int64_t dst_stride, int64_t n);

typedef struct loom__array_row_table_t {
  loom__array_row_fn_t rows[5];  // by size slot
} loom__array_row_table_t;

extern const loom__array_row_table_t loom__array_rows_baseline;
extern const loom__array_row_table_t loom__array_rows_avx2;
extern const loom__array_row_table_t loom__array_rows_avx512;

// Makes output `index` the transpose of `input` by `perm` (a valid
// permutation of its dims): a view when only dims of size 1 move.
loom_status_t loom__array_transpose(loom_kernel_context_t* ctx,
                                    loom_tensor_t* input, const int32_t* perm,
                                    int32_t index);

//===----------------------------------------------------------------------===//
// Transpose panels (array_transpose_loops.c, built per ISA level)
//===----------------------------------------------------------------------===//

// dst[j * dst_stride + i] = src[i * src_stride + j] for i < rows, j < cols
// (strides in elements). A panel's rows should fill one 64-byte line of an
// output row (64 / element size of them); `stream` asks for non-temporal
// stores (large outputs), used when the output rows are line-aligned.
typedef void (*loom__transpose_panel_fn_t)(const void* src, int64_t src_stride,
                                           void* dst, int64_t dst_stride,
                                           int64_t rows, int64_t cols,
                                           bool stream);

// By element size: 1, 2, 4, 8 and 16 bytes.
enum { kTransposeSizes = 5 };
typedef loom__transpose_panel_fn_t loom__transpose_table_t[kTransposeSizes];

extern const loom__transpose_table_t loom__transpose_panels_baseline;
extern const loom__transpose_table_t loom__transpose_panels_avx2;
extern const loom__transpose_table_t loom__transpose_panels_avx512;

// The panel function for elements of `size` bytes at this CPU's level, or
// NULL for other sizes.
loom__transpose_panel_fn_t loom__transpose_panel(size_t size);

#endif  // LOOM_KERNELS_ARRAY_INTERNAL_H_
