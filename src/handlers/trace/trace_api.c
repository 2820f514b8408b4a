// The public API of traces (loom/trace.h): making one, its parameters and
// explicit captures, and finishing it into a function whose captured inputs
// the function binds itself.

#include <stdio.h>
#include <string.h>

#include "function/function_capture.h"
#include "handlers/trace/trace_internal.h"

static loom_status_t check_trace(const char* function,
                                 const loom_op_handler_t* handler) {
  if (!handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: trace is NULL",
                            function);
  }
  if (loom__trace_of(handler)) return loom_ok_status();
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "%s: the handler is not a trace handler (type '%s')",
                          function, loom_op_handler_type_name(handler));
}

loom_status_t loom_trace_create(loom_context_t* context, const char* name,
                                loom_op_handler_t** out_trace) {
  if (!context || !name || !out_trace) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_trace_create: %s is NULL",
                            !context ? "context"
                            : !name  ? "name"
                                     : "out_trace");
  }
  *out_trace = NULL;
  return loom_status_annotate(loom__trace_new(context, name, false, out_trace),
                              "loom_trace_create");
}

loom_status_t loom_trace_create_executing(loom_context_t* context,
                                          const char* name,
                                          loom_op_handler_t** out_trace) {
  if (!context || !name || !out_trace) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_trace_create_executing: %s is NULL",
                            !context ? "context"
                            : !name  ? "name"
                                     : "out_trace");
  }
  *out_trace = NULL;
  return loom_status_annotate(loom__trace_new(context, name, true, out_trace),
                              "loom_trace_create_executing");
}

bool loom_trace_is_trace(const loom_op_handler_t* handler) {
  return handler && loom__trace_of(handler) != NULL;
}

bool loom_trace_is_symbolic(const loom_tensor_handle_t* handle) {
  return handle && loom__trace_of(loom_tensor_handle_handler(handle)) != NULL;
}

static int32_t locked_count(const loom_op_handler_t* handler, int which) {
  loom__trace_t* trace = handler ? loom__trace_of(handler) : NULL;
  if (!trace) return 0;
  pthread_mutex_lock(&trace->mutex);
  int32_t count = which == 0   ? trace->num_nodes
                  : which == 1 ? trace->num_parameters
                               : trace->num_captures;
  pthread_mutex_unlock(&trace->mutex);
  return count;
}

int32_t loom_trace_num_nodes(const loom_op_handler_t* trace) {
  return locked_count(trace, 0);
}
int32_t loom_trace_num_parameters(const loom_op_handler_t* trace) {
  return locked_count(trace, 1);
}
int32_t loom_trace_num_captures(const loom_op_handler_t* trace) {
  return locked_count(trace, 2);
}

// The merge of `handler` that values made now live on (a new reference),
// as the handler base finds it, else `handler`: values of one trace then
// share one handler, as ops placed by their inputs need.
static loom_status_t entry_handler(loom_op_handler_t* handler,
                                   loom_op_handler_t** out) {
  LOOM_RETURN_IF_ERROR(loom__passthrough_entry_handler(handler, out));
  if (!*out) {
    loom_op_handler_retain(handler);
    *out = handler;
  }
  return loom_ok_status();
}

static loom_status_t push_parameter(loom__trace_t* trace,
                                    const loom__trace_parameter_t* parameter) {
  if (trace->num_parameters == trace->parameters_capacity) {
    int32_t capacity =
        trace->parameters_capacity ? 2 * trace->parameters_capacity : 4;
    loom__trace_parameter_t* grown = NULL;
    LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
        trace->allocator, sizeof(*grown) * (size_t)capacity, (void**)&grown));
    if (trace->num_parameters) {
      memcpy(grown, trace->parameters,
             sizeof(*grown) * (size_t)trace->num_parameters);
    }
    loom_allocator_free(trace->allocator, trace->parameters);
    trace->parameters = grown;
    trace->parameters_capacity = capacity;
  }
  trace->parameters[trace->num_parameters++] = *parameter;
  return loom_ok_status();
}

// An argument name of an op definition, not one of the captures' names.
static bool is_parameter_name(const char* name) {
  size_t length = strlen(name);
  if (length == 0 || length >= 128 || name[0] < 'a' || name[0] > 'z' ||
      strncmp(name, "captured_", 9) == 0) {
    return false;
  }
  for (const char* c = name; *c; ++c) {
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) {
      return false;
    }
  }
  return true;
}

static bool has_parameter(const loom__trace_t* trace, const char* name) {
  for (int32_t i = 0; i < trace->num_parameters; ++i) {
    if (strcmp(trace->parameters[i].name, name) == 0) return true;
  }
  return false;
}

// Adds a parameter; `concrete` (may be NULL; retained) is its value in an
// executing trace.
static loom_status_t add_parameter(const char* kFunction,
                                   loom_op_handler_t* handler, const char* name,
                                   loom_dtype_t dtype,
                                   const loom_shape_t* shape,
                                   loom_tensor_handle_t* concrete,
                                   loom_tensor_handle_t** out_value) {
  LOOM_RETURN_IF_ERROR(check_trace(kFunction, handler));
  if (!out_value) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: out_value is NULL", kFunction);
  }
  *out_value = NULL;
  if (!loom_dtype_is_valid(dtype) || dtype == LOOM_DTYPE_INVALID) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: dtype %d is not a valid dtype", kFunction,
                            (int)dtype);
  }
  if (name && !is_parameter_name(name)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: parameter name '%s' is invalid (1 to 127 "
                            "lower-case letters, digits and '_', starting "
                            "with a letter, not 'captured_...')",
                            kFunction, name);
  }
  loom__trace_t* trace = loom__trace_of(handler);
  loom_op_handler_t* target = NULL;
  LOOM_RETURN_IF_ERROR(entry_handler(handler, &target));
  loom__trace_parameter_t parameter = {
      .dtype = dtype,
      .has_shape = shape != NULL,
  };
  if (shape) {
    parameter.shape = *shape;
  } else {
    parameter.shape = loom_shape_unknown();
  }
  pthread_mutex_lock(&trace->mutex);
  loom_status_t status = loom_ok_status();
  if (trace->finished) status = loom__trace_finished_error(trace, kFunction);
  if (!status && name && has_parameter(trace, name)) {
    status = loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                              "%s: trace '%s' has a parameter '%s' already",
                              kFunction, trace->name, name);
  }
  if (!status) {
    if (name) {
      snprintf(parameter.name, sizeof(parameter.name), "%s", name);
    } else {
      // "arg<i>", past the names the caller chose.
      for (int32_t i = trace->num_parameters;; ++i) {
        snprintf(parameter.name, sizeof(parameter.name), "arg%d", i);
        if (!has_parameter(trace, parameter.name)) break;
      }
    }
    status = push_parameter(trace, &parameter);
  }
  pthread_mutex_unlock(&trace->mutex);
  if (!status) {
    loom_tensor_metadata_t metadata = {.dtype = dtype,
                                       .shape = parameter.shape};
    status = loom__trace_make_value(target, parameter.name, &metadata, NULL,
                                    out_value);
  }
  if (!status && concrete && trace->execute) {
    loom__trace_value_t* value = loom_tensor_handle_representation(*out_value);
    loom_tensor_handle_retain(concrete);
    value->concrete = concrete;
  }
  loom_op_handler_release(target);
  return status;
}

loom_status_t loom_trace_add_parameter(loom_op_handler_t* handler,
                                       const char* name, loom_dtype_t dtype,
                                       const loom_shape_t* shape,
                                       loom_tensor_handle_t** out_value) {
  return add_parameter("loom_trace_add_parameter", handler, name, dtype, shape,
                       NULL, out_value);
}

loom_status_t loom_trace_add_parameter_value(loom_op_handler_t* handler,
                                             const char* name,
                                             loom_tensor_handle_t* value,
                                             loom_tensor_handle_t** out_value) {
  static const char kFunction[] = "loom_trace_add_parameter_value";
  LOOM_RETURN_IF_ERROR(check_trace(kFunction, handler));
  if (!value || !out_value) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kFunction, !value ? "value" : "out_value");
  }
  *out_value = NULL;
  if (loom_trace_is_symbolic(value)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: the value is a symbolic value of a trace; "
                            "give a tensor with data",
                            kFunction);
  }
  loom_tensor_metadata_t metadata;
  LOOM_RETURN_IF_ERROR(loom_tensor_handle_wait_metadata(value, &metadata));
  return add_parameter(kFunction, handler, name, metadata.dtype,
                       &metadata.shape, value, out_value);
}

loom_status_t loom_trace_capture(loom_op_handler_t* handler,
                                 loom_tensor_handle_t* handle,
                                 loom_tensor_handle_t** out_value) {
  static const char kFunction[] = "loom_trace_capture";
  LOOM_RETURN_IF_ERROR(check_trace(kFunction, handler));
  if (!handle || !out_value) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kFunction, !handle ? "handle" : "out_value");
  }
  *out_value = NULL;
  loom__trace_t* trace = loom__trace_of(handler);
  if (loom__trace_own_value(trace, handle)) {
    loom_tensor_handle_retain(handle);
    *out_value = handle;
    return loom_ok_status();
  }
  loom_op_handler_t* target = NULL;
  LOOM_RETURN_IF_ERROR(entry_handler(handler, &target));
  loom_status_t status = loom__trace_capture(target, handle, out_value);
  loom_op_handler_release(target);
  return status;
}

// Adds the inputs (parameters, then captures "captured_<i>") and the outputs to
// the builder.
static loom_status_t complete_body(loom__trace_t* trace,
                                   loom_tensor_handle_t* const* outputs,
                                   int32_t num_outputs) {
  loom_function_builder_t* builder = trace->builder;
  for (int32_t i = 0; i < trace->num_parameters; ++i) {
    const loom__trace_parameter_t* p = &trace->parameters[i];
    LOOM_RETURN_IF_ERROR(loom_function_builder_add_input(
        builder, p->name, p->dtype, NULL, p->has_shape ? &p->shape : NULL));
  }
  for (int32_t i = 0; i < trace->num_captures; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "captured_%d", i);
    const loom__trace_capture_t* c = &trace->captures[i];
    // A signature holds shapes up to LOOM_MAX_RANK: a capture of a higher
    // rank (the function binds it itself) is declared of unknown shape.
    bool fits = c->metadata.shape.rank <= LOOM_MAX_RANK;
    LOOM_RETURN_IF_ERROR(
        loom_function_builder_add_input(builder, name, c->metadata.dtype, NULL,
                                        fits ? &c->metadata.shape : NULL));
  }
  for (int32_t o = 0; o < num_outputs; ++o) {
    char name[32];
    snprintf(name, sizeof(name), "output_%d", o);
    loom__trace_value_t* value = loom__trace_own_value(trace, outputs[o]);
    loom_tensor_metadata_t metadata;
    LOOM_RETURN_IF_ERROR(loom_tensor_handle_metadata(outputs[o], &metadata));
    LOOM_RETURN_IF_ERROR(loom_function_builder_add_output(
        builder, name, metadata.dtype, NULL, value->ref));
  }
  loom_function_builder_set_stateful(builder, trace->stateful);
  return loom_ok_status();
}

loom_status_t loom_trace_finish(loom_op_handler_t* handler,
                                loom_tensor_handle_t* const* outputs,
                                int32_t num_outputs,
                                loom_function_t** out_function) {
  static const char kFunction[] = "loom_trace_finish";
  LOOM_RETURN_IF_ERROR(check_trace(kFunction, handler));
  if (!out_function || num_outputs < 0 || (num_outputs > 0 && !outputs)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s", kFunction,
                            !out_function
                                ? "out_function is NULL"
                                : "outputs is NULL or num_outputs is negative");
  }
  *out_function = NULL;
  loom__trace_t* trace = loom__trace_of(handler);
  for (int32_t o = 0; o < num_outputs; ++o) {
    if (!outputs[o]) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: output %d is NULL", kFunction, o);
    }
    if (!loom__trace_own_value(trace, outputs[o])) {
      loom__trace_t* other =
          loom__trace_of(loom_tensor_handle_handler(outputs[o]));
      char where[160];
      if (other) {
        snprintf(where, sizeof(where), "a value of trace '%s'", other->name);
      } else {
        snprintf(
            where, sizeof(where), "a tensor of handler '%s'",
            loom_op_handler_type_name(loom_tensor_handle_handler(outputs[o])));
      }
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: output %d of trace '%s' is not a value of "
                              "the trace (it is %s); return values computed "
                              "in the trace's scope",
                              kFunction, o, trace->name, where);
    }
  }
  pthread_mutex_lock(&trace->mutex);
  loom_function_builder_t* builder = NULL;
  loom_status_t status = loom_ok_status();
  if (trace->finished || !trace->builder) {
    status = loom__trace_finished_error(trace, kFunction);
  } else {
    status = complete_body(trace, outputs, num_outputs);
    builder = trace->builder;
    trace->builder = NULL;
    trace->finished = true;
  }
  pthread_mutex_unlock(&trace->mutex);
  if (status) {
    loom_function_builder_destroy(builder);
    return status;
  }
  // The trace is finished: the captures no longer change.
  loom_function_t* function = NULL;
  status = loom_function_builder_finish(builder, &function);
  if (!status && trace->num_captures > 0) {
    loom_tensor_handle_t** handles = NULL;
    status = loom_allocator_calloc(
        trace->allocator, sizeof(*handles) * (size_t)trace->num_captures,
        (void**)&handles);
    for (int32_t i = 0; !status && i < trace->num_captures; ++i) {
      handles[i] = trace->captures[i].source;
    }
    if (!status) {
      status =
          loom__function_set_captures(function, handles, trace->num_captures);
    }
    loom_allocator_free(trace->allocator, handles);
  }
  if (status) {
    loom_function_release(function);
    return loom_status_annotate(status, "%s: trace '%s'", kFunction,
                                trace->name);
  }
  *out_function = function;
  return loom_ok_status();
}
