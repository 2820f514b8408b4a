// The shape pool: where the dims of shapes above LOOM_MAX_RANK live.
//
// A loom_shape_t is a plain struct that code copies freely, so the dims it
// points to can have no owner to free them: they are interned here, one
// immutable copy per distinct dims, for the process's life. The pool is
// process-wide because shapes are made where no runtime or context is at
// hand (TF_AllocateTensor). Large ranks are rare; LOOM_SHAPE_POOL_BYTES
// bounds what an endless stream of distinct ones may take.

#include <pthread.h>
#include <string.h>

#include "base/hash_map.h"
#include "tensor/shape_internal.h"

typedef struct pool_entry_t {
  struct pool_entry_t* next;  // same hash
  int32_t rank;
  int64_t dims[];
} pool_entry_t;

static pthread_mutex_t g_pool_mutex = PTHREAD_MUTEX_INITIALIZER;
static loom__hash_map_t g_pool;        // hash -> pool_entry_t chain
static loom__hash_map_t g_by_address;  // entry->dims -> entry
static bool g_pool_initialized;
static size_t g_pool_bytes;

static pool_entry_t* find(pool_entry_t* head, const int64_t* dims, int rank) {
  for (pool_entry_t* entry = head; entry; entry = entry->next) {
    if (entry->rank == rank &&
        memcmp(entry->dims, dims, sizeof(int64_t) * (size_t)rank) == 0) {
      return entry;
    }
  }
  return NULL;
}

static loom_status_t add(uint64_t hash, pool_entry_t* head, const int64_t* dims,
                         int rank, pool_entry_t** out_entry) {
  size_t bytes = sizeof(pool_entry_t) + sizeof(int64_t) * (size_t)rank;
  if (g_pool_bytes + bytes > LOOM_SHAPE_POOL_BYTES) {
    return loom_make_status(
        LOOM_STATUS_RESOURCE_EXHAUSTED,
        "the pool of shapes above rank %d is full (%zu bytes of distinct "
        "dims); a shape of rank %d cannot be made",
        LOOM_MAX_RANK, (size_t)LOOM_SHAPE_POOL_BYTES, rank);
  }
  loom_allocator_t allocator = loom_allocator_system();
  pool_entry_t* entry = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(allocator, bytes, (void**)&entry));
  entry->next = head;
  entry->rank = rank;
  memcpy(entry->dims, dims, sizeof(int64_t) * (size_t)rank);
  loom_status_t status = loom__hash_map_reserve(
      &g_by_address, loom__hash_map_size(&g_by_address) + 1);
  if (!status) {
    status = loom__hash_map_insert(&g_pool, hash, (uint64_t)(uintptr_t)entry);
  }
  if (status) {
    loom_allocator_free(allocator, entry);
    return status;
  }
  // Reserved: cannot fail.
  loom_status_ignore(loom__hash_map_insert(&g_by_address,
                                           (uint64_t)(uintptr_t)entry->dims,
                                           (uint64_t)(uintptr_t)entry));
  g_pool_bytes += bytes;
  *out_entry = entry;
  return loom_ok_status();
}

loom_status_t loom__shape_pool_intern(const int64_t* dims, int rank,
                                      const int64_t** out_dims) {
  uint64_t hash = loom__hash_bytes(dims, sizeof(int64_t) * (size_t)rank) ^
                  loom__hash_u64((uint64_t)rank);
  pthread_mutex_lock(&g_pool_mutex);
  if (!g_pool_initialized) {
    loom__hash_map_initialize(&g_pool, loom_allocator_system());
    loom__hash_map_initialize(&g_by_address, loom_allocator_system());
    g_pool_initialized = true;
  }
  uint64_t head = 0;
  loom__hash_map_find(&g_pool, hash, &head);
  pool_entry_t* entry = find((pool_entry_t*)(uintptr_t)head, dims, rank);
  loom_status_t status = loom_ok_status();
  if (!entry) {
    status = add(hash, (pool_entry_t*)(uintptr_t)head, dims, rank, &entry);
  }
  pthread_mutex_unlock(&g_pool_mutex);
  if (!status) *out_dims = entry->dims;
  return status;
}

bool loom__shape_pool_owns(const int64_t* dims, int rank) {
  uint64_t found = 0;
  pthread_mutex_lock(&g_pool_mutex);
  bool owned =
      g_pool_initialized &&
      loom__hash_map_find(&g_by_address, (uint64_t)(uintptr_t)dims, &found) &&
      ((const pool_entry_t*)(uintptr_t)found)->rank == rank;
  pthread_mutex_unlock(&g_pool_mutex);
  return owned;
}
