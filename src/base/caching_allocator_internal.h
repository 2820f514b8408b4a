// The caching allocator's per-thread free lists, shared with the hot paths
// that allocate through it (base/allocator_internal.h): a hit in the calling
// thread's list is a few instructions inlined at the call site instead of an
// indirect call. Everything else (first use on a thread, refills, large
// blocks, a disabled cache) stays in caching_allocator.c.

#ifndef LOOM_BASE_CACHING_ALLOCATOR_INTERNAL_H_
#define LOOM_BASE_CACHING_ALLOCATOR_INTERNAL_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/macros.h"

enum {
  kLoomCacheNumClasses = 16,
  kLoomCacheNumKinds = 2,  // alignment <= 16, alignment <= 64
  kLoomCacheMaxSize = 4096,
  kLoomCacheMaxPerThread = 64,
};

// Just before every block the cache hands out.
typedef struct loom__cache_header_t {
  uint16_t size_class;  // or a large-block marker (>= kLoomCacheNumClasses)
  uint16_t kind;
  uint32_t prefix;  // bytes from the system block's start to the user pointer
} loom__cache_header_t;

typedef struct loom__cache_block_t {
  struct loom__cache_block_t* next;
} loom__cache_block_t;

typedef struct loom__cache_list_t {
  loom__cache_block_t* head;
  uint32_t count;
} loom__cache_list_t;

typedef struct loom__thread_cache_t {
  loom__cache_list_t lists[kLoomCacheNumKinds][kLoomCacheNumClasses];
  // Written only by the owning thread; read by the statistics.
  _Atomic int64_t requests;
  _Atomic int64_t system_allocations;
  struct loom__thread_cache_t* next;
  struct loom__thread_cache_t* prev;
} loom__thread_cache_t;

// The calling thread's cache; NULL until its first allocation through the
// cache, and always when the cache is off. Initial-exec, like all of the
// library's thread-locals (see LoomCompilerOptions.cmake).
extern _Thread_local loom__thread_cache_t* loom__t_cache;
// Size class of each 16-byte granule count, [0, kLoomCacheMaxSize / 16].
extern uint8_t loom__cache_class_of_granule[kLoomCacheMaxSize / 16 + 1];

// loom_allocator_cached()'s functions.
void* loom__cached_allocate(void* self, size_t size, size_t alignment);
void loom__cached_deallocate(void* self, void* ptr);

static inline loom__cache_header_t* loom__cache_header_of(void* ptr) {
  return (loom__cache_header_t*)((char*)ptr - sizeof(loom__cache_header_t));
}

// Counters only their owning thread writes: a plain load and store, no
// locked instruction.
static inline void loom__cache_count(_Atomic int64_t* counter) {
  atomic_store_explicit(counter,
                        atomic_load_explicit(counter, memory_order_relaxed) + 1,
                        memory_order_relaxed);
}

// A block from the calling thread's own list, or NULL (then the caller
// asks loom__cached_allocate, which handles every other case).
static inline void* loom__cache_pop(size_t size, size_t alignment) {
  loom__thread_cache_t* cache = loom__t_cache;
  if (LOOM_UNLIKELY(!cache || size > kLoomCacheMaxSize || alignment > 64)) {
    return NULL;
  }
  loom__cache_list_t* list =
      &cache->lists[alignment > 16]
                   [loom__cache_class_of_granule[(size + 15) / 16]];
  loom__cache_block_t* block = list->head;
  if (LOOM_UNLIKELY(!block)) return NULL;
  loom__cache_count(&cache->requests);
  list->head = block->next;
  list->count--;
  return block;
}

// Puts a block the cache handed out back on the calling thread's list;
// false when that is not the simple case (the caller then calls
// loom__cached_deallocate).
static inline bool loom__cache_push(void* ptr) {
  loom__thread_cache_t* cache = loom__t_cache;
  if (LOOM_UNLIKELY(!cache)) return false;
  loom__cache_header_t* header = loom__cache_header_of(ptr);
  if (LOOM_UNLIKELY(header->size_class >= kLoomCacheNumClasses)) return false;
  loom__cache_list_t* list = &cache->lists[header->kind][header->size_class];
  if (LOOM_UNLIKELY(list->count >= kLoomCacheMaxPerThread)) return false;
  loom__cache_block_t* block = ptr;
  block->next = list->head;
  list->head = block;
  list->count++;
  return true;
}

#endif  // LOOM_BASE_CACHING_ALLOCATOR_INTERNAL_H_
