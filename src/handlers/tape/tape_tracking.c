// Which tensors a tape tracks, and under which ids: tags on the handles it
// tracks first, a map (holding one reference each) for the handles another
// tape tagged, the watched sources, and the hand-over of a tag from one
// tape to another.

#include "handlers/tape/tape_internal.h"

// The fences below order atomics, which ThreadSanitizer never reports; it
// does not model fences, and GCC warns about them under it.
#if defined(__SANITIZE_THREAD__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wtsan"
#endif

static uint64_t tag_of(const tape_t* tape, int64_t id) {
  if (!tape->tag_base || id < 0 || (uint64_t)id >= TAPE_TAG_ID_MASK) return 0;
  return tape->tag_base | (uint64_t)(id + 1);
}

int64_t loom__tape_lookup_locked(const tape_t* tape,
                                 const loom_tensor_handle_t* handle) {
  if (!handle) return -1;
  int64_t id = loom__tape_tagged_id(tape, handle);
  if (id >= 0 || !loom__tape_any_spilled(tape)) return id;
  uint64_t value = 0;
  if (!loom__hash_map_find(&tape->spilled, (uint64_t)(uintptr_t)handle,
                           &value)) {
    return -1;
  }
  return (int64_t)value;
}

static void publish_spilled(tape_t* tape) {
  atomic_store_explicit(&tape->num_spilled, loom__hash_map_size(&tape->spilled),
                        memory_order_relaxed);
}

// Tracks `handle` (not tracked yet) in the map, under `id`. The map's room
// must have been reserved.
static void spill_locked(tape_t* tape, loom_tensor_handle_t* handle,
                         int64_t id) {
  loom_status_ignore(loom__hash_map_insert(
      &tape->spilled, (uint64_t)(uintptr_t)handle, (uint64_t)id));
  loom_tensor_handle_retain(handle);
  publish_spilled(tape);
}

// loom__tape_track_locked, telling whether it tagged the handle.
static bool tag_or_spill_locked(tape_t* tape, loom_tensor_handle_t* handle,
                                int64_t id) {
  uint64_t tag = tag_of(tape, id);
  uint64_t expected = 0;
  if (tag && loom_tensor_handle_exchange_tag(handle, &expected, tag)) {
    return true;
  }
  if (tag && (expected & ~TAPE_TAG_ID_MASK) == tape->tag_base) return false;
  if (loom__tape_any_spilled(tape) &&
      loom__hash_map_find(&tape->spilled, (uint64_t)(uintptr_t)handle, NULL)) {
    return false;
  }
  spill_locked(tape, handle, id);
  return false;
}

void loom__tape_track_locked(tape_t* tape, loom_tensor_handle_t* handle,
                             int64_t id) {
  (void)tag_or_spill_locked(tape, handle, id);
}

loom_status_t loom__tape_watch_locked(tape_t* tape,
                                      loom_tensor_handle_t* handle) {
  if (loom__tape_lookup_locked(tape, handle) >= 0) return loom_ok_status();
  LOOM_RETURN_IF_ERROR(loom__handle_vector_reserve(
      &tape->watched, tape->allocator,
      loom__handle_vector_size(&tape->watched) + 1));
  LOOM_RETURN_IF_ERROR(loom__hash_map_reserve(
      &tape->spilled, loom__hash_map_size(&tape->spilled) + 1));
  if (tag_or_spill_locked(tape, handle, tape->next_id)) {
    loom_tensor_handle_retain(handle);
    loom_status_ignore(  // room reserved
        loom__handle_vector_push(&tape->watched, tape->allocator, handle));
  }
  tape->next_id++;
  atomic_store_explicit(&tape->tracking, true, memory_order_relaxed);
  return loom_ok_status();
}

void loom__tape_sweep_locked(tape_t* tape) {
  size_t count = loom__hash_map_size(&tape->spilled);
  uint64_t* dead = NULL;
  if (loom_allocator_malloc(tape->allocator, sizeof(uint64_t) * count,
                            (void**)&dead)) {
    tape->sweep_at = 2 * count + kTapeSweepMinimum;
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
  publish_spilled(tape);
  size_t live = loom__hash_map_size(&tape->spilled);
  tape->sweep_at = 2 * live > kTapeSweepMinimum ? 2 * live : kTapeSweepMinimum;
}

void loom__tape_untrack_all_locked(tape_t* tape) {
  loom_tensor_handle_t** watched = loom__handle_vector_data(&tape->watched);
  for (size_t i = 0; i < loom__handle_vector_size(&tape->watched); ++i) {
    uint64_t expected = loom_tensor_handle_tag(watched[i]);
    if ((expected & ~TAPE_TAG_ID_MASK) == tape->tag_base) {
      loom_tensor_handle_exchange_tag(watched[i], &expected, 0);
    }
    loom_tensor_handle_release(watched[i]);
  }
  loom__handle_vector_deinitialize(&tape->watched, tape->allocator);
  size_t cursor = 0;
  uint64_t key = 0, value = 0;
  while (loom__hash_map_next(&tape->spilled, &cursor, &key, &value)) {
    loom_tensor_handle_release((loom_tensor_handle_t*)(uintptr_t)key);
  }
  loom__hash_map_deinitialize(&tape->spilled);
  loom__hash_map_initialize(&tape->spilled, tape->allocator);
  atomic_store_explicit(&tape->num_spilled, 0, memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// Handing a tag over
//===----------------------------------------------------------------------===//

// The live tapes by id, so that a tape watching a handle another tape
// tagged can take the tag over: the other tape (a training loop's previous
// step, kept by a cached op) tracks the handle in its map from then on.
// Process-wide because tags are: a host handle is every context's tensor.
static pthread_mutex_t g_tapes_mutex = PTHREAD_MUTEX_INITIALIZER;
static loom__hash_map_t g_tapes;  // id -> tape_t*
static bool g_tapes_initialized;

loom_status_t loom__tape_register(tape_t* tape) {
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

bool loom__tape_unref(tape_t* tape) {
  pthread_mutex_lock(&g_tapes_mutex);
  bool last = loom__ref_count_dec(&tape->ref_count);
  if (last && g_tapes_initialized) loom__hash_map_remove(&g_tapes, tape->id);
  pthread_mutex_unlock(&g_tapes_mutex);
  return last;
}

// The live tape `tag` names, retained, or NULL.
static tape_t* tape_of_tag(uint64_t tag) {
  tape_t* tape = NULL;
  pthread_mutex_lock(&g_tapes_mutex);
  uint64_t value = 0;
  if (g_tapes_initialized && loom__hash_map_find(&g_tapes, tag >> 32, &value)) {
    tape = (tape_t*)(uintptr_t)value;
    loom__ref_count_inc(&tape->ref_count);
  }
  pthread_mutex_unlock(&g_tapes_mutex);
  return tape;
}

// Moves `handle`, tagged `tag` by `other`, into other's map and clears the
// tag (other's lock held).
static void spill_tagged_locked(tape_t* other, loom_tensor_handle_t* handle,
                                uint64_t tag) {
  uint64_t expected = tag;
  loom_status_t status = loom__hash_map_reserve(
      &other->spilled, loom__hash_map_size(&other->spilled) + 1);
  uint64_t key = (uint64_t)(uintptr_t)handle;
  if (!status && !loom__hash_map_find(&other->spilled, key, NULL)) {
    // Into the map before the tag goes: a thread recording on `other`
    // reads an input's tag without the lock, and the size of the map only
    // when the tag is not other's (loom__tape_execute), so it must not see
    // the tag cleared and the map still empty.
    spill_locked(other, handle, (int64_t)(tag & TAPE_TAG_ID_MASK) - 1);
    atomic_thread_fence(memory_order_release);
    if (!loom_tensor_handle_exchange_tag(handle, &expected, 0)) {
      // The tag changed meanwhile: `other` does not need the entry.
      loom__hash_map_remove(&other->spilled, key);
      publish_spilled(other);
      loom_tensor_handle_release(handle);
    }
  } else if (!status) {
    loom_tensor_handle_exchange_tag(handle, &expected, 0);
  }
  loom_status_free(status);
}

void loom__tape_take_tag_over(loom_tensor_handle_t* handle, uint64_t tag) {
  tape_t* other = tape_of_tag(tag);
  uint64_t expected = tag;
  if (!other) {  // gone: the tag means nothing
    loom_tensor_handle_exchange_tag(handle, &expected, 0);
    return;
  }
  loom__tape_lock(other);
  if (other->released) {
    loom_tensor_handle_exchange_tag(handle, &expected, 0);
  } else {
    spill_tagged_locked(other, handle, tag);
  }
  loom__tape_unlock(other);
  loom__tape_release(other);
}
