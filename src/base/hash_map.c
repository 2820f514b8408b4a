// Open addressing with linear probing; see hash_map.h.

#include "base/hash_map.h"

#include <string.h>

enum { kEmpty = 0, kFull = 1, kDeleted = 2 };

uint64_t loom__hash_bytes(const void* data, size_t length) {
  const unsigned char* bytes = data;
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < length; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return loom__hash_u64(hash);
}

void loom__hash_map_initialize(loom__hash_map_t* map,
                               loom_allocator_t allocator) {
  memset(map, 0, sizeof(*map));
  map->allocator = allocator;
}

void loom__hash_map_deinitialize(loom__hash_map_t* map) {
  // keys, values and states share one block that starts at keys.
  loom_allocator_free(map->allocator, map->keys);
  loom__hash_map_initialize(map, map->allocator);
}

// Finds the slot holding `key`, or SIZE_MAX.
static size_t find_slot(const loom__hash_map_t* map, uint64_t key) {
  if (map->capacity == 0) return SIZE_MAX;
  size_t mask = map->capacity - 1;
  size_t index = (size_t)loom__hash_u64(key) & mask;
  for (size_t probes = 0; probes < map->capacity; ++probes) {
    uint8_t state = map->states[index];
    if (state == kEmpty) return SIZE_MAX;
    if (state == kFull && map->keys[index] == key) return index;
    index = (index + 1) & mask;
  }
  return SIZE_MAX;
}

static loom_status_t rehash(loom__hash_map_t* map, size_t new_capacity) {
  size_t slot_bytes = 2 * sizeof(uint64_t) + 1;
  if (new_capacity > SIZE_MAX / slot_bytes) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "hash map: capacity %zu overflows", new_capacity);
  }
  void* block = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(map->allocator, new_capacity * slot_bytes, &block));
  uint64_t* keys = block;
  uint64_t* values = keys + new_capacity;
  uint8_t* states = (uint8_t*)(values + new_capacity);
  size_t mask = new_capacity - 1;
  for (size_t i = 0; i < map->capacity; ++i) {
    if (map->states[i] != kFull) continue;
    size_t index = (size_t)loom__hash_u64(map->keys[i]) & mask;
    while (states[index] == kFull) index = (index + 1) & mask;
    states[index] = kFull;
    keys[index] = map->keys[i];
    values[index] = map->values[i];
  }
  loom_allocator_free(map->allocator, map->keys);
  map->keys = keys;
  map->values = values;
  map->states = states;
  map->capacity = new_capacity;
  map->tombstones = 0;
  return loom_ok_status();
}

loom_status_t loom__hash_map_reserve(loom__hash_map_t* map, size_t count) {
  size_t capacity = map->capacity ? map->capacity : 8;
  // Keep (entries + tombstones) at most 3/4 of the slots.
  while ((count + map->tombstones) * 4 > capacity * 3) {
    if (capacity > SIZE_MAX / 2) {
      return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "hash map: %zu entries overflow", count);
    }
    capacity *= 2;
  }
  if (capacity == map->capacity) return loom_ok_status();
  return rehash(map, capacity);
}

loom_status_t loom__hash_map_insert(loom__hash_map_t* map, uint64_t key,
                                    uint64_t value) {
  size_t existing = find_slot(map, key);
  if (existing != SIZE_MAX) {
    map->values[existing] = value;
    return loom_ok_status();
  }
  if (map->capacity == 0 ||
      (map->size + map->tombstones + 1) * 4 > map->capacity * 3) {
    size_t target = map->capacity ? map->capacity : 8;
    if ((map->size + 1) * 4 > target * 3) target *= 2;  // grow, else purge
    LOOM_RETURN_IF_ERROR(rehash(map, target));
  }
  size_t mask = map->capacity - 1;
  size_t index = (size_t)loom__hash_u64(key) & mask;
  while (map->states[index] == kFull) index = (index + 1) & mask;
  if (map->states[index] == kDeleted) map->tombstones--;
  map->states[index] = kFull;
  map->keys[index] = key;
  map->values[index] = value;
  map->size++;
  return loom_ok_status();
}

bool loom__hash_map_find(const loom__hash_map_t* map, uint64_t key,
                         uint64_t* out_value) {
  size_t index = find_slot(map, key);
  if (index == SIZE_MAX) return false;
  if (out_value) *out_value = map->values[index];
  return true;
}

bool loom__hash_map_remove(loom__hash_map_t* map, uint64_t key) {
  size_t index = find_slot(map, key);
  if (index == SIZE_MAX) return false;
  map->states[index] = kDeleted;
  map->size--;
  map->tombstones++;
  return true;
}

bool loom__hash_map_next(const loom__hash_map_t* map, size_t* cursor,
                         uint64_t* out_key, uint64_t* out_value) {
  for (size_t i = *cursor; i < map->capacity; ++i) {
    if (map->states[i] != kFull) continue;
    if (out_key) *out_key = map->keys[i];
    if (out_value) *out_value = map->values[i];
    *cursor = i + 1;
    return true;
  }
  *cursor = map->capacity;
  return false;
}
