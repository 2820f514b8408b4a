// A called function's plan (function_plan.h): building it from an op-by-op
// call, optimising the body it runs, and running it.

#include <string.h>

#include "function/function_frame.h"
#include "function/function_plan.h"

// A group of a node's inputs: one value, or a whole list argument
// (contiguous slots).
typedef struct plan_input_t {
  int32_t slot;
  int32_t count;
  bool is_list;
} plan_input_t;

typedef struct plan_node_t {
  int32_t node;          // in the function
  loom_eager_op_t* op;   // owned
  plan_input_t* inputs;  // in the plan's arena
  int32_t num_inputs;
  int32_t first;  // its first result slot
  int32_t count;
  bool direct;  // one result, no device: may run from the op's memo
} plan_node_t;

struct loom__function_plan_t {
  loom_context_t* context;
  loom_function_t* function;  // borrowed: the library holds it
  loom__arena_t arena;
  uint64_t generation;
  bool partitioned;
  loom_op_attrs_t op_attrs;  // the call op's, as the key
  int32_t num_inputs;
  loom_tensor_metadata_t* input_metadata;
  loom_tensor_handle_t** values;  // inputs, then each node's results
  int32_t num_values;
  bool* constant;  // per slot: a value the plan keeps (folded)
  plan_node_t* nodes;
  int32_t num_nodes;
  int32_t* outputs;  // a slot per tensor the call gives
  int32_t num_outputs;
  // The body on plain tensors (function_frame.h), or NULL: op by op.
  loom__function_frame_t* frame;
};

static bool same_metadata(const loom_tensor_metadata_t* a,
                          const loom_tensor_metadata_t* b) {
  if (a->dtype != b->dtype || a->shape.rank != b->shape.rank) return false;
  if (a->shape.rank > LOOM_MAX_RANK) {
    return a->shape.spilled == b->shape.spilled;
  }
  for (int32_t i = 0; i < a->shape.rank; ++i) {
    if (a->shape.dims[i] != b->shape.dims[i]) return false;
  }
  return true;
}

bool loom__function_plan_applies(loom_eager_op_t* op) {
  loom_context_t* context = op->context;
  if (op->device[0] || op->cancellation ||
      atomic_load_explicit(&context->log_placement, memory_order_relaxed)) {
    return false;
  }
  // A scope of the CPU itself is as none (a handler that took the call
  // runs it beneath itself so).
  scope_stack_t* stack = loom__scope_stack(context, false);
  loom_op_handler_t* top = loom__scope_stack_top(stack);
  if ((top && top != context->cpu) || loom__thread_async(context, stack)) {
    return false;
  }
  for (int32_t i = 0; i < op->num_inputs; ++i) {
    loom_tensor_handle_t* input = op->inputs[i];
    if (!input || !input->value ||
        !loom__is_cpu(context, loom_tensor_handle_handler(input))) {
      return false;
    }
  }
  return true;
}

// The slots `ref` designates, as an input group; false when the op-by-op
// call could not have resolved it (it then failed).
static bool resolve(const loom__function_plan_source_t* source,
                    const loom_function_t* function, const int32_t* bases,
                    const loom__function_ref_t* ref, plan_input_t* out) {
  if (ref->node < 0) {
    const loom__function_arg_t* arg = &function->inputs[ref->input];
    int32_t start = source->input_starts[ref->input];
    int32_t length = source->input_starts[ref->input + 1] - start;
    bool list = arg->number_attr || arg->type_list_attr;
    if (list && ref->index >= length) return false;
    bool whole = list && ref->index < 0;
    *out = (plan_input_t){
        .slot = start + (list && ref->index > 0 ? ref->index : 0),
        .count = whole ? length : 1,
        .is_list = whole,
    };
    return true;
  }
  const loom__function_node_values_t* values = &source->values[ref->node];
  int32_t arg = loom_op_def_find_output(values->def, ref->output);
  if (arg < 0) return false;
  int32_t start = values->starts[arg];
  int32_t length = values->starts[arg + 1] - start;
  if (ref->index < 0) {
    const loom_arg_def_t* def = &values->def->outputs[arg];
    *out = (plan_input_t){
        .slot = bases[ref->node] + start,
        .count = length,
        .is_list = def->number_attr || def->type_list_attr,
    };
    return true;
  }
  if (ref->index >= length) return false;
  *out = (plan_input_t){
      .slot = bases[ref->node] + start + ref->index,
      .count = 1,
      .is_list = false,
  };
  return true;
}

static bool node_is_stateful(const loom__function_plan_source_t* source,
                             const loom_function_t* function, int32_t node) {
  const loom_op_def_t* def = source->values[node].def;
  // A call of another function may hold stateful ops whatever its flag.
  return def->is_stateful || loom_context_has_function(
                                 source->op->context, function->nodes[node].op);
}

// Marks the nodes that reach an output or a stateful node (live[]), and
// those whose inputs also do through control inputs.
static void mark_live(const loom_function_t* function,
                      const loom__function_plan_source_t* source, bool* live) {
  for (int32_t o = 0; o < function->num_outputs; ++o) {
    if (function->sources[o].node >= 0) live[function->sources[o].node] = true;
  }
  for (int32_t i = 0; i < function->num_nodes; ++i) {
    if (node_is_stateful(source, function, i)) live[i] = true;
  }
  for (int32_t i = 0; i < function->num_control_outputs; ++i) {
    live[function->control_outputs[i].node] = true;
  }
  // The order runs inputs first: walking it backwards sees each node after
  // every node that reads it.
  for (int32_t k = function->num_nodes - 1; k >= 0; --k) {
    int32_t i = function->order[k];
    if (!live[i]) continue;
    const loom__function_node_t* node = &function->nodes[i];
    for (int32_t j = 0; j < node->num_inputs; ++j) {
      if (node->inputs[j].node >= 0) live[node->inputs[j].node] = true;
    }
    for (int32_t j = 0; j < node->num_controls; ++j) {
      live[node->controls[j]] = true;
    }
  }
}

static bool same_inputs(const plan_input_t* a, int32_t num_a,
                        const plan_input_t* b, int32_t num_b) {
  if (num_a != num_b) return false;
  for (int32_t i = 0; i < num_a; ++i) {
    if (a[i].slot != b[i].slot || a[i].count != b[i].count ||
        a[i].is_list != b[i].is_list) {
      return false;
    }
  }
  return true;
}

// The earlier plan node identical to `candidate` (same op, device, attrs
// and inputs, both stateless without control inputs), or NULL.
static const plan_node_t* find_twin(const loom__function_plan_t* plan,
                                    const plan_node_t* candidate) {
  const loom_function_t* function = plan->function;
  const loom__function_node_t* node = &function->nodes[candidate->node];
  for (int32_t k = 0; k < plan->num_nodes; ++k) {
    const plan_node_t* other = &plan->nodes[k];
    const loom__function_node_t* other_node = &function->nodes[other->node];
    if (other->count == candidate->count && other_node->num_controls == 0 &&
        strcmp(other_node->op, node->op) == 0 &&
        strcmp(other->op->device, candidate->op->device) == 0 &&
        same_inputs(other->inputs, other->num_inputs, candidate->inputs,
                    candidate->num_inputs) &&
        loom_op_attrs_equal(&other->op->attrs, &candidate->op->attrs)) {
      return other;
    }
  }
  return NULL;
}

// Makes the eager op of a node: its op, device and attrs (placeholders
// resolved).
static loom_status_t make_op(const loom__function_plan_t* plan,
                             const loom__function_plan_source_t* source,
                             int32_t index, loom_eager_op_t** out_op) {
  const loom__function_node_t* node = &plan->function->nodes[index];
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(plan->context, node->op, &op));
  loom_status_t status = loom_ok_status();
  if (node->device[0]) status = loom_eager_op_set_device(op, node->device);
  if (!status) status = loom_eager_op_add_attrs(op, &node->attrs);
  for (int32_t p = 0; !status && p < node->num_placeholders; ++p) {
    const loom__function_placeholder_t* placeholder = &node->placeholders[p];
    loom_attr_value_t value;
    if (!loom_op_attrs_get(source->call_attrs, placeholder->placeholder,
                           &value)) {
      status = loom_make_status(LOOM_STATUS_INTERNAL, "placeholder '%s' unset",
                                placeholder->placeholder);
      break;
    }
    status = loom_op_attrs_set_value(&op->attrs, placeholder->attr, &value);
  }
  if (status) {
    loom_eager_op_destroy(op);
    return status;
  }
  *out_op = op;
  return loom_ok_status();
}

// Whether every input group reads values the plan keeps (so the node is a
// constant too); a node without inputs is one when it is a Const.
static bool reads_constants(const loom__function_plan_t* plan,
                            const loom__function_node_t* node,
                            const plan_input_t* inputs, int32_t num_inputs) {
  if (num_inputs == 0) return strcmp(node->op, "Const") == 0;
  for (int32_t i = 0; i < num_inputs; ++i) {
    for (int32_t j = 0; j < inputs[i].count; ++j) {
      if (!plan->constant[inputs[i].slot + j]) return false;
    }
  }
  return true;
}

static loom_status_t add_nodes(loom__function_plan_t* plan,
                               const loom__function_plan_source_t* source,
                               int32_t* bases, const bool* live) {
  const loom_function_t* function = plan->function;
  for (int32_t k = 0; k < function->num_nodes; ++k) {
    int32_t index = function->order[k];
    if (!live[index]) continue;
    const loom__function_node_t* node = &function->nodes[index];
    const loom__function_node_values_t* values = &source->values[index];
    plan_node_t* entry = &plan->nodes[plan->num_nodes];
    *entry = (plan_node_t){
        .node = index,
        .first = bases[index],
        .count = values->count,
    };
    LOOM_RETURN_IF_ERROR(loom__arena_allocate(
        &plan->arena, sizeof(*entry->inputs) * (size_t)(node->num_inputs + 1),
        (void**)&entry->inputs));
    for (int32_t i = 0; i < node->num_inputs; ++i) {
      if (!resolve(source, function, bases, &node->inputs[i],
                   &entry->inputs[i])) {
        return loom_make_status(LOOM_STATUS_INTERNAL,
                                "node '%s': unresolved input", node->name);
      }
    }
    entry->num_inputs = node->num_inputs;
    bool stateful = node_is_stateful(source, function, index);
    if (!stateful &&
        reads_constants(plan, node, entry->inputs, entry->num_inputs)) {
      // Folded: the op-by-op call's results are the node's values.
      for (int32_t j = 0; j < values->count; ++j) {
        loom_tensor_handle_retain(values->handles[j]);
        plan->values[entry->first + j] = values->handles[j];
        plan->constant[entry->first + j] = true;
      }
      continue;
    }
    LOOM_RETURN_IF_ERROR(make_op(plan, source, index, &entry->op));
    const plan_node_t* twin =
        stateful || node->num_controls ? NULL : find_twin(plan, entry);
    if (twin) {
      // Its readers read the twin's results (later nodes resolve through
      // bases[]).
      bases[index] = twin->first;
      loom_eager_op_destroy(entry->op);
      entry->op = NULL;
      continue;
    }
    entry->direct = values->count == 1 && !entry->op->device[0] &&
                    entry->op->output_count == 1;
    plan->num_nodes++;
  }
  return loom_ok_status();
}

static loom_status_t build(loom__function_plan_t* plan,
                           const loom__function_plan_source_t* source) {
  loom_function_t* function = plan->function;
  loom_eager_op_t* op = source->op;
  int32_t n = op->num_inputs;
  LOOM_RETURN_IF_ERROR(loom_op_attrs_merge(&plan->op_attrs, &op->attrs));
  plan->num_inputs = op->num_inputs;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &plan->arena,
      sizeof(*plan->input_metadata) * (size_t)(op->num_inputs + 1),
      (void**)&plan->input_metadata));
  for (int32_t i = 0; i < op->num_inputs; ++i) {
    LOOM_RETURN_IF_ERROR(loom_tensor_handle_wait_metadata(
        op->inputs[i], &plan->input_metadata[i]));
  }
  int32_t* bases = NULL;
  bool* live = NULL;
  size_t nodes = (size_t)function->num_nodes + 1;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &plan->arena, sizeof(*bases) * nodes, (void**)&bases));
  LOOM_RETURN_IF_ERROR(
      loom__arena_allocate(&plan->arena, sizeof(*live) * nodes, (void**)&live));
  memset(live, 0, sizeof(*live) * nodes);
  int32_t slots = n;
  for (int32_t i = 0; i < function->num_nodes; ++i) {
    bases[i] = slots;
    slots += source->values[i].count;
  }
  plan->num_values = slots;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &plan->arena, sizeof(*plan->values) * (size_t)(slots + 1),
      (void**)&plan->values));
  memset(plan->values, 0, sizeof(*plan->values) * (size_t)(slots + 1));
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &plan->arena, sizeof(*plan->constant) * (size_t)(slots + 1),
      (void**)&plan->constant));
  memset(plan->constant, 0, sizeof(*plan->constant) * (size_t)(slots + 1));
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &plan->arena, sizeof(*plan->nodes) * nodes, (void**)&plan->nodes));
  mark_live(function, source, live);
  LOOM_RETURN_IF_ERROR(add_nodes(plan, source, bases, live));
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &plan->arena, sizeof(*plan->outputs) * (size_t)(source->num_results + 1),
      (void**)&plan->outputs));
  for (int32_t o = 0; o < function->num_outputs; ++o) {
    plan_input_t slot;
    int32_t start = source->output_starts[o];
    if (!resolve(source, function, bases, &function->sources[o], &slot) ||
        slot.count != source->output_starts[o + 1] - start) {
      return loom_make_status(LOOM_STATUS_INTERNAL, "output %d unresolved", o);
    }
    for (int32_t k = 0; k < slot.count; ++k) {
      plan->outputs[start + k] = slot.slot + k;
    }
  }
  plan->num_outputs = source->num_results;
  return loom_ok_status();
}

static loom_status_t run_node(loom__function_plan_t* plan,
                              const plan_node_t* node);

// A frame's eager node k (function_frame.h): run by the plan on
// plan->values, which the frame fills for its inputs.
static loom_status_t run_eager_node(void* state, int32_t k) {
  loom__function_plan_t* plan = state;
  return run_node(plan, &plan->nodes[k]);
}

// The frame of the plan: its nodes with their inputs flattened into
// slots, and each slot's metadata in the op-by-op call. Leaves plan->frame
// NULL when a value's metadata is not known or a node cannot run there.
static loom_status_t build_frame(loom__function_plan_t* plan,
                                 const loom__function_plan_source_t* source) {
  loom_function_t* function = plan->function;
  if (plan->num_inputs != source->input_starts[function->num_inputs]) {
    return loom_ok_status();
  }
  size_t slots = (size_t)plan->num_values + 1;
  loom_tensor_metadata_t* metadata = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &plan->arena, sizeof(*metadata) * slots, (void**)&metadata));
  memset(metadata, 0, sizeof(*metadata) * slots);
  for (int32_t i = 0; i < plan->num_inputs; ++i) {
    metadata[i] = plan->input_metadata[i];
  }
  int32_t slot = plan->num_inputs;
  for (int32_t i = 0; i < function->num_nodes; ++i) {
    const loom__function_node_values_t* values = &source->values[i];
    for (int32_t j = 0; j < values->count; ++j, ++slot) {
      loom_status_t status =
          loom_tensor_handle_wait_metadata(values->handles[j], &metadata[slot]);
      if (status) {
        loom_status_free(status);
        return loom_ok_status();
      }
    }
  }
  loom_tensor_handle_t** constants = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &plan->arena, sizeof(*constants) * slots, (void**)&constants));
  for (int32_t s = 0; s < plan->num_values; ++s) {
    constants[s] = plan->constant[s] ? plan->values[s] : NULL;
  }
  loom__function_frame_node_desc_t* nodes = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &plan->arena, sizeof(*nodes) * (size_t)(plan->num_nodes + 1),
      (void**)&nodes));
  for (int32_t k = 0; k < plan->num_nodes; ++k) {
    const plan_node_t* node = &plan->nodes[k];
    int32_t count = 0;
    for (int32_t i = 0; i < node->num_inputs; ++i) {
      count += node->inputs[i].count;
    }
    int32_t* flat = NULL;
    LOOM_RETURN_IF_ERROR(loom__arena_allocate(
        &plan->arena, sizeof(*flat) * (size_t)(count + 1), (void**)&flat));
    int32_t at = 0;
    for (int32_t i = 0; i < node->num_inputs; ++i) {
      for (int32_t j = 0; j < node->inputs[i].count; ++j) {
        flat[at++] = node->inputs[i].slot + j;
      }
    }
    nodes[k] = (loom__function_frame_node_desc_t){
        .op = node->op,
        .name = function->nodes[node->node].name,
        .slots = flat,
        .num_slots = count,
        .first = node->first,
        .count = node->count,
    };
  }
  loom__function_frame_desc_t desc = {
      .run_eager = run_eager_node,
      .eager_state = plan,
      .values = plan->values,
      .context = plan->context,
      .function = function->name,
      .num_inputs = plan->num_inputs,
      .num_values = plan->num_values,
      .metadata = metadata,
      .constants = constants,
      .nodes = nodes,
      .num_nodes = plan->num_nodes,
      .outputs = plan->outputs,
      .num_outputs = plan->num_outputs,
  };
  return loom__function_frame_create(&desc, &plan->frame);
}

loom_status_t loom__function_plan_create(
    loom_function_t* function, const loom__function_plan_source_t* source,
    loom__function_plan_t** out_plan) {
  *out_plan = NULL;
  loom_context_t* context = source->op->context;
  loom__function_plan_t* plan = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(context->allocator, sizeof(*plan), (void**)&plan));
  plan->context = context;
  plan->function = function;
  plan->generation = loom__registry_generation();
  plan->partitioned = source->partitioned;
  loom__arena_initialize(&plan->arena, context->allocator);
  loom_op_attrs_initialize(&plan->op_attrs, context->allocator);
  loom_status_t status = build(plan, source);
  if (!status) status = build_frame(plan, source);
  if (status) {
    loom__function_plan_destroy(plan);
    return status;
  }
  *out_plan = plan;
  return loom_ok_status();
}

void loom__function_plan_destroy(loom__function_plan_t* plan) {
  if (!plan) return;
  loom__function_frame_destroy(plan->frame);
  for (int32_t i = 0; i < plan->num_nodes; ++i) {
    loom_eager_op_destroy(plan->nodes[i].op);
  }
  if (plan->values) {
    for (int32_t i = 0; i < plan->num_values; ++i) {
      if (plan->constant[i]) loom_tensor_handle_release(plan->values[i]);
    }
  }
  loom_op_attrs_deinitialize(&plan->op_attrs);
  loom__arena_deinitialize(&plan->arena);
  loom_allocator_free(plan->context->allocator, plan);
}

bool loom__function_plan_matches(const loom__function_plan_t* plan,
                                 loom_eager_op_t* op, bool partitioned) {
  if (plan->context != op->context || plan->partitioned != partitioned ||
      plan->generation != loom__registry_generation() ||
      plan->num_inputs != op->num_inputs ||
      !loom_op_attrs_equal(&plan->op_attrs, &op->attrs)) {
    return false;
  }
  for (int32_t i = 0; i < op->num_inputs; ++i) {
    loom_tensor_handle_t* input = op->inputs[i];
    loom_tensor_metadata_t metadata;
    if (input->metadata_available) {
      if (!same_metadata(&input->metadata, &plan->input_metadata[i])) {
        return false;
      }
      continue;
    }
    loom_status_t status = loom_tensor_handle_wait_metadata(input, &metadata);
    if (status) {
      loom_status_free(status);
      return false;
    }
    if (!same_metadata(&metadata, &plan->input_metadata[i])) return false;
  }
  return true;
}

int32_t loom__function_plan_num_nodes(const loom__function_plan_t* plan) {
  return plan ? plan->num_nodes : 0;
}

int32_t loom__function_plan_num_results(const loom__function_plan_t* plan) {
  return plan ? plan->num_outputs : 0;
}

static void clear_op_inputs(loom_eager_op_t* op) {
  for (int32_t i = 0; i < op->num_inputs; ++i) {
    loom_tensor_handle_release(op->inputs[i]);
  }
  op->num_inputs = 0;
  op->num_consumed = 0;
}

static loom_status_t add_inputs(loom__function_plan_t* plan,
                                const plan_node_t* node) {
  loom_eager_op_t* op = node->op;
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    const plan_input_t* input = &node->inputs[i];
    loom_tensor_handle_t** handles = plan->values + input->slot;
    if (input->is_list) {
      LOOM_RETURN_IF_ERROR(
          loom_eager_op_add_input_list(op, handles, input->count));
      continue;
    }
    if (LOOM_LIKELY(op->num_inputs < op->inputs_capacity)) {
      loom_tensor_handle_retain(handles[0]);
      op->inputs[op->num_inputs++] = handles[0];
      continue;
    }
    LOOM_RETURN_IF_ERROR(loom_eager_op_add_input(op, handles[0]));
  }
  return loom_ok_status();
}

// Whether `node` may go straight to the CPU handler with its inputs lent
// (what loom_eager_op_execute does for it after placing it): prepared on
// the CPU by an earlier execution, results to hold its errors, every input
// on the CPU and held elsewhere too.
static bool runs_lent(const loom__function_plan_t* plan,
                      const plan_node_t* node) {
  const loom_eager_op_t* op = node->op;
  loom_context_t* context = plan->context;
  if (node->count == 0 || !op->prepared ||
      op->prepared_handler != context->cpu ||
      op->generation != plan->generation || op->device[0] ||
      op->output_count != node->count) {
    return false;
  }
  for (int32_t i = 0; i < op->num_inputs; ++i) {
    loom_tensor_handle_t* input = op->inputs[i];
    if (!loom__is_cpu(context, loom_tensor_handle_handler(input)) ||
        loom_tensor_handle_is_unique(input)) {
      return false;
    }
  }
  return true;
}

// Runs `node` on the CPU handler with its inputs lent (runs_lent); a
// kernel's error is the status, as in a synchronous eager execution.
static loom_status_t execute_lent(loom__function_plan_t* plan,
                                  const plan_node_t* node,
                                  loom_tensor_handle_t** results,
                                  int32_t* out_made) {
  loom_eager_op_t* op = node->op;
  loom_location_t location = {0};
  loom_op_invocation_t invocation = {
      .op = op->prepared,
      .location = location,
      .arguments = op->inputs,
      .num_arguments = op->num_inputs,
      .attrs = &op->attrs,
      .results = results,
      .num_results = node->count,
  };
  bool memoizable = node->direct && op->num_inputs <= kCpuMemoMaxInputs;
  loom_status_t status =
      loom__runtime_execute_lent(&invocation, memoizable ? &op->memo : NULL);
  for (int32_t i = 0; !status && i < node->count; ++i) {
    loom_async_value_t* value = loom_tensor_handle_value(results[i]);
    if (value && LOOM_UNLIKELY(loom_async_value_is_error(value))) {
      status = loom_status_clone(loom_async_value_error(value));
    }
  }
  if (status) {
    for (int32_t i = 0; i < node->count; ++i) {
      loom_tensor_handle_release(results[i]);
      results[i] = NULL;
    }
    return status;
  }
  *out_made = node->count;
  return loom_ok_status();
}

static loom_status_t run_node(loom__function_plan_t* plan,
                              const plan_node_t* node) {
  loom_eager_op_t* op = node->op;
  loom_tensor_handle_t** results = plan->values + node->first;
  loom_status_t status = add_inputs(plan, node);
  int32_t made = 0;
  if (!status && node->direct && op->memo.prepared &&
      op->num_inputs == op->memo.num_inputs &&
      op->generation == plan->generation &&
      loom__cpu_execute_memo(&op->memo, op->inputs, &op->attrs, results)) {
    made = 1;
  } else if (!status && runs_lent(plan, node)) {
    memset(results, 0, sizeof(*results) * (size_t)node->count);
    status = execute_lent(plan, node, results, &made);
  } else if (!status) {
    status = loom_eager_op_execute(op, results, node->count, &made);
    if (!status && made != node->count) {
      status = loom_make_status(LOOM_STATUS_INTERNAL,
                                "op '%s' gave %d results, %d expected",
                                op->name, made, node->count);
    }
  }
  clear_op_inputs(op);
  if (status) {
    for (int32_t i = 0; i < made; ++i) {
      loom_tensor_handle_release(results[i]);
      results[i] = NULL;
    }
    const loom__function_node_t* body = &plan->function->nodes[node->node];
    if (!op->calls_function) {
      status = loom_status_annotate(status, "function '%s': node '%s' (%s)",
                                    plan->function->name, body->name, body->op);
    }
  }
  return status;
}

loom_status_t loom__function_plan_run(loom__function_plan_t* plan,
                                      loom_eager_op_t* op,
                                      loom_tensor_handle_t** results) {
  loom_function_t* function = plan->function;
  if (plan->frame) {
    loom__function_frame_counts_t counts = {0, 0};
    bool ran = false;
    loom_status_t status = loom__function_frame_run(plan->frame, op->inputs,
                                                    results, &counts, &ran);
    if (ran) {
      atomic_fetch_add_explicit(&function->frame_calls, 1,
                                memory_order_relaxed);
      atomic_fetch_add_explicit(&function->buffers_reused, counts.reused,
                                memory_order_relaxed);
      atomic_fetch_add_explicit(&function->buffers_allocated, counts.allocated,
                                memory_order_relaxed);
      return status;
    }
  }
  for (int32_t i = 0; i < op->num_inputs; ++i) {
    plan->values[i] = op->inputs[i];  // borrowed for the call
  }
  int32_t ran = 0;
  loom_status_t status = loom_ok_status();
  for (; ran < plan->num_nodes; ++ran) {
    status = run_node(plan, &plan->nodes[ran]);
    if (status) break;
  }
  if (!status) {
    for (int32_t o = 0; o < plan->num_outputs; ++o) {
      loom_tensor_handle_t* value = plan->values[plan->outputs[o]];
      loom_tensor_handle_retain(value);
      results[o] = value;
    }
  }
  for (int32_t k = 0; k < ran; ++k) {
    const plan_node_t* node = &plan->nodes[k];
    for (int32_t j = 0; j < node->count; ++j) {
      loom_tensor_handle_release(plan->values[node->first + j]);
      plan->values[node->first + j] = NULL;
    }
  }
  for (int32_t i = 0; i < op->num_inputs; ++i) plan->values[i] = NULL;
  return status;
}
