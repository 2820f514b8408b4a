// The corert dialect's kernels: op handlers and corert.executeop on Loom's
// core runtime. Its tensor kernels are in kernels_corert_tensors.c, its op
// attribute sets in kernels_corert_op_attrs.c.

#include <string.h>

#include "function/kernels_common.h"
#include "loom/cpu_op_handler.h"
#include "loom/op_def.h"
#include "loom/op_handler.h"
#include "loom/tensor_handle.h"

// Execute's arguments, then its results: 32 handles without allocating.
LOOM_DEFINE_SMALL_VECTOR(handle_vector, loom_tensor_handle_t*, 32)

//===----------------------------------------------------------------------===//
// Op handlers
//===----------------------------------------------------------------------===//

static void get_op_handler_kernel(loom_program_frame_t* frame,
                                  void* user_data) {
  (void)user_data;
  const char* name = loom__kernel_string_attr(frame, "op_handler_name");
  if (!name) {
    loom_program_frame_fail(
        frame, loom__kernel_missing_attr(frame, "op_handler_name", "a string"));
    return;
  }
  loom_op_handler_t* handler = loom__program_get_handler(frame->executor, name);
  if (!handler) {
    loom_program_frame_fail(frame,
                            loom_make_status(LOOM_STATUS_NOT_FOUND,
                                             "op_handler not found: %s", name));
    return;
  }
  loom__kernel_set_or_fail(frame,
                           loom_program_value_set_op_handler(
                               loom_program_frame_result(frame, 0), handler));
  loom_op_handler_release(handler);
}

static void register_op_handler_kernel(loom_program_frame_t* frame,
                                       void* user_data) {
  (void)user_data;
  const char* name = loom__kernel_string_attr(frame, "op_handler_name");
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_OP_HANDLER)) return;
  if (!name || !*name) {
    loom_program_frame_fail(
        frame, loom__kernel_missing_attr(frame, "op_handler_name", "a string"));
    return;
  }
  loom_status_t status = loom__program_register_handler(
      frame->executor, name, loom_program_frame_value(frame, 0)->u.op_handler);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  loom__kernel_set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 0)));
}

static void set_handler(loom_program_frame_t* frame, loom_status_t status,
                        loom_op_handler_t* handler) {
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  loom__kernel_set_or_fail(frame,
                           loom_program_value_set_op_handler(
                               loom_program_frame_result(frame, 0), handler));
  loom_op_handler_release(handler);
}

static void create_null_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  loom_op_handler_t* handler = NULL;
  loom_status_t status =
      loom_null_op_handler_create(frame->executor->runtime, &handler);
  set_handler(frame, status, handler);
}

static void create_cpu_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_OP_HANDLER)) return;
  loom_op_handler_t* handler = NULL;
  loom_status_t status = loom_cpu_op_handler_create(
      frame->executor->runtime,
      loom_program_frame_value(frame, 0)->u.op_handler, &handler);
  if (!status) {
    status = loom__program_apply_cpu_ops(frame->executor, handler);
    if (status) loom_op_handler_release(handler);
  }
  set_handler(frame, status, handler);
}

static void create_logging_kernel(loom_program_frame_t* frame,
                                  void* user_data) {
  (void)user_data;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_OP_HANDLER)) return;
  // sync_log_results = 1 (or true) also prints the arguments and results.
  bool print_tensors = false;
  int64_t flag = 0;
  loom_status_t status = loom_op_attrs_get_i64(loom_program_frame_attrs(frame),
                                               "sync_log_results", &flag);
  if (!status) {
    print_tensors = flag != 0;
  } else {
    loom_status_free(status);
    status = loom_op_attrs_get_bool(loom_program_frame_attrs(frame),
                                    "sync_log_results", &print_tensors);
    loom_status_free(status);
  }
  loom_op_handler_t* handler = NULL;
  status = loom_dispatch_logging_handler_create(
      frame->executor->runtime,
      loom_program_frame_value(frame, 0)->u.op_handler, frame->executor->output,
      print_tensors, &handler);
  set_handler(frame, status, handler);
}

//===----------------------------------------------------------------------===//
// corert.executeop
//===----------------------------------------------------------------------===//

typedef struct pending_result_t {
  loom_tensor_handle_t* handle;
  loom_async_value_t* result;  // retained
} pending_result_t;

static void deliver_handle_now(loom_tensor_handle_t* handle,
                               loom_async_value_t* result) {
  loom_async_value_t* value = loom_tensor_handle_value(handle);
  if (value && loom_async_value_is_error(value)) {
    loom_status_ignore(loom_async_value_set_error(
        result, loom_status_clone(loom_async_value_error(value))));
    loom_tensor_handle_release(handle);
    return;
  }
  loom_status_ignore(loom_program_value_set_tensor_handle(result, handle));
}

static void handle_ready(void* arg) {
  pending_result_t* pending = arg;
  loom_async_value_t* result = pending->result;
  deliver_handle_now(pending->handle, result);
  loom_async_value_release(result);
  // The record came from the default allocator (see deliver_handle).
  loom_allocator_free(loom_allocator_default(), pending);
}

// A result of executeop becomes available when its tensor is (TFRT's
// AsyncWaitForResultsFromTensorHandles). Consumes `handle`.
static void deliver_handle(loom_tensor_handle_t* handle,
                           loom_async_value_t* result) {
  if (!handle) {
    loom_status_ignore(loom_async_value_set_error(
        result, loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                 "the op produced no result handle")));
    return;
  }
  // A handle without a value (a front-end handler's representation) is
  // available as it is.
  loom_async_value_t* value = loom_tensor_handle_value(handle);
  if (!value || loom_async_value_is_set(value)) {
    deliver_handle_now(handle, result);
    return;
  }
  pending_result_t* pending = NULL;
  loom_status_t status = loom_allocator_malloc(
      loom_allocator_default(), sizeof(*pending), (void**)&pending);
  if (!status) {
    pending->handle = handle;
    pending->result = result;
    loom_async_value_retain(result);
    status = loom_async_value_and_then(value, handle_ready, pending);
    if (status) {
      loom_async_value_release(result);
      loom_allocator_free(loom_allocator_default(), pending);
    }
  }
  if (status) {
    loom_tensor_handle_release(handle);
    loom_status_ignore(loom_async_value_set_error(result, status));
  }
}

typedef struct pending_chain_t {
  loom_async_value_t* chain;   // the runtime's out chain (owned)
  loom_async_value_t* result;  // retained
} pending_chain_t;

static void chain_now(loom_async_value_t* chain, loom_async_value_t* result) {
  if (loom_async_value_is_error(chain)) {
    loom_status_ignore(loom_async_value_set_error(
        result, loom_status_clone(loom_async_value_error(chain))));
  } else {
    loom_status_ignore(loom_program_value_set_chain(result));
  }
}

static void chain_ready(void* arg) {
  pending_chain_t* pending = arg;
  chain_now(pending->chain, pending->result);
  loom_async_value_release(pending->chain);
  loom_async_value_release(pending->result);
  loom_allocator_free(loom_allocator_default(), pending);
}

// Consumes `chain`.
static void deliver_chain(loom_async_value_t* chain,
                          loom_async_value_t* result) {
  if (!chain || loom_async_value_is_set(chain)) {
    if (chain) {
      chain_now(chain, result);
    } else {
      loom_status_ignore(loom_program_value_set_chain(result));
    }
    loom_async_value_release(chain);
    return;
  }
  pending_chain_t* pending = NULL;
  loom_status_t status = loom_allocator_malloc(
      loom_allocator_default(), sizeof(*pending), (void**)&pending);
  if (!status) {
    pending->chain = chain;
    pending->result = result;
    loom_async_value_retain(result);
    status = loom_async_value_and_then(chain, chain_ready, pending);
    if (status) {
      loom_async_value_release(result);
      loom_allocator_free(loom_allocator_default(), pending);
    }
  }
  if (status) {
    loom_async_value_release(chain);
    loom_status_ignore(loom_async_value_set_error(result, status));
  }
}

// The name to execute: "tf.X" runs Loom's op X; an X no registry defines
// (a handler's native op, or none) keeps its name as written, so that
// errors name it as TFRT does ("tf.X was not supported by NullOpHandler").
static const char* execute_name(loom_runtime_t* runtime,
                                const program_op_t* op) {
  const char* written = op->execute_written_name;
  if (!written || strcmp(written, op->execute_name) == 0 ||
      loom_op_registry_find(loom_runtime_ops(runtime), op->execute_name)) {
    return op->execute_name;
  }
  return written;
}

// Executes through the prepared op the binding caches for the op name and
// the first handler it ran on, or by name for another handler.
static loom_status_t execute(loom_program_frame_t* frame,
                             loom_op_handler_t* handler,
                             loom_tensor_handle_t** arguments,
                             int32_t num_arguments,
                             loom_tensor_handle_t** results,
                             int32_t num_results, loom_async_value_t** chain) {
  const program_op_t* op = frame->op;
  loom_runtime_t* runtime = frame->executor->runtime;
  loom_location_t location = loom__program_location(frame->binding, op);
  _Atomic(program_prepared_t*)* slot =
      &frame->binding->prepared[op->execute_index];
  program_prepared_t* cached = atomic_load_explicit(slot, memory_order_acquire);
  if (!cached) {
    loom_prepared_op_t* prepared = NULL;
    loom_status_t status = loom_runtime_prepare_op(
        runtime, execute_name(runtime, op), handler, &prepared);
    if (!status) {
      status = loom_allocator_malloc(frame->executor->allocator,
                                     sizeof(*cached), (void**)&cached);
      if (status) {
        loom_prepared_op_release(prepared);
      } else {
        cached->handler = handler;
        cached->op = prepared;
        program_prepared_t* expected = NULL;
        if (!atomic_compare_exchange_strong(slot, &expected, cached)) {
          loom_prepared_op_release(prepared);
          loom_allocator_free(frame->executor->allocator, cached);
          cached = expected;
        }
      }
    }
    // A prepare failure is reported by the execute-by-name below.
    loom_status_free(status);
  }
  if (cached && cached->handler == handler) {
    return loom_runtime_execute_prepared(cached->op, location, arguments,
                                         num_arguments, op->execute_attrs,
                                         results, num_results, chain);
  }
  return loom_runtime_execute(runtime, execute_name(runtime, op), handler,
                              location, arguments, num_arguments,
                              op->execute_attrs, results, num_results, chain);
}

static void executeop_kernel(loom_program_frame_t* frame, void* user_data) {
  bool seq = user_data != NULL;
  int32_t first = seq ? 2 : 1;
  if (frame->num_arguments < first || frame->num_results < (seq ? 1 : 0) ||
      !frame->op->execute_name) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s' is malformed", frame->op->name));
    return;
  }
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_OP_HANDLER)) return;
  if (seq && !loom__kernel_check(frame, 1, LOOM_PROGRAM_VALUE_CHAIN)) return;
  for (int32_t i = first; i < frame->num_arguments; ++i) {
    if (!loom__kernel_check(frame, i, LOOM_PROGRAM_VALUE_TENSOR_HANDLE)) return;
  }
  int32_t n = frame->num_arguments - first;
  int32_t m = frame->num_results - (seq ? 1 : 0);
  loom_allocator_t allocator = frame->executor->allocator;
  handle_vector_t handles;
  handle_vector_initialize(&handles);
  // Zeroed: the results start empty.
  loom_status_t status =
      handle_vector_resize(&handles, allocator, (size_t)n + (size_t)m);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  loom_tensor_handle_t** arguments = handle_vector_data(&handles);
  loom_tensor_handle_t** results = arguments + n;
  for (int32_t i = 0; i < n; ++i) {
    // Execute consumes its arguments: an argument no later operation reads
    // moves out of its value (so that the op may reuse its buffer); the
    // others' values keep theirs.
    arguments[i] = loom__program_frame_take_handle(frame, first + i);
    if (arguments[i]) continue;
    arguments[i] = loom_program_frame_value(frame, first + i)->u.tensor_handle;
    loom_tensor_handle_retain(arguments[i]);
  }
  loom_async_value_t* chain = NULL;
  if (seq) {
    chain = loom_program_frame_argument(frame, 1);
    loom_async_value_retain(chain);
  }
  loom_op_handler_t* handler = loom_program_frame_value(frame, 0)->u.op_handler;
  // Errors are reported by the runtime (at this operation's location) and
  // carried by the result handles.
  loom_status_free(
      execute(frame, handler, arguments, n, results, m, seq ? &chain : NULL));
  for (int32_t i = 0; i < m; ++i) {
    deliver_handle(results[i], frame->results[(seq ? 1 : 0) + i]);
  }
  if (seq) deliver_chain(chain, frame->results[0]);
  handle_vector_deinitialize(&handles, allocator);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

loom_status_t loom__program_register_corert_kernels(
    loom_program_executor_t* executor) {
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "corert.get_op_handler",
                                        get_op_handler_kernel, NULL, 1, 1));
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "corert.register_op_handler",
                                        register_op_handler_kernel, NULL, 1,
                                        1));
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor,
                                        "corert.create_null_op_handler",
                                        create_null_kernel, NULL, 0, 1));
  LOOM_RETURN_IF_ERROR(loom__kernel_add(
      executor, "corert.create_cpu_op_handler", create_cpu_kernel, NULL, 1, 1));
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor,
                                        "corert.create_logging_op_handler",
                                        create_logging_kernel, NULL, 1, 1));
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "corert.executeop",
                                        executeop_kernel, NULL, -1, -1));
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "corert.executeop.seq",
                                        executeop_kernel, (void*)executor, -1,
                                        -1));
  LOOM_RETURN_IF_ERROR(loom__program_register_corert_tensor_kernels(executor));
  return loom__program_register_corert_op_attrs_kernels(executor);
}
