// TensorFlow's eager contexts, device lists and executors over
// loom/eager.h: a TFE_Context is a loom_context_t.

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "compat/tf_config.h"
#include "compat/tf_status_internal.h"
#include "loom/eager.h"
#include "loom/function.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/eager/c_api_experimental.h"

static loom_context_t* unwrap(TFE_Context* ctx) {
  return (loom_context_t*)ctx;
}

static loom_status_t null_error(const char* function, const char* what) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                          function, what);
}

//===----------------------------------------------------------------------===//
// Options and contexts
//===----------------------------------------------------------------------===//

struct TFE_ContextOptions {
  loom_allocator_t allocator;
  bool async;
  TFE_ContextDevicePlacementPolicy policy;
  loom__tf_config_t config;  // from TFE_ContextOptionsSetConfig
};

TFE_ContextOptions* TFE_NewContextOptions(void) {
  loom_allocator_t allocator = loom_allocator_default();
  TFE_ContextOptions* options = NULL;
  loom_status_t status =
      loom_allocator_calloc(allocator, sizeof(*options), (void**)&options);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  options->allocator = allocator;
  options->policy = TFE_DEVICE_PLACEMENT_SILENT;
  return options;
}

void TFE_ContextOptionsSetConfig(TFE_ContextOptions* options, const void* proto,
                                 size_t proto_len, TF_Status* status) {
  if (!options || (!proto && proto_len)) {
    loom__tf_status_set(status, null_error("TFE_ContextOptionsSetConfig",
                                           !options ? "options" : "proto"));
    return;
  }
  loom__tf_config_t config;
  loom_status_t result = loom__tf_config_parse(proto, proto_len, &config);
  if (!result) options->config = config;
  loom__tf_status_set(status, result);
}

void TFE_ContextOptionsSetTfrt(TFE_ContextOptions* options, bool use_tfrt) {
  (void)options;
  (void)use_tfrt;
}

void TFE_ContextOptionsSetAsync(TFE_ContextOptions* options,
                                unsigned char enable) {
  if (options) options->async = enable != 0;
}

void TFE_ContextOptionsSetDevicePlacementPolicy(
    TFE_ContextOptions* options, TFE_ContextDevicePlacementPolicy policy) {
  if (options) options->policy = policy;
}

void TFE_DeleteContextOptions(TFE_ContextOptions* options) {
  if (options) loom_allocator_free(options->allocator, options);
}

TFE_Context* TFE_NewContext(const TFE_ContextOptions* opts, TF_Status* status) {
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  if (opts) {
    options.async = opts->async;
    options.num_cpu_devices = opts->config.num_cpu_devices;
    // TensorFlow's intra-op pool counts every computing thread; Loom's
    // calling thread computes too.
    if (opts->config.num_threads > 0) {
      options.num_threads = opts->config.num_threads - 1;
    }
  }
  loom_context_t* context = NULL;
  loom_status_t result = loom_context_create(&options, &context);
  if (!result) {
    // TFE_NewOp knows PartitionedCall from the start, as in TensorFlow.
    result = loom_context_enable_functions(context);
    if (result) {
      loom_context_destroy(context);
      context = NULL;
    }
  }
  if (!result && opts) {
    loom_context_set_soft_placement(context, opts->config.allow_soft_placement);
    loom_context_set_log_placement(context, opts->config.log_device_placement);
    loom_context_set_placement_policy(context, false,
                                      (loom_placement_policy_t)opts->policy);
  }
  loom__tf_status_set(status, result);
  return (TFE_Context*)context;
}

void TFE_DeleteContext(TFE_Context* ctx) {
  loom_context_destroy(unwrap(ctx));
}

void TFE_ContextClearCaches(TFE_Context* ctx) {
  (void)ctx;  // kernels are cached per op and kept
}

void TFE_ContextSetThreadLocalDevicePlacementPolicy(
    TFE_Context* ctx, TFE_ContextDevicePlacementPolicy policy) {
  loom_context_set_placement_policy(unwrap(ctx), true,
                                    (loom_placement_policy_t)policy);
}

TFE_ContextDevicePlacementPolicy TFE_ContextGetDevicePlacementPolicy(
    TFE_Context* ctx) {
  return (TFE_ContextDevicePlacementPolicy)loom_context_placement_policy(
      unwrap(ctx));
}

void TFE_HostAddressSpace(TFE_Context* ctx, TF_Buffer* buf) {
  (void)ctx;
  if (!buf) return;
  static const char kAddressSpace[] = "/job:localhost/replica:0/task:0";
  if (buf->data_deallocator) {
    buf->data_deallocator((void*)buf->data, buf->length);
  }
  buf->data = kAddressSpace;
  buf->length = sizeof(kAddressSpace) - 1;
  buf->data_deallocator = NULL;
}

//===----------------------------------------------------------------------===//
// Device lists
//===----------------------------------------------------------------------===//

typedef struct device_entry_t {
  char* name;
  char* type;
} device_entry_t;

struct TF_DeviceList {
  loom_allocator_t allocator;
  int count;
  device_entry_t* devices;
};

void TF_DeleteDeviceList(TF_DeviceList* list) {
  if (!list) return;
  for (int i = 0; i < list->count; ++i) {
    loom_allocator_free(list->allocator, list->devices[i].name);
    loom_allocator_free(list->allocator, list->devices[i].type);
  }
  loom_allocator_free(list->allocator, list->devices);
  loom_allocator_free(list->allocator, list);
}

static char* copy_text(loom_allocator_t allocator, const char* text,
                       loom_status_t* status) {
  size_t length = strlen(text);
  char* copy = NULL;
  *status = loom_allocator_malloc(allocator, length + 1, (void**)&copy);
  if (*status) return NULL;
  memcpy(copy, text, length + 1);
  return copy;
}

TF_DeviceList* TFE_ContextListDevices(TFE_Context* ctx, TF_Status* status) {
  loom_context_t* context = unwrap(ctx);
  if (!context) {
    loom__tf_status_set(status, null_error("TFE_ContextListDevices", "ctx"));
    return NULL;
  }
  loom_allocator_t allocator = loom_allocator_default();
  TF_DeviceList* list = NULL;
  loom_status_t result =
      loom_allocator_calloc(allocator, sizeof(*list), (void**)&list);
  if (result) {
    loom__tf_status_set(status, result);
    return NULL;
  }
  list->allocator = allocator;
  // Names stay valid while the context lives; the list keeps copies.
  size_t capacity = loom_context_list_devices(context, NULL, NULL, 0) + 8;
  const char** names = NULL;
  result = loom_allocator_malloc(allocator, 2 * sizeof(char*) * capacity,
                                 (void**)&names);
  size_t count = 0;
  if (!result) {
    const char** types = names + capacity;
    count = loom_context_list_devices(context, names, types, capacity);
    if (count > capacity) count = capacity;
    if (count) {
      result = loom_allocator_calloc(allocator, sizeof(device_entry_t) * count,
                                     (void**)&list->devices);
    }
    for (size_t i = 0; !result && i < count; ++i) {
      list->count = (int)i + 1;
      list->devices[i].name = copy_text(allocator, names[i], &result);
      if (!result) {
        list->devices[i].type = copy_text(allocator, types[i], &result);
      }
    }
  }
  loom_allocator_free(allocator, names);
  if (result) {
    TF_DeleteDeviceList(list);
    loom__tf_status_set(status, result);
    return NULL;
  }
  loom__tf_status_set(status, loom_ok_status());
  return list;
}

int TF_DeviceListCount(const TF_DeviceList* list) {
  return list ? list->count : 0;
}

static bool check_index(const TF_DeviceList* list, int index,
                        TF_Status* status) {
  if (!list || index < 0 || index >= list->count) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "Index out of bounds: %d (the list has %d "
                                 "devices)",
                                 index, list ? list->count : 0));
    return false;
  }
  loom__tf_status_set(status, loom_ok_status());
  return true;
}

const char* TF_DeviceListName(const TF_DeviceList* list, int index,
                              TF_Status* status) {
  return check_index(list, index, status) ? list->devices[index].name : NULL;
}

const char* TF_DeviceListType(const TF_DeviceList* list, int index,
                              TF_Status* status) {
  return check_index(list, index, status) ? list->devices[index].type : NULL;
}

int64_t TF_DeviceListMemoryBytes(const TF_DeviceList* list, int index,
                                 TF_Status* status) {
  if (!check_index(list, index, status)) return -1;
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? (int64_t)pages * page_size : 0;
}

uint64_t TF_DeviceListIncarnation(const TF_DeviceList* list, int index,
                                  TF_Status* status) {
  if (!check_index(list, index, status)) return 0;
  // FNV-1a of the name: stable for the device, non-zero.
  uint64_t hash = 1469598103934665603ull;
  for (const char* p = list->devices[index].name; *p; ++p) {
    hash = (hash ^ (unsigned char)*p) * 1099511628211ull;
  }
  return hash ? hash : 1;
}

//===----------------------------------------------------------------------===//
// Executors
//===----------------------------------------------------------------------===//

struct TFE_Executor {
  loom_allocator_t allocator;
  bool is_async;
  loom_context_t* context;  // NULL until attached
};

static TFE_Executor* new_executor(bool is_async, loom_context_t* context) {
  loom_allocator_t allocator = loom_allocator_default();
  TFE_Executor* executor = NULL;
  loom_status_t status =
      loom_allocator_calloc(allocator, sizeof(*executor), (void**)&executor);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  executor->allocator = allocator;
  executor->is_async = is_async;
  executor->context = context;
  return executor;
}

TFE_Executor* TFE_NewExecutor(bool is_async, bool enable_streaming_enqueue,
                              int in_flight_nodes_limit) {
  (void)enable_streaming_enqueue;
  (void)in_flight_nodes_limit;
  return new_executor(is_async, NULL);
}

void TFE_DeleteExecutor(TFE_Executor* executor) {
  if (executor) loom_allocator_free(executor->allocator, executor);
}

bool TFE_ExecutorIsAsync(TFE_Executor* executor) {
  return executor && executor->is_async;
}

void TFE_ExecutorWaitForAllPendingNodes(TFE_Executor* executor,
                                        TF_Status* status) {
  if (!executor) {
    loom__tf_status_set(
        status, null_error("TFE_ExecutorWaitForAllPendingNodes", "executor"));
    return;
  }
  loom__tf_status_set(status, executor->context
                                  ? loom_context_wait(executor->context)
                                  : loom_ok_status());
}

void TFE_ExecutorClearError(TFE_Executor* executor) {
  if (executor && executor->context) {
    loom_context_clear_error(executor->context);
  }
}

void TFE_ContextSetExecutorForThread(TFE_Context* ctx, TFE_Executor* executor) {
  if (!ctx || !executor) return;
  executor->context = unwrap(ctx);
  loom_context_set_thread_async(unwrap(ctx), executor->is_async);
}

TFE_Executor* TFE_ContextGetExecutorForThread(TFE_Context* ctx) {
  if (!ctx) return NULL;
  return new_executor(loom_context_thread_is_async(unwrap(ctx)), unwrap(ctx));
}

void TFE_ContextAsyncWait(TFE_Context* ctx, TF_Status* status) {
  loom__tf_status_set(status, ctx ? loom_context_wait(unwrap(ctx))
                                  : null_error("TFE_ContextAsyncWait", "ctx"));
}

void TFE_ContextAsyncClearError(TFE_Context* ctx) {
  loom_context_clear_error(unwrap(ctx));
}

void TFE_ContextSetAsyncForThread(TFE_Context* ctx, unsigned char is_async,
                                  TF_Status* status) {
  if (!ctx) {
    loom__tf_status_set(status,
                        null_error("TFE_ContextSetAsyncForThread", "ctx"));
    return;
  }
  loom_context_set_thread_async(unwrap(ctx), is_async != 0);
  loom__tf_status_set(status, loom_ok_status());
}
