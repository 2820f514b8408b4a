// Function calls on the tape (loom/op_handler.h's execute_function_call):
// a call of a stateless function whose parameters the tape tracks is
// recorded as one node — PartitionedCall with attr `f` — rather than its
// body op by op. The body runs with the tape paused; the node's gradient
// runs the call again under a tape of its own, which records the body, and
// takes that tape's gradient (TensorFlow's SymbolicGradient of a call):
// the call keeps only its inputs alive, not the body's intermediates.
//
// An input's summary is whether the tape tracks it: calls that track the
// same inputs share a replay, on which the tape keeps the node's
// attributes (made once per key, then shared by the nodes of every step's
// tape). A call the tape leaves (stateful, a captured value tracked, a
// variable's handle among its inputs, the tape paused, a tape computing a
// call's gradient) runs op by op and the tape records the body's ops.

#include <string.h>

#include "corert/corert_internal.h"
#include "handlers/tape/tape_call_backward.h"
#include "handlers/tape/tape_internal.h"

// Its address is the kind of the tape's summaries.
static const char kSummaryKind = 'T';

// The id of `handle` on the tape, or -1.
static int64_t tracked_id(tape_t* tape, loom_tensor_handle_t* handle) {
  int64_t id = loom__tape_tagged_id(tape, handle);
  if (id >= 0) return id;
  atomic_thread_fence(memory_order_acquire);  // as find_ids
  if (!loom__tape_any_spilled(tape)) return -1;
  loom__tape_lock(tape);
  id = tape->released ? -1 : loom__tape_lookup_locked(tape, handle);
  loom__tape_unlock(tape);
  return id;
}

loom_status_t loom__tape_function_input_summary(
    loom_op_handler_t* handler, loom_tensor_handle_t* handle,
    loom_function_input_summary_t* out_summary) {
  tape_t* tape = loom__tape_of(handler);
  out_summary->kind = &kSummaryKind;
  out_summary->bits = tape && tracked_id(tape, handle) >= 0 ? 1 : 0;
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// The gradient of a call
//===----------------------------------------------------------------------===//

static _Atomic(loom__tape_call_backward_fn_t) g_call_backward;

void loom__tape_set_call_backward(loom__tape_call_backward_fn_t fn) {
  atomic_store_explicit(&g_call_backward, fn, memory_order_release);
}

void loom__tape_leave_calls(loom_op_handler_t* tape) {
  loom__tape_of(tape)->leaves_calls = true;
}

// The call again under a tape of its own (which leaves calls, so that it
// records the body): ys[0, m) and the gradients of the watched inputs.
// Asks the installed builder of backward functions first.
static loom_status_t call_gradient(loom_gradient_context_t* ctx,
                                   loom_tensor_handle_t* const* dys,
                                   loom_tensor_handle_t** dxs,
                                   void* user_data) {
  (void)user_data;
  loom_attr_value_t f;
  if (!loom_gradient_context_attr(ctx, "f", &f) ||
      f.kind != LOOM_ATTR_KIND_FUNC || f.is_list) {
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "the gradient of a recorded call has no attr 'f'");
  }
  char name[256];
  if (f.u.string.size >= sizeof(name)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function name of %zu bytes is too long",
                            f.u.string.size);
  }
  memcpy(name, f.u.string.data, f.u.string.size);
  name[f.u.string.size] = '\0';
  loom__tape_call_backward_fn_t backward =
      atomic_load_explicit(&g_call_backward, memory_order_acquire);
  if (backward) {
    bool done = false;
    loom_status_t status = backward(ctx, name, dys, dxs, &done);
    if (status || done) return status;
  }
  loom_context_t* eager = loom_gradient_context_eager(ctx);
  int32_t n = loom_gradient_context_num_inputs(ctx);
  int32_t m = loom_gradient_context_num_outputs(ctx);
  loom_allocator_t allocator = loom_allocator_system();
  // ys[m], seeds[m], sources[n], grads[n] (all owned), index[n]
  size_t count = (size_t)(2 * m + 2 * n) + 1;
  loom_tensor_handle_t** handles = NULL;
  int32_t* index = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator, sizeof(*handles) * count, (void**)&handles));
  loom_status_t status = loom_allocator_calloc(
      allocator, sizeof(*index) * ((size_t)n + 1), (void**)&index);
  loom_tensor_handle_t** ys = handles;
  loom_tensor_handle_t** seeds = ys + m;
  loom_tensor_handle_t** sources = seeds + m;
  loom_tensor_handle_t** grads = sources + n;
  loom_op_handler_t* tape = NULL;
  if (!status) status = loom_tape_create(eager, NULL, &tape);
  if (!status) loom__tape_of(tape)->leaves_calls = true;
  bool entered = false;
  if (!status) {
    status = loom_context_enter_scope(eager, tape);
    entered = !status;
  }
  // The inputs to differentiate by are new handles (Identity): the tape
  // running this backward pass, which holds its lock meanwhile, tags the
  // forward inputs, and watching one of them would take its tag over.
  int32_t watched = 0;
  for (int32_t i = 0; !status && i < n; ++i) {
    loom_tensor_handle_t* x = loom_gradient_context_input(ctx, i);
    const loom_tensor_metadata_t* metadata =
        loom_gradient_context_input_metadata(ctx, i);
    if (!x || !loom_gradient_context_input_needs_gradient(ctx, i) ||
        !loom_dtype_is_floating(metadata->dtype)) {
      continue;
    }
    status = loom__grad_unary(ctx, "Identity", x, &sources[watched]);
    if (!status) status = loom_tape_watch(tape, sources[watched]);
    index[watched++] = i;
  }
  loom_eager_op_t* op = NULL;
  if (!status) status = loom_eager_op_create(eager, name, &op);
  for (int32_t i = 0, w = 0; !status && i < n; ++i) {
    loom_tensor_handle_t* x = loom_gradient_context_input(ctx, i);
    if (w < watched && index[w] == i) x = sources[w++];
    status = loom_eager_op_add_input(op, x);
  }
  int32_t made = 0;
  if (!status) status = loom_eager_op_execute(op, ys, m, &made);
  if (!status && made != m) {
    status = loom_make_status(LOOM_STATUS_INTERNAL,
                              "function '%s' gave %d results, %d expected",
                              name, made, m);
  }
  if (op) loom_eager_op_destroy(op);
  if (entered) {
    loom_status_t exited = loom_context_exit_scope(eager);
    if (!status) {
      status = exited;
    } else {
      loom_status_free(exited);
    }
  }
  // The targets: the outputs a gradient flows into, moved to the front of
  // ys (seeds[t] is the gradient of ys[t]).
  int32_t num_targets = 0;
  for (int32_t k = 0; !status && k < m; ++k) {
    if (!dys[k]) continue;
    loom_tensor_handle_retain(dys[k]);
    seeds[num_targets] = dys[k];
    // ys[num_targets] <-> ys[k]: ys stays owned in full below.
    loom_tensor_handle_t* y = ys[k];
    ys[k] = ys[num_targets];
    ys[num_targets++] = y;
  }
  if (!status && watched && num_targets) {
    status = loom_tape_gradient(tape, ys, num_targets, sources, watched, seeds,
                                LOOM_UNCONNECTED_ZERO, grads);
  }
  for (int32_t j = 0; !status && j < watched; ++j) {
    dxs[index[j]] = grads[j];
    grads[j] = NULL;
  }
  for (size_t i = 0; i < count; ++i) loom_tensor_handle_release(handles[i]);
  loom_op_handler_release(tape);
  loom_allocator_free(allocator, index);
  loom_allocator_free(allocator, handles);
  if (status) {
    status = loom_status_annotate(status, "gradient of a call of '%s'", name);
  }
  return status;
}

static const loom_gradient_def_t kCallGradient = {
    .struct_size = sizeof(loom_gradient_def_t),
    .op_name = "PartitionedCall",
    .fn = call_gradient,
    .inputs_used = LOOM_GRADIENT_USES_ALL,
    .outputs_used = LOOM_GRADIENT_USES_NONE,
};

//===----------------------------------------------------------------------===//
// Taking a call
//===----------------------------------------------------------------------===//

static void release_frozen(void* attrs) {
  loom_op_attrs_release((const loom_op_attrs_t*)attrs);
}

// The node's attrs, {f: the function}: the replay's, made when it has none.
// *out_frozen is a new reference.
static loom_status_t node_attrs(loom_function_call_t* call,
                                const loom_op_attrs_t** out_frozen) {
  const loom_op_attrs_t* frozen = call->replay_data;
  if (frozen) return loom_op_attrs_freeze(frozen, out_frozen);
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  loom_status_t status = loom_op_attrs_set_func(
      &attrs, "f", call->function_name, strlen(call->function_name));
  if (!status) status = loom_op_attrs_freeze(&attrs, &frozen);
  loom_op_attrs_deinitialize(&attrs);
  if (status) return status;
  *out_frozen = frozen;
  // The replay keeps one more reference (when it takes it).
  const loom_op_attrs_t* kept = NULL;
  loom_status_ignore(loom_op_attrs_freeze(frozen, &kept));
  if (!call->set_replay_data(call, (void*)kept, release_frozen)) {
    loom_op_attrs_release(kept);
  }
  return loom_ok_status();
}

// Records the call, which ran (`results`), as one node.
static loom_status_t record_call(const loom__passthrough_t* base,
                                 loom_function_call_t* call, const int64_t* ids,
                                 loom_tensor_handle_t** results) {
  tape_t* tape = base->shared;
  int32_t n = call->num_inputs - call->num_captured;
  int32_t m = call->num_outputs;
  loom_allocator_t allocator = base->allocator;
  loom_tensor_handle_t** saved = NULL;
  loom_tensor_metadata_t* metadata = NULL;
  const loom_op_attrs_t* attrs = NULL;
  loom_status_t status = loom_allocator_calloc(
      allocator, sizeof(*saved) * ((size_t)n + 1), (void**)&saved);
  if (!status) {
    status = loom_allocator_calloc(allocator,
                                   sizeof(*metadata) * ((size_t)(n + m) + 1),
                                   (void**)&metadata);
  }
  for (int32_t i = 0; !status && i < n; ++i) {
    status = loom__grad_metadata(call->inputs[i], &metadata[i]);
    loom_tensor_handle_retain(call->inputs[i]);
    saved[i] = call->inputs[i];
  }
  for (int32_t k = 0; !status && k < m; ++k) {
    status = loom__grad_metadata(results[k], &metadata[n + k]);
  }
  if (!status) status = node_attrs(call, &attrs);
  if (!status) {
    tape_record_t record = {
        .def = &kCallGradient,
        .op_name = "PartitionedCall",
        .attrs = attrs,
        .outer = base->effective_outer,
        .num_inputs = n,
        .input_ids = ids,
        .saved_inputs = saved,
        .input_metadata = metadata,
        .num_outputs = m,
        .results = results,
        .output_metadata = metadata + n,
    };
    loom__tape_lock(tape);
    if (!tape->released) status = loom__tape_add_node_locked(tape, &record);
    loom__tape_unlock(tape);
  }
  if (attrs) loom_op_attrs_release(attrs);
  if (saved) loom__grad_release_all(saved, n);
  loom_allocator_free(allocator, saved);
  loom_allocator_free(allocator, metadata);
  return status;
}

// Runs the call beneath the tape: on the CPU in a scope of its own when
// that is the tape's outer handler (entered as a handler executing an op
// enters it, so it replaces the scopes above: the call runs its plan),
// else offered whole to the outer handler (a vmap batches it), or op by op
// through the thread's scopes.
static loom_status_t run_beneath(const loom__passthrough_t* base,
                                 loom_function_call_t* call,
                                 loom_tensor_handle_t** results) {
  if (base->effective_outer != loom_context_cpu(base->context)) {
    return loom__passthrough_run_call_beneath(base, call, results);
  }
  ++loom__handler_execution_depth;
  loom_status_t status =
      loom_context_enter_scope(base->context, base->effective_outer);
  --loom__handler_execution_depth;
  if (status) return status;
  status = call->run(call, results);
  loom_status_t exited = loom_context_exit_scope(base->context);
  if (!status) return exited;
  loom_status_free(exited);
  return status;
}

loom_status_t loom__tape_execute_function_call(loom_op_handler_t* handler,
                                               loom_function_call_t* call,
                                               loom_tensor_handle_t** results,
                                               bool* out_taken) {
  *out_taken = false;
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  tape_t* tape = base->shared;
  if (tape->leaves_calls || call->stateful || loom__tape_paused(tape) ||
      !atomic_load_explicit(&tape->tracking, memory_order_relaxed)) {
    return loom_ok_status();
  }
  int32_t n = call->num_inputs;
  int32_t parameters = n - call->num_captured;
  int64_t* ids = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      base->allocator, sizeof(*ids) * ((size_t)n + 1), (void**)&ids));
  bool any = false;
  bool leave = false;
  for (int32_t i = 0; i < n; ++i) {
    ids[i] = tracked_id(tape, call->inputs[i]);
    any |= ids[i] >= 0;
    // A tracked captured value, or a variable (watched when the body reads
    // it): their gradients flow through the body's ops.
    leave |= (ids[i] >= 0 && i >= parameters) ||
             loom_tensor_handle_dtype(call->inputs[i]) == LOOM_DTYPE_RESOURCE;
  }
  loom_status_t status = loom_ok_status();
  if (any && !leave) {
    status = loom__tape_pause(tape);
    if (!status) {
      status = run_beneath(base, call, results);
      (void)loom__tape_resume(tape);
      *out_taken = true;
      if (!status) {
        status = record_call(base, call, ids, results);
        if (status) {
          // The call ran: its results go with the error.
          for (int32_t k = 0; k < call->num_outputs; ++k) {
            loom_tensor_handle_release(results[k]);
            results[k] = NULL;
          }
          status = loom_status_annotate(status,
                                        "recording a call of '%s' on a "
                                        "gradient tape",
                                        call->function_name);
        }
      }
    }
  }
  loom_allocator_free(base->allocator, ids);
  return status;
}
