// String interning: strings are packed into arena blocks; an open-addressing
// index of (hash, pointer, length) finds them.

#include "base/string_table.h"

#include <pthread.h>
#include <string.h>

#include "base/hash_map.h"

enum { kBlockSize = 4096 };

typedef struct arena_block_t {
  struct arena_block_t* next;
  size_t used;
  size_t capacity;
  char data[];
} arena_block_t;

typedef struct entry_t {
  uint64_t hash;
  const char* string;  // NULL: empty slot
  size_t length;
} entry_t;

struct loom__string_table_t {
  loom_allocator_t allocator;
  pthread_mutex_t mutex;
  arena_block_t* blocks;
  entry_t* entries;
  size_t capacity;  // power of two
  size_t size;
};

loom_status_t loom__string_table_create(loom_allocator_t allocator,
                                        loom__string_table_t** out_table) {
  if (!out_table) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom__string_table_create: out_table is NULL");
  }
  *out_table = NULL;
  loom__string_table_t* table = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*table), (void**)&table));
  table->allocator = allocator;
  pthread_mutex_init(&table->mutex, NULL);
  *out_table = table;
  return loom_ok_status();
}

void loom__string_table_destroy(loom__string_table_t* table) {
  if (!table) return;
  for (arena_block_t* block = table->blocks; block;) {
    arena_block_t* next = block->next;
    loom_allocator_free(table->allocator, block);
    block = next;
  }
  loom_allocator_free(table->allocator, table->entries);
  pthread_mutex_destroy(&table->mutex);
  loom_allocator_free(table->allocator, table);
}

static const entry_t* find_entry(const loom__string_table_t* table,
                                 uint64_t hash, const char* data, size_t length,
                                 size_t* out_index) {
  if (table->capacity == 0) return NULL;
  size_t mask = table->capacity - 1;
  size_t index = (size_t)hash & mask;
  while (table->entries[index].string) {
    const entry_t* entry = &table->entries[index];
    if (entry->hash == hash && entry->length == length &&
        memcmp(entry->string, data, length) == 0) {
      return entry;
    }
    index = (index + 1) & mask;
  }
  if (out_index) *out_index = index;
  return NULL;
}

static loom_status_t grow_index(loom__string_table_t* table) {
  size_t capacity = table->capacity ? table->capacity * 2 : 64;
  entry_t* entries = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      table->allocator, capacity * sizeof(entry_t), (void**)&entries));
  for (size_t i = 0; i < table->capacity; ++i) {
    entry_t entry = table->entries[i];
    if (!entry.string) continue;
    size_t index = (size_t)entry.hash & (capacity - 1);
    while (entries[index].string) index = (index + 1) & (capacity - 1);
    entries[index] = entry;
  }
  loom_allocator_free(table->allocator, table->entries);
  table->entries = entries;
  table->capacity = capacity;
  return loom_ok_status();
}

static loom_status_t arena_copy(loom__string_table_t* table, const char* data,
                                size_t length, const char** out_copy) {
  arena_block_t* block = table->blocks;
  if (!block || block->capacity - block->used < length + 1) {
    size_t capacity = length + 1 > kBlockSize ? length + 1 : kBlockSize;
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
        table->allocator, sizeof(arena_block_t) + capacity, (void**)&block));
    block->used = 0;
    block->capacity = capacity;
    block->next = table->blocks;
    table->blocks = block;
  }
  char* copy = block->data + block->used;
  if (length) memcpy(copy, data, length);
  copy[length] = '\0';
  block->used += length + 1;
  *out_copy = copy;
  return loom_ok_status();
}

static loom_status_t intern_locked(loom__string_table_t* table,
                                   const char* data, size_t length,
                                   const char** out_interned) {
  uint64_t hash = loom__hash_bytes(data, length);
  const entry_t* found = find_entry(table, hash, data, length, NULL);
  if (found) {
    *out_interned = found->string;
    return loom_ok_status();
  }
  // Grow first, so a failure leaves nothing half-added.
  if ((table->size + 1) * 2 > table->capacity) {
    LOOM_RETURN_IF_ERROR(grow_index(table));
  }
  const char* copy = NULL;
  LOOM_RETURN_IF_ERROR(arena_copy(table, data, length, &copy));
  size_t index = 0;
  find_entry(table, hash, data, length, &index);
  table->entries[index] =
      (entry_t){.hash = hash, .string = copy, .length = length};
  table->size++;
  *out_interned = copy;
  return loom_ok_status();
}

loom_status_t loom__string_table_intern(loom__string_table_t* table,
                                        const char* data, size_t length,
                                        const char** out_interned) {
  if (!table || !out_interned || (!data && length)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom__string_table_intern: %s is NULL",
                            !table          ? "table"
                            : !out_interned ? "out_interned"
                                            : "data");
  }
  *out_interned = NULL;
  if (!data) data = "";
  pthread_mutex_lock(&table->mutex);
  loom_status_t status = intern_locked(table, data, length, out_interned);
  pthread_mutex_unlock(&table->mutex);
  return status;
}

const char* loom__string_table_find(loom__string_table_t* table,
                                    const char* data, size_t length) {
  if (!table || (!data && length)) return NULL;
  if (!data) data = "";
  uint64_t hash = loom__hash_bytes(data, length);
  pthread_mutex_lock(&table->mutex);
  const entry_t* found = find_entry(table, hash, data, length, NULL);
  const char* result = found ? found->string : NULL;
  pthread_mutex_unlock(&table->mutex);
  return result;
}

size_t loom__string_table_size(loom__string_table_t* table) {
  pthread_mutex_lock(&table->mutex);
  size_t size = table->size;
  pthread_mutex_unlock(&table->mutex);
  return size;
}
