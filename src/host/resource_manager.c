// The resource manager: a list of (type, container, name) -> resource.
// Shared resources are looked up when an op that names one is first run
// (VarHandleOp), not per step: a list under one lock is enough.

#include "host/resource_manager_internal.h"

#include <string.h>

struct loom__resource_entry_t {
  loom__resource_entry_t* next;
  const loom_resource_type_t* type;
  void* resource;  // the manager's reference
  const char* name;
  char container[];  // then the name, both NUL-terminated
};

void loom__resource_manager_initialize(loom_resource_manager_t* manager,
                                       loom_allocator_t allocator) {
  manager->allocator = allocator;
  pthread_mutex_init(&manager->mutex, NULL);
  manager->entries = NULL;
  atomic_init(&manager->next_id, 0);
}

static void entry_free(loom_resource_manager_t* manager,
                       loom__resource_entry_t* entry) {
  entry->type->release(entry->resource);
  loom_allocator_free(manager->allocator, entry);
}

void loom__resource_manager_deinitialize(loom_resource_manager_t* manager) {
  // Released outside the lock: a resource's release may free objects that
  // reach other managers.
  pthread_mutex_lock(&manager->mutex);
  loom__resource_entry_t* entries = manager->entries;
  manager->entries = NULL;
  pthread_mutex_unlock(&manager->mutex);
  while (entries) {
    loom__resource_entry_t* next = entries->next;
    entry_free(manager, entries);
    entries = next;
  }
  pthread_mutex_destroy(&manager->mutex);
}

static loom__resource_entry_t* find_locked(loom_resource_manager_t* manager,
                                           const loom_resource_type_t* type,
                                           const char* container,
                                           const char* name) {
  for (loom__resource_entry_t* entry = manager->entries; entry;
       entry = entry->next) {
    if (entry->type == type && strcmp(entry->container, container) == 0 &&
        strcmp(entry->name, name) == 0) {
      return entry;
    }
  }
  return NULL;
}

// A new entry for (type, container, name), its resource not yet set.
static loom_status_t entry_create(loom_resource_manager_t* manager,
                                  const loom_resource_type_t* type,
                                  const char* container, const char* name,
                                  loom__resource_entry_t** out_entry) {
  size_t container_size = strlen(container) + 1;
  size_t name_size = strlen(name) + 1;
  loom__resource_entry_t* entry = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
      manager->allocator, sizeof(*entry) + container_size + name_size,
      (void**)&entry));
  entry->next = NULL;
  entry->type = type;
  entry->resource = NULL;
  memcpy(entry->container, container, container_size);
  memcpy(entry->container + container_size, name, name_size);
  entry->name = entry->container + container_size;
  *out_entry = entry;
  return loom_ok_status();
}

loom_status_t loom_resource_manager_lookup_or_create(
    loom_resource_manager_t* manager, const loom_resource_type_t* type,
    const char* container, const char* name, loom_resource_create_fn_t create,
    void* user_data, void** out_resource) {
  if (!manager || !type || !type->retain || !type->release || !container ||
      !name || !create || !out_resource) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_resource_manager_lookup_or_create: %s",
                            !manager ? "manager is NULL"
                            : !type || !type->retain || !type->release
                                ? "the resource type is incomplete"
                            : !container || !name
                                ? "container or name is NULL"
                                : "create or out_resource is NULL");
  }
  *out_resource = NULL;
  pthread_mutex_lock(&manager->mutex);
  loom__resource_entry_t* entry = find_locked(manager, type, container, name);
  loom_status_t status = loom_ok_status();
  if (!entry) {
    status = entry_create(manager, type, container, name, &entry);
    if (!status) status = create(user_data, &entry->resource);
    if (!status) {
      entry->next = manager->entries;
      manager->entries = entry;
    } else if (entry) {
      loom_allocator_free(manager->allocator, entry);
      entry = NULL;
    }
  }
  if (entry) {
    type->retain(entry->resource);
    *out_resource = entry->resource;
  }
  pthread_mutex_unlock(&manager->mutex);
  return status;
}

bool loom_resource_manager_remove(loom_resource_manager_t* manager,
                                  const loom_resource_type_t* type,
                                  const void* resource) {
  if (!manager || !type || !resource) return false;
  loom__resource_entry_t* found = NULL;
  pthread_mutex_lock(&manager->mutex);
  for (loom__resource_entry_t** link = &manager->entries; *link;
       link = &(*link)->next) {
    if ((*link)->type == type && (*link)->resource == resource) {
      found = *link;
      *link = found->next;
      break;
    }
  }
  pthread_mutex_unlock(&manager->mutex);
  if (found) entry_free(manager, found);
  return found != NULL;
}

int64_t loom_resource_manager_unique_id(loom_resource_manager_t* manager) {
  if (!manager) return -1;
  return atomic_fetch_add_explicit(&manager->next_id, 1, memory_order_relaxed);
}
