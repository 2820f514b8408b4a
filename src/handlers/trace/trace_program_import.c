// A program's function as a function of the eager API
// (loom_trace_program_function, loom/trace.h): the program's corert form
// is interpreted op by op in the scope of a trace, each corert.executeop an
// eager op on symbolic values, so the function recorded is the program's.
// Calls become calls of functions imported the same way; corert.cond,
// corert.while and tfrt.case (on a corert.tensorhandle_to_int32) become
// If, While and Case over imported functions. Chains are dropped: the
// trace orders stateful ops itself.

#include <stdio.h>
#include <string.h>

#include "function/function_internal.h"
#include "function/program_internal.h"
#include "handlers/trace/trace_derived.h"
#include "loom/trace.h"

typedef struct importer_t {
  loom_context_t* context;
  const loom_program_t* program;
  const char* prefix;  // the imported function's name: callees' prefix
  int32_t depth;
} importer_t;

static loom_status_t import_function(importer_t* im,
                                     const program_function_t* function,
                                     const char* name,
                                     const loom_tensor_metadata_t* inputs,
                                     int32_t num_inputs,
                                     loom_function_t** out_function);

static bool is_handle(const program_function_t* f, int32_t value) {
  return f->value_types[value]->kind == PROGRAM_TYPE_TENSOR_HANDLE;
}

static loom_status_t unsupported(const program_function_t* f,
                                 const program_op_t* op, const char* why) {
  return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                          "loom_trace_program_function: function '%s', line "
                          "%d: '%s' %s",
                          f->name, op->location.line, op->name, why);
}

// The tensor-handle operands of `op` from `first` on, as handles of
// values[] (borrowed) into handles[], and their metadata; their count.
static loom_status_t handle_operands(const program_function_t* f,
                                     const program_op_t* op, int32_t first,
                                     loom_tensor_handle_t* const* values,
                                     loom_tensor_handle_t** handles,
                                     loom_tensor_metadata_t* metadata,
                                     int32_t* out_count) {
  int32_t n = 0;
  for (int32_t i = first; i < op->num_operands; ++i) {
    int32_t value = op->operands[i];
    if (!is_handle(f, value)) continue;
    if (!values[value]) {
      return unsupported(f, op, "reads a tensor handle it cannot trace");
    }
    handles[n] = values[value];
    if (metadata) {
      LOOM_RETURN_IF_ERROR(
          loom_tensor_handle_wait_metadata(handles[n], &metadata[n]));
    }
    ++n;
  }
  *out_count = n;
  return loom_ok_status();
}

// Sets the tensor-handle results of `op` from outs[0, count) (moved).
static loom_status_t set_results(const program_function_t* f,
                                 const program_op_t* op,
                                 loom_tensor_handle_t** values,
                                 loom_tensor_handle_t** outs, int32_t count) {
  int32_t k = 0;
  for (int32_t j = 0; j < op->num_results; ++j) {
    int32_t value = op->first_result + j;
    if (!is_handle(f, value)) continue;
    if (k == count) return unsupported(f, op, "gives more tensor handles");
    values[value] = outs[k];
    outs[k++] = NULL;
  }
  return loom_ok_status();
}

// The function named `callee` imported for inputs of `metadata` (a new
// reference).
static loom_status_t import_callee(importer_t* im,
                                   const program_function_t* callee,
                                   const loom_tensor_metadata_t* metadata,
                                   int32_t n, loom_function_t** out) {
  char name[256];
  loom__derived_name(im->context, im->prefix, callee->name, name, sizeof(name));
  return import_function(im, callee, name, metadata, n, out);
}

// Runs eager op `op_name` with `attrs` (may be NULL) on handles[0, n): m
// results into outs.
static loom_status_t run_op(importer_t* im, const char* op_name,
                            const loom_op_attrs_t* attrs,
                            loom_tensor_handle_t* const* handles, int32_t n,
                            loom_tensor_handle_t** outs, int32_t m) {
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(im->context, op_name, &op));
  loom_status_t status = loom_ok_status();
  if (attrs) status = loom_eager_op_add_attrs(op, attrs);
  for (int32_t i = 0; !status && i < n; ++i) {
    status = loom_eager_op_add_input(op, handles[i]);
  }
  int32_t made = 0;
  if (!status) status = loom_eager_op_execute(op, outs, m, &made);
  if (!status && made != m) {
    status =
        loom_make_status(LOOM_STATUS_INTERNAL,
                         "%s gave %d results, %d expected", op_name, made, m);
  }
  loom_eager_op_destroy(op);
  return status;
}

// corert.cond, corert.while or tfrt.case: the control flow op over the
// callees imported for the operands' metadata.
static loom_status_t import_control_flow(
    importer_t* im, const program_function_t* f, const program_op_t* op,
    loom_tensor_handle_t* selector, loom_tensor_handle_t** handles,
    loom_tensor_metadata_t* metadata, int32_t n, loom_tensor_handle_t** outs) {
  bool is_while = strcmp(op->name, "corert.while") == 0;
  bool is_case = strcmp(op->name, "tfrt.case") == 0;
  int32_t count = op->num_callees;
  loom_function_t* fns[64] = {NULL};
  if (count > 64) return unsupported(f, op, "has more than 64 functions");
  loom_status_t status = loom_ok_status();
  bool stateful = false;
  // A loop's values may change shape between iterations: its functions
  // take any.
  for (int32_t i = 0; is_while && i < n; ++i) {
    metadata[i].shape = loom_shape_unknown();
  }
  for (int32_t b = 0; !status && b < count; ++b) {
    status = import_callee(im, op->callees[b], metadata, n, &fns[b]);
    if (!status) stateful |= fns[b]->stateful;
  }
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  // Each output's dtype: a branch's outputs (While: the loop variables').
  const loom_function_t* typed = is_while ? fns[1] : fns[0];
  int32_t m = typed ? typed->num_outputs : 0;
  loom_dtype_t tout[256];
  if (!status && m > 256) status = unsupported(f, op, "gives too many outputs");
  for (int32_t k = 0; !status && k < m; ++k) tout[k] = typed->outputs[k].dtype;
  if (!status && !is_while) {
    status =
        loom_op_attrs_set_list(&attrs, "Tout", LOOM_ATTR_KIND_DTYPE, tout, m);
  }
  if (!status && is_while) {
    // corert.while lets loop values change shape: so does the While.
    loom_shape_t shapes[256];
    for (int32_t k = 0; k < m; ++k) shapes[k] = loom_shape_unknown();
    status = loom_op_attrs_set_shape_list(&attrs, "output_shapes", shapes, m);
  }
  if (!status && is_case) {
    loom_string_view_t views[64];
    for (int32_t b = 0; b < count; ++b) {
      views[b] = (loom_string_view_t){.data = fns[b]->name,
                                      .size = strlen(fns[b]->name)};
    }
    loom_attr_value_t list = {.kind = LOOM_ATTR_KIND_FUNC,
                              .is_list = true,
                              .count = count,
                              .u.list = views};
    status = loom_op_attrs_set_value(&attrs, "branches", &list);
  } else if (!status) {
    static const char* const kIf[2] = {"then_branch", "else_branch"};
    static const char* const kWhile[2] = {"cond", "body"};
    for (int32_t b = 0; !status && b < 2; ++b) {
      const char* attr = is_while ? kWhile[b] : kIf[b];
      status = loom_op_attrs_set_func(&attrs, attr, fns[b]->name,
                                      strlen(fns[b]->name));
    }
  }
  const char* op_name = is_while  ? (stateful ? "While" : "StatelessWhile")
                        : is_case ? (stateful ? "Case" : "StatelessCase")
                                  : (stateful ? "If" : "StatelessIf");
  loom_tensor_handle_t* inputs[257];
  int32_t num = 0;
  if (selector) inputs[num++] = selector;
  for (int32_t i = 0; !status && i < n && num < 257; ++i) {
    inputs[num++] = handles[i];
  }
  if (!status) status = run_op(im, op_name, &attrs, inputs, num, outs, m);
  loom_op_attrs_deinitialize(&attrs);
  for (int32_t b = 0; b < count; ++b) loom_function_release(fns[b]);
  return status;
}

// Interprets `f` on values[0, num_values) (its arguments set) in the
// trace's scope; *outs receive the returned tensor handles.
static loom_status_t interpret(importer_t* im, const program_function_t* f,
                               loom_tensor_handle_t** values,
                               loom_tensor_handle_t** selectors,
                               loom_tensor_handle_t** returned,
                               int32_t* out_returned) {
  loom_tensor_handle_t* handles[256];
  loom_tensor_metadata_t metadata[256];
  loom_tensor_handle_t* outs[256];
  for (int32_t o = 0; o < f->num_ops; ++o) {
    const program_op_t* op = &f->ops[o];
    const char* name = op->name;
    if (op->num_operands > 256 || op->num_results > 256) {
      return unsupported(f, op, "has more than 256 operands or results");
    }
    memset(outs, 0, sizeof(outs));
    int32_t n = 0;
    loom_status_t status = loom_ok_status();
    if (op->is_return) {
      status = handle_operands(f, op, 0, values, returned, NULL, &n);
      for (int32_t k = 0; !status && k < n; ++k) {
        loom_tensor_handle_retain(returned[k]);
      }
      if (!status) *out_returned = n;
      return status;
    }
    if (strcmp(name, "tfrt.new.chain") == 0 ||
        strcmp(name, "corert.get_op_handler") == 0) {
      continue;
    }
    if (strcmp(name, "corert.const_dense_tensor") == 0) {
      loom_attr_value_t value;
      if (!op->attrs || !loom_op_attrs_get(op->attrs, "value", &value) ||
          value.kind != LOOM_ATTR_KIND_TENSOR) {
        return unsupported(f, op, "has no dense value");
      }
      status = loom_context_new_handle(im->context, value.u.tensor, &outs[0]);
      if (!status) status = set_results(f, op, values, outs, 1);
    } else if (strcmp(name, "corert.tensorhandle_to_int32") == 0) {
      // Read by tfrt.case, which takes the handle itself (Case's index).
      selectors[op->first_result] = values[op->operands[0]];
      continue;
    } else if (strcmp(name, "corert.executeop") == 0 ||
               strcmp(name, "corert.executeop.seq") == 0) {
      status = handle_operands(f, op, 0, values, handles, NULL, &n);
      int32_t m = 0;
      for (int32_t j = 0; j < op->num_results; ++j) {
        m += is_handle(f, op->first_result + j);
      }
      if (!status) {
        status = run_op(im, op->execute_name, op->execute_attrs, handles, n,
                        outs, m);
      }
      if (!status) status = set_results(f, op, values, outs, m);
    } else if (strcmp(name, "tfrt.call") == 0) {
      loom_function_t* callee = NULL;
      status = handle_operands(f, op, 0, values, handles, metadata, &n);
      if (!status) {
        status = import_callee(im, op->callees[0], metadata, n, &callee);
      }
      int32_t m = callee ? callee->num_outputs : 0;
      if (!status) {
        status = run_op(im, callee->name, NULL, handles, n, outs, m);
      }
      loom_function_release(callee);
      if (!status) status = set_results(f, op, values, outs, m);
    } else if (strcmp(name, "corert.cond") == 0 ||
               strcmp(name, "corert.while") == 0 ||
               strcmp(name, "tfrt.case") == 0) {
      bool is_if = strcmp(name, "corert.cond") == 0;
      bool is_case = strcmp(name, "tfrt.case") == 0;
      loom_tensor_handle_t* selector = is_if     ? values[op->operands[0]]
                                       : is_case ? selectors[op->operands[0]]
                                                 : NULL;
      if ((is_if || is_case) && !selector) {
        return unsupported(f, op, "has a condition it cannot trace");
      }
      status =
          handle_operands(f, op, is_if ? 1 : 0, values, handles, metadata, &n);
      if (!status) {
        status = import_control_flow(im, f, op, selector, handles, metadata, n,
                                     outs);
      }
      int32_t m = 0;
      for (int32_t j = 0; j < op->num_results; ++j) {
        m += is_handle(f, op->first_result + j);
      }
      if (!status) status = set_results(f, op, values, outs, m);
    } else {
      return unsupported(f, op, "has no eager form");
    }
    for (int32_t k = 0; k < 256; ++k) loom_tensor_handle_release(outs[k]);
    if (status) return status;
  }
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "loom_trace_program_function: function '%s' has no "
                          "return",
                          f->name);
}

static loom_status_t import_function(importer_t* im,
                                     const program_function_t* function,
                                     const char* name,
                                     const loom_tensor_metadata_t* inputs,
                                     int32_t num_inputs,
                                     loom_function_t** out_function) {
  if (im->depth >= LOOM_FUNCTION_MAX_CALL_DEPTH) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "loom_trace_program_function: function '%s': calls "
                            "nest too deep (recursion)",
                            function->name);
  }
  int32_t handles = 0;
  for (int32_t a = 0; a < function->num_arguments; ++a) {
    handles += is_handle(function, a);
  }
  if (handles != num_inputs) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_trace_program_function: function '%s' takes "
                            "%d tensor handles, %d input dtypes given",
                            function->name, handles, num_inputs);
  }
  loom_allocator_t allocator = loom_allocator_system();
  // values and selectors per value; returned
  size_t count = (size_t)(2 * function->num_values + 256) + 1;
  loom_tensor_handle_t** all = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*all) * count, (void**)&all));
  loom_tensor_handle_t** values = all;
  loom_tensor_handle_t** selectors = all + function->num_values;
  loom_tensor_handle_t** returned = selectors + function->num_values;
  int32_t num_returned = 0;
  loom_op_handler_t* trace = NULL;
  loom_status_t status = loom_trace_create(im->context, name, &trace);
  bool entered = false;
  if (!status) {
    status = loom_context_enter_scope(im->context, trace);
    entered = !status;
  }
  for (int32_t a = 0, i = 0; !status && a < function->num_arguments; ++a) {
    if (!is_handle(function, a)) continue;
    status = loom_trace_add_parameter(trace, NULL, inputs[i].dtype,
                                      &inputs[i].shape, &values[a]);
    ++i;
  }
  ++im->depth;
  if (!status) {
    status =
        interpret(im, function, values, selectors, returned, &num_returned);
  }
  --im->depth;
  if (entered) status = loom__derived_exit_scope(im->context, status);
  if (!status) {
    status = loom_trace_finish(trace, returned, num_returned, out_function);
  }
  if (!status) status = loom_context_add_function(im->context, *out_function);
  loom_op_handler_release(trace);
  for (int32_t v = 0; v < function->num_values; ++v) {
    loom_tensor_handle_release(values[v]);
  }
  for (int32_t k = 0; k < num_returned; ++k) {
    loom_tensor_handle_release(returned[k]);
  }
  loom_allocator_free(allocator, all);
  return status;
}

loom_status_t loom_trace_program_function(
    loom_context_t* context, const loom_program_t* program,
    const char* function, const char* name, const loom_dtype_t* dtypes,
    const loom_shape_t* shapes, int32_t num_inputs,
    loom_function_t** out_function) {
  if (!context || !program || !function || !name || !out_function ||
      (num_inputs > 0 && !dtypes) || num_inputs < 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_trace_program_function: %s",
                            !context        ? "context is NULL"
                            : !program      ? "program is NULL"
                            : !function     ? "function is NULL"
                            : !name         ? "name is NULL"
                            : !out_function ? "out_function is NULL"
                                            : "bad input dtypes");
  }
  *out_function = NULL;
  const program_function_t* f =
      loom__program_find_function(program, function, strlen(function));
  if (!f) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "loom_trace_program_function: the program has no "
                            "function '%s'",
                            function);
  }
  loom_tensor_metadata_t* inputs = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      loom_allocator_system(), sizeof(*inputs) * ((size_t)num_inputs + 1),
      (void**)&inputs));
  for (int32_t i = 0; i < num_inputs; ++i) {
    inputs[i].dtype = dtypes[i];
    inputs[i].shape = shapes ? shapes[i] : loom_shape_unknown();
  }
  importer_t im = {.context = context, .program = program, .prefix = name};
  loom_status_t status =
      import_function(&im, f, name, inputs, num_inputs, out_function);
  loom_allocator_free(loom_allocator_system(), inputs);
  return status;
}
