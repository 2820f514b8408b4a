// Cumsum and Cumprod (TensorFlow's signatures, attrs and messages): running
// sums or products along one axis, inclusive or exclusive, forwards or in
// reverse. Each line along the axis is scanned in order, in T (half and
// bfloat16 rounded at every step, as Eigen's scan does), so float results
// are NumPy's cumsum / cumprod bits; lines are split over the thread pool.

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/half.h"
#include "kernels/array_internal.h"
#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"

// The input as [outer, n, inner] around the axis, and the scan's options.
typedef struct scan_job_t {
  loom_dtype_t dtype;
  const void* x;
  void* y;
  int64_t n, inner;
  bool exclusive, reverse;
  bool product;  // Cumprod
} scan_job_t;

// One line: element k of line `line` is at base + k * inner; with
// `reverse`, k runs from n - 1 down.
#define SCAN_LINES(type, zero, add)                                           \
  do {                                                                        \
    const type* x = job->x;                                                   \
    type* y = job->y;                                                         \
    for (int64_t line = begin; line < end; ++line) {                          \
      int64_t base =                                                          \
          line / job->inner * job->n * job->inner + line % job->inner;        \
      type sum = zero;                                                        \
      for (int64_t k = 0; k < job->n; ++k) {                                  \
        int64_t at = base + (job->reverse ? job->n - 1 - k : k) * job->inner; \
        type value = x[at];                                                   \
        if (job->exclusive) {                                                 \
          y[at] = sum;                                                        \
          sum = add(sum, value);                                              \
        } else {                                                              \
          sum = add(sum, value);                                              \
          y[at] = sum;                                                        \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  } while (0)

#define ADD(a, b) ((a) + (b))
// Unsigned products promoted to at least unsigned int: no signed overflow
// (uint16_t * uint16_t would multiply as int).
#define MUL(a, b) (1u * (a) * (b))
#define MUL_FLOAT(a, b) ((a) * (b))
#define MUL_HALF(a, b) \
  loom__float_to_half(loom__half_to_float(a) * loom__half_to_float(b))
#define MUL_BFLOAT16(a, b)                             \
  loom__float_to_bfloat16(loom__bfloat16_to_float(a) * \
                          loom__bfloat16_to_float(b))
#define ADD_HALF(a, b) \
  loom__float_to_half(loom__half_to_float(a) + loom__half_to_float(b))
#define ADD_BFLOAT16(a, b)                             \
  loom__float_to_bfloat16(loom__bfloat16_to_float(a) + \
                          loom__bfloat16_to_float(b))

typedef struct complex64_t {
  float re, im;
} complex64_t;
typedef struct complex128_t {
  double re, im;
} complex128_t;

static inline complex64_t add_c64(complex64_t a, complex64_t b) {
  return (complex64_t){.re = a.re + b.re, .im = a.im + b.im};
}
static inline complex128_t add_c128(complex128_t a, complex128_t b) {
  return (complex128_t){.re = a.re + b.re, .im = a.im + b.im};
}
static inline complex64_t mul_c64(complex64_t a, complex64_t b) {
  return (complex64_t){.re = a.re * b.re - a.im * b.im,
                       .im = a.re * b.im + a.im * b.re};
}
static inline complex128_t mul_c128(complex128_t a, complex128_t b) {
  return (complex128_t){.re = a.re * b.re - a.im * b.im,
                        .im = a.re * b.im + a.im * b.re};
}

static void product_lines(const scan_job_t* job, int64_t begin, int64_t end) {
  switch (job->dtype) {
    case LOOM_DTYPE_FLOAT:
      SCAN_LINES(float, 1.0f, MUL_FLOAT);
      break;
    case LOOM_DTYPE_DOUBLE:
      SCAN_LINES(double, 1.0, MUL_FLOAT);
      break;
    case LOOM_DTYPE_HALF:
      SCAN_LINES(uint16_t, 0x3c00, MUL_HALF);
      break;
    case LOOM_DTYPE_BFLOAT16:
      SCAN_LINES(uint16_t, 0x3f80, MUL_BFLOAT16);
      break;
    // Integers wrap as TensorFlow's do (unsigned, so that the wrap is
    // defined).
    case LOOM_DTYPE_INT8:
    case LOOM_DTYPE_UINT8:
      SCAN_LINES(uint8_t, 1, MUL);
      break;
    case LOOM_DTYPE_INT16:
    case LOOM_DTYPE_UINT16:
      SCAN_LINES(uint16_t, 1, MUL);
      break;
    case LOOM_DTYPE_INT32:
    case LOOM_DTYPE_UINT32:
      SCAN_LINES(uint32_t, 1, MUL);
      break;
    case LOOM_DTYPE_INT64:
    case LOOM_DTYPE_UINT64:
      SCAN_LINES(uint64_t, 1, MUL);
      break;
    case LOOM_DTYPE_COMPLEX64:
      SCAN_LINES(complex64_t, ((complex64_t){.re = 1.0f}), mul_c64);
      break;
    case LOOM_DTYPE_COMPLEX128:
      SCAN_LINES(complex128_t, ((complex128_t){.re = 1.0}), mul_c128);
      break;
    default:
      break;
  }
}

static void scan_lines(void* arg, int64_t begin, int64_t end) {
  const scan_job_t* job = arg;
  if (job->product) {
    product_lines(job, begin, end);
    return;
  }
  switch (job->dtype) {
    case LOOM_DTYPE_FLOAT:
      SCAN_LINES(float, 0.0f, ADD);
      break;
    case LOOM_DTYPE_DOUBLE:
      SCAN_LINES(double, 0.0, ADD);
      break;
    case LOOM_DTYPE_HALF:
      SCAN_LINES(uint16_t, 0, ADD_HALF);
      break;
    case LOOM_DTYPE_BFLOAT16:
      SCAN_LINES(uint16_t, 0, ADD_BFLOAT16);
      break;
    // Integers wrap as TensorFlow's do (two's complement, computed
    // unsigned so that the wrap is defined).
    case LOOM_DTYPE_INT8:
    case LOOM_DTYPE_UINT8:
      SCAN_LINES(uint8_t, 0, ADD);
      break;
    case LOOM_DTYPE_INT16:
    case LOOM_DTYPE_UINT16:
      SCAN_LINES(uint16_t, 0, ADD);
      break;
    case LOOM_DTYPE_INT32:
    case LOOM_DTYPE_UINT32:
      SCAN_LINES(uint32_t, 0, ADD);
      break;
    case LOOM_DTYPE_INT64:
    case LOOM_DTYPE_UINT64:
      SCAN_LINES(uint64_t, 0, ADD);
      break;
    case LOOM_DTYPE_COMPLEX64:
      SCAN_LINES(complex64_t, (complex64_t){0}, add_c64);
      break;
    case LOOM_DTYPE_COMPLEX128:
      SCAN_LINES(complex128_t, (complex128_t){0}, add_c128);
      break;
    default:
      break;
  }
}

static bool attr_bool(loom_kernel_context_t* ctx, const char* name) {
  bool value = false;
  loom_status_free(
      loom_op_attrs_get_bool(loom_kernel_context_attrs(ctx), name, &value));
  return value;
}

static loom_status_t scan_run(loom_kernel_context_t* ctx,
                              loom_tensor_t* const* inputs) {
  loom_tensor_t* input = inputs[0];
  const loom_shape_t* in = loom_tensor_shape(input);
  const loom_shape_t* axis_shape = loom_tensor_shape(inputs[1]);
  if (axis_shape->rank != 0) {
    char text[LOOM_SHAPE_FORMAT_MAX];
    return loom__array_invalid(
        "ScanOp: axis must be a scalar, not %s",
        loom__shape_debug_string(axis_shape, text, sizeof(text)));
  }
  int64_t axis_arg = loom__array_index_at(inputs[1], 0);
  int64_t axis = axis_arg < 0 ? axis_arg + in->rank : axis_arg;
  if (axis < 0 || axis >= in->rank) {
    return loom__array_invalid(
        "ScanOp: Expected scan axis in the range [%d, %d), but got %" PRId64,
        -in->rank, in->rank, axis);
  }
  loom_tensor_t* output = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, in, &output));
  if (loom_tensor_num_elements(input) == 0) return loom_ok_status();
  scan_job_t job = {
      .dtype = loom_tensor_dtype(input),
      .x = loom_tensor_data(input),
      .y = loom_tensor_data(output),
      .n = loom_shape_dims(in)[axis],
      .inner = loom__array_dims_product(in, (int32_t)axis + 1, in->rank),
      .exclusive = attr_bool(ctx, "exclusive"),
      .reverse = attr_bool(ctx, "reverse"),
      .product = strcmp(loom_kernel_context_op(ctx)->name, "Cumprod") == 0,
  };
  int64_t lines = loom_tensor_num_elements(input) / job.n;
  return loom_thread_pool_parallel_for(loom__array_pool(ctx), lines, job.n * 2,
                                       scan_lines, &job);
}

static void scan_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, scan_run);
}

#define SCAN_OP(op_name)                                                      \
  {                                                                           \
    .name = op_name, .inputs = {"x: T", "axis: Tidx"}, .outputs = {"out: T"}, \
    .attrs = {"exclusive: bool = false", "reverse: bool = false",             \
              "T: numbertype", "Tidx: {int32, int64} = DT_INT32"},            \
    .shape_fn = loom__shape_fn_unchanged                                      \
  }

static const loom__builtin_op_t kOps[] = {SCAN_OP("Cumsum"),
                                          SCAN_OP("Cumprod")};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Cumsum",
     .compute = scan_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {LOOM_ARRAY_NUMERIC_TYPES},
     .host_memory = {"axis"}},
    {.op_name = "Cumprod",
     .compute = scan_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {LOOM_ARRAY_NUMERIC_TYPES},
     .host_memory = {"axis"}},
};

loom_status_t loom__register_scan_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
