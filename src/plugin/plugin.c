// Loading plugins with dlopen under a registration journal, so that
// everything a library registers while it loads (from its static
// initialisers, from its entry points, from threads either starts) belongs
// to the load and can be rolled back.
//
// Loads are serialised by one process-wide (recursive, so that an entry
// point may load another plugin) lock. Every library that loaded is
// remembered by its dlopen handle, with the ops it registered: a second
// load of it, by any path, returns a new handle to the loaded library
// without running anything, as TensorFlow's TF_LoadLibrary does (running
// its entry points again would register its kernels twice).

#include "loom/plugin.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "registry/op_registry_internal.h"

// A library that loaded (or is loading), or one whose load failed and that
// could not be unmapped. Kept for the life of the process, like the library
// itself.
typedef struct loaded_library_t {
  struct loaded_library_t* next;
  void* handle;
  // Set when the load failed but the library stays mapped (linked with
  // -z nodelete, or held by another reference): its static initialisers
  // cannot run again, so a later load reports this error rather than
  // succeed with nothing registered.
  loom_status_t failure;
  // The ops it registered in the global registry, in order. NULL until the
  // load completes.
  const char** op_names;
  size_t num_ops;
} loaded_library_t;

struct loom_plugin_t {
  loom_allocator_t allocator;
  const loaded_library_t* library;
  char path[];
};

// Process-wide as dlopen's libraries and the global registries their
// registrations go to.
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
      loom_allocator_free(loom_allocator_system(), record->op_names);
      loom_allocator_free(loom_allocator_system(), record);
      return;
    }
  }
}

static loom_status_t remember(void* handle, loaded_library_t** out_record) {
  loaded_library_t* record = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(loom_allocator_system(),
                                             sizeof(*record), (void**)&record));
  record->handle = handle;
  record->next = g_loaded;
  g_loaded = record;
  *out_record = record;
  return loom_ok_status();
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

// Copies the names of the global ops `journal` recorded into `record`.
// The names point into the definitions, which stay allocated as long as
// the registry (an unregistered definition too).
static loom_status_t record_ops(const loom__registration_journal_t* journal,
                                loaded_library_t* record) {
  loom_op_registry_t* global = loom_op_registry_global();
  size_t count = 0;
  for (size_t i = 0; i < journal->count; ++i) {
    if (journal->entries[i].op_registry == global) ++count;
  }
  if (!count) return loom_ok_status();
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(loom_allocator_system(),
                                             sizeof(const char*) * count,
                                             (void**)&record->op_names));
  for (size_t i = 0; i < journal->count; ++i) {
    if (journal->entries[i].op_registry == global) {
      record->op_names[record->num_ops++] = journal->entries[i].op_name;
    }
  }
  return loom_ok_status();
}

// Unmaps a library whose load failed, after its registrations were rolled
// back. One that stays mapped is remembered with `failure` (consumed) when
// its static initialisers registered anything, since they will not run
// again.
static void unmap_failed(void* handle, const char* path,
                         bool initializers_registered, loom_status_t failure) {
  dlclose(handle);
  void* still_mapped = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  loaded_library_t* record = NULL;
  loom_status_t status = loom_ok_status();
  if (still_mapped && initializers_registered) {
    status = remember(still_mapped, &record);
  }
  if (!record) {
    loom_status_free(status);
    loom_status_free(failure);
    if (still_mapped) dlclose(still_mapped);
    return;
  }
  // The reference NOLOAD took stays with the record: the handle cannot
  // then be reused by another library.
  record->failure = failure;
}

static loom_status_t failed_before(const char* path,
                                   const loaded_library_t* record) {
  return loom_status_annotate(
      loom_status_clone(record->failure),
      "plugin '%s' stays mapped after a failed load, and its static "
      "initialisers do not run again",
      path);
}

// loom_plugin_load with g_lock held.
static loom_status_t load_locked(loom_allocator_t allocator, const char* path,
                                 const loaded_library_t** out_library) {
  // Mapped already: by an earlier load (then nothing runs), or by someone
  // else (the process links it, another loader opened it; its static
  // initialisers ran then, outside any load).
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  bool was_mapped = handle != NULL;
  loaded_library_t* record = handle ? find_loaded(handle) : NULL;
  if (record) {
    // The library stays mapped for the life of the process: the reference
    // taken above is not needed.
    dlclose(handle);
    *out_library = record;
    return record->failure ? failed_before(path, record) : loom_ok_status();
  }

  // The journal is installed before dlopen, which runs the library's
  // static initialisers (C constructors, C++ static objects): what they
  // register belongs to the load.
  loom__registration_journal_t journal;
  loom__registration_journal_initialize(&journal, allocator);
  loom__registration_journal_t* previous =
      loom__registration_journal_swap(&journal);
  if (!handle) handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  const char* reason = handle ? NULL : dlerror();
  record = handle ? find_loaded(handle) : NULL;
  if (!handle || record) {
    // Not loaded, or a path that names a loaded library in another way
    // than NOLOAD recognised: nothing of the library ran.
    loom__registration_journal_swap(previous);
    loom_status_t status = journal.failure;
    journal.failure = NULL;
    if (!handle) loom__registration_journal_rollback(&journal);
    loom__registration_journal_deinitialize(&journal);
    if (record) {
      dlclose(handle);
      loom_status_free(status);
      *out_library = record;
      return record->failure ? failed_before(path, record) : loom_ok_status();
    }
    loom_status_free(status);
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "cannot load plugin '%s': %s", path,
                            reason ? reason : "unknown error");
  }
  bool initializers_registered = journal.count > 0 || journal.failure;

  // Remembered before the entry points run, so that one of them loading
  // its own library again does not run them again.
  loom_status_t status = remember(handle, &record);
  if (!status && !journal.failure) {
    entry_point_t init_plugin = find_entry(handle, "TF_InitPlugin");
    entry_point_t init_kernel = find_entry(handle, "TF_InitKernel");
    if (init_plugin) init_plugin();
    if (init_kernel && !journal.failure) init_kernel();
  }
  loom__registration_journal_swap(previous);
  if (!status) {
    status = journal.failure;
    journal.failure = NULL;
  }
  if (!status) status = record_ops(&journal, record);
  if (status) {
    // Everything it registered goes before anything of it is unmapped:
    // a kernel left registered would run code that is gone.
    if (record) forget_loaded(record);
    loom__registration_journal_rollback(&journal);
    loom__registration_journal_deinitialize(&journal);
    status =
        loom_status_annotate(status, "plugin '%s' failed to register", path);
    if (was_mapped) {
      dlclose(handle);
    } else {
      unmap_failed(handle, path, initializers_registered,
                   loom_status_clone(status));
    }
    return status;
  }
  loom__registration_journal_deinitialize(&journal);
  *out_library = record;
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
  plugin->library = NULL;
  memcpy(plugin->path, path, length + 1);

  pthread_once(&g_lock_once, initialize_lock);
  pthread_mutex_lock(&g_lock);
  loom_status_t status = load_locked(allocator, path, &plugin->library);
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

size_t loom_plugin_op_names(const loom_plugin_t* plugin, const char** names,
                            size_t capacity) {
  if (!plugin) return 0;
  pthread_mutex_lock(&g_lock);
  const loaded_library_t* library = plugin->library;
  size_t count = library->num_ops;
  for (size_t i = 0; i < count && i < capacity && names; ++i) {
    names[i] = library->op_names[i];
  }
  pthread_mutex_unlock(&g_lock);
  return count;
}
