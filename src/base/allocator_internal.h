// Allocation on Loom's hot paths (result handles, tensors): the checks of
// loom_allocator_malloc_aligned are the caller's, a status is made only when
// memory runs out, and a request the caching allocator can serve from the
// calling thread's own list is served inline, without a call.

#ifndef LOOM_BASE_ALLOCATOR_INTERNAL_H_
#define LOOM_BASE_ALLOCATOR_INTERNAL_H_

#include <stdalign.h>
#include <stddef.h>

#include "base/caching_allocator_internal.h"
#include "loom/allocator.h"

// RESOURCE_EXHAUSTED naming the size; out of line, off the fast path.
loom_status_t loom__allocator_out_of_memory(size_t size);

// The caller guarantees 0 < size <= SIZE_MAX / 2 and a power-of-two
// alignment of at least alignof(max_align_t), and that `allocator` has both
// functions (every allocator Loom stores was checked when it was given).
static inline loom_status_t loom__allocate(loom_allocator_t allocator,
                                           size_t size, size_t alignment,
                                           void** out_ptr) {
  void* ptr = NULL;
  if (LOOM_LIKELY(allocator.allocate == loom__cached_allocate)) {
    ptr = loom__cache_pop(size, alignment);
  }
  if (LOOM_UNLIKELY(!ptr)) {
    ptr = allocator.allocate(allocator.self, size, alignment);
    if (LOOM_UNLIKELY(!ptr)) return loom__allocator_out_of_memory(size);
  }
  *out_ptr = ptr;
  return loom_ok_status();
}

static inline void loom__deallocate(loom_allocator_t allocator, void* ptr) {
  if (LOOM_LIKELY(allocator.deallocate == loom__cached_deallocate) && ptr &&
      LOOM_LIKELY(loom__cache_push(ptr))) {
    return;
  }
  allocator.deallocate(allocator.self, ptr);
}

#endif  // LOOM_BASE_ALLOCATOR_INTERNAL_H_
