// The numerics handler (tf.debugging.enable_check_numerics): runs each op
// on the handler it was merged with, then each floating-point result
// through CheckNumericsV2 on that handler, whose kernel fails on an
// infinity or a NaN with a message naming the op. A pass-through
// transformation: its results are the outer handler's tensors. A call of
// a stateless function runs as its checked function (numerics_call_check.h).

#include <stdio.h>
#include <string.h>

#include <stdatomic.h>

#include "corert/corert_internal.h"
#include "frontend/passthrough_handler.h"
#include "handlers/numerics/numerics_call_check.h"
#include "loom/handlers.h"
#include "loom/tensor_handle.h"

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

typedef struct numerics_state_t {
  loom__passthrough_t base;
  loom_prepared_op_t* check;  // CheckNumericsV2 on the outer handler
} numerics_state_t;

// What a handler and its merges share.
typedef struct numerics_shared_t {
  loom__passthrough_shared_t base;
  bool leaves_calls;  // numerics_call_check.h
} numerics_shared_t;

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

static _Atomic(loom__numerics_call_check_fn_t) g_call_check;

void loom__numerics_set_call_check(loom__numerics_call_check_fn_t fn) {
  atomic_store_explicit(&g_call_check, fn, memory_order_release);
}

// A call of a stateless function runs as its checked function, beneath
// this handler on the outer one (entered as a handler executing an op
// enters it, so that the function runs there, planned on the CPU).
static loom_status_t numerics_execute_function_call(
    loom_op_handler_t* handler, loom_function_call_t* call,
    loom_tensor_handle_t** results, bool* out_taken) {
  *out_taken = false;
  numerics_state_t* state = loom_op_handler_state(handler);
  const numerics_shared_t* shared = state->base.shared;
  loom__numerics_call_check_fn_t check =
      atomic_load_explicit(&g_call_check, memory_order_acquire);
  if (!check || call->stateful || shared->leaves_calls) {
    return loom_ok_status();
  }
  loom_context_t* context = state->base.context;
  ++loom__handler_execution_depth;
  loom_status_t status =
      loom_context_enter_scope(context, state->base.effective_outer);
  --loom__handler_execution_depth;
  if (status) return status;
  status =
      check(context, call->function_name, call->num_inputs - call->num_captured,
            call->inputs, call->num_outputs, results, out_taken);
  loom_status_t exited = loom_context_exit_scope(context);
  if (!status) return exited;
  loom_status_free(exited);
  return status;
}

static const loom_op_handler_vtable_t kNumericsVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "NUMERICS",
    LOOM__PASSTHROUGH_HOOKS,
    .execute = numerics_execute,
    .execute_function_call = numerics_execute_function_call,
};

static const loom__passthrough_type_t kNumericsType = {
    .vtable = &kNumericsVtable,
    .state_size = sizeof(numerics_state_t),
    .initialize = numerics_initialize,
    .deinitialize = numerics_deinitialize,
    .retain_shared = loom__passthrough_shared_retain,
    .release_shared = loom__passthrough_shared_release,
};

void loom__numerics_leave_calls(loom_op_handler_t* numerics) {
  loom__passthrough_t* base = loom__passthrough_of(numerics, &kNumericsType);
  if (base) ((numerics_shared_t*)base->shared)->leaves_calls = true;
}

loom_status_t loom_numerics_handler_create(loom_context_t* context,
                                           loom_op_handler_t** out_handler) {
  if (!context || !out_handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_numerics_handler_create: %s is NULL",
                            !context ? "context" : "out_handler");
  }
  *out_handler = NULL;
  loom_allocator_t allocator = loom_allocator_default();
  numerics_shared_t* shared = NULL;
  LOOM_RETURN_IF_ERROR(loom__passthrough_shared_create(
      allocator, sizeof(*shared), (void**)&shared));
  loom_status_t status = loom__passthrough_create(
      &kNumericsType, context, allocator, shared, NULL, out_handler);
  loom__passthrough_shared_release(shared);  // the handler holds it
  return status;
}
