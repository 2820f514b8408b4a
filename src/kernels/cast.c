// Cast (with TensorFlow's Truncate attr), IsNan, IsInf, IsFinite.
//
// Cast converts between every pair of bool, the integers and the four
// float types; 16-bit floats go through float. Float to integer follows
// TensorFlow's CPU kernel on x86-64 (cast_loops.c has the details: NaN and
// out-of-range values to int32 give INT32_MIN, narrower integers wrap).
// A cast to the input's own dtype returns the input.

#include "kernels/builtin_families.h"
#include "kernels/elementwise_unary.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"

static const loom__unary_loop_fn_t* cast_entry(loom_dtype_t src,
                                               loom_dtype_t dst,
                                               bool truncate) {
  static const loom__cast_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__cast_loops_baseline, &loom__cast_loops_avx2,
      &loom__cast_loops_avx512};
  static const loom__cast_table_t* const kTruncateTables[LOOM_ISA_LEVELS] = {
      &loom__cast_truncate_loops_baseline, &loom__cast_truncate_loops_avx2,
      &loom__cast_truncate_loops_avx512};
  int from = loom__elem_slot(src);
  int to = loom__elem_slot(dst);
  if (from < 0 || to < 0) return NULL;
  loom__isa_level_t level = loom__isa_level();
  // Truncation applies to the narrowing float pairs only; TensorFlow
  // ignores the attr elsewhere.
  if (truncate && (*kTruncateTables[level])[from][to]) {
    return &(*kTruncateTables[level])[from][to];
  }
  return &(*kTables[level])[from][to];
}

loom__unary_loop_fn_t loom__cast_loop(loom_dtype_t src, loom_dtype_t dst,
                                      bool truncate) {
  const loom__unary_loop_fn_t* entry = cast_entry(src, dst, truncate);
  return entry ? *entry : NULL;
}

loom__unary_loop_fn_t loom__float_class_loop(loom__float_class_t predicate,
                                             loom_dtype_t dtype) {
  static const loom__float_class_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__float_class_loops_baseline, &loom__float_class_loops_avx2,
      &loom__float_class_loops_avx512};
  int slot = loom__elem_slot(dtype);
  if (slot < 0 || (int)predicate < 0 || predicate >= LOOM_FLOAT_CLASSES) {
    return NULL;
  }
  return (*kTables[loom__isa_level()])[predicate][slot];
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

// The kernel instance is the table entry of its loop (a loop that exists
// for the process's lifetime), or this entry, whose NULL loop means "the
// dtypes are equal: return the input".
static const loom__unary_loop_fn_t kReturnInput = NULL;

static void* cast_create(loom_kernel_construction_t* ctx) {
  const loom_op_attrs_t* attrs = loom_kernel_construction_attrs(ctx);
  loom_dtype_t src = LOOM_DTYPE_INVALID, dst = LOOM_DTYPE_INVALID;
  bool truncate = false;
  loom_status_t status = loom_op_attrs_get_dtype(attrs, "SrcT", &src);
  if (!status) status = loom_op_attrs_get_dtype(attrs, "DstT", &dst);
  if (!status) status = loom_op_attrs_get_bool(attrs, "Truncate", &truncate);
  if (status) {
    loom_kernel_construction_fail(ctx, status);
    return NULL;
  }
  if (src == dst) return (void*)&kReturnInput;
  const loom__unary_loop_fn_t* entry = cast_entry(src, dst, truncate);
  if (!entry || !*entry) {
    // TensorFlow's wording.
    loom_kernel_construction_fail(
        ctx, loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                              "Cast %s to %s is not supported",
                              loom_dtype_name(src), loom_dtype_name(dst)));
    return NULL;
  }
  return (void*)entry;
}

// Casts cost about a memory pass.
enum { kCastCost = 1 };

static void cast_compute(void* kernel, loom_kernel_context_t* ctx) {
  const loom__unary_loop_fn_t* entry = kernel;
  if (!entry || !*entry) {
    loom_status_t status = loom_kernel_context_set_output(
        ctx, 0, loom_kernel_context_input(ctx, 0));
    if (status) loom_kernel_context_fail(ctx, status);
    return;
  }
  loom__unary_compute(ctx, *entry, kCastCost);
}

//===----------------------------------------------------------------------===//
// IsNan, IsInf, IsFinite
//===----------------------------------------------------------------------===//

#define CLASS_COMPUTE(name, predicate)                                    \
  static void name##_compute(void* kernel, loom_kernel_context_t* ctx) {  \
    (void)kernel;                                                         \
    loom_tensor_t* x = loom_kernel_context_input(ctx, 0);                 \
    loom__unary_compute(                                                  \
        ctx, loom__float_class_loop(predicate, loom_tensor_dtype(x)), 1); \
  }

CLASS_COMPUTE(is_nan, LOOM_FLOAT_CLASS_IS_NAN)
CLASS_COMPUTE(is_inf, LOOM_FLOAT_CLASS_IS_INF)
CLASS_COMPUTE(is_finite, LOOM_FLOAT_CLASS_IS_FINITE)

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

#define CLASS_OP(op_name)                                        \
  {                                                              \
    .name = op_name, .inputs = {"x: T"}, .outputs = {"y: bool"}, \
    .attrs = {"T: {bfloat16, half, float, double}"},             \
    .shape_fn = loom__shape_fn_unchanged                         \
  }

static const loom__builtin_op_t kOps[] = {
    {.name = "Cast",
     .inputs = {"x: SrcT"},
     .outputs = {"y: DstT"},
     .attrs = {"SrcT: type", "DstT: type", "Truncate: bool = false"},
     .shape_fn = loom__shape_fn_unchanged},
    CLASS_OP("IsNan"),
    CLASS_OP("IsInf"),
    CLASS_OP("IsFinite"),
};

#define FLOATS \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16

static const loom__builtin_kernel_t kKernels[] = {
    // Every pair is checked when the kernel is created.
    {.op_name = "Cast",
     .compute = cast_compute,
     .create = cast_create,
     .any_rank = true},
    {.op_name = "IsNan",
     .compute = is_nan_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {FLOATS}},
    {.op_name = "IsInf",
     .compute = is_inf_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {FLOATS}},
    {.op_name = "IsFinite",
     .compute = is_finite_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {FLOATS}},
};

loom_status_t loom__register_cast_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
