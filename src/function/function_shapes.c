// Static shapes of a function body: the nodes in body order, each op's
// shape function run on what is known of its inputs (with resources'
// handle data, so that a variable read has the variable's shape), a node
// calling another function inferred through that function's body.

#include "function/function_shapes.h"

#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "corert/resource_handle_data.h"
#include "function/function_capture.h"
#include "loom/op_signature.h"
#include "loom/runtime.h"

typedef loom__function_static_value_t value_t;

// Nodes inferred per top-level inference at most: calls nesting calls
// multiply the work, which must stay bounded (the rest stays unknown).
enum { kNodeBudget = 1 << 16 };

// One inference, through the calls it follows.
typedef struct infer_state_t {
  loom_context_t* context;
  // The functions being inferred, outermost first: a call of one of them
  // (recursion) is left unknown.
  const loom_function_t* stack[LOOM_FUNCTION_MAX_CALL_DEPTH];
  int32_t depth;
  int64_t budget;
} infer_state_t;

typedef struct node_shapes_t {
  const loom_op_def_t* def;
  int32_t count;    // results, or -1: unknown
  int32_t* starts;  // per output argument, and the end
  value_t* values;  // count
} node_shapes_t;

struct loom__function_shapes_t {
  loom_allocator_t allocator;
  loom__arena_t arena;
  const loom_function_t* function;
  value_t* inputs;       // all the body's inputs, captured ones last
  loom_tensor_t** held;  // the captured values' tensors (retained)
  int32_t num_held;
  node_shapes_t* nodes;
};

static value_t unknown_value(loom_dtype_t dtype) {
  return (value_t){
      .dtype = dtype,
      .shape = loom_shape_unknown(),
      .handle_data = {.dtype = LOOM_DTYPE_INVALID,
                      .shape = loom_shape_unknown()},
  };
}

// `given` refined by `declared` (compatible: checked by the caller).
static loom_shape_t refine(const loom_shape_t* given,
                           const loom_shape_t* declared) {
  if (given->rank < 0) return *declared;
  if (declared->rank < 0 || given->rank > LOOM_MAX_RANK) return *given;
  loom_shape_t out = *given;
  for (int32_t d = 0; d < out.rank; ++d) {
    if (out.dims[d] < 0) out.dims[d] = declared->dims[d];
  }
  return out;
}

static loom_status_t bind_inputs(loom_context_t* context,
                                 loom__function_shapes_t* shapes,
                                 const value_t* inputs, int32_t num_inputs) {
  const loom_function_t* f = shapes->function;
  for (int32_t i = 0; i < num_inputs; ++i) {
    value_t value = inputs[i];
    const loom__function_arg_t* arg = &f->inputs[i];
    if (arg->has_shape) {
      if (!loom_shape_is_compatible(&value.shape, &arg->shape)) {
        char got[128];
        char expected[128];
        loom_shape_format(&value.shape, got, sizeof(got));
        loom_shape_format(&arg->shape, expected, sizeof(expected));
        return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "function '%s': input %d ('%s') has shape %s, "
                                "expected %s",
                                f->name, i, arg->name, got, expected);
      }
      value.shape = refine(&value.shape, &arg->shape);
    }
    shapes->inputs[i] = value;
  }
  int32_t captured = f->num_inputs - num_inputs;
  for (int32_t c = 0; c < captured; ++c) {
    loom_tensor_handle_t* handle = f->captures->handles[c];
    value_t* value = &shapes->inputs[num_inputs + c];
    *value = unknown_value(f->inputs[num_inputs + c].dtype);
    loom_tensor_metadata_t metadata;
    loom_status_t status = loom_tensor_handle_metadata(handle, &metadata);
    if (status) {
      loom_status_free(status);  // not known yet: unknown here
      continue;
    }
    value->dtype = metadata.dtype;
    value->shape = metadata.shape;
    loom_tensor_t* tensor = NULL;
    status = loom_tensor_handle_static_value(handle, &tensor);
    if (status) {
      loom_status_free(status);
      continue;
    }
    shapes->held[shapes->num_held++] = tensor;
    value->tensor = tensor;
    loom_handle_data_t data;
    if (loom__resource_handle_data(tensor, &data)) value->handle_data = data;
  }
  (void)context;
  return loom_ok_status();
}

// The value `ref` designates (one value), or NULL when not known.
static const value_t* resolve(const loom__function_shapes_t* shapes,
                              const loom__function_ref_t* ref,
                              int32_t* out_count) {
  *out_count = 1;
  if (ref->node < 0) return &shapes->inputs[ref->input];
  const node_shapes_t* node = &shapes->nodes[ref->node];
  if (node->count < 0) return NULL;
  int32_t arg = loom_op_def_find_output(node->def, ref->output);
  if (arg < 0) return NULL;
  int32_t start = node->starts[arg];
  int32_t length = node->starts[arg + 1] - start;
  if (ref->index < 0) {
    *out_count = length;
    return node->values + start;
  }
  if (ref->index >= length) return NULL;
  return node->values + start + ref->index;
}

static loom_status_t infer(infer_state_t* state,
                           const loom_function_t* function,
                           const value_t* inputs, int32_t num_inputs,
                           loom__function_shapes_t** out);

// Infers node `index` into shapes->nodes[index]; leaves count -1 when it
// cannot tell.
static loom_status_t infer_node(infer_state_t* state,
                                loom__function_shapes_t* shapes,
                                int32_t index) {
  loom_context_t* context = state->context;
  const loom_function_t* f = shapes->function;
  const loom__function_node_t* node = &f->nodes[index];
  node_shapes_t* out = &shapes->nodes[index];
  // The flattened inputs.
  int32_t n = 0;
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    int32_t count = 0;
    if (!resolve(shapes, &node->inputs[i], &count)) return loom_ok_status();
    n += count;
  }
  value_t* in = NULL;
  loom_dtype_t* dtypes = NULL;
  loom_shape_t* in_shapes = NULL;
  loom_tensor_t** tensors = NULL;
  loom_handle_data_t* handles = NULL;
  size_t slots = (size_t)n + 1;
  LOOM_RETURN_IF_ERROR(
      loom__arena_allocate(&shapes->arena, sizeof(*in) * slots, (void**)&in));
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &shapes->arena, sizeof(*dtypes) * slots, (void**)&dtypes));
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &shapes->arena, sizeof(*in_shapes) * slots, (void**)&in_shapes));
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &shapes->arena, sizeof(*tensors) * slots, (void**)&tensors));
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &shapes->arena, sizeof(*handles) * slots, (void**)&handles));
  int32_t k = 0;
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    int32_t count = 0;
    const value_t* values = resolve(shapes, &node->inputs[i], &count);
    for (int32_t j = 0; j < count; ++j, ++k) {
      in[k] = values[j];
      dtypes[k] = values[j].dtype;
      in_shapes[k] = values[j].shape;
      tensors[k] = values[j].tensor;
      handles[k] = values[j].handle_data;
    }
  }
  // The op, or the function the node calls.
  loom_function_t* callee = NULL;
  out->def = loom_op_registry_find(
      loom_runtime_ops(loom_context_runtime(context)), node->op);
  if (!out->def) {
    if (state->depth >= LOOM_FUNCTION_MAX_CALL_DEPTH) return loom_ok_status();
    loom_status_t status =
        loom_context_find_function(context, node->op, &callee);
    if (status) {
      loom_status_free(status);  // the call reports it
      return loom_ok_status();
    }
    bool recursive = false;
    for (int32_t i = 0; i < state->depth; ++i) {
      recursive = recursive || state->stack[i] == callee;
    }
    if (recursive) {
      loom_function_release(callee);
      return loom_ok_status();
    }
    out->def = loom_function_signature(callee);
  }
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, shapes->allocator);
  int32_t m = 0;
  // The node's results; what fails here fails the call, which says it.
  bool laid_out = node->num_placeholders == 0 &&
                  !loom_op_attrs_merge(&attrs, &node->attrs) &&
                  !loom_op_def_complete_attrs(out->def, dtypes, n, &attrs) &&
                  !loom_op_def_flat_types(out->def, &attrs, true, NULL, 0, &m);
  loom_status_t status = loom_ok_status();
  if (laid_out) {
    status = loom__arena_allocate(
        &shapes->arena, sizeof(int32_t) * (size_t)(out->def->num_outputs + 1),
        (void**)&out->starts);
  }
  for (int32_t a = 0; laid_out && !status && a < out->def->num_outputs; ++a) {
    int32_t stop = 0;
    loom_status_t range =
        loom_op_def_arg_range(out->def, &attrs, true, out->def->outputs[a].name,
                              &out->starts[a], &stop);
    if (range) {
      loom_status_free(range);
      laid_out = false;
    }
  }
  loom_dtype_t* out_dtypes = NULL;
  loom_shape_t* out_shapes = NULL;
  loom_handle_data_t* out_handles = NULL;
  if (laid_out && !status) {
    out->starts[out->def->num_outputs] = m;
    status =
        loom__arena_allocate(&shapes->arena, sizeof(value_t) * ((size_t)m + 1),
                             (void**)&out->values);
  }
  if (laid_out && !status) {
    status = loom__arena_allocate(&shapes->arena,
                                  sizeof(*out_dtypes) * ((size_t)m + 1),
                                  (void**)&out_dtypes);
  }
  if (laid_out && !status) {
    status = loom__arena_allocate(&shapes->arena,
                                  sizeof(*out_shapes) * ((size_t)m + 1),
                                  (void**)&out_shapes);
  }
  if (laid_out && !status) {
    status = loom__arena_allocate(&shapes->arena,
                                  sizeof(*out_handles) * ((size_t)m + 1),
                                  (void**)&out_handles);
  }
  if (laid_out && !status) {
    loom_status_t types =
        loom_op_def_flat_types(out->def, &attrs, true, out_dtypes, m, &m);
    if (types) {
      loom_status_free(types);
      laid_out = false;
    }
  }
  if (laid_out && !status && !callee) {
    status = loom_op_def_infer_shapes_with_handle_data(
        out->def, &attrs, in_shapes, dtypes, tensors, handles, n, out_shapes,
        out_handles, m);
    for (int32_t r = 0; !status && r < m; ++r) {
      out->values[r] = unknown_value(out_dtypes[r]);
      out->values[r].shape = out_shapes[r];
      out->values[r].handle_data = out_handles[r];
    }
    // A constant's value is known: shape functions reading it (Reshape's
    // shape) see it, as they do a captured tensor's.
    loom_attr_value_t value;
    if (!status && m == 1 && strcmp(out->def->name, "Const") == 0 &&
        loom_op_attrs_get(&node->attrs, "value", &value) &&
        value.kind == LOOM_ATTR_KIND_TENSOR && !value.is_list) {
      out->values[0].tensor = value.u.tensor;
    }
  } else if (laid_out && !status) {
    loom__function_shapes_t* inner = NULL;
    status = infer(state, callee, in, n, &inner);
    for (int32_t r = 0; !status && r < m; ++r) {
      // A callee with lists lays its outputs out per call: left unknown.
      out->values[r] = r < callee->num_outputs && !callee->has_lists
                           ? loom__function_shapes_output(inner, r)
                           : unknown_value(out_dtypes[r]);
    }
    loom__function_shapes_destroy(inner);
  }
  loom_op_attrs_deinitialize(&attrs);
  loom_function_release(callee);
  if (status) {
    return loom_status_annotate(status, "function '%s': node '%s' (%s)",
                                f->name, node->name, node->op);
  }
  if (laid_out) out->count = m;
  return loom_ok_status();
}

static loom_status_t infer(infer_state_t* state,
                           const loom_function_t* function,
                           const value_t* inputs, int32_t num_inputs,
                           loom__function_shapes_t** out) {
  loom_context_t* context = state->context;
  *out = NULL;
  loom_allocator_t allocator = loom_allocator_system();
  loom__function_shapes_t* shapes = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*shapes), (void**)&shapes));
  shapes->allocator = allocator;
  shapes->function = function;
  loom__arena_initialize(&shapes->arena, allocator);
  int32_t total = function->num_inputs;
  loom_status_t status = loom__arena_allocate(
      &shapes->arena, sizeof(value_t) * ((size_t)total + 1),
      (void**)&shapes->inputs);
  if (!status) {
    status = loom__arena_allocate(&shapes->arena,
                                  sizeof(loom_tensor_t*) * ((size_t)total + 1),
                                  (void**)&shapes->held);
  }
  if (!status) {
    status = loom__arena_allocate(
        &shapes->arena,
        sizeof(node_shapes_t) * ((size_t)function->num_nodes + 1),
        (void**)&shapes->nodes);
  }
  for (int32_t i = 0; !status && i < function->num_nodes; ++i) {
    shapes->nodes[i].count = -1;
  }
  for (int32_t i = 0; !status && i < total; ++i) {
    shapes->inputs[i] = unknown_value(function->inputs[i].dtype);
  }
  // A function with attrs is typed by each call: left unknown.
  bool inferable = function->signature->num_attrs == 0 && num_inputs >= 0 &&
                   num_inputs <= total &&
                   total - num_inputs == loom__function_num_captures(function);
  if (!status && inferable) {
    status = bind_inputs(context, shapes, inputs, num_inputs);
  }
  state->stack[state->depth++] = function;
  for (int32_t i = 0; !status && inferable && i < function->num_nodes; ++i) {
    // Past the budget, the remaining nodes stay unknown.
    if (state->budget-- <= 0) break;
    status = infer_node(state, shapes, function->order[i]);
  }
  state->depth--;
  if (status) {
    loom__function_shapes_destroy(shapes);
    return status;
  }
  *out = shapes;
  return loom_ok_status();
}

loom_status_t loom__function_shapes_infer(
    loom_context_t* context, const loom_function_t* function,
    const loom__function_static_value_t* inputs, int32_t num_inputs,
    loom__function_shapes_t** out_shapes) {
  infer_state_t* state = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(loom_allocator_system(),
                                             sizeof(*state), (void**)&state));
  state->context = context;
  state->budget = kNodeBudget;
  loom_status_t status = infer(state, function, inputs, num_inputs, out_shapes);
  loom_allocator_free(loom_allocator_system(), state);
  return status;
}

void loom__function_shapes_destroy(loom__function_shapes_t* shapes) {
  if (!shapes) return;
  for (int32_t i = 0; i < shapes->num_held; ++i) {
    loom_tensor_release(shapes->held[i]);
  }
  loom__arena_deinitialize(&shapes->arena);
  loom_allocator_free(shapes->allocator, shapes);
}

int32_t loom__function_shapes_node(const loom__function_shapes_t* shapes,
                                   int32_t node,
                                   const loom__function_static_value_t** out) {
  const node_shapes_t* values = &shapes->nodes[node];
  *out = values->values;
  return values->count;
}

loom__function_static_value_t loom__function_shapes_output(
    const loom__function_shapes_t* shapes, int32_t index) {
  const loom_function_t* f = shapes->function;
  value_t out = unknown_value(f->outputs[index].dtype);
  int32_t count = 0;
  const value_t* value = resolve(shapes, &f->sources[index], &count);
  if (value && count == 1) {
    out.shape = value->shape;
    out.handle_data = value->handle_data;
    if (out.dtype == LOOM_DTYPE_INVALID) out.dtype = value->dtype;
  }
  return out;
}
