// The numerics handler (tf.debugging.enable_check_numerics): runs each op
// on the handler it was merged with, then each floating-point result
// through CheckNumericsV2 on that handler, whose kernel fails on an
// infinity or a NaN with a message naming the op. A pass-through
// transformation: its results are the outer handler's tensors.

#include <stdio.h>
#include <string.h>

#include "loom/handlers.h"
#include "loom/tensor_handle.h"

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

typedef struct numerics_state_t {
  loom_allocator_t allocator;
  loom_context_t* context;
  loom_op_handler_t* outer;   // retained; NULL: the context's CPU
  loom_prepared_op_t* check;  // CheckNumericsV2 on the outer handler
} numerics_state_t;

static loom_op_handler_t* outer_of(const numerics_state_t* state) {
  return state->outer ? state->outer : loom_context_cpu(state->context);
}

static loom_status_t numerics_prepare(loom_op_handler_t* handler,
                                      const char* op_name,
                                      const loom_op_def_t* op,
                                      void** out_op_data) {
  (void)op;
  numerics_state_t* state = loom_op_handler_state(handler);
  loom_prepared_op_t* outer_op = NULL;
  LOOM_RETURN_IF_ERROR(loom_runtime_prepare_op_shared(
      loom_op_handler_runtime(handler), op_name, outer_of(state), &outer_op));
  *out_op_data = outer_op;
  return loom_ok_status();
}

static void numerics_release_op_data(loom_op_handler_t* handler, void* data) {
  (void)handler;
  loom_prepared_op_release(data);
}

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
      !loom_context_is_async(state->context)) {
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
  loom_op_attrs_initialize(&attrs, state->allocator);
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
  LOOM_RETURN_IF_ERROR(loom_context_forward_arguments(
      state->context, outer_of(state), invocation));
  loom_status_t status = loom_op_invocation_forward(
      invocation, loom_prepared_op_data(invocation->op));
  if (status) return status;
  for (int32_t i = 0; i < invocation->num_results && !status; ++i) {
    status = check_result(state, invocation, i);
  }
  return status;
}

static void numerics_destroy(void* opaque) {
  numerics_state_t* state = opaque;
  loom_prepared_op_release(state->check);
  loom_op_handler_release(state->outer);
  loom_allocator_free(state->allocator, state);
}

static bool numerics_takes_foreign_inputs(const loom_op_handler_t* handler,
                                          const char* op_name) {
  (void)handler;
  (void)op_name;
  return true;  // they go to the outer handler, not onto this one
}

static loom_status_t make_handler(loom_context_t* context,
                                  loom_op_handler_t* outer,
                                  loom_op_handler_t** out);

static loom_status_t numerics_merge(loom_op_handler_t* handler,
                                    loom_op_handler_t* outer,
                                    loom_op_handler_t** out_merged) {
  numerics_state_t* state = loom_op_handler_state(handler);
  return make_handler(state->context, outer, out_merged);
}

static const loom_op_handler_vtable_t kNumericsVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "NUMERICS",
    .prepare = numerics_prepare,
    .release_op_data = numerics_release_op_data,
    .execute = numerics_execute,
    .destroy = numerics_destroy,
    .merge = numerics_merge,
    .takes_foreign_inputs = numerics_takes_foreign_inputs,
};

static loom_status_t make_handler(loom_context_t* context,
                                  loom_op_handler_t* outer,
                                  loom_op_handler_t** out) {
  loom_allocator_t allocator = loom_allocator_default();
  numerics_state_t* state = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*state), (void**)&state));
  state->allocator = allocator;
  state->context = context;
  state->outer = outer;
  loom_op_handler_retain(outer);
  loom_status_t status = loom_runtime_prepare_op_shared(
      loom_context_runtime(context), "CheckNumericsV2", outer_of(state),
      &state->check);
  if (!status) {
    status = loom_op_handler_create(loom_context_runtime(context),
                                    &kNumericsVtable, state, NULL, out);
  }
  if (status) numerics_destroy(state);
  return status;
}

loom_status_t loom_numerics_handler_create(loom_context_t* context,
                                           loom_op_handler_t** out_handler) {
  if (!context || !out_handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_numerics_handler_create: %s is NULL",
                            !context ? "context" : "out_handler");
  }
  *out_handler = NULL;
  return make_handler(context, NULL, out_handler);
}
