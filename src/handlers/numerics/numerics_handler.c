// The numerics handler (tf.debugging.enable_check_numerics): runs each op
// on the handler it was merged with, then each floating-point result
// through CheckNumericsV2 on that handler, whose kernel fails on an
// infinity or a NaN with a message naming the op. A pass-through
// transformation: its results are the outer handler's tensors.

#include <stdio.h>
#include <string.h>

#include "frontend/passthrough_handler.h"
#include "loom/handlers.h"
#include "loom/tensor_handle.h"

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
  return loom__passthrough_create(&kNumericsType, context,
                                  loom_allocator_default(), NULL, NULL,
                                  out_handler);
}
