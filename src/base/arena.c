// Bump allocation over a list of blocks.

#include "base/arena.h"

#include <string.h>

enum { kBlockSize = 2048, kLargestBlock = 1 << 20 };

struct loom__arena_block_t {
  loom__arena_block_t* next;
  size_t capacity;
  _Alignas(16) unsigned char data[];
};

void loom__arena_initialize(loom__arena_t* arena, loom_allocator_t allocator) {
  arena->allocator = allocator;
  arena->blocks = NULL;
  arena->cursor = NULL;
  arena->left = 0;
}

void loom__arena_deinitialize(loom__arena_t* arena) {
  for (loom__arena_block_t* block = arena->blocks; block;) {
    loom__arena_block_t* next = block->next;
    loom_allocator_free(arena->allocator, block);
    block = next;
  }
  loom__arena_initialize(arena, arena->allocator);
}

loom_status_t loom__arena_allocate_slow(loom__arena_t* arena, size_t size,
                                        void** out_ptr) {
  size_t capacity = arena->blocks ? 2 * arena->blocks->capacity : kBlockSize;
  if (capacity > kLargestBlock) capacity = kLargestBlock;
  if (capacity < size) capacity = size;
  loom__arena_block_t* block = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc_aligned(
      arena->allocator, sizeof(loom__arena_block_t) + capacity, 16,
      (void**)&block));
  block->capacity = capacity;
  block->next = arena->blocks;
  arena->blocks = block;
  *out_ptr = block->data;
  arena->cursor = block->data + size;
  arena->left = capacity - size;
  return loom_ok_status();
}

loom_status_t loom__arena_allocate(loom__arena_t* arena, size_t size,
                                   void** out_ptr) {
  LOOM_RETURN_IF_ERROR(
      loom__arena_allocate_uninitialized(arena, size, out_ptr));
  memset(*out_ptr, 0, size);
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
