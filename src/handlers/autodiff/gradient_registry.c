// The process-wide registries of gradient (VJP) and JVP functions, by op
// name. Definitions are copied into entries that live as long as the
// process, so the pointers loom_gradient_find returns stay valid. The
// built-in families register once, before the first look-up or
// registration.

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
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

// The late families (gradient_families.h).
static _Atomic(loom_status_t (*)(void)) g_late_families[kLateFamilies];

void loom__gradient_add_late_family(loom_status_t (*family)(void)) {
  for (int i = 0; i < kLateFamilies; ++i) {
    loom_status_t (*expected)(void) = NULL;
    if (atomic_compare_exchange_strong(&g_late_families[i], &expected,
                                       family)) {
      return;
    }
  }
}

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
  for (int i = 0; i < kLateFamilies; ++i) {
    loom_status_t (*family)(void) = atomic_load(&g_late_families[i]);
    if (family) LOOM_RUN_FAMILY(family)
  }
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

// What tells the two registries apart.
typedef struct registry_kind_t {
  const char* function;  // the registration function, for messages
  const char* has;       // what an op then has ("a gradient")
  size_t def_size;       // sizeof its definition type
  size_t min_def_size;   // of its first version: later fields read as 0
  bool counts_generation;
} registry_kind_t;

static const registry_kind_t kGradients = {
    .function = "loom_gradient_register",
    .has = "a gradient",
    .def_size = sizeof(loom_gradient_def_t),
    .min_def_size = offsetof(loom_gradient_def_t, flags),
    .counts_generation = true,
};

static const registry_kind_t kJvps = {
    .function = "loom_jvp_register",
    .has = "a JVP function",
    .def_size = sizeof(loom_jvp_def_t),
    .min_def_size = sizeof(loom_jvp_def_t),
    .counts_generation = false,
};

// The fields both definition types begin with.
typedef struct def_header_t {
  size_t struct_size;
  const char* op_name;
} def_header_t;

_Static_assert(offsetof(loom_gradient_def_t, op_name) ==
                       offsetof(def_header_t, op_name) &&
                   offsetof(loom_jvp_def_t, op_name) ==
                       offsetof(def_header_t, op_name),
               "definitions begin with struct_size and op_name");

// Copies `def` (of `kind`) into a new entry of `buckets`, unless its op has
// one there already (ALREADY_EXISTS).
static loom_status_t add(entry_t** buckets, const registry_kind_t* kind,
                         const void* def) {
  def_header_t header = {.struct_size = 0, .op_name = NULL};
  if (def) memcpy(&header, def, sizeof(header));
  if (!def || !header.op_name || !header.op_name[0]) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s",
                            kind->function,
                            !def ? "def is NULL" : "def->op_name is empty");
  }
  if (header.struct_size < kind->min_def_size) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: def->struct_size is %zu, expected at least "
                            "%zu",
                            kind->function, header.struct_size,
                            kind->min_def_size);
  }
  ensure_builtins();
  size_t length = strlen(header.op_name);
  entry_t* entry = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      loom_allocator_default(), sizeof(*entry) + length + 1, (void**)&entry));
  memcpy(entry->name, header.op_name, length + 1);
  entry->hash = name_hash(entry->name);
  // An older definition's missing fields stay 0 (calloc).
  memcpy(&entry->def, def,
         header.struct_size < kind->def_size ? header.struct_size
                                             : kind->def_size);
  header.struct_size = kind->def_size;
  header.op_name = entry->name;
  memcpy(&entry->def, &header, sizeof(header));
  pthread_mutex_lock(&g_registry.mutex);
  bool exists = find_locked(buckets, entry->name, entry->hash) != NULL;
  if (!exists) {
    entry->next = buckets[entry->hash % kBuckets];
    buckets[entry->hash % kBuckets] = entry;
    if (kind->counts_generation) {
      atomic_fetch_add_explicit(&g_registry.generation, 1,
                                memory_order_release);
    }
  }
  pthread_mutex_unlock(&g_registry.mutex);
  if (!exists) return loom_ok_status();
  loom_status_t status =
      loom_make_status(LOOM_STATUS_ALREADY_EXISTS, "%s: op '%s' already has %s",
                       kind->function, entry->name, kind->has);
  loom_allocator_free(loom_allocator_default(), entry);
  return status;
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

loom_status_t loom_gradient_register(const loom_gradient_def_t* def) {
  return add(g_registry.gradients, &kGradients, def);
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
        .flags = row ? row->flags : 0,
    };
    LOOM_RETURN_IF_ERROR(loom_gradient_register(&def));
  }
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// JVPs
//===----------------------------------------------------------------------===//

loom_status_t loom_jvp_register(const loom_jvp_def_t* def) {
  return add(g_registry.jvps, &kJvps, def);
}

const loom_jvp_def_t* loom_jvp_find(const char* op_name) {
  const entry_t* entry = find(g_registry.jvps, op_name);
  return entry ? &entry->def.jvp : NULL;
}
