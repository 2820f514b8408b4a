// The process-wide caching allocator: small blocks recycled through
// per-thread free lists, so that steady-state op dispatch (result handles,
// tensors, small buffers) never reaches malloc.
//
// Every block carries an 8-byte header just before the pointer handed out:
// its size class (or a large-block marker) and the distance back to the
// start of the memory the system allocator returned. Blocks of up to
// kMaxCachedSize bytes come in size classes, separately for alignments up to
// 16 and up to 64 (tensor data).
//
// Larger blocks (tensor data; alignment up to 64) are rounded up to classes
// of four per power of two (waste under 25%) and recycled through one
// process-wide set of LIFO lists under a mutex, holding at most a byte
// budget (LOOM_ALLOCATOR_LARGE_CACHE_MB; by default an eighth of the RAM, at
// most 4 GiB): a fresh 64 MiB buffer costs sixteen thousand page faults,
// a recycled one none. Blocks over the budget, huge ones, and more aligned
// ones go straight back to the system. loom_allocator_cache_trim returns the
// cached blocks.
//
// A thread frees into, and allocates from, its own lists without atomics.
// A list longer than kMaxPerThread gives kTransfer blocks to a shared depot
// (one mutex); an empty list takes up to kTransfer back from it before it
// asks the system. A thread's lists go to the depot when the thread exits.
// The depot's blocks stay reachable from globals, so leak checkers are
// quiet. Address-sanitized builds, and processes started with
// LOOM_ALLOCATOR_CACHE=0, skip the cache and its headers entirely: every
// request is a plain malloc, so ASan and valgrind see every block and free.

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/caching_allocator_internal.h"
#include "loom/allocator.h"

#if defined(__SANITIZE_ADDRESS__)
#define LOOM_CACHE_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOOM_CACHE_ENABLED 0
#endif
#endif
#ifndef LOOM_CACHE_ENABLED
#define LOOM_CACHE_ENABLED 1
#endif

enum {
  kNumClasses = kLoomCacheNumClasses,
  kNumKinds = kLoomCacheNumKinds,
  kMaxCachedSize = kLoomCacheMaxSize,
  kMaxPerThread = kLoomCacheMaxPerThread,
  kTransfer = 32,
  kLargeClass = 0xffff,        // from the system, freed to it
  kLargeCachedClass = 0xfffe,  // a large class; `kind` holds its index
  kLargeClassesPerOctave = 4,
  // Octaves 13 (8 KiB, covering 4 KiB + 1 up) to 40 (1 TiB).
  kFirstLargeOctave = 12,
  kNumLargeClasses = (40 - kFirstLargeOctave) * kLargeClassesPerOctave,
  kLargePrefix = 64,
};

static const uint32_t kClassSizes[kNumClasses] = {
    16,  32,  48,  64,   96,   128,  192,  256,
    384, 512, 768, 1024, 1536, 2048, 3072, 4096};
static const uint32_t kKindPrefix[kNumKinds] = {16, 64};

typedef loom__cache_header_t block_header_t;
typedef loom__cache_block_t free_block_t;
typedef loom__cache_list_t free_list_t;
typedef loom__thread_cache_t thread_cache_t;

// Process-wide, as malloc is: a block freed on any thread, by any runtime,
// goes back to the one cache it came from (loom_allocator_cached() has no
// owner to pass). Per-thread lists are the thread's own, by design.
static pthread_mutex_t g_depot_mutex = PTHREAD_MUTEX_INITIALIZER;
static free_list_t g_depot[kNumKinds][kNumClasses];
static thread_cache_t* g_caches;  // live thread caches, under the mutex
static int64_t g_retired_requests;
static int64_t g_retired_system_allocations;
static pthread_key_t g_cache_key;
static pthread_once_t g_cache_key_once = PTHREAD_ONCE_INIT;
static atomic_bool g_disabled;  // LOOM_ALLOCATOR_CACHE=0, read once

// The large-block cache.
static pthread_mutex_t g_large_mutex = PTHREAD_MUTEX_INITIALIZER;
static free_block_t* g_large_lists[kNumLargeClasses];
static size_t g_large_cached_bytes;  // under g_large_mutex
static size_t g_large_budget;        // set once, by initialize_once

_Thread_local thread_cache_t* loom__t_cache;

uint8_t loom__cache_class_of_granule[kMaxCachedSize / 16 + 1];

// Blocks this large (tensor data) are fresh mappings each time; asking for
// transparent huge pages makes their first touch fault once per 2 MiB, not
// once per 4 KiB (as NumPy does).
enum { kHugePageThreshold = 4 << 20 };

// The advice covers the block's whole pages: the partial ones at its ends
// are mapped too (the block's own mapping, or the heap), and a huge page
// must lie entirely in advised memory.
static void advise_huge_pages(void* raw, size_t size) {
#ifdef MADV_HUGEPAGE
  uintptr_t begin = (uintptr_t)raw & ~(uintptr_t)4095;
  uintptr_t end = ((uintptr_t)raw + size + 4095) & ~(uintptr_t)4095;
  if (end > begin) (void)madvise((void*)begin, end - begin, MADV_HUGEPAGE);
#else
  (void)raw;
  (void)size;
#endif
}

static void* system_block(size_t size, uint16_t size_class, uint16_t kind,
                          uint32_t prefix) {
  if (size > SIZE_MAX - prefix) return NULL;
  void* raw = NULL;
  if (prefix <= alignof(max_align_t)) {
    raw = malloc(prefix + size);
  } else if (posix_memalign(&raw, prefix, prefix + size) != 0) {
    raw = NULL;
  }
  if (!raw) return NULL;
  if (size >= kHugePageThreshold) advise_huge_pages(raw, prefix + size);
  void* ptr = (char*)raw + prefix;
  block_header_t* header = loom__cache_header_of(ptr);
  header->size_class = size_class;
  header->kind = kind;
  header->prefix = prefix;
  return ptr;
}

static void system_free(void* ptr) {
  free((char*)ptr - loom__cache_header_of(ptr)->prefix);
}

static void move_blocks(free_list_t* from, free_list_t* to, uint32_t count) {
  for (uint32_t i = 0; i < count && from->head; ++i) {
    free_block_t* block = from->head;
    from->head = block->next;
    from->count--;
    block->next = to->head;
    to->head = block;
    to->count++;
  }
}

// Thread exit: the thread's blocks and counts go to the depot.
static void retire_cache(void* opaque) {
  thread_cache_t* cache = opaque;
  pthread_mutex_lock(&g_depot_mutex);
  for (int k = 0; k < kNumKinds; ++k) {
    for (int c = 0; c < kNumClasses; ++c) {
      move_blocks(&cache->lists[k][c], &g_depot[k][c], UINT32_MAX);
    }
  }
  g_retired_requests +=
      atomic_load_explicit(&cache->requests, memory_order_relaxed);
  g_retired_system_allocations +=
      atomic_load_explicit(&cache->system_allocations, memory_order_relaxed);
  if (cache->prev) cache->prev->next = cache->next;
  if (cache->next) cache->next->prev = cache->prev;
  if (g_caches == cache) g_caches = cache->next;
  pthread_mutex_unlock(&g_depot_mutex);
  loom__t_cache = NULL;
  free(cache);
}

// LOOM_ALLOCATOR_LARGE_CACHE_MB, else an eighth of the RAM, at most 4 GiB.
static size_t large_budget(void) {
  const char* setting = getenv("LOOM_ALLOCATOR_LARGE_CACHE_MB");
  if (setting && *setting) {
    char* end = NULL;
    unsigned long long mb = strtoull(setting, &end, 10);
    if (end && *end == '\0' && mb <= ((size_t)1 << 40)) {
      return (size_t)mb << 20;
    }
  }
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  size_t ram = pages > 0 && page_size > 0 ? (size_t)pages * (size_t)page_size
                                          : (size_t)1 << 30;
  size_t budget = ram / 8;
  size_t most = (size_t)4 << 30;
  return budget < most ? budget : most;
}

static void initialize_once(void) {
  pthread_key_create(&g_cache_key, retire_cache);
  const char* setting = getenv("LOOM_ALLOCATOR_CACHE");
  atomic_store(&g_disabled,
               !LOOM_CACHE_ENABLED || (setting && strcmp(setting, "0") == 0));
  g_large_budget = large_budget();
  int c = 0;
  for (uint32_t granule = 0; granule <= kMaxCachedSize / 16; ++granule) {
    while (kClassSizes[c] < granule * 16) c++;
    loom__cache_class_of_granule[granule] = (uint8_t)c;
  }
}

// The calling thread's cache, created on first use (NULL when that fails
// or the cache is off: callers then use the system directly).
static thread_cache_t* this_thread_cache(void) {
  thread_cache_t* cache = loom__t_cache;
  if (cache) return cache;
  pthread_once(&g_cache_key_once, initialize_once);
  if (atomic_load_explicit(&g_disabled, memory_order_relaxed)) return NULL;
  cache = calloc(1, sizeof(*cache));
  if (!cache) return NULL;
  if (pthread_setspecific(g_cache_key, cache) != 0) {
    free(cache);
    return NULL;
  }
  pthread_mutex_lock(&g_depot_mutex);
  cache->next = g_caches;
  if (g_caches) g_caches->prev = cache;
  g_caches = cache;
  pthread_mutex_unlock(&g_depot_mutex);
  loom__t_cache = cache;
  return cache;
}

// The large class of a block of `size` (> kMaxCachedSize) bytes and that
// class's size: 2^k * (1 + j/4), the smallest at least `size`.
static int large_class_of(size_t size, size_t* out_class_size) {
  int octave = 63 - __builtin_clzll((unsigned long long)(size - 1));
  // size - 1 has its top bit at `octave`: size is in (2^octave, 2^(octave+1)].
  size_t base = (size_t)1 << octave;
  size_t step = base / kLargeClassesPerOctave;
  size_t j = (size - base + step - 1) / step;  // 1 .. 4
  *out_class_size = base + j * step;
  return (octave - kFirstLargeOctave) * kLargeClassesPerOctave + (int)j - 1;
}

static size_t large_class_size(int large_class) {
  int octave = kFirstLargeOctave + large_class / kLargeClassesPerOctave;
  size_t base = (size_t)1 << octave;
  return base + (size_t)(large_class % kLargeClassesPerOctave + 1) *
                    (base / kLargeClassesPerOctave);
}

static void* large_allocate(thread_cache_t* cache, size_t size) {
  size_t class_size = 0;
  int large_class = large_class_of(size, &class_size);
  pthread_mutex_lock(&g_large_mutex);
  free_block_t* block = g_large_lists[large_class];
  if (block) {
    g_large_lists[large_class] = block->next;
    g_large_cached_bytes -= class_size;
  }
  pthread_mutex_unlock(&g_large_mutex);
  loom__cache_count(&cache->requests);
  if (block) return block;
  loom__cache_count(&cache->system_allocations);
  return system_block(class_size, kLargeCachedClass, (uint16_t)large_class,
                      kLargePrefix);
}

static void large_free(void* ptr) {
  int large_class = loom__cache_header_of(ptr)->kind;
  size_t class_size = large_class_size(large_class);
  pthread_mutex_lock(&g_large_mutex);
  if (g_large_cached_bytes + class_size <= g_large_budget) {
    free_block_t* block = ptr;
    block->next = g_large_lists[large_class];
    g_large_lists[large_class] = block;
    g_large_cached_bytes += class_size;
    ptr = NULL;
  }
  pthread_mutex_unlock(&g_large_mutex);
  if (ptr) system_free(ptr);
}

// Everything but a hit in this thread's list: large or very aligned blocks,
// the first call on a thread, refills from the depot, and malloc.
static __attribute__((noinline)) void* allocate_slow(size_t size,
                                                     size_t alignment) {
  thread_cache_t* cache = this_thread_cache();
  if (!cache && atomic_load_explicit(&g_disabled, memory_order_relaxed)) {
    // Off: malloc's own pointers, so that memory checkers see plain blocks.
    if (alignment <= alignof(max_align_t)) return malloc(size);
    void* ptr = NULL;
    return posix_memalign(&ptr, alignment, size) == 0 ? ptr : NULL;
  }
  if (cache && size > kMaxCachedSize && alignment <= kLargePrefix &&
      size <= ((size_t)1 << 40) && g_large_budget > 0) {
    return large_allocate(cache, size);
  }
  if (!cache || size > kMaxCachedSize || alignment > 64) {
    uint32_t prefix = alignment > 16 ? (uint32_t)alignment : 16;
    if (cache) {
      loom__cache_count(&cache->requests);
      loom__cache_count(&cache->system_allocations);
    }
    return system_block(size, kLargeClass, 0, prefix);
  }
  loom__cache_count(&cache->requests);
  int kind = alignment > 16 ? 1 : 0;
  int size_class = loom__cache_class_of_granule[(size + 15) / 16];
  free_list_t* list = &cache->lists[kind][size_class];
  if (!list->head) {
    pthread_mutex_lock(&g_depot_mutex);
    move_blocks(&g_depot[kind][size_class], list, kTransfer);
    pthread_mutex_unlock(&g_depot_mutex);
  }
  free_block_t* block = list->head;
  if (block) {
    list->head = block->next;
    list->count--;
    return block;
  }
  loom__cache_count(&cache->system_allocations);
  return system_block(kClassSizes[size_class], (uint16_t)size_class,
                      (uint16_t)kind, kKindPrefix[kind]);
}

void* loom__cached_allocate(void* self, size_t size, size_t alignment) {
  (void)self;
  void* block = loom__cache_pop(size, alignment);
  return LOOM_LIKELY(block != NULL) ? block : allocate_slow(size, alignment);
}

// A list past its limit gives blocks to the depot; a thread without a cache
// (or a large block) gives them back to the system.
static __attribute__((noinline)) void deallocate_slow(void* ptr) {
  // The cache is decided before the first block is handed out.
  if (atomic_load_explicit(&g_disabled, memory_order_relaxed)) {
    free(ptr);
    return;
  }
  block_header_t* header = loom__cache_header_of(ptr);
  if (header->size_class == kLargeCachedClass) {
    large_free(ptr);
    return;
  }
  thread_cache_t* cache =
      header->size_class == kLargeClass ? NULL : this_thread_cache();
  if (!cache) {
    system_free(ptr);
    return;
  }
  free_list_t* list = &cache->lists[header->kind][header->size_class];
  free_block_t* block = ptr;
  block->next = list->head;
  list->head = block;
  if (++list->count > kMaxPerThread) {
    pthread_mutex_lock(&g_depot_mutex);
    move_blocks(list, &g_depot[header->kind][header->size_class], kTransfer);
    pthread_mutex_unlock(&g_depot_mutex);
  }
}

void loom__cached_deallocate(void* self, void* ptr) {
  (void)self;
  // loom__t_cache is never set while the cache is off.
  if (!ptr || LOOM_LIKELY(loom__cache_push(ptr))) return;
  deallocate_slow(ptr);
}

loom_allocator_t loom_allocator_cached(void) {
  loom_allocator_t allocator = {.allocate = loom__cached_allocate,
                                .deallocate = loom__cached_deallocate};
  return allocator;
}

loom_allocator_cache_statistics_t loom_allocator_cache_statistics(void) {
  pthread_once(&g_cache_key_once, initialize_once);
  loom_allocator_cache_statistics_t statistics;
  pthread_mutex_lock(&g_depot_mutex);
  statistics.requests = g_retired_requests;
  statistics.system_allocations = g_retired_system_allocations;
  for (thread_cache_t* cache = g_caches; cache; cache = cache->next) {
    statistics.requests +=
        atomic_load_explicit(&cache->requests, memory_order_relaxed);
    statistics.system_allocations +=
        atomic_load_explicit(&cache->system_allocations, memory_order_relaxed);
  }
  pthread_mutex_unlock(&g_depot_mutex);
  pthread_mutex_lock(&g_large_mutex);
  statistics.large_cached_bytes = (int64_t)g_large_cached_bytes;
  pthread_mutex_unlock(&g_large_mutex);
  return statistics;
}

void loom_allocator_cache_trim(void) {
  pthread_once(&g_cache_key_once, initialize_once);
  free_block_t* lists[kNumLargeClasses];
  pthread_mutex_lock(&g_large_mutex);
  memcpy(lists, g_large_lists, sizeof(lists));
  memset(g_large_lists, 0, sizeof(g_large_lists));
  g_large_cached_bytes = 0;
  pthread_mutex_unlock(&g_large_mutex);
  for (int c = 0; c < kNumLargeClasses; ++c) {
    while (lists[c]) {
      free_block_t* block = lists[c];
      lists[c] = block->next;
      system_free(block);
    }
  }
  free_list_t depot[kNumKinds][kNumClasses];
  pthread_mutex_lock(&g_depot_mutex);
  memcpy(depot, g_depot, sizeof(depot));
  memset(g_depot, 0, sizeof(g_depot));
  pthread_mutex_unlock(&g_depot_mutex);
  for (int k = 0; k < kNumKinds; ++k) {
    for (int c = 0; c < kNumClasses; ++c) {
      while (depot[k][c].head) {
        free_block_t* block = depot[k][c].head;
        depot[k][c].head = block->next;
        system_free(block);
      }
    }
  }
}
