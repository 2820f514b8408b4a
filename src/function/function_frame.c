// A plan's frame (function_frame.h): specialising a body's kernels for one
// call signature, planning where its values' buffers come from, and running
// it on host tensors.

#include "function/function_frame.h"

#include <string.h>

#include "corert/cpu_op_handler_internal.h"
#include "host/async_value_internal.h"
#include "registry/kernel_context.h"

enum {
  // Inputs and outputs of a node handled on the stack (larger nodes have
  // no frame).
  kFrameMaxArity = 16,
  kNoClass = -1,
};

typedef struct frame_node_t {
  loom_prepared_op_t* prepared;  // retained: holds the cpu op
  const cpu_op_t* cpu_op;
  cpu_kernel_spec_t* spec;  // the op's cache's, or owned (spec_owned)
  bool spec_owned;
  const char* name;  // the body node's
  const char* op_name;
  int32_t* inputs;  // slots
  int32_t num_inputs;
  loom_tensor_t** args;  // their tensors, during a call
  uint64_t owned;        // inputs whose value dies here: the kernel may forward
  int32_t* dying;        // slots whose value dies after this node
  int32_t num_dying;
  int32_t first;  // result slots
  int32_t count;
  // Run as the plan's eager op (the frame cannot run its kernel itself).
  bool eager;
  // The result's metadata when the op's metadata function fixes it from
  // the inputs' (a one-result kernel with a direct entry then runs that,
  // with `call` made once: only its `into` changes from call to call).
  bool direct;
  loom_tensor_metadata_t output;
  int64_t output_elements;
  loom__kernel_direct_call_t call;
} frame_node_t;

struct loom__function_frame_t {
  loom_allocator_t allocator;
  loom_runtime_t* runtime;
  loom_op_handler_t* cpu;
  const char* function;  // borrowed: the function outlives its plans
  loom__arena_t arena;
  int32_t num_inputs;
  int32_t num_values;
  loom_tensor_t** tensors;  // per slot, during a call; constants always
  bool* borrowed;           // per slot: an input's or a constant's tensor
  frame_node_t* nodes;
  int32_t num_nodes;
  int32_t* outputs;
  int32_t num_outputs;
  loom_tensor_handle_t** constants;  // per slot, borrowed from the plan
  // Eager nodes (function_frame.h): how the plan runs one, and its value
  // handles, which the frame fills for the node's inputs.
  loom_status_t (*run_eager)(void* state, int32_t k);
  void* eager_state;
  loom_tensor_handle_t** values;
  loom_tensor_handle_t* const* call_inputs;  // during a call
  // Tensors of dead values kept for later values of the same dtype and
  // shape: class_of[slot] (kNoClass: none) c holds pool[start[c], start[c]
  // + top[c]), room for size[c] (its slots; what comes beyond is freed).
  int32_t* class_of;
  int32_t* class_start;
  int32_t* class_size;
  int32_t* class_top;
  int32_t num_classes;
  loom_tensor_t** pool;  // one reference each
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

static loom_status_t allocate(loom__function_frame_t* frame, size_t size,
                              void** out_ptr) {
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(&frame->arena, size, out_ptr));
  memset(*out_ptr, 0, size);
  return loom_ok_status();
}

// Specialises the kernel of `desc`'s op for its inputs' metadata. Returns
// false (status OK) when the node cannot run in a frame at all (an op
// placed on a device); a node whose kernel the frame cannot run itself is
// an eager node.
static loom_status_t specialise(loom__function_frame_t* frame,
                                const loom__function_frame_desc_t* whole,
                                const loom__function_frame_node_desc_t* desc,
                                frame_node_t* node, bool* out_ok) {
  *out_ok = false;
  loom_eager_op_t* op = desc->op;
  if (op->device[0]) return loom_ok_status();
  *out_ok = true;
  node->eager = true;
  if (op->calls_function || !op->def || desc->num_slots > kFrameMaxArity ||
      desc->count > kFrameMaxArity) {
    return loom_ok_status();
  }
  LOOM_RETURN_IF_ERROR(loom_runtime_prepare_op_shared(
      frame->runtime, op->name, frame->cpu, &node->prepared));
  if (node->prepared->handler != frame->cpu) return loom_ok_status();
  const cpu_op_t* cpu_op = node->prepared->data;
  if (!cpu_op || cpu_op->native || !cpu_op->def) return loom_ok_status();
  node->cpu_op = cpu_op;
  loom_tensor_metadata_t inputs[kFrameMaxArity];
  for (int32_t i = 0; i < desc->num_slots; ++i) {
    inputs[i] = whole->metadata[desc->slots[i]];
  }
  loom_status_t status =
      loom__cpu_spec_get((cpu_op_t*)cpu_op, inputs, desc->num_slots, &op->attrs,
                         &node->spec, &node->spec_owned);
  if (!status) {
    status = loom__cpu_check_large_ranks(node->spec, op->name, inputs,
                                         desc->num_slots);
  }
  if (status) {
    // The op-by-op call ran it: whatever fails here is left to the op.
    loom_status_free(status);
    return loom_ok_status();
  }
  const cpu_kernel_spec_t* spec = node->spec;
  if (!spec->kernel->compute || spec->num_outputs != desc->count) {
    return loom_ok_status();
  }
  node->eager = false;
  loom_metadata_fn_t metadata_fn = cpu_op->def->metadata_fn;
  if (spec->direct && desc->count == 1 && metadata_fn &&
      metadata_fn(inputs, desc->num_slots, &node->output, 1)) {
    node->output.dtype = spec->output_dtypes[0];
    node->direct = same_metadata(&node->output, &whole->metadata[desc->first]);
    node->output_elements = loom_shape_num_elements(&node->output.shape);
  }
  *out_ok = true;
  return loom_ok_status();
}

// When each value dies (after its last reader, or its producer when
// nothing reads it) and which inputs a kernel may forward.
static loom_status_t plan_lifetimes(loom__function_frame_t* frame,
                                    const loom__function_frame_desc_t* desc) {
  int32_t* last = NULL;
  LOOM_RETURN_IF_ERROR(allocate(
      frame, sizeof(*last) * (size_t)(frame->num_values + 1), (void**)&last));
  for (int32_t s = 0; s < frame->num_values; ++s) last[s] = -1;
  for (int32_t k = 0; k < frame->num_nodes; ++k) {
    const frame_node_t* node = &frame->nodes[k];
    for (int32_t j = 0; j < node->count; ++j) last[node->first + j] = k;
    for (int32_t i = 0; i < node->num_inputs; ++i) last[node->inputs[i]] = k;
  }
  bool* escapes = NULL;
  LOOM_RETURN_IF_ERROR(
      allocate(frame, sizeof(*escapes) * (size_t)(frame->num_values + 1),
               (void**)&escapes));
  for (int32_t o = 0; o < desc->num_outputs; ++o) {
    escapes[desc->outputs[o]] = true;
  }
  int32_t* counts = NULL;
  LOOM_RETURN_IF_ERROR(
      allocate(frame, sizeof(*counts) * (size_t)(frame->num_nodes + 1),
               (void**)&counts));
  for (int32_t s = 0; s < frame->num_values; ++s) {
    if (!frame->borrowed[s] && !escapes[s] && last[s] >= 0) counts[last[s]]++;
  }
  for (int32_t k = 0; k < frame->num_nodes; ++k) {
    frame_node_t* node = &frame->nodes[k];
    LOOM_RETURN_IF_ERROR(
        allocate(frame, sizeof(*node->dying) * (size_t)(counts[k] + 1),
                 (void**)&node->dying));
    for (int32_t i = 0; i < node->num_inputs && i < 64; ++i) {
      int32_t slot = node->inputs[i];
      if (frame->borrowed[slot] || escapes[slot] || last[slot] != k) continue;
      int32_t uses = 0;
      for (int32_t j = 0; j < node->num_inputs; ++j) {
        uses += node->inputs[j] == slot;
      }
      if (uses == 1) node->owned |= (uint64_t)1 << i;
    }
  }
  for (int32_t s = 0; s < frame->num_values; ++s) {
    if (frame->borrowed[s] || escapes[s] || last[s] < 0) continue;
    frame_node_t* node = &frame->nodes[last[s]];
    node->dying[node->num_dying++] = s;
  }
  return loom_ok_status();
}

// Groups the values that die by dtype and shape: each group's tensors pass
// from dead values to new ones.
static loom_status_t plan_buffers(loom__function_frame_t* frame,
                                  const loom__function_frame_desc_t* desc) {
  size_t slots = (size_t)frame->num_values + 1;
  LOOM_RETURN_IF_ERROR(allocate(frame, sizeof(*frame->class_of) * slots,
                                (void**)&frame->class_of));
  int32_t* representative = NULL;  // a slot per class
  LOOM_RETURN_IF_ERROR(allocate(frame, sizeof(*representative) * slots,
                                (void**)&representative));
  int32_t* sizes = NULL;
  LOOM_RETURN_IF_ERROR(allocate(frame, sizeof(*sizes) * slots, (void**)&sizes));
  for (int32_t s = 0; s < frame->num_values; ++s) {
    frame->class_of[s] = kNoClass;
  }
  for (int32_t k = 0; k < frame->num_nodes; ++k) {
    const frame_node_t* node = &frame->nodes[k];
    for (int32_t d = 0; d < node->num_dying; ++d) {
      int32_t slot = node->dying[d];
      const loom_tensor_metadata_t* metadata = &desc->metadata[slot];
      if (metadata->dtype == LOOM_DTYPE_STRING ||
          metadata->dtype == LOOM_DTYPE_RESOURCE ||
          metadata->dtype == LOOM_DTYPE_VARIANT) {
        continue;
      }
      int32_t c = 0;
      while (c < frame->num_classes &&
             !same_metadata(&desc->metadata[representative[c]], metadata)) {
        ++c;
      }
      if (c == frame->num_classes) representative[frame->num_classes++] = slot;
      frame->class_of[slot] = c;
      sizes[c]++;
    }
  }
  size_t classes = (size_t)frame->num_classes + 1;
  LOOM_RETURN_IF_ERROR(allocate(frame, sizeof(*frame->class_start) * classes,
                                (void**)&frame->class_start));
  LOOM_RETURN_IF_ERROR(allocate(frame, sizeof(*frame->class_top) * classes,
                                (void**)&frame->class_top));
  frame->class_size = sizes;
  int32_t total = 0;
  for (int32_t c = 0; c < frame->num_classes; ++c) {
    frame->class_start[c] = total;
    total += sizes[c];
  }
  return allocate(frame, sizeof(*frame->pool) * (size_t)(total + 1),
                  (void**)&frame->pool);
}

static loom_status_t build(loom__function_frame_t* frame,
                           const loom__function_frame_desc_t* desc,
                           bool* out_ok) {
  *out_ok = false;
  size_t slots = (size_t)desc->num_values + 1;
  LOOM_RETURN_IF_ERROR(allocate(frame, sizeof(*frame->tensors) * slots,
                                (void**)&frame->tensors));
  LOOM_RETURN_IF_ERROR(allocate(frame, sizeof(*frame->borrowed) * slots,
                                (void**)&frame->borrowed));
  LOOM_RETURN_IF_ERROR(allocate(frame, sizeof(*frame->constants) * slots,
                                (void**)&frame->constants));
  for (int32_t s = 0; s < desc->num_values; ++s) {
    loom_tensor_handle_t* constant = desc->constants[s];
    frame->borrowed[s] = s < desc->num_inputs || constant;
    if (!constant) continue;
    frame->constants[s] = constant;
    loom_async_value_t* value = constant->value;
    if (!value || constant->handler != frame->cpu ||
        loom_async_value_state(value) != LOOM_ASYNC_VALUE_AVAILABLE ||
        loom_tensor_kind(loom__tensor_of_value(value)) != LOOM_TENSOR_DENSE) {
      return loom_ok_status();
    }
    frame->tensors[s] = loom__tensor_of_value(value);
  }
  LOOM_RETURN_IF_ERROR(
      allocate(frame, sizeof(*frame->nodes) * (size_t)(desc->num_nodes + 1),
               (void**)&frame->nodes));
  for (int32_t k = 0; k < desc->num_nodes; ++k) {
    const loom__function_frame_node_desc_t* node_desc = &desc->nodes[k];
    frame_node_t* node = &frame->nodes[k];
    frame->num_nodes = k + 1;  // destroyed with the frame from now on
    node->name = node_desc->name;
    node->op_name = node_desc->op->name;
    node->first = node_desc->first;
    node->count = node_desc->count;
    bool ok = false;
    LOOM_RETURN_IF_ERROR(specialise(frame, desc, node_desc, node, &ok));
    if (!ok || (node->eager && !desc->run_eager)) return loom_ok_status();
    LOOM_RETURN_IF_ERROR(allocate(
        frame, sizeof(*node->inputs) * (size_t)(node_desc->num_slots + 1),
        (void**)&node->inputs));
    memcpy(node->inputs, node_desc->slots,
           sizeof(*node->inputs) * (size_t)node_desc->num_slots);
    node->num_inputs = node_desc->num_slots;
    LOOM_RETURN_IF_ERROR(allocate(
        frame, sizeof(*node->args) * (size_t)(node_desc->num_slots + 1),
        (void**)&node->args));
  }
  LOOM_RETURN_IF_ERROR(
      allocate(frame, sizeof(*frame->outputs) * (size_t)(desc->num_outputs + 1),
               (void**)&frame->outputs));
  memcpy(frame->outputs, desc->outputs,
         sizeof(*frame->outputs) * (size_t)desc->num_outputs);
  frame->num_outputs = desc->num_outputs;
  LOOM_RETURN_IF_ERROR(plan_lifetimes(frame, desc));
  LOOM_RETURN_IF_ERROR(plan_buffers(frame, desc));
  for (int32_t k = 0; k < frame->num_nodes; ++k) {
    frame_node_t* node = &frame->nodes[k];
    if (!node->direct) continue;
    // A value whose buffers the frame keeps is computed into a kept
    // tensor, or a new one: forwarding an input would leave its class
    // short of a buffer, so that every other node would forward again.
    bool kept = frame->class_of[node->first] != kNoClass;
    node->call = (loom__kernel_direct_call_t){
        .instance = node->spec->instance,
        .host = frame->runtime->host,
        .allocator = frame->runtime->allocator,
        .inputs = node->args,
        .num_inputs = node->num_inputs,
        .owned_inputs = kept ? 0 : node->owned,
        .output = &node->output,
        .output_elements = node->output_elements,
    };
  }
  *out_ok = true;
  return loom_ok_status();
}

loom_status_t loom__function_frame_create(
    const loom__function_frame_desc_t* desc,
    loom__function_frame_t** out_frame) {
  *out_frame = NULL;
  loom_context_t* context = desc->context;
  loom__function_frame_t* frame = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(context->allocator, sizeof(*frame),
                                             (void**)&frame));
  frame->allocator = context->allocator;
  frame->runtime = context->runtime;
  frame->cpu = context->cpu;
  frame->function = desc->function;
  frame->num_inputs = desc->num_inputs;
  frame->num_values = desc->num_values;
  frame->run_eager = desc->run_eager;
  frame->eager_state = desc->eager_state;
  frame->values = desc->values;
  loom__arena_initialize(&frame->arena, context->allocator);
  bool ok = false;
  loom_status_t status = build(frame, desc, &ok);
  if (status || !ok) {
    loom__function_frame_destroy(frame);
    return status;
  }
  *out_frame = frame;
  return loom_ok_status();
}

void loom__function_frame_destroy(loom__function_frame_t* frame) {
  if (!frame) return;
  for (int32_t k = 0; k < frame->num_nodes; ++k) {
    frame_node_t* node = &frame->nodes[k];
    if (node->spec_owned && node->spec) {
      loom__cpu_spec_destroy(node->cpu_op->cpu->allocator, node->spec);
    }
    if (node->prepared) loom_prepared_op_release(node->prepared);
  }
  for (int32_t c = 0; c < frame->num_classes; ++c) {
    for (int32_t i = 0; i < frame->class_top[c]; ++i) {
      loom_tensor_release(frame->pool[frame->class_start[c] + i]);
    }
  }
  loom__arena_deinitialize(&frame->arena);
  loom_allocator_free(frame->allocator, frame);
}

// A kept tensor for `slot`'s value (the pool's reference moves to the
// caller), or NULL.
static inline loom_tensor_t* take_buffer(loom__function_frame_t* frame,
                                         int32_t slot) {
  int32_t c = frame->class_of[slot];
  if (c == kNoClass || frame->class_top[c] == 0) return NULL;
  return frame->pool[frame->class_start[c] + --frame->class_top[c]];
}

// Gives a dead value's tensor (the caller's reference) to its class, or
// releases it when another holder keeps it (a variable, a result).
static inline void drop_buffer(loom__function_frame_t* frame, int32_t slot,
                               loom_tensor_t* tensor) {
  int32_t c = frame->class_of[slot];
  if (c != kNoClass && frame->class_top[c] < frame->class_size[c] &&
      loom_tensor_is_forwardable(tensor) &&
      loom_tensor_kind(tensor) == LOOM_TENSOR_DENSE) {
    frame->pool[frame->class_start[c] + frame->class_top[c]++] = tensor;
    return;
  }
  loom_tensor_release(tensor);
}

// What became of a buffer offered for a result: taken (the pool's
// reference dropped: the result holds the tensor), or kept for later.
// Counts the result's buffer: reused (offered, or an input forwarded) or
// allocated (a new tensor only the result holds).
static inline void settle_offer(loom__function_frame_t* frame, int32_t slot,
                                loom_tensor_t* offered, loom_tensor_t* result,
                                uint64_t owned, loom_tensor_t* const* inputs,
                                loom__function_frame_counts_t* counts) {
  if (offered && offered == result) {
    counts->reused++;
    loom_tensor_release(offered);
    return;
  }
  if (offered) drop_buffer(frame, slot, offered);
  if (!result) return;
  for (int32_t i = 0; owned >> i; ++i) {
    if ((owned >> i & 1) && inputs[i] == result) {
      counts->reused++;
      return;
    }
  }
  if (loom_tensor_is_forwardable(result)) counts->allocated++;
}

static loom_status_t run_compute(loom__function_frame_t* frame,
                                 const frame_node_t* node,
                                 loom_tensor_t* const* inputs,
                                 loom_tensor_t** outputs,
                                 loom__function_frame_counts_t* counts) {
  const cpu_kernel_spec_t* spec = node->spec;
  loom_tensor_t* offers[kFrameMaxArity];
  for (int32_t j = 0; j < node->count; ++j) {
    outputs[j] = NULL;
    offers[j] = take_buffer(frame, node->first + j);
  }
  loom_kernel_context_t context = {
      .op = node->cpu_op->def,
      .attrs = spec->attrs,
      .kernel = spec->kernel,
      .host = frame->runtime->host,
      .allocator = frame->runtime->allocator,
      .inputs = inputs,
      .num_inputs = node->num_inputs,
      .owned_inputs = node->owned,
      .outputs = outputs,
      .reuse_outputs = offers,
      .output_dtypes = spec->output_dtypes,
      .num_outputs = spec->num_outputs,
      .step_id = 0,
      .device_name = LOOM_DEVICE_CPU,
      .status = NULL,
  };
  spec->kernel->compute(spec->instance, &context);
  loom_status_t status = context.status;
  for (int32_t j = 0; !status && j < node->count; ++j) {
    if (!outputs[j]) {
      status = loom_make_status(LOOM_STATUS_INTERNAL,
                                "kernel '%s' did not set output %d",
                                spec->kernel->name, j);
    }
  }
  for (int32_t j = 0; j < node->count; ++j) {
    settle_offer(frame, node->first + j, offers[j], status ? NULL : outputs[j],
                 node->owned, inputs, counts);
    if (status) {
      loom_tensor_release(outputs[j]);
      outputs[j] = NULL;
    }
  }
  return status;
}

// Runs `node` through its kernel's direct entry into a kept tensor of its
// value's class when there is one: the pool's reference moves to the value
// (and back when it dies) and no reference count changes. Else the kernel
// makes the output. False when the entry does not apply to these inputs.
static inline bool run_direct(loom__function_frame_t* frame, frame_node_t* node,
                              loom__function_frame_counts_t* counts,
                              loom_status_t* out_status) {
  loom_tensor_t* into = take_buffer(frame, node->first);
  node->call.into = into;
  loom_tensor_t* output = NULL;
  bool done = node->spec->direct(&node->call, &output, out_status);
  if (LOOM_LIKELY(done && !*out_status && output && output == into)) {
    frame->tensors[node->first] = output;
    counts->reused++;
    return true;
  }
  if (into) drop_buffer(frame, node->first, into);
  if (!done || *out_status) output = NULL;
  frame->tensors[node->first] = output;
  settle_offer(frame, node->first, NULL, output, node->call.owned_inputs,
               node->args, counts);
  return done;
}

// A handle over `tensor` on the frame's cpu (retained), available.
static loom_status_t handle_of(loom__function_frame_t* frame,
                               loom_tensor_t* tensor,
                               loom_tensor_handle_t** out_handle) {
  loom_async_value_t* value = NULL;
  LOOM_RETURN_IF_ERROR(loom__tensor_handle_create_pending(
      frame->cpu, loom_tensor_metadata(tensor), out_handle, &value));
  loom_tensor_retain(tensor);
  *(loom_tensor_t**)loom_async_value_payload(value) = tensor;
  loom__async_value_set_available_unshared(value);
  return loom_ok_status();
}

// Runs eager node `k` by the plan: its input slots get handles (the call's,
// a constant's, or new ones over the frame's tensors), its results become
// the frame's tensors (waited for: a nested call may run asynchronously).
static loom_status_t run_eager_node(loom__function_frame_t* frame, int32_t k,
                                    frame_node_t* node,
                                    loom__function_frame_counts_t* counts) {
  loom_tensor_handle_t** values = frame->values;
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; !status && i < node->num_inputs; ++i) {
    int32_t slot = node->inputs[i];
    if (values[slot]) continue;  // read twice
    if (slot < frame->num_inputs) {
      values[slot] = frame->call_inputs[slot];
      loom_tensor_handle_retain(values[slot]);
    } else if (frame->constants[slot]) {
      values[slot] = frame->constants[slot];
      loom_tensor_handle_retain(values[slot]);
    } else {
      status = handle_of(frame, frame->tensors[slot], &values[slot]);
    }
  }
  if (!status) status = frame->run_eager(frame->eager_state, k);
  for (int32_t j = 0; j < node->count; ++j) {
    loom_tensor_handle_t* result = values[node->first + j];
    values[node->first + j] = NULL;
    if (!status) {
      status =
          loom_tensor_handle_resolve(result, &frame->tensors[node->first + j]);
      if (!status) counts->allocated++;
    }
    loom_tensor_handle_release(result);
  }
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    loom_tensor_handle_release(values[node->inputs[i]]);
    values[node->inputs[i]] = NULL;
  }
  return status;
}

static inline loom_status_t run_node(loom__function_frame_t* frame, int32_t k,
                                     frame_node_t* node,
                                     loom__function_frame_counts_t* counts) {
  loom_tensor_t** inputs = node->args;
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    inputs[i] = frame->tensors[node->inputs[i]];
  }
  loom_status_t status = loom_ok_status();
  if (LOOM_UNLIKELY(node->eager)) {
    status = run_eager_node(frame, k, node, counts);
  } else if (!node->direct || !run_direct(frame, node, counts, &status)) {
    status =
        run_compute(frame, node, inputs, frame->tensors + node->first, counts);
  }
  for (int32_t d = 0; d < node->num_dying; ++d) {
    int32_t slot = node->dying[d];
    loom_tensor_t* tensor = frame->tensors[slot];
    frame->tensors[slot] = NULL;
    if (tensor) drop_buffer(frame, slot, tensor);
  }
  if (LOOM_UNLIKELY(status != NULL) && node->eager) {
    // The op's own error (the plan's node annotated it).
  } else if (LOOM_UNLIKELY(status != NULL)) {
    status = loom__cpu_annotate(status, node->op_name);
    loom_location_t location = {0};
    loom__runtime_report(frame->runtime, location, node->op_name, status);
    status = loom_status_annotate(status, "function '%s': node '%s' (%s)",
                                  frame->function, node->name, node->op_name);
  }
  return status;
}

// A result handle for `slot` (new reference): the plan's own handle for
// an input or a constant, else a cpu handle over the slot's tensor.
static loom_status_t make_result(loom__function_frame_t* frame, int32_t slot,
                                 loom_tensor_handle_t* const* inputs,
                                 loom_tensor_handle_t** out_result) {
  loom_tensor_handle_t* handle =
      slot < frame->num_inputs ? inputs[slot] : frame->constants[slot];
  // (A constant slot's handle is the plan's; an input's the call's.)
  if (handle) {
    loom_tensor_handle_retain(handle);
    *out_result = handle;
    return loom_ok_status();
  }
  return handle_of(frame, frame->tensors[slot], out_result);
}

// Releases what the call still holds: results not yet released (the
// outputs', and every value after a failure).
static void clear(loom__function_frame_t* frame) {
  for (int32_t s = frame->num_inputs; s < frame->num_values; ++s) {
    if (frame->borrowed[s] || !frame->tensors[s]) continue;
    loom_tensor_release(frame->tensors[s]);
    frame->tensors[s] = NULL;
  }
  for (int32_t i = 0; i < frame->num_inputs; ++i) frame->tensors[i] = NULL;
}

loom_status_t loom__function_frame_run(loom__function_frame_t* frame,
                                       loom_tensor_handle_t* const* inputs,
                                       loom_tensor_handle_t** results,
                                       loom__function_frame_counts_t* counts,
                                       bool* out_ran) {
  *out_ran = false;
  if (loom_host_context_is_cancelled(frame->runtime->host)) {
    return loom_ok_status();
  }
  for (int32_t i = 0; i < frame->num_inputs; ++i) {
    loom_tensor_handle_t* handle = inputs[i];
    loom_async_value_t* value = handle->value;
    if (handle->handler != frame->cpu || !value ||
        loom_async_value_state(value) != LOOM_ASYNC_VALUE_AVAILABLE ||
        loom_tensor_kind(loom__tensor_of_value(value)) != LOOM_TENSOR_DENSE) {
      for (int32_t j = 0; j < i; ++j) frame->tensors[j] = NULL;
      return loom_ok_status();
    }
    frame->tensors[i] = loom__tensor_of_value(value);
  }
  *out_ran = true;
  frame->call_inputs = inputs;
  loom_status_t status = loom_ok_status();
  for (int32_t k = 0; !status && k < frame->num_nodes; ++k) {
    status = run_node(frame, k, &frame->nodes[k], counts);
  }
  int32_t made = 0;
  for (; !status && made < frame->num_outputs; ++made) {
    status = make_result(frame, frame->outputs[made], inputs, &results[made]);
  }
  if (status) {
    for (int32_t o = 0; o < made; ++o) {
      loom_tensor_handle_release(results[o]);
      results[o] = NULL;
    }
  }
  clear(frame);
  return status;
}
