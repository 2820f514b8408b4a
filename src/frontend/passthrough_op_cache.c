// A thread's cache of pass-through op data (passthrough_op_cache.h).

#include "frontend/passthrough_op_cache.h"

#include <string.h>

#include "registry/op_registry_generation.h"

typedef struct cache_entry_t {
  struct cache_entry_t* next;  // same key
  const loom__passthrough_type_t* type;
  const loom_op_handler_t* outer;
  const loom_op_def_t* op_def;
  uint64_t generation;
  loom__passthrough_op_t* data;  // one reference
} cache_entry_t;

static uint64_t key_of(const loom__passthrough_type_t* type,
                       const loom_op_handler_t* outer,
                       const loom_op_def_t* op_def) {
  uint64_t key = loom__hash_u64((uint64_t)(uintptr_t)type ^
                                (uint64_t)(uintptr_t)outer * 31u);
  return key ^ (uint64_t)(uintptr_t)op_def;
}

void loom__passthrough_op_cache_initialize(loom__passthrough_op_cache_t* cache,
                                           loom_allocator_t allocator) {
  cache->allocator = allocator;
  loom__hash_map_initialize(&cache->map, allocator);
}

static void free_chain(loom__passthrough_op_cache_t* cache,
                       cache_entry_t* entry) {
  while (entry) {
    cache_entry_t* next = entry->next;
    loom__passthrough_op_release(entry->data);
    loom_allocator_free(cache->allocator, entry);
    entry = next;
  }
}

void loom__passthrough_op_cache_deinitialize(
    loom__passthrough_op_cache_t* cache) {
  size_t cursor = 0;
  uint64_t key = 0, head = 0;
  while (loom__hash_map_next(&cache->map, &cursor, &key, &head)) {
    free_chain(cache, (cache_entry_t*)(uintptr_t)head);
  }
  loom__hash_map_deinitialize(&cache->map);
}

static bool same_key(const cache_entry_t* entry,
                     const loom__passthrough_t* base, const char* op_name,
                     const loom_op_def_t* op_def) {
  return entry->type == base->type && entry->outer == base->effective_outer &&
         entry->op_def == op_def &&
         strcmp(loom_prepared_op_name(entry->data->outer_op), op_name) == 0;
}

loom__passthrough_op_t* loom__passthrough_op_cache_find(
    loom__passthrough_op_cache_t* cache, const loom__passthrough_t* base,
    const char* op_name, const loom_op_def_t* op_def) {
  uint64_t head = 0;
  if (!loom__hash_map_find(&cache->map,
                           key_of(base->type, base->effective_outer, op_def),
                           &head)) {
    return NULL;
  }
  uint64_t generation = loom__registry_generation();
  for (cache_entry_t* entry = (cache_entry_t*)(uintptr_t)head; entry;
       entry = entry->next) {
    if (!same_key(entry, base, op_name, op_def)) continue;
    if (entry->generation != generation ||
        (base->type->op_data_reusable &&
         !base->type->op_data_reusable(base, entry->data))) {
      return NULL;  // stale: the caller prepares it again and replaces it
    }
    loom__ref_count_inc(&entry->data->ref_count);
    return entry->data;
  }
  return NULL;
}

void loom__passthrough_op_cache_insert(loom__passthrough_op_cache_t* cache,
                                       const loom__passthrough_t* base,
                                       const char* op_name,
                                       const loom_op_def_t* op_def,
                                       uint64_t generation,
                                       loom__passthrough_op_t* data) {
  uint64_t key = key_of(base->type, base->effective_outer, op_def);
  uint64_t head = 0;
  loom__hash_map_find(&cache->map, key, &head);
  cache_entry_t* first = (cache_entry_t*)(uintptr_t)head;
  // The stale entry of the same key goes (one at most: each insert
  // replaces it).
  cache_entry_t* stale = NULL;
  for (cache_entry_t** link = &first; *link; link = &(*link)->next) {
    if (same_key(*link, base, op_name, op_def)) {
      stale = *link;
      *link = stale->next;
      stale->next = NULL;
      break;
    }
  }
  cache_entry_t* entry = NULL;
  loom_status_t status =
      loom_allocator_malloc(cache->allocator, sizeof(*entry), (void**)&entry);
  if (!status) {
    *entry = (cache_entry_t){
        .next = first,
        .type = base->type,
        .outer = base->effective_outer,
        .op_def = op_def,
        .generation = generation,
        .data = data,
    };
    status =
        loom__hash_map_insert(&cache->map, key, (uint64_t)(uintptr_t)entry);
    if (status) {
      loom_allocator_free(cache->allocator, entry);
      entry = NULL;
    }
  }
  if (status) {
    loom_status_free(status);  // only the cache is lost
    // The chain without the stale entry stays findable.
    if (first) {
      loom_status_ignore(
          loom__hash_map_insert(&cache->map, key, (uint64_t)(uintptr_t)first));
    } else {
      loom__hash_map_remove(&cache->map, key);
    }
  } else {
    loom__ref_count_inc(&data->ref_count);
  }
  free_chain(cache, stale);
}
