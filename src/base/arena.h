// A bump allocator: many small allocations, freed all at once. Op
// definitions keep their strings and arrays in one.

#ifndef LOOM_BASE_ARENA_H_
#define LOOM_BASE_ARENA_H_

#include <stddef.h>

#include "loom/allocator.h"
#include "loom/status.h"

typedef struct loom__arena_block_t loom__arena_block_t;

typedef struct loom__arena_t {
  loom_allocator_t allocator;
  loom__arena_block_t* blocks;
} loom__arena_t;

void loom__arena_initialize(loom__arena_t* arena, loom_allocator_t allocator);
void loom__arena_deinitialize(loom__arena_t* arena);

// `size` bytes aligned to 16, zero-filled.
LOOM_MUST_USE_RESULT loom_status_t loom__arena_allocate(loom__arena_t* arena,
                                                        size_t size,
                                                        void** out_ptr);

// A NUL-terminated copy of data[0, length).
LOOM_MUST_USE_RESULT loom_status_t loom__arena_strndup(loom__arena_t* arena,
                                                       const char* data,
                                                       size_t length,
                                                       const char** out_copy);

#endif  // LOOM_BASE_ARENA_H_
