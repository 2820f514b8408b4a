// CheckNumericsV2 (TensorFlow's signature): passes its input through, and
// fails with a message naming what it found when the input holds an
// infinity or a NaN. What the numerics handler runs after each op.

#include <stdio.h>

#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"
#include "loom/tensor.h"

typedef struct check_kernel_t {
  char message[256];
} check_kernel_t;

static void* check_create(loom_kernel_construction_t* ctx) {
  check_kernel_t* kernel = NULL;
  loom_status_t status = loom_allocator_calloc(
      loom_allocator_system(), sizeof(*kernel), (void**)&kernel);
  if (status) {
    loom_kernel_construction_fail(ctx, status);
    return NULL;
  }
  loom_attr_value_t value;
  if (loom_op_attrs_get(loom_kernel_construction_attrs(ctx), "message",
                        &value) &&
      value.kind == LOOM_ATTR_KIND_STRING) {
    snprintf(kernel->message, sizeof(kernel->message), "%.*s",
             (int)value.u.string.size, value.u.string.data);
  }
  return kernel;
}

static void check_delete(void* kernel) {
  loom_allocator_free(loom_allocator_system(), kernel);
}

enum { kNegInf = 1, kPosInf = 2, kNaN = 4 };

// Classifies IEEE values by their bits: exponent all ones is an infinity
// (mantissa 0) or a NaN.
static unsigned scan(loom_dtype_t dtype, const void* data, int64_t n) {
  unsigned found = 0;
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: {
      const uint32_t* bits = data;
      for (int64_t i = 0; i < n; ++i) {
        if ((bits[i] & 0x7f800000u) != 0x7f800000u) continue;
        found |= (bits[i] & 0x007fffffu) ? kNaN
                 : (bits[i] >> 31)       ? kNegInf
                                         : kPosInf;
      }
      break;
    }
    case LOOM_DTYPE_DOUBLE: {
      const uint64_t* bits = data;
      const uint64_t exponent = UINT64_C(0x7ff0000000000000);
      for (int64_t i = 0; i < n; ++i) {
        if ((bits[i] & exponent) != exponent) continue;
        found |= (bits[i] & UINT64_C(0x000fffffffffffff)) ? kNaN
                 : (bits[i] >> 63)                        ? kNegInf
                                                          : kPosInf;
      }
      break;
    }
    case LOOM_DTYPE_HALF:
    case LOOM_DTYPE_BFLOAT16: {
      const uint16_t* bits = data;
      uint16_t exponent = dtype == LOOM_DTYPE_HALF ? 0x7c00 : 0x7f80;
      uint16_t mantissa = dtype == LOOM_DTYPE_HALF ? 0x03ff : 0x007f;
      for (int64_t i = 0; i < n; ++i) {
        if ((bits[i] & exponent) != exponent) continue;
        found |= (bits[i] & mantissa) ? kNaN
                 : (bits[i] >> 15)    ? kNegInf
                                      : kPosInf;
      }
      break;
    }
    default:
      break;
  }
  return found;
}

static const char* describe(unsigned found) {
  switch (found) {
    case kNegInf | kPosInf | kNaN:
      return "-Inf, +Inf, and NaN";
    case kNegInf | kPosInf:
      return "-Inf and +Inf";
    case kNegInf | kNaN:
      return "-Inf and NaN";
    case kPosInf | kNaN:
      return "+Inf and NaN";
    case kNegInf:
      return "-Inf";
    case kPosInf:
      return "+Inf";
    default:
      return "NaN";
  }
}

static void check_compute(void* opaque, loom_kernel_context_t* ctx) {
  check_kernel_t* kernel = opaque;
  loom_tensor_t* input = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* dense = NULL;
  loom_status_t status = loom_tensor_convert_to_dense(
      loom_kernel_context_allocator(ctx), input, &dense);
  if (!status) {
    unsigned found = scan(loom_tensor_dtype(dense), loom_tensor_data(dense),
                          loom_tensor_num_elements(dense));
    if (found) {
      status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "%s : Tensor had %s values", kernel->message,
                                describe(found));
    }
  }
  loom_tensor_release(dense);
  if (!status) status = loom_kernel_context_set_output(ctx, 0, input);
  if (status) loom_kernel_context_fail(ctx, status);
}

static const loom__builtin_op_t kOps[] = {
    {.name = "CheckNumericsV2",
     .inputs = {"tensor: T"},
     .outputs = {"output: T"},
     .attrs = {"T: {half, bfloat16, float, double}", "message: string"},
     .shape_fn = loom__shape_fn_unchanged,
     .is_stateful = true},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "CheckNumericsV2",
     .compute = check_compute,
     .create = check_create,
     .destroy = check_delete,
     .type_attr = "T",
     .types = {LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT,
               LOOM_DTYPE_DOUBLE},
     .any_rank = true},
};

loom_status_t loom__register_check_numerics_ops(void) {
  LOOM_RETURN_IF_ERROR(loom__register_builtin_ops(kOps, 1));
  return loom__register_builtin_kernels(kKernels, 1);
}
