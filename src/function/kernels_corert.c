// The corert dialect's kernels: op handlers, corert.executeop on Loom's core
// runtime, tensor constants, printing, and op attribute sets.

#include <pthread.h>
#include <string.h>

#include "base/half.h"
#include "function/program_dtype.h"
#include "function/program_executor.h"
#include "loom/cpu_op_handler.h"
#include "loom/op_def.h"
#include "loom/op_handler.h"
#include "loom/tensor_handle.h"
#include "tensor/checked_size.h"

// Execute's arguments, then its results: 32 handles without allocating.
LOOM_DEFINE_SMALL_VECTOR(handle_vector, loom_tensor_handle_t*, 32)

static void set_or_fail(loom_program_frame_t* frame, loom_status_t status) {
  if (status) loom_program_frame_fail(frame, status);
}

static bool check(loom_program_frame_t* frame, int32_t index,
                  loom_program_value_kind_t kind) {
  loom_status_t status = loom_program_frame_check_kind(frame, index, kind);
  if (!status) return true;
  loom_program_frame_fail(frame, status);
  return false;
}

static loom_status_t missing_attr(const loom_program_frame_t* frame,
                                  const char* name, const char* what) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "'%s' needs a '%s' attribute (%s)",
                          loom_program_frame_op_name(frame), name, what);
}

// Reads a list of integers (I32 or I64) as a shape.
static loom_status_t shape_attr(const loom_program_frame_t* frame,
                                const char* name, loom_shape_t* out) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), name, &value) ||
      !value.is_list ||
      (value.kind != LOOM_ATTR_KIND_I64 && value.kind != LOOM_ATTR_KIND_I32)) {
    return missing_attr(frame, name, "a list of integers");
  }
  if (value.count > LOOM_MAX_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "'%s': shape rank %lld exceeds %d",
                            loom_program_frame_op_name(frame),
                            (long long)value.count, LOOM_MAX_RANK);
  }
  int64_t dims[LOOM_MAX_RANK];
  for (int64_t i = 0; i < value.count; ++i) {
    dims[i] = value.kind == LOOM_ATTR_KIND_I64
                  ? ((const int64_t*)value.u.list)[i]
                  : ((const int32_t*)value.u.list)[i];
  }
  loom_status_t status = loom_shape_initialize(out, dims, (int)value.count);
  if (!status && !loom_shape_is_fully_defined(out)) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "dimensions must not be negative");
  }
  int64_t count = 0;
  if (!status && (!loom__size_product(out->dims, out->rank, &count) ||
                  count > ((int64_t)1 << 28))) {
    char text[256];
    loom_shape_format(out, text, sizeof(text));
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "shape %s has more than 2^28 elements", text);
  }
  if (status) {
    return loom_status_annotate(status, "'%s': attribute '%s'",
                                loom_program_frame_op_name(frame), name);
  }
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Op handlers
//===----------------------------------------------------------------------===//

static const char* string_attr(const loom_program_frame_t* frame,
                               const char* name) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), name, &value) ||
      value.is_list || value.kind != LOOM_ATTR_KIND_STRING) {
    return NULL;
  }
  return value.u.string.data;
}

static void get_op_handler_kernel(loom_program_frame_t* frame,
                                  void* user_data) {
  (void)user_data;
  const char* name = string_attr(frame, "op_handler_name");
  if (!name) {
    loom_program_frame_fail(frame,
                            missing_attr(frame, "op_handler_name", "a string"));
    return;
  }
  loom_op_handler_t* handler = loom__program_get_handler(frame->executor, name);
  if (!handler) {
    loom_program_frame_fail(frame,
                            loom_make_status(LOOM_STATUS_NOT_FOUND,
                                             "op_handler not found: %s", name));
    return;
  }
  set_or_fail(frame, loom_program_value_set_op_handler(
                         loom_program_frame_result(frame, 0), handler));
  loom_op_handler_release(handler);
}

static void register_op_handler_kernel(loom_program_frame_t* frame,
                                       void* user_data) {
  (void)user_data;
  const char* name = string_attr(frame, "op_handler_name");
  if (!check(frame, 0, LOOM_PROGRAM_VALUE_OP_HANDLER)) return;
  if (!name || !*name) {
    loom_program_frame_fail(frame,
                            missing_attr(frame, "op_handler_name", "a string"));
    return;
  }
  loom_status_t status = loom__program_register_handler(
      frame->executor, name, loom_program_frame_value(frame, 0)->u.op_handler);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 0)));
}

static void set_handler(loom_program_frame_t* frame, loom_status_t status,
                        loom_op_handler_t* handler) {
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  set_or_fail(frame, loom_program_value_set_op_handler(
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
  if (!check(frame, 0, LOOM_PROGRAM_VALUE_OP_HANDLER)) return;
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
  if (!check(frame, 0, LOOM_PROGRAM_VALUE_OP_HANDLER)) return;
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
  if (!check(frame, 0, LOOM_PROGRAM_VALUE_OP_HANDLER)) return;
  if (seq && !check(frame, 1, LOOM_PROGRAM_VALUE_CHAIN)) return;
  for (int32_t i = first; i < frame->num_arguments; ++i) {
    if (!check(frame, i, LOOM_PROGRAM_VALUE_TENSOR_HANDLE)) return;
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
// Tensors
//===----------------------------------------------------------------------===//

static void set_tensor(loom_program_frame_t* frame, loom_tensor_t* tensor) {
  loom_op_handler_t* cpu =
      loom_runtime_get_op_handler(frame->executor->runtime, "cpu");
  loom_tensor_handle_t* handle = NULL;
  loom_status_t status =
      cpu ? loom_tensor_handle_create(cpu, tensor, &handle)
          : loom_make_status(LOOM_STATUS_NOT_FOUND, "no cpu op handler");
  loom_tensor_release(tensor);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  set_or_fail(frame, loom_program_value_set_tensor_handle(
                         loom_program_frame_result(frame, 0), handle));
}

static void const_dense_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value", &value) ||
      value.is_list || value.kind != LOOM_ATTR_KIND_TENSOR) {
    loom_program_frame_fail(
        frame, missing_attr(frame, "value", "dense<...> : tensor<...>"));
    return;
  }
  // Constants are immutable: the handle shares the program's tensor.
  loom_tensor_retain(value.u.tensor);
  set_tensor(frame, value.u.tensor);
}

static void const_string_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  loom_shape_t shape;
  loom_status_t status = shape_attr(frame, "shape", &shape);
  loom_attr_value_t value;
  if (!status &&
      (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value", &value) ||
       value.kind != LOOM_ATTR_KIND_STRING)) {
    status = missing_attr(frame, "value", "a list of strings");
  }
  int64_t count = status ? 0 : loom_shape_num_elements(&shape);
  int64_t given = status ? 0 : (value.is_list ? value.count : 1);
  if (!status && given != count && given != 1) {
    status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "'%s': %lld strings for %lld elements",
        loom_program_frame_op_name(frame), (long long)given, (long long)count);
  }
  loom_tensor_t* tensor = NULL;
  if (!status) {
    status =
        loom_tensor_create_string(frame->executor->allocator, &shape, &tensor);
  }
  for (int64_t i = 0; !status && i < count; ++i) {
    loom_attr_value_t element = value;
    if (value.is_list) {
      status =
          loom_attr_value_list_element(&value, given == 1 ? 0 : i, &element);
    }
    if (!status) {
      status = loom_tstring_copy(loom_tensor_string_at(tensor, i),
                                 element.u.string.data, element.u.string.size);
    }
  }
  if (status) {
    loom_tensor_release(tensor);
    loom_program_frame_fail(frame, status);
    return;
  }
  set_tensor(frame, tensor);
}

// A double as int64, saturating (a cast of a value out of range, or of a
// NaN, is undefined behaviour).
static int64_t saturate_to_int64(double x) {
  if (x != x) return 0;
  if (x >= 9223372036854775807.0) return INT64_MAX;
  if (x <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)x;
}

// Element `index` of a list attribute value as double / int64.
static void list_number(const loom_attr_value_t* list, int64_t index, double* f,
                        int64_t* i) {
  switch (list->kind) {
    case LOOM_ATTR_KIND_BOOL:
      *i = ((const bool*)list->u.list)[index];
      *f = (double)*i;
      return;
    case LOOM_ATTR_KIND_I32:
      *i = ((const int32_t*)list->u.list)[index];
      *f = (double)*i;
      return;
    case LOOM_ATTR_KIND_I64:
      *i = ((const int64_t*)list->u.list)[index];
      *f = (double)*i;
      return;
    case LOOM_ATTR_KIND_F32:
      *f = ((const float*)list->u.list)[index];
      *i = saturate_to_int64(*f);
      return;
    default:
      *f = ((const double*)list->u.list)[index];
      *i = saturate_to_int64(*f);
      return;
  }
}

// corert.create_dense_tensor.<dtype> {shape = [...], value = [...]}
static void create_dense_kernel(loom_program_frame_t* frame, void* user_data) {
  loom_dtype_t dtype = (loom_dtype_t)(intptr_t)user_data;
  loom_shape_t shape;
  loom_status_t status = shape_attr(frame, "shape", &shape);
  loom_attr_value_t value;
  if (!status &&
      (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value", &value) ||
       !value.is_list ||
       (value.kind != LOOM_ATTR_KIND_BOOL && value.kind != LOOM_ATTR_KIND_I32 &&
        value.kind != LOOM_ATTR_KIND_I64 && value.kind != LOOM_ATTR_KIND_F32 &&
        value.kind != LOOM_ATTR_KIND_F64))) {
    status = missing_attr(frame, "value", "a list of numbers");
  }
  int64_t count = status ? 0 : loom_shape_num_elements(&shape);
  if (!status && value.count != count && value.count != 1) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "'%s': %lld values for %lld elements",
                              loom_program_frame_op_name(frame),
                              (long long)value.count, (long long)count);
  }
  loom_tensor_t* tensor = NULL;
  if (!status) {
    status = loom_tensor_create_dense(frame->executor->allocator, dtype, &shape,
                                      &tensor);
  }
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  void* data = loom_tensor_data(tensor);
  for (int64_t k = 0; k < count; ++k) {
    double f = 0;
    int64_t i = 0;
    list_number(&value, value.count == 1 ? 0 : k, &f, &i);
    switch (dtype) {
      case LOOM_DTYPE_BOOL:
        ((uint8_t*)data)[k] = i != 0;
        break;
      case LOOM_DTYPE_INT8:
      case LOOM_DTYPE_UINT8:
        ((uint8_t*)data)[k] = (uint8_t)i;
        break;
      case LOOM_DTYPE_INT16:
      case LOOM_DTYPE_UINT16:
        ((uint16_t*)data)[k] = (uint16_t)i;
        break;
      case LOOM_DTYPE_INT32:
      case LOOM_DTYPE_UINT32:
        ((uint32_t*)data)[k] = (uint32_t)i;
        break;
      case LOOM_DTYPE_INT64:
      case LOOM_DTYPE_UINT64:
        ((uint64_t*)data)[k] = (uint64_t)i;
        break;
      case LOOM_DTYPE_HALF:
        ((uint16_t*)data)[k] = loom__float_to_half((float)f);
        break;
      case LOOM_DTYPE_BFLOAT16:
        ((uint16_t*)data)[k] = loom__float_to_bfloat16((float)f);
        break;
      case LOOM_DTYPE_FLOAT:
        ((float*)data)[k] = (float)f;
        break;
      default:
        ((double*)data)[k] = f;
        break;
    }
  }
  set_tensor(frame, tensor);
}

// The host tensor of an available handle (borrowed), or NULL.
static const loom_tensor_t* handle_tensor(loom_tensor_handle_t* handle) {
  loom_async_value_t* value = loom_tensor_handle_value(handle);
  if (!value || loom_async_value_type(value) != &loom_async_value_type_tensor ||
      !loom_async_value_is_available(value)) {
    return NULL;
  }
  return *(loom_tensor_t**)loom_async_value_payload(value);
}

// Printed tensors of up to 1 KiB of text need no allocation.
enum { kInlineText = 1024 };
LOOM_DEFINE_SMALL_VECTOR(text_vector, char, kInlineText)

static void print_tensorhandle_kernel(loom_program_frame_t* frame,
                                      void* user_data) {
  (void)user_data;
  if (!check(frame, 0, LOOM_PROGRAM_VALUE_TENSOR_HANDLE)) return;
  loom_tensor_handle_t* handle =
      loom_program_frame_value(frame, 0)->u.tensor_handle;
  const loom_tensor_t* tensor = handle_tensor(handle);
  FILE* out = loom_program_frame_output(frame);
  if (!tensor) {
    fprintf(out, "TensorHandle on op handler '%s'\n",
            loom_op_handler_type_name(loom_tensor_handle_handler(handle)));
  } else {
    // A longer text is formatted again on the heap; out of memory, what
    // fits inline is printed.
    loom_allocator_t allocator = frame->executor->allocator;
    text_vector_t text;
    text_vector_initialize(&text);
    loom_status_free(
        text_vector_resize_uninitialized(&text, allocator, kInlineText));
    size_t length = loom_program_format_tensor(tensor, text_vector_data(&text),
                                               text_vector_size(&text));
    if (length >= text_vector_size(&text)) {
      loom_status_t status =
          text_vector_resize_uninitialized(&text, allocator, length + 1);
      if (!status) {
        loom_program_format_tensor(tensor, text_vector_data(&text), length + 1);
      }
      loom_status_free(status);
    }
    fprintf(out, "%s\n", text_vector_data(&text));
    text_vector_deinitialize(&text, allocator);
  }
  fflush(out);
  set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 0)));
}

static void to_int32_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!check(frame, 0, LOOM_PROGRAM_VALUE_TENSOR_HANDLE)) return;
  const loom_tensor_t* tensor =
      handle_tensor(loom_program_frame_value(frame, 0)->u.tensor_handle);
  if (!tensor || loom_tensor_dtype(tensor) != LOOM_DTYPE_INT32 ||
      loom_tensor_num_elements(tensor) != 1 ||
      loom_tensor_kind(tensor) == LOOM_TENSOR_STRING) {
    char what[160] = "not a host tensor";
    if (tensor) {
      loom_tensor_metadata_format(loom_tensor_metadata(tensor), what,
                                  sizeof(what));
    }
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s' needs an i32 tensor of one element, got "
                                "%s",
                                loom_program_frame_op_name(frame), what));
    return;
  }
  set_or_fail(frame, loom_program_value_set_i32(
                         loom_program_frame_result(frame, 0),
                         *(const int32_t*)loom_tensor_data(tensor)));
}

static void to_shape_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!check(frame, 0, LOOM_PROGRAM_VALUE_TENSOR_HANDLE)) return;
  loom_tensor_metadata_t metadata;
  loom_status_t status = loom_tensor_handle_metadata(
      loom_program_frame_value(frame, 0)->u.tensor_handle, &metadata);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  set_or_fail(frame, loom_program_value_set_shape(
                         loom_program_frame_result(frame, 0), &metadata.shape));
}

//===----------------------------------------------------------------------===//
// Op attribute sets
//===----------------------------------------------------------------------===//

static void create_op_attrs_kernel(loom_program_frame_t* frame,
                                   void* user_data) {
  (void)user_data;
  loom_program_value_t payload;
  memset(&payload, 0, sizeof(payload));
  payload.kind = LOOM_PROGRAM_VALUE_OP_ATTRS;
  loom_status_t status = loom__program_op_attrs_create(
      frame->executor->allocator, &payload.u.op_attrs);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  set_or_fail(frame, loom_program_value_set(loom_program_frame_result(frame, 0),
                                            &payload));
  loom__program_op_attrs_release(payload.u.op_attrs);
}

typedef struct attr_setter_t {
  const char* suffix;
  loom_attr_kind_t kind;
  bool is_list;
  bool any;  // aggregate: any list
} attr_setter_t;

static const attr_setter_t kSetters[] = {
    {.suffix = "op_attrs_set.bool", .kind = LOOM_ATTR_KIND_BOOL},
    {.suffix = "op_attrs_set.i32", .kind = LOOM_ATTR_KIND_I32},
    {.suffix = "op_attrs_set.i64", .kind = LOOM_ATTR_KIND_I64},
    {.suffix = "op_attrs_set.f32", .kind = LOOM_ATTR_KIND_F32},
    {.suffix = "op_attrs_set.f64", .kind = LOOM_ATTR_KIND_F64},
    {.suffix = "op_attrs_set.dtype", .kind = LOOM_ATTR_KIND_DTYPE},
    {.suffix = "op_attrs_set.dense", .kind = LOOM_ATTR_KIND_TENSOR},
    {.suffix = "op_attrs_set.shape", .kind = LOOM_ATTR_KIND_SHAPE},
    {.suffix = "op_attrs_set.str", .kind = LOOM_ATTR_KIND_STRING},
    {.suffix = "op_attrs_set.aggregate",
     .kind = LOOM_ATTR_KIND_AGGREGATE,
     .is_list = true,
     .any = true},
    {.suffix = "op_attrs_set_array.i32",
     .kind = LOOM_ATTR_KIND_I32,
     .is_list = true},
    {.suffix = "op_attrs_set_array.i64",
     .kind = LOOM_ATTR_KIND_I64,
     .is_list = true},
    {.suffix = "op_attrs_set_array.f32",
     .kind = LOOM_ATTR_KIND_F32,
     .is_list = true},
};

static void op_attrs_set_kernel(loom_program_frame_t* frame, void* user_data) {
  const attr_setter_t* setter = user_data;
  if (!check(frame, 0, LOOM_PROGRAM_VALUE_OP_ATTRS) ||
      !check(frame, 1, LOOM_PROGRAM_VALUE_CHAIN)) {
    return;
  }
  const char* key = string_attr(frame, "key");
  loom_attr_value_t value;
  loom_status_t status = loom_ok_status();
  if (!key || !*key) {
    status = missing_attr(frame, "key", "a non-empty string");
  } else if (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value",
                                &value)) {
    status = missing_attr(frame, "value", "the value to set");
  } else if (setter->any ? !value.is_list
                         : (value.kind != setter->kind ||
                            value.is_list != setter->is_list)) {
    status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "'%s': the 'value' attribute is %s %s, expected %s %s",
        loom_program_frame_op_name(frame), value.is_list ? "a list of" : "a",
        loom_attr_kind_name(value.kind), setter->is_list ? "a list of" : "a",
        setter->any ? "values" : loom_attr_kind_name(setter->kind));
  }
  // op_attrs_set.aggregate keeps an AGGREGATE even when the elements share
  // a kind (which the attribute parser makes a typed list).
  loom_attr_value_t* elements = NULL;
  if (!status && setter->any && value.kind != LOOM_ATTR_KIND_AGGREGATE &&
      value.count > 0) {
    status = loom_allocator_malloc(frame->executor->allocator,
                                   sizeof(*elements) * (size_t)value.count,
                                   (void**)&elements);
    for (int64_t i = 0; !status && i < value.count; ++i) {
      status = loom_attr_value_list_element(&value, i, &elements[i]);
    }
    value.kind = LOOM_ATTR_KIND_AGGREGATE;
    value.encoded = false;
    value.u.list = elements;
  }
  if (!status) {
    loom_op_attrs_t* attrs = loom_program_op_attrs_get(
        loom_program_frame_value(frame, 0)->u.op_attrs);
    pthread_mutex_lock(&frame->executor->op_attrs_mutex);
    status = loom_op_attrs_set_value(attrs, key, &value);
    pthread_mutex_unlock(&frame->executor->op_attrs_mutex);
  }
  loom_allocator_free(frame->executor->allocator, elements);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 0)));
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static loom_status_t add(loom_program_executor_t* executor, const char* name,
                         loom_program_kernel_fn_t fn, void* user_data,
                         int32_t num_arguments, int32_t num_results) {
  loom_program_kernel_def_t def = {.struct_size = sizeof(def),
                                   .name = name,
                                   .fn = fn,
                                   .user_data = user_data,
                                   .num_arguments = num_arguments,
                                   .num_results = num_results};
  return loom_program_executor_add_kernel(executor, &def);
}

// Of the dtypes programs spell, those create_dense_kernel makes (each
// under every spelling): the numbers and bool, not strings, complex or
// quantized types.
static bool is_dense_number(loom_dtype_t dtype) {
  return loom_dtype_size(dtype) > 0 && !loom_dtype_is_complex(dtype) &&
         !loom_dtype_is_quantized(dtype);
}

loom_status_t loom__program_register_corert_kernels(
    loom_program_executor_t* executor) {
  LOOM_RETURN_IF_ERROR(add(executor, "corert.get_op_handler",
                           get_op_handler_kernel, NULL, 1, 1));
  LOOM_RETURN_IF_ERROR(add(executor, "corert.register_op_handler",
                           register_op_handler_kernel, NULL, 1, 1));
  LOOM_RETURN_IF_ERROR(add(executor, "corert.create_null_op_handler",
                           create_null_kernel, NULL, 0, 1));
  LOOM_RETURN_IF_ERROR(add(executor, "corert.create_cpu_op_handler",
                           create_cpu_kernel, NULL, 1, 1));
  LOOM_RETURN_IF_ERROR(add(executor, "corert.create_logging_op_handler",
                           create_logging_kernel, NULL, 1, 1));
  LOOM_RETURN_IF_ERROR(
      add(executor, "corert.executeop", executeop_kernel, NULL, -1, -1));
  LOOM_RETURN_IF_ERROR(add(executor, "corert.executeop.seq", executeop_kernel,
                           (void*)executor, -1, -1));
  LOOM_RETURN_IF_ERROR(add(executor, "corert.const_dense_tensor",
                           const_dense_kernel, NULL, 0, 1));
  LOOM_RETURN_IF_ERROR(add(executor, "corert.const_string_tensor",
                           const_string_kernel, NULL, 0, 1));
  char name[64];
  size_t num_spellings = 0;
  const program_dtype_spelling_t* spellings =
      loom__program_dtype_spellings(&num_spellings);
  for (size_t i = 0; i < num_spellings; ++i) {
    if (!is_dense_number(spellings[i].dtype)) continue;
    snprintf(name, sizeof(name), "corert.create_dense_tensor.%s",
             spellings[i].name);
    LOOM_RETURN_IF_ERROR(add(executor, name, create_dense_kernel,
                             (void*)(intptr_t)spellings[i].dtype, 0, 1));
  }
  LOOM_RETURN_IF_ERROR(add(executor, "corert.print_tensorhandle",
                           print_tensorhandle_kernel, NULL, 2, 1));
  LOOM_RETURN_IF_ERROR(add(executor, "corert.tensorhandle_to_int32",
                           to_int32_kernel, NULL, 1, 1));
  // TFRT's older form also takes a chain: (handle) or (handle, chain).
  LOOM_RETURN_IF_ERROR(add(executor, "corert.tensorhandle_to_shape",
                           to_shape_kernel, NULL, -1, 1));
  LOOM_RETURN_IF_ERROR(add(executor, "corert.create_op_attrs",
                           create_op_attrs_kernel, NULL, 0, 1));
  for (size_t i = 0; i < sizeof(kSetters) / sizeof(kSetters[0]); ++i) {
    snprintf(name, sizeof(name), "corert.%s", kSetters[i].suffix);
    LOOM_RETURN_IF_ERROR(
        add(executor, name, op_attrs_set_kernel, (void*)&kSetters[i], 2, 1));
  }
  return loom_ok_status();
}
