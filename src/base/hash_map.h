// An open-addressing hash map from 64-bit keys to 64-bit values.
//
// Keys are integers or pointers (interned strings, op definitions), so one
// map type serves every table: linear probing over a power-of-two array,
// load factor at most 3/4 including tombstones. Not thread-safe; owners
// lock around it when they share it.

#ifndef LOOM_BASE_HASH_MAP_H_
#define LOOM_BASE_HASH_MAP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/allocator.h"
#include "loom/status.h"

typedef struct loom__hash_map_t {
  loom_allocator_t allocator;
  uint64_t* keys;
  uint64_t* values;
  uint8_t* states;  // kEmpty / kFull / kDeleted per slot
  size_t capacity;  // 0 or a power of two
  size_t size;
  size_t tombstones;
} loom__hash_map_t;

void loom__hash_map_initialize(loom__hash_map_t* map,
                               loom_allocator_t allocator);
void loom__hash_map_deinitialize(loom__hash_map_t* map);

// Inserts or overwrites. RESOURCE_EXHAUSTED leaves the map unchanged.
LOOM_MUST_USE_RESULT loom_status_t loom__hash_map_insert(loom__hash_map_t* map,
                                                         uint64_t key,
                                                         uint64_t value);

// Makes room for `count` entries without further growth.
LOOM_MUST_USE_RESULT loom_status_t loom__hash_map_reserve(loom__hash_map_t* map,
                                                          size_t count);

// True and *out_value (optional) when present.
bool loom__hash_map_find(const loom__hash_map_t* map, uint64_t key,
                         uint64_t* out_value);

// True when the key was present.
bool loom__hash_map_remove(loom__hash_map_t* map, uint64_t key);

static inline size_t loom__hash_map_size(const loom__hash_map_t* map) {
  return map->size;
}

// Iterates: start with *cursor = 0; returns false at the end. The order is
// unspecified; the map must not change during the iteration.
bool loom__hash_map_next(const loom__hash_map_t* map, size_t* cursor,
                         uint64_t* out_key, uint64_t* out_value);

// A 64-bit mixer (the splitmix64 finalizer): spreads integer and pointer keys.
static inline uint64_t loom__hash_u64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// FNV-1a over bytes, finished with loom__hash_u64.
uint64_t loom__hash_bytes(const void* data, size_t length);

#endif  // LOOM_BASE_HASH_MAP_H_
