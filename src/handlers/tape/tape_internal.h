// The gradient tape's private header, shared by the files of
// src/handlers/tape/, one concern each:
//   tape.c            the tape and its handler (on the pass-through base),
//                     pausing, statistics;
//   tape_tracking.c   which tensors the tape tracks: tags, ids, the map of
//                     the others, watching, handing a tag over;
//   tape_recording.c  the execute hook: recording ops as nodes;
//   tape_backward.c   the backward pass (loom_tape_gradient);
//   tape_recompute.c  recompute segments: recording and re-executing them;
//   tape_jacobian.c   loom_tape_jacobian, row by row;
//   tape_call.c       function calls recorded as one node.
//
// Tensors are known by their handles, and a handle says which tape tracks
// it through its tag (loom_tensor_handle_tag: this tape's serial and the
// tensor's id), so recognising a tracked input costs one load and the tape
// keeps no reference to the tensors it only tracks: an intermediate the
// caller drops is freed at once, and an op may reuse its input's buffer. A
// handle whose tag another tape holds (nested tapes) is tracked in a map
// instead, which keeps one reference to it until nobody else holds it.

#ifndef LOOM_HANDLERS_TAPE_TAPE_INTERNAL_H_
#define LOOM_HANDLERS_TAPE_TAPE_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>

#include "base/arena.h"
#include "base/hash_map.h"
#include "base/ref_count.h"
#include "base/small_vector.h"
#include "frontend/passthrough_handler.h"
#include "handlers/autodiff/autodiff_internal.h"
#include "handlers/autodiff/grad_ops.h"

typedef struct tape_segment_t tape_segment_t;

// One recorded op. Allocated in the tape's arena with its arrays.
typedef struct tape_node_t {
  const loom_gradient_def_t* def;  // NULL: the op has no registered gradient
  const char* op_name;
  const loom_op_def_t* op_def;
  const loom_op_attrs_t* attrs;  // frozen; NULL when none were given
  loom_op_handler_t* outer;      // borrowed (the tape holds its outers)
  tape_segment_t* segment;       // NULL: not recorded in a recompute scope
  int32_t num_inputs;
  int32_t num_outputs;
  int64_t first_output_id;           // outputs have consecutive ids
  int64_t* input_ids;                // -1: not tracked
  loom_tensor_handle_t** inputs;     // kept (NULL where not used)
  loom_tensor_handle_t** outputs;    // kept (NULL where not used)
  loom_tensor_metadata_t* metadata;  // inputs, then outputs
} tape_node_t;

// Consecutive nodes recorded in one recompute segment. Its nodes keep the
// inputs made outside it (ids below first_id, or untracked) and nothing
// else; while materialized (during a backward pass) they also hold the
// recomputed tensors their gradient functions use.
struct tape_segment_t {
  // The recompute handler's segment (loom__recompute_segment_of), retained
  // so that no other segment takes its address while the tape keeps it.
  loom__passthrough_shared_t* owner;
  tape_segment_t* previous;  // recorded before it, or NULL
  int64_t first_node;        // index in tape->nodes
  int64_t num_nodes;
  int64_t first_id;  // the tensors made in it: [first_id, end_id)
  int64_t end_id;
  bool materialized;
};

// A thread that stopped recording on the tape, and how many times.
typedef struct tape_pause_t {
  pthread_t thread;
  int32_t depth;
} tape_pause_t;

LOOM_DEFINE_SMALL_VECTOR(tape_node_vector, tape_node_t*, 16)
LOOM_DEFINE_SMALL_VECTOR(tape_handler_vector, loom_op_handler_t*, 4)
LOOM_DEFINE_SMALL_VECTOR(tape_pause_vector, tape_pause_t, 2)

// What a tape handler and all its merges share (their base's `shared`).
typedef struct tape_t {
  loom__ref_count_t ref_count;
  loom_allocator_t allocator;
  loom_context_t* context;
  uint64_t id;        // unique in the process (tags name the tape)
  uint64_t tag_base;  // id << 32, or 0 when the id does not fit (no tags)
  loom_tape_options_t options;
  const loom_gradient_def_t* copy_on_def;
  // Set once anything is tracked: until then ops pass without locking.
  _Atomic bool tracking;
  // The size of `spilled`, readable without the lock: while 0, an input
  // without this tape's tag is not tracked.
  _Atomic size_t num_spilled;
  // The size of `pauses`, readable without its lock: while 0, no thread
  // has stopped recording.
  _Atomic int32_t num_pauses;
  // A spin lock (loom__tape_spin_lock) apart from `locked`: the backward
  // pass holds that one while its thread runs ops through the tape.
  _Atomic bool pauses_locked;  // pauses
  // The threads that stopped recording (TensorFlow's stop_recording is per
  // thread); the backward pass stops it on its thread too.
  tape_pause_vector_t pauses;
  // A spin lock, taken once per recorded op: an uncontended pthread mutex
  // costs more than the rest of the recording.
  _Atomic bool locked;  // everything below
  bool released;        // a non-persistent tape after its gradient
  // Set before use: the tape leaves the function calls it is offered
  // (a tape computing a call's gradient records the body).
  bool leaves_calls;
  loom__arena_t arena;  // the nodes and segments, until released
  tape_node_vector_t nodes;
  int64_t next_id;
  loom__hash_map_t spilled;       // handle -> id; one reference per handle
  size_t sweep_at;                // map size that triggers the next sweep
  loom__handle_vector_t watched;  // tagged by this tape; retained
  tape_handler_vector_t outers;   // retained, distinct
  tape_segment_t* open_segment;   // the last one recorded, or NULL
  int64_t num_segments;
} tape_t;

// Per op and outer handler: the op prepared on the outer handler and its
// gradient definition, looked up once and shared by the tapes merged on
// that outer handler (loom__passthrough_reuse_op_data): a new tape each
// training step finds its ops ready.
typedef struct tape_op_data_t {
  loom__passthrough_op_t base;
  const loom_gradient_def_t* def;
  uint64_t gradients_generation;  // of the gradient registry, at the look-up
  bool record;                    // false: registered as not differentiable
  bool reads_variable;            // ReadVariableOp: watches its resource
  bool collective;  // LOOM_GRADIENT_COLLECTIVE: recorded untracked too
} tape_op_data_t;

extern const loom__passthrough_type_t loom__tape_type;

// The tape behind a tape handler or one of its merges, or NULL.
static inline tape_t* loom__tape_of(const loom_op_handler_t* handler) {
  loom__passthrough_t* base = loom__passthrough_of(handler, &loom__tape_type);
  return base ? (tape_t*)base->shared : NULL;
}

// Drops a reference to a tape_t (freed after the last).
void loom__tape_release(void* tape);

// INVALID_ARGUMENT for `handler`, NULL or not a tape, given to `function`.
loom_status_t loom__tape_not_a_tape(const char* function,
                                    const loom_op_handler_t* handler);

//===----------------------------------------------------------------------===//
// The lock, and pausing (tape.c)
//===----------------------------------------------------------------------===//

void loom__tape_spin_lock_slow(_Atomic bool* flag);

// Takes a spin lock: one exchange when it is free; it yields, then sleeps,
// while it waits.
static inline void loom__tape_spin_lock(_Atomic bool* flag) {
  if (!atomic_exchange_explicit(flag, true, memory_order_acquire)) return;
  loom__tape_spin_lock_slow(flag);
}

static inline void loom__tape_spin_unlock(_Atomic bool* flag) {
  atomic_store_explicit(flag, false, memory_order_release);
}

static inline void loom__tape_lock(tape_t* tape) {
  loom__tape_spin_lock(&tape->locked);
}

static inline void loom__tape_unlock(tape_t* tape) {
  loom__tape_spin_unlock(&tape->locked);
}

// Stops recording on the calling thread (nested: as often as resumed).
LOOM_MUST_USE_RESULT loom_status_t loom__tape_pause(tape_t* tape);
// Resumes; false when the calling thread had not stopped it.
bool loom__tape_resume(tape_t* tape);
bool loom__tape_paused_slow(tape_t* tape);

// Whether the calling thread stopped recording on the tape.
static inline bool loom__tape_paused(tape_t* tape) {
  return atomic_load_explicit(&tape->num_pauses, memory_order_relaxed) &&
         loom__tape_paused_slow(tape);
}

// Drops everything recorded: nodes, kept tensors, tracked handles; clears
// the tags of the watched handles (lock held).
void loom__tape_release_recorded_locked(tape_t* tape);

//===----------------------------------------------------------------------===//
// Tracking (tape_tracking.c)
//===----------------------------------------------------------------------===//

// A tag is the tape's serial (high half) and the tensor id + 1 (low half).
#define TAPE_TAG_ID_MASK ((uint64_t)0xffffffffu)

enum { kTapeSweepMinimum = 64 };

// Bit `index` of a mask of used inputs or outputs.
static inline bool loom__tape_uses(uint64_t mask, int32_t index) {
  return index >= 64 ? mask == LOOM_GRADIENT_USES_ALL : (mask >> index) & 1;
}

// The id of `handle` from its tag, or -1 when the tag is not this tape's.
// Needs no lock.
static inline int64_t loom__tape_tagged_id(const tape_t* tape,
                                           const loom_tensor_handle_t* handle) {
  uint64_t tag = loom_tensor_handle_tag(handle);
  if (!tape->tag_base || (tag & ~TAPE_TAG_ID_MASK) != tape->tag_base) {
    return -1;
  }
  return (int64_t)(tag & TAPE_TAG_ID_MASK) - 1;
}

// Whether the map tracks anything (no lock).
static inline bool loom__tape_any_spilled(const tape_t* tape) {
  return atomic_load_explicit(&((tape_t*)tape)->num_spilled,
                              memory_order_relaxed) != 0;
}

// The id of `handle` on the tape, or -1 (lock held).
int64_t loom__tape_lookup_locked(const tape_t* tape,
                                 const loom_tensor_handle_t* handle);
// Tracks `handle` under `id`: tags it, or (tagged by another tape) puts it
// in the map, whose room for one more must have been reserved. A handle
// tracked already keeps its id.
void loom__tape_track_locked(tape_t* tape, loom_tensor_handle_t* handle,
                             int64_t id);
// Tracks `handle` under a new id (a source), holding it (lock held).
LOOM_MUST_USE_RESULT loom_status_t
loom__tape_watch_locked(tape_t* tape, loom_tensor_handle_t* handle);
// Forgets the spilled handles only the tape still holds (lock held); run
// when the map has doubled since the last sweep (sweep_at).
void loom__tape_sweep_locked(tape_t* tape);
// Forgets every tracked handle and clears the watched ones' tags (lock
// held).
void loom__tape_untrack_all_locked(tape_t* tape);
// Takes the tag `tag` of another tape off `handle` (the tape then tracks
// the handle in its map), so that the caller can tag it. Best effort: on
// failure the caller's tape puts the handle in its own map.
void loom__tape_take_tag_over(loom_tensor_handle_t* handle, uint64_t tag);

// The registry of live tapes by id (tags name tapes by id).
LOOM_MUST_USE_RESULT loom_status_t loom__tape_register(tape_t* tape);
// Drops a reference to `tape`: true when it was the last, which also takes
// the tape out of the registry (the caller frees it).
bool loom__tape_unref(tape_t* tape);

//===----------------------------------------------------------------------===//
// Recording (tape_recording.c) and recompute segments (tape_recompute.c)
//===----------------------------------------------------------------------===//

// What one recording needs from the execute hook.
typedef struct tape_record_t {
  const loom_gradient_def_t* def;
  const char* op_name;
  const loom_op_def_t* op_def;
  const loom_op_attrs_t* attrs;
  loom_op_handler_t* outer;
  loom__passthrough_shared_t* segment;  // the recompute segment, or NULL
  int32_t num_inputs;
  const int64_t* input_ids;
  // Moved into the node where it keeps them (the slots are then NULL).
  loom_tensor_handle_t** saved_inputs;
  const loom_tensor_metadata_t* input_metadata;
  int32_t num_outputs;
  loom_tensor_handle_t* const* results;
  const loom_tensor_metadata_t* output_metadata;
} tape_record_t;

loom_status_t loom__tape_execute(loom_op_handler_t* handler,
                                 loom_op_invocation_t* invocation);

// Adds a node for `r` (lock held).
LOOM_MUST_USE_RESULT loom_status_t
loom__tape_add_node_locked(tape_t* tape, const tape_record_t* r);

// Function calls (tape_call.c): the vtable's function_input_summary and
// execute_function_call.
loom_status_t loom__tape_function_input_summary(
    loom_op_handler_t* handler, loom_tensor_handle_t* handle,
    loom_function_input_summary_t* out_summary);
loom_status_t loom__tape_execute_function_call(loom_op_handler_t* handler,
                                               loom_function_call_t* call,
                                               loom_tensor_handle_t** results,
                                               bool* out_taken);

// The segment a node of recompute segment `owner` joins: the open one when
// the node continues it, else a new one (lock held).
LOOM_MUST_USE_RESULT loom_status_t
loom__tape_segment_for_locked(tape_t* tape, loom__passthrough_shared_t* owner,
                              tape_segment_t** out_segment);
// Releases the segments' owners (lock held).
void loom__tape_release_segments_locked(tape_t* tape);

// Whether tensor `id` was made in `segment`.
static inline bool loom__tape_made_in(const tape_segment_t* segment,
                                      int64_t id) {
  return id >= segment->first_id && id < segment->end_id;
}

// Releases the tensors a node keeps.
void loom__tape_release_node_tensors(tape_node_t* node);

//===----------------------------------------------------------------------===//
// The backward pass (tape_backward.c, tape_recompute.c)
//===----------------------------------------------------------------------===//

// A gradient contribution waiting to be summed.
typedef struct tape_pending_t {
  loom_tensor_handle_t* handle;
  int32_t next;  // index + 1 of the next one of the same tensor; 0: none
} tape_pending_t;

LOOM_DEFINE_SMALL_VECTOR(tape_pending_vector, tape_pending_t, 16)
LOOM_DEFINE_SMALL_VECTOR(tape_flag_vector, bool, 8)

// One backward pass.
typedef struct tape_backward_t {
  tape_t* tape;
  loom_context_t* eager;
  uint8_t* flags;                // per tensor id
  loom_tensor_handle_t** grads;  // per tensor id: the first contribution
  // The others, summed with one AddN when the tensor's gradient is used
  // (TensorFlow's aggregation): per tensor id, the index + 1 of its list
  // in `pending` and the list's length.
  int32_t* extra;
  uint8_t* num_extra;
  tape_pending_vector_t pending;
  int32_t free_pending;  // index + 1 of a free entry; 0: none
  uint8_t* node_needed;  // per node
  // The outer handler the backward ops run under now (NULL: none yet), and
  // whether its scope was entered (a final handler needs none).
  loom_op_handler_t* outer;
  bool entered;
  loom__grad_op_cache_t cache;
  // A node's gradients (its inputs', then its outputs') and whether its
  // inputs need theirs, reused from node to node.
  loom__handle_vector_t node_grads;
  tape_flag_vector_t node_inputs_needed;
} tape_backward_t;

LOOM_MUST_USE_RESULT loom_status_t
loom__tape_enter_outer_slow(tape_backward_t* b, loom_op_handler_t* outer);

// Runs the backward ops of a node with the handlers it ran under: enters
// its outer handler's scope (the CPU needs none), leaving the previous
// node's.
LOOM_MUST_USE_RESULT static inline loom_status_t loom__tape_enter_outer(
    tape_backward_t* b, loom_op_handler_t* outer) {
  if (outer == b->outer) return loom_ok_status();
  return loom__tape_enter_outer_slow(b, outer);
}

// Leaves the scope the backward pass entered, if any.
void loom__tape_leave_outer(tape_backward_t* b);

// Re-executes the nodes of `segment` up to `last` (an index) from the
// inputs they kept, and gives each node the recomputed tensors its
// gradient function uses.
LOOM_MUST_USE_RESULT loom_status_t loom__tape_materialize(
    tape_backward_t* b, tape_segment_t* segment, int64_t last);
// Drops the recomputed tensors the nodes of `segment` hold, keeping the
// segment's inputs.
void loom__tape_dematerialize(tape_t* tape, tape_segment_t* segment);

#endif  // LOOM_HANDLERS_TAPE_TAPE_INTERNAL_H_
