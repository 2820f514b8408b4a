// The op handler object and the helpers every handler's execute uses.

#include <string.h>

#include "corert/corert_internal.h"

_Thread_local int32_t loom__handler_execution_depth = 0;

loom_status_t loom_op_handler_create(loom_runtime_t* runtime,
                                     const loom_op_handler_vtable_t* vtable,
                                     void* state, loom_op_handler_t* fallback,
                                     loom_op_handler_t** out_handler) {
  if (!runtime || !vtable || !out_handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_handler_create: %s is NULL",
                            !runtime  ? "runtime"
                            : !vtable ? "vtable"
                                      : "out_handler");
  }
  *out_handler = NULL;
  if (vtable->struct_size < LOOM_OP_HANDLER_VTABLE_V1_SIZE ||
      !vtable->prepare || !vtable->execute || !vtable->type_name) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_op_handler_create: the vtable needs struct_size, type_name, "
        "prepare and execute");
  }
  loom_op_handler_t* handler = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      runtime->allocator, sizeof(*handler), (void**)&handler));
  loom__ref_count_init(&handler->ref_count);
  handler->runtime = runtime;
  loom__runtime_retain(runtime);
  size_t size = vtable->struct_size < sizeof(*vtable) ? vtable->struct_size
                                                      : sizeof(*vtable);
  memcpy(&handler->vtable_copy, vtable, size);  // the rest stays NULL (calloc)
  handler->vtable_copy.struct_size = sizeof(*vtable);
  handler->vtable = &handler->vtable_copy;
  handler->state = state;
  handler->fallback = fallback;
  loom_op_handler_retain(fallback);
  *out_handler = handler;
  return loom_ok_status();
}

void loom_op_handler_retain(loom_op_handler_t* handler) {
  if (handler) loom__ref_count_inc(&handler->ref_count);
}

void loom_op_handler_release(loom_op_handler_t* handler) {
  if (!handler || !loom__ref_count_dec(&handler->ref_count)) return;
  if (handler->vtable->destroy) handler->vtable->destroy(handler->state);
  loom_op_handler_release(handler->fallback);
  loom_runtime_t* runtime = handler->runtime;
  loom_allocator_free(runtime->allocator, handler);
  loom__runtime_release(runtime);
}

void* loom_op_handler_state(const loom_op_handler_t* handler) {
  return handler ? handler->state : NULL;
}

loom_runtime_t* loom_op_handler_runtime(const loom_op_handler_t* handler) {
  return handler ? handler->runtime : NULL;
}

const char* loom_op_handler_type_name(const loom_op_handler_t* handler) {
  return handler ? handler->vtable->type_name : NULL;
}

const char* loom_op_handler_device_name(const loom_op_handler_t* handler) {
  if (!handler || !handler->vtable->device_name) return NULL;
  return handler->vtable->device_name(handler);
}

loom_op_handler_t* loom_op_handler_fallback(const loom_op_handler_t* handler) {
  return handler ? handler->fallback : NULL;
}

const loom_op_handler_vtable_t* loom_op_handler_vtable(
    const loom_op_handler_t* handler) {
  return handler ? handler->vtable : NULL;
}

uint32_t loom_op_handler_ref_count(const loom_op_handler_t* handler) {
  return handler ? loom__ref_count_get(&handler->ref_count) : 0;
}

bool loom_op_handler_is_final(const loom_op_handler_t* handler) {
  return handler && !handler->vtable->merge;
}

const loom_op_def_t* loom_prepared_op_def(const loom_prepared_op_t* op) {
  return op ? op->def : NULL;
}

void* loom_prepared_op_data(const loom_prepared_op_t* op) {
  return op ? op->data : NULL;
}

loom_op_handler_t* loom_prepared_op_handler(const loom_prepared_op_t* op) {
  return op ? op->handler : NULL;
}

loom_status_t loom_op_invocation_forward(loom_op_invocation_t* invocation,
                                         loom_prepared_op_t* op) {
  if (LOOM_UNLIKELY(!invocation || !op)) {
    loom_status_t error = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "loom_op_invocation_forward: %s is NULL",
        !invocation ? "invocation" : "op");
    if (!invocation) return error;
    return loom_op_invocation_fail(invocation, error, true);
  }
  invocation->op = op;
  return loom__handler_execute(op->handler, invocation);
}

loom_status_t loom_op_invocation_fail(loom_op_invocation_t* invocation,
                                      loom_status_t error, bool report) {
  loom_runtime_t* runtime = invocation->op->runtime;
  atomic_fetch_add_explicit(&runtime->ops_failed_early, 1,
                            memory_order_relaxed);
  if (report) {
    loom__runtime_report(runtime, invocation->location, invocation->op->name,
                         error);
  }
  loom_status_t copy = loom_status_clone(error);
  loom_async_value_t* value = NULL;
  loom_status_t status =
      loom__tensor_error_value(runtime->allocator, error, &value);
  for (int32_t i = 0; i < invocation->num_results; ++i) {
    invocation->results[i] = NULL;
    if (status) continue;
    loom_tensor_handle_t* handle = NULL;
    loom_status_t handle_status = loom_tensor_handle_create_async(
        invocation->op->handler, NULL, value, &handle);
    if (handle_status) {
      loom_status_free(handle_status);
      continue;  // out of memory: the slot stays NULL
    }
    invocation->results[i] = handle;
  }
  loom_status_free(status);
  loom_async_value_release(value);
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_release(invocation->arguments[i]);
    invocation->arguments[i] = NULL;
  }
  if (invocation->chain && *invocation->chain) {
    // A failed side effect still releases the chain, as an error.
    loom_async_value_t* chain = NULL;
    if (!loom_async_value_create_error(runtime->allocator,
                                       &loom_async_value_type_chain,
                                       loom_status_clone(copy), &chain)) {
      loom_async_value_release(*invocation->chain);
      *invocation->chain = chain;
    }
  }
  return copy;
}

//===----------------------------------------------------------------------===//
// The null handler
//===----------------------------------------------------------------------===//

static loom_status_t null_prepare(loom_op_handler_t* handler,
                                  const char* op_name, const loom_op_def_t* op,
                                  void** out_op_data) {
  (void)handler;
  (void)op_name;
  (void)op;
  *out_op_data = NULL;
  return loom_ok_status();  // accepts every op, to fail it
}

static loom_status_t null_execute(loom_op_handler_t* handler,
                                  loom_op_invocation_t* invocation) {
  (void)handler;
  return loom_op_invocation_fail(
      invocation,
      loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                       "%s was not supported by NullOpHandler",
                       invocation->op->name),
      true);
}

static const loom_op_handler_vtable_t kNullVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "null",
    .prepare = null_prepare,
    .execute = null_execute,
};

loom_status_t loom_null_op_handler_create(loom_runtime_t* runtime,
                                          loom_op_handler_t** out_handler) {
  return loom_op_handler_create(runtime, &kNullVtable, NULL, NULL, out_handler);
}
