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

typedef struct gradient_entry_t {
  struct gradient_entry_t* next;
  uint64_t hash;
  loom_gradient_def_t def;
  char name[];
} gradient_entry_t;

typedef struct jvp_entry_t {
  struct jvp_entry_t* next;
  uint64_t hash;
  loom_jvp_def_t def;
  char name[];
} jvp_entry_t;

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static gradient_entry_t* g_gradients[kBuckets];
static jvp_entry_t* g_jvps[kBuckets];

static pthread_once_t g_builtins_once = PTHREAD_ONCE_INIT;
static loom_status_t g_builtins_status;
// Set on the thread running the built-in registration: its calls to the
// public functions must not wait for the registration they are part of.
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
  g_builtins_status = status;
  t_registering = false;
}

static void ensure_builtins(void) {
  if (!t_registering) pthread_once(&g_builtins_once, register_builtins);
}

loom_status_t loom__gradient_builtins_status(void) {
  ensure_builtins();
  return loom_status_clone(g_builtins_status);
}

// Counts registrations: what was looked up stays valid while it is unchanged.
static _Atomic uint64_t g_generation;

uint64_t loom__gradient_generation(void) {
  return atomic_load_explicit(&g_generation, memory_order_acquire);
}

static uint64_t name_hash(const char* name) {
  return loom__hash_bytes(name, strlen(name));
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

static gradient_entry_t* find_gradient_locked(const char* name, uint64_t hash) {
  for (gradient_entry_t* e = g_gradients[hash % kBuckets]; e; e = e->next) {
    if (e->hash == hash && strcmp(e->name, name) == 0) return e;
  }
  return NULL;
}

loom_status_t loom_gradient_register(const loom_gradient_def_t* def) {
  if (!def || !def->op_name || !def->op_name[0]) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_gradient_register: %s",
                            !def ? "def is NULL" : "def->op_name is empty");
  }
  if (def->struct_size < sizeof(loom_gradient_def_t)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_gradient_register: def->struct_size is %zu, expected %zu",
        def->struct_size, sizeof(loom_gradient_def_t));
  }
  ensure_builtins();
  size_t length = strlen(def->op_name);
  uint64_t hash = name_hash(def->op_name);
  gradient_entry_t* entry = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      loom_allocator_default(), sizeof(*entry) + length + 1, (void**)&entry));
  memcpy(entry->name, def->op_name, length + 1);
  entry->hash = hash;
  entry->def = *def;
  entry->def.struct_size = sizeof(loom_gradient_def_t);
  entry->def.op_name = entry->name;
  pthread_mutex_lock(&g_mutex);
  bool exists = find_gradient_locked(def->op_name, hash) != NULL;
  if (!exists) {
    entry->next = g_gradients[hash % kBuckets];
    g_gradients[hash % kBuckets] = entry;
    atomic_fetch_add_explicit(&g_generation, 1, memory_order_release);
  }
  pthread_mutex_unlock(&g_mutex);
  if (exists) {
    loom_allocator_free(loom_allocator_default(), entry);
    return loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                            "loom_gradient_register: op '%s' already has a "
                            "gradient",
                            def->op_name);
  }
  return loom_ok_status();
}

const loom_gradient_def_t* loom_gradient_find(const char* op_name) {
  if (!op_name) return NULL;
  ensure_builtins();
  uint64_t hash = name_hash(op_name);
  pthread_mutex_lock(&g_mutex);
  gradient_entry_t* entry = find_gradient_locked(op_name, hash);
  pthread_mutex_unlock(&g_mutex);
  return entry ? &entry->def : NULL;
}

//===----------------------------------------------------------------------===//
// JVPs
//===----------------------------------------------------------------------===//

static jvp_entry_t* find_jvp_locked(const char* name, uint64_t hash) {
  for (jvp_entry_t* e = g_jvps[hash % kBuckets]; e; e = e->next) {
    if (e->hash == hash && strcmp(e->name, name) == 0) return e;
  }
  return NULL;
}

loom_status_t loom_jvp_register(const loom_jvp_def_t* def) {
  if (!def || !def->op_name || !def->op_name[0]) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_jvp_register: %s",
                            !def ? "def is NULL" : "def->op_name is empty");
  }
  if (def->struct_size < sizeof(loom_jvp_def_t)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_jvp_register: def->struct_size is %zu, expected %zu",
        def->struct_size, sizeof(loom_jvp_def_t));
  }
  ensure_builtins();
  size_t length = strlen(def->op_name);
  uint64_t hash = name_hash(def->op_name);
  jvp_entry_t* entry = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      loom_allocator_default(), sizeof(*entry) + length + 1, (void**)&entry));
  memcpy(entry->name, def->op_name, length + 1);
  entry->hash = hash;
  entry->def = *def;
  entry->def.struct_size = sizeof(loom_jvp_def_t);
  entry->def.op_name = entry->name;
  pthread_mutex_lock(&g_mutex);
  bool exists = find_jvp_locked(def->op_name, hash) != NULL;
  if (!exists) {
    entry->next = g_jvps[hash % kBuckets];
    g_jvps[hash % kBuckets] = entry;
  }
  pthread_mutex_unlock(&g_mutex);
  if (exists) {
    loom_allocator_free(loom_allocator_default(), entry);
    return loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                            "loom_jvp_register: op '%s' already has a JVP "
                            "function",
                            def->op_name);
  }
  return loom_ok_status();
}

const loom_jvp_def_t* loom_jvp_find(const char* op_name) {
  if (!op_name) return NULL;
  ensure_builtins();
  uint64_t hash = name_hash(op_name);
  pthread_mutex_lock(&g_mutex);
  jvp_entry_t* entry = find_jvp_locked(op_name, hash);
  pthread_mutex_unlock(&g_mutex);
  return entry ? &entry->def : NULL;
}
