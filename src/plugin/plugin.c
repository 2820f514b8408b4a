// Loading plugins with dlopen and running their registration entry points
// under a registration journal, so a failure can be rolled back.

#include "loom/plugin.h"

#include <dlfcn.h>
#include <string.h>

#include "registry/op_registry_internal.h"

struct loom_plugin_t {
  loom_allocator_t allocator;
  void* handle;
  char path[];
};

typedef void (*entry_point_t)(void);

static entry_point_t find_entry(void* handle, const char* name) {
  entry_point_t entry = NULL;
  void* symbol = dlsym(handle, name);
  memcpy(&entry, &symbol, sizeof(entry));
  return entry;
}

loom_status_t loom_plugin_load(loom_allocator_t allocator, const char* path,
                               loom_plugin_t** out_plugin) {
  if (!path || !out_plugin) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_plugin_load: %s is NULL",
                            !path ? "path" : "out_plugin");
  }
  *out_plugin = NULL;
  loom_plugin_t* plugin = NULL;
  size_t length = strlen(path);
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
      allocator, sizeof(*plugin) + length + 1, (void**)&plugin));
  plugin->allocator = allocator;
  memcpy(plugin->path, path, length + 1);

  plugin->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!plugin->handle) {
    const char* reason = dlerror();
    loom_status_t status =
        loom_make_status(LOOM_STATUS_NOT_FOUND, "cannot load plugin '%s': %s",
                         path, reason ? reason : "unknown error");
    loom_allocator_free(allocator, plugin);
    return status;
  }
  entry_point_t init_plugin = find_entry(plugin->handle, "TF_InitPlugin");
  entry_point_t init_kernel = find_entry(plugin->handle, "TF_InitKernel");
  if (!init_plugin && !init_kernel) {
    dlclose(plugin->handle);
    loom_allocator_free(allocator, plugin);
    return loom_make_status(
        LOOM_STATUS_NOT_FOUND,
        "plugin '%s' exports neither TF_InitPlugin nor TF_InitKernel", path);
  }

  loom_registration_journal_t journal;
  loom__registration_journal_initialize(&journal, allocator);
  loom_registration_journal_t* previous =
      loom__registration_journal_swap(&journal);
  if (init_plugin) init_plugin();
  if (init_kernel && !journal.failure) init_kernel();
  loom__registration_journal_swap(previous);

  loom_status_t status = journal.failure;
  journal.failure = NULL;
  if (status) {
    loom__registration_journal_rollback(&journal);
    // The library stays loaded: code in it may be referenced by kernels
    // registered before the failure and already looked up by other threads.
    status =
        loom_status_annotate(status, "plugin '%s' failed to register", path);
    loom_allocator_free(allocator, plugin);
  } else {
    *out_plugin = plugin;
  }
  loom__registration_journal_deinitialize(&journal);
  return status;
}

void loom_plugin_release(loom_plugin_t* plugin) {
  if (!plugin) return;
  loom_allocator_free(plugin->allocator, plugin);
}

const char* loom_plugin_path(const loom_plugin_t* plugin) {
  return plugin ? plugin->path : NULL;
}
