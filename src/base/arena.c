// Bump allocation over a list of blocks.

#include "base/arena.h"

#include <string.h>

enum { kBlockSize = 2048 };

struct loom__arena_block_t {
  loom__arena_block_t* next;
  size_t used;
  size_t capacity;
  _Alignas(16) unsigned char data[];
};

void loom__arena_initialize(loom__arena_t* arena, loom_allocator_t allocator) {
  arena->allocator = allocator;
  arena->blocks = NULL;
}

void loom__arena_deinitialize(loom__arena_t* arena) {
  for (loom__arena_block_t* block = arena->blocks; block;) {
    loom__arena_block_t* next = block->next;
    loom_allocator_free(arena->allocator, block);
    block = next;
  }
  arena->blocks = NULL;
}

loom_status_t loom__arena_allocate(loom__arena_t* arena, size_t size,
                                   void** out_ptr) {
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  loom__arena_block_t* block = arena->blocks;
  if (!block || block->capacity - block->used < size) {
    size_t capacity = size > kBlockSize ? size : kBlockSize;
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc_aligned(
        arena->allocator, sizeof(loom__arena_block_t) + capacity, 16,
        (void**)&block));
    block->used = 0;
    block->capacity = capacity;
    block->next = arena->blocks;
    arena->blocks = block;
  }
  void* ptr = block->data + block->used;
  block->used += size;
  memset(ptr, 0, size);
  *out_ptr = ptr;
  return loom_ok_status();
}

loom_status_t loom__arena_strndup(loom__arena_t* arena, const char* data,
                                  size_t length, const char** out_copy) {
  char* copy = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(arena, length + 1, (void**)&copy));
  if (length) memcpy(copy, data, length);
  copy[length] = '\0';
  *out_copy = copy;
  return loom_ok_status();
}
