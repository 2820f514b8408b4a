// Recording: the tape's execute hook runs each op on the outer handler and,
// when an input is tracked and the op is differentiable, records a node in
// the tape's arena. Recording takes the tape's lock once per op.

#include <string.h>

#include "handlers/tape/tape_internal.h"

// The fences below order atomics, which ThreadSanitizer never reports; it
// does not model fences, and GCC warns about them under it.
#if defined(__SANITIZE_THREAD__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wtsan"
#endif

LOOM_DEFINE_SMALL_VECTOR(tape_id_vector, int64_t, 8)

// Holds `outer` (the handler a node's gradient runs on) once.
static loom_status_t hold_outer_locked(tape_t* tape, loom_op_handler_t* outer) {
  loom_op_handler_t** outers = tape_handler_vector_data(&tape->outers);
  for (size_t i = tape_handler_vector_size(&tape->outers); i > 0; --i) {
    if (outers[i - 1] == outer) return loom_ok_status();
  }
  LOOM_RETURN_IF_ERROR(
      tape_handler_vector_push(&tape->outers, tape->allocator, outer));
  loom_op_handler_retain(outer);
  return loom_ok_status();
}

// Reserves what adding a node of `r` takes, so that nothing fails once the
// node is made: a slot for it, its outer handler held, and room in the map
// for the results another tape tagged (nested tapes).
static loom_status_t reserve_locked(tape_t* tape, const tape_record_t* r) {
  LOOM_RETURN_IF_ERROR(tape_node_vector_reserve(
      &tape->nodes, tape->allocator, tape_node_vector_size(&tape->nodes) + 1));
  size_t num_outers = tape_handler_vector_size(&tape->outers);
  if (num_outers == 0 ||
      tape_handler_vector_data(&tape->outers)[num_outers - 1] != r->outer) {
    LOOM_RETURN_IF_ERROR(hold_outer_locked(tape, r->outer));
  }
  int32_t m = r->num_outputs;
  bool may_spill =
      !tape->tag_base || (uint64_t)(tape->next_id + m) >= TAPE_TAG_ID_MASK;
  for (int32_t k = 0; k < m && !may_spill; ++k) {
    uint64_t tag = loom_tensor_handle_tag(r->results[k]);
    may_spill = tag && (tag & ~TAPE_TAG_ID_MASK) != tape->tag_base;
  }
  if (!may_spill) return loom_ok_status();
  return loom__hash_map_reserve(
      &tape->spilled, loom__hash_map_size(&tape->spilled) + (size_t)m);
}

// A node for `r` in the arena, its arrays laid out after it.
static loom_status_t allocate_node_locked(tape_t* tape, const tape_record_t* r,
                                          tape_node_t** out_node) {
  size_t n = (size_t)r->num_inputs;
  size_t m = (size_t)r->num_outputs;
  size_t size = sizeof(tape_node_t) + sizeof(loom_tensor_metadata_t) * (n + m) +
                sizeof(int64_t) * n + sizeof(loom_tensor_handle_t*) * (n + m);
  tape_node_t* node = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__arena_allocate_uninitialized(&tape->arena, size, (void**)&node));
  unsigned char* cursor = (unsigned char*)(node + 1);
  node->metadata = (loom_tensor_metadata_t*)cursor;
  cursor += sizeof(loom_tensor_metadata_t) * (n + m);
  node->input_ids = (int64_t*)cursor;
  cursor += sizeof(int64_t) * n;
  node->inputs = (loom_tensor_handle_t**)cursor;
  node->outputs = node->inputs + n;
  *out_node = node;
  return loom_ok_status();
}

loom_status_t loom__tape_add_node_locked(tape_t* tape, const tape_record_t* r) {
  LOOM_RETURN_IF_ERROR(reserve_locked(tape, r));
  tape_segment_t* segment = NULL;
  if (r->segment) {
    LOOM_RETURN_IF_ERROR(
        loom__tape_segment_for_locked(tape, r->segment, &segment));
  }
  const loom_op_attrs_t* frozen = NULL;
  if (r->attrs && loom_op_attrs_count(r->attrs) > 0) {
    LOOM_RETURN_IF_ERROR(loom_op_attrs_freeze(r->attrs, &frozen));
  }
  tape_node_t* node = NULL;
  loom_status_t status = allocate_node_locked(tape, r, &node);
  if (status) {
    if (frozen) loom_op_attrs_release(frozen);
    return status;
  }
  int32_t n = r->num_inputs;
  int32_t m = r->num_outputs;
  node->def = r->def;
  node->op_name = r->op_name;
  node->op_def = r->op_def;
  node->attrs = frozen;
  node->outer = r->outer;
  node->segment = segment;
  node->num_inputs = n;
  node->num_outputs = m;
  node->first_output_id = tape->next_id;
  tape->next_id += m;
  uint64_t inputs_used = node->def ? node->def->inputs_used : 0;
  for (int32_t i = 0; i < n; ++i) {
    node->input_ids[i] = r->input_ids[i];
    node->metadata[i] = r->input_metadata[i];
    // A segment's node keeps what comes from outside the segment (to
    // recompute it) and nothing else.
    bool keep = segment ? r->input_ids[i] < segment->first_id
                        : loom__tape_uses(inputs_used, i);
    node->inputs[i] = keep ? r->saved_inputs[i] : NULL;
    if (keep) r->saved_inputs[i] = NULL;
  }
  uint64_t outputs_used = node->def && !segment ? node->def->outputs_used : 0;
  for (int32_t k = 0; k < m; ++k) {
    loom_tensor_handle_t* result = r->results[k];
    node->metadata[n + k] = r->output_metadata[k];
    loom__tape_track_locked(tape, result, node->first_output_id + k);
    node->outputs[k] = NULL;
    if (loom__tape_uses(outputs_used, k)) {
      loom_tensor_handle_retain(result);
      node->outputs[k] = result;
    }
  }
  if (segment) {
    segment->num_nodes++;
    segment->end_id = tape->next_id;
  }
  // A collective recorded untracked makes the tape's first tracked values.
  if (m > 0 && !atomic_load_explicit(&tape->tracking, memory_order_relaxed)) {
    atomic_store_explicit(&tape->tracking, true, memory_order_relaxed);
  }
  loom_status_ignore(  // room reserved
      tape_node_vector_push(&tape->nodes, tape->allocator, node));
  if (loom__hash_map_size(&tape->spilled) >= tape->sweep_at) {
    loom__tape_sweep_locked(tape);
  }
  return loom_ok_status();
}

// Whether the outer handler needs the arguments copied onto it (a
// transformation with its own tensors).
static bool needs_copies(loom_op_handler_t* outer,
                         const loom_op_invocation_t* invocation) {
  if (loom_op_handler_is_final(outer)) return false;
  const loom_op_handler_vtable_t* vtable = loom_op_handler_vtable(outer);
  return !vtable->takes_foreign_inputs ||
         !vtable->takes_foreign_inputs(outer,
                                       loom_prepared_op_name(invocation->op));
}

// Copies the tracked arguments that are not on the outer handler onto it
// and records each copy as a CopyOn op (TensorFlow's op-handler design:
// its gradient, CopyOnGrad, brings the gradient back where the tensor came
// from). The copies replace the arguments, and their ids the ids.
static loom_status_t copy_on_recorded(const loom__passthrough_t* base,
                                      loom_op_invocation_t* invocation,
                                      int64_t* ids) {
  tape_t* tape = base->shared;
  loom_op_handler_t* outer = base->effective_outer;
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_t* argument = invocation->arguments[i];
    if (ids[i] < 0 || loom_tensor_handle_handler(argument) == outer) continue;
    loom_tensor_metadata_t metadata[2];
    LOOM_RETURN_IF_ERROR(loom__grad_metadata(argument, &metadata[0]));
    loom_tensor_handle_t* copy = NULL;
    LOOM_RETURN_IF_ERROR(
        loom_context_copy_to(base->context, argument, outer, &copy));
    loom_tensor_handle_t* saved = NULL;
    tape_record_t record = {
        .def = tape->copy_on_def,
        .op_name = "CopyOn",
        .outer = outer,
        .num_inputs = 1,
        .input_ids = &ids[i],
        .saved_inputs = &saved,
        .input_metadata = &metadata[0],
        .num_outputs = 1,
        .results = &copy,
        .output_metadata = &metadata[1],
    };
    loom_status_t status = loom__grad_metadata(copy, &metadata[1]);
    if (!status) {
      loom__tape_lock(tape);
      if (!tape->released) status = loom__tape_add_node_locked(tape, &record);
      ids[i] = loom__tape_lookup_locked(tape, copy);
      loom__tape_unlock(tape);
    }
    if (status) {
      loom_tensor_handle_release(copy);
      return status;
    }
    loom_tensor_handle_release(argument);
    invocation->arguments[i] = copy;
  }
  return loom_ok_status();
}

// The ids of the arguments (-1: not tracked) into ids[0, n); watches the
// resource a ReadVariableOp reads when the tape watches accessed
// variables. *out_any: whether any argument is tracked.
static loom_status_t find_ids(tape_t* tape, const tape_op_data_t* data,
                              const loom_op_invocation_t* invocation,
                              int64_t* ids, bool* out_any) {
  int32_t n = invocation->num_arguments;
  // The tags answer for this tape's tensors without the lock; the map
  // (nested tapes, a resource to watch) needs it.
  bool any = false;
  bool untagged = false;
  for (int32_t i = 0; i < n; ++i) {
    ids[i] = loom__tape_tagged_id(tape, invocation->arguments[i]);
    any |= ids[i] >= 0;
    untagged |= ids[i] < 0;
  }
  // An input whose tag another tape took over is in this tape's map from
  // before the tag changed (loom__tape_take_tag_over): order the map's
  // size after it.
  if (untagged) atomic_thread_fence(memory_order_acquire);
  loom_status_t status = loom_ok_status();
  bool watch_resource =
      data->reads_variable && n >= 1 && tape->options.watch_accessed_variables;
  if (watch_resource || (untagged && loom__tape_any_spilled(tape))) {
    loom__tape_lock(tape);
    if (!tape->released) {
      if (watch_resource) {
        status = loom__tape_watch_locked(tape, invocation->arguments[0]);
      }
      for (int32_t i = 0; i < n; ++i) {
        if (ids[i] < 0) {
          ids[i] = loom__tape_lookup_locked(tape, invocation->arguments[i]);
        }
        any |= ids[i] >= 0;
      }
    }
    loom__tape_unlock(tape);
  }
  *out_any = any;
  return status;
}

// Runs the op (its arguments tracked, with ids[0, n)) and records it:
// saved[0, n) receives the inputs the node may keep, metadata[0, n + m)
// the inputs' and results' metadata.
static loom_status_t run_and_record(const loom__passthrough_t* base,
                                    loom_op_invocation_t* invocation,
                                    const tape_op_data_t* data,
                                    const int64_t* ids,
                                    loom_tensor_handle_t** saved,
                                    loom_tensor_metadata_t* metadata) {
  tape_t* tape = base->shared;
  int32_t n = invocation->num_arguments;
  int32_t m = invocation->num_results;
  // The inputs the node may keep, and every input's metadata, before the
  // op consumes its arguments. In a recompute segment the node keeps those
  // made outside the segment, which only recording tells.
  loom__passthrough_shared_t* segment = loom__recompute_segment_of(invocation);
  uint64_t inputs_used = segment     ? LOOM_GRADIENT_USES_ALL
                         : data->def ? data->def->inputs_used
                                     : 0;
  bool recordable = true;
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_t* argument = invocation->arguments[i];
    saved[i] = NULL;
    if (loom__tape_uses(inputs_used, i)) {
      loom_tensor_handle_retain(argument);
      saved[i] = argument;
    }
    loom_status_t meta_status = loom__grad_metadata(argument, &metadata[i]);
    if (meta_status) {
      recordable = false;  // a failed input: the op fails too
      loom_status_free(meta_status);
    }
  }
  loom_status_t status =
      loom__passthrough_forward(base, invocation, data->base.outer_op);
  for (int32_t k = 0; k < m && !status && recordable; ++k) {
    loom_tensor_handle_t* result = invocation->results[k];
    loom_status_t meta_status =
        result ? loom__grad_metadata(result, &metadata[n + k])
               : loom_make_status(LOOM_STATUS_INTERNAL, "no result");
    if (meta_status) {
      recordable = false;  // an error result: nothing to differentiate
      loom_status_free(meta_status);
    }
  }
  if (!status && recordable) {
    tape_record_t record = {
        .def = data->def,
        .op_name = loom_prepared_op_name(invocation->op),
        .op_def = loom_prepared_op_def(invocation->op),
        .attrs = invocation->attrs,
        .outer = base->effective_outer,
        .segment = segment,
        .num_inputs = n,
        .input_ids = ids,
        .saved_inputs = saved,
        .input_metadata = metadata,
        .num_outputs = m,
        .results = invocation->results,
        .output_metadata = metadata + n,
    };
    if (record.op_def) record.op_name = record.op_def->name;
    loom__tape_lock(tape);
    if (!tape->released) status = loom__tape_add_node_locked(tape, &record);
    loom__tape_unlock(tape);
    if (status) {
      status = loom__passthrough_fail_results(
          invocation, base->effective_outer,
          loom_status_annotate(status, "recording %s on a gradient tape",
                               record.op_name));
    }
  }
  loom__grad_release_all(saved, n);
  return status;
}

loom_status_t loom__tape_execute(loom_op_handler_t* handler,
                                 loom_op_invocation_t* invocation) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  tape_t* tape = base->shared;
  const tape_op_data_t* data = loom_prepared_op_data(invocation->op);
  if (!data->record || loom__tape_paused(tape) ||
      (!data->reads_variable && !data->collective &&
       !atomic_load_explicit(&tape->tracking, memory_order_relaxed))) {
    return loom__passthrough_forward(base, invocation, data->base.outer_op);
  }
  size_t n = (size_t)invocation->num_arguments;
  size_t m = (size_t)invocation->num_results;
  loom_allocator_t allocator = base->allocator;
  tape_id_vector_t ids;
  loom__handle_vector_t saved;
  loom__metadata_vector_t metadata;
  tape_id_vector_initialize(&ids);
  loom__handle_vector_initialize(&saved);
  loom__metadata_vector_initialize(&metadata);
  loom_status_t status =
      tape_id_vector_resize_uninitialized(&ids, allocator, n);
  if (!status) {
    status = loom__handle_vector_resize_uninitialized(&saved, allocator, n);
  }
  if (!status) {
    status =
        loom__metadata_vector_resize_uninitialized(&metadata, allocator, n + m);
  }
  bool any = false;
  if (!status) {
    status = find_ids(tape, data, invocation, tape_id_vector_data(&ids), &any);
  }
  if (!status && any && needs_copies(base->effective_outer, invocation)) {
    status = copy_on_recorded(base, invocation, tape_id_vector_data(&ids));
  }
  if (status) {
    status = loom_op_invocation_fail(invocation, status, true);
  } else if (!any && !data->collective) {
    status = loom__passthrough_forward(base, invocation, data->base.outer_op);
  } else {
    // A collective is recorded even untracked (a broadcast's receivers):
    // its backward pass is a collective this participant must join.
    status = run_and_record(base, invocation, data, tape_id_vector_data(&ids),
                            loom__handle_vector_data(&saved),
                            loom__metadata_vector_data(&metadata));
  }
  tape_id_vector_deinitialize(&ids, allocator);
  loom__handle_vector_deinitialize(&saved, allocator);
  loom__metadata_vector_deinitialize(&metadata, allocator);
  return status;
}
