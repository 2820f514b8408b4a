// TensorFlow's next-pluggable-device C API
// (tensorflow/c/experimental/next_pluggable_device/c_api.h): plugin
// resources in the host context's resource manager, a single-process
// coordination service, and UNIMPLEMENTED for what Loom has no notion of.

#include "tensorflow/c/experimental/next_pluggable_device/c_api.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "compat/tf_status_internal.h"
#include "loom/kernel.h"
#include "loom/resource_manager.h"

static loom_kernel_context_t* context_of(TF_OpKernelContext* ctx) {
  return (loom_kernel_context_t*)ctx;
}

static void set_unimplemented(TF_Status* status, const char* function,
                              const char* why) {
  loom__tf_status_set(status, loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                                               "%s: %s", function, why));
}

TF_Device* TF_GetDevice(TF_OpKernelContext* ctx) {
  (void)ctx;
  return NULL;
}

//===----------------------------------------------------------------------===//
// Plugin resources
//===----------------------------------------------------------------------===//

typedef struct plugin_resource_t {
  _Atomic int32_t ref_count;
  loom_allocator_t allocator;
  void* resource;
  void (*delete_func)(void*);
} plugin_resource_t;

static void plugin_resource_retain(void* resource) {
  plugin_resource_t* r = resource;
  atomic_fetch_add_explicit(&r->ref_count, 1, memory_order_relaxed);
}

static void plugin_resource_release(void* resource) {
  plugin_resource_t* r = resource;
  if (atomic_fetch_sub_explicit(&r->ref_count, 1, memory_order_acq_rel) != 1) {
    return;
  }
  r->delete_func(r->resource);
  loom_allocator_free(r->allocator, r);
}

static const loom_resource_type_t kPluginResourceType = {
    .name = "PluginResource",
    .retain = plugin_resource_retain,
    .release = plugin_resource_release,
};

typedef struct plugin_create_t {
  loom_allocator_t allocator;
  void* resource;  // NULL: make it with create_func
  void* (*create_func)(void*);
  void* create_func_args;
  void (*delete_func)(void*);
  bool created;
} plugin_create_t;

static loom_status_t plugin_resource_create(void* user_data,
                                            void** out_resource) {
  plugin_create_t* args = user_data;
  plugin_resource_t* r = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(args->allocator, sizeof(*r), (void**)&r));
  atomic_init(&r->ref_count, 1);
  r->allocator = args->allocator;
  r->resource = args->resource ? args->resource
                               : args->create_func(args->create_func_args);
  r->delete_func = args->delete_func;
  args->created = true;
  *out_resource = r;
  return loom_ok_status();
}

// Looks up or makes the resource; *out (may be NULL) gets the plugin's
// pointer.
static loom_status_t plugin_lookup_or_create(
    const char* function, TF_OpKernelContext* ctx, const char* container,
    const char* name, plugin_create_t* args, void** out) {
  if (!ctx || !name || !args->delete_func) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL", function,
        !ctx ? "the kernel context"
             : (!name ? "plugin_resource_name" : "delete_func"));
  }
  loom_kernel_context_t* context = context_of(ctx);
  // The wrapper outlives the kernel: the system allocator.
  args->allocator = loom_allocator_system();
  void* resource = NULL;
  LOOM_RETURN_IF_ERROR(loom_resource_manager_lookup_or_create(
      loom_kernel_context_resources(context), &kPluginResourceType,
      container ? container : "", name, plugin_resource_create, args,
      &resource));
  if (out) *out = ((plugin_resource_t*)resource)->resource;
  // The manager keeps its reference.
  plugin_resource_release(resource);
  return loom_ok_status();
}

void TF_CreatePluginResource(TF_OpKernelContext* ctx,
                             const char* container_name,
                             const char* plugin_resource_name,
                             void* plugin_resource, void (*delete_func)(void*),
                             TF_Status* status) {
  plugin_create_t args = {.resource = plugin_resource,
                          .delete_func = delete_func};
  loom_status_t result =
      plugin_lookup_or_create("TF_CreatePluginResource", ctx, container_name,
                              plugin_resource_name, &args, NULL);
  if (!result && !args.created) {
    // The resource that could not be stored is dropped, as TensorFlow's
    // resource manager drops it.
    delete_func(plugin_resource);
    result = loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                              "TF_CreatePluginResource: plugin resource '%s' "
                              "already exists in container '%s'",
                              plugin_resource_name,
                              container_name ? container_name : "");
  }
  loom__tf_status_set(status, result);
}

void TF_LookupOrCreatePluginResource(
    TF_OpKernelContext* ctx, const char* container_name,
    const char* plugin_resource_name, void** result_plugin_resource,
    void* (*create_func)(void*), void* create_func_args,
    void (*delete_func)(void*), TF_Status* status) {
  loom_status_t result = loom_ok_status();
  if (!result_plugin_resource || !create_func) {
    result = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "TF_LookupOrCreatePluginResource: %s is NULL",
        !result_plugin_resource ? "result_plugin_resource" : "create_func");
  } else {
    *result_plugin_resource = NULL;
    plugin_create_t args = {.create_func = create_func,
                            .create_func_args = create_func_args,
                            .delete_func = delete_func};
    result = plugin_lookup_or_create("TF_LookupOrCreatePluginResource", ctx,
                                     container_name, plugin_resource_name,
                                     &args, result_plugin_resource);
  }
  loom__tf_status_set(status, result);
}

//===----------------------------------------------------------------------===//
// Variable infos
//===----------------------------------------------------------------------===//

static const char kNoVariables[] =
    "Loom's resource tensors hold no TensorFlow variables to describe";

TF_VariableInfo* TF_CreateVariableInfoFromContext(TF_OpKernelContext* ctx,
                                                  int index,
                                                  TF_Status* status) {
  (void)ctx;
  (void)index;
  set_unimplemented(status, "TF_CreateVariableInfoFromContext", kNoVariables);
  return NULL;
}

void TF_LockVariableInfos(TF_VariableInfo** vars, int num_vars,
                          TF_Status* status) {
  (void)vars;
  (void)num_vars;
  set_unimplemented(status, "TF_LockVariableInfos", kNoVariables);
}

void TF_AllocateTempForVariableInfo(TF_OpKernelContext* ctx,
                                    TF_VariableInfo* var_info,
                                    TF_Status* status) {
  (void)ctx;
  (void)var_info;
  set_unimplemented(status, "TF_AllocateTempForVariableInfo", kNoVariables);
}

TF_Tensor* TF_GetTensorFromVariableInfo(TF_VariableInfo* var_info,
                                        TF_Status* status) {
  (void)var_info;
  set_unimplemented(status, "TF_GetTensorFromVariableInfo", kNoVariables);
  return NULL;
}

void TF_DeleteVariableInfo(TF_VariableInfo* var_info) {
  (void)var_info;
}

//===----------------------------------------------------------------------===//
// Coordination service
//===----------------------------------------------------------------------===//

typedef struct key_value_t {
  char* key;
  char* value;
  size_t value_size;
} key_value_t;

struct TF_CoordinationServiceAgent {
  _Atomic int32_t ref_count;
  loom_allocator_t allocator;
  pthread_mutex_t mutex;  // guards the entries
  key_value_t* entries;
  int64_t count;
  int64_t capacity;
};

static void agent_retain(void* resource) {
  TF_CoordinationServiceAgent* agent = resource;
  atomic_fetch_add_explicit(&agent->ref_count, 1, memory_order_relaxed);
}

static void agent_release(void* resource) {
  TF_CoordinationServiceAgent* agent = resource;
  if (atomic_fetch_sub_explicit(&agent->ref_count, 1, memory_order_acq_rel) !=
      1) {
    return;
  }
  for (int64_t i = 0; i < agent->count; ++i) {
    loom_allocator_free(agent->allocator, agent->entries[i].key);
    loom_allocator_free(agent->allocator, agent->entries[i].value);
  }
  loom_allocator_free(agent->allocator, agent->entries);
  pthread_mutex_destroy(&agent->mutex);
  loom_allocator_free(agent->allocator, agent);
}

static const loom_resource_type_t kAgentType = {
    .name = "CoordinationServiceAgent",
    .retain = agent_retain,
    .release = agent_release,
};

static loom_status_t agent_create(void* user_data, void** out_resource) {
  loom_allocator_t* allocator = user_data;
  TF_CoordinationServiceAgent* agent = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(*allocator, sizeof(*agent), (void**)&agent));
  atomic_init(&agent->ref_count, 1);
  agent->allocator = *allocator;
  pthread_mutex_init(&agent->mutex, NULL);
  *out_resource = agent;
  return loom_ok_status();
}

TF_CoordinationServiceAgent* TF_GetCoordinationServiceAgent(
    TF_OpKernelContext* ctx) {
  if (!ctx) return NULL;
  loom_kernel_context_t* context = context_of(ctx);
  // The agent belongs to the host context (one task): it is made with the
  // system allocator, as it outlives the kernel.
  loom_allocator_t allocator = loom_allocator_system();
  void* agent = NULL;
  loom_status_t status = loom_resource_manager_lookup_or_create(
      loom_kernel_context_resources(context), &kAgentType, "",
      "coordination_service_agent", agent_create, &allocator, &agent);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  // The manager keeps its reference while the host context lives.
  agent_release(agent);
  return agent;
}

bool TF_CoordinationServiceIsInitialized(TF_CoordinationServiceAgent* agent) {
  return agent != NULL;
}

static loom_status_t check_agent(const char* function, const char* key,
                                 TF_CoordinationServiceAgent* agent) {
  if (!key || !agent) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            function, !key ? "the key" : "the agent");
  }
  return loom_ok_status();
}

// The index of `key`, or -1. Called with the mutex held.
static int64_t find_key(const TF_CoordinationServiceAgent* agent,
                        const char* key) {
  for (int64_t i = 0; i < agent->count; ++i) {
    if (strcmp(agent->entries[i].key, key) == 0) return i;
  }
  return -1;
}

static loom_status_t copy_string(loom_allocator_t allocator, const char* text,
                                 size_t size, char** out) {
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(allocator, size + 1, (void**)out));
  memcpy(*out, text, size);
  (*out)[size] = '\0';
  return loom_ok_status();
}

static loom_status_t insert(TF_CoordinationServiceAgent* agent, const char* key,
                            const char* value) {
  if (find_key(agent, key) >= 0) {
    return loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                            "TF_CoordinationServiceInsertKeyValue: key '%s' "
                            "already has a value",
                            key);
  }
  if (agent->count == agent->capacity) {
    int64_t capacity = agent->capacity ? agent->capacity * 2 : 8;
    key_value_t* grown = NULL;
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
        agent->allocator, sizeof(*grown) * (size_t)capacity, (void**)&grown));
    if (agent->count > 0) {
      memcpy(grown, agent->entries, sizeof(*grown) * (size_t)agent->count);
    }
    loom_allocator_free(agent->allocator, agent->entries);
    agent->entries = grown;
    agent->capacity = capacity;
  }
  key_value_t entry = {.value_size = strlen(value)};
  LOOM_RETURN_IF_ERROR(
      copy_string(agent->allocator, key, strlen(key), &entry.key));
  loom_status_t status =
      copy_string(agent->allocator, value, entry.value_size, &entry.value);
  if (status) {
    loom_allocator_free(agent->allocator, entry.key);
    return status;
  }
  agent->entries[agent->count++] = entry;
  return loom_ok_status();
}

void TF_CoordinationServiceInsertKeyValue(const char* key, const char* value,
                                          TF_CoordinationServiceAgent* agent,
                                          TF_Status* status) {
  loom_status_t result =
      check_agent("TF_CoordinationServiceInsertKeyValue", key, agent);
  if (!result && !value) {
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TF_CoordinationServiceInsertKeyValue: the "
                              "value of key '%s' is NULL",
                              key);
  }
  if (!result) {
    pthread_mutex_lock(&agent->mutex);
    result = insert(agent, key, value);
    pthread_mutex_unlock(&agent->mutex);
  }
  loom__tf_status_set(status, result);
}

TF_Buffer* TF_CoordinationServiceGetKeyValue(const char* key,
                                             TF_CoordinationServiceAgent* agent,
                                             TF_Status* status) {
  loom_status_t result =
      check_agent("TF_CoordinationServiceGetKeyValue", key, agent);
  TF_Buffer* buffer = NULL;
  if (!result) {
    pthread_mutex_lock(&agent->mutex);
    int64_t index = find_key(agent, key);
    if (index >= 0) {
      buffer = TF_NewBufferFromString(agent->entries[index].value,
                                      agent->entries[index].value_size);
    }
    pthread_mutex_unlock(&agent->mutex);
    if (index < 0) {
      result = loom_make_status(LOOM_STATUS_NOT_FOUND,
                                "TF_CoordinationServiceGetKeyValue: key '%s' "
                                "has no value (in one process no other task "
                                "can insert it)",
                                key);
    } else if (!buffer) {
      result = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                "TF_CoordinationServiceGetKeyValue: out of "
                                "memory copying the value of key '%s'",
                                key);
    }
  }
  loom__tf_status_set(status, result);
  return buffer;
}

// Whether `key` is `prefix` or under it as a directory ("prefix/...").
static bool under(const char* key, const char* prefix, size_t length) {
  return strncmp(key, prefix, length) == 0 &&
         (key[length] == '\0' || key[length] == '/' ||
          (length > 0 && prefix[length - 1] == '/'));
}

void TF_CoordinationServiceDeleteKeyValue(const char* key,
                                          TF_CoordinationServiceAgent* agent,
                                          TF_Status* status) {
  loom_status_t result =
      check_agent("TF_CoordinationServiceDeleteKeyValue", key, agent);
  if (!result) {
    size_t length = strlen(key);
    pthread_mutex_lock(&agent->mutex);
    int64_t kept = 0;
    for (int64_t i = 0; i < agent->count; ++i) {
      key_value_t* entry = &agent->entries[i];
      if (under(entry->key, key, length)) {
        loom_allocator_free(agent->allocator, entry->key);
        loom_allocator_free(agent->allocator, entry->value);
      } else {
        agent->entries[kept++] = *entry;
      }
    }
    agent->count = kept;
    pthread_mutex_unlock(&agent->mutex);
  }
  loom__tf_status_set(status, result);
}

//===----------------------------------------------------------------------===//
// PJRT
//===----------------------------------------------------------------------===//

static const char kNoPjrt[] = "Loom has no PJRT clients or buffers";

void TF_CreateAndSetPjRtCApiClient(const char* device_type, TF_Status* status,
                                   PJRT_NamedValue* create_options,
                                   int num_options) {
  (void)device_type;
  (void)create_options;
  (void)num_options;
  set_unimplemented(status, "TF_CreateAndSetPjRtCApiClient", kNoPjrt);
}

PJRT_Client* TF_GetPjRtCClient(const char* device_type, TF_Status* status) {
  (void)device_type;
  set_unimplemented(status, "TF_GetPjRtCClient", kNoPjrt);
  return NULL;
}

PJRT_Buffer* TF_GetPjRtCBuffer(TF_Tensor* c_tensor, TF_Status* status) {
  (void)c_tensor;
  set_unimplemented(status, "TF_GetPjRtCBuffer", kNoPjrt);
  return NULL;
}

void TF_CreatePjRtBuffer(TF_Tensor* c_tensor, PJRT_Buffer* c_buffer,
                         const char* device_type, TF_Status* status) {
  (void)c_tensor;
  (void)c_buffer;
  (void)device_type;
  set_unimplemented(status, "TF_CreatePjRtBuffer", kNoPjrt);
}
