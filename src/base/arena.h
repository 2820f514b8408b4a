// A bump allocator: many small allocations, freed all at once. Op
// definitions keep their strings and arrays in one.

#ifndef LOOM_BASE_ARENA_H_
#define LOOM_BASE_ARENA_H_

#include <stddef.h>

#include "loom/allocator.h"
#include "loom/status.h"

typedef struct loom_arena_block_t loom_arena_block_t;

typedef struct loom_arena_t {
  loom_allocator_t allocator;
  loom_arena_block_t* blocks;
} loom_arena_t;

void loom_arena_initialize(loom_arena_t* arena, loom_allocator_t allocator);
void loom_arena_deinitialize(loom_arena_t* arena);

// `size` bytes aligned to 16, zero-filled.
LOOM_MUST_USE_RESULT loom_status_t loom_arena_allocate(loom_arena_t* arena,
                                                       size_t size,
                                                       void** out_ptr);

// A NUL-terminated copy of data[0, length).
LOOM_MUST_USE_RESULT loom_status_t loom_arena_strndup(loom_arena_t* arena,
                                                      const char* data,
                                                      size_t length,
                                                      const char** out_copy);

#endif  // LOOM_BASE_ARENA_H_
