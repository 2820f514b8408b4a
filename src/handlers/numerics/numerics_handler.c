// The numerics handler (tf.debugging.enable_check_numerics): runs each op
// on the handler it was merged with, then each floating-point result
// through CheckNumericsV2 on that handler, whose kernel fails on an
// infinity or a NaN with a message naming the op. A pass-through
// transformation: its results are the outer handler's tensors.

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "frontend/passthrough_handler.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"
#include "loom/handlers.h"
#include "loom/tensor_handle.h"

//===----------------------------------------------------------------------===//
// CheckNumericsV2
//===----------------------------------------------------------------------===//

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

static const loom__builtin_op_t kCheckOp[] = {
    {.name = "CheckNumericsV2",
     .inputs = {"tensor: T"},
     .outputs = {"output: T"},
     .attrs = {"T: {half, bfloat16, float, double}", "message: string"},
     .shape_fn = loom__shape_fn_unchanged,
     .is_stateful = true},
};

static const loom__builtin_kernel_t kCheckKernel[] = {
    {.op_name = "CheckNumericsV2",
     .compute = check_compute,
     .create = check_create,
     .destroy = check_delete,
     .type_attr = "T",
     .types = {LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT,
               LOOM_DTYPE_DOUBLE}},
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static loom_status_t g_registration;

// The built-in op library may provide CheckNumericsV2 (TensorFlow's
// signature): then it is used as it is.
static void register_check(void) {
  if (loom_op_registry_find(loom_op_registry_global(), "CheckNumericsV2")) {
    return;
  }
  g_registration = loom__register_builtin_ops(kCheckOp, 1);
  if (!g_registration) {
    g_registration = loom__register_builtin_kernels(kCheckKernel, 1);
  }
}

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

typedef struct numerics_state_t {
  loom__passthrough_t base;
  loom_prepared_op_t* check;  // CheckNumericsV2 on the outer handler
} numerics_state_t;

static bool is_checked(loom_dtype_t dtype) {
  return dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_DOUBLE ||
         dtype == LOOM_DTYPE_HALF || dtype == LOOM_DTYPE_BFLOAT16;
}

// Replaces result `index` by its checked version.
static loom_status_t check_result(numerics_state_t* state,
                                  loom_op_invocation_t* invocation,
                                  int32_t index) {
  loom_tensor_handle_t* result = invocation->results[index];
  loom_tensor_metadata_t metadata;
  loom_status_t status = loom_ok_status();
  if (loom_tensor_handle_metadata_available(result) ||
      !loom_context_is_async(state->base.context)) {
    status = loom_tensor_handle_wait_metadata(result, &metadata);
  } else {
    return loom_ok_status();  // not known before it runs: not checked
  }
  if (status) {
    loom_status_free(status);  // the result carries its error already
    return loom_ok_status();
  }
  if (!is_checked(metadata.dtype)) return loom_ok_status();
  char message[256];
  snprintf(message, sizeof(message),
           "Detected Infinity or NaN in output %d of eagerly-executing op "
           "\"%s\" (# of outputs: %d)",
           index, loom_prepared_op_name(invocation->op),
           invocation->num_results);
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, state->base.allocator);
  status =
      loom_op_attrs_set_string(&attrs, "message", message, strlen(message));
  if (!status) {
    loom_tensor_handle_t* args[1] = {result};
    invocation->results[index] = NULL;
    status = loom_runtime_execute_prepared(
        state->check, invocation->location, args, 1, &attrs,
        &invocation->results[index], 1, NULL);
  }
  loom_op_attrs_deinitialize(&attrs);
  return status;
}

static loom_status_t numerics_execute(loom_op_handler_t* handler,
                                      loom_op_invocation_t* invocation) {
  numerics_state_t* state = loom_op_handler_state(handler);
  loom_status_t status =
      loom__passthrough_forward_prepared(&state->base, invocation);
  for (int32_t i = 0; i < invocation->num_results && !status; ++i) {
    status = check_result(state, invocation, i);
  }
  return status;
}

static loom_status_t numerics_initialize(loom__passthrough_t* base) {
  numerics_state_t* state = (numerics_state_t*)base;
  return loom_runtime_prepare_op_shared(loom_context_runtime(base->context),
                                        "CheckNumericsV2",
                                        base->effective_outer, &state->check);
}

static void numerics_deinitialize(loom__passthrough_t* base) {
  loom_prepared_op_release(((numerics_state_t*)base)->check);
}

static const loom_op_handler_vtable_t kNumericsVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "NUMERICS",
    LOOM__PASSTHROUGH_HOOKS,
    .execute = numerics_execute,
};

static const loom__passthrough_type_t kNumericsType = {
    .vtable = &kNumericsVtable,
    .state_size = sizeof(numerics_state_t),
    .initialize = numerics_initialize,
    .deinitialize = numerics_deinitialize,
};

loom_status_t loom_numerics_handler_create(loom_context_t* context,
                                           loom_op_handler_t** out_handler) {
  if (!context || !out_handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_numerics_handler_create: %s is NULL",
                            !context ? "context" : "out_handler");
  }
  *out_handler = NULL;
  pthread_once(&g_once, register_check);
  if (g_registration) return loom_status_clone(g_registration);
  return loom__passthrough_create(&kNumericsType, context,
                                  loom_allocator_default(), NULL, NULL,
                                  out_handler);
}
