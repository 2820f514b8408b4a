// TF_Buffer: a byte block with an optional deallocator.
//
// TF_Buffer's fields are public and fixed by TensorFlow, so the allocator a
// buffer came from lives next to it in a private wrapper, and copied bytes
// are a tagged block that knows its allocator: both are freed where they
// came from even after the default allocator changed.

#include "tensorflow/c/tf_buffer.h"

#include <stddef.h>
#include <string.h>

#include "base/tagged_block.h"
#include "loom/allocator.h"

typedef struct buffer_block_t {
  TF_Buffer buffer;  // first: TF_Buffer* and buffer_block_t* convert
  loom_allocator_t allocator;
} buffer_block_t;

static void free_copied_bytes(void* data, size_t length) {
  (void)length;
  loom__tagged_block_free(data);
}

TF_Buffer* TF_NewBuffer(void) {
  loom_allocator_t allocator = loom_allocator_default();
  buffer_block_t* block = NULL;
  loom_status_t status =
      loom_allocator_calloc(allocator, sizeof(*block), (void**)&block);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  block->allocator = allocator;
  return &block->buffer;
}

TF_Buffer* TF_NewBufferFromString(const void* proto, size_t proto_len) {
  if (!proto && proto_len) return NULL;
  void* copy = NULL;
  loom_status_t status = loom__tagged_block_allocate(
      loom_allocator_default(), proto_len ? proto_len : 1, &copy);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  TF_Buffer* buffer = TF_NewBuffer();
  if (!buffer) {
    loom__tagged_block_free(copy);
    return NULL;
  }
  if (proto_len) memcpy(copy, proto, proto_len);
  buffer->data = copy;
  buffer->length = proto_len;
  buffer->data_deallocator = free_copied_bytes;
  return buffer;
}

void TF_DeleteBuffer(TF_Buffer* buffer) {
  if (!buffer) return;
  if (buffer->data_deallocator) {
    buffer->data_deallocator((void*)buffer->data, buffer->length);
  }
  buffer_block_t* block = (buffer_block_t*)buffer;
  loom_allocator_free(block->allocator, block);
}

TF_Buffer TF_GetBuffer(TF_Buffer* buffer) {
  TF_Buffer copy = {0};
  if (buffer) copy = *buffer;
  return copy;
}
