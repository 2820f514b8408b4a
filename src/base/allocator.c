// The system allocator, the process default, and the checked helpers every
// layer allocates through.

#include "loom/allocator.h"

#include "base/allocator_internal.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void* system_allocate(void* self, size_t size, size_t alignment) {
  (void)self;
  if (alignment <= alignof(max_align_t)) return malloc(size);
  void* ptr = NULL;
  if (posix_memalign(&ptr, alignment, size) != 0) return NULL;
  return ptr;
}

static void system_deallocate(void* self, void* ptr) {
  (void)self;
  free(ptr);
}

loom_allocator_t loom_allocator_system(void) {
  loom_allocator_t allocator = {.allocate = system_allocate,
                                .deallocate = system_deallocate};
  return allocator;
}

// The default allocator lives in a slot published through an atomic pointer
// so readers never see a half-written struct. Process-wide by its API:
// TensorFlow's TF_AllocateTensor and the like take no allocator or context.
static loom_allocator_t default_slots[2];
static _Atomic(loom_allocator_t*) default_allocator = NULL;

loom_allocator_t loom_allocator_default(void) {
  loom_allocator_t* current =
      atomic_load_explicit(&default_allocator, memory_order_acquire);
  return current ? *current : loom_allocator_cached();
}

loom_allocator_t loom_allocator_set_default(loom_allocator_t allocator) {
  loom_allocator_t* current =
      atomic_load_explicit(&default_allocator, memory_order_acquire);
  loom_allocator_t previous = current ? *current : loom_allocator_cached();
  loom_allocator_t* next =
      current == &default_slots[0] ? &default_slots[1] : &default_slots[0];
  *next = allocator;
  atomic_store_explicit(&default_allocator, next, memory_order_release);
  return previous;
}

loom_status_t loom__allocator_out_of_memory(size_t size) {
  return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory allocating %zu bytes", size);
}

static bool is_power_of_two(size_t value) {
  return value != 0 && (value & (value - 1)) == 0;
}

loom_status_t loom_allocator_malloc_aligned(loom_allocator_t allocator,
                                            size_t size, size_t alignment,
                                            void** out_ptr) {
  if (!out_ptr) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_allocator_malloc: out_ptr is NULL");
  }
  *out_ptr = NULL;
  if (!allocator.allocate || !allocator.deallocate) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_allocator_malloc: allocator has no allocate/deallocate function");
  }
  if (!is_power_of_two(alignment)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_allocator_malloc: alignment %zu is not a power of two",
        alignment);
  }
  if (alignment < alignof(max_align_t)) alignment = alignof(max_align_t);
  if (size == 0) size = 1;
  if (size > (SIZE_MAX >> 1)) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory: %zu bytes requested", size);
  }
  return loom__allocate(allocator, size, alignment, out_ptr);
}

loom_status_t loom_allocator_malloc(loom_allocator_t allocator, size_t size,
                                    void** out_ptr) {
  return loom_allocator_malloc_aligned(allocator, size, alignof(max_align_t),
                                       out_ptr);
}

loom_status_t loom_allocator_calloc(loom_allocator_t allocator, size_t size,
                                    void** out_ptr) {
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(allocator, size, out_ptr));
  memset(*out_ptr, 0, size);
  return loom_ok_status();
}

void loom_allocator_free(loom_allocator_t allocator, void* ptr) {
  if (ptr && allocator.deallocate) loom__deallocate(allocator, ptr);
}
