// A bump allocator: many small allocations, freed all at once. Op
// definitions keep their strings and arrays in one, a gradient tape its
// nodes. Blocks double from 2 KiB up to 1 MiB, so a small arena takes one
// small block and a large one few allocations.

#ifndef LOOM_BASE_ARENA_H_
#define LOOM_BASE_ARENA_H_

#include <stddef.h>

#include "loom/allocator.h"
#include "loom/macros.h"
#include "loom/status.h"

typedef struct loom__arena_block_t loom__arena_block_t;

typedef struct loom__arena_t {
  loom_allocator_t allocator;
  loom__arena_block_t* blocks;  // the newest first
  unsigned char* cursor;        // the newest block's free bytes
  size_t left;
} loom__arena_t;

void loom__arena_initialize(loom__arena_t* arena, loom_allocator_t allocator);
void loom__arena_deinitialize(loom__arena_t* arena);

// `size` bytes aligned to 16, zero-filled.
LOOM_MUST_USE_RESULT loom_status_t loom__arena_allocate(loom__arena_t* arena,
                                                        size_t size,
                                                        void** out_ptr);

// Takes a new block for `size` bytes (a multiple of 16) and allocates them.
LOOM_MUST_USE_RESULT loom_status_t
loom__arena_allocate_slow(loom__arena_t* arena, size_t size, void** out_ptr);

// As loom__arena_allocate, the bytes left for the caller to write (the
// fast path inline: no call while the newest block has room).
LOOM_MUST_USE_RESULT static inline loom_status_t
loom__arena_allocate_uninitialized(loom__arena_t* arena, size_t size,
                                   void** out_ptr) {
  size = size ? (size + 15) & ~(size_t)15 : 16;
  if (LOOM_LIKELY(size <= arena->left)) {
    *out_ptr = arena->cursor;
    arena->cursor += size;
    arena->left -= size;
    return loom_ok_status();
  }
  return loom__arena_allocate_slow(arena, size, out_ptr);
}

// A NUL-terminated copy of data[0, length).
LOOM_MUST_USE_RESULT loom_status_t loom__arena_strndup(loom__arena_t* arena,
                                                       const char* data,
                                                       size_t length,
                                                       const char** out_copy);

#endif  // LOOM_BASE_ARENA_H_
