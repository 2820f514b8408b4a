// The gradient tape (reverse mode) as a pass-through op handler.
//
// Every op of the tape's scope runs on the handler the tape was merged with
// and its results are that handler's tensors. When an input of the op is
// watched or was produced by a recorded op, and the op is differentiable,
// the tape records a node: the op, its given attributes, the dtypes and
// shapes of its inputs and outputs, the inputs and outputs its gradient
// function declared it uses, and the handler the op ran on (its gradient
// runs there).
//
// Tensors are known by their handles, and a handle says which tape tracks
// it through its tag (loom_tensor_handle_tag: this tape's serial and the
// tensor's id), so recognising a tracked input costs one load and the tape
// keeps no reference to the tensors it only tracks: an intermediate the
// caller drops is freed at once, and an op may reuse its input's buffer. A
// handle whose tag another tape holds (nested tapes) is tracked in a map
// instead, which keeps one reference to it until nobody else holds it. The
// watched tensors are held, and their tags cleared when the tape releases
// what it recorded, so the next tape (a training loop's next step) tags
// them again.
//
// Recording takes the tape's lock once per op; nodes are bump-allocated.
//
// Ops executed in a recompute handler's scope (src/handlers/recompute/)
// are recorded as a segment: their nodes keep only the tensors that come
// from outside the segment, and the backward pass re-executes the segment
// from those to get back the tensors its gradient functions use.
//
// The backward pass visits the recorded nodes in reverse order (the order
// of recording is a topological order), only those that depend on a source
// and receive a gradient, summing (AddN) the gradients of tensors used
// several times and releasing each gradient once its node has consumed it.

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "base/hash_map.h"
#include "base/ref_count.h"
#include "handlers/tape/grad_ops.h"
#include "handlers/tape/tape_internal.h"

typedef struct tape_segment_t tape_segment_t;

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
  uint64_t serial;     // the recompute handler's
  int64_t first_node;  // index in tape->nodes
  int64_t num_nodes;
  int64_t first_id;  // the tensors made in it: [first_id, end_id)
  int64_t end_id;
  bool materialized;
};

// Nodes and segments are bump-allocated in chunks.
typedef struct tape_chunk_t {
  struct tape_chunk_t* next;
  size_t size;
} tape_chunk_t;

typedef struct tape_t {
  loom__ref_count_t ref_count;
  loom_allocator_t allocator;
  loom_context_t* context;
  uint64_t id;        // unique in the process (per-thread pauses)
  uint64_t tag_base;  // id << 32, or 0 when the id does not fit (no tags)
  loom_tape_options_t options;
  const loom_gradient_def_t* copy_on_def;
  // Set once anything is tracked: until then ops pass without locking.
  _Atomic bool tracking;
  // The size of `spilled`, readable without the lock: while 0, an input
  // without this tape's tag is not tracked.
  _Atomic size_t num_spilled;
  // A spin lock, taken once per recorded op: an uncontended pthread mutex
  // costs more than the rest of the recording.
  _Atomic bool locked;   // everything below
  bool released;         // a non-persistent tape after its gradient
  tape_chunk_t* chunks;  // the nodes and segments
  unsigned char* chunk_cursor;
  size_t chunk_left;
  tape_node_t** nodes;
  int64_t num_nodes;
  int64_t nodes_capacity;
  int64_t next_id;
  loom__hash_map_t spilled;        // handle -> id; one reference per handle
  size_t sweep_at;                 // map size that triggers the next sweep
  loom_tensor_handle_t** watched;  // tagged by this tape; retained
  int64_t num_watched;
  int64_t watched_capacity;
  loom_op_handler_t** outers;  // retained, distinct
  int32_t num_outers;
  int32_t outers_capacity;
  tape_segment_t* open_segment;  // the last one recorded, or NULL
  int64_t num_segments;
} tape_t;

// The state of a tape handler and of each of its merges.
typedef struct tape_state_t {
  loom_allocator_t allocator;
  tape_t* tape;  // retained
  loom_context_t* context;
  loom_op_handler_t* outer;            // retained; NULL: the context's CPU
  loom_op_handler_t* effective_outer;  // `outer`, or the CPU
} tape_state_t;

// Per op and outer handler: the op prepared on the outer handler and its
// gradient definition, looked up once and shared by the tapes merged on
// that outer handler (tape_reuse_op_data): a new tape each training step
// finds its ops ready.
typedef struct tape_op_data_t {
  loom__ref_count_t ref_count;
  loom_allocator_t allocator;
  loom_prepared_op_t* outer_op;
  const loom_gradient_def_t* def;
  uint64_t gradients_generation;  // of the gradient registry, at the look-up
  bool record;                    // false: registered as not differentiable
  bool reads_variable;            // ReadVariableOp: watches its resource
} tape_op_data_t;

static const loom_op_handler_vtable_t kTapeVtable;
static void tape_release(tape_t* tape);
static _Atomic uint64_t g_next_tape_id = 1;

enum { kSweepMinimum = 64, kInlineArgs = 8 };

// A tag is the tape's serial (high half) and the tensor id + 1 (low half).
#define TAG_ID_MASK ((uint64_t)0xffffffffu)

// The fences below order atomics, which ThreadSanitizer never reports; it
// does not model fences, and GCC warns about them under it.
#if defined(__SANITIZE_THREAD__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wtsan"
#endif

static loom_op_handler_t* outer_of(const tape_state_t* state) {
  return state->effective_outer;
}

static void tape_lock_slow(tape_t* tape) {
  for (int spins = 0;; ++spins) {
    if (!atomic_load_explicit(&tape->locked, memory_order_relaxed) &&
        !atomic_exchange_explicit(&tape->locked, true, memory_order_acquire)) {
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

static inline void tape_lock(tape_t* tape) {
  if (!atomic_exchange_explicit(&tape->locked, true, memory_order_acquire)) {
    return;
  }
  tape_lock_slow(tape);
}

static inline void tape_unlock(tape_t* tape) {
  atomic_store_explicit(&tape->locked, false, memory_order_release);
}

enum { kFirstChunk = 16 << 10, kLargestChunk = 1 << 20 };

static loom_status_t chunk_allocate_slow(tape_t* tape, size_t size,
                                         void** out) {
  size_t chunk = tape->chunks ? 2 * tape->chunks->size : kFirstChunk;
  if (chunk > kLargestChunk) chunk = kLargestChunk;
  size_t header = (sizeof(tape_chunk_t) + 15) & ~(size_t)15;
  if (chunk < header + size) chunk = header + size;
  tape_chunk_t* block = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(tape->allocator, chunk, (void**)&block));
  block->next = tape->chunks;
  block->size = chunk;
  tape->chunks = block;
  tape->chunk_cursor = (unsigned char*)block + header + size;
  tape->chunk_left = chunk - header - size;
  *out = (unsigned char*)block + header;
  return loom_ok_status();
}

// `size` bytes aligned to 16, until the recording is released.
static inline loom_status_t chunk_allocate(tape_t* tape, size_t size,
                                           void** out) {
  size = (size + 15) & ~(size_t)15;
  if (LOOM_LIKELY(size <= tape->chunk_left)) {
    *out = tape->chunk_cursor;
    tape->chunk_cursor += size;
    tape->chunk_left -= size;
    return loom_ok_status();
  }
  return chunk_allocate_slow(tape, size, out);
}

static void chunks_free(tape_t* tape) {
  for (tape_chunk_t* block = tape->chunks; block;) {
    tape_chunk_t* next = block->next;
    loom_allocator_free(tape->allocator, block);
    block = next;
  }
  tape->chunks = NULL;
  tape->chunk_cursor = NULL;
  tape->chunk_left = 0;
}

//===----------------------------------------------------------------------===//
// Pausing, per thread
//===----------------------------------------------------------------------===//

enum { kMaxPaused = 16 };
static _Thread_local struct {
  uint64_t tape_id;
  int32_t depth;
} t_paused[kMaxPaused];
static _Thread_local int32_t t_num_paused;

static bool is_paused(uint64_t tape_id) {
  for (int32_t i = 0; i < t_num_paused; ++i) {
    if (t_paused[i].tape_id == tape_id) return true;
  }
  return false;
}

static bool pause_tape(uint64_t tape_id) {
  for (int32_t i = 0; i < t_num_paused; ++i) {
    if (t_paused[i].tape_id == tape_id) {
      t_paused[i].depth++;
      return true;
    }
  }
  if (t_num_paused == kMaxPaused) return false;
  t_paused[t_num_paused].tape_id = tape_id;
  t_paused[t_num_paused].depth = 1;
  t_num_paused++;
  return true;
}

static bool resume_tape(uint64_t tape_id) {
  for (int32_t i = 0; i < t_num_paused; ++i) {
    if (t_paused[i].tape_id != tape_id) continue;
    if (--t_paused[i].depth == 0) t_paused[i] = t_paused[--t_num_paused];
    return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Tracking tensors
//===----------------------------------------------------------------------===//

static bool uses(uint64_t mask, int32_t index) {
  return index >= 64 ? mask == LOOM_GRADIENT_USES_ALL : (mask >> index) & 1;
}

static uint64_t tag_of(const tape_t* tape, int64_t id) {
  if (!tape->tag_base || id < 0 || (uint64_t)id >= TAG_ID_MASK) return 0;
  return tape->tag_base | (uint64_t)(id + 1);
}

// The id of `handle` from its tag, or -1 when the tag is not this tape's.
// Needs no lock.
static int64_t tagged_id(const tape_t* tape,
                         const loom_tensor_handle_t* handle) {
  uint64_t tag = loom_tensor_handle_tag(handle);
  if (!tape->tag_base || (tag & ~TAG_ID_MASK) != tape->tag_base) return -1;
  return (int64_t)(tag & TAG_ID_MASK) - 1;
}

static bool any_spilled(const tape_t* tape) {
  return atomic_load_explicit(&((tape_t*)tape)->num_spilled,
                              memory_order_relaxed) != 0;
}

// The id of `handle` on the tape, or -1 (lock held).
static int64_t lookup_locked(const tape_t* tape,
                             const loom_tensor_handle_t* handle) {
  if (!handle) return -1;
  int64_t id = tagged_id(tape, handle);
  if (id >= 0 || !any_spilled(tape)) return id;
  uint64_t value = 0;
  if (!loom__hash_map_find(&tape->spilled, (uint64_t)(uintptr_t)handle,
                           &value)) {
    return -1;
  }
  return (int64_t)value;
}

static loom_status_t grow_array(loom_allocator_t allocator, void** array,
                                int64_t count, int64_t* capacity, size_t size) {
  if (count < *capacity) return loom_ok_status();
  int64_t grown_capacity = *capacity ? 2 * *capacity : 16;
  void* grown = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, size * (size_t)grown_capacity, &grown));
  if (count) memcpy(grown, *array, size * (size_t)count);
  loom_allocator_free(allocator, *array);
  *array = grown;
  *capacity = grown_capacity;
  return loom_ok_status();
}

// Tracks `handle` (not tracked yet) in the map, under `id`. The map's room
// must have been reserved.
static void spill_locked(tape_t* tape, loom_tensor_handle_t* handle,
                         int64_t id) {
  loom_status_ignore(loom__hash_map_insert(
      &tape->spilled, (uint64_t)(uintptr_t)handle, (uint64_t)id));
  loom_tensor_handle_retain(handle);
  atomic_store_explicit(&tape->num_spilled, loom__hash_map_size(&tape->spilled),
                        memory_order_relaxed);
}

// Tracks `handle` under `id`: tags it, or (tagged by another tape) puts it
// in the map, whose room for one more must have been reserved. A handle
// tracked already keeps its id.
static void track_locked(tape_t* tape, loom_tensor_handle_t* handle, int64_t id,
                         bool* out_tagged) {
  *out_tagged = false;
  uint64_t tag = tag_of(tape, id);
  uint64_t expected = 0;
  if (tag && loom_tensor_handle_exchange_tag(handle, &expected, tag)) {
    *out_tagged = true;
    return;
  }
  if (tag && (expected & ~TAG_ID_MASK) == tape->tag_base) return;
  if (any_spilled(tape) &&
      loom__hash_map_find(&tape->spilled, (uint64_t)(uintptr_t)handle, NULL)) {
    return;
  }
  spill_locked(tape, handle, id);
}

static loom_status_t watch_locked(tape_t* tape, loom_tensor_handle_t* handle) {
  if (lookup_locked(tape, handle) >= 0) return loom_ok_status();
  LOOM_RETURN_IF_ERROR(grow_array(tape->allocator, (void**)&tape->watched,
                                  tape->num_watched, &tape->watched_capacity,
                                  sizeof(*tape->watched)));
  LOOM_RETURN_IF_ERROR(loom__hash_map_reserve(
      &tape->spilled, loom__hash_map_size(&tape->spilled) + 1));
  bool tagged = false;
  track_locked(tape, handle, tape->next_id, &tagged);
  if (tagged) {
    loom_tensor_handle_retain(handle);
    tape->watched[tape->num_watched++] = handle;
  }
  tape->next_id++;
  atomic_store_explicit(&tape->tracking, true, memory_order_relaxed);
  return loom_ok_status();
}

// Forgets the spilled handles only the tape still holds: nobody can pass
// them to an op again. Runs when the map has doubled since the last sweep.
static void sweep_locked(tape_t* tape) {
  size_t count = loom__hash_map_size(&tape->spilled);
  uint64_t* dead = NULL;
  if (count == 0 ||
      loom_allocator_malloc(tape->allocator, sizeof(uint64_t) * count,
                            (void**)&dead)) {
    tape->sweep_at = 2 * count + kSweepMinimum;
    return;  // out of memory: sweep later
  }
  size_t num_dead = 0;
  size_t cursor = 0;
  uint64_t key = 0, value = 0;
  while (loom__hash_map_next(&tape->spilled, &cursor, &key, &value)) {
    loom_tensor_handle_t* handle = (loom_tensor_handle_t*)(uintptr_t)key;
    if (loom_tensor_handle_is_unique(handle)) dead[num_dead++] = key;
  }
  for (size_t i = 0; i < num_dead; ++i) {
    loom__hash_map_remove(&tape->spilled, dead[i]);
    loom_tensor_handle_release((loom_tensor_handle_t*)(uintptr_t)dead[i]);
  }
  loom_allocator_free(tape->allocator, dead);
  size_t live = loom__hash_map_size(&tape->spilled);
  atomic_store_explicit(&tape->num_spilled, live, memory_order_relaxed);
  tape->sweep_at = 2 * live > kSweepMinimum ? 2 * live : kSweepMinimum;
}

static loom_status_t hold_outer_locked(tape_t* tape, loom_op_handler_t* outer) {
  for (int32_t i = tape->num_outers - 1; i >= 0; --i) {
    if (tape->outers[i] == outer) return loom_ok_status();
  }
  if (tape->num_outers == tape->outers_capacity) {
    int32_t capacity = tape->outers_capacity ? 2 * tape->outers_capacity : 4;
    loom_op_handler_t** grown = NULL;
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
        tape->allocator, sizeof(*grown) * (size_t)capacity, (void**)&grown));
    if (tape->num_outers) {
      memcpy(grown, tape->outers, sizeof(*grown) * (size_t)tape->num_outers);
    }
    loom_allocator_free(tape->allocator, tape->outers);
    tape->outers = grown;
    tape->outers_capacity = capacity;
  }
  loom_op_handler_retain(outer);
  tape->outers[tape->num_outers++] = outer;
  return loom_ok_status();
}

static void release_node_tensors(tape_node_t* node) {
  // node->outputs follows node->inputs.
  for (int32_t i = 0; i < node->num_inputs + node->num_outputs; ++i) {
    if (!node->inputs[i]) continue;
    loom_tensor_handle_release(node->inputs[i]);
    node->inputs[i] = NULL;
  }
}

// Drops everything recorded: nodes, kept tensors, tracked handles; clears
// the tags of the watched handles.
static void release_recorded_locked(tape_t* tape) {
  for (int64_t i = 0; i < tape->num_nodes; ++i) {
    tape_node_t* node = tape->nodes[i];
    release_node_tensors(node);
    if (node->attrs) loom_op_attrs_release(node->attrs);
  }
  loom_allocator_free(tape->allocator, tape->nodes);
  tape->nodes = NULL;
  tape->num_nodes = 0;
  tape->nodes_capacity = 0;
  tape->open_segment = NULL;
  tape->num_segments = 0;
  chunks_free(tape);
  for (int64_t i = 0; i < tape->num_watched; ++i) {
    loom_tensor_handle_t* handle = tape->watched[i];
    uint64_t expected = loom_tensor_handle_tag(handle);
    if ((expected & ~TAG_ID_MASK) == tape->tag_base) {
      loom_tensor_handle_exchange_tag(handle, &expected, 0);
    }
    loom_tensor_handle_release(handle);
  }
  loom_allocator_free(tape->allocator, tape->watched);
  tape->watched = NULL;
  tape->num_watched = 0;
  tape->watched_capacity = 0;
  size_t cursor = 0;
  uint64_t key = 0, value = 0;
  while (loom__hash_map_next(&tape->spilled, &cursor, &key, &value)) {
    loom_tensor_handle_release((loom_tensor_handle_t*)(uintptr_t)key);
  }
  loom__hash_map_deinitialize(&tape->spilled);
  loom__hash_map_initialize(&tape->spilled, tape->allocator);
  atomic_store_explicit(&tape->num_spilled, 0, memory_order_relaxed);
  for (int32_t i = 0; i < tape->num_outers; ++i) {
    loom_op_handler_release(tape->outers[i]);
  }
  loom_allocator_free(tape->allocator, tape->outers);
  tape->outers = NULL;
  tape->num_outers = 0;
  tape->outers_capacity = 0;
}

//===----------------------------------------------------------------------===//
// Recording
//===----------------------------------------------------------------------===//

// What one recording needs from the execute hook.
typedef struct record_t {
  const loom_gradient_def_t* def;
  const char* op_name;
  const loom_op_def_t* op_def;
  const loom_op_attrs_t* attrs;
  loom_op_handler_t* outer;
  uint64_t segment;  // the recompute segment, or 0
  int32_t num_inputs;
  const int64_t* input_ids;
  // Moved into the node where it keeps them (the slots are then NULL).
  loom_tensor_handle_t** saved_inputs;
  const loom_tensor_metadata_t* input_metadata;
  int32_t num_outputs;
  loom_tensor_handle_t* const* results;
  const loom_tensor_metadata_t* output_metadata;
} record_t;

// The segment a node of recompute segment `serial` joins: the open one
// when the node continues it, else a new one.
static loom_status_t segment_for_locked(tape_t* tape, uint64_t serial,
                                        tape_segment_t** out_segment) {
  tape_segment_t* open = tape->open_segment;
  if (open && open->serial == serial &&
      open->first_node + open->num_nodes == tape->num_nodes &&
      open->end_id == tape->next_id) {
    *out_segment = open;
    return loom_ok_status();
  }
  tape_segment_t* segment = NULL;
  LOOM_RETURN_IF_ERROR(
      chunk_allocate(tape, sizeof(*segment), (void**)&segment));
  segment->serial = serial;
  segment->num_nodes = 0;
  segment->materialized = false;
  segment->first_node = tape->num_nodes;
  segment->first_id = tape->next_id;
  segment->end_id = tape->next_id;
  tape->open_segment = segment;
  tape->num_segments++;
  *out_segment = segment;
  return loom_ok_status();
}

static loom_status_t add_node_locked(tape_t* tape, const record_t* r) {
  int32_t n = r->num_inputs;
  int32_t m = r->num_outputs;
  size_t size = sizeof(tape_node_t) + sizeof(int64_t) * (size_t)n +
                sizeof(loom_tensor_handle_t*) * (size_t)(n + m) +
                sizeof(loom_tensor_metadata_t) * (size_t)(n + m);
  LOOM_RETURN_IF_ERROR(grow_array(tape->allocator, (void**)&tape->nodes,
                                  tape->num_nodes, &tape->nodes_capacity,
                                  sizeof(*tape->nodes)));
  if (tape->num_outers == 0 || tape->outers[tape->num_outers - 1] != r->outer) {
    LOOM_RETURN_IF_ERROR(hold_outer_locked(tape, r->outer));
  }
  // Room in the map for the results another tape tagged (nested tapes):
  // nothing below fails once the node is made.
  bool may_spill =
      !tape->tag_base || (uint64_t)(tape->next_id + m) >= TAG_ID_MASK;
  for (int32_t k = 0; k < m && !may_spill; ++k) {
    uint64_t tag = loom_tensor_handle_tag(r->results[k]);
    may_spill = tag && (tag & ~TAG_ID_MASK) != tape->tag_base;
  }
  if (may_spill) {
    LOOM_RETURN_IF_ERROR(loom__hash_map_reserve(
        &tape->spilled, loom__hash_map_size(&tape->spilled) + (size_t)m));
  }
  tape_segment_t* segment = NULL;
  if (r->segment) {
    LOOM_RETURN_IF_ERROR(segment_for_locked(tape, r->segment, &segment));
  }
  const loom_op_attrs_t* frozen = NULL;
  if (r->attrs && loom_op_attrs_count(r->attrs) > 0) {
    LOOM_RETURN_IF_ERROR(loom_op_attrs_freeze(r->attrs, &frozen));
  }
  tape_node_t* node = NULL;
  loom_status_t status = chunk_allocate(tape, size, (void**)&node);
  if (status) {
    if (frozen) loom_op_attrs_release(frozen);
    return status;
  }
  unsigned char* cursor = (unsigned char*)(node + 1);
  node->metadata = (loom_tensor_metadata_t*)cursor;
  cursor += sizeof(loom_tensor_metadata_t) * (size_t)(n + m);
  node->input_ids = (int64_t*)cursor;
  cursor += sizeof(int64_t) * (size_t)n;
  node->inputs = (loom_tensor_handle_t**)cursor;
  node->outputs = node->inputs + n;
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
  for (int32_t i = 0; i < n; ++i) {
    node->input_ids[i] = r->input_ids[i];
    node->metadata[i] = r->input_metadata[i];
  }
  uint64_t inputs_used = node->def ? node->def->inputs_used : 0;
  for (int32_t i = 0; i < n; ++i) {
    // A segment's node keeps what comes from outside the segment (to
    // recompute it) and nothing else.
    bool keep =
        segment ? r->input_ids[i] < segment->first_id : uses(inputs_used, i);
    node->inputs[i] = keep ? r->saved_inputs[i] : NULL;
    if (keep) r->saved_inputs[i] = NULL;
  }
  for (int32_t k = 0; k < m; ++k) {
    node->metadata[n + k] = r->output_metadata[k];
  }
  uint64_t outputs_used = node->def && !segment ? node->def->outputs_used : 0;
  for (int32_t k = 0; k < m; ++k) {
    loom_tensor_handle_t* result = r->results[k];
    bool tagged = false;
    track_locked(tape, result, node->first_output_id + k, &tagged);
    node->outputs[k] = NULL;
    if (uses(outputs_used, k)) {
      loom_tensor_handle_retain(result);
      node->outputs[k] = result;
    }
  }
  if (segment) {
    segment->num_nodes++;
    segment->end_id = tape->next_id;
  }
  tape->nodes[tape->num_nodes++] = node;
  if (loom__hash_map_size(&tape->spilled) >= tape->sweep_at) sweep_locked(tape);
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

static loom_status_t tape_prepare(loom_op_handler_t* handler,
                                  const char* op_name, const loom_op_def_t* op,
                                  void** out_op_data) {
  (void)op;
  tape_state_t* state = loom_op_handler_state(handler);
  tape_op_data_t* data = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(state->allocator, sizeof(*data), (void**)&data));
  loom_status_t status =
      loom_runtime_prepare_op_shared(loom_op_handler_runtime(handler), op_name,
                                     outer_of(state), &data->outer_op);
  if (status) {
    loom_allocator_free(state->allocator, data);
    return status;
  }
  loom__ref_count_init(&data->ref_count);
  data->allocator = state->allocator;
  // The generation first: a gradient registered meanwhile makes the data
  // look stale, never the other way round.
  data->gradients_generation = loom__gradient_generation();
  data->def = loom_gradient_find(op_name);
  data->record = !data->def || data->def->fn;
  data->reads_variable = strcmp(op_name, "ReadVariableOp") == 0;
  *out_op_data = data;
  return loom_ok_status();
}

static void tape_release_op_data(loom_op_handler_t* handler, void* opaque) {
  (void)handler;
  tape_op_data_t* data = opaque;
  if (!data || !loom__ref_count_dec(&data->ref_count)) return;
  loom_prepared_op_release(data->outer_op);
  loom_allocator_free(data->allocator, data);
}

// Another tape's data for the same op serves this tape when both run their
// ops on the same outer handler and no gradient was registered since.
static loom_status_t tape_reuse_op_data(loom_op_handler_t* handler,
                                        const loom_op_handler_t* source,
                                        void* source_op_data,
                                        void** out_op_data) {
  const tape_state_t* state = loom_op_handler_state(handler);
  const tape_state_t* other = loom_op_handler_state(source);
  tape_op_data_t* data = source_op_data;
  if (outer_of(state) != outer_of(other) ||
      data->gradients_generation != loom__gradient_generation()) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND, "not shareable");
  }
  loom__ref_count_inc(&data->ref_count);
  *out_op_data = data;
  return loom_ok_status();
}

static loom_status_t pass_on(tape_state_t* state,
                             loom_op_invocation_t* invocation,
                             const tape_op_data_t* data) {
  LOOM_RETURN_IF_ERROR(loom_context_forward_arguments(
      state->context, outer_of(state), invocation));
  return loom_op_invocation_forward(invocation, data->outer_op);
}

// The metadata of `handle`, waiting for it when it is not known yet.
static loom_status_t metadata_of(loom_tensor_handle_t* handle,
                                 loom_tensor_metadata_t* out) {
  if (loom_tensor_handle_metadata_available(handle)) {
    return loom_tensor_handle_metadata(handle, out);
  }
  return loom_tensor_handle_wait_metadata(handle, out);
}

// Replaces the results with error handles carrying `error` (consumed).
static loom_status_t fail_results(loom_op_invocation_t* invocation,
                                  loom_op_handler_t* outer,
                                  loom_status_t error) {
  for (int32_t k = 0; k < invocation->num_results; ++k) {
    loom_tensor_handle_release(invocation->results[k]);
    invocation->results[k] = NULL;
    loom_status_ignore(loom_tensor_handle_create_error(
        outer, loom_status_clone(error), &invocation->results[k]));
  }
  return error;
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
static loom_status_t copy_on_recorded(tape_state_t* state,
                                      loom_op_invocation_t* invocation,
                                      int64_t* ids) {
  tape_t* tape = state->tape;
  loom_op_handler_t* outer = outer_of(state);
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_t* argument = invocation->arguments[i];
    if (ids[i] < 0 || loom_tensor_handle_handler(argument) == outer) continue;
    loom_tensor_metadata_t metadata[2];
    LOOM_RETURN_IF_ERROR(metadata_of(argument, &metadata[0]));
    loom_tensor_handle_t* copy = NULL;
    LOOM_RETURN_IF_ERROR(
        loom_context_copy_to(state->context, argument, outer, &copy));
    loom_tensor_handle_t* saved = NULL;
    record_t record = {
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
    loom_status_t status = metadata_of(copy, &metadata[1]);
    if (!status) {
      tape_lock(tape);
      if (!tape->released) status = add_node_locked(tape, &record);
      ids[i] = lookup_locked(tape, copy);
      tape_unlock(tape);
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

static loom_status_t tape_execute(loom_op_handler_t* handler,
                                  loom_op_invocation_t* invocation) {
  tape_state_t* state = loom_op_handler_state(handler);
  tape_t* tape = state->tape;
  const tape_op_data_t* data = loom_prepared_op_data(invocation->op);
  if (!data->record || (t_num_paused && is_paused(tape->id)) ||
      (!data->reads_variable &&
       !atomic_load_explicit(&tape->tracking, memory_order_relaxed))) {
    return pass_on(state, invocation, data);
  }
  int32_t n = invocation->num_arguments;
  int32_t m = invocation->num_results;
  int64_t inline_ids[kInlineArgs];
  loom_tensor_handle_t* inline_saved[kInlineArgs];
  loom_tensor_metadata_t inline_metadata[2 * kInlineArgs];
  int64_t* ids = inline_ids;
  loom_tensor_handle_t** saved = inline_saved;
  loom_tensor_metadata_t* metadata = inline_metadata;
  void* heap = NULL;
  if (n > kInlineArgs || m > kInlineArgs) {
    size_t bytes = (sizeof(*ids) + sizeof(*saved)) * (size_t)n +
                   sizeof(*metadata) * (size_t)(n + m);
    loom_status_t status =
        loom_allocator_malloc(state->allocator, bytes, &heap);
    if (status) {
      return loom_op_invocation_fail(invocation, status, true);
    }
    metadata = heap;
    ids = (int64_t*)(metadata + n + m);
    saved = (loom_tensor_handle_t**)(ids + n);
  }
  // The tags answer for this tape's tensors without the lock; the map
  // (nested tapes, a resource to watch) needs it.
  bool any = false;
  bool untagged = false;
  for (int32_t i = 0; i < n; ++i) {
    ids[i] = tagged_id(tape, invocation->arguments[i]);
    any |= ids[i] >= 0;
    untagged |= ids[i] < 0;
  }
  // An input whose tag another tape took over is in this tape's map from
  // before the tag changed (take_tag_over): order the map's size after it.
  if (untagged) atomic_thread_fence(memory_order_acquire);
  loom_status_t status = loom_ok_status();
  bool watch_resource =
      data->reads_variable && n >= 1 && tape->options.watch_accessed_variables;
  if (watch_resource || (untagged && any_spilled(tape))) {
    tape_lock(tape);
    if (!tape->released) {
      if (watch_resource) {
        status = watch_locked(tape, invocation->arguments[0]);
      }
      for (int32_t i = 0; i < n; ++i) {
        if (ids[i] < 0) ids[i] = lookup_locked(tape, invocation->arguments[i]);
        any |= ids[i] >= 0;
      }
    }
    tape_unlock(tape);
  }
  if (status) {
    if (heap) loom_allocator_free(state->allocator, heap);
    return loom_op_invocation_fail(invocation, status, true);
  }
  if (!any) {
    if (heap) loom_allocator_free(state->allocator, heap);
    return pass_on(state, invocation, data);
  }
  loom_op_handler_t* outer = outer_of(state);
  if (needs_copies(outer, invocation)) {
    status = copy_on_recorded(state, invocation, ids);
    if (status) {
      if (heap) loom_allocator_free(state->allocator, heap);
      return loom_op_invocation_fail(invocation, status, true);
    }
  }
  // The inputs the node may keep, and every input's metadata, before the
  // op consumes its arguments. In a recompute segment the node keeps those
  // made outside the segment, which only recording tells.
  uint64_t segment = loom__recompute_segment;
  uint64_t inputs_used = segment     ? LOOM_GRADIENT_USES_ALL
                         : data->def ? data->def->inputs_used
                                     : 0;
  bool recordable = true;
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_t* argument = invocation->arguments[i];
    saved[i] = NULL;
    if (uses(inputs_used, i)) {
      loom_tensor_handle_retain(argument);
      saved[i] = argument;
    }
    loom_status_t meta_status = metadata_of(argument, &metadata[i]);
    if (meta_status) {
      recordable = false;  // a failed input: the op fails too
      loom_status_free(meta_status);
    }
  }
  status = pass_on(state, invocation, data);
  for (int32_t k = 0; k < m && !status && recordable; ++k) {
    loom_tensor_handle_t* result = invocation->results[k];
    loom_status_t meta_status =
        result ? metadata_of(result, &metadata[n + k])
               : loom_make_status(LOOM_STATUS_INTERNAL, "no result");
    if (meta_status) {
      recordable = false;  // an error result: nothing to differentiate
      loom_status_free(meta_status);
    }
  }
  if (!status && recordable) {
    record_t record = {
        .def = data->def,
        .op_name = loom_prepared_op_name(invocation->op),
        .op_def = loom_prepared_op_def(invocation->op),
        .attrs = invocation->attrs,
        .outer = outer,
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
    tape_lock(tape);
    if (!tape->released) status = add_node_locked(tape, &record);
    tape_unlock(tape);
    if (status) {
      status = fail_results(
          invocation, outer,
          loom_status_annotate(status, "recording %s on a gradient tape",
                               record.op_name));
    }
  }
  for (int32_t i = 0; i < n; ++i) {
    if (saved[i]) loom_tensor_handle_release(saved[i]);
  }
  if (heap) loom_allocator_free(state->allocator, heap);
  return status;
}

//===----------------------------------------------------------------------===//
// Handing a tag over
//===----------------------------------------------------------------------===//

// The live tapes by id, so that a tape watching a handle another tape
// tagged can take the tag over: the other tape (a training loop's previous
// step, kept by a cached op) tracks the handle in its map from then on.
static pthread_mutex_t g_tapes_mutex = PTHREAD_MUTEX_INITIALIZER;
static loom__hash_map_t g_tapes;  // id -> tape_t*
static bool g_tapes_initialized;

static loom_status_t register_tape(tape_t* tape) {
  pthread_mutex_lock(&g_tapes_mutex);
  if (!g_tapes_initialized) {
    loom__hash_map_initialize(&g_tapes, loom_allocator_default());
    g_tapes_initialized = true;
  }
  loom_status_t status =
      loom__hash_map_insert(&g_tapes, tape->id, (uint64_t)(uintptr_t)tape);
  pthread_mutex_unlock(&g_tapes_mutex);
  return status;
}

// Takes the tag `tag` of another tape off `handle` (the tape then tracks
// the handle in its map), so that the caller can tag it. Best effort: on
// failure the caller's tape puts the handle in its own map.
static void take_tag_over(loom_tensor_handle_t* handle, uint64_t tag) {
  tape_t* other = NULL;
  pthread_mutex_lock(&g_tapes_mutex);
  uint64_t value = 0;
  if (g_tapes_initialized && loom__hash_map_find(&g_tapes, tag >> 32, &value)) {
    other = (tape_t*)(uintptr_t)value;
    loom__ref_count_inc(&other->ref_count);
  }
  pthread_mutex_unlock(&g_tapes_mutex);
  uint64_t expected = tag;
  if (!other) {  // gone: the tag means nothing
    loom_tensor_handle_exchange_tag(handle, &expected, 0);
    return;
  }
  tape_lock(other);
  if (other->released) {
    loom_tensor_handle_exchange_tag(handle, &expected, 0);
  } else {
    loom_status_t status = loom__hash_map_reserve(
        &other->spilled, loom__hash_map_size(&other->spilled) + 1);
    uint64_t key = (uint64_t)(uintptr_t)handle;
    if (!status && !loom__hash_map_find(&other->spilled, key, NULL)) {
      // Into the map before the tag goes: a thread recording on `other`
      // reads an input's tag without the lock, and the size of the map
      // only when the tag is not other's (tape_execute), so it must not
      // see the tag cleared and the map still empty.
      spill_locked(other, handle, (int64_t)(tag & TAG_ID_MASK) - 1);
      atomic_thread_fence(memory_order_release);
      if (!loom_tensor_handle_exchange_tag(handle, &expected, 0)) {
        // The tag changed meanwhile: `other` does not need the entry.
        loom__hash_map_remove(&other->spilled, key);
        atomic_store_explicit(&other->num_spilled,
                              loom__hash_map_size(&other->spilled),
                              memory_order_relaxed);
        loom_tensor_handle_release(handle);
      }
    } else if (!status) {
      loom_tensor_handle_exchange_tag(handle, &expected, 0);
    }
    loom_status_free(status);
  }
  tape_unlock(other);
  tape_release(other);
}

static void tape_release(tape_t* tape) {
  if (!tape) return;
  pthread_mutex_lock(&g_tapes_mutex);
  bool last = loom__ref_count_dec(&tape->ref_count);
  if (last && g_tapes_initialized) loom__hash_map_remove(&g_tapes, tape->id);
  pthread_mutex_unlock(&g_tapes_mutex);
  if (!last) return;
  release_recorded_locked(tape);
  loom__hash_map_deinitialize(&tape->spilled);
  loom_allocator_free(tape->allocator, tape);
}

static void tape_destroy(void* opaque) {
  tape_state_t* state = opaque;
  if (!state->outer) {
    // The tape handler itself (not a merge) is gone: nobody can ask for
    // gradients any more, though merges may live on in the context or in
    // prepared ops. Release the recording now, and clear the tags.
    tape_t* tape = state->tape;
    tape_lock(tape);
    if (!tape->released) {
      release_recorded_locked(tape);
      tape->released = true;
      atomic_store_explicit(&tape->tracking, false, memory_order_relaxed);
    }
    tape_unlock(tape);
  }
  loom_op_handler_release(state->outer);
  tape_release(state->tape);
  loom_allocator_free(state->allocator, state);
}

static bool tape_takes_foreign_inputs(const loom_op_handler_t* handler,
                                      const char* op_name) {
  (void)handler;
  (void)op_name;
  return true;  // they go to the outer handler, not onto the tape
}

static size_t tape_debug_string(const loom_op_handler_t* handler, char* buffer,
                                size_t capacity) {
  tape_state_t* state = loom_op_handler_state(handler);
  tape_t* tape = state->tape;
  tape_lock(tape);
  int64_t nodes = tape->num_nodes;
  size_t held = loom__hash_map_size(&tape->spilled) + (size_t)tape->num_watched;
  int64_t segments = tape->num_segments;
  bool released = tape->released;
  tape_unlock(tape);
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

static loom_status_t make_handler(tape_t* tape, loom_op_handler_t* outer,
                                  loom_op_handler_t** out);

static loom_status_t tape_merge(loom_op_handler_t* handler,
                                loom_op_handler_t* outer,
                                loom_op_handler_t** out_merged) {
  tape_state_t* state = loom_op_handler_state(handler);
  return make_handler(state->tape, outer, out_merged);
}

static const loom_op_handler_vtable_t kTapeVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "TAPE",
    .prepare = tape_prepare,
    .release_op_data = tape_release_op_data,
    .reuse_op_data = tape_reuse_op_data,
    .execute = tape_execute,
    .destroy = tape_destroy,
    .merge = tape_merge,
    .takes_foreign_inputs = tape_takes_foreign_inputs,
    .debug_string = tape_debug_string,
};

static loom_status_t make_handler(tape_t* tape, loom_op_handler_t* outer,
                                  loom_op_handler_t** out) {
  tape_state_t* state = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(tape->allocator, sizeof(*state), (void**)&state));
  state->allocator = tape->allocator;
  state->context = tape->context;
  state->tape = tape;
  loom__ref_count_inc(&tape->ref_count);
  state->outer = outer;
  loom_op_handler_retain(outer);
  state->effective_outer = outer ? outer : loom_context_cpu(tape->context);
  loom_status_t status = loom_op_handler_create(
      loom_context_runtime(tape->context), &kTapeVtable, state, NULL, out);
  if (status) tape_destroy(state);
  return status;
}

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
  tape->tag_base = tape->id <= TAG_ID_MASK ? tape->id << 32 : 0;
  tape->copy_on_def = copy_on_def;
  atomic_init(&tape->tracking, false);
  atomic_init(&tape->num_spilled, 0);
  if (options) {
    tape->options = *options;
  } else {
    loom_tape_options_initialize(&tape->options);
  }
  tape->options.struct_size = sizeof(tape->options);
  atomic_init(&tape->locked, false);
  loom__hash_map_initialize(&tape->spilled, allocator);
  tape->sweep_at = kSweepMinimum;
  loom_status_t status = register_tape(tape);
  if (status) {
    loom__hash_map_deinitialize(&tape->spilled);
    loom_allocator_free(allocator, tape);
    return status;
  }
  status = make_handler(tape, NULL, out_tape);
  tape_release(tape);  // the handler holds it now (or it is freed)
  return status;
}

// The tape behind a tape handler or one of its merges, or NULL.
static tape_t* tape_of(const loom_op_handler_t* handler) {
  if (!handler || loom_op_handler_vtable(handler)->execute != tape_execute) {
    return NULL;
  }
  return ((tape_state_t*)loom_op_handler_state(handler))->tape;
}

static loom_status_t not_a_tape(const char* function,
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
  tape_t* tape = tape_of(handler);
  if (!tape) return not_a_tape("loom_tape_watch", handler);
  if (!handle) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tape_watch: handle is NULL");
  }
  uint64_t tag = loom_tensor_handle_tag(handle);
  if (tag && tape->tag_base && (tag & ~TAG_ID_MASK) != tape->tag_base) {
    take_tag_over(handle, tag);
  }
  tape_lock(tape);
  loom_status_t status =
      tape->released
          ? loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                             "loom_tape_watch: the tape is not persistent "
                             "and has computed its gradient already")
          : watch_locked(tape, handle);
  tape_unlock(tape);
  return status;
}

loom_status_t loom_tape_stop_recording(loom_op_handler_t* handler) {
  tape_t* tape = tape_of(handler);
  if (!tape) return not_a_tape("loom_tape_stop_recording", handler);
  if (!pause_tape(tape->id)) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "loom_tape_stop_recording: more than %d tapes "
                            "stopped on this thread",
                            kMaxPaused);
  }
  return loom_ok_status();
}

loom_status_t loom_tape_resume_recording(loom_op_handler_t* handler) {
  tape_t* tape = tape_of(handler);
  if (!tape) return not_a_tape("loom_tape_resume_recording", handler);
  if (!resume_tape(tape->id)) {
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "loom_tape_resume_recording: recording was not "
                            "stopped on this thread");
  }
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// The backward pass
//===----------------------------------------------------------------------===//

enum {
  kDependsOnSource = 1,  // a source, or computed from one on the tape
  kIsSource = 2,
  kSeedOnes = 4,  // the gradient so far is the tape's seed of ones alone
};

// A gradient contribution waiting to be summed.
typedef struct pending_t {
  loom_tensor_handle_t* handle;
  int32_t next;  // index + 1 of the next one of the same tensor; 0: none
} pending_t;

enum { kMaxPending = 64 };  // contributions summed at once at most

typedef struct backward_t {
  tape_t* tape;
  loom_context_t* eager;
  uint8_t* flags;                // per tensor id
  loom_tensor_handle_t** grads;  // per tensor id: the first contribution
  // The others, summed with one AddN when the tensor's gradient is used
  // (TensorFlow's aggregation): per tensor id, the index + 1 of its list
  // in `pending` and the list's length.
  int32_t* extra;
  uint8_t* num_extra;
  pending_t* pending;
  int32_t num_pending;
  int32_t pending_capacity;
  int32_t free_pending;        // index + 1 of a free entry; 0: none
  uint8_t* node_needed;        // per node
  loom_op_handler_t* entered;  // the scope entered for the node, or NULL
  loom__grad_op_cache_t cache;
} backward_t;

// Sums the contributions to the gradient of tensor `id` into grads[id].
static loom_status_t flush(backward_t* b, int64_t id) {
  if (!b->extra[id]) return loom_ok_status();
  loom_tensor_handle_t* terms[kMaxPending + 1];
  int32_t count = 0;
  terms[count++] = b->grads[id];
  for (int32_t i = b->extra[id]; i;) {
    pending_t* entry = &b->pending[i - 1];
    terms[count++] = entry->handle;
    entry->handle = NULL;
    int32_t next = entry->next;
    entry->next = b->free_pending;
    b->free_pending = i;
    i = next;
  }
  b->extra[id] = 0;
  b->num_extra[id] = 0;
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
static loom_status_t accumulate(backward_t* b, int64_t id,
                                loom_tensor_handle_t* gradient) {
  if (!b->grads[id]) {
    b->grads[id] = gradient;
    return loom_ok_status();
  }
  b->flags[id] &= (uint8_t)~kSeedOnes;
  int32_t index = b->free_pending;
  if (index) {
    b->free_pending = b->pending[index - 1].next;
  } else {
    if (b->num_pending == b->pending_capacity) {
      int32_t capacity = b->pending_capacity ? 2 * b->pending_capacity : 16;
      pending_t* grown = NULL;
      loom_status_t status = loom_allocator_malloc(
          b->tape->allocator, sizeof(*grown) * (size_t)capacity,
          (void**)&grown);
      if (status) {
        loom_tensor_handle_release(gradient);
        return status;
      }
      if (b->num_pending) {
        memcpy(grown, b->pending, sizeof(*grown) * (size_t)b->num_pending);
      }
      loom_allocator_free(b->tape->allocator, b->pending);
      b->pending = grown;
      b->pending_capacity = capacity;
    }
    index = ++b->num_pending;
  }
  b->pending[index - 1].handle = gradient;
  b->pending[index - 1].next = b->extra[id];
  b->extra[id] = index;
  if (++b->num_extra[id] == kMaxPending) return flush(b, id);
  return loom_ok_status();
}

// Runs the backward ops of a node with the handlers it ran under: enters
// its outer handler's scope (the CPU needs none).
static loom_status_t enter_outer(backward_t* b, loom_op_handler_t* outer) {
  if (outer == b->entered) return loom_ok_status();
  if (b->entered) {
    loom_status_ignore(loom_context_exit_scope(b->eager));
    b->entered = NULL;
  }
  if (loom_op_handler_is_final(outer)) return loom_ok_status();
  LOOM_RETURN_IF_ERROR(loom_context_enter_scope(b->eager, outer));
  b->entered = outer;
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Recompute segments
//===----------------------------------------------------------------------===//

static bool made_in(const tape_segment_t* segment, int64_t id) {
  return id >= segment->first_id && id < segment->end_id;
}

// Executes a recorded op again on `inputs` (the forward op's placement:
// the scope of its outer handler is entered).
static loom_status_t replay(backward_t* b, const tape_node_t* node,
                            loom_tensor_handle_t* const* inputs,
                            loom_tensor_handle_t** results) {
  LOOM_RETURN_IF_ERROR(enter_outer(b, node->outer));
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

// Re-executes the nodes of `segment` up to `last` (an index) from the
// inputs they kept, and gives each node the recomputed tensors its
// gradient function uses.
static loom_status_t materialize(backward_t* b, tape_segment_t* segment,
                                 int64_t last) {
  int64_t count = segment->end_id - segment->first_id;
  loom_tensor_handle_t** made = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      b->tape->allocator, sizeof(*made) * (size_t)(count + 1), (void**)&made));
  loom_tensor_handle_t* inline_inputs[kInlineArgs];
  loom_status_t status = loom_ok_status();
  for (int64_t i = segment->first_node; i <= last && !status; ++i) {
    tape_node_t* node = b->tape->nodes[i];
    int32_t n = node->num_inputs;
    loom_tensor_handle_t** inputs = inline_inputs;
    if (n > kInlineArgs) {
      status = loom_allocator_malloc(
          b->tape->allocator, sizeof(*inputs) * (size_t)n, (void**)&inputs);
      if (status) break;
    }
    for (int32_t j = 0; j < n && !status; ++j) {
      int64_t id = node->input_ids[j];
      inputs[j] =
          made_in(segment, id) ? made[id - segment->first_id] : node->inputs[j];
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
      if (!made_in(segment, node->input_ids[j]) || !uses(inputs_used, j)) {
        continue;
      }
      loom_tensor_handle_retain(inputs[j]);
      node->inputs[j] = inputs[j];
    }
    for (int32_t k = 0; k < node->num_outputs && !status; ++k) {
      if (!uses(outputs_used, k)) continue;
      loom_tensor_handle_retain(results[k]);
      node->outputs[k] = results[k];
    }
    if (status) {
      status = loom_status_annotate(status, "recomputing %s", node->op_name);
    }
    if (inputs != inline_inputs)
      loom_allocator_free(b->tape->allocator, inputs);
  }
  loom__grad_release_all(made, (int32_t)count);
  loom_allocator_free(b->tape->allocator, made);
  segment->materialized = true;  // partly, on failure: dematerialize frees
  return status;
}

// Drops the recomputed tensors the nodes of `segment` hold, keeping the
// segment's inputs.
static void dematerialize(tape_t* tape, tape_segment_t* segment) {
  for (int64_t i = segment->first_node;
       i < segment->first_node + segment->num_nodes; ++i) {
    tape_node_t* node = tape->nodes[i];
    for (int32_t j = 0; j < node->num_inputs; ++j) {
      if (!made_in(segment, node->input_ids[j])) continue;
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

static loom_status_t run_node(backward_t* b, tape_node_t* node) {
  int32_t n = node->num_inputs;
  int32_t m = node->num_outputs;
  loom_tensor_handle_t* inline_in[kInlineArgs];
  loom_tensor_handle_t* inline_out[kInlineArgs];
  bool inline_needed[kInlineArgs];
  loom_tensor_handle_t** input_grads = inline_in;
  loom_tensor_handle_t** output_grads = inline_out;
  bool* needed = inline_needed;
  void* heap = NULL;
  if (n > kInlineArgs || m > kInlineArgs) {
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
        b->tape->allocator,
        (sizeof(loom_tensor_handle_t*) + sizeof(bool)) * (size_t)(n + m),
        &heap));
    input_grads = heap;
    output_grads = input_grads + n;
    needed = (bool*)(output_grads + m);
  }
  for (int32_t j = 0; j < n; ++j) {
    input_grads[j] = NULL;
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
    output_grads[k] = b->grads[id];
    b->grads[id] = NULL;  // consumed here
  }
  if (!status && !node->def) {
    status = loom_make_status(
        LOOM_STATUS_NOT_FOUND,
        "loom_tape_gradient: no gradient is registered for op '%s' "
        "(register one with loom_gradient_register)",
        node->op_name);
  }
  if (!status && node->outer != b->entered) {
    status = enter_outer(b, node->outer);
  }
  if (!status) {
    loom_gradient_context_t context;
    loom__gradient_context_initialize(
        &context, b->eager, node->op_name, node->op_def, node->attrs, n,
        node->inputs, node->metadata, m, node->outputs, node->metadata + n);
    context.op_cache = &b->cache;
    context.input_needed = needed;
    context.ones_output_gradients = ones;
    context.output_gradients = output_grads;
    status = node->def->fn(&context, output_grads, input_grads,
                           node->def->user_data);
    loom__gradient_context_deinitialize(&context);
    if (status) {
      status = loom_status_annotate(status, "gradient of %s", node->op_name);
    }
  }
  for (int32_t k = 0; k < m; ++k) loom_tensor_handle_release(output_grads[k]);
  if (!b->tape->options.persistent) release_node_tensors(node);
  for (int32_t j = 0; j < n; ++j) {
    loom_tensor_handle_t* gradient = input_grads[j];
    if (!gradient) continue;
    int64_t id = node->input_ids[j];
    if (status || !needed[j]) {
      loom_tensor_handle_release(gradient);
      continue;
    }
    status = accumulate(b, id, gradient);
  }
  if (heap) loom_allocator_free(b->tape->allocator, heap);
  return status;
}

// The default gradient of a target: ones shaped like it. A scalar loss on
// the CPU gets a constant (no op to run); anything else, OnesLike on the
// target's handler.
static loom_status_t ones_seed(backward_t* b, loom_tensor_handle_t* target,
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
static loom_status_t zeros_for(backward_t* b, loom_tensor_handle_t* source,
                               int64_t id, loom_tensor_handle_t** out) {
  *out = NULL;
  if (loom_tensor_handle_dtype(source) != LOOM_DTYPE_RESOURCE) {
    return loom__grad_execute_in(b->eager, "ZerosLike", &source, 1, NULL, 0,
                                 out, 1);
  }
  for (int64_t i = 0; id >= 0 && i < b->tape->num_nodes; ++i) {
    tape_node_t* node = b->tape->nodes[i];
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

static loom_status_t backward_locked(
    tape_t* tape, loom_tensor_handle_t* const* targets, int32_t num_targets,
    loom_tensor_handle_t* const* sources, int32_t num_sources,
    loom_tensor_handle_t* const* output_gradients,
    loom_unconnected_gradients_t unconnected,
    loom_tensor_handle_t** out_gradients) {
  backward_t b;
  memset(&b, 0, sizeof(b));
  b.tape = tape;
  b.eager = tape->context;
  int64_t num_ids = tape->next_id;
  int64_t num_nodes = tape->num_nodes;
  void* block = NULL;
  size_t bytes =
      (sizeof(loom_tensor_handle_t*) + sizeof(int32_t) + 2) * (size_t)num_ids +
      (size_t)num_nodes + 1;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(tape->allocator, bytes, &block));
  b.grads = block;
  b.extra = (int32_t*)(b.grads + num_ids);
  b.flags = (uint8_t*)(b.extra + num_ids);
  b.num_extra = b.flags + num_ids;
  b.node_needed = b.num_extra + num_ids;
  loom_status_t status = loom_ok_status();

  int64_t stack_source_ids[16];
  int64_t* source_ids = stack_source_ids;
  void* source_block = NULL;
  if (num_sources > 16) {
    status = loom_allocator_malloc(
        tape->allocator, sizeof(int64_t) * (size_t)num_sources, &source_block);
    source_ids = source_block;
  }
  for (int32_t s = 0; s < num_sources && !status; ++s) {
    source_ids[s] = lookup_locked(tape, sources[s]);
    if (source_ids[s] >= 0) {
      b.flags[source_ids[s]] |= kDependsOnSource | kIsSource;
    }
  }
  // Forward: what depends on a source (recording order is topological).
  for (int64_t i = 0; i < num_nodes && !status; ++i) {
    tape_node_t* node = tape->nodes[i];
    bool depends = false;
    for (int32_t j = 0; j < node->num_inputs && !depends; ++j) {
      int64_t id = node->input_ids[j];
      depends = id >= 0 && (b.flags[id] & kDependsOnSource);
    }
    if (!depends) continue;
    b.node_needed[i] = 1;
    for (int32_t k = 0; k < node->num_outputs; ++k) {
      b.flags[node->first_output_id + k] |= kDependsOnSource;
    }
  }
  // The seeds.
  for (int32_t t = 0; t < num_targets && !status; ++t) {
    int64_t id = lookup_locked(tape, targets[t]);
    if (id < 0 || !(b.flags[id] & kDependsOnSource)) continue;
    loom_tensor_handle_t* seed = NULL;
    bool ones = !(output_gradients && output_gradients[t]);
    if (!ones) {
      seed = output_gradients[t];
      loom_tensor_handle_retain(seed);
    } else {
      status = ones_seed(&b, targets[t], &seed);
    }
    bool first = !b.grads[id];
    if (!status) status = accumulate(&b, id, seed);
    if (!status && ones && first) b.flags[id] |= kSeedOnes;
  }
  // Backward, in reverse recording order.
  for (int64_t i = num_nodes - 1; i >= 0 && !status; --i) {
    if (!b.node_needed[i]) continue;
    tape_node_t* node = tape->nodes[i];
    bool any = false;
    for (int32_t k = 0; k < node->num_outputs; ++k) {
      int64_t id = node->first_output_id + k;
      if (!b.grads[id]) continue;
      any = true;
      if (!(b.flags[id] & kIsSource)) continue;
      // A source computed on the tape: its gradient is complete now.
      status = flush(&b, id);
      if (status) break;
      for (int32_t s = 0; s < num_sources; ++s) {
        if (source_ids[s] == id && !out_gradients[s]) {
          loom_tensor_handle_retain(b.grads[id]);
          out_gradients[s] = b.grads[id];
        }
      }
    }
    if (any && !status && node->segment && !node->segment->materialized) {
      status = materialize(&b, node->segment, i);
    }
    if (any && !status) status = run_node(&b, node);
  }
  for (int64_t i = 0; i < num_nodes && tape->num_segments; ++i) {
    tape_segment_t* segment = tape->nodes[i]->segment;
    if (segment && segment->materialized) dematerialize(tape, segment);
  }
  if (b.entered) {
    loom_status_ignore(loom_context_exit_scope(b.eager));
    b.entered = NULL;
  }
  for (int32_t s = 0; s < num_sources && !status; ++s) {
    int64_t id = source_ids[s];
    if (!out_gradients[s] && id >= 0 && b.grads[id]) {
      status = flush(&b, id);
      if (status) break;
      loom_tensor_handle_retain(b.grads[id]);
      out_gradients[s] = b.grads[id];
    }
    if (!out_gradients[s] && unconnected == LOOM_UNCONNECTED_ZERO) {
      status = zeros_for(&b, sources[s], id, &out_gradients[s]);
    }
  }
  loom__grad_op_cache_clear(&b.cache);
  for (int64_t id = 0; id < num_ids; ++id) {
    loom_tensor_handle_release(b.grads[id]);
  }
  for (int32_t i = 0; i < b.num_pending; ++i) {
    loom_tensor_handle_release(b.pending[i].handle);
  }
  loom_allocator_free(tape->allocator, b.pending);
  loom_allocator_free(tape->allocator, block);
  if (source_block) loom_allocator_free(tape->allocator, source_block);
  if (status) loom__grad_release_all(out_gradients, num_sources);
  return status;
}

loom_status_t loom_tape_gradient(loom_op_handler_t* handler,
                                 loom_tensor_handle_t* const* targets,
                                 int32_t num_targets,
                                 loom_tensor_handle_t* const* sources,
                                 int32_t num_sources,
                                 loom_tensor_handle_t* const* output_gradients,
                                 loom_unconnected_gradients_t unconnected,
                                 loom_tensor_handle_t** out_gradients) {
  tape_t* tape = tape_of(handler);
  if (!tape) return not_a_tape("loom_tape_gradient", handler);
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
  if (!pause_tape(tape->id)) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "loom_tape_gradient: more than %d tapes stopped "
                            "on this thread",
                            kMaxPaused);
  }
  tape_lock(tape);
  loom_status_t status;
  if (tape->released) {
    status = loom_make_status(
        LOOM_STATUS_FAILED_PRECONDITION,
        "loom_tape_gradient: a tape that is not persistent computes "
        "gradients only once (create it with options.persistent set to "
        "call loom_tape_gradient several times)");
  } else {
    status = backward_locked(tape, targets, num_targets, sources, num_sources,
                             output_gradients, unconnected, out_gradients);
    if (!tape->options.persistent) {
      release_recorded_locked(tape);
      tape->released = true;
      atomic_store_explicit(&tape->tracking, false, memory_order_relaxed);
    }
  }
  tape_unlock(tape);
  resume_tape(tape->id);
  return status;
}

loom_status_t loom_tape_jacobian(loom_op_handler_t* handler,
                                 loom_tensor_handle_t* target,
                                 loom_tensor_handle_t* source,
                                 loom_tensor_handle_t** out_jacobian) {
  tape_t* tape = tape_of(handler);
  if (!tape) return not_a_tape("loom_tape_jacobian", handler);
  if (!target || !source || !out_jacobian) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tape_jacobian: %s is NULL",
                            !target   ? "target"
                            : !source ? "source"
                                      : "out_jacobian");
  }
  *out_jacobian = NULL;
  if (!tape->options.persistent) {
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "loom_tape_jacobian: the tape must be persistent "
                            "(it computes one gradient per element of the "
                            "target)");
  }
  loom_tensor_metadata_t target_metadata, source_metadata;
  LOOM_RETURN_IF_ERROR(
      loom_tensor_handle_wait_metadata(target, &target_metadata));
  LOOM_RETURN_IF_ERROR(
      loom_tensor_handle_wait_metadata(source, &source_metadata));
  loom_dtype_t dtype = target_metadata.dtype;
  if ((dtype != LOOM_DTYPE_FLOAT && dtype != LOOM_DTYPE_DOUBLE) ||
      source_metadata.dtype == LOOM_DTYPE_RESOURCE ||
      !loom_shape_is_fully_defined(&target_metadata.shape) ||
      target_metadata.shape.rank + source_metadata.shape.rank > LOOM_MAX_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tape_jacobian: needs a float or double "
                            "target and a tensor source whose ranks add up "
                            "to at most %d",
                            LOOM_MAX_RANK);
  }
  int64_t count = loom_shape_num_elements(&target_metadata.shape);
  if (count > (1 << 20)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tape_jacobian: the target has %lld "
                            "elements; the row-by-row Jacobian is meant for "
                            "small cases",
                            (long long)count);
  }
  loom_context_t* eager = tape->context;
  loom_tensor_handle_t** rows = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      tape->allocator, sizeof(*rows) * (size_t)(count + 1), (void**)&rows));
  loom_status_t status = loom_ok_status();
  size_t element = loom_dtype_size(dtype);
  for (int64_t i = 0; i < count && !status; ++i) {
    loom_tensor_t* one_hot = NULL;
    status = loom_tensor_create_dense(tape->allocator, dtype,
                                      &target_metadata.shape, &one_hot);
    if (status) break;
    memset(loom_tensor_data(one_hot), 0, element * (size_t)count);
    if (dtype == LOOM_DTYPE_FLOAT) {
      ((float*)loom_tensor_data(one_hot))[i] = 1.0f;
    } else {
      ((double*)loom_tensor_data(one_hot))[i] = 1.0;
    }
    loom_tensor_handle_t* seed = NULL;
    status = loom_context_new_handle(eager, one_hot, &seed);
    loom_tensor_release(one_hot);
    if (!status) {
      status = loom_tape_gradient(handler, &target, 1, &source, 1, &seed,
                                  LOOM_UNCONNECTED_ZERO, &rows[i]);
    }
    loom_tensor_handle_release(seed);
  }
  loom_shape_t shape = target_metadata.shape;
  for (int32_t d = 0; d < source_metadata.shape.rank; ++d) {
    shape.dims[shape.rank++] = source_metadata.shape.dims[d];
  }
  loom_gradient_context_t context;
  loom__gradient_context_initialize(&context, eager, "Pack", NULL, NULL, 0,
                                    NULL, NULL, 0, NULL, NULL);
  if (!status && count == 0) {
    loom_tensor_metadata_t metadata = {.dtype = source_metadata.dtype,
                                       .shape = shape};
    status = loom__grad_filled(&context, &metadata, 0.0, out_jacobian);
  } else if (!status) {
    loom_tensor_handle_t* packed = NULL;
    status = loom__grad_execute(
        &context, "Pack", rows, (int32_t)count,
        LOOM_GRAD_ATTRS(LOOM_GRAD_INT("N", count), LOOM_GRAD_INT("axis", 0)),
        &packed, 1);
    loom_tensor_handle_t* dims = NULL;
    if (!status) status = loom__grad_shape_constant(&context, &shape, &dims);
    if (!status) {
      status =
          loom__grad_binary(&context, "Reshape", packed, dims, out_jacobian);
    }
    loom_tensor_handle_release(dims);
    loom_tensor_handle_release(packed);
  }
  loom__grad_release_all(rows, (int32_t)count);
  loom_allocator_free(tape->allocator, rows);
  return status;
}

loom_status_t loom_tape_statistics(loom_op_handler_t* handler,
                                   loom_tape_statistics_t* out_statistics) {
  tape_t* tape = tape_of(handler);
  if (!tape) return not_a_tape("loom_tape_statistics", handler);
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
  tape_lock(tape);
  result.num_ops = tape->num_nodes;
  result.num_recompute_segments = tape->num_segments;
  for (int64_t i = 0; i < tape->num_nodes && !status; ++i) {
    tape_node_t* node = tape->nodes[i];
    int32_t count = node->num_inputs + node->num_outputs;
    for (int32_t j = 0; j < count && !status; ++j) {
      // node->outputs follows node->inputs
      loom_tensor_handle_t* handle = node->inputs[j];
      uint64_t key = (uint64_t)(uintptr_t)handle;
      if (!handle || loom__hash_map_find(&seen, key, NULL)) continue;
      status = loom__hash_map_insert(&seen, key, 0);
      if (status) break;
      result.num_kept_tensors++;
      loom_tensor_metadata_t metadata;
      if (!loom_tensor_handle_metadata_available(handle)) continue;
      loom_status_t unknown = loom_tensor_handle_metadata(handle, &metadata);
      if (unknown) {
        loom_status_free(unknown);  // an error handle: no bytes
        continue;
      }
      if (loom_shape_is_fully_defined(&metadata.shape)) {
        result.kept_bytes += loom_shape_num_elements(&metadata.shape) *
                             (int64_t)loom_dtype_size(metadata.dtype);
      }
    }
  }
  tape_unlock(tape);
  loom__hash_map_deinitialize(&seen);
  if (!status) *out_statistics = result;
  return status;
}
