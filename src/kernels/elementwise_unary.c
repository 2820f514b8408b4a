// Element-wise unary math and activations, and their gradient helpers, with
// TensorFlow's signatures: Neg, Abs, Sign, Exp, Expm1, Log, Log1p, Sqrt,
// Rsqrt, Square, Reciprocal, Inv, Sin, Cos, Tanh, Sigmoid, Relu, Relu6, Elu,
// Selu, Softplus, Softsign, Erf, Floor, Ceil, Round, LogicalNot; ReluGrad,
// Relu6Grad, TanhGrad, SigmoidGrad, RsqrtGrad, SqrtGrad, ReciprocalGrad,
// InvGrad, EluGrad, SeluGrad, SoftplusGrad, SoftsignGrad. Also the unary
// driver Cast and the float-class predicates share (cast.c).

#include "kernels/elementwise_unary.h"

#include <inttypes.h>
#include <stdio.h>

#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"
#include "loom/thread_pool.h"

//===----------------------------------------------------------------------===//
// Loop lookup
//===----------------------------------------------------------------------===//

loom__unary_loop_fn_t loom__unary_loop(loom__unary_op_t op,
                                       loom_dtype_t dtype) {
  static const loom__unary_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__unary_loops_baseline, &loom__unary_loops_avx2,
      &loom__unary_loops_avx512};
  int slot = loom__elem_slot(dtype);
  if (slot < 0 || (int)op < 0 || op >= LOOM_UNARY_OPS) return NULL;
  return (*kTables[loom__isa_level()])[op][slot];
}

loom__unary_grad_loop_fn_t loom__unary_grad_loop(loom__unary_grad_op_t op,
                                                 loom_dtype_t dtype) {
  static const loom__unary_grad_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__unary_grad_loops_baseline, &loom__unary_grad_loops_avx2,
      &loom__unary_grad_loops_avx512};
  int slot = loom__elem_slot(dtype);
  if (slot < 0 || (int)op < 0 || op >= LOOM_UNARY_GRAD_OPS) return NULL;
  return (*kTables[loom__isa_level()])[op][slot];
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

enum {
  // Work is handed out in chunks of this many elements (a multiple of every
  // vector width, so that only the last chunk has a tail).
  kUnaryChunk = 4096,
  // Up to this many elements run on the calling thread.
  kUnaryInlineElements = 16384,
};

typedef struct unary_job_t {
  loom__unary_loop_fn_t loop;            // one input, or
  loom__unary_grad_loop_fn_t grad_loop;  // two
  const char* a;
  const char* b;
  char* out;
  size_t in_size;   // bytes per input element
  size_t out_size;  // bytes per output element
  int64_t n;
} unary_job_t;

static void run_chunks(void* arg, int64_t begin, int64_t end) {
  const unary_job_t* job = arg;
  int64_t start = begin * kUnaryChunk;
  int64_t stop = end * kUnaryChunk;
  if (stop > job->n) stop = job->n;
  if (start >= stop) return;
  const char* a = job->a + (size_t)start * job->in_size;
  char* out = job->out + (size_t)start * job->out_size;
  if (job->grad_loop) {
    job->grad_loop(a, job->b + (size_t)start * job->in_size, out, stop - start);
  } else {
    job->loop(a, out, stop - start);
  }
}

static void run_job(loom_kernel_context_t* ctx, unary_job_t* job,
                    int64_t cost_per_element) {
  if (job->n == 0) return;
  int64_t chunks = (job->n + kUnaryChunk - 1) / kUnaryChunk;
  if (job->n <= kUnaryInlineElements) {
    run_chunks(job, 0, chunks);
    return;
  }
  loom_thread_pool_t* pool =
      loom_host_context_thread_pool(loom_kernel_context_host(ctx));
  loom_status_t status = loom_thread_pool_parallel_for(
      pool, chunks, kUnaryChunk * cost_per_element, run_chunks, job);
  if (status) loom_kernel_context_fail(ctx, status);
}

static void fail_without_loop(loom_kernel_context_t* ctx) {
  loom_tensor_t* x = loom_kernel_context_input(ctx, 0);
  loom_kernel_context_fail(
      ctx, loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "%s: no CPU loop for dtype %s",
                            loom_kernel_context_op(ctx)->name,
                            loom_dtype_name(loom_tensor_dtype(x))));
}

void loom__unary_compute(loom_kernel_context_t* ctx, loom__unary_loop_fn_t loop,
                         int64_t cost_per_element) {
  if (!loop) {
    fail_without_loop(ctx);
    return;
  }
  loom_tensor_t* x = loom_kernel_context_input(ctx, 0);
  loom_dtype_t out_dtype = loom_kernel_context_output_dtype(ctx, 0);
  // The input becomes the output when nobody else holds it: element i of
  // the result depends only on element i of the input.
  const int32_t candidate = 0;
  loom_tensor_t* y = NULL;
  loom_status_t status = loom_kernel_context_forward_or_allocate(
      ctx, &candidate, loom_tensor_dtype(x) == out_dtype ? 1 : 0, 0,
      loom_tensor_shape(x), NULL, &y);
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  unary_job_t job = {
      .loop = loop,
      .a = loom_tensor_data(x),
      .out = loom_tensor_data(y),
      .in_size = loom_dtype_size(loom_tensor_dtype(x)),
      .out_size = loom_dtype_size(out_dtype),
      .n = loom_tensor_num_elements(x),
  };
  run_job(ctx, &job, cost_per_element);
}

void loom__unary_grad_compute(loom_kernel_context_t* ctx,
                              loom__unary_grad_loop_fn_t loop,
                              int64_t cost_per_element) {
  if (!loop) {
    fail_without_loop(ctx);
    return;
  }
  loom_tensor_t* a = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* b = loom_kernel_context_input(ctx, 1);
  // Either input may become the output (of input 0's shape), as in
  // TensorFlow's binary kernels.
  static const int32_t kCandidates[2] = {0, 1};
  loom_tensor_t* z = NULL;
  loom_status_t status = loom_kernel_context_forward_or_allocate(
      ctx, kCandidates, 2, 0, loom_tensor_shape(a), NULL, &z);
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  size_t size = loom_dtype_size(loom_tensor_dtype(a));
  unary_job_t job = {
      .grad_loop = loop,
      .a = loom_tensor_data(a),
      .b = loom_tensor_data(b),
      .out = loom_tensor_data(z),
      .in_size = size,
      .out_size = size,
      .n = loom_tensor_num_elements(a),
  };
  run_job(ctx, &job, cost_per_element);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

#define UNARY_COMPUTE(fn, op, cost)                                      \
  static void fn##_compute(void* kernel, loom_kernel_context_t* ctx) {   \
    (void)kernel;                                                        \
    loom_tensor_t* x = loom_kernel_context_input(ctx, 0);                \
    loom__unary_compute(ctx, loom__unary_loop(op, loom_tensor_dtype(x)), \
                        cost);                                           \
  }

// Costs: nanoseconds-ish per element, for the thread pool's splitting.
UNARY_COMPUTE(neg, LOOM_UNARY_NEG, 1)
UNARY_COMPUTE(abs, LOOM_UNARY_ABS, 1)
UNARY_COMPUTE(sign, LOOM_UNARY_SIGN, 1)
UNARY_COMPUTE(exp, LOOM_UNARY_EXP, 2)
UNARY_COMPUTE(expm1, LOOM_UNARY_EXPM1, 2)
UNARY_COMPUTE(log, LOOM_UNARY_LOG, 2)
UNARY_COMPUTE(log1p, LOOM_UNARY_LOG1P, 2)
UNARY_COMPUTE(sqrt, LOOM_UNARY_SQRT, 1)
UNARY_COMPUTE(rsqrt, LOOM_UNARY_RSQRT, 2)
UNARY_COMPUTE(square, LOOM_UNARY_SQUARE, 1)
UNARY_COMPUTE(reciprocal, LOOM_UNARY_RECIPROCAL, 1)
UNARY_COMPUTE(sin, LOOM_UNARY_SIN, 4)
UNARY_COMPUTE(cos, LOOM_UNARY_COS, 4)
UNARY_COMPUTE(tanh, LOOM_UNARY_TANH, 4)
UNARY_COMPUTE(sigmoid, LOOM_UNARY_SIGMOID, 3)
UNARY_COMPUTE(relu, LOOM_UNARY_RELU, 1)
UNARY_COMPUTE(relu6, LOOM_UNARY_RELU6, 1)
UNARY_COMPUTE(elu, LOOM_UNARY_ELU, 2)
UNARY_COMPUTE(selu, LOOM_UNARY_SELU, 2)
UNARY_COMPUTE(softplus, LOOM_UNARY_SOFTPLUS, 5)
UNARY_COMPUTE(softsign, LOOM_UNARY_SOFTSIGN, 1)
UNARY_COMPUTE(erf, LOOM_UNARY_ERF, 4)
UNARY_COMPUTE(floor, LOOM_UNARY_FLOOR, 1)
UNARY_COMPUTE(ceil, LOOM_UNARY_CEIL, 1)
UNARY_COMPUTE(round, LOOM_UNARY_ROUND, 1)
UNARY_COMPUTE(logical_not, LOOM_UNARY_LOGICAL_NOT, 1)

// Gradients whose inputs TensorFlow checks by element count
// (SimpleBinaryOp).
#define GRAD_COMPUTE(fn, op, cost)                                           \
  static void fn##_compute(void* kernel, loom_kernel_context_t* ctx) {       \
    (void)kernel;                                                            \
    loom_tensor_t* a = loom_kernel_context_input(ctx, 0);                    \
    loom_tensor_t* b = loom_kernel_context_input(ctx, 1);                    \
    int64_t na = loom_tensor_num_elements(a);                                \
    int64_t nb = loom_tensor_num_elements(b);                                \
    if (na != nb) {                                                          \
      loom_kernel_context_fail(                                              \
          ctx, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,                \
                                "The two arguments to a cwise op must "      \
                                "have same number of elements, got %" PRId64 \
                                " and %" PRId64,                             \
                                na, nb));                                    \
      return;                                                                \
    }                                                                        \
    loom__unary_grad_compute(                                                \
        ctx, loom__unary_grad_loop(op, loom_tensor_dtype(a)), cost);         \
  }

// Gradients whose inputs TensorFlow requires to have one shape
// (BinaryElementWiseOp).
#define SAME_SHAPE_GRAD_COMPUTE(fn, op, cost)                                  \
  static void fn##_compute(void* kernel, loom_kernel_context_t* ctx) {         \
    (void)kernel;                                                              \
    loom_tensor_t* a = loom_kernel_context_input(ctx, 0);                      \
    loom_tensor_t* b = loom_kernel_context_input(ctx, 1);                      \
    if (!loom_shape_equal(loom_tensor_shape(a), loom_tensor_shape(b))) {       \
      loom_kernel_context_fail(                                                \
          ctx,                                                                 \
          loom__same_shape_error(loom_kernel_context_op(ctx)->name,            \
                                 loom_tensor_shape(a), loom_tensor_shape(b))); \
      return;                                                                  \
    }                                                                          \
    loom__unary_grad_compute(                                                  \
        ctx, loom__unary_grad_loop(op, loom_tensor_dtype(a)), cost);           \
  }

GRAD_COMPUTE(tanh_grad, LOOM_UNARY_GRAD_TANH, 1)
GRAD_COMPUTE(sigmoid_grad, LOOM_UNARY_GRAD_SIGMOID, 1)
GRAD_COMPUTE(rsqrt_grad, LOOM_UNARY_GRAD_RSQRT, 1)
GRAD_COMPUTE(sqrt_grad, LOOM_UNARY_GRAD_SQRT, 1)
GRAD_COMPUTE(reciprocal_grad, LOOM_UNARY_GRAD_RECIPROCAL, 1)
SAME_SHAPE_GRAD_COMPUTE(relu_grad, LOOM_UNARY_GRAD_RELU, 1)
SAME_SHAPE_GRAD_COMPUTE(relu6_grad, LOOM_UNARY_GRAD_RELU6, 1)
SAME_SHAPE_GRAD_COMPUTE(elu_grad, LOOM_UNARY_GRAD_ELU, 1)
SAME_SHAPE_GRAD_COMPUTE(selu_grad, LOOM_UNARY_GRAD_SELU, 1)
SAME_SHAPE_GRAD_COMPUTE(softplus_grad, LOOM_UNARY_GRAD_SOFTPLUS, 3)
SAME_SHAPE_GRAD_COMPUTE(softsign_grad, LOOM_UNARY_GRAD_SOFTSIGN, 1)

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

// TensorFlow's type lists (complex types aside: Loom has no complex kernels).
#define UNARY_TYPES "{bfloat16, half, float, double, int8, int16, int32, int64}"
#define UNARY_UNSIGNED_TYPES                                           \
  "{bfloat16, half, float, double, int8, int16, int32, int64, uint8, " \
  "uint16, uint32, uint64}"
#define FLOAT_TYPES "{bfloat16, half, float, double}"

#define UNARY_OP(op_name, types)                                 \
  {                                                              \
    .name = op_name, .inputs = {"x: T"}, .outputs = {"y: T"},    \
    .attrs = {"T: " types}, .shape_fn = loom__shape_fn_unchanged \
  }
#define ACTIVATION_OP(op_name, types)                                          \
  {                                                                            \
    .name = op_name, .inputs = {"features: T"}, .outputs = {"activations: T"}, \
    .attrs = {"T: " types}, .shape_fn = loom__shape_fn_unchanged               \
  }
// (y, dy) -> z; TensorFlow's shape function takes y's shape.
#define GRAD_OP(op_name)                                               \
  {                                                                    \
    .name = op_name, .inputs = {"y: T", "dy: T"}, .outputs = {"z: T"}, \
    .attrs = {"T: " FLOAT_TYPES}, .shape_fn = loom__shape_fn_unchanged \
  }
#define BACKPROP_OP(op_name, second, types)              \
  {                                                      \
    .name = op_name, .inputs = {"gradients: T", second}, \
    .outputs = {"backprops: T"}, .attrs = {"T: " types}, \
    .shape_fn = loom__shape_fn_merge_inputs              \
  }

static const loom__builtin_op_t kOps[] = {
    UNARY_OP("Neg", UNARY_TYPES),
    UNARY_OP("Abs", UNARY_TYPES),
    UNARY_OP("Sign", UNARY_TYPES),
    UNARY_OP("Exp", FLOAT_TYPES),
    UNARY_OP("Expm1", FLOAT_TYPES),
    UNARY_OP("Log", FLOAT_TYPES),
    UNARY_OP("Log1p", FLOAT_TYPES),
    UNARY_OP("Sqrt", FLOAT_TYPES),
    UNARY_OP("Rsqrt", FLOAT_TYPES),
    UNARY_OP("Square", UNARY_UNSIGNED_TYPES),
    UNARY_OP("Reciprocal", UNARY_TYPES),
    UNARY_OP("Inv", UNARY_TYPES),
    UNARY_OP("Sin", FLOAT_TYPES),
    UNARY_OP("Cos", FLOAT_TYPES),
    UNARY_OP("Tanh", FLOAT_TYPES),
    UNARY_OP("Sigmoid", FLOAT_TYPES),
    ACTIVATION_OP("Relu", "realnumbertype"),
    ACTIVATION_OP("Relu6", "realnumbertype"),
    ACTIVATION_OP("Elu", FLOAT_TYPES),
    ACTIVATION_OP("Selu", FLOAT_TYPES),
    ACTIVATION_OP("Softplus", FLOAT_TYPES),
    ACTIVATION_OP("Softsign", FLOAT_TYPES),
    UNARY_OP("Erf", FLOAT_TYPES),
    UNARY_OP("Floor", FLOAT_TYPES),
    UNARY_OP("Ceil", FLOAT_TYPES),
    UNARY_OP("Round", UNARY_TYPES),
    {.name = "LogicalNot",
     .inputs = {"x: bool"},
     .outputs = {"y: bool"},
     .shape_fn = loom__shape_fn_unchanged},
    GRAD_OP("TanhGrad"),
    GRAD_OP("SigmoidGrad"),
    GRAD_OP("RsqrtGrad"),
    GRAD_OP("SqrtGrad"),
    GRAD_OP("ReciprocalGrad"),
    GRAD_OP("InvGrad"),
    BACKPROP_OP("ReluGrad", "features: T", "realnumbertype"),
    BACKPROP_OP("Relu6Grad", "features: T", "realnumbertype"),
    BACKPROP_OP("EluGrad", "outputs: T", FLOAT_TYPES),
    BACKPROP_OP("SeluGrad", "outputs: T", FLOAT_TYPES),
    BACKPROP_OP("SoftplusGrad", "features: T", FLOAT_TYPES),
    BACKPROP_OP("SoftsignGrad", "features: T", FLOAT_TYPES),
};

#define FLOATS \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16
#define SIGNED \
  LOOM_DTYPE_INT8, LOOM_DTYPE_INT16, LOOM_DTYPE_INT32, LOOM_DTYPE_INT64
#define UNSIGNED \
  LOOM_DTYPE_UINT8, LOOM_DTYPE_UINT16, LOOM_DTYPE_UINT32, LOOM_DTYPE_UINT64

#define KERNEL(op, fn, ...)                                   \
  {                                                           \
    .op_name = op, .any_rank = true, .compute = fn##_compute, \
    .type_attr = "T", .types = {                              \
      __VA_ARGS__                                             \
    }                                                         \
  }

static const loom__builtin_kernel_t kKernels[] = {
    KERNEL("Neg", neg, FLOATS, SIGNED),
    KERNEL("Abs", abs, FLOATS, SIGNED),
    KERNEL("Sign", sign, FLOATS, SIGNED),
    KERNEL("Exp", exp, FLOATS),
    KERNEL("Expm1", expm1, FLOATS),
    KERNEL("Log", log, FLOATS),
    KERNEL("Log1p", log1p, FLOATS),
    KERNEL("Sqrt", sqrt, FLOATS),
    KERNEL("Rsqrt", rsqrt, FLOATS),
    KERNEL("Square", square, FLOATS, SIGNED, UNSIGNED),
    KERNEL("Reciprocal", reciprocal, FLOATS),
    KERNEL("Inv", reciprocal, FLOATS),
    KERNEL("Sin", sin, FLOATS),
    KERNEL("Cos", cos, FLOATS),
    KERNEL("Tanh", tanh, FLOATS),
    KERNEL("Sigmoid", sigmoid, FLOATS),
    KERNEL("Relu", relu, FLOATS, SIGNED, UNSIGNED),
    KERNEL("Relu6", relu6, FLOATS, SIGNED, UNSIGNED),
    KERNEL("Elu", elu, FLOATS),
    KERNEL("Selu", selu, FLOATS),
    KERNEL("Softplus", softplus, FLOATS),
    KERNEL("Softsign", softsign, FLOATS),
    KERNEL("Erf", erf, FLOATS),
    KERNEL("Floor", floor, FLOATS),
    KERNEL("Ceil", ceil, FLOATS),
    KERNEL("Round", round, FLOATS, SIGNED),
    {.op_name = "LogicalNot", .compute = logical_not_compute, .any_rank = true},
    KERNEL("TanhGrad", tanh_grad, FLOATS),
    KERNEL("SigmoidGrad", sigmoid_grad, FLOATS),
    KERNEL("RsqrtGrad", rsqrt_grad, FLOATS),
    KERNEL("SqrtGrad", sqrt_grad, FLOATS),
    KERNEL("ReciprocalGrad", reciprocal_grad, FLOATS),
    KERNEL("InvGrad", reciprocal_grad, FLOATS),
    KERNEL("ReluGrad", relu_grad, FLOATS, SIGNED, UNSIGNED),
    KERNEL("Relu6Grad", relu6_grad, FLOATS, SIGNED, UNSIGNED),
    KERNEL("EluGrad", elu_grad, FLOATS),
    KERNEL("SeluGrad", selu_grad, FLOATS),
    KERNEL("SoftplusGrad", softplus_grad, FLOATS),
    KERNEL("SoftsignGrad", softsign_grad, FLOATS),
};

loom_status_t loom__register_unary_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
