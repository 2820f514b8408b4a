// Ref-counted host buffers: owned (header and data in one allocation,
// optionally after a prefix the tensor layer puts its tensor in) or wrapped
// (caller memory plus a deallocator).

#include "loom/buffer.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/allocator_internal.h"
#include "base/ref_count.h"
#include "tensor/buffer_internal.h"

loom_status_t loom__buffer_allocation_error(const loom_allocator_t* allocator,
                                            size_t size, size_t data_at) {
  if (!allocator->allocate || !allocator->deallocate) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_buffer_allocate: the allocator has no "
                            "allocate or deallocate function");
  }
  if (size > SIZE_MAX - data_at) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "loom_buffer_allocate: %zu bytes is too large",
                            size);
  }
  return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory: %zu bytes requested", data_at + size);
}

loom_status_t loom_buffer_allocate(loom_allocator_t allocator, size_t size,
                                   size_t alignment,
                                   loom_buffer_t** out_buffer) {
  if (!out_buffer) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_buffer_allocate: out_buffer is NULL");
  }
  *out_buffer = NULL;
  if (alignment == 0) alignment = LOOM_DEFAULT_DATA_ALIGNMENT;
  if ((alignment & (alignment - 1)) != 0) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_buffer_allocate: alignment %zu is not a power of two", alignment);
  }
  return loom__buffer_allocate_with_prefix(&allocator, 0, size, alignment,
                                           out_buffer, NULL);
}

loom_status_t loom_buffer_wrap(loom_allocator_t allocator, void* data,
                               size_t size,
                               loom_buffer_deallocator_fn_t deallocator,
                               void* deallocator_arg,
                               loom_buffer_t** out_buffer) {
  loom_status_t status = loom_ok_status();
  loom_buffer_t* buffer = NULL;
  if (!out_buffer) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "loom_buffer_wrap: out_buffer is NULL");
  } else if (!data && size) {
    *out_buffer = NULL;
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "loom_buffer_wrap: data is NULL but size is %zu",
                              size);
  } else {
    *out_buffer = NULL;
    status = loom_allocator_malloc(allocator, sizeof(*buffer), (void**)&buffer);
  }
  if (status) {
    if (deallocator) deallocator(data, size, deallocator_arg);
    return status;
  }
  loom__ref_count_init(&buffer->ref_count);
  buffer->owns_memory = false;
  buffer->allocator = allocator;
  buffer->block = buffer;
  buffer->data = data;
  buffer->size = size;
  buffer->deallocator = deallocator;
  buffer->deallocator_arg = deallocator_arg;
  *out_buffer = buffer;
  return loom_ok_status();
}

loom_status_t loom__buffer_allocate_with_finalizer(
    loom_allocator_t allocator, size_t size, size_t alignment,
    loom_buffer_deallocator_fn_t finalizer, loom_buffer_t** out_buffer) {
  LOOM_RETURN_IF_ERROR(
      loom_buffer_allocate(allocator, size, alignment, out_buffer));
  if (size) memset((*out_buffer)->data, 0, size);
  (*out_buffer)->deallocator = finalizer;
  return loom_ok_status();
}

void loom_buffer_retain(loom_buffer_t* buffer) {
  if (buffer) loom__ref_count_inc(&buffer->ref_count);
}

void loom_buffer_release(loom_buffer_t* buffer) {
  if (buffer) loom__buffer_release(buffer);
}

void* loom_buffer_data(const loom_buffer_t* buffer) {
  return buffer->data;
}

size_t loom_buffer_size(const loom_buffer_t* buffer) {
  return buffer->size;
}

bool loom_buffer_is_unique(const loom_buffer_t* buffer) {
  return loom__ref_count_is_one(&buffer->ref_count);
}

bool loom_buffer_owns_memory(const loom_buffer_t* buffer) {
  return buffer->owns_memory;
}
