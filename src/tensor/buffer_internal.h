// Buffers whose contents need tearing down before their memory is freed
// (string tensors: each element may own heap memory).

#ifndef LOOM_TENSOR_BUFFER_INTERNAL_H_
#define LOOM_TENSOR_BUFFER_INTERNAL_H_

#include "loom/buffer.h"

// As loom_buffer_allocate, zero-filled; `finalizer(data, size, NULL)` runs
// when the last reference goes, before the memory is freed.
loom_status_t loom__buffer_allocate_with_finalizer(
    loom_allocator_t allocator, size_t size, size_t alignment,
    loom_buffer_deallocator_fn_t finalizer, loom_buffer_t** out_buffer);

#endif  // LOOM_TENSOR_BUFFER_INTERNAL_H_
