// Calling an eager function: the call's attrs are completed against the
// signature (which checks the number and dtypes of the inputs), then each
// node runs, in order, as an eager op of the calling context
// (loom_eager_op_acquire / loom_eager_op_execute): placed by its inputs and
// the thread's scopes like any other op, so that the handlers around the
// call see the body's ops. A node naming a function calls it the same way.
// When handlers see the body, each input enters it through a FunctionInput
// op and each output leaves it through a FunctionOutput op, run where
// placement puts them, so that the handlers see the call's boundary.

#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "frontend/eager_op_internal.h"
#include "frontend/frontend_internal.h"
#include "function/function_call.h"
#include "function/function_internal.h"
#include "function/function_plan.h"
#include "function/function_replay.h"
#include "loom/op_signature.h"

// Calls nesting on this thread.
static _Thread_local int32_t g_call_depth;

typedef loom__function_node_values_t node_values_t;

typedef struct call_t {
  loom_context_t* context;
  loom_function_t* function;
  loom__arena_t arena;
  loom_op_attrs_t attrs;          // the call's, complete
  loom_tensor_handle_t** inputs;  // the call op's (borrowed)
  // Where each input and output argument's tensors begin among the call's
  // (a list argument spans its length), and the end.
  int32_t* input_starts;
  int32_t* output_starts;
  int32_t num_results;                // the call's tensors out
  node_values_t* values;              // per node
  const char* device;                 // the call's, or ""
  loom_cancellation_t* cancellation;  // the call's (borrowed), or NULL
  bool planning;                      // make a plan of a successful call
  // Handlers see the body: the inputs are FunctionInput's results (owned),
  // the results pass through FunctionOutput.
  bool indicators;
  loom__function_plan_t* plan;  // made by run()
} call_t;

// The handles `ref` designates: one, or a whole output argument.
static loom_status_t resolve_ref(call_t* call, const loom__function_ref_t* ref,
                                 const char* where,
                                 loom_tensor_handle_t*** out_handles,
                                 int32_t* out_count, bool* out_is_list) {
  *out_is_list = false;
  if (ref->node < 0) {
    const loom__function_arg_t* arg = &call->function->inputs[ref->input];
    int32_t start = call->input_starts[ref->input];
    int32_t length = call->input_starts[ref->input + 1] - start;
    bool list = arg->number_attr || arg->type_list_attr;
    if (list && ref->index >= length) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "function '%s': %s: '%s': input '%s' has %d "
                              "tensor(s) in this call",
                              call->function->name, where, ref->text, arg->name,
                              length);
    }
    *out_is_list = list && ref->index < 0;
    *out_handles =
        &call->inputs[start + (list && ref->index > 0 ? ref->index : 0)];
    *out_count = *out_is_list ? length : 1;
    return loom_ok_status();
  }
  const node_values_t* values = &call->values[ref->node];
  const loom__function_node_t* node = &call->function->nodes[ref->node];
  int32_t arg = loom_op_def_find_output(values->def, ref->output);
  if (arg < 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': %s: '%s': op '%s' of node '%s' "
                            "has no output argument '%s'",
                            call->function->name, where, ref->text, node->op,
                            node->name, ref->output);
  }
  int32_t start = values->starts[arg];
  int32_t length = values->starts[arg + 1] - start;
  if (ref->index < 0) {
    const loom_arg_def_t* def = &values->def->outputs[arg];
    *out_is_list = def->number_attr || def->type_list_attr;
    *out_handles = values->handles + start;
    *out_count = length;
    return loom_ok_status();
  }
  if (ref->index >= length) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': %s: '%s': output '%s' of node '%s' "
                            "has %d tensor(s)",
                            call->function->name, where, ref->text, ref->output,
                            node->name, length);
  }
  *out_handles = values->handles + start + ref->index;
  *out_count = 1;
  return loom_ok_status();
}

static loom_dtype_t handle_dtype(loom_tensor_handle_t* handle) {
  loom_dtype_t dtype = loom_tensor_handle_dtype(handle);
  if (dtype != LOOM_DTYPE_INVALID) return dtype;
  loom_tensor_metadata_t metadata;
  loom_status_t status = loom_tensor_handle_wait_metadata(handle, &metadata);
  if (status) {
    loom_status_free(status);
    return LOOM_DTYPE_INVALID;
  }
  return metadata.dtype;
}

// How many results `op` (inputs and attrs added) gives, and where each of
// its output arguments begins, into `values`.
static loom_status_t count_results(call_t* call, loom_eager_op_t* op,
                                   node_values_t* values) {
  const loom_op_def_t* def = loom_eager_op_def(op);
  values->def = def;
  int32_t n = loom_eager_op_num_inputs(op);
  loom_dtype_t* dtypes = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &call->arena, sizeof(*dtypes) * (size_t)(n + 1), (void**)&dtypes));
  for (int32_t i = 0; i < n; ++i) {
    dtypes[i] = handle_dtype(loom_eager_op_input(op, i));
  }
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &call->arena, sizeof(int32_t) * (size_t)(def->num_outputs + 1),
      (void**)&values->starts));
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  loom_status_t status = loom_op_attrs_merge(&attrs, loom_eager_op_attrs(op));
  if (!status) status = loom_op_def_complete_attrs(def, dtypes, n, &attrs);
  if (!status) {
    status = loom_op_def_flat_types(def, &attrs, true, NULL, 0, &values->count);
  }
  for (int32_t a = 0; !status && a < def->num_outputs; ++a) {
    int32_t stop = 0;
    status = loom_op_def_arg_range(def, &attrs, true, def->outputs[a].name,
                                   &values->starts[a], &stop);
  }
  values->starts[def->num_outputs] = values->count;
  loom_op_attrs_deinitialize(&attrs);
  return status;
}

// Sets up `op` for node `index`: device, attrs, placeholders, inputs.
static loom_status_t prepare_node(call_t* call, int32_t index,
                                  loom_eager_op_t* op) {
  const loom__function_node_t* node = &call->function->nodes[index];
  const char* device = node->device[0] ? node->device : call->device;
  if (*device) LOOM_RETURN_IF_ERROR(loom_eager_op_set_device(op, device));
  if (call->cancellation) {
    LOOM_RETURN_IF_ERROR(
        loom_eager_op_set_cancellation(op, call->cancellation));
  }
  LOOM_RETURN_IF_ERROR(loom_eager_op_add_attrs(op, &node->attrs));
  for (int32_t p = 0; p < node->num_placeholders; ++p) {
    const loom__function_placeholder_t* placeholder = &node->placeholders[p];
    loom_attr_value_t value;
    if (!loom_op_attrs_get(&call->attrs, placeholder->placeholder, &value)) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "attr '%s' takes '$%s', which this call does "
                              "not set",
                              placeholder->attr, placeholder->placeholder);
    }
    LOOM_RETURN_IF_ERROR(loom_op_attrs_set_value(loom_eager_op_attrs(op),
                                                 placeholder->attr, &value));
  }
  char where[192];
  snprintf(where, sizeof(where), "node '%s'", node->name);
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    loom_tensor_handle_t** handles = NULL;
    int32_t count = 0;
    bool is_list = false;
    LOOM_RETURN_IF_ERROR(
        resolve_ref(call, &node->inputs[i], where, &handles, &count, &is_list));
    if (is_list) {
      LOOM_RETURN_IF_ERROR(loom_eager_op_add_input_list(op, handles, count));
      continue;
    }
    for (int32_t j = 0; j < count; ++j) {
      LOOM_RETURN_IF_ERROR(loom_eager_op_add_input(op, handles[j]));
    }
  }
  return loom_ok_status();
}

static loom_status_t run_node(call_t* call, int32_t index) {
  const loom__function_node_t* node = &call->function->nodes[index];
  node_values_t* values = &call->values[index];
  loom_eager_op_t* op = NULL;
  loom_status_t status = loom_eager_op_acquire(call->context, node->op, &op);
  if (!status) status = prepare_node(call, index, op);
  if (!status) status = count_results(call, op, values);
  if (!status) {
    status = loom__arena_allocate(
        &call->arena, sizeof(*values->handles) * (size_t)(values->count + 1),
        (void**)&values->handles);
  }
  int32_t made = 0;
  if (!status) {
    status = loom_eager_op_execute(op, values->handles, values->count, &made);
  }
  if (!status && made != values->count) {
    status = loom_make_status(LOOM_STATUS_INTERNAL,
                              "op '%s' gave %d results, %d expected", node->op,
                              made, values->count);
  }
  if (op) loom_eager_op_recycle(op);
  if (status && !loom_context_has_function(call->context, node->op)) {
    // A nested call names its own nodes.
    status = loom_status_annotate(status, "function '%s': node '%s' (%s)",
                                  call->function->name, node->name, node->op);
  }
  if (status) {
    for (int32_t i = 0; i < made; ++i) {
      loom_tensor_handle_release(values->handles[i]);
    }
    values->count = 0;
  }
  return status;
}

// Checks a PartitionedCall's Tin or Tout, when set, against the function's
// types.
static loom_status_t check_type_list(const call_t* call, loom_eager_op_t* op,
                                     const char* attr_name,
                                     const loom_dtype_t* dtypes,
                                     int32_t count) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_eager_op_attrs(op), attr_name, &value)) {
    return loom_ok_status();
  }
  const char* op_name = loom_eager_op_name(op);
  if (value.kind != LOOM_ATTR_KIND_DTYPE || !value.is_list) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: attr '%s' is not a list of types", op_name,
                            attr_name);
  }
  if (value.count != count) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: attr '%s' has %lld types, but function '%s' "
        "has %d %s",
        op_name, attr_name, (long long)value.count, call->function->name, count,
        strcmp(attr_name, "Tin") == 0 ? "inputs" : "outputs");
  }
  const loom_dtype_t* listed = value.u.list;
  for (int32_t i = 0; i < count; ++i) {
    if (listed[i] != dtypes[i]) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: attr '%s' element %d is %s, but function "
                              "'%s' has %s there",
                              op_name, attr_name, i, loom_dtype_name(listed[i]),
                              call->function->name, loom_dtype_name(dtypes[i]));
    }
  }
  return loom_ok_status();
}

// Checks tensor `index` of the call, of input argument `arg`, against the
// argument's shape.
static loom_status_t check_shape(const loom_function_t* function, int32_t arg,
                                 int32_t index, const loom_shape_t* shape) {
  if (arg >= function->num_inputs || !function->inputs[arg].has_shape ||
      loom_shape_is_compatible(shape, &function->inputs[arg].shape)) {
    return loom_ok_status();
  }
  char got[128];
  char expected[128];
  loom_shape_format(shape, got, sizeof(got));
  loom_shape_format(&function->inputs[arg].shape, expected, sizeof(expected));
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "function '%s': input %d ('%s') has shape %s, "
                          "expected %s",
                          function->name, index, function->inputs[arg].name,
                          got, expected);
}

// Where each input (outputs == false) or output argument of the call
// begins among its tensors, and the end: one tensor per argument, or, with
// lists, as the call's complete attrs lay them out.
static loom_status_t lay_out(call_t* call, bool outputs, int32_t** out_starts) {
  const loom_function_t* function = call->function;
  int32_t count = outputs ? function->num_outputs : function->num_inputs;
  const loom__function_arg_t* args =
      outputs ? function->outputs : function->inputs;
  int32_t* starts = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &call->arena, sizeof(*starts) * (size_t)(count + 1), (void**)&starts));
  int32_t stop = 0;
  for (int32_t a = 0; a < count; ++a) {
    if (!function->has_lists) {
      starts[a] = a;
      stop = a + 1;
      continue;
    }
    LOOM_RETURN_IF_ERROR(
        loom_op_def_arg_range(function->signature, &call->attrs, outputs,
                              args[a].name, &starts[a], &stop));
  }
  starts[count] = stop;
  *out_starts = starts;
  return loom_ok_status();
}

// Checks the inputs against the signature and completes the call's attrs;
// writes the output dtypes (the call's tensors: a list output spans its
// length) and lays the arguments out.
static loom_status_t bind(call_t* call, loom_eager_op_t* op, bool partitioned,
                          loom_dtype_t** out_output_dtypes) {
  loom_function_t* function = call->function;
  int32_t n = loom_eager_op_num_inputs(op);
  loom_dtype_t* dtypes = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &call->arena, sizeof(*dtypes) * (size_t)(n + 1), (void**)&dtypes));
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_t* input = loom_eager_op_input(op, i);
    if (!input) {
      return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                              "%s: input %d was handed to a previous "
                              "execution; add the inputs again",
                              loom_eager_op_name(op), i);
    }
    call->inputs[i] = input;
    loom_tensor_metadata_t metadata;
    LOOM_RETURN_IF_ERROR(loom_tensor_handle_wait_metadata(input, &metadata));
    dtypes[i] = metadata.dtype;
    // A function without lists has its inputs' shapes checked before their
    // types; one with lists once the call's attrs lay its inputs out.
    if (!function->has_lists) {
      LOOM_RETURN_IF_ERROR(check_shape(function, i, i, &metadata.shape));
    }
  }
  if (!partitioned) {
    LOOM_RETURN_IF_ERROR(
        loom_op_attrs_merge(&call->attrs, loom_eager_op_attrs(op)));
  }
  LOOM_RETURN_IF_ERROR(
      loom_op_def_complete_attrs(function->signature, dtypes, n, &call->attrs));
  LOOM_RETURN_IF_ERROR(lay_out(call, false, &call->input_starts));
  LOOM_RETURN_IF_ERROR(lay_out(call, true, &call->output_starts));
  for (int32_t a = 0; function->has_lists && a < function->num_inputs; ++a) {
    for (int32_t i = call->input_starts[a]; i < call->input_starts[a + 1];
         ++i) {
      loom_tensor_metadata_t metadata;
      LOOM_RETURN_IF_ERROR(
          loom_tensor_handle_wait_metadata(call->inputs[i], &metadata));
      LOOM_RETURN_IF_ERROR(check_shape(function, a, i, &metadata.shape));
    }
  }
  int32_t count = call->output_starts[function->num_outputs];
  loom_dtype_t* output_dtypes = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &call->arena, sizeof(*output_dtypes) * (size_t)(count + 1),
      (void**)&output_dtypes));
  LOOM_RETURN_IF_ERROR(loom_op_def_flat_types(
      function->signature, &call->attrs, true, output_dtypes, count, &count));
  call->num_results = count;
  *out_output_dtypes = output_dtypes;
  if (partitioned) {
    LOOM_RETURN_IF_ERROR(check_type_list(call, op, "Tin", dtypes, n));
    LOOM_RETURN_IF_ERROR(
        check_type_list(call, op, "Tout", output_dtypes, count));
  }
  return loom_ok_status();
}

// The results: each output's source, retained, checked against its
// dtypes (a list output: a list of the call's length).
static loom_status_t collect(call_t* call, const loom_dtype_t* dtypes,
                             loom_tensor_handle_t** results) {
  loom_function_t* function = call->function;
  int32_t made = 0;
  loom_status_t status = loom_ok_status();
  for (int32_t o = 0; !status && o < function->num_outputs; ++o) {
    char where[192];
    snprintf(where, sizeof(where), "output '%s'", function->outputs[o].name);
    loom_tensor_handle_t** handles = NULL;
    int32_t count = 0;
    bool is_list = false;
    int32_t start = call->output_starts[o];
    int32_t expected = call->output_starts[o + 1] - start;
    const loom__function_arg_t* arg = &function->outputs[o];
    bool list = arg->number_attr || arg->type_list_attr;
    status = resolve_ref(call, &function->sources[o], where, &handles, &count,
                         &is_list);
    if (!status && count != expected) {
      status = loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          list ? "function '%s': %s: '%s' is %d tensors, but the output's "
                 "length is %d in this call"
               : "function '%s': %s: '%s' is %d tensors, not one",
          function->name, where, function->sources[o].text, count, expected);
    }
    for (int32_t k = 0; !status && k < count; ++k) {
      loom_dtype_t dtype = handle_dtype(handles[k]);
      if (dtype != LOOM_DTYPE_INVALID && dtype != dtypes[start + k]) {
        status = loom_make_status(
            LOOM_STATUS_INVALID_ARGUMENT,
            "function '%s': output %d ('%s') has dtype %s, expected %s",
            function->name, start + k, arg->name, loom_dtype_name(dtype),
            loom_dtype_name(dtypes[start + k]));
        break;
      }
      loom_tensor_handle_retain(handles[k]);
      results[made++] = handles[k];
    }
  }
  if (status) {
    for (int32_t i = 0; i < made; ++i) {
      loom_tensor_handle_release(results[i]);
      results[i] = NULL;
    }
  }
  return status;
}

bool loom__function_call_sees_handlers(loom_eager_op_t* op) {
  loom_context_t* context = op->context;
  scope_stack_t* stack = loom__scope_stack(context, false);
  if (loom__scope_stack_top(stack)) return true;
  for (int32_t i = 0; i < op->num_inputs; ++i) {
    loom_tensor_handle_t* input = op->inputs[i];
    loom_op_handler_t* handler =
        input ? loom_tensor_handle_handler(input) : NULL;
    // A device that runs ops itself (a custom device) knows the ops it was
    // written for, not the indicators: it sees the body's ops only.
    if (handler && !loom__is_cpu(context, handler) &&
        !loom_op_handler_vtable(handler)->execute_eager_op) {
      return true;
    }
  }
  return false;
}

loom_status_t loom__function_indicator(loom_eager_op_t* op, const char* op_name,
                                       loom_tensor_handle_t* input,
                                       int64_t index, const char* extra_attr,
                                       int64_t extra_value,
                                       loom_tensor_handle_t** results,
                                       int32_t count) {
  if (loom_tensor_handle_dtype(input) == LOOM_DTYPE_RESOURCE) {
    // A resource handle names a variable, which the body reads: it enters
    // as it is, so that a tape watching the variable sees its reads.
    for (int32_t i = 0; i < count; ++i) {
      loom_tensor_handle_retain(input);
      results[i] = input;
    }
    return loom_ok_status();
  }
  loom_eager_op_t* indicator = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_eager_op_acquire(loom_eager_op_context(op), op_name, &indicator));
  const char* device = loom_eager_op_device(op);
  loom_status_t status = loom_ok_status();
  if (*device) status = loom_eager_op_set_device(indicator, device);
  if (!status && op->cancellation) {
    status = loom_eager_op_set_cancellation(indicator, op->cancellation);
  }
  loom_op_attrs_t* attrs = loom_eager_op_attrs(indicator);
  if (!status) status = loom_op_attrs_set_i64(attrs, "index", index);
  if (!status && extra_attr) {
    status = loom_op_attrs_set_i64(attrs, extra_attr, extra_value);
  }
  if (!status) status = loom_eager_op_add_input(indicator, input);
  int32_t made = 0;
  if (!status) {
    status = loom_eager_op_execute(indicator, results, count, &made);
  }
  if (!status && made != count) {
    status = loom_make_status(LOOM_STATUS_INTERNAL,
                              "%s gave %d results, %d expected", op_name, made,
                              count);
  }
  if (status) {
    for (int32_t i = 0; i < made; ++i) {
      loom_tensor_handle_release(results[i]);
      results[i] = NULL;
    }
  }
  loom_eager_op_recycle(indicator);
  return status;
}

// Passes the inputs through FunctionInput: call->inputs become its results.
static loom_status_t enter_inputs(call_t* call, loom_eager_op_t* op,
                                  int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_t* interior = NULL;
    loom_status_t status = loom__function_indicator(
        op, "FunctionInput", call->inputs[i], i, NULL, 0, &interior, 1);
    if (status) {
      // The inputs before i are ours, the others the op's.
      for (int32_t j = 0; j < i; ++j) {
        loom_tensor_handle_release(call->inputs[j]);
        call->inputs[j] = loom_eager_op_input(op, j);
      }
      return loom_status_annotate(status, "function '%s': input %d",
                                  call->function->name, i);
    }
    call->inputs[i] = interior;
  }
  call->indicators = true;
  return loom_ok_status();
}

// Passes the results through FunctionOutput.
static loom_status_t leave_outputs(call_t* call, loom_eager_op_t* op,
                                   loom_tensor_handle_t** results) {
  int32_t n = call->num_results;
  for (int32_t o = 0; o < n; ++o) {
    loom_tensor_handle_t* exterior = NULL;
    loom_status_t status = loom__function_indicator(
        op, "FunctionOutput", results[o], o, NULL, 0, &exterior, 1);
    if (status) {
      for (int32_t i = 0; i < n; ++i) {
        loom_tensor_handle_release(results[i]);
        results[i] = NULL;
      }
      return loom_status_annotate(status, "function '%s': output %d",
                                  call->function->name, o);
    }
    loom_tensor_handle_release(results[o]);
    results[o] = exterior;
  }
  return loom_ok_status();
}

static loom_status_t run(call_t* call, loom_eager_op_t* op, bool partitioned,
                         loom_tensor_handle_t** results, int32_t capacity,
                         int32_t* out_count) {
  loom_function_t* function = call->function;
  int32_t n = loom_eager_op_num_inputs(op);
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &call->arena, sizeof(*call->inputs) * (size_t)(n + 1),
      (void**)&call->inputs));
  loom_dtype_t* output_dtypes = NULL;
  LOOM_RETURN_IF_ERROR(bind(call, op, partitioned, &output_dtypes));
  if (call->num_results > capacity) {
    // The execute path's words.
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: Expecting %d outputs, but *num_retvals is %d",
                            loom_eager_op_name(op), call->num_results,
                            capacity);
  }
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &call->arena, sizeof(*call->values) * (size_t)(function->num_nodes + 1),
      (void**)&call->values));
  loom_status_t status = loom_ok_status();
  if (!call->planning && loom__function_call_sees_handlers(op)) {
    status = enter_inputs(call, op, n);
  }
  for (int32_t i = 0; !status && i < function->num_nodes; ++i) {
    status = run_node(call, function->order[i]);
  }
  if (!status) status = collect(call, output_dtypes, results);
  if (!status && call->indicators) status = leave_outputs(call, op, results);
  if (!status) *out_count = call->num_results;
  if (!status && call->planning) {
    loom__function_plan_source_t source = {
        .op = op,
        .partitioned = partitioned,
        .inputs = call->inputs,
        .call_attrs = &call->attrs,
        .values = call->values,
        .input_starts = call->input_starts,
        .output_starts = call->output_starts,
        .num_results = call->num_results,
    };
    // Without a plan the next call runs op by op again.
    loom_status_free(
        loom__function_plan_create(function, &source, &call->plan));
  }
  for (int32_t i = 0; i < function->num_nodes; ++i) {
    node_values_t* values = &call->values[i];
    for (int32_t j = 0; j < values->count; ++j) {
      loom_tensor_handle_release(values->handles[j]);
    }
  }
  for (int32_t i = 0; call->indicators && i < n; ++i) {
    loom_tensor_handle_release(call->inputs[i]);
  }
  return status;
}

// The number of tensors a call of `function` by `op` gives: one per output,
// or, with list outputs, their lengths under the call's attrs; -1 when the
// call is wrong (its op-by-op run reports why).
static int32_t result_count(loom_eager_op_t* op, loom_function_t* function,
                            bool partitioned) {
  if (!function->has_lists) return function->num_outputs;
  int32_t n = op->num_inputs;
  loom_dtype_t small[16];
  loom_dtype_t* dtypes = small;
  if (n > 16 &&
      loom_allocator_calloc(loom_allocator_system(),
                            sizeof(*dtypes) * (size_t)n, (void**)&dtypes)) {
    return -1;
  }
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; !status && i < n; ++i) {
    dtypes[i] =
        op->inputs[i] ? handle_dtype(op->inputs[i]) : LOOM_DTYPE_INVALID;
    if (dtypes[i] == LOOM_DTYPE_INVALID) {
      status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "no dtype");
    }
  }
  if (!status && !partitioned) {
    status = loom_op_attrs_merge(&attrs, loom_eager_op_attrs(op));
  }
  if (!status) {
    status = loom_op_def_complete_attrs(function->signature, dtypes, n, &attrs);
  }
  int32_t count = -1;
  if (!status) {
    status = loom_op_def_flat_types(function->signature, &attrs, true, NULL, 0,
                                    &count);
  }
  loom_op_attrs_deinitialize(&attrs);
  if (dtypes != small) loom_allocator_free(loom_allocator_system(), dtypes);
  if (status) {
    loom_status_free(status);
    return -1;
  }
  return count;
}

// The handler a call is offered to as one op (execute_function_call): the
// top of the thread's scopes, when it has the hook and the call is not
// placed explicitly.
static loom_op_handler_t* offered_handler(loom_eager_op_t* op) {
  if (op->device[0]) return NULL;
  scope_stack_t* stack = loom__scope_stack(op->context, false);
  loom_op_handler_t* top = loom__scope_stack_top(stack);
  if (!top || !loom_op_handler_vtable(top)->execute_function_call) return NULL;
  return top;
}

typedef struct offered_run_t {
  loom_eager_op_t* op;
  loom_function_t* function;
  bool partitioned;
  int32_t capacity;
} offered_run_t;

// Runs an offered call op by op, for the handler it was offered to; as a
// call on the CPU (its plan) when the handler runs it in a scope of the
// CPU, beneath itself.
static loom_status_t run_offered(void* state, loom_tensor_handle_t** results) {
  offered_run_t* offered = state;
  if (loom__function_plan_applies(offered->op)) {
    int32_t count = 0;
    return loom__function_call(offered->op, offered->function,
                               offered->partitioned, results, offered->capacity,
                               &count);
  }
  call_t call = {
      .context = loom_eager_op_context(offered->op),
      .function = offered->function,
      .device = loom_eager_op_device(offered->op),
      .cancellation = offered->op->cancellation,
  };
  loom__arena_initialize(&call.arena, loom_allocator_system());
  loom_op_attrs_initialize(&call.attrs, loom_allocator_system());
  int32_t count = 0;
  loom_status_t status = run(&call, offered->op, offered->partitioned, results,
                             offered->capacity, &count);
  loom_op_attrs_deinitialize(&call.attrs);
  loom__arena_deinitialize(&call.arena);
  return status;
}

loom_status_t loom__function_call(loom_eager_op_t* op,
                                  loom_function_t* function, bool partitioned,
                                  loom_tensor_handle_t** results,
                                  int32_t capacity, int32_t* out_count) {
  *out_count = 0;
  if (g_call_depth >= LOOM_FUNCTION_MAX_CALL_DEPTH) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "function '%s': calls nest more than %d deep "
                            "(does a function call itself without end?)",
                            function->name, LOOM_FUNCTION_MAX_CALL_DEPTH);
  }
  loom_context_t* context = loom_eager_op_context(op);
  int32_t results_count = result_count(op, function, partitioned);
  bool planning = results_count >= 0 && results_count <= capacity &&
                  loom__function_plan_applies(op);
  loom__function_plan_t* plan =
      planning ? loom__function_library_take_plan(context, function) : NULL;
  if (plan && loom__function_plan_matches(plan, op, partitioned)) {
    g_call_depth++;
    loom_status_t status = loom__function_plan_run(plan, op, results);
    g_call_depth--;
    loom__function_library_put_plan(context, function, plan);
    atomic_fetch_add_explicit(&function->planned_calls, 1,
                              memory_order_relaxed);
    if (!status) *out_count = results_count;
    return status;
  }
  loom_op_handler_t* handler = planning ? NULL : offered_handler(op);
  if (handler && results_count >= 0 && results_count <= capacity) {
    offered_run_t offered = {
        .op = op,
        .function = function,
        .partitioned = partitioned,
        .capacity = capacity,
    };
    bool taken = false;
    g_call_depth++;
    loom_status_t status =
        loom__function_offer_call(op, function, results_count, handler,
                                  run_offered, &offered, results, &taken);
    g_call_depth--;
    if (status || taken) {
      if (!status) *out_count = results_count;
      return status;
    }
  }
  // A plan for other inputs (or older registries): replaced by the plan of
  // this call when it succeeds, else kept.
  call_t call = {
      .context = context,
      .function = function,
      .device = loom_eager_op_device(op),
      .cancellation = op->cancellation,
      .planning = planning,
  };
  loom__arena_initialize(&call.arena, loom_allocator_system());
  loom_op_attrs_initialize(&call.attrs, loom_allocator_system());
  g_call_depth++;
  loom_status_t status =
      run(&call, op, partitioned, results, capacity, out_count);
  g_call_depth--;
  loom_op_attrs_deinitialize(&call.attrs);
  loom__arena_deinitialize(&call.arena);
  if (call.plan) {
    atomic_fetch_add_explicit(&function->plans_built, 1, memory_order_relaxed);
    atomic_store_explicit(&function->planned_nodes,
                          loom__function_plan_num_nodes(call.plan),
                          memory_order_relaxed);
    loom__function_library_put_plan(context, function, call.plan);
    loom__function_plan_destroy(plan);
  } else if (plan) {
    loom__function_library_put_plan(context, function, plan);
  }
  return status;
}
