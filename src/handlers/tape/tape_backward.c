// The backward pass: visits the recorded nodes in reverse order (the order
// of recording is a topological order), only those that depend on a
// source and receive a gradient, summing (AddN) the gradients of tensors
// used several times and releasing each gradient once its node has
// consumed it. With a gradient_ready callback it reports each source as soon
// as no node left to run can add to its gradient.

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/tape/tape_internal.h"

enum {
  kDependsOnSource = 1,  // a source, or computed from one on the tape
  kIsSource = 2,
  kSeedOnes = 4,  // the gradient so far is the tape's seed of ones alone
};

enum { kMaxPending = 64 };  // contributions summed at once at most

LOOM_DEFINE_SMALL_VECTOR(tape_id_vector, int64_t, 16)

// Sums the contributions to the gradient of tensor `id` into grads[id].
static loom_status_t flush(tape_backward_t* b, int64_t id) {
  if (!b->extra[id]) return loom_ok_status();
  loom_tensor_handle_t* terms[kMaxPending + 1];
  int32_t count = 0;
  terms[count++] = b->grads[id];
  tape_pending_t* pending = tape_pending_vector_data(&b->pending);
  for (int32_t i = b->extra[id]; i;) {
    tape_pending_t* entry = &pending[i - 1];
    terms[count++] = entry->handle;
    entry->handle = NULL;
    int32_t next = entry->next;
    entry->next = b->free_pending;
    b->free_pending = i;
    i = next;
  }
  b->extra[id] = 0;
  b->num_extra[id] = 0;
  // Summed where the contributions live (the tensor's own handler), not in
  // the scope the last gradient function entered: a parallel handler's
  // scope would make a CPU tensor's gradient a parallel value.
  loom__tape_leave_outer(b);
  loom_gradient_context_t context;
  loom__gradient_context_initialize(&context, b->eager, "AddN", NULL, NULL, 0,
                                    NULL, NULL, 0, NULL, NULL);
  context.op_cache = &b->cache;
  loom_tensor_handle_t* sum = NULL;
  loom_status_t status =
      loom__grad_op(&context, "AddN", terms, count,
                    LOOM_GRAD_ATTRS(LOOM_GRAD_INT("N", count)), &sum);
  loom__grad_release_all(terms, count);
  b->grads[id] = sum;  // NULL on failure
  return status;
}

// Adds a contribution (consumed) to the gradient of tensor `id`.
static loom_status_t accumulate(tape_backward_t* b, int64_t id,
                                loom_tensor_handle_t* gradient) {
  if (!b->grads[id]) {
    b->grads[id] = gradient;
    return loom_ok_status();
  }
  b->flags[id] &= (uint8_t)~kSeedOnes;
  int32_t index = b->free_pending;
  if (index) {
    b->free_pending = tape_pending_vector_data(&b->pending)[index - 1].next;
  } else {
    loom_status_t status = tape_pending_vector_push(
        &b->pending, b->tape->allocator, (tape_pending_t){0});
    if (status) {
      loom_tensor_handle_release(gradient);
      return status;
    }
    index = (int32_t)tape_pending_vector_size(&b->pending);
  }
  tape_pending_t* entry = &tape_pending_vector_data(&b->pending)[index - 1];
  entry->handle = gradient;
  entry->next = b->extra[id];
  b->extra[id] = index;
  if (++b->num_extra[id] == kMaxPending) return flush(b, id);
  return loom_ok_status();
}

void loom__tape_leave_outer(tape_backward_t* b) {
  if (b->entered) loom_status_ignore(loom_context_exit_scope(b->eager));
  b->entered = false;
  b->outer = NULL;
}

loom_status_t loom__tape_enter_outer_slow(tape_backward_t* b,
                                          loom_op_handler_t* outer) {
  loom__tape_leave_outer(b);
  if (!loom_op_handler_is_final(outer)) {
    LOOM_RETURN_IF_ERROR(loom_context_enter_scope(b->eager, outer));
    b->entered = true;
  }
  b->outer = outer;
  return loom_ok_status();
}

// Calls the gradient function of `node` on output_grads (borrowed) into
// input_grads, for the inputs needed.
static loom_status_t call_gradient(tape_backward_t* b, tape_node_t* node,
                                   loom_tensor_handle_t** output_grads,
                                   uint64_t ones, const bool* needed,
                                   loom_tensor_handle_t** input_grads) {
  if (!node->def) {
    return loom_make_status(
        LOOM_STATUS_NOT_FOUND,
        "loom_tape_gradient: no gradient is registered for op '%s' "
        "(register one with loom_gradient_register)",
        node->op_name);
  }
  LOOM_RETURN_IF_ERROR(loom__tape_enter_outer(b, node->outer));
  int32_t n = node->num_inputs;
  int32_t m = node->num_outputs;
  loom_gradient_context_t context;
  loom__gradient_context_initialize(
      &context, b->eager, node->op_name, node->op_def, node->attrs, n,
      node->inputs, node->metadata, m, node->outputs, node->metadata + n);
  context.op_cache = &b->cache;
  context.input_needed = needed;
  context.ones_output_gradients = ones;
  context.output_gradients = output_grads;
  loom_status_t status =
      node->def->fn(&context, output_grads, input_grads, node->def->user_data);
  loom__gradient_context_deinitialize(&context);
  if (status) {
    status = loom_status_annotate(status, "gradient of %s", node->op_name);
  }
  return status;
}

// Runs the gradient of `node` on the gradients of its outputs (consumed)
// and adds what it gives to the gradients of its inputs.
static loom_status_t run_node(tape_backward_t* b, tape_node_t* node) {
  int32_t n = node->num_inputs;
  int32_t m = node->num_outputs;
  loom_allocator_t allocator = b->tape->allocator;
  LOOM_RETURN_IF_ERROR(loom__handle_vector_resize_uninitialized(
      &b->node_grads, allocator, (size_t)n + m));
  LOOM_RETURN_IF_ERROR(tape_flag_vector_resize_uninitialized(
      &b->node_inputs_needed, allocator, (size_t)n));
  loom_tensor_handle_t** inputs = loom__handle_vector_data(&b->node_grads);
  loom_tensor_handle_t** outputs = inputs + n;
  bool* needed = tape_flag_vector_data(&b->node_inputs_needed);
  for (int32_t j = 0; j < n; ++j) {
    inputs[j] = NULL;
    int64_t id = node->input_ids[j];
    needed[j] = id >= 0 && (b->flags[id] & kDependsOnSource);
  }
  loom_status_t status = loom_ok_status();
  uint64_t ones = 0;
  for (int32_t k = 0; k < m; ++k) {
    int64_t id = node->first_output_id + k;
    // (A second contribution cleared the flag: see accumulate.)
    if (k < 64 && (b->flags[id] & kSeedOnes)) ones |= (uint64_t)1 << k;
    if (!status && b->extra[id]) status = flush(b, id);
    outputs[k] = b->grads[id];
    b->grads[id] = NULL;  // consumed here
  }
  if (!status) status = call_gradient(b, node, outputs, ones, needed, inputs);
  loom__grad_release_all(outputs, m);
  if (!b->tape->options.persistent) loom__tape_release_node_tensors(node);
  for (int32_t j = 0; j < n; ++j) {
    loom_tensor_handle_t* gradient = inputs[j];
    if (!gradient) continue;
    if (status || !needed[j]) {
      loom_tensor_handle_release(gradient);
      continue;
    }
    status = accumulate(b, node->input_ids[j], gradient);
  }
  return status;
}

// The default gradient of a target: ones shaped like it. A scalar loss on
// the CPU gets a constant (no op to run); anything else, OnesLike on the
// target's handler.
static loom_status_t ones_seed(tape_backward_t* b, loom_tensor_handle_t* target,
                               loom_tensor_handle_t** out) {
  loom_tensor_metadata_t metadata;
  bool scalar = false;
  if (loom_tensor_handle_handler(target) == loom_context_cpu(b->eager) &&
      loom_tensor_handle_metadata_available(target)) {
    loom_status_t unknown = loom_tensor_handle_metadata(target, &metadata);
    scalar = !unknown && metadata.shape.rank == 0 &&
             (metadata.dtype == LOOM_DTYPE_FLOAT ||
              metadata.dtype == LOOM_DTYPE_DOUBLE);
    loom_status_free(unknown);
  }
  if (scalar) return loom__grad_host_scalar(b->eager, metadata.dtype, 1, out);
  return loom__grad_execute_in(b->eager, "OnesLike", &target, 1, NULL, 0, out,
                               1);
}

// Zeros shaped like the value of `source` (for a resource variable: of the
// values read from it on the tape).
static loom_status_t zeros_for(tape_backward_t* b, loom_tensor_handle_t* source,
                               int64_t id, loom_tensor_handle_t** out) {
  *out = NULL;
  if (loom_tensor_handle_dtype(source) != LOOM_DTYPE_RESOURCE) {
    return loom__grad_execute_in(b->eager, "ZerosLike", &source, 1, NULL, 0,
                                 out, 1);
  }
  tape_node_t** nodes = tape_node_vector_data(&b->tape->nodes);
  for (size_t i = 0; id >= 0 && i < tape_node_vector_size(&b->tape->nodes);
       ++i) {
    tape_node_t* node = nodes[i];
    if (node->num_inputs < 1 || node->input_ids[0] != id ||
        node->num_outputs != 1 || strcmp(node->op_name, "ReadVariableOp")) {
      continue;
    }
    loom_gradient_context_t context;
    loom__gradient_context_initialize(&context, b->eager, "ZerosLike", NULL,
                                      NULL, 0, NULL, NULL, 0, NULL, NULL);
    return loom__grad_filled(&context, &node->metadata[1], 0.0, out);
  }
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "loom_tape_gradient: the resource variable source "
                          "was not read on the tape: its value's shape is "
                          "unknown, so no zero gradient can be made");
}

// Whether `node` is a collective every participant's backward pass runs.
static bool is_collective(const tape_node_t* node) {
  return node->def && node->def->fn &&
         (node->def->flags & LOOM_GRADIENT_COLLECTIVE);
}

// Marks what depends on a source (recording order is topological): the
// tensors, and the nodes that make them. A collective's outputs count as
// depending on one (another participant's), so that the gradients reaching
// them are computed and sent back.
static void mark_dependents(tape_backward_t* b) {
  tape_node_t** nodes = tape_node_vector_data(&b->tape->nodes);
  for (size_t i = 0; i < tape_node_vector_size(&b->tape->nodes); ++i) {
    tape_node_t* node = nodes[i];
    bool depends = is_collective(node);
    for (int32_t j = 0; j < node->num_inputs && !depends; ++j) {
      int64_t id = node->input_ids[j];
      depends = id >= 0 && (b->flags[id] & kDependsOnSource);
    }
    if (!depends) continue;
    b->node_needed[i] = 1;
    for (int32_t k = 0; k < node->num_outputs; ++k) {
      b->flags[node->first_output_id + k] |= kDependsOnSource;
    }
  }
}

// The gradients of the targets that depend on a source: as given, or ones.
static loom_status_t seed(tape_backward_t* b,
                          loom_tensor_handle_t* const* targets,
                          int32_t num_targets,
                          loom_tensor_handle_t* const* output_gradients) {
  for (int32_t t = 0; t < num_targets; ++t) {
    int64_t id = loom__tape_lookup_locked(b->tape, targets[t]);
    if (id < 0 || !(b->flags[id] & kDependsOnSource)) continue;
    loom_tensor_handle_t* seed = NULL;
    bool ones = !(output_gradients && output_gradients[t]);
    if (!ones) {
      seed = output_gradients[t];
      loom_tensor_handle_retain(seed);
    } else {
      LOOM_RETURN_IF_ERROR(ones_seed(b, targets[t], &seed));
    }
    bool first = !b->grads[id];
    LOOM_RETURN_IF_ERROR(accumulate(b, id, seed));
    if (ones && first) b->flags[id] |= kSeedOnes;
  }
  return loom_ok_status();
}

// Hands out the gradient of a source computed on the tape (complete once
// its node is reached) to the sources it is.
static loom_status_t take_source_gradient(
    tape_backward_t* b, int64_t id, const int64_t* source_ids,
    int32_t num_sources, loom_tensor_handle_t** out_gradients) {
  LOOM_RETURN_IF_ERROR(flush(b, id));
  for (int32_t s = 0; s < num_sources; ++s) {
    if (source_ids[s] == id && !out_gradients[s]) {
      loom_tensor_handle_retain(b->grads[id]);
      out_gradients[s] = b->grads[id];
    }
  }
  return loom_ok_status();
}

// When each source's gradient becomes final, for the gradient_ready
// callback: after the backward pass has run node `at` (the first node on
// the tape, in recording order, that reads the source and is visited),
// or -1: after the backward pass.
typedef struct ready_entry_t {
  int64_t at;
  int32_t source;
} ready_entry_t;

typedef struct ready_t {
  // NULL: nothing to report.
  const loom_tape_gradient_options_t* options;
  ready_entry_t* entries;  // per source, latest `at` first
  bool* reported;          // per source
  int32_t count;           // entries (0 without a callback)
  int32_t next;            // the first entry not reported yet
} ready_t;

static int compare_ready(const void* a, const void* b) {
  const ready_entry_t* x = a;
  const ready_entry_t* y = b;
  if (x->at != y->at) return x->at > y->at ? -1 : 1;
  return (x->source > y->source) - (x->source < y->source);
}

// Finds when each source's gradient is final (recording order is
// topological: the nodes that read a source all come after it, so once the
// backward pass has passed the first of them that it visits, the gradient
// can no longer change).
static loom_status_t ready_initialize(tape_backward_t* b,
                                      const loom_tape_gradient_options_t* opts,
                                      const int64_t* source_ids,
                                      int32_t num_sources, ready_t* r) {
  *r = (ready_t){0};
  if (!opts || !opts->gradient_ready || num_sources == 0) {
    return loom_ok_status();
  }
  loom_allocator_t allocator = b->tape->allocator;
  int64_t num_ids = b->tape->next_id;
  void* block = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator,
      (sizeof(ready_entry_t) + sizeof(bool)) * (size_t)num_sources +
          sizeof(int64_t) * (size_t)num_ids,
      &block));
  r->options = opts;
  r->entries = block;
  int64_t* first_use = (int64_t*)(r->entries + num_sources);
  r->reported = (bool*)(first_use + num_ids);
  r->count = num_sources;
  for (int64_t id = 0; id < num_ids; ++id) first_use[id] = -1;
  tape_node_t** nodes = tape_node_vector_data(&b->tape->nodes);
  for (size_t i = 0; i < tape_node_vector_size(&b->tape->nodes); ++i) {
    if (!b->node_needed[i]) continue;
    const tape_node_t* node = nodes[i];
    for (int32_t j = 0; j < node->num_inputs; ++j) {
      int64_t id = node->input_ids[j];
      if (id >= 0 && (b->flags[id] & kIsSource) && first_use[id] < 0) {
        first_use[id] = (int64_t)i;
      }
    }
  }
  for (int32_t s = 0; s < num_sources; ++s) {
    int64_t id = source_ids[s];
    r->entries[s] =
        (ready_entry_t){.at = id >= 0 ? first_use[id] : -1, .source = s};
  }
  qsort(r->entries, (size_t)num_sources, sizeof(ready_entry_t), compare_ready);
  return loom_ok_status();
}

static void ready_deinitialize(tape_backward_t* b, ready_t* r) {
  loom_allocator_free(b->tape->allocator, r->entries);
}

// Hands the gradient of source `s` to the callback.
static loom_status_t report(tape_backward_t* b, ready_t* r, int32_t s,
                            loom_tensor_handle_t* gradient) {
  r->reported[s] = true;
  // In the caller's scope, not the one the last gradient function entered.
  loom__tape_leave_outer(b);
  loom_status_t status =
      r->options->gradient_ready(r->options->user_data, s, gradient);
  if (status) {
    status = loom_status_annotate(
        status, "loom_tape_gradient: gradient_ready for source %d", s);
  }
  return status;
}

// Reports the sources whose gradients are final once node `i` has run. A
// source that got no gradient on the tape waits for the end (it is
// unconnected: what it gets depends on the policy).
static loom_status_t report_ready(tape_backward_t* b, ready_t* r, int64_t i,
                                  const int64_t* source_ids,
                                  loom_tensor_handle_t** out_gradients) {
  loom_status_t status = loom_ok_status();
  for (; r->next < r->count && r->entries[r->next].at >= i && !status;
       ++r->next) {
    int32_t s = r->entries[r->next].source;
    int64_t id = source_ids[s];
    if (!b->grads[id]) continue;
    status = take_source_gradient(b, id, &source_ids[s], 1, &out_gradients[s]);
    if (!status) status = report(b, r, s, out_gradients[s]);
  }
  return status;
}

// Runs the nodes that receive a gradient, in reverse recording order.
static loom_status_t run_backward(tape_backward_t* b, ready_t* ready,
                                  const int64_t* source_ids,
                                  int32_t num_sources,
                                  loom_tensor_handle_t** out_gradients) {
  tape_node_t** nodes = tape_node_vector_data(&b->tape->nodes);
  loom_status_t status = loom_ok_status();
  for (int64_t i = (int64_t)tape_node_vector_size(&b->tape->nodes) - 1;
       i >= 0 && !status; --i) {
    if (!b->node_needed[i]) continue;
    tape_node_t* node = nodes[i];
    bool any = false;
    for (int32_t k = 0; k < node->num_outputs && !status; ++k) {
      int64_t id = node->first_output_id + k;
      if (!b->grads[id]) continue;
      any = true;
      if (b->flags[id] & kIsSource) {
        status =
            take_source_gradient(b, id, source_ids, num_sources, out_gradients);
      }
    }
    // A collective runs with no gradient too (it brings zeros): the other
    // participants wait for it.
    any |= is_collective(node);
    if (any && !status && node->segment && !node->segment->materialized) {
      status = loom__tape_materialize(b, node->segment, i);
    }
    if (any && !status) status = run_node(b, node);
    if (!status) {
      status = report_ready(b, ready, i, source_ids, out_gradients);
    }
  }
  return status;
}

static loom_status_t backward_locked(
    tape_t* tape, loom_tensor_handle_t* const* targets, int32_t num_targets,
    loom_tensor_handle_t* const* sources, int32_t num_sources,
    loom_tensor_handle_t* const* output_gradients,
    loom_unconnected_gradients_t unconnected,
    const loom_tape_gradient_options_t* options,
    loom_tensor_handle_t** out_gradients) {
  tape_backward_t b = {.tape = tape, .eager = tape->context};
  ready_t ready = {0};
  tape_pending_vector_initialize(&b.pending);
  loom__handle_vector_initialize(&b.node_grads);
  tape_flag_vector_initialize(&b.node_inputs_needed);
  int64_t num_ids = tape->next_id;
  size_t num_nodes = tape_node_vector_size(&tape->nodes);
  void* block = NULL;
  size_t bytes =
      (sizeof(loom_tensor_handle_t*) + sizeof(int32_t) + 2) * (size_t)num_ids +
      num_nodes + 1;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(tape->allocator, bytes, &block));
  b.grads = block;
  b.extra = (int32_t*)(b.grads + num_ids);
  b.flags = (uint8_t*)(b.extra + num_ids);
  b.num_extra = b.flags + num_ids;
  b.node_needed = b.num_extra + num_ids;

  tape_id_vector_t source_id_vector;
  tape_id_vector_initialize(&source_id_vector);
  loom_status_t status = tape_id_vector_resize_uninitialized(
      &source_id_vector, tape->allocator, (size_t)num_sources);
  int64_t* source_ids = tape_id_vector_data(&source_id_vector);
  for (int32_t s = 0; s < num_sources && !status; ++s) {
    source_ids[s] = loom__tape_lookup_locked(tape, sources[s]);
    if (source_ids[s] >= 0) {
      b.flags[source_ids[s]] |= kDependsOnSource | kIsSource;
    }
  }
  if (!status) {
    mark_dependents(&b);
    status = ready_initialize(&b, options, source_ids, num_sources, &ready);
  }
  if (!status) status = seed(&b, targets, num_targets, output_gradients);
  if (!status) {
    status = run_backward(&b, &ready, source_ids, num_sources, out_gradients);
  }
  tape_node_t** nodes = tape_node_vector_data(&tape->nodes);
  for (size_t i = 0; i < num_nodes && tape->num_segments; ++i) {
    tape_segment_t* segment = nodes[i]->segment;
    if (segment && segment->materialized) {
      loom__tape_dematerialize(tape, segment);
    }
  }
  loom__tape_leave_outer(&b);
  for (int32_t s = 0; s < num_sources && !status; ++s) {
    int64_t id = source_ids[s];
    if (!out_gradients[s] && id >= 0 && b.grads[id]) {
      status =
          take_source_gradient(&b, id, &source_ids[s], 1, &out_gradients[s]);
    }
    if (!status && !out_gradients[s] && unconnected == LOOM_UNCONNECTED_ZERO) {
      status = zeros_for(&b, sources[s], id, &out_gradients[s]);
    }
    if (!status && ready.count && !ready.reported[s]) {
      status = report(&b, &ready, s, out_gradients[s]);
    }
  }
  ready_deinitialize(&b, &ready);
  loom__grad_op_cache_clear(&b.cache);
  for (int64_t id = 0; id < num_ids; ++id) {
    loom_tensor_handle_release(b.grads[id]);
  }
  tape_pending_t* pending = tape_pending_vector_data(&b.pending);
  for (size_t i = 0; i < tape_pending_vector_size(&b.pending); ++i) {
    loom_tensor_handle_release(pending[i].handle);
  }
  tape_pending_vector_deinitialize(&b.pending, tape->allocator);
  loom__handle_vector_deinitialize(&b.node_grads, tape->allocator);
  tape_flag_vector_deinitialize(&b.node_inputs_needed, tape->allocator);
  tape_id_vector_deinitialize(&source_id_vector, tape->allocator);
  loom_allocator_free(tape->allocator, block);
  if (status) loom__grad_release_all(out_gradients, num_sources);
  return status;
}

// Checks the arguments of loom_tape_gradient.
static loom_status_t check_gradient_arguments(
    loom_tensor_handle_t* const* targets, int32_t num_targets,
    loom_tensor_handle_t* const* sources, int32_t num_sources,
    loom_unconnected_gradients_t unconnected,
    loom_tensor_handle_t** out_gradients) {
  if (num_targets < 0 || (num_targets > 0 && !targets) || num_sources < 0 ||
      (num_sources > 0 && (!sources || !out_gradients))) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "loom_tape_gradient: %s",
        num_targets < 0 || (num_targets > 0 && !targets) ? "invalid targets"
        : num_sources < 0 || !sources                    ? "invalid sources"
                                      : "out_gradients is NULL");
  }
  if (unconnected != LOOM_UNCONNECTED_NONE &&
      unconnected != LOOM_UNCONNECTED_ZERO) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tape_gradient: unknown unconnected "
                            "gradients policy %d",
                            (int)unconnected);
  }
  for (int32_t s = 0; s < num_sources; ++s) out_gradients[s] = NULL;
  for (int32_t t = 0; t < num_targets; ++t) {
    if (!targets[t]) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "loom_tape_gradient: targets[%d] is NULL", t);
    }
  }
  for (int32_t s = 0; s < num_sources; ++s) {
    if (!sources[s]) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "loom_tape_gradient: sources[%d] is NULL", s);
    }
  }
  return loom_ok_status();
}

void loom_tape_gradient_options_initialize(
    loom_tape_gradient_options_t* options) {
  *options = (loom_tape_gradient_options_t){
      .struct_size = sizeof(loom_tape_gradient_options_t)};
}

loom_status_t loom_tape_gradient(loom_op_handler_t* handler,
                                 loom_tensor_handle_t* const* targets,
                                 int32_t num_targets,
                                 loom_tensor_handle_t* const* sources,
                                 int32_t num_sources,
                                 loom_tensor_handle_t* const* output_gradients,
                                 loom_unconnected_gradients_t unconnected,
                                 loom_tensor_handle_t** out_gradients) {
  return loom_tape_gradient_with_options(handler, targets, num_targets, sources,
                                         num_sources, output_gradients,
                                         unconnected, NULL, out_gradients);
}

loom_status_t loom_tape_gradient_with_options(
    loom_op_handler_t* handler, loom_tensor_handle_t* const* targets,
    int32_t num_targets, loom_tensor_handle_t* const* sources,
    int32_t num_sources, loom_tensor_handle_t* const* output_gradients,
    loom_unconnected_gradients_t unconnected,
    const loom_tape_gradient_options_t* options,
    loom_tensor_handle_t** out_gradients) {
  tape_t* tape = loom__tape_of(handler);
  if (!tape) return loom__tape_not_a_tape("loom_tape_gradient", handler);
  if (options &&
      options->struct_size < offsetof(loom_tape_gradient_options_t, user_data) +
                                 sizeof(options->user_data)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tape_gradient: options->struct_size %zu is "
                            "too small (sizeof(loom_tape_gradient_options_t) "
                            "is %zu)",
                            options->struct_size,
                            sizeof(loom_tape_gradient_options_t));
  }
  LOOM_RETURN_IF_ERROR(check_gradient_arguments(
      targets, num_targets, sources, num_sources, unconnected, out_gradients));
  // The backward ops this thread runs are not recorded on this tape.
  LOOM_RETURN_IF_ERROR(loom__tape_pause(tape));
  loom__tape_lock(tape);
  loom_status_t status;
  if (tape->released) {
    status = loom_make_status(
        LOOM_STATUS_FAILED_PRECONDITION,
        "loom_tape_gradient: a tape that is not persistent computes "
        "gradients only once (create it with options.persistent set to "
        "call loom_tape_gradient several times)");
  } else {
    status =
        backward_locked(tape, targets, num_targets, sources, num_sources,
                        output_gradients, unconnected, options, out_gradients);
    if (!tape->options.persistent) {
      loom__tape_release_recorded_locked(tape);
      tape->released = true;
      atomic_store_explicit(&tape->tracking, false, memory_order_relaxed);
    }
  }
  loom__tape_unlock(tape);
  loom__tape_resume(tape);
  return status;
}
