// Recording an op as a node of the traced body: its attributes completed
// against its inputs' dtypes (and copied into the node), its results'
// dtypes from its signature and shapes from its shape function, and a
// control input on the previous stateful node when it is stateful.

#include <stdio.h>
#include <string.h>

#include "function/function_shapes.h"
#include "handlers/trace/trace_internal.h"
#include "loom/op_signature.h"
#include "loom/shape_inference.h"

// Per-op arrays: inputs' metadata and references, results' metadata.
typedef struct record_t {
  loom_dtype_t* input_dtypes;
  loom_shape_t* input_shapes;
  loom_tensor_t** input_tensors;  // borrowed from the values
  // An executing trace's input values (borrowed), all set or `runs` false.
  loom_tensor_handle_t** input_concrete;
  bool runs;
  const char** input_refs;  // n + 1 (a control input)
  loom_dtype_t* output_dtypes;
  loom_shape_t* output_shapes;
  // Resources' handle data (dtype LOOM_DTYPE_INVALID: unknown).
  loom_handle_data_t* input_handle_data;
  loom_handle_data_t* output_handle_data;
  char control[sizeof(((loom__trace_t*)0)->last_stateful) + 1];
} record_t;

static loom_status_t allocate_record(loom_allocator_t allocator, int32_t n,
                                     int32_t m, record_t* record) {
  size_t in = (size_t)n + 1;
  size_t out = (size_t)m + 1;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator, sizeof(loom_dtype_t) * in, (void**)&record->input_dtypes));
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator, sizeof(loom_shape_t) * in, (void**)&record->input_shapes));
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator, sizeof(loom_tensor_t*) * in, (void**)&record->input_tensors));
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator, sizeof(const char*) * in, (void**)&record->input_refs));
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(allocator,
                                             sizeof(loom_tensor_handle_t*) * in,
                                             (void**)&record->input_concrete));
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator, sizeof(loom_dtype_t) * out, (void**)&record->output_dtypes));
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(loom_handle_data_t) * in,
                            (void**)&record->input_handle_data));
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(loom_handle_data_t) * out,
                            (void**)&record->output_handle_data));
  // Unknown until inferred: what a call node's results keep.
  for (size_t k = 0; k < out; ++k) {
    record->output_handle_data[k] = (loom_handle_data_t){
        .dtype = LOOM_DTYPE_INVALID, .shape = loom_shape_unknown()};
  }
  return loom_allocator_calloc(allocator, sizeof(loom_shape_t) * out,
                               (void**)&record->output_shapes);
}

static void free_record(loom_allocator_t allocator, record_t* record) {
  loom_allocator_free(allocator, record->input_dtypes);
  loom_allocator_free(allocator, record->input_shapes);
  loom_allocator_free(allocator, record->input_tensors);
  loom_allocator_free(allocator, record->input_refs);
  loom_allocator_free(allocator, record->input_concrete);
  loom_allocator_free(allocator, record->output_dtypes);
  loom_allocator_free(allocator, record->output_shapes);
  loom_allocator_free(allocator, record->input_handle_data);
  loom_allocator_free(allocator, record->output_handle_data);
}

// The inputs: every argument is a value of the trace (the front end copied
// the others on, which captured them).
static loom_status_t read_inputs(loom__trace_t* trace, const char* op_name,
                                 loom_op_invocation_t* invocation,
                                 record_t* record) {
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_t* argument = invocation->arguments[i];
    loom__trace_value_t* value = loom__trace_own_value(trace, argument);
    if (!value) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "trace '%s': input %d of %s is not a value of "
                              "the trace",
                              trace->name, i, op_name);
    }
    loom_tensor_metadata_t metadata;
    LOOM_RETURN_IF_ERROR(loom_tensor_handle_metadata(argument, &metadata));
    record->input_dtypes[i] = metadata.dtype;
    record->input_shapes[i] = metadata.shape;
    record->input_tensors[i] = value->constant;
    record->input_refs[i] = value->ref;
    record->input_concrete[i] = value->concrete;
    record->input_handle_data[i] = value->handle_data;
    if (!value->concrete) record->runs = false;
  }
  return loom_ok_status();
}

// Adds the node under the trace's lock; writes its name.
static loom_status_t add_node(loom__trace_t* trace, const loom_op_def_t* def,
                              const loom_op_attrs_t* attrs, record_t* record,
                              int32_t n, char* node_name, size_t capacity) {
  pthread_mutex_lock(&trace->mutex);
  loom_status_t status = loom_ok_status();
  if (trace->finished || !trace->builder) {
    status = loom__trace_finished_error(trace, def->name);
  }
  int32_t count = n;
  if (!status) {
    snprintf(node_name, capacity, "%s_%d", def->name, trace->num_nodes);
    if (def->is_stateful && trace->last_stateful[0]) {
      snprintf(record->control, sizeof(record->control), "^%s",
               trace->last_stateful);
      record->input_refs[count++] = record->control;
    }
    status =
        loom_function_builder_add_node(trace->builder, node_name, def->name,
                                       record->input_refs, count, attrs, NULL);
  }
  if (!status) {
    ++trace->num_nodes;
    if (def->is_stateful) {
      snprintf(trace->last_stateful, sizeof(trace->last_stateful), "%s",
               node_name);
      trace->stateful = true;
    }
  }
  pthread_mutex_unlock(&trace->mutex);
  return status;
}

// The node's results as symbolic values "node:out:index".
// The result slots hold nothing of ours before; made[k] marks those set.
static loom_status_t make_results(loom_op_handler_t* handler,
                                  const loom_op_def_t* def,
                                  const loom_op_attrs_t* attrs,
                                  const char* node_name, record_t* record,
                                  loom_op_invocation_t* invocation,
                                  bool* made) {
  for (int32_t a = 0; a < def->num_outputs; ++a) {
    int32_t start = 0;
    int32_t stop = 0;
    LOOM_RETURN_IF_ERROR(loom_op_def_arg_range(
        def, attrs, true, def->outputs[a].name, &start, &stop));
    for (int32_t k = start; k < stop && k < invocation->num_results; ++k) {
      char ref[kTraceRefLength];
      snprintf(ref, sizeof(ref), "%s:%s:%d", node_name, def->outputs[a].name,
               k - start);
      loom_tensor_metadata_t metadata = {
          .dtype = record->output_dtypes[k],
          .shape = record->output_shapes[k],
      };
      invocation->results[k] = NULL;
      LOOM_RETURN_IF_ERROR(loom__trace_make_value(handler, ref, &metadata, NULL,
                                                  &invocation->results[k]));
      made[k] = true;
      loom__trace_value_t* value =
          loom_tensor_handle_representation(invocation->results[k]);
      value->handle_data = record->output_handle_data[k];
    }
  }
  return loom_ok_status();
}

// TraceAndExecute: runs the op as `outer_op` on the inputs' values, into
// concrete[0, m) (new references).
static loom_status_t run_concrete(loom_op_handler_t* handler,
                                  loom_op_invocation_t* invocation,
                                  loom_prepared_op_t* outer_op,
                                  const record_t* record,
                                  loom_tensor_handle_t** concrete) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  int32_t n = invocation->num_arguments;
  loom_tensor_handle_t** arguments = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      base->allocator, sizeof(*arguments) * (size_t)(n + 1),
      (void**)&arguments));
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_retain(record->input_concrete[i]);
    arguments[i] = record->input_concrete[i];
  }
  loom_op_invocation_t run = {
      .op = outer_op,
      .location = invocation->location,
      .arguments = arguments,
      .num_arguments = n,
      .attrs = invocation->attrs,
      .results = concrete,
      .num_results = invocation->num_results,
      .chain = NULL,
      .notes = NULL,
      .cancellation = invocation->cancellation,
  };
  // The arguments are the run's (released by it).
  loom_status_t status = loom__passthrough_forward(base, &run, outer_op);
  loom_allocator_free(base->allocator, arguments);
  if (!status) {
    // The op's error is returned as an eager op's is: the trace waits for
    // each result of the outer handler's.
    for (int32_t k = 0; k < invocation->num_results && !status; ++k) {
      if (loom_tensor_handle_value(concrete[k])) {
        loom_tensor_t* tensor = NULL;
        status = loom_tensor_handle_resolve(concrete[k], &tensor);
        loom_tensor_release(tensor);
      } else {
        loom_tensor_metadata_t metadata;
        status = loom_tensor_handle_wait_metadata(concrete[k], &metadata);
      }
    }
  }
  if (status) {
    for (int32_t k = 0; k < invocation->num_results; ++k) {
      loom_tensor_handle_release(concrete[k]);
      concrete[k] = NULL;
    }
  }
  return status;
}

loom_status_t loom__trace_record(loom_op_handler_t* handler,
                                 loom_op_invocation_t* invocation,
                                 loom_prepared_op_t* outer_op) {
  loom__trace_t* trace = loom__trace_of(handler);
  const loom_op_def_t* def = loom_prepared_op_def(invocation->op);
  if (!def) {
    return loom_op_invocation_fail(
        invocation,
        loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                         "trace '%s': op '%s' has no registered definition, "
                         "so it cannot be a node of a function",
                         trace->name, loom_prepared_op_name(invocation->op)),
        true);
  }
  int32_t n = invocation->num_arguments;
  int32_t m = invocation->num_results;
  record_t record = {0};
  bool made_stack[16] = {false};
  bool* made = made_stack;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, trace->allocator);
  loom_status_t status = allocate_record(trace->allocator, n, m, &record);
  record.runs = trace->execute && outer_op != NULL;
  loom_tensor_handle_t** concrete = NULL;
  if (!status && m > 16) {
    bool* heap = NULL;
    status = loom_allocator_calloc(trace->allocator, sizeof(bool) * (size_t)m,
                                   (void**)&heap);
    if (!status) made = heap;
  }
  if (!status) status = read_inputs(trace, def->name, invocation, &record);
  if (!status) status = loom_op_attrs_merge(&attrs, invocation->attrs);
  if (!status) {
    status = loom_op_def_complete_attrs(def, record.input_dtypes, n, &attrs);
  }
  int32_t count = 0;
  if (!status) {
    status = loom_op_def_flat_types(def, &attrs, true, record.output_dtypes, m,
                                    &count);
  }
  if (!status && count != m) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: Expecting %d outputs, but *num_retvals is "
                              "%d",
                              def->name, count, m);
  }
  if (!status) {
    status = loom_op_def_infer_shapes_with_handle_data(
        def, &attrs, record.input_shapes, record.input_dtypes,
        record.input_tensors, record.input_handle_data, n, record.output_shapes,
        record.output_handle_data, m);
  }
  // An executing trace runs the op first: an op that fails is not recorded.
  if (!status && record.runs) {
    status = loom_allocator_calloc(trace->allocator,
                                   sizeof(*concrete) * (size_t)(m + 1),
                                   (void**)&concrete);
    if (!status) {
      status = run_concrete(handler, invocation, outer_op, &record, concrete);
    }
  }
  char node_name[160];
  if (!status) {
    status =
        add_node(trace, def, &attrs, &record, n, node_name, sizeof(node_name));
  }
  if (!status) {
    status = make_results(handler, def, &attrs, node_name, &record, invocation,
                          made);
  }
  for (int32_t k = 0; !status && concrete && k < m; ++k) {
    loom__trace_value_t* value =
        loom_tensor_handle_representation(invocation->results[k]);
    value->concrete = concrete[k];  // the value's reference now
    concrete[k] = NULL;
  }
  for (int32_t k = 0; concrete && k < m; ++k) {
    loom_tensor_handle_release(concrete[k]);
  }
  loom_allocator_free(trace->allocator, concrete);
  loom_op_attrs_deinitialize(&attrs);
  free_record(trace->allocator, &record);
  if (status) {
    for (int32_t k = 0; k < m; ++k) {
      // Without the heap marks (m > 16 and no memory) none was made.
      if (made != made_stack || k < 16) {
        if (made[k]) loom_tensor_handle_release(invocation->results[k]);
      }
      invocation->results[k] = NULL;
    }
  }
  if (made != made_stack) loom_allocator_free(trace->allocator, made);
  if (status) return loom_op_invocation_fail(invocation, status, true);
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_release(invocation->arguments[i]);
    invocation->arguments[i] = NULL;
  }
  return loom_ok_status();
}

// The shapes of a call's results, from the callee's body specialised for
// the inputs' shapes (at trace time: a call of the function does no more).
static loom_status_t infer_call_shapes(loom__trace_t* trace,
                                       const loom_function_t* function,
                                       record_t* record, int32_t n, int32_t m) {
  loom__function_static_value_t* inputs = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      trace->allocator, sizeof(*inputs) * ((size_t)n + 1), (void**)&inputs));
  for (int32_t i = 0; i < n; ++i) {
    inputs[i] = (loom__function_static_value_t){
        .dtype = record->input_dtypes[i],
        .shape = record->input_shapes[i],
        .handle_data = record->input_handle_data[i],
        .tensor = record->input_tensors[i],
    };
  }
  loom__function_shapes_t* shapes = NULL;
  loom_status_t status =
      loom__function_shapes_infer(trace->context, function, inputs, n, &shapes);
  for (int32_t k = 0; !status && k < m; ++k) {
    loom__function_static_value_t output =
        loom__function_shapes_output(shapes, k);
    record->output_shapes[k] = output.shape;
    record->output_handle_data[k] = output.handle_data;
  }
  loom__function_shapes_destroy(shapes);
  loom_allocator_free(trace->allocator, inputs);
  if (status) {
    status = loom_status_annotate(status, "trace '%s': call of '%s'",
                                  trace->name, loom_function_name(function));
  }
  return status;
}

loom_status_t loom__trace_record_call(loom_op_handler_t* handler,
                                      const loom_function_t* function,
                                      loom_tensor_handle_t* const* inputs,
                                      int32_t n, loom_tensor_handle_t** results,
                                      int32_t m) {
  loom__trace_t* trace = loom__trace_of(handler);
  const loom_op_def_t* def = loom_function_signature(function);
  record_t record = {0};
  loom_tensor_handle_t** captured = NULL;
  bool* made = NULL;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, trace->allocator);
  loom_status_t status = allocate_record(trace->allocator, n, m, &record);
  if (!status) {
    status = loom_allocator_calloc(trace->allocator,
                                   sizeof(*captured) * ((size_t)n + 1),
                                   (void**)&captured);
  }
  if (!status) {
    status = loom_allocator_calloc(
        trace->allocator, sizeof(*made) * ((size_t)m + 1), (void**)&made);
  }
  for (int32_t i = 0; !status && i < n; ++i) {
    loom__trace_value_t* value = loom__trace_own_value(trace, inputs[i]);
    if (!value) {
      // An eager tensor the call reads: captured, as an op's input is.
      status = loom__trace_capture(handler, inputs[i], &captured[i]);
      if (!status) value = loom__trace_own_value(trace, captured[i]);
    }
    if (!status && !value) {
      status = loom_make_status(LOOM_STATUS_INTERNAL,
                                "trace '%s': input %d of %s has no value",
                                trace->name, i, def->name);
    }
    loom_tensor_metadata_t metadata;
    if (!status) {
      status = loom_tensor_handle_metadata(
          captured[i] ? captured[i] : inputs[i], &metadata);
    }
    if (!status) {
      record.input_dtypes[i] = metadata.dtype;
      record.input_shapes[i] = metadata.shape;
      record.input_refs[i] = value->ref;
      record.input_handle_data[i] = value->handle_data;
      record.input_tensors[i] = value->constant;
    }
  }
  if (!status) {
    status = loom_op_def_complete_attrs(def, record.input_dtypes, n, &attrs);
  }
  int32_t count = 0;
  if (!status) {
    status = loom_op_def_flat_types(def, &attrs, true, record.output_dtypes, m,
                                    &count);
  }
  if (!status && count != m) {
    status =
        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                         "%s: %d outputs, %d expected", def->name, count, m);
  }
  if (!status) status = infer_call_shapes(trace, function, &record, n, m);
  char node_name[160];
  if (!status) {
    status =
        add_node(trace, def, &attrs, &record, n, node_name, sizeof(node_name));
  }
  if (!status) {
    loom_op_invocation_t invocation = {.results = results, .num_results = m};
    status = make_results(handler, def, &attrs, node_name, &record, &invocation,
                          made);
  }
  if (status) {
    for (int32_t k = 0; made && k < m; ++k) {
      if (made[k]) loom_tensor_handle_release(results[k]);
      results[k] = NULL;
    }
  }
  for (int32_t i = 0; captured && i < n; ++i) {
    loom_tensor_handle_release(captured[i]);
  }
  loom_allocator_free(trace->allocator, captured);
  loom_allocator_free(trace->allocator, made);
  loom_op_attrs_deinitialize(&attrs);
  free_record(trace->allocator, &record);
  return status;
}
