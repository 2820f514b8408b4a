// The resource manager's storage, embedded in the host context that owns
// it (host_context.c).

#ifndef LOOM_HOST_RESOURCE_MANAGER_INTERNAL_H_
#define LOOM_HOST_RESOURCE_MANAGER_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>

#include "loom/allocator.h"
#include "loom/resource_manager.h"

typedef struct loom__resource_entry_t loom__resource_entry_t;

struct loom_resource_manager_t {
  loom_allocator_t allocator;  // the entries'
  pthread_mutex_t mutex;       // entries
  loom__resource_entry_t* entries;
  _Atomic int64_t next_id;
};

void loom__resource_manager_initialize(loom_resource_manager_t* manager,
                                       loom_allocator_t allocator);

// Releases every listed resource (the manager's references) and frees the
// entries.
void loom__resource_manager_deinitialize(loom_resource_manager_t* manager);

#endif  // LOOM_HOST_RESOURCE_MANAGER_INTERNAL_H_
