// Broadcasting binary arithmetic: AddV2, Add, Sub, Mul, RealDiv, Div,
// FloorDiv, FloorMod, TruncateDiv, TruncateMod, Pow, Maximum, Minimum,
// SquaredDifference, with TensorFlow's signatures and semantics (integer
// division by zero and integers to negative powers fail the op).

#include "kernels/builtin_families.h"
#include "kernels/elementwise.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"

// One compute function per op: the loop comes from the op and the dtype.
#define BINARY_COMPUTE(name, op, cost)                                   \
  static void name##_compute(void* kernel, loom_kernel_context_t* ctx) { \
    (void)kernel;                                                        \
    loom__binary_compute_op(ctx, op, cost);                              \
  }

BINARY_COMPUTE(add, LOOM_BINARY_ADD, 1)
BINARY_COMPUTE(sub, LOOM_BINARY_SUB, 1)
BINARY_COMPUTE(mul, LOOM_BINARY_MUL, 1)
BINARY_COMPUTE(real_div, LOOM_BINARY_REAL_DIV, 4)
BINARY_COMPUTE(div, LOOM_BINARY_DIV, 4)
BINARY_COMPUTE(floor_div, LOOM_BINARY_FLOOR_DIV, 6)
BINARY_COMPUTE(floor_mod, LOOM_BINARY_FLOOR_MOD, 12)
BINARY_COMPUTE(truncate_div, LOOM_BINARY_TRUNCATE_DIV, 6)
BINARY_COMPUTE(truncate_mod, LOOM_BINARY_TRUNCATE_MOD, 12)
BINARY_COMPUTE(pow, LOOM_BINARY_POW, 20)
BINARY_COMPUTE(maximum, LOOM_BINARY_MAXIMUM, 1)
BINARY_COMPUTE(minimum, LOOM_BINARY_MINIMUM, 1)
BINARY_COMPUTE(squared_difference, LOOM_BINARY_SQUARED_DIFFERENCE, 2)

#define BINARY_OP(op_name, types, commutative)                        \
  {                                                                   \
    .name = op_name, .inputs = {"x: T", "y: T"}, .outputs = {"z: T"}, \
    .attrs = {"T: " types}, .shape_fn = loom__shape_fn_broadcast,     \
    .is_commutative = commutative                                     \
  }

// TensorFlow's lists without the complex types (no complex kernels).
#define ALL_REAL_TYPES                                                   \
  "{bfloat16, half, float, double, uint8, int8, uint16, int16, uint32, " \
  "int32, uint64, int64}"
#define FLOAT_TYPES "{bfloat16, half, float, double}"

static const loom__builtin_op_t kOps[] = {
    BINARY_OP("AddV2", ALL_REAL_TYPES, true),
    BINARY_OP("Add", ALL_REAL_TYPES, true),
    BINARY_OP("Sub", ALL_REAL_TYPES, false),
    BINARY_OP("Mul", ALL_REAL_TYPES, true),
    BINARY_OP("RealDiv", FLOAT_TYPES, false),
    BINARY_OP("Div", ALL_REAL_TYPES, false),
    BINARY_OP("FloorDiv", ALL_REAL_TYPES, false),
    BINARY_OP("FloorMod", ALL_REAL_TYPES, false),
    BINARY_OP("TruncateDiv", ALL_REAL_TYPES, false),
    BINARY_OP("TruncateMod", "{int32, int64, bfloat16, half, float, double}",
              false),
    BINARY_OP("Pow",
              "{bfloat16, half, float, double, int8, int16, int32, int64}",
              false),
    BINARY_OP("Maximum", ALL_REAL_TYPES, true),
    BINARY_OP("Minimum", ALL_REAL_TYPES, true),
    BINARY_OP("SquaredDifference",
              "{bfloat16, half, float, double, int32, int64}", true),
};

#define FLOATS \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16
#define INTS                                                             \
  LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, LOOM_DTYPE_UINT8, LOOM_DTYPE_INT8, \
      LOOM_DTYPE_INT16, LOOM_DTYPE_UINT16, LOOM_DTYPE_UINT32,            \
      LOOM_DTYPE_UINT64
#define SIGNED_INTS \
  LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, LOOM_DTYPE_INT8, LOOM_DTYPE_INT16

#define KERNEL(op, fn, ...)                                              \
  {                                                                      \
    .op_name = op, .compute = fn##_compute, .type_attr = "T", .types = { \
      __VA_ARGS__                                                        \
    }                                                                    \
  }

static const loom__builtin_kernel_t kKernels[] = {
    KERNEL("AddV2", add, FLOATS, INTS),
    KERNEL("Add", add, FLOATS, INTS),
    KERNEL("Sub", sub, FLOATS, INTS),
    KERNEL("Mul", mul, FLOATS, INTS),
    KERNEL("RealDiv", real_div, FLOATS),
    KERNEL("Div", div, FLOATS, INTS),
    KERNEL("FloorDiv", floor_div, FLOATS, INTS),
    KERNEL("FloorMod", floor_mod, FLOATS, INTS),
    KERNEL("TruncateDiv", truncate_div, FLOATS, INTS),
    KERNEL("TruncateMod", truncate_mod, FLOATS, LOOM_DTYPE_INT32,
           LOOM_DTYPE_INT64),
    KERNEL("Pow", pow, FLOATS, SIGNED_INTS),
    KERNEL("Maximum", maximum, FLOATS, INTS),
    KERNEL("Minimum", minimum, FLOATS, INTS),
    KERNEL("SquaredDifference", squared_difference, FLOATS, LOOM_DTYPE_INT32,
           LOOM_DTYPE_INT64),
};

loom_status_t loom__register_binary_arithmetic(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
