// The process-wide registries of gradient (VJP) and JVP functions, by op
// name. Definitions are copied into entries that live as long as the
// process, so the pointers loom_gradient_find returns stay valid. The
// built-in families register once, before the first look-up or
// registration.

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "base/hash_map.h"
#include "handlers/autodiff/autodiff_internal.h"
#include "handlers/autodiff/gradient_families.h"

enum { kBuckets = 512 };

// One registered definition, for the life of the process.
typedef struct entry_t {
  struct entry_t* next;
  uint64_t hash;
  union {
    loom_gradient_def_t gradient;
    loom_jvp_def_t jvp;
  } def;
  char name[];
} entry_t;

// Process-wide: the registration API (TensorFlow's RegisterGradient) takes
// no context, and an op's gradient is the same in every context.
static struct {
  pthread_mutex_t mutex;  // the buckets
  entry_t* gradients[kBuckets];
  entry_t* jvps[kBuckets];
  pthread_once_t builtins_once;
  loom_status_t builtins_status;
  // Counts gradient registrations: what was looked up stays valid while
  // it is unchanged.
  _Atomic uint64_t generation;
} g_registry = {
    .mutex = PTHREAD_MUTEX_INITIALIZER,
    .builtins_once = PTHREAD_ONCE_INIT,
};

// Set on the thread running the built-in registration: its calls to the
// public functions must not wait for the registration they are part of
// (pthread_once knows no owner thread).
static _Thread_local bool t_registering;

static void register_builtins(void) {
  t_registering = true;
  loom_status_t status = loom_ok_status();
#define LOOM_RUN_FAMILY(fn)                              \
  {                                                      \
    loom_status_t family_status = fn();                  \
    if (family_status && !status) {                      \
      status = loom_status_annotate(family_status, #fn); \
    } else {                                             \
      loom_status_free(family_status);                   \
    }                                                    \
  }
  LOOM_GRADIENT_FAMILIES(LOOM_RUN_FAMILY)
#undef LOOM_RUN_FAMILY
  g_registry.builtins_status = status;
  t_registering = false;
}

static void ensure_builtins(void) {
  if (!t_registering) {
    pthread_once(&g_registry.builtins_once, register_builtins);
  }
}

loom_status_t loom__gradient_builtins_status(void) {
  ensure_builtins();
  return loom_status_clone(g_registry.builtins_status);
}

uint64_t loom__gradient_generation(void) {
  return atomic_load_explicit(&g_registry.generation, memory_order_acquire);
}

static uint64_t name_hash(const char* name) {
  return loom__hash_bytes(name, strlen(name));
}

static entry_t* find_locked(entry_t* const* buckets, const char* name,
                            uint64_t hash) {
  for (entry_t* e = buckets[hash % kBuckets]; e; e = e->next) {
    if (e->hash == hash && strcmp(e->name, name) == 0) return e;
  }
  return NULL;
}

static const entry_t* find(entry_t* const* buckets, const char* op_name) {
  if (!op_name) return NULL;
  ensure_builtins();
  uint64_t hash = name_hash(op_name);
  pthread_mutex_lock(&g_registry.mutex);
  const entry_t* entry = find_locked(buckets, op_name, hash);
  pthread_mutex_unlock(&g_registry.mutex);
  return entry;
}

// Checks what `function` was given: a definition of `size` bytes at least
// (its struct_size), named.
static loom_status_t check_def(const char* function, bool given,
                               const char* op_name, size_t struct_size,
                               size_t size) {
  if (!given || !op_name || !op_name[0]) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s", function,
                            !given ? "def is NULL" : "def->op_name is empty");
  }
  if (struct_size < size) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: def->struct_size is %zu, expected %zu",
                            function, struct_size, size);
  }
  return loom_ok_status();
}

// A new entry named `op_name`, its definition to be filled.
static loom_status_t new_entry(const char* op_name, entry_t** out_entry) {
  ensure_builtins();
  size_t length = strlen(op_name);
  entry_t* entry = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      loom_allocator_default(), sizeof(*entry) + length + 1, (void**)&entry));
  memcpy(entry->name, op_name, length + 1);
  entry->hash = name_hash(op_name);
  *out_entry = entry;
  return loom_ok_status();
}

// Adds `entry` to `buckets` unless its op has one there already (then it
// is freed, and ALREADY_EXISTS says `function`: op '<name>' `already`).
static loom_status_t insert(entry_t** buckets, entry_t* entry,
                            bool counts_generation, const char* function,
                            const char* already) {
  pthread_mutex_lock(&g_registry.mutex);
  bool exists = find_locked(buckets, entry->name, entry->hash) != NULL;
  if (!exists) {
    entry->next = buckets[entry->hash % kBuckets];
    buckets[entry->hash % kBuckets] = entry;
    if (counts_generation) {
      atomic_fetch_add_explicit(&g_registry.generation, 1,
                                memory_order_release);
    }
  }
  pthread_mutex_unlock(&g_registry.mutex);
  if (!exists) return loom_ok_status();
  loom_status_t status =
      loom_make_status(LOOM_STATUS_ALREADY_EXISTS, "%s: op '%s' already has %s",
                       function, entry->name, already);
  loom_allocator_free(loom_allocator_default(), entry);
  return status;
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

loom_status_t loom_gradient_register(const loom_gradient_def_t* def) {
  static const char kFunction[] = "loom_gradient_register";
  LOOM_RETURN_IF_ERROR(check_def(kFunction, def != NULL,
                                 def ? def->op_name : NULL,
                                 def ? def->struct_size : 0, sizeof(*def)));
  entry_t* entry = NULL;
  LOOM_RETURN_IF_ERROR(new_entry(def->op_name, &entry));
  entry->def.gradient = *def;
  entry->def.gradient.struct_size = sizeof(*def);
  entry->def.gradient.op_name = entry->name;
  return insert(g_registry.gradients, entry, true, kFunction, "a gradient");
}

const loom_gradient_def_t* loom_gradient_find(const char* op_name) {
  const entry_t* entry = find(g_registry.gradients, op_name);
  return entry ? &entry->def.gradient : NULL;
}

loom_status_t loom__register_gradient_family(
    const loom__gradient_row_t* rows, size_t num_rows,
    const char* const* not_differentiable, size_t num_not_differentiable) {
  for (size_t i = 0; i < num_rows + num_not_differentiable; ++i) {
    const loom__gradient_row_t* row = i < num_rows ? &rows[i] : NULL;
    loom_gradient_def_t def = {
        .struct_size = sizeof(def),
        .op_name = row ? row->op : not_differentiable[i - num_rows],
        .fn = row ? row->fn : NULL,
        .user_data = row ? (void*)row->data : NULL,
        .inputs_used = row ? row->inputs : LOOM_GRADIENT_USES_NONE,
        .outputs_used = row ? row->outputs : LOOM_GRADIENT_USES_NONE,
    };
    LOOM_RETURN_IF_ERROR(loom_gradient_register(&def));
  }
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// JVPs
//===----------------------------------------------------------------------===//

loom_status_t loom_jvp_register(const loom_jvp_def_t* def) {
  static const char kFunction[] = "loom_jvp_register";
  LOOM_RETURN_IF_ERROR(check_def(kFunction, def != NULL,
                                 def ? def->op_name : NULL,
                                 def ? def->struct_size : 0, sizeof(*def)));
  entry_t* entry = NULL;
  LOOM_RETURN_IF_ERROR(new_entry(def->op_name, &entry));
  entry->def.jvp = *def;
  entry->def.jvp.struct_size = sizeof(*def);
  entry->def.jvp.op_name = entry->name;
  return insert(g_registry.jvps, entry, false, kFunction, "a JVP function");
}

const loom_jvp_def_t* loom_jvp_find(const char* op_name) {
  const entry_t* entry = find(g_registry.jvps, op_name);
  return entry ? &entry->def.jvp : NULL;
}
