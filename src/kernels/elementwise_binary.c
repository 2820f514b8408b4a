// Broadcasting binary arithmetic: AddV2, Add, Sub, Mul, RealDiv, Div,
// FloorDiv, FloorMod, TruncateDiv, TruncateMod, Pow, Maximum, Minimum,
// SquaredDifference, with TensorFlow's signatures and semantics (integer
// division by zero and integers to negative powers fail the op).

#include <pthread.h>

#include "kernels/builtin_families.h"
#include "kernels/elementwise.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"
#include "registry/kernel_context.h"

// A kernel's loops, resolved when it is constructed: its instance points at
// the entry of its op and dtype, so compute looks nothing up. The entries
// are filled once for this CPU's level and never change.
typedef struct binary_kernel_t {
  loom_dtype_t dtype;
  bool resolved;  // false: no loop (compute reports it)
  loom__elementwise_call_t call;
} binary_kernel_t;

static const int64_t kCost[LOOM_BINARY_OPS] = {
    [LOOM_BINARY_ADD] = 1,
    [LOOM_BINARY_SUB] = 1,
    [LOOM_BINARY_MUL] = 1,
    [LOOM_BINARY_REAL_DIV] = 4,
    [LOOM_BINARY_DIV] = 4,
    [LOOM_BINARY_FLOOR_DIV] = 6,
    [LOOM_BINARY_FLOOR_MOD] = 12,
    [LOOM_BINARY_TRUNCATE_DIV] = 6,
    [LOOM_BINARY_TRUNCATE_MOD] = 12,
    [LOOM_BINARY_POW] = 20,
    [LOOM_BINARY_MAXIMUM] = 1,
    [LOOM_BINARY_MINIMUM] = 1,
    [LOOM_BINARY_SQUARED_DIFFERENCE] = 2,
};

// The dtype of each element-wise slot.
static const loom_dtype_t kSlotDtypes[LOOM_ELEM_SLOTS] = {
    [LOOM_ELEM_F32] = LOOM_DTYPE_FLOAT,     [LOOM_ELEM_F64] = LOOM_DTYPE_DOUBLE,
    [LOOM_ELEM_I32] = LOOM_DTYPE_INT32,     [LOOM_ELEM_I64] = LOOM_DTYPE_INT64,
    [LOOM_ELEM_U8] = LOOM_DTYPE_UINT8,      [LOOM_ELEM_I8] = LOOM_DTYPE_INT8,
    [LOOM_ELEM_I16] = LOOM_DTYPE_INT16,     [LOOM_ELEM_U16] = LOOM_DTYPE_UINT16,
    [LOOM_ELEM_U32] = LOOM_DTYPE_UINT32,    [LOOM_ELEM_U64] = LOOM_DTYPE_UINT64,
    [LOOM_ELEM_BOOL] = LOOM_DTYPE_BOOL,     [LOOM_ELEM_F16] = LOOM_DTYPE_HALF,
    [LOOM_ELEM_BF16] = LOOM_DTYPE_BFLOAT16,
};

static binary_kernel_t g_kernels[LOOM_BINARY_OPS][LOOM_ELEM_SLOTS];
static pthread_once_t g_kernels_once = PTHREAD_ONCE_INIT;

static void resolve_kernels(void) {
  for (int op = 0; op < LOOM_BINARY_OPS; ++op) {
    for (int slot = 0; slot < LOOM_ELEM_SLOTS; ++slot) {
      binary_kernel_t* kernel = &g_kernels[op][slot];
      kernel->dtype = kSlotDtypes[slot];
      kernel->resolved = loom__binary_call_initialize(
          (loom__binary_op_t)op, kernel->dtype, kCost[op], &kernel->call);
    }
  }
}

static void* binary_create(loom_kernel_construction_t* ctx,
                           loom__binary_op_t op) {
  loom_dtype_t dtype = LOOM_DTYPE_INVALID;
  loom_status_t status =
      loom_op_attrs_get_dtype(loom_kernel_construction_attrs(ctx), "T", &dtype);
  int slot = loom__elem_slot(dtype);
  if (status || slot < 0) {
    loom_status_free(status);
    return NULL;  // resolved per call
  }
  pthread_once(&g_kernels_once, resolve_kernels);
  return &g_kernels[op][slot];
}

static void binary_compute(const binary_kernel_t* kernel,
                           loom_kernel_context_t* ctx, loom__binary_op_t op) {
  // The inputs' dtype is T's unless the caller's attrs said otherwise.
  if (LOOM_LIKELY(kernel && kernel->resolved &&
                  kernel->dtype ==
                      loom_tensor_dtype(loom_kernel_context_input(ctx, 0)))) {
    loom__elementwise_compute(ctx, &kernel->call);
    return;
  }
  loom__binary_compute_op(ctx, op, kCost[op]);
}

// The direct entry (registry/kernel_context.h): the result's shape is
// known, so the common tiny case — operands of the result's shape, or one
// of them a single element — is one loop into a forwarded or new output.
// Anything else (broadcasting, large or checked ops, a kernel resolved per
// call) is left to compute.
static bool binary_direct(const loom__kernel_direct_call_t* call,
                          loom_tensor_t** out_tensor,
                          loom_status_t* out_status) {
  const binary_kernel_t* kernel = call->instance;
  if (!kernel || !kernel->resolved || call->num_inputs != 2 ||
      !kernel->call.binary || kernel->call.forwardable) {
    return false;
  }
  const loom_tensor_metadata_t* output = call->output;
  loom_tensor_t* const* inputs = call->inputs;
  if (output->dtype != kernel->dtype ||
      loom_tensor_dtype(inputs[0]) != kernel->dtype ||
      loom_tensor_dtype(inputs[1]) != kernel->dtype) {
    return false;
  }
  int64_t total = call->output_elements >= 0
                      ? call->output_elements
                      : loom_shape_num_elements(&output->shape);
  int64_t counts[2] = {loom_tensor_num_elements(inputs[0]),
                       loom_tensor_num_elements(inputs[1])};
  int64_t cost = kernel->call.cost_per_element;
  if (total <= 0 ||
      total * (cost > 0 ? cost : 1) >= kElementwiseMinParallelWork) {
    return false;
  }
  // An operand of the result's element count and rank has its shape (each
  // of its dims is 1 or the result's, and their product is the result's):
  // it may become the output. Others must be a single element.
  int32_t candidates[2];
  int32_t num_candidates = 0;
  for (int32_t k = 0; k < 2; ++k) {
    if (counts[k] == total &&
        loom_tensor_shape(inputs[k])->rank == output->shape.rank) {
      candidates[num_candidates++] = k;
    } else if (counts[k] != 1) {
      return false;
    }
  }
  loom_tensor_t* z = NULL;
  *out_status = loom__kernel_direct_forward_or_allocate(
      call, candidates, num_candidates, total, &z);
  if (LOOM_UNLIKELY(*out_status != NULL)) return true;
  kernel->call.binary(loom_tensor_data(inputs[0]), counts[0] == total ? 1 : 0,
                      loom_tensor_data(inputs[1]), counts[1] == total ? 1 : 0,
                      loom_tensor_data(z), total);
  *out_tensor = z;
  return true;
}

// One create and compute function per op.
#define BINARY_KERNEL(name, op)                                          \
  static void* name##_create(loom_kernel_construction_t* ctx) {          \
    return binary_create(ctx, op);                                       \
  }                                                                      \
  static void name##_compute(void* kernel, loom_kernel_context_t* ctx) { \
    binary_compute(kernel, ctx, op);                                     \
  }

BINARY_KERNEL(add, LOOM_BINARY_ADD)
BINARY_KERNEL(sub, LOOM_BINARY_SUB)
BINARY_KERNEL(mul, LOOM_BINARY_MUL)
BINARY_KERNEL(real_div, LOOM_BINARY_REAL_DIV)
BINARY_KERNEL(div, LOOM_BINARY_DIV)
BINARY_KERNEL(floor_div, LOOM_BINARY_FLOOR_DIV)
BINARY_KERNEL(floor_mod, LOOM_BINARY_FLOOR_MOD)
BINARY_KERNEL(truncate_div, LOOM_BINARY_TRUNCATE_DIV)
BINARY_KERNEL(truncate_mod, LOOM_BINARY_TRUNCATE_MOD)
BINARY_KERNEL(pow, LOOM_BINARY_POW)
BINARY_KERNEL(maximum, LOOM_BINARY_MAXIMUM)
BINARY_KERNEL(minimum, LOOM_BINARY_MINIMUM)
BINARY_KERNEL(squared_difference, LOOM_BINARY_SQUARED_DIFFERENCE)

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

#define KERNEL(op, fn, ...)                                   \
  {                                                           \
    .op_name = op, .any_rank = true, .compute = fn##_compute, \
    .create = fn##_create, .type_attr = "T", .types = {       \
      __VA_ARGS__                                             \
    }                                                         \
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
  for (size_t i = 0; i < sizeof(kKernels) / sizeof(kKernels[0]); ++i) {
    loom__kernel_set_direct_entry(kKernels[i].compute, binary_direct);
  }
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
