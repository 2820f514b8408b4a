// The resource manager: resources shared by name between the kernels that
// run on one host context (TensorFlow's per-device ResourceMgr; TFRT's
// resource context). VarHandleOp with a shared_name keeps its variable
// here, so two host contexts — two eager contexts, or two embedders'
// runtimes — never see each other's.
//
// A resource is the caller's object, kept by reference: its type says how
// to retain and release it. The manager holds one reference per resource
// it lists, until the resource is removed or the host context goes;
// resources still referenced elsewhere (a resource tensor) outlive that.
// Thread-safe.

#ifndef LOOM_RESOURCE_MANAGER_H_
#define LOOM_RESOURCE_MANAGER_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/macros.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_resource_manager_t loom_resource_manager_t;

// One kind of resource (a variable...). Compared by address: give each
// kind one instance of static storage duration. Both hooks are required.
typedef struct loom_resource_type_t {
  const char* name;  // for messages
  void (*retain)(void* resource);
  void (*release)(void* resource);
} loom_resource_type_t;

// Makes the resource for a name not found: *out_resource holds one
// reference, which the manager takes. An error is returned as it is by
// lookup_or_create.
typedef loom_status_t (*loom_resource_create_fn_t)(void* user_data,
                                                   void** out_resource);

// The resource of `type` named (container, name), created with
// create(user_data) when there is none; *out_resource receives a new
// reference either way. Creation runs under the manager's lock: `create`
// must not call back into this manager.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_resource_manager_lookup_or_create(loom_resource_manager_t* manager,
                                       const loom_resource_type_t* type,
                                       const char* container, const char* name,
                                       loom_resource_create_fn_t create,
                                       void* user_data, void** out_resource);

// Drops `resource` (of `type`) from the manager, releasing the manager's
// reference: a later lookup of its name creates a new one. False when the
// manager does not list it (never did, or it was removed already).
LOOM_API bool loom_resource_manager_remove(loom_resource_manager_t* manager,
                                           const loom_resource_type_t* type,
                                           const void* resource);

// A number no earlier call on this manager returned (from 0), for the
// names of resources that are not shared (TensorFlow's _AnonymousVar<N>).
LOOM_API int64_t
loom_resource_manager_unique_id(loom_resource_manager_t* manager);

LOOM_EXTERN_C_END

#endif  // LOOM_RESOURCE_MANAGER_H_
