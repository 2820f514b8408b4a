// TF_Version, TensorFlow's library loading over Loom's plugin loader, and
// the serialized lists of registered ops and kernels.

#include "tensorflow/c/c_api.h"

#include <stdatomic.h>
#include <string.h>

#include "base/tagged_block.h"
#include "compat/tf_framework_proto.h"
#include "compat/tf_status_internal.h"
#include "loom/plugin.h"

const char* TF_Version(void) {
  return "loom-0.1.0";
}

// A library's serialized OpList, made on the first TF_GetOpList.
typedef struct op_list_t {
  void* data;  // a tagged block
  size_t length;
} op_list_t;

struct TF_Library {
  loom_allocator_t allocator;  // the default when it was loaded
  loom_plugin_t* plugin;
  _Atomic(op_list_t*) op_list;
};

TF_Library* TF_LoadLibrary(const char* library_filename, TF_Status* status) {
  // The handle is freed with the allocator it came from: the default may be
  // replaced in between (tests do).
  loom_allocator_t allocator = loom_allocator_default();
  TF_Library* library = NULL;
  // Allocated first: failing once the plugin's ops are registered would
  // leave them registered while reporting an error.
  loom_status_t result =
      loom_allocator_malloc(allocator, sizeof(*library), (void**)&library);
  if (!result) {
    library->allocator = allocator;
    library->plugin = NULL;
    atomic_init(&library->op_list, NULL);
    result = loom_plugin_load(allocator, library_filename, &library->plugin);
    if (result) {
      loom_allocator_free(allocator, library);
      library = NULL;
    }
  }
  loom__tf_status_set(status, result);
  return library;
}

void TF_DeleteLibraryHandle(TF_Library* lib_handle) {
  if (!lib_handle) return;
  op_list_t* op_list = atomic_load(&lib_handle->op_list);
  if (op_list) {
    loom__tagged_block_free(op_list->data);
    loom_allocator_free(lib_handle->allocator, op_list);
  }
  loom_plugin_release(lib_handle->plugin);
  loom_allocator_free(lib_handle->allocator, lib_handle);
}

// The definitions of the global ops named names[0, count), those still
// registered, into `ops` (room for `count`); returns how many.
static size_t find_ops(const char* const* names, size_t count,
                       const loom_op_def_t** ops) {
  loom_op_registry_t* registry = loom_op_registry_global();
  size_t found = 0;
  for (size_t i = 0; i < count; ++i) {
    const loom_op_def_t* op = loom_op_registry_find(registry, names[i]);
    if (op) ops[found++] = op;
  }
  return found;
}

// Serializes the ops named names[0, count) into an op_list_t.
static loom_status_t make_op_list(loom_allocator_t allocator,
                                  const char* const* names, size_t count,
                                  op_list_t** out) {
  const loom_op_def_t** ops = NULL;
  if (count) {
    LOOM_RETURN_IF_ERROR(
        loom_allocator_malloc(allocator, sizeof(*ops) * count, (void**)&ops));
  }
  op_list_t* list = NULL;
  loom_status_t status =
      loom_allocator_malloc(allocator, sizeof(*list), (void**)&list);
  if (!status) {
    status =
        loom__tf_encode_op_list(allocator, ops, find_ops(names, count, ops),
                                &list->data, &list->length);
    if (status) loom_allocator_free(allocator, list);
  }
  loom_allocator_free(allocator, ops);
  if (!status) *out = list;
  return status;
}

// As in TensorFlow, the buffer belongs to the handle: valid until
// TF_DeleteLibraryHandle, not to be freed by the caller. An empty buffer
// for NULL, or when the list cannot be made (out of memory).
TF_Buffer TF_GetOpList(TF_Library* lib_handle) {
  TF_Buffer buffer = {0};
  if (!lib_handle) return buffer;
  op_list_t* op_list = atomic_load(&lib_handle->op_list);
  if (!op_list) {
    size_t count = loom_plugin_op_names(lib_handle->plugin, NULL, 0);
    const char** names = NULL;
    loom_status_t status = loom_ok_status();
    if (count) {
      status = loom_allocator_malloc(lib_handle->allocator,
                                     sizeof(*names) * count, (void**)&names);
    }
    if (!status) {
      count = loom_plugin_op_names(lib_handle->plugin, names, count);
      status = make_op_list(lib_handle->allocator, names, count, &op_list);
    }
    loom_allocator_free(lib_handle->allocator, names);
    if (status) {
      loom_status_free(status);
      return buffer;
    }
    // Another thread may have made it meanwhile: keep the first.
    op_list_t* expected = NULL;
    if (!atomic_compare_exchange_strong(&lib_handle->op_list, &expected,
                                        op_list)) {
      loom__tagged_block_free(op_list->data);
      loom_allocator_free(lib_handle->allocator, op_list);
      op_list = expected;
    }
  }
  buffer.data = op_list->data;
  buffer.length = op_list->length;
  return buffer;
}

static void free_encoded(void* data, size_t length) {
  (void)length;
  loom__tagged_block_free(data);
}

// A new TF_Buffer that takes `data` (a tagged block), or NULL (and `data`
// freed) when out of memory.
static TF_Buffer* wrap(void* data, size_t length) {
  TF_Buffer* buffer = TF_NewBuffer();
  if (!buffer) {
    loom__tagged_block_free(data);
    return NULL;
  }
  buffer->data = data;
  buffer->length = length;
  buffer->data_deallocator = free_encoded;
  return buffer;
}

TF_Buffer* TF_GetAllOpList(void) {
  loom_allocator_t allocator = loom_allocator_default();
  loom_op_registry_t* registry = loom_op_registry_global();
  // The names of every op, sorted; ops registered meanwhile need a retry.
  const char** names = NULL;
  size_t count = 0;
  for (;;) {
    size_t total = loom_op_registry_list(registry, NULL, 0);
    loom_allocator_free(allocator, names);
    names = NULL;
    loom_status_t status = loom_allocator_malloc(
        allocator, sizeof(*names) * (total ? total : 1), (void**)&names);
    if (status) {
      loom_status_free(status);
      return NULL;
    }
    count = loom_op_registry_list(registry, names, total);
    if (count <= total) break;
  }
  op_list_t* list = NULL;
  loom_status_t status = make_op_list(allocator, names, count, &list);
  loom_allocator_free(allocator, names);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  void* data = list->data;
  size_t length = list->length;
  loom_allocator_free(allocator, list);
  return wrap(data, length);
}

static TF_Buffer* kernel_list(const char* op_name, TF_Status* status) {
  void* data = NULL;
  size_t length = 0;
  loom_status_t result = loom__tf_encode_kernel_list(
      loom_allocator_default(), loom_kernel_registry_global(), op_name, &data,
      &length);
  TF_Buffer* buffer = NULL;
  if (!result) {
    buffer = wrap(data, length);
    if (!buffer) {
      result = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                "%s: out of memory for the TF_Buffer",
                                op_name ? "TF_GetRegisteredKernelsForOp"
                                        : "TF_GetAllRegisteredKernels");
    }
  }
  loom__tf_status_set(status, result);
  return buffer;
}

TF_Buffer* TF_GetAllRegisteredKernels(TF_Status* status) {
  return kernel_list(NULL, status);
}

TF_Buffer* TF_GetRegisteredKernelsForOp(const char* name, TF_Status* status) {
  if (!name) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "TF_GetRegisteredKernelsForOp: name is NULL"));
    return NULL;
  }
  return kernel_list(name, status);
}
