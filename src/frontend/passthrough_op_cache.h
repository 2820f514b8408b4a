// A thread's cache of the op data that pass-through handlers prepare over a
// final handler (a device, e.g. the CPU), keyed by (handler type, final
// handler, op definition). A handler made per call (a vmap or a tape per
// step) is a new handler each time, so its ops are prepared on it again; the
// op data (the op prepared on the final handler, the type's rule or
// gradient look-ups) depends on none of that handler's state, and a new one
// finds it here ready.
//
// An entry serves while the registries have not changed since it was
// prepared (loom__registry_generation) and the type's op_data_reusable
// accepts it (e.g. the tape's gradient registry generation). It lives in
// the thread's scope stack (frontend_internal.h), so it needs no lock and
// is freed with the context; the op data it holds is shared between
// threads only through its atomic reference count, as
// loom__passthrough_reuse_op_data shares it.

#ifndef LOOM_FRONTEND_PASSTHROUGH_OP_CACHE_H_
#define LOOM_FRONTEND_PASSTHROUGH_OP_CACHE_H_

#include "base/hash_map.h"
#include "frontend/passthrough_handler.h"

typedef struct loom__passthrough_op_cache_t {
  loom_allocator_t allocator;
  loom__hash_map_t map;  // key -> the first entry of its chain
} loom__passthrough_op_cache_t;

void loom__passthrough_op_cache_initialize(loom__passthrough_op_cache_t* cache,
                                           loom_allocator_t allocator);
// Releases every entry's op data.
void loom__passthrough_op_cache_deinitialize(
    loom__passthrough_op_cache_t* cache);

// The op data of `op_name` (defined by `op_def`) prepared earlier for a
// handler of base's type over base's final outer handler, as a new
// reference, or NULL.
loom__passthrough_op_t* loom__passthrough_op_cache_find(
    loom__passthrough_op_cache_t* cache, const loom__passthrough_t* base,
    const char* op_name, const loom_op_def_t* op_def);

// Remembers `data` (retained), prepared by `base` at registry generation
// `generation`, in place of any entry of the same key. Best effort: out of
// memory, nothing is remembered.
void loom__passthrough_op_cache_insert(loom__passthrough_op_cache_t* cache,
                                       const loom__passthrough_t* base,
                                       const char* op_name,
                                       const loom_op_def_t* op_def,
                                       uint64_t generation,
                                       loom__passthrough_op_t* data);

#endif  // LOOM_FRONTEND_PASSTHROUGH_OP_CACHE_H_
