// Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, LogicalAnd,
// LogicalOr: broadcasting, bool results, TensorFlow's signatures. Equal and
// NotEqual take TensorFlow's incompatible_shape_error attr: when false,
// shapes that do not broadcast give a scalar (false for Equal, true for
// NotEqual) instead of an error.

#include "kernels/broadcast.h"
#include "kernels/builtin_families.h"
#include "kernels/elementwise.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"

#define COMPARE_COMPUTE(name, op)                                           \
  static void name##_compute(void* kernel, loom_kernel_context_t* ctx) {    \
    (void)kernel;                                                           \
    loom_tensor_t* x = loom_kernel_context_input(ctx, 0);                   \
    loom__binary_compute(ctx, loom__compare_loop(op, loom_tensor_dtype(x)), \
                         1);                                                \
  }

COMPARE_COMPUTE(less, LOOM_COMPARE_LESS)
COMPARE_COMPUTE(less_equal, LOOM_COMPARE_LESS_EQUAL)
COMPARE_COMPUTE(greater, LOOM_COMPARE_GREATER)
COMPARE_COMPUTE(greater_equal, LOOM_COMPARE_GREATER_EQUAL)
COMPARE_COMPUTE(logical_and, LOOM_COMPARE_LOGICAL_AND)
COMPARE_COMPUTE(logical_or, LOOM_COMPARE_LOGICAL_OR)

static bool incompatible_shape_error(const loom_op_attrs_t* attrs) {
  bool value = true;
  loom_status_t status =
      loom_op_attrs_get_bool(attrs, "incompatible_shape_error", &value);
  loom_status_ignore(status);  // a complete attr set always has it
  return value;
}

static void equality_compute(loom_kernel_context_t* ctx,
                             loom__compare_op_t op) {
  loom_tensor_t* x = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* y = loom_kernel_context_input(ctx, 1);
  loom_shape_t shape;
  loom_status_t status = loom__broadcast_shapes(
      loom_kernel_context_op(ctx)->name, loom_tensor_shape(x),
      loom_tensor_shape(y), &shape);
  // Shapes that do not broadcast compare unequal when asked to; a
  // broadcast past int64 is an error all the same.
  if (status && !incompatible_shape_error(loom_kernel_context_attrs(ctx)) &&
      !loom__broadcast_compatible(loom_tensor_shape(x), loom_tensor_shape(y))) {
    loom_status_free(status);
    loom_shape_t scalar = loom_shape_scalar();
    loom_tensor_t* z = NULL;
    status = loom_kernel_context_allocate_output(ctx, 0, &scalar, &z);
    if (status) {
      loom_kernel_context_fail(ctx, status);
      return;
    }
    *(bool*)loom_tensor_data(z) = op == LOOM_COMPARE_NOT_EQUAL;
    return;
  }
  loom_status_free(status);
  loom__binary_compute(ctx, loom__compare_loop(op, loom_tensor_dtype(x)), 1);
}

static void equal_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  equality_compute(ctx, LOOM_COMPARE_EQUAL);
}

static void not_equal_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  equality_compute(ctx, LOOM_COMPARE_NOT_EQUAL);
}

// The broadcast shape; with incompatible_shape_error = false, shapes that
// do not broadcast give an unknown one (the kernel then returns a scalar).
static loom_status_t equality_shape_fn(loom_shape_inference_context_t* context,
                                       void* user_data) {
  const loom_op_attrs_t* attrs = loom_shape_inference_context_attrs(context);
  if (incompatible_shape_error(attrs)) {
    return loom__shape_fn_broadcast(context, user_data);
  }
  loom_shape_t a, b, out;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &a));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 1, &b));
  if (loom_shape_is_fully_defined(&a) && loom_shape_is_fully_defined(&b)) {
    loom_status_t status = loom__broadcast_shapes(
        loom_shape_inference_context_op(context)->name, &a, &b, &out);
    if (status && loom__broadcast_compatible(&a, &b)) return status;
    if (status) {
      loom_status_free(status);
      out = loom_shape_unknown();
    }
    return loom_shape_inference_context_set_output(context, 0, &out);
  }
  out = loom_shape_unknown();
  return loom_shape_inference_context_set_output(context, 0, &out);
}

#define COMPARISON_OP(op_name)                                           \
  {                                                                      \
    .name = op_name, .inputs = {"x: T", "y: T"}, .outputs = {"z: bool"}, \
    .attrs = {"T: realnumbertype"}, .shape_fn = loom__shape_fn_broadcast \
  }

#define EQUALITY_OP(op_name)                                             \
  {                                                                      \
    .name = op_name, .inputs = {"x: T", "y: T"}, .outputs = {"z: bool"}, \
    .attrs = {"T: type", "incompatible_shape_error: bool = true"},       \
    .shape_fn = equality_shape_fn, .is_commutative = true                \
  }

#define LOGICAL_OP(op_name)                                                    \
  {                                                                            \
    .name = op_name, .inputs = {"x: bool", "y: bool"}, .outputs = {"z: bool"}, \
    .shape_fn = loom__shape_fn_broadcast, .is_commutative = true               \
  }

static const loom__builtin_op_t kOps[] = {
    COMPARISON_OP("Less"),    COMPARISON_OP("LessEqual"),
    COMPARISON_OP("Greater"), COMPARISON_OP("GreaterEqual"),
    EQUALITY_OP("Equal"),     EQUALITY_OP("NotEqual"),
    LOGICAL_OP("LogicalAnd"), LOGICAL_OP("LogicalOr"),
};

#define REAL_TYPES                                                           \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16, \
      LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, LOOM_DTYPE_UINT8, LOOM_DTYPE_INT8, \
      LOOM_DTYPE_INT16, LOOM_DTYPE_UINT16, LOOM_DTYPE_UINT32,                \
      LOOM_DTYPE_UINT64

#define KERNEL(op, fn, ...)                                   \
  {                                                           \
    .op_name = op, .any_rank = true, .compute = fn##_compute, \
    .type_attr = "T", .types = {                              \
      __VA_ARGS__                                             \
    }                                                         \
  }

static const loom__builtin_kernel_t kKernels[] = {
    KERNEL("Less", less, REAL_TYPES),
    KERNEL("LessEqual", less_equal, REAL_TYPES),
    KERNEL("Greater", greater, REAL_TYPES),
    KERNEL("GreaterEqual", greater_equal, REAL_TYPES),
    KERNEL("Equal", equal, REAL_TYPES, LOOM_DTYPE_BOOL),
    KERNEL("NotEqual", not_equal, REAL_TYPES, LOOM_DTYPE_BOOL),
    {.op_name = "LogicalAnd", .compute = logical_and_compute, .any_rank = true},
    {.op_name = "LogicalOr", .compute = logical_or_compute, .any_rank = true},
};

loom_status_t loom__register_comparison_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
