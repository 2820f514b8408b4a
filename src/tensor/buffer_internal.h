// Buffer allocation for the tensor layer: buffers whose contents need
// tearing down before their memory is freed (string tensors: each element
// may own heap memory), and buffers that carry their tensor in one block.

#ifndef LOOM_TENSOR_BUFFER_INTERNAL_H_
#define LOOM_TENSOR_BUFFER_INTERNAL_H_

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "base/allocator_internal.h"
#include "base/ref_count.h"
#include "loom/buffer.h"

// Here rather than in buffer.c so that the tensor layer's release, on every
// op's hot path, drops a buffer without a call.
struct loom_buffer_t {
  loom__ref_count_t ref_count;
  bool owns_memory;
  loom_allocator_t allocator;
  void* block;  // what to free: the allocation holding this header
  void* data;
  size_t size;
  // Wrapped memory: frees it. Owned memory: an optional finalizer.
  loom_buffer_deallocator_fn_t deallocator;
  void* deallocator_arg;
};

// loom_buffer_release for a buffer known not to be NULL.
static inline void loom__buffer_release(loom_buffer_t* buffer) {
  if (!loom__ref_count_dec(&buffer->ref_count)) return;
  if (LOOM_UNLIKELY(buffer->deallocator != NULL)) {
    buffer->deallocator(buffer->data, buffer->size, buffer->deallocator_arg);
  }
  loom__deallocate(buffer->allocator, buffer->block);
}

// As loom_buffer_allocate, zero-filled; `finalizer(data, size, NULL)` runs
// when the last reference goes, before the memory is freed.
loom_status_t loom__buffer_allocate_with_finalizer(
    loom_allocator_t allocator, size_t size, size_t alignment,
    loom_buffer_deallocator_fn_t finalizer, loom_buffer_t** out_buffer);

// Why loom__buffer_allocate_with_prefix cannot allocate (out of line).
loom_status_t loom__buffer_allocation_error(const loom_allocator_t* allocator,
                                            size_t size, size_t data_at);

// Allocates a buffer whose block starts with `prefix_size` bytes for the
// caller (*out_prefix): the tensor layer keeps a dense tensor's header
// there, so that a tensor and its data cost one allocation. The prefix is
// freed with the buffer. `alignment` must be a power of two. Inline: with
// a constant prefix and alignment, the layout below folds to constants.
// GCC 12 at -O3 reports a false -Wstringop-overflow on the atomic store
// into a block that comes back through the allocator's function pointer.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static inline loom_status_t loom__buffer_allocate_with_prefix(
    const loom_allocator_t* allocator, size_t prefix_size, size_t size,
    size_t alignment, loom_buffer_t** out_buffer, void** out_prefix) {
  // [prefix][header][padding to `alignment`][data], one block.
  const size_t granule = alignof(max_align_t);
  if (alignment < granule) alignment = granule;
  size_t header_at = (prefix_size + granule - 1) & ~(granule - 1);
  size_t data_at =
      (header_at + sizeof(loom_buffer_t) + alignment - 1) & ~(alignment - 1);
  if (LOOM_UNLIKELY(size > (SIZE_MAX >> 1) - data_at || !allocator->allocate ||
                    !allocator->deallocate)) {
    return loom__buffer_allocation_error(allocator, size, data_at);
  }
  char* block = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__allocate(*allocator, data_at + size, alignment, (void**)&block));
  loom_buffer_t* buffer = (loom_buffer_t*)(block + header_at);
  loom__ref_count_init(&buffer->ref_count);
  buffer->owns_memory = true;
  buffer->allocator = *allocator;
  buffer->block = block;
  buffer->data = block + data_at;
  buffer->size = size;
  buffer->deallocator = NULL;
  buffer->deallocator_arg = NULL;
  *out_buffer = buffer;
  if (out_prefix) *out_prefix = block;
  return loom_ok_status();
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // LOOM_TENSOR_BUFFER_INTERNAL_H_
