// The gradient tape (reverse mode) as a pass-through op handler.
//
// Every op of the tape's scope runs on the handler the tape was merged with
// and its results are that handler's tensors. When an input of the op is
// watched or was produced by a recorded op, and the op is differentiable,
// the tape records a node (tape_recording.c): the op, its given attributes,
// the dtypes and shapes of its inputs and outputs, the inputs and outputs
// its gradient function declared it uses, and the handler the op ran on
// (its gradient runs there). The watched tensors are held, and their tags
// cleared when the tape releases what it recorded, so the next tape (a
// training loop's next step) tags them again.
//
// This file holds the tape itself: its handler on the pass-through base,
// its lifetime, pausing, and the public calls other than the gradient.

#include <sched.h>
#include <string.h>
#include <time.h>

#include "handlers/tape/tape_internal.h"

// Tags name tapes by id on handles any context may share (a host handle is
// every context's CPU tensor), so ids are unique in the process.
static _Atomic uint64_t g_next_tape_id = 1;

void loom__tape_spin_lock_slow(_Atomic bool* flag) {
  for (int spins = 0;; ++spins) {
    if (!atomic_load_explicit(flag, memory_order_relaxed) &&
        !atomic_exchange_explicit(flag, true, memory_order_acquire)) {
      return;
    }
    if (spins < 64) {
      sched_yield();
    } else {
      // Held long (a backward pass): sleep rather than spin.
      struct timespec pause = {0, 50000};
      nanosleep(&pause, NULL);
    }
  }
}

//===----------------------------------------------------------------------===//
// Pausing, per thread
//===----------------------------------------------------------------------===//

// The calling thread's entry in `pauses`, or NULL (pauses_locked held).
static tape_pause_t* find_pause(tape_t* tape) {
  pthread_t self = pthread_self();
  tape_pause_t* pauses = tape_pause_vector_data(&tape->pauses);
  for (size_t i = 0; i < tape_pause_vector_size(&tape->pauses); ++i) {
    if (pthread_equal(pauses[i].thread, self)) return &pauses[i];
  }
  return NULL;
}

static void publish_pauses(tape_t* tape) {
  atomic_store_explicit(&tape->num_pauses,
                        (int32_t)tape_pause_vector_size(&tape->pauses),
                        memory_order_relaxed);
}

loom_status_t loom__tape_pause(tape_t* tape) {
  loom__tape_spin_lock(&tape->pauses_locked);
  loom_status_t status = loom_ok_status();
  tape_pause_t* pause = find_pause(tape);
  if (pause) {
    pause->depth++;
  } else {
    tape_pause_t entry = {.thread = pthread_self(), .depth = 1};
    status = tape_pause_vector_push(&tape->pauses, tape->allocator, entry);
  }
  publish_pauses(tape);
  loom__tape_spin_unlock(&tape->pauses_locked);
  return status;
}

bool loom__tape_resume(tape_t* tape) {
  loom__tape_spin_lock(&tape->pauses_locked);
  tape_pause_t* pause = find_pause(tape);
  if (pause && --pause->depth == 0) {
    tape_pause_vector_erase_unordered(
        &tape->pauses, (size_t)(pause - tape_pause_vector_data(&tape->pauses)));
  }
  publish_pauses(tape);
  loom__tape_spin_unlock(&tape->pauses_locked);
  return pause != NULL;
}

bool loom__tape_paused_slow(tape_t* tape) {
  loom__tape_spin_lock(&tape->pauses_locked);
  bool paused = find_pause(tape) != NULL;
  loom__tape_spin_unlock(&tape->pauses_locked);
  return paused;
}

//===----------------------------------------------------------------------===//
// The recording's lifetime
//===----------------------------------------------------------------------===//

void loom__tape_release_node_tensors(tape_node_t* node) {
  // node->outputs follows node->inputs.
  for (int32_t i = 0; i < node->num_inputs + node->num_outputs; ++i) {
    if (!node->inputs[i]) continue;
    loom_tensor_handle_release(node->inputs[i]);
    node->inputs[i] = NULL;
  }
}

void loom__tape_release_recorded_locked(tape_t* tape) {
  tape_node_t** nodes = tape_node_vector_data(&tape->nodes);
  for (size_t i = 0; i < tape_node_vector_size(&tape->nodes); ++i) {
    loom__tape_release_node_tensors(nodes[i]);
    if (nodes[i]->attrs) loom_op_attrs_release(nodes[i]->attrs);
  }
  tape_node_vector_deinitialize(&tape->nodes, tape->allocator);
  loom__tape_release_segments_locked(tape);
  loom__arena_deinitialize(&tape->arena);
  loom__tape_untrack_all_locked(tape);
  loom_op_handler_t** outers = tape_handler_vector_data(&tape->outers);
  for (size_t i = 0; i < tape_handler_vector_size(&tape->outers); ++i) {
    loom_op_handler_release(outers[i]);
  }
  tape_handler_vector_deinitialize(&tape->outers, tape->allocator);
}

// Releases the recording once, when the tape is done with it.
static void finish_locked(tape_t* tape) {
  if (tape->released) return;
  loom__tape_release_recorded_locked(tape);
  tape->released = true;
  atomic_store_explicit(&tape->tracking, false, memory_order_relaxed);
}

static void tape_retain(void* tape) {
  loom__ref_count_inc(&((tape_t*)tape)->ref_count);
}

void loom__tape_release(void* opaque) {
  tape_t* tape = opaque;
  if (!tape || !loom__tape_unref(tape)) return;
  loom__tape_release_recorded_locked(tape);
  loom__hash_map_deinitialize(&tape->spilled);
  tape_pause_vector_deinitialize(&tape->pauses, tape->allocator);
  loom_allocator_free(tape->allocator, tape);
}

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

static loom_status_t tape_prepare_op(loom__passthrough_t* base,
                                     const char* op_name,
                                     const loom_op_def_t* op_def,
                                     loom__passthrough_op_t* opaque) {
  (void)base;
  (void)op_def;
  tape_op_data_t* data = (tape_op_data_t*)opaque;
  // The generation first: a gradient registered meanwhile makes the data
  // look stale, never the other way round.
  data->gradients_generation = loom__gradient_generation();
  data->def = loom_gradient_find(op_name);
  data->record = !data->def || data->def->fn;
  data->reads_variable = strcmp(op_name, "ReadVariableOp") == 0;
  data->collective = data->def && data->def->fn &&
                     (data->def->flags & LOOM_GRADIENT_COLLECTIVE);
  return loom_ok_status();
}

// Another tape's data for the same op (on the same outer handler) serves
// while no gradient was registered since it was made.
static bool tape_op_data_reusable(const loom__passthrough_t* base,
                                  const loom__passthrough_op_t* data) {
  (void)base;
  return ((const tape_op_data_t*)data)->gradients_generation ==
         loom__gradient_generation();
}

static void tape_deinitialize(loom__passthrough_t* base) {
  if (base->outer) return;
  // The tape handler itself (not a merge) is gone: nobody can ask for
  // gradients any more, though merges may live on in the context or in
  // prepared ops. Release the recording now, and clear the tags.
  tape_t* tape = base->shared;
  loom__tape_lock(tape);
  finish_locked(tape);
  loom__tape_unlock(tape);
}

static size_t tape_debug_string(const loom_op_handler_t* handler, char* buffer,
                                size_t capacity) {
  tape_t* tape = loom__tape_of(handler);
  loom__tape_lock(tape);
  int64_t nodes = (int64_t)tape_node_vector_size(&tape->nodes);
  size_t held = loom__hash_map_size(&tape->spilled) +
                loom__handle_vector_size(&tape->watched);
  int64_t segments = tape->num_segments;
  bool released = tape->released;
  loom__tape_unlock(tape);
  char extra[48] = "";
  if (segments) {
    snprintf(extra, sizeof(extra), ", %lld recompute segments",
             (long long)segments);
  }
  return (size_t)snprintf(
      buffer, capacity, "gradient tape%s (%lld ops, %zu tensors tracked%s%s)",
      tape->options.persistent ? ", persistent" : "", (long long)nodes, held,
      extra, released ? ", released" : "");
}

static const loom_op_handler_vtable_t kTapeVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "TAPE",
    LOOM__PASSTHROUGH_HOOKS,
    .reuse_op_data = loom__passthrough_reuse_op_data,
    .execute = loom__tape_execute,
    .debug_string = tape_debug_string,
    .function_input_summary = loom__tape_function_input_summary,
    .execute_function_call = loom__tape_execute_function_call,
};

const loom__passthrough_type_t loom__tape_type = {
    .vtable = &kTapeVtable,
    .state_size = sizeof(loom__passthrough_t),
    .retain_shared = tape_retain,
    .release_shared = loom__tape_release,
    .deinitialize = tape_deinitialize,
    .op_data_size = sizeof(tape_op_data_t),
    .prepare_op = tape_prepare_op,
    .op_data_reusable = tape_op_data_reusable,
    // A tape is made per step: its ops find their data ready.
    .cache_op_data = true,
};

//===----------------------------------------------------------------------===//
// The public API
//===----------------------------------------------------------------------===//

void loom_tape_options_initialize(loom_tape_options_t* options) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->persistent = false;
  options->watch_accessed_variables = true;
}

loom_status_t loom_tape_create(loom_context_t* context,
                               const loom_tape_options_t* options,
                               loom_op_handler_t** out_tape) {
  if (!context || !out_tape) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tape_create: %s is NULL",
                            !context ? "context" : "out_tape");
  }
  *out_tape = NULL;
  if (options && options->struct_size < sizeof(loom_tape_options_t)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_tape_create: options->struct_size is %zu, expected %zu",
        options->struct_size, sizeof(loom_tape_options_t));
  }
  // The gradients register before the first op is prepared on the tape.
  const loom_gradient_def_t* copy_on_def = loom_gradient_find("CopyOn");
  loom_allocator_t allocator = loom_allocator_default();
  tape_t* tape = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*tape), (void**)&tape));
  loom__ref_count_init(&tape->ref_count);
  tape->allocator = allocator;
  tape->context = context;
  tape->id = atomic_fetch_add(&g_next_tape_id, 1);
  tape->tag_base = tape->id <= TAPE_TAG_ID_MASK ? tape->id << 32 : 0;
  tape->copy_on_def = copy_on_def;
  atomic_init(&tape->tracking, false);
  atomic_init(&tape->num_spilled, 0);
  atomic_init(&tape->num_pauses, 0);
  atomic_init(&tape->pauses_locked, false);
  tape_pause_vector_initialize(&tape->pauses);
  if (options) {
    tape->options = *options;
  } else {
    loom_tape_options_initialize(&tape->options);
  }
  tape->options.struct_size = sizeof(tape->options);
  atomic_init(&tape->locked, false);
  loom__arena_initialize(&tape->arena, allocator);
  tape_node_vector_initialize(&tape->nodes);
  loom__handle_vector_initialize(&tape->watched);
  tape_handler_vector_initialize(&tape->outers);
  loom__hash_map_initialize(&tape->spilled, allocator);
  tape->sweep_at = kTapeSweepMinimum;
  loom_status_t status = loom__tape_register(tape);
  if (status) {
    loom__hash_map_deinitialize(&tape->spilled);
    loom_allocator_free(allocator, tape);
    return status;
  }
  status = loom__passthrough_create(&loom__tape_type, context, allocator, tape,
                                    NULL, out_tape);
  loom__tape_release(tape);  // the handler holds it now (or it is freed)
  return status;
}

loom_status_t loom__tape_not_a_tape(const char* function,
                                    const loom_op_handler_t* handler) {
  if (!handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: tape is NULL",
                            function);
  }
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "%s: the handler is not a gradient tape (type '%s')",
                          function, loom_op_handler_type_name(handler));
}

loom_status_t loom_tape_watch(loom_op_handler_t* handler,
                              loom_tensor_handle_t* handle) {
  tape_t* tape = loom__tape_of(handler);
  if (!tape) return loom__tape_not_a_tape("loom_tape_watch", handler);
  if (!handle) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tape_watch: handle is NULL");
  }
  uint64_t tag = loom_tensor_handle_tag(handle);
  if (tag && tape->tag_base && (tag & ~TAPE_TAG_ID_MASK) != tape->tag_base) {
    loom__tape_take_tag_over(handle, tag);
  }
  loom__tape_lock(tape);
  loom_status_t status =
      tape->released
          ? loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                             "loom_tape_watch: the tape is not persistent "
                             "and has computed its gradient already")
          : loom__tape_watch_locked(tape, handle);
  loom__tape_unlock(tape);
  return status;
}

loom_status_t loom_tape_stop_recording(loom_op_handler_t* handler) {
  tape_t* tape = loom__tape_of(handler);
  if (!tape) return loom__tape_not_a_tape("loom_tape_stop_recording", handler);
  return loom__tape_pause(tape);
}

loom_status_t loom_tape_resume_recording(loom_op_handler_t* handler) {
  tape_t* tape = loom__tape_of(handler);
  if (!tape) {
    return loom__tape_not_a_tape("loom_tape_resume_recording", handler);
  }
  if (!loom__tape_resume(tape)) {
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "loom_tape_resume_recording: recording was not "
                            "stopped on this thread");
  }
  return loom_ok_status();
}

// Counts `handle` (once) into the kept tensors of `statistics`.
static loom_status_t count_kept(loom__hash_map_t* seen,
                                loom_tensor_handle_t* handle,
                                loom_tape_statistics_t* statistics) {
  uint64_t key = (uint64_t)(uintptr_t)handle;
  if (!handle || loom__hash_map_find(seen, key, NULL)) return loom_ok_status();
  LOOM_RETURN_IF_ERROR(loom__hash_map_insert(seen, key, 0));
  statistics->num_kept_tensors++;
  loom_tensor_metadata_t metadata;
  if (!loom_tensor_handle_metadata_available(handle)) return loom_ok_status();
  loom_status_t unknown = loom_tensor_handle_metadata(handle, &metadata);
  if (unknown) {
    loom_status_free(unknown);  // an error handle: no bytes
    return loom_ok_status();
  }
  if (loom_shape_is_fully_defined(&metadata.shape)) {
    statistics->kept_bytes += loom_shape_num_elements(&metadata.shape) *
                              (int64_t)loom_dtype_size(metadata.dtype);
  }
  return loom_ok_status();
}

loom_status_t loom_tape_statistics(loom_op_handler_t* handler,
                                   loom_tape_statistics_t* out_statistics) {
  tape_t* tape = loom__tape_of(handler);
  if (!tape) return loom__tape_not_a_tape("loom_tape_statistics", handler);
  if (!out_statistics ||
      out_statistics->struct_size < sizeof(loom_tape_statistics_t)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "loom_tape_statistics: %s",
        !out_statistics ? "out_statistics is NULL"
                        : "out_statistics->struct_size is too small (set it "
                          "to sizeof(loom_tape_statistics_t))");
  }
  loom__hash_map_t seen;
  loom__hash_map_initialize(&seen, tape->allocator);
  loom_tape_statistics_t result = {.struct_size = sizeof(result)};
  loom_status_t status = loom_ok_status();
  loom__tape_lock(tape);
  tape_node_t** nodes = tape_node_vector_data(&tape->nodes);
  result.num_ops = (int64_t)tape_node_vector_size(&tape->nodes);
  result.num_recompute_segments = tape->num_segments;
  for (int64_t i = 0; i < result.num_ops && !status; ++i) {
    // node->outputs follows node->inputs
    int32_t count = nodes[i]->num_inputs + nodes[i]->num_outputs;
    for (int32_t j = 0; j < count && !status; ++j) {
      status = count_kept(&seen, nodes[i]->inputs[j], &result);
    }
  }
  loom__tape_unlock(tape);
  loom__hash_map_deinitialize(&seen);
  if (!status) *out_statistics = result;
  return status;
}
