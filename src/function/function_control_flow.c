// TensorFlow's functional control flow run eagerly: the condition (or
// branch index) is read on the host, and the function it selects runs as
// an eager op of the calling context, that is op by op through the same
// call machinery as any function call (function_call.c). So the handlers
// around an If see the ops of the branch that ran, and those around a
// While each iteration's condition and body ops: a gradient tape records
// them, a forward accumulator computes their tangents. When handlers see
// the functions' ops, the values entering and leaving them pass through
// the indicator ops of TensorFlow's op-handler design (IfInput / IfOutput,
// CaseInput / CaseOutput, WhileInput / WhileOutput), so that the handlers
// see the boundary. The op definitions are TensorFlow's
// (tensorflow/core/ops/functional_ops.cc).

#include "function/function_control_flow.h"

#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "frontend/eager_op_internal.h"
#include "function/function_call.h"
#include "function/function_capture.h"
#include "function/function_internal.h"
#include "loom/op_signature.h"
#include "loom/tstring.h"

typedef enum kind_t { KIND_IF, KIND_CASE, KIND_WHILE } kind_t;

typedef struct op_spec_t {
  const char* name;
  kind_t kind;
  bool stateful;
} op_spec_t;

static const op_spec_t kOps[] = {
    {.name = "If", .kind = KIND_IF, .stateful = true},
    {.name = "StatelessIf", .kind = KIND_IF, .stateful = false},
    {.name = "Case", .kind = KIND_CASE, .stateful = true},
    {.name = "StatelessCase", .kind = KIND_CASE, .stateful = false},
    {.name = "While", .kind = KIND_WHILE, .stateful = true},
    {.name = "StatelessWhile", .kind = KIND_WHILE, .stateful = false},
};

enum { kNumOps = sizeof(kOps) / sizeof(kOps[0]) };

static const op_spec_t* find_spec(const char* name) {
  for (int32_t i = 0; i < kNumOps; ++i) {
    if (strcmp(kOps[i].name, name) == 0) return &kOps[i];
  }
  return NULL;
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

typedef struct op_text_t {
  const char* inputs[2];
  const char* output;
  const char* attrs[6];
} op_text_t;

static const op_text_t kText[] = {
    [KIND_IF] = {.inputs = {"cond: Tcond", "input: Tin"},
                 .output = "output: Tout",
                 .attrs = {"Tcond: type", "Tin: list(type) >= 0",
                           "Tout: list(type) >= 0", "then_branch: func",
                           "else_branch: func",
                           "output_shapes: list(shape) = []"}},
    [KIND_CASE] = {.inputs = {"branch_index: int32", "input: Tin"},
                   .output = "output: Tout",
                   .attrs = {"Tin: list(type) >= 0", "Tout: list(type) >= 0",
                             "branches: list(func) >= 1",
                             "output_shapes: list(shape) = []"}},
    [KIND_WHILE] = {.inputs = {"input: T"},
                    .output = "output: T",
                    .attrs = {"T: list(type) >= 0", "cond: func", "body: func",
                              "output_shapes: list(shape) = []",
                              "parallel_iterations: int = 10"}},
};

static loom_status_t register_op(loom_op_registry_t* registry,
                                 const op_spec_t* spec) {
  if (loom_op_registry_find(registry, spec->name)) return loom_ok_status();
  const op_text_t* text = &kText[spec->kind];
  loom_op_def_builder_t* builder = NULL;
  LOOM_RETURN_IF_ERROR(loom_op_def_builder_create(loom_allocator_system(),
                                                  spec->name, &builder));
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; !status && i < 2 && text->inputs[i]; ++i) {
    status = loom_op_def_builder_add_input(builder, text->inputs[i]);
  }
  if (!status) status = loom_op_def_builder_add_output(builder, text->output);
  for (int32_t i = 0; !status && i < 6 && text->attrs[i]; ++i) {
    status = loom_op_def_builder_add_attr(builder, text->attrs[i]);
  }
  if (status) {
    loom_op_def_builder_destroy(builder);
    return status;
  }
  loom_op_def_builder_set_is_stateful(builder, spec->stateful);
  status = loom_op_registry_register(registry, builder);
  if (loom_status_code(status) == LOOM_STATUS_ALREADY_EXISTS) {
    loom_status_free(status);  // another thread registered it meanwhile
    status = loom_ok_status();
  }
  return status;
}

loom_status_t loom__control_flow_register(loom_op_registry_t* registry) {
  for (int32_t i = 0; i < kNumOps; ++i) {
    LOOM_RETURN_IF_ERROR(register_op(registry, &kOps[i]));
  }
  return loom_ok_status();
}

bool loom__control_flow_is_op(const loom_op_def_t* def) {
  return def && find_spec(def->name) != NULL;
}

// Whether the handler `cond` lives on sees the op: it cannot give `cond`
// one value, or (`device`) it is a device that runs ops itself.
static bool handler_sees_op(loom_eager_op_t* op, loom_tensor_handle_t* cond,
                            bool device) {
  if (!cond) return false;
  loom_op_handler_t* handler = loom_tensor_handle_handler(cond);
  if (loom__is_cpu(op->context, handler)) return false;
  // A device that runs ops itself holds the condition: it sees the op.
  if (device && loom_op_handler_vtable(handler)->execute_eager_op) return true;
  // A handler whose tensor has one value (forward mode's primal, an
  // unbatched vmap tensor) lets the op read it and run op by op; one
  // without (a batched vmap tensor, parallel components) sees the op. The
  // value may not be computed yet: then it is waited for (copied off).
  loom_tensor_t* value = NULL;
  loom_status_t status = loom_tensor_handle_static_value(cond, &value);
  if (status) {
    loom_status_free(status);
    status = loom_context_resolve(op->context, cond, &value);
  }
  loom_tensor_release(value);
  if (status) {
    loom_status_free(status);
    return true;
  }
  return false;
}

bool loom__control_flow_runs_on_handler(loom_eager_op_t* op) {
  const op_spec_t* spec = find_spec(loom_eager_op_def(op)->name);
  if (!spec || op->device[0] || op->num_inputs < 1) return false;
  // A While's condition is computed from its loop variables: any of them
  // without one value.
  bool loop = spec->kind == KIND_WHILE;
  for (int32_t i = 0; i < (loop ? op->num_inputs : 1); ++i) {
    if (handler_sees_op(op, op->inputs[i], !loop)) return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// One execution
//===----------------------------------------------------------------------===//

typedef struct control_flow_t {
  loom_eager_op_t* op;
  const char* name;  // the op's
  loom_context_t* context;
  loom__arena_t arena;
  loom_op_attrs_t attrs;          // the op's, completed against its definition
  loom_tensor_handle_t** inputs;  // the op's (borrowed)
  int32_t num_inputs;
  loom_dtype_t* output_dtypes;
  int32_t num_outputs;
  loom_shape_t* output_shapes;  // attr output_shapes, or NULL when empty
  bool indicators;              // handlers see the functions' ops
} control_flow_t;

// Checks the inputs and completes the attrs; reads the output types and
// shapes.
static loom_status_t bind(control_flow_t* cf) {
  loom_eager_op_t* op = cf->op;
  int32_t n = loom_eager_op_num_inputs(op);
  loom_dtype_t* dtypes = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &cf->arena, sizeof(*dtypes) * (size_t)(n + 1), (void**)&dtypes));
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &cf->arena, sizeof(*cf->inputs) * (size_t)(n + 1), (void**)&cf->inputs));
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_t* input = loom_eager_op_input(op, i);
    if (!input) {
      return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                              "%s: input %d was handed to a previous "
                              "execution; add the inputs again",
                              cf->name, i);
    }
    cf->inputs[i] = input;
    loom_tensor_metadata_t metadata;
    LOOM_RETURN_IF_ERROR(loom_tensor_handle_wait_metadata(input, &metadata));
    dtypes[i] = metadata.dtype;
  }
  cf->num_inputs = n;
  const loom_op_def_t* def = loom_eager_op_def(op);
  LOOM_RETURN_IF_ERROR(
      loom_op_attrs_merge(&cf->attrs, loom_eager_op_attrs(op)));
  LOOM_RETURN_IF_ERROR(loom_op_def_complete_attrs(def, dtypes, n, &cf->attrs));
  LOOM_RETURN_IF_ERROR(
      loom_op_def_flat_types(def, &cf->attrs, true, NULL, 0, &cf->num_outputs));
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &cf->arena, sizeof(*cf->output_dtypes) * (size_t)(cf->num_outputs + 1),
      (void**)&cf->output_dtypes));
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(loom_op_def_flat_types(
      def, &cf->attrs, true, cf->output_dtypes, cf->num_outputs, &count));
  loom_attr_value_t shapes;
  if (!loom_op_attrs_get(&cf->attrs, "output_shapes", &shapes) ||
      shapes.count == 0) {
    return loom_ok_status();
  }
  if (shapes.count != cf->num_outputs) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: attr 'output_shapes' has %lld shapes, but "
                            "the op has %d outputs",
                            cf->name, (long long)shapes.count, cf->num_outputs);
  }
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &cf->arena, sizeof(*cf->output_shapes) * (size_t)shapes.count,
      (void**)&cf->output_shapes));
  for (int64_t i = 0; i < shapes.count; ++i) {
    loom_attr_value_t element;
    LOOM_RETURN_IF_ERROR(loom_attr_value_list_element(&shapes, i, &element));
    LOOM_RETURN_IF_ERROR(
        loom_attr_value_to_shape(&element, &cf->output_shapes[i]));
  }
  return loom_ok_status();
}

// The name of the function attr `attr` names (element `index` of a list
// attr when index >= 0) into name[0, capacity).
static loom_status_t function_name(const control_flow_t* cf, const char* attr,
                                   int64_t index, char* name, size_t capacity) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(&cf->attrs, attr, &value) ||
      value.kind != LOOM_ATTR_KIND_FUNC || value.is_list != (index >= 0)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: attr '%s' is not set to %s", cf->name, attr,
                            index >= 0 ? "a list of functions" : "a function");
  }
  if (index >= 0) {
    loom_attr_value_t list = value;
    LOOM_RETURN_IF_ERROR(loom_attr_value_list_element(&list, index, &value));
  }
  if (value.u.string.size >= capacity) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: attr '%s': function name of %zu bytes is too "
                            "long",
                            cf->name, attr, value.u.string.size);
  }
  memcpy(name, value.u.string.data, value.u.string.size);
  name[value.u.string.size] = '\0';
  return loom_ok_status();
}

// Checks that function `name` exists and takes `n` inputs and gives
// `count` outputs.
static loom_status_t check_function(const control_flow_t* cf, const char* where,
                                    const char* name, int32_t n, int32_t count,
                                    const char* count_reason) {
  loom_function_t* function = NULL;
  loom_status_t status =
      loom_context_find_function(cf->context, name, &function);
  if (status) {
    loom_status_free(status);
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "%s: %s: function '%s' is not in the context's "
                            "function library",
                            cf->name, where, name);
  }
  // A traced function binds its captures itself: callers pass the rest.
  int32_t inputs = function->num_inputs - loom__function_num_captures(function);
  int32_t outputs = function->num_outputs;
  loom_function_release(function);
  if (inputs != n) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: %s: function '%s' takes %d inputs, but the "
                            "op passes it %d",
                            cf->name, where, name, inputs, n);
  }
  if (outputs != count) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: %s: function '%s' returns %d outputs, "
                            "expected %d (%s)",
                            cf->name, where, name, outputs, count,
                            count_reason);
  }
  return loom_ok_status();
}

static void release_handles(loom_tensor_handle_t** handles, int32_t count) {
  for (int32_t i = 0; i < count; ++i) {
    loom_tensor_handle_release(handles[i]);
    handles[i] = NULL;
  }
}

// Calls function `name` (`where` names the attr that names it) on
// inputs[0, n) as an eager op of the op's context, with the op's device
// and cancellation, into results[0, count) (new references). `dtypes`
// (may be NULL) are the dtypes the results must have, `dtype_source` what
// gives them.
static loom_status_t call_function(control_flow_t* cf, const char* where,
                                   const char* name,
                                   loom_tensor_handle_t* const* inputs,
                                   int32_t n, const loom_dtype_t* dtypes,
                                   const char* dtype_source, int32_t count,
                                   const char* count_reason,
                                   loom_tensor_handle_t** results) {
  LOOM_RETURN_IF_ERROR(check_function(cf, where, name, n, count, count_reason));
  loom_eager_op_t* call = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_acquire(cf->context, name, &call));
  const char* device = loom_eager_op_device(cf->op);
  loom_status_t status = loom_ok_status();
  if (device[0]) status = loom_eager_op_set_device(call, device);
  if (!status && cf->op->cancellation) {
    status = loom_eager_op_set_cancellation(call, cf->op->cancellation);
  }
  for (int32_t i = 0; !status && i < n; ++i) {
    status = loom_eager_op_add_input(call, inputs[i]);
  }
  int32_t made = 0;
  if (!status) status = loom_eager_op_execute(call, results, count, &made);
  loom_eager_op_recycle(call);
  if (status) {
    release_handles(results, made);
    return loom_status_annotate(status, "%s: %s", cf->name, where);
  }
  if (made != count) {
    release_handles(results, made);
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "%s: %s: function '%s' gave %d results, %d "
                            "expected",
                            cf->name, where, name, made, count);
  }
  for (int32_t i = 0; dtypes && i < count; ++i) {
    loom_tensor_metadata_t metadata;
    loom_status_t known =
        loom_tensor_handle_wait_metadata(results[i], &metadata);
    if (known) {
      // An error handle: its error surfaces where the result is used.
      loom_status_free(known);
      continue;
    }
    if (metadata.dtype != dtypes[i]) {
      release_handles(results, count);
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: %s: function '%s' output %d has dtype %s, "
                              "but %s %d is %s",
                              cf->name, where, name, i,
                              loom_dtype_name(metadata.dtype), dtype_source, i,
                              loom_dtype_name(dtypes[i]));
    }
  }
  return loom_ok_status();
}

// The truth of a condition as TensorFlow's functional ops read it: a
// scalar is true when non-zero (a string when non-empty), any other tensor
// when it has elements. `what` names the tensor for messages.
static loom_status_t to_bool(control_flow_t* cf, loom_tensor_handle_t* handle,
                             const char* what, bool* out) {
  loom_tensor_t* tensor = NULL;
  loom_status_t status = loom_context_resolve(cf->context, handle, &tensor);
  if (status) return loom_status_annotate(status, "%s: %s", cf->name, what);
  const loom_shape_t* shape = loom_tensor_shape(tensor);
  if (shape->rank != 0) {
    *out = loom_tensor_num_elements(tensor) > 0;
    loom_tensor_release(tensor);
    return loom_ok_status();
  }
  const void* data = loom_tensor_data(tensor);
  loom_dtype_t dtype = loom_tensor_dtype(tensor);
  status = loom_ok_status();
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      *out = *(const float*)data != 0;
      break;
    case LOOM_DTYPE_DOUBLE:
      *out = *(const double*)data != 0;
      break;
    case LOOM_DTYPE_INT32:
      *out = *(const int32_t*)data != 0;
      break;
    case LOOM_DTYPE_INT64:
      *out = *(const int64_t*)data != 0;
      break;
    case LOOM_DTYPE_INT16:
      *out = *(const int16_t*)data != 0;
      break;
    case LOOM_DTYPE_INT8:
      *out = *(const int8_t*)data != 0;
      break;
    case LOOM_DTYPE_UINT8:
      *out = *(const uint8_t*)data != 0;
      break;
    case LOOM_DTYPE_BOOL:
      *out = *(const bool*)data;
      break;
    case LOOM_DTYPE_STRING:
      *out = loom_tstring_size(loom_tensor_string_at(tensor, 0)) > 0;
      break;
    default:
      // TensorFlow's words after ours.
      status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "%s: %s: %s cannot be converted to a boolean",
                                cf->name, what, loom_dtype_name(dtype));
      break;
  }
  loom_tensor_release(tensor);
  return status;
}

// Passes values[0, n) through indicator `op_name`, each giving `outputs`
// results of which result k goes to outs[k][i] (new references) or, where
// outs[k] is NULL, is dropped. `extra_attr` (may be NULL) = `extra`. On
// error nothing is written.
static loom_status_t mark_inputs(control_flow_t* cf, const char* op_name,
                                 loom_tensor_handle_t* const* values, int32_t n,
                                 int32_t outputs, const char* extra_attr,
                                 int64_t extra, loom_tensor_handle_t*** outs) {
  loom_tensor_handle_t** made = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &cf->arena, sizeof(*made) * (size_t)(outputs + 1), (void**)&made));
  for (int32_t i = 0; i < n; ++i) {
    loom_status_t status = loom__function_indicator(
        cf->op, op_name, values[i], i, extra_attr, extra, made, outputs);
    if (status) {
      for (int32_t k = 0; k < outputs; ++k) {
        if (outs[k]) release_handles(outs[k], i);
      }
      return loom_status_annotate(status, "%s: input %d", cf->name, i);
    }
    for (int32_t k = 0; k < outputs; ++k) {
      if (outs[k]) {
        outs[k][i] = made[k];
      } else {
        loom_tensor_handle_release(made[k]);
      }
    }
  }
  return loom_ok_status();
}

// Passes results[0, n) through indicator `op_name` (one result each), in
// place; on error releases them all.
static loom_status_t mark_outputs(control_flow_t* cf, const char* op_name,
                                  loom_tensor_handle_t** results, int32_t n,
                                  const char* extra_attr, int64_t extra) {
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_t* exterior = NULL;
    loom_status_t status = loom__function_indicator(
        cf->op, op_name, results[i], i, extra_attr, extra, &exterior, 1);
    if (status) {
      release_handles(results, n);
      return loom_status_annotate(status, "%s: output %d", cf->name, i);
    }
    loom_tensor_handle_release(results[i]);
    results[i] = exterior;
  }
  return loom_ok_status();
}

// Calls branch `name` of an If or Case (`branch` of `num_branches`) on the
// op's inputs after the first: through the indicators when handlers see
// it.
static loom_status_t call_branch(control_flow_t* cf, const char* where,
                                 const char* name, int64_t branch,
                                 int64_t num_branches,
                                 loom_tensor_handle_t** results) {
  loom_tensor_handle_t* const* inputs = cf->inputs + 1;
  int32_t n = cf->num_inputs - 1;
  bool is_if = num_branches == 0;
  loom_tensor_handle_t** interiors = NULL;
  if (cf->indicators) {
    LOOM_RETURN_IF_ERROR(loom__arena_allocate(
        &cf->arena, sizeof(*interiors) * (size_t)(n + 1), (void**)&interiors));
    int32_t outputs = is_if ? 2 : (int32_t)num_branches;
    loom_tensor_handle_t*** outs = NULL;
    LOOM_RETURN_IF_ERROR(loom__arena_allocate(
        &cf->arena, sizeof(*outs) * (size_t)(outputs + 1), (void**)&outs));
    memset(outs, 0, sizeof(*outs) * (size_t)outputs);
    outs[branch] = interiors;
    LOOM_RETURN_IF_ERROR(
        mark_inputs(cf, is_if ? "IfInput" : "CaseInput", inputs, n, outputs,
                    is_if ? NULL : "num_branches", num_branches, outs));
    inputs = interiors;
  }
  loom_status_t status = call_function(cf, where, name, inputs, n,
                                       cf->output_dtypes, "attr 'Tout' element",
                                       cf->num_outputs, "attr 'Tout'", results);
  if (interiors) release_handles(interiors, n);
  if (!status && cf->indicators) {
    status = mark_outputs(cf, is_if ? "IfOutput" : "CaseOutput", results,
                          cf->num_outputs, "branch", branch);
  }
  return status;
}

static loom_status_t run_if(control_flow_t* cf,
                            loom_tensor_handle_t** results) {
  bool condition = false;
  LOOM_RETURN_IF_ERROR(
      to_bool(cf, cf->inputs[0], "input 0 ('cond')", &condition));
  const char* attr = condition ? "then_branch" : "else_branch";
  char name[256];
  LOOM_RETURN_IF_ERROR(function_name(cf, attr, -1, name, sizeof(name)));
  char where[64];
  snprintf(where, sizeof(where), "attr '%s'", attr);
  return call_branch(cf, where, name, condition ? 0 : 1, 0, results);
}

static loom_status_t run_case(control_flow_t* cf,
                              loom_tensor_handle_t** results) {
  loom_tensor_t* tensor = NULL;
  loom_status_t status =
      loom_context_resolve(cf->context, cf->inputs[0], &tensor);
  if (status) {
    return loom_status_annotate(status, "%s: input 0 ('branch_index')",
                                cf->name);
  }
  const loom_shape_t* shape = loom_tensor_shape(tensor);
  if (shape->rank != 0) {
    char text[LOOM_SHAPE_FORMAT_MAX];
    loom_shape_format(shape, text, sizeof(text));
    loom_tensor_release(tensor);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: branch_index must be scalar, got shape %s",
                            cf->name, text);
  }
  int32_t index = *(const int32_t*)loom_tensor_data(tensor);
  loom_tensor_release(tensor);
  loom_attr_value_t branches;
  int64_t count =
      loom_op_attrs_get(&cf->attrs, "branches", &branches) ? branches.count : 0;
  // TensorFlow's default branch: the last.
  int64_t branch = index < 0 || index >= count ? count - 1 : index;
  char name[256];
  LOOM_RETURN_IF_ERROR(
      function_name(cf, "branches", branch, name, sizeof(name)));
  char where[64];
  snprintf(where, sizeof(where), "attr 'branches' element %lld",
           (long long)branch);
  return call_branch(cf, where, name, branch, count, results);
}

// Checks the shapes of the body's results against the loop variables'
// (`initial`) or, when set, attr output_shapes.
static loom_status_t check_loop_shapes(const control_flow_t* cf,
                                       const char* body,
                                       const loom_shape_t* initial,
                                       loom_tensor_handle_t** values) {
  for (int32_t i = 0; i < cf->num_inputs; ++i) {
    loom_tensor_metadata_t metadata;
    loom_status_t known =
        loom_tensor_handle_wait_metadata(values[i], &metadata);
    if (known) return loom_status_annotate(known, "%s: attr 'body'", cf->name);
    const loom_shape_t* expected =
        cf->output_shapes ? &cf->output_shapes[i] : &initial[i];
    if (loom_shape_is_compatible(&metadata.shape, expected)) continue;
    char got[LOOM_SHAPE_FORMAT_MAX];
    char want[LOOM_SHAPE_FORMAT_MAX];
    loom_shape_format(&metadata.shape, got, sizeof(got));
    loom_shape_format(expected, want, sizeof(want));
    if (cf->output_shapes) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: attr 'body': function '%s' output %d has "
                              "shape %s, but attr 'output_shapes' element %d "
                              "is %s",
                              cf->name, body, i, got, i, want);
    }
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: attr 'body': function '%s' output %d has "
                            "shape %s, but loop variable %d has shape %s (set "
                            "attr 'output_shapes' to let it change)",
                            cf->name, body, i, got, i, want);
  }
  return loom_ok_status();
}

static loom_status_t run_while(control_flow_t* cf,
                               loom_tensor_handle_t** results) {
  int32_t n = cf->num_inputs;
  char cond[256];
  char body[256];
  LOOM_RETURN_IF_ERROR(function_name(cf, "cond", -1, cond, sizeof(cond)));
  LOOM_RETURN_IF_ERROR(function_name(cf, "body", -1, body, sizeof(body)));
  loom_shape_t* initial = NULL;
  loom_tensor_handle_t** next = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &cf->arena, sizeof(*initial) * (size_t)(n + 1), (void**)&initial));
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &cf->arena, sizeof(*next) * (size_t)(n + 1), (void**)&next));
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_metadata_t metadata;
    LOOM_RETURN_IF_ERROR(
        loom_tensor_handle_wait_metadata(cf->inputs[i], &metadata));
    initial[i] = metadata.shape;
  }
  // The loop variables are held in `results`: the body's values. Through
  // the indicators, the condition first reads WhileInput's other result.
  loom_tensor_handle_t** first_cond = NULL;
  if (cf->indicators) {
    LOOM_RETURN_IF_ERROR(
        loom__arena_allocate(&cf->arena, sizeof(*first_cond) * (size_t)(n + 1),
                             (void**)&first_cond));
    loom_tensor_handle_t** outs[2] = {first_cond, results};
    LOOM_RETURN_IF_ERROR(
        mark_inputs(cf, "WhileInput", cf->inputs, n, 2, NULL, 0, outs));
  } else {
    for (int32_t i = 0; i < n; ++i) {
      results[i] = cf->inputs[i];
      loom_tensor_handle_retain(results[i]);
    }
  }
  loom_cancellation_t* cancellation = cf->op->cancellation;
  loom_status_t status = loom_ok_status();
  for (;;) {
    if (loom_cancellation_is_cancelled(cancellation)) {
      status = loom_cancellation_error(cf->name);
      break;
    }
    loom_tensor_handle_t* predicate = NULL;
    status = call_function(cf, "attr 'cond'", cond,
                           first_cond ? first_cond : results, n, NULL, NULL, 1,
                           "the condition", &predicate);
    if (first_cond) {
      release_handles(first_cond, n);
      first_cond = NULL;
    }
    if (status) break;
    char what[300];
    snprintf(what, sizeof(what), "the output of attr 'cond' (function '%s')",
             cond);
    bool again = false;
    status = to_bool(cf, predicate, what, &again);
    loom_tensor_handle_release(predicate);
    if (status || !again) break;
    status =
        call_function(cf, "attr 'body'", body, results, n, cf->output_dtypes,
                      "loop variable", n, "one per loop variable", next);
    if (status) break;
    status = check_loop_shapes(cf, body, initial, next);
    release_handles(results, n);
    memcpy(results, next, sizeof(*next) * (size_t)n);
    if (status) break;
  }
  if (first_cond) release_handles(first_cond, n);
  if (status) {
    release_handles(results, n);
    return status;
  }
  return cf->indicators ? mark_outputs(cf, "WhileOutput", results, n, NULL, 0)
                        : status;
}

loom_status_t loom__control_flow_execute(loom_eager_op_t* op,
                                         loom_tensor_handle_t** results,
                                         int32_t capacity, int32_t* out_count) {
  *out_count = 0;
  const op_spec_t* spec = find_spec(loom_eager_op_def(op)->name);
  if (!spec) {
    return loom_make_status(LOOM_STATUS_INTERNAL, "%s is not a control flow op",
                            loom_eager_op_name(op));
  }
  control_flow_t cf = {
      .op = op,
      .name = loom_eager_op_name(op),
      .context = loom_eager_op_context(op),
  };
  loom__arena_initialize(&cf.arena, loom_allocator_system());
  loom_op_attrs_initialize(&cf.attrs, loom_allocator_system());
  loom_status_t status = bind(&cf);
  cf.indicators = loom__function_call_sees_handlers(op);
  if (!status && cf.num_outputs > capacity) {
    // The execute path's words.
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: Expecting %d outputs, but *num_retvals is "
                              "%d",
                              cf.name, cf.num_outputs, capacity);
  }
  if (!status) {
    switch (spec->kind) {
      case KIND_IF:
        status = run_if(&cf, results);
        break;
      case KIND_CASE:
        status = run_case(&cf, results);
        break;
      case KIND_WHILE:
        status = run_while(&cf, results);
        break;
    }
  }
  if (!status) *out_count = cf.num_outputs;
  loom_op_attrs_deinitialize(&cf.attrs);
  loom__arena_deinitialize(&cf.arena);
  return status;
}
