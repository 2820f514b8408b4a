// Out-of-line growth shared by every small-vector instantiation.

#include "base/small_vector.h"

loom_status_t loom__small_vector_grow(loom_allocator_t allocator,
                                      const void* current, void* old_heap,
                                      size_t size, size_t element_size,
                                      size_t* inout_capacity,
                                      size_t min_capacity, void** out_heap) {
  size_t capacity = *inout_capacity ? *inout_capacity : 1;
  while (capacity < min_capacity) {
    if (capacity > SIZE_MAX / 2) {
      capacity = min_capacity;
      break;
    }
    capacity *= 2;
  }
  if (capacity > SIZE_MAX / element_size) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "small vector: %zu elements of %zu bytes overflow",
                            capacity, element_size);
  }
  void* heap = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, capacity * element_size, &heap));
  if (size) memcpy(heap, current, size * element_size);
  loom_allocator_free(allocator, old_heap);
  *inout_capacity = capacity;
  *out_heap = heap;
  return loom_ok_status();
}
