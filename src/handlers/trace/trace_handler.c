// The trace handler: a front-end handler with a representation of its own
// (loom__trace_value_t, a symbolic value of the body), built on the
// pass-through base for merging. It runs nothing: each op placed on it is
// recorded (trace_record.c); a tensor of another handler copied onto it is
// captured; copying a symbolic value off is an error, as it has no data.

#include <stdio.h>
#include <string.h>

#include "corert/resource_handle_data.h"
#include "handlers/trace/trace_internal.h"

typedef enum trace_op_kind_t {
  kTraceRecord = 0,
  kTraceCopyOn,
  kTraceCopyOff,
} trace_op_kind_t;

typedef struct trace_op_data_t {
  loom__passthrough_op_t base;
  trace_op_kind_t kind;
} trace_op_data_t;

static const loom__passthrough_type_t kTraceType;

loom__trace_t* loom__trace_of(const loom_op_handler_t* handler) {
  loom__passthrough_t* base = loom__passthrough_of(handler, &kTraceType);
  return base ? base->shared : NULL;
}

loom__trace_value_t* loom__trace_own_value(const loom__trace_t* trace,
                                           const loom_tensor_handle_t* handle) {
  if (!handle || loom__trace_of(loom_tensor_handle_handler(handle)) != trace) {
    return NULL;
  }
  return loom_tensor_handle_representation(handle);
}

loom_status_t loom__trace_finished_error(const loom__trace_t* trace,
                                         const char* what) {
  return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                          "%s: trace '%s' is finished (loom_trace_finish made "
                          "its function); start a new trace",
                          what, trace->name);
}

static void trace_retain(void* shared) {
  loom__ref_count_inc(&((loom__trace_t*)shared)->ref_count);
}

static void trace_release(void* opaque) {
  loom__trace_t* trace = opaque;
  if (!trace || !loom__ref_count_dec(&trace->ref_count)) return;
  loom_function_builder_destroy(trace->builder);
  for (int32_t i = 0; i < trace->num_captures; ++i) {
    loom_tensor_handle_release(trace->captures[i].source);
  }
  loom_allocator_free(trace->allocator, trace->captures);
  loom_allocator_free(trace->allocator, trace->parameters);
  pthread_mutex_destroy(&trace->mutex);
  loom_allocator_free(trace->allocator, trace);
}

//===----------------------------------------------------------------------===//
// Symbolic values
//===----------------------------------------------------------------------===//

loom_status_t loom__trace_make_value(loom_op_handler_t* handler,
                                     const char* ref,
                                     const loom_tensor_metadata_t* metadata,
                                     loom_tensor_t* constant,
                                     loom_tensor_handle_t** out) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  *out = NULL;
  loom__trace_value_t* value = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(base->allocator, sizeof(*value), (void**)&value));
  value->trace = base->shared;
  snprintf(value->ref, sizeof(value->ref), "%s", ref);
  value->handle_data = (loom_handle_data_t){.dtype = LOOM_DTYPE_INVALID,
                                            .shape = loom_shape_unknown()};
  loom_status_t status =
      loom_tensor_handle_create_representation(handler, metadata, value, out);
  if (status) {
    loom_allocator_free(base->allocator, value);
    return status;
  }
  if (constant) {
    loom_tensor_retain(constant);
    value->constant = constant;
  }
  return loom_ok_status();
}

static void trace_release_representation(loom_op_handler_t* handler,
                                         void* representation) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  loom__trace_value_t* value = representation;
  if (!value) return;
  loom_tensor_release(value->constant);
  loom_tensor_handle_release(value->concrete);
  loom_allocator_free(base->allocator, value);
}

// A captured tensor whose value is known offers it; no other has one.
static loom_status_t trace_static_value(loom_op_handler_t* handler,
                                        loom_tensor_handle_t* handle,
                                        loom_tensor_t** out_tensor) {
  (void)handler;
  loom__trace_value_t* value = loom_tensor_handle_representation(handle);
  if (value && value->concrete) {
    return loom_tensor_handle_static_value(value->concrete, out_tensor);
  }
  if (!value || !value->constant) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "a symbolic value of a trace has no value until "
                            "its function is called");
  }
  loom_tensor_retain(value->constant);
  *out_tensor = value->constant;
  return loom_ok_status();
}

static size_t trace_tensor_debug_string(const loom_op_handler_t* handler,
                                        const loom_tensor_handle_t* handle,
                                        char* buffer, size_t capacity) {
  (void)handler;
  loom__trace_value_t* value = loom_tensor_handle_representation(handle);
  char metadata[128] = "?";
  loom_tensor_metadata_t known;
  loom_status_t status = loom_tensor_handle_metadata(handle, &known);
  if (!status) loom_tensor_metadata_format(&known, metadata, sizeof(metadata));
  loom_status_free(status);
  if (!value) {
    return (size_t)snprintf(buffer, capacity, "<symbolic error>");
  }
  return (size_t)snprintf(buffer, capacity, "<symbolic %s '%s' of trace '%s'>",
                          metadata, value->ref, value->trace->name);
}

static size_t trace_debug_string(const loom_op_handler_t* handler, char* buffer,
                                 size_t capacity) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  const loom__trace_t* trace = base->shared;
  return (size_t)snprintf(buffer, capacity, "trace '%s'%s", trace->name,
                          base->outer ? " (merged)" : "");
}

//===----------------------------------------------------------------------===//
// Captures and copies
//===----------------------------------------------------------------------===//

static loom_status_t grow_captures(loom__trace_t* trace) {
  if (trace->num_captures < trace->captures_capacity) return loom_ok_status();
  int32_t capacity =
      trace->captures_capacity ? 2 * trace->captures_capacity : 4;
  loom__trace_capture_t* grown = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      trace->allocator, sizeof(*grown) * (size_t)capacity, (void**)&grown));
  if (trace->num_captures) {
    memcpy(grown, trace->captures,
           sizeof(*grown) * (size_t)trace->num_captures);
  }
  loom_allocator_free(trace->allocator, trace->captures);
  trace->captures = grown;
  trace->captures_capacity = capacity;
  return loom_ok_status();
}

loom_status_t loom__trace_capture(loom_op_handler_t* handler,
                                  loom_tensor_handle_t* source,
                                  loom_tensor_handle_t** out) {
  loom__trace_t* trace = loom__trace_of(handler);
  *out = NULL;
  loom__trace_t* other = loom__trace_of(loom_tensor_handle_handler(source));
  if (other) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "trace '%s': cannot capture a symbolic value of "
                            "trace '%s' (it has no value outside that "
                            "trace's function)",
                            trace->name, other->name);
  }
  // The metadata and the value (when known) are read before the lock: they
  // may wait for the op computing the tensor.
  loom_tensor_metadata_t metadata;
  LOOM_RETURN_IF_ERROR(loom_tensor_handle_wait_metadata(source, &metadata));
  loom_tensor_t* constant = NULL;
  loom_status_free(loom_tensor_handle_static_value(source, &constant));
  pthread_mutex_lock(&trace->mutex);
  loom_status_t status = loom_ok_status();
  int32_t index = -1;
  if (trace->finished) {
    status = loom__trace_finished_error(trace, "capture");
  }
  for (int32_t i = 0; !status && i < trace->num_captures; ++i) {
    if (trace->captures[i].source == source) index = i;
  }
  if (!status && index < 0) {
    status = grow_captures(trace);
    if (!status) {
      index = trace->num_captures++;
      loom_tensor_handle_retain(source);
      trace->captures[index] = (loom__trace_capture_t){
          .source = source,
          .metadata = metadata,
      };
    }
  }
  pthread_mutex_unlock(&trace->mutex);
  if (!status) {
    char ref[32];
    snprintf(ref, sizeof(ref), "captured_%d", index);
    status = loom__trace_make_value(handler, ref, &metadata, constant, out);
  }
  if (!status && metadata.dtype == LOOM_DTYPE_RESOURCE) {
    // A variable's handle keeps its declared dtype and shape, so that reads
    // in the body have the variable's shape.
    loom__trace_value_t* value = loom_tensor_handle_representation(*out);
    loom_handle_data_t data;
    if (loom__resource_handle_data(constant, &data)) value->handle_data = data;
  }
  if (!status && trace->execute) {
    loom__trace_value_t* value = loom_tensor_handle_representation(*out);
    loom_tensor_handle_retain(source);
    value->concrete = source;
  }
  loom_tensor_release(constant);
  return status;
}

// CopyOn: a tensor of another handler is captured.
static loom_status_t copy_on(loom_op_handler_t* handler,
                             loom_op_invocation_t* invocation) {
  LOOM_RETURN_IF_ERROR(loom__handler_copy_check(invocation, "CopyOn"));
  loom_tensor_handle_t* input = invocation->arguments[0];
  loom_tensor_handle_t* result = NULL;
  loom_status_t status = loom_ok_status();
  if (loom__trace_own_value(loom__trace_of(handler), input)) {
    loom_tensor_handle_retain(input);
    result = input;
  } else {
    status = loom__trace_capture(handler, input, &result);
  }
  if (status) return loom_op_invocation_fail(invocation, status, true);
  return loom__handler_copy_finish(invocation, result);
}

// CopyOff: a symbolic value has no data to copy.
static loom_status_t copy_off(loom_op_handler_t* handler,
                              loom_op_invocation_t* invocation) {
  LOOM_RETURN_IF_ERROR(loom__handler_copy_check(invocation, "CopyOff"));
  loom__trace_t* trace = loom__trace_of(handler);
  loom__trace_value_t* value =
      loom__trace_own_value(trace, invocation->arguments[0]);
  if (!value || value->concrete) {
    // A tensor of another handler, or a value an executing trace computed.
    loom_tensor_handle_t* result =
        value ? value->concrete : invocation->arguments[0];
    loom_tensor_handle_retain(result);
    return loom__handler_copy_finish(invocation, result);
  }
  return loom_op_invocation_fail(
      invocation,
      loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                       "cannot read the value of symbolic tensor '%s' of "
                       "trace '%s': a traced op does not run while tracing; "
                       "the value exists when the function is called (return "
                       "it from the function)",
                       value->ref, trace->name),
      true);
}

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

static loom_status_t trace_prepare_op(loom__passthrough_t* base,
                                      const char* op_name,
                                      const loom_op_def_t* op_def,
                                      loom__passthrough_op_t* opaque) {
  (void)base;
  trace_op_data_t* data = (trace_op_data_t*)opaque;
  if (op_def) op_name = op_def->name;
  data->kind = strcmp(op_name, "CopyOn") == 0    ? kTraceCopyOn
               : strcmp(op_name, "CopyOff") == 0 ? kTraceCopyOff
                                                 : kTraceRecord;
  return loom_ok_status();
}

static loom_status_t trace_execute(loom_op_handler_t* handler,
                                   loom_op_invocation_t* invocation) {
  const trace_op_data_t* data = loom_prepared_op_data(invocation->op);
  if (data->kind == kTraceCopyOn) return copy_on(handler, invocation);
  if (data->kind == kTraceCopyOff) return copy_off(handler, invocation);
  return loom__trace_record(handler, invocation, data->base.outer_op);
}

// Inputs from other handlers are copied on (captured), never passed on.
// A call of a function while tracing becomes one node calling it (as
// TensorFlow's graph gets a call op), rather than its body inlined: a
// function traced inside a trace is a call in the outer body. An executing
// trace leaves calls, so that their values are computed op by op.
static loom_status_t trace_execute_function_call(loom_op_handler_t* handler,
                                                 loom_function_call_t* call,
                                                 loom_tensor_handle_t** results,
                                                 bool* out_taken) {
  *out_taken = false;
  loom__trace_t* trace = loom__trace_of(handler);
  if (!trace || trace->execute) return loom_ok_status();
  loom_function_t* function = NULL;
  LOOM_RETURN_IF_ERROR(loom_context_find_function(
      trace->context, call->function_name, &function));
  // Called by name, the function binds its captured values itself.
  loom_status_t status = loom__trace_record_call(
      handler, function, call->inputs, call->num_inputs - call->num_captured,
      results, call->num_outputs);
  loom_function_release(function);
  *out_taken = !status;
  return status;
}

static const loom_op_handler_vtable_t kTraceVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "TRACE",
    LOOM__PASSTHROUGH_BASE_HOOKS,
    .execute = trace_execute,
    .release_representation = trace_release_representation,
    .static_value = trace_static_value,
    .debug_string = trace_debug_string,
    .tensor_debug_string = trace_tensor_debug_string,
    .execute_function_call = trace_execute_function_call,
};

static const loom__passthrough_type_t kTraceType = {
    .vtable = &kTraceVtable,
    .state_size = sizeof(loom__passthrough_t),
    .retain_shared = trace_retain,
    .release_shared = trace_release,
    .op_data_size = sizeof(trace_op_data_t),
    .prepare_op = trace_prepare_op,
};

loom_status_t loom__trace_new(loom_context_t* context, const char* name,
                              bool execute, loom_op_handler_t** out_trace) {
  loom_allocator_t allocator = loom_allocator_default();
  loom__trace_t* trace = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*trace), (void**)&trace));
  loom__ref_count_init(&trace->ref_count);
  trace->allocator = allocator;
  trace->context = context;
  pthread_mutex_init(&trace->mutex, NULL);
  snprintf(trace->name, sizeof(trace->name), "%s", name);
  trace->execute = execute;
  loom_status_t status =
      loom_function_builder_create(allocator, name, &trace->builder);
  if (!status) {
    status = loom__passthrough_create(&kTraceType, context, allocator, trace,
                                      NULL, out_trace);
  }
  trace_release(trace);  // the handler holds it (or it is freed)
  return status;
}
