// Loading plugins with dlopen and running their registration entry points
// under a registration journal, so a failure can be rolled back.
//
// Loads are serialised by one process-wide (recursive, so that an entry
// point may load another plugin) lock, and every library whose entry points
// ran successfully is remembered by its dlopen handle: running them a second
// time would register its kernels twice (duplicates that make every later
// lookup ambiguous). A second load of the same library, by any path, returns
// a new handle to the loaded library without running anything, as
// TensorFlow's TF_LoadLibrary does.

#include "loom/plugin.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "registry/op_registry_internal.h"

struct loom_plugin_t {
  loom_allocator_t allocator;
  void* handle;
  char path[];
};

// A library whose entry points ran (or are running) successfully. Kept for
// the life of the process, like the library itself.
typedef struct loaded_library_t {
  struct loaded_library_t* next;
  void* handle;
} loaded_library_t;

// Process-wide as dlopen's libraries and the global registries their entry
// points register into.
static pthread_once_t g_lock_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock;
static loaded_library_t* g_loaded = NULL;  // guarded by g_lock

static void initialize_lock(void) {
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&g_lock, &attributes);
  pthread_mutexattr_destroy(&attributes);
}

static loaded_library_t* find_loaded(void* handle) {
  for (loaded_library_t* library = g_loaded; library; library = library->next) {
    if (library->handle == handle) return library;
  }
  return NULL;
}

static void forget_loaded(loaded_library_t* record) {
  for (loaded_library_t** link = &g_loaded; *link; link = &(*link)->next) {
    if (*link == record) {
      *link = record->next;
      loom_allocator_free(loom_allocator_system(), record);
      return;
    }
  }
}

typedef void (*entry_point_t)(void);

// The library's own definition of `name`, or NULL. dlsym(handle) also
// searches the libraries `handle` depends on: a library that merely links
// against a plugin would otherwise run that plugin's entry point (again) in
// its own name.
static entry_point_t find_entry(void* handle, const char* name) {
  void* symbol = dlsym(handle, name);
  if (!symbol) return NULL;
  struct link_map* library = NULL;
  struct link_map* owner = NULL;
  Dl_info info;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &library) != 0 ||
      !dladdr1(symbol, &info, (void**)&owner, RTLD_DL_LINKMAP) ||
      owner != library) {
    return NULL;
  }
  entry_point_t entry = NULL;
  memcpy(&entry, &symbol, sizeof(entry));
  return entry;
}

// Runs the entry points under a journal; on failure rolls back everything
// they registered and returns the first registration error.
static loom_status_t run_entry_points(loom_allocator_t allocator,
                                      entry_point_t init_plugin,
                                      entry_point_t init_kernel) {
  loom__registration_journal_t journal;
  loom__registration_journal_initialize(&journal, allocator);
  loom__registration_journal_t* previous =
      loom__registration_journal_swap(&journal);
  if (init_plugin) init_plugin();
  if (init_kernel && !journal.failure) init_kernel();
  loom__registration_journal_swap(previous);

  loom_status_t status = journal.failure;
  journal.failure = NULL;
  if (status) loom__registration_journal_rollback(&journal);
  loom__registration_journal_deinitialize(&journal);
  return status;
}

// loom_plugin_load with g_lock held.
static loom_status_t load_locked(loom_allocator_t allocator, const char* path,
                                 loom_plugin_t* plugin) {
  plugin->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!plugin->handle) {
    const char* reason = dlerror();
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "cannot load plugin '%s': %s", path,
                            reason ? reason : "unknown error");
  }
  loaded_library_t* loaded = find_loaded(plugin->handle);
  if (loaded) {
    // Already registered (or registering: an entry point loading its own
    // library). The library stays loaded for the life of the process, so
    // the reference taken above is not needed.
    dlclose(plugin->handle);
    return loom_ok_status();
  }
  entry_point_t init_plugin = find_entry(plugin->handle, "TF_InitPlugin");
  entry_point_t init_kernel = find_entry(plugin->handle, "TF_InitKernel");
  if (!init_plugin && !init_kernel) {
    dlclose(plugin->handle);
    return loom_make_status(
        LOOM_STATUS_NOT_FOUND,
        "plugin '%s' exports neither TF_InitPlugin nor TF_InitKernel", path);
  }

  // Recorded before the entry points run, so that one of them loading its
  // own library again does not run them again.
  loom_status_t status = loom_allocator_malloc(
      loom_allocator_system(), sizeof(*loaded), (void**)&loaded);
  if (status) {
    dlclose(plugin->handle);
    return status;
  }
  loaded->handle = plugin->handle;
  loaded->next = g_loaded;
  g_loaded = loaded;

  status = run_entry_points(allocator, init_plugin, init_kernel);
  if (status) {
    // The library stays loaded: code in it may be referenced by kernels
    // registered before the failure and already looked up by other threads.
    // Forgetting it lets a later load report the same error again.
    forget_loaded(loaded);
    return loom_status_annotate(status, "plugin '%s' failed to register", path);
  }
  return loom_ok_status();
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

  pthread_once(&g_lock_once, initialize_lock);
  pthread_mutex_lock(&g_lock);
  loom_status_t status = load_locked(allocator, path, plugin);
  pthread_mutex_unlock(&g_lock);
  if (status) {
    loom_allocator_free(allocator, plugin);
    return status;
  }
  *out_plugin = plugin;
  return loom_ok_status();
}

void loom_plugin_release(loom_plugin_t* plugin) {
  if (!plugin) return;
  loom_allocator_free(plugin->allocator, plugin);
}

const char* loom_plugin_path(const loom_plugin_t* plugin) {
  return plugin ? plugin->path : NULL;
}
