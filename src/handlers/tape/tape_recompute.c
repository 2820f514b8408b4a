// Recompute segments (gradient checkpointing). Ops a recompute handler
// passes on (src/handlers/recompute/; the note loom__recompute_segment_of
// reads) are recorded as a segment: their nodes keep only the tensors that
// come from outside the segment, and the backward pass re-executes the
// segment from those to get back the tensors its gradient functions use,
// then drops them again.

#include "handlers/tape/tape_internal.h"

loom_status_t loom__tape_segment_for_locked(tape_t* tape,
                                            loom__passthrough_shared_t* owner,
                                            tape_segment_t** out_segment) {
  int64_t num_nodes = (int64_t)tape_node_vector_size(&tape->nodes);
  tape_segment_t* open = tape->open_segment;
  if (open && open->owner == owner &&
      open->first_node + open->num_nodes == num_nodes &&
      open->end_id == tape->next_id) {
    *out_segment = open;
    return loom_ok_status();
  }
  tape_segment_t* segment = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate_uninitialized(
      &tape->arena, sizeof(*segment), (void**)&segment));
  loom__passthrough_shared_retain(owner);
  *segment = (tape_segment_t){
      .owner = owner,
      .previous = tape->open_segment,
      .first_node = num_nodes,
      .first_id = tape->next_id,
      .end_id = tape->next_id,
  };
  tape->open_segment = segment;
  tape->num_segments++;
  *out_segment = segment;
  return loom_ok_status();
}

void loom__tape_release_segments_locked(tape_t* tape) {
  for (tape_segment_t* segment = tape->open_segment; segment;
       segment = segment->previous) {
    loom__passthrough_shared_release(segment->owner);
  }
  tape->open_segment = NULL;
  tape->num_segments = 0;
}

// Executes a recorded op again on `inputs` (the forward op's placement:
// the scope of its outer handler is entered).
static loom_status_t replay(tape_backward_t* b, const tape_node_t* node,
                            loom_tensor_handle_t* const* inputs,
                            loom_tensor_handle_t** results) {
  LOOM_RETURN_IF_ERROR(loom__tape_enter_outer(b, node->outer));
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__grad_op_cache_get(&b->cache, b->eager, node->op_name, &op));
  loom_status_t status = loom_ok_status();
  for (int32_t j = 0; j < node->num_inputs && !status; ++j) {
    status = loom_eager_op_add_input(op, inputs[j]);
  }
  if (!status && node->attrs) status = loom_eager_op_add_attrs(op, node->attrs);
  int32_t count = 0;
  if (!status) {
    status = loom_eager_op_execute(op, results, node->num_outputs, &count);
  }
  if (!status && count != node->num_outputs) {
    loom__grad_release_all(results, count);
    status = loom_make_status(LOOM_STATUS_INTERNAL, "%d results, expected %d",
                              count, node->num_outputs);
  }
  loom__grad_op_cache_put(&b->cache, op, node->op_name);
  return status;
}

// Re-executes `node` of `segment`, whose tensors made so far are in
// `made` (by id from the segment's first), and gives it the recomputed
// tensors its gradient function uses.
static loom_status_t rematerialize_node(tape_backward_t* b,
                                        tape_segment_t* segment,
                                        tape_node_t* node,
                                        loom_tensor_handle_t** made) {
  int32_t n = node->num_inputs;
  loom__handle_vector_t inputs_vector;
  loom__handle_vector_initialize(&inputs_vector);
  loom_status_t status =
      loom__handle_vector_resize(&inputs_vector, b->tape->allocator, (size_t)n);
  loom_tensor_handle_t** inputs = loom__handle_vector_data(&inputs_vector);
  for (int32_t j = 0; j < n && !status; ++j) {
    int64_t id = node->input_ids[j];
    inputs[j] = loom__tape_made_in(segment, id) ? made[id - segment->first_id]
                                                : node->inputs[j];
    if (!inputs[j]) {
      status =
          loom_make_status(LOOM_STATUS_INTERNAL, "input %d was not kept", j);
    }
  }
  loom_tensor_handle_t** results =
      made + node->first_output_id - segment->first_id;
  if (!status) status = replay(b, node, inputs, results);
  uint64_t inputs_used = node->def ? node->def->inputs_used : 0;
  uint64_t outputs_used = node->def ? node->def->outputs_used : 0;
  for (int32_t j = 0; j < n && !status; ++j) {
    if (!loom__tape_made_in(segment, node->input_ids[j]) ||
        !loom__tape_uses(inputs_used, j)) {
      continue;
    }
    loom_tensor_handle_retain(inputs[j]);
    node->inputs[j] = inputs[j];
  }
  for (int32_t k = 0; k < node->num_outputs && !status; ++k) {
    if (!loom__tape_uses(outputs_used, k)) continue;
    loom_tensor_handle_retain(results[k]);
    node->outputs[k] = results[k];
  }
  loom__handle_vector_deinitialize(&inputs_vector, b->tape->allocator);
  if (status) {
    status = loom_status_annotate(status, "recomputing %s", node->op_name);
  }
  return status;
}

loom_status_t loom__tape_materialize(tape_backward_t* b,
                                     tape_segment_t* segment, int64_t last) {
  int64_t count = segment->end_id - segment->first_id;
  loom_tensor_handle_t** made = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      b->tape->allocator, sizeof(*made) * (size_t)(count + 1), (void**)&made));
  tape_node_t** nodes = tape_node_vector_data(&b->tape->nodes);
  loom_status_t status = loom_ok_status();
  for (int64_t i = segment->first_node; i <= last && !status; ++i) {
    status = rematerialize_node(b, segment, nodes[i], made);
  }
  loom__grad_release_all(made, (int32_t)count);
  loom_allocator_free(b->tape->allocator, made);
  segment->materialized = true;  // partly, on failure: dematerialize frees
  return status;
}

void loom__tape_dematerialize(tape_t* tape, tape_segment_t* segment) {
  tape_node_t** nodes = tape_node_vector_data(&tape->nodes);
  for (int64_t i = segment->first_node;
       i < segment->first_node + segment->num_nodes; ++i) {
    tape_node_t* node = nodes[i];
    for (int32_t j = 0; j < node->num_inputs; ++j) {
      if (!loom__tape_made_in(segment, node->input_ids[j])) continue;
      loom_tensor_handle_release(node->inputs[j]);
      node->inputs[j] = NULL;
    }
    for (int32_t k = 0; k < node->num_outputs; ++k) {
      loom_tensor_handle_release(node->outputs[k]);
      node->outputs[k] = NULL;
    }
  }
  segment->materialized = false;
}
