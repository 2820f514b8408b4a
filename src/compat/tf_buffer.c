// TF_Buffer: a byte block with an optional deallocator.

#include "tensorflow/c/tf_buffer.h"

#include <stdlib.h>
#include <string.h>

static void free_copied_bytes(void* data, size_t length) {
  (void)length;
  free(data);
}

TF_Buffer* TF_NewBuffer(void) {
  return calloc(1, sizeof(TF_Buffer));
}

TF_Buffer* TF_NewBufferFromString(const void* proto, size_t proto_len) {
  if (!proto && proto_len) return NULL;
  TF_Buffer* buffer = TF_NewBuffer();
  if (!buffer) return NULL;
  void* copy = malloc(proto_len ? proto_len : 1);
  if (!copy) {
    free(buffer);
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
  free(buffer);
}

TF_Buffer TF_GetBuffer(TF_Buffer* buffer) {
  TF_Buffer copy = {NULL, 0, NULL};
  if (buffer) copy = *buffer;
  return copy;
}
