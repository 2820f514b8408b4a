// The recompute handler (gradient checkpointing) as a pass-through op
// handler.
//
// It passes every op on to the handler it was merged with, leaving on the
// invocation a note naming its segment (loom__recompute_segment_of). A
// tape below it (entered before it) reads the note and records the op in
// that segment: the nodes keep only the tensors made outside the segment,
// and the backward pass executes the segment's ops again from those to
// get back what their gradient functions use. The handler itself keeps
// nothing; each handler (and its merges) is one segment, whose identity is
// the state they share.

#include <stdio.h>

#include "frontend/passthrough_handler.h"
#include "handlers/autodiff/autodiff_internal.h"

static loom_status_t recompute_execute(loom_op_handler_t* handler,
                                       loom_op_invocation_t* invocation) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  // An enclosing recompute scope (below this one) leaves its own note when
  // the op reaches it: the outermost segment, the last note, wins.
  return loom__passthrough_forward_noted(
      base, invocation, &loom__recompute_segment_note, base->shared);
}

static size_t recompute_debug_string(const loom_op_handler_t* handler,
                                     char* buffer, size_t capacity) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  return (size_t)snprintf(buffer, capacity, "recompute handler (segment %p)",
                          base->shared);
}

static const loom_op_handler_vtable_t kRecomputeVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "RECOMPUTE",
    LOOM__PASSTHROUGH_HOOKS,
    .execute = recompute_execute,
    .debug_string = recompute_debug_string,
};

static const loom__passthrough_type_t kRecomputeType = {
    .vtable = &kRecomputeVtable,
    .state_size = sizeof(loom__passthrough_t),
    .retain_shared = loom__passthrough_shared_retain,
    .release_shared = loom__passthrough_shared_release,
};

loom_status_t loom_recompute_handler_create(loom_context_t* context,
                                            loom_op_handler_t** out_handler) {
  if (out_handler) *out_handler = NULL;
  if (!context || !out_handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_recompute_handler_create: %s is NULL",
                            !context ? "context" : "out_handler");
  }
  // The segment: the state a recompute handler and its merges share.
  loom_allocator_t allocator = loom_allocator_default();
  void* segment = NULL;
  LOOM_RETURN_IF_ERROR(loom__passthrough_shared_create(
      allocator, sizeof(loom__passthrough_shared_t), &segment));
  loom_status_t status = loom__passthrough_create(
      &kRecomputeType, context, allocator, segment, NULL, out_handler);
  loom__passthrough_shared_release(segment);  // the handler holds it now
  return status;
}
