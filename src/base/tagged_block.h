// Blocks tagged with the allocator they came from, for memory whose owner
// has no room to record one (TF_Buffer data, whose layout TensorFlow fixes;
// a TF_TString's LARGE bytes come from malloc, as TensorFlow's inline code
// frees them with free). A small header just before the block
// holds the allocator's self and deallocate function, so the block is freed
// where it came from even after loom_allocator_set_default changed the
// default. Such a block may only be freed with loom__tagged_block_free.

#ifndef LOOM_BASE_TAGGED_BLOCK_H_
#define LOOM_BASE_TAGGED_BLOCK_H_

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/allocator.h"
#include "loom/status.h"

typedef struct loom__tagged_block_header_t {
  // Aligned like malloc's blocks, so the block after it is too.
  alignas(max_align_t) void* self;
  loom_deallocate_fn_t deallocate;
} loom__tagged_block_header_t;

// Allocates `size` bytes from `allocator` (aligned for any scalar type).
// RESOURCE_EXHAUSTED when the allocator fails.
static inline LOOM_MUST_USE_RESULT loom_status_t loom__tagged_block_allocate(
    loom_allocator_t allocator, size_t size, void** out_ptr) {
  *out_ptr = NULL;
  if (size > SIZE_MAX / 2) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory: %zu bytes requested", size);
  }
  loom__tagged_block_header_t* header = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(allocator, sizeof(*header) + size,
                                             (void**)&header));
  header->self = allocator.self;
  header->deallocate = allocator.deallocate;
  *out_ptr = header + 1;
  return loom_ok_status();
}

// Frees a block from loom__tagged_block_allocate; NULL is a no-op.
static inline void loom__tagged_block_free(void* ptr) {
  if (!ptr) return;
  loom__tagged_block_header_t* header = (loom__tagged_block_header_t*)ptr - 1;
  header->deallocate(header->self, header);
}

#endif  // LOOM_BASE_TAGGED_BLOCK_H_
