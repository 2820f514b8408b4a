// _FusedMatMul: what TensorFlow's grappler (and TFRT's CPU programs) make
// of MatMul + BiasAdd [+ Relu | Relu6 | Elu | LeakyRelu], with TensorFlow's
// signature, accepted fusions and messages. One product through MatMul's
// path (OpenBLAS, blocks of rows on the pool); each block then gets its
// bias and activation while it is still in cache, in the type the product
// is computed in (float for half and bfloat16, rounded once at the end).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "kernels/elementwise_unary.h"
#include "kernels/kernel_registration.h"
#include "kernels/matmul.h"
#include "kernels/shape_fns.h"

// TensorFlow's CPU patterns: fused_ops must be exactly one of these.
typedef enum fusion_t {
  FUSION_BIAS_ADD = 0,
  FUSION_BIAS_ADD_RELU,
  FUSION_BIAS_ADD_RELU6,
  FUSION_BIAS_ADD_ELU,
  FUSION_BIAS_ADD_LEAKY_RELU,
  FUSIONS,
} fusion_t;

static const struct {
  const char* activation;  // NULL: BiasAdd alone
  loom__unary_op_t unary;  // the activation's loop (not for LeakyRelu)
} kFusions[FUSIONS] = {
    [FUSION_BIAS_ADD] = {.activation = NULL},
    [FUSION_BIAS_ADD_RELU] = {.activation = "Relu", .unary = LOOM_UNARY_RELU},
    [FUSION_BIAS_ADD_RELU6] = {.activation = "Relu6",
                               .unary = LOOM_UNARY_RELU6},
    [FUSION_BIAS_ADD_ELU] = {.activation = "Elu", .unary = LOOM_UNARY_ELU},
    [FUSION_BIAS_ADD_LEAKY_RELU] = {.activation = "LeakyRelu"},
};

typedef struct fused_kernel_t {
  bool transpose_a;
  bool transpose_b;
  fusion_t fusion;
  float leakyrelu_alpha;
} fused_kernel_t;

//===----------------------------------------------------------------------===//
// Construction: the fusion pattern
//===----------------------------------------------------------------------===//

static bool string_is(const loom_attr_value_t* value, const char* text) {
  size_t size = strlen(text);
  return value->kind == LOOM_ATTR_KIND_STRING && value->u.string.size == size &&
         memcmp(value->u.string.data, text, size) == 0;
}

// "[BiasAdd,Tanh]", as TensorFlow joins fused_ops in its message.
static void join_ops(const loom_attr_value_t* ops, char* text, size_t size) {
  size_t used = (size_t)snprintf(text, size, "[");
  for (int64_t i = 0; i < ops->count && used < size; ++i) {
    loom_attr_value_t op;
    loom_status_t status = loom_attr_value_list_element(ops, i, &op);
    if (status) {
      loom_status_free(status);
      break;
    }
    bool is_string = op.kind == LOOM_ATTR_KIND_STRING;
    used += (size_t)snprintf(text + used, size - used, "%s%.*s", i ? "," : "",
                             is_string ? (int)op.u.string.size : 0,
                             is_string ? op.u.string.data : "");
  }
  if (used < size) snprintf(text + used, size - used, "]");
}

// Which pattern `ops` is: FUSIONS when none.
static fusion_t match_fusion(const loom_attr_value_t* ops) {
  if (ops->count < 1 || ops->count > 2) return FUSIONS;
  loom_attr_value_t first, second = {0};
  loom_status_t status = loom_attr_value_list_element(ops, 0, &first);
  if (!status && ops->count == 2) {
    status = loom_attr_value_list_element(ops, 1, &second);
  }
  if (status) {
    loom_status_free(status);
    return FUSIONS;
  }
  if (!string_is(&first, "BiasAdd")) return FUSIONS;
  if (ops->count == 1) return FUSION_BIAS_ADD;
  for (int f = FUSION_BIAS_ADD_RELU; f < FUSIONS; ++f) {
    if (string_is(&second, kFusions[f].activation)) return (fusion_t)f;
  }
  return FUSIONS;
}

static loom_status_t read_fusion(const loom_op_attrs_t* attrs,
                                 fused_kernel_t* kernel) {
  LOOM_RETURN_IF_ERROR(
      loom_op_attrs_get_bool(attrs, "transpose_a", &kernel->transpose_a));
  LOOM_RETURN_IF_ERROR(
      loom_op_attrs_get_bool(attrs, "transpose_b", &kernel->transpose_b));
  int64_t num_args = 0;
  LOOM_RETURN_IF_ERROR(loom_op_attrs_get_i64(attrs, "num_args", &num_args));
  loom_attr_value_t ops;
  if (!loom_op_attrs_get(attrs, "fused_ops", &ops) || !ops.is_list ||
      ops.count == 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Fused MatMul must have at least one fused op.");
  }
  kernel->fusion = match_fusion(&ops);
  if (kernel->fusion == FUSIONS) {
    char text[256];
    join_ops(&ops, text, sizeof(text));
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "Fusion is not implemented: %s", text);
  }
  if (num_args != 1) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Fused MatMul with BiasAdd must have one extra argument: bias.");
  }
  kernel->leakyrelu_alpha = 0.2f;
  if (kernel->fusion == FUSION_BIAS_ADD_LEAKY_RELU) {
    LOOM_RETURN_IF_ERROR(loom_op_attrs_get_f32(attrs, "leakyrelu_alpha",
                                               &kernel->leakyrelu_alpha));
  }
  return loom_ok_status();
}

static void* fused_create(loom_kernel_construction_t* ctx) {
  fused_kernel_t* kernel = calloc(1, sizeof(*kernel));
  if (!kernel) {
    loom_kernel_construction_fail(
        ctx, loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "_FusedMatMul: out of memory creating the "
                              "kernel (%zu bytes)",
                              sizeof(*kernel)));
    return NULL;
  }
  loom_status_t status =
      read_fusion(loom_kernel_construction_attrs(ctx), kernel);
  if (status) {
    free(kernel);
    loom_kernel_construction_fail(ctx, status);
    return NULL;
  }
  return kernel;
}

static void fused_destroy(void* kernel) {
  free(kernel);
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

// The bias and activation of a block of rows, a few thousand elements at a
// time so the activation reads what the bias add left in L1.
enum { kEpilogueChunk = 4096 };

typedef struct epilogue_state_t {
  const loom__matmul_loops_t* loops;
  const float* bias;                 // n elements
  loom__unary_loop_fn_t activation;  // NULL: none (or LeakyRelu)
  bool leaky_relu;
  float alpha;
} epilogue_state_t;

// The product is computed in float for every dtype the op allows.
static void epilogue_rows(const void* arg, void* c, int64_t rows, int64_t n) {
  const epilogue_state_t* state = arg;
  if (n == 0) return;
  int64_t chunk = kEpilogueChunk / n > 0 ? kEpilogueChunk / n : 1;
  for (int64_t row = 0; row < rows; row += chunk) {
    int64_t count = rows - row < chunk ? rows - row : chunk;
    float* block = (float*)c + row * n;
    state->loops->bias_rows_f32(block, state->bias, count, n);
    if (state->activation) {
      state->activation(block, block, count * n);
    } else if (state->leaky_relu) {
      state->loops->leaky_relu_f32(block, count * n, state->alpha);
    }
  }
}

#define FAIL_AND_RETURN(ctx, status)       \
  do {                                     \
    loom_kernel_context_fail(ctx, status); \
    return;                                \
  } while (0)

// TensorFlow's rule (leading dims of 1), then one bias per column of the
// product (TensorFlow reads past a short bias; Loom refuses it).
static loom_status_t check_bias(const loom_shape_t* bias,
                                const loom_shape_t* product) {
  char tb[160], tp[160];
  for (int32_t i = 0; i + 1 < bias->rank; ++i) {
    if (bias->dims[i] != 1) {
      loom__shape_debug_string(bias, tb, sizeof(tb));
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "all dimension sizes of bias must be 1 except "
                              "the last dimension: %s",
                              tb);
    }
  }
  int64_t count = bias->rank > 0 ? bias->dims[bias->rank - 1] : 1;
  if (count == product->dims[1]) return loom_ok_status();
  loom__shape_debug_string(bias, tb, sizeof(tb));
  loom__shape_debug_string(product, tp, sizeof(tp));
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Must provide as many biases as the product has "
                          "columns: bias %s vs. product %s",
                          tb, tp);
}

static void fused_compute(void* arg, loom_kernel_context_t* ctx) {
  const fused_kernel_t* kernel = arg;
  loom_tensor_t* a = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* b = loom_kernel_context_input(ctx, 1);
  loom_tensor_t* bias = loom_kernel_context_input(ctx, 2);
  loom_shape_t product;
  loom_status_t status = loom__matmul_output_shape(
      loom_kernel_context_op(ctx)->name, loom_tensor_shape(a),
      loom_tensor_shape(b), kernel->transpose_a, kernel->transpose_b, &product);
  if (!status) status = check_bias(loom_tensor_shape(bias), &product);
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_dtype_t dtype = loom_tensor_dtype(a);
  epilogue_state_t state = {
      .loops = loom__matmul_loops(),
      .bias = loom_tensor_data(bias),
      .leaky_relu = kernel->fusion == FUSION_BIAS_ADD_LEAKY_RELU,
      .alpha = kernel->leakyrelu_alpha,
  };
  if (kFusions[kernel->fusion].activation && !state.leaky_relu) {
    state.activation =
        loom__unary_loop(kFusions[kernel->fusion].unary, LOOM_DTYPE_FLOAT);
  }
  // 16-bit biases are widened once, as the product is computed in float.
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  void* wide_bias = NULL;
  int64_t n = product.dims[1];
  if ((dtype == LOOM_DTYPE_HALF || dtype == LOOM_DTYPE_BFLOAT16) && n > 0) {
    // n is below the bias's element count: no overflow.
    status = loom_allocator_malloc_aligned(allocator, (size_t)n * sizeof(float),
                                           64, &wide_bias);
    if (status) FAIL_AND_RETURN(ctx, status);
    (dtype == LOOM_DTYPE_HALF ? state.loops->half_to_float
                              : state.loops->bfloat16_to_float)(
        loom_tensor_data(bias), wide_bias, n);
    state.bias = wide_bias;
  }
  loom__matmul_epilogue_t epilogue = {.fn = epilogue_rows, .state = &state};
  loom__matmul_compute(ctx, kernel->transpose_a, kernel->transpose_b,
                       &epilogue);
  loom_allocator_free(allocator, wide_bias);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__builtin_op_t kOps[] = {
    {.name = "_FusedMatMul",
     .inputs = {"a: T", "b: T", "args: num_args * T"},
     .outputs = {"product: T"},
     .attrs = {"transpose_a: bool = false", "transpose_b: bool = false",
               "T: {bfloat16, half, float}", "num_args: int >= 0",
               "fused_ops: list(string) = []", "epsilon: float = 0.0001",
               "leakyrelu_alpha: float = 0.2"},
     .shape_fn = loom__matmul_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "_FusedMatMul",
     .compute = fused_compute,
     .create = fused_create,
     .destroy = fused_destroy,
     .type_attr = "T",
     .types = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16}},
};

loom_status_t loom__register_fused_matmul_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
