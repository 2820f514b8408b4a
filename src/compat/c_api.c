// TF_Version and TensorFlow's library loading over Loom's plugin loader.

#include "tensorflow/c/c_api.h"

#include "compat/tf_status_internal.h"
#include "loom/plugin.h"

const char* TF_Version(void) {
  return "loom-0.1.0";
}

struct TF_Library {
  loom_plugin_t* plugin;
};

TF_Library* TF_LoadLibrary(const char* library_filename, TF_Status* status) {
  loom_plugin_t* plugin = NULL;
  loom_status_t result =
      loom_plugin_load(loom_allocator_default(), library_filename, &plugin);
  TF_Library* library = NULL;
  if (!result) {
    loom_status_t allocation = loom_allocator_malloc(
        loom_allocator_default(), sizeof(*library), (void**)&library);
    if (allocation) {
      loom_plugin_release(plugin);
      result = allocation;
    } else {
      library->plugin = plugin;
    }
  }
  loom__tf_status_set(status, result);
  return library;
}

void TF_DeleteLibraryHandle(TF_Library* lib_handle) {
  if (!lib_handle) return;
  loom_plugin_release(lib_handle->plugin);
  loom_allocator_free(loom_allocator_default(), lib_handle);
}
