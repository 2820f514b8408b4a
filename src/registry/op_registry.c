// The op registry: validates definitions as they are registered and maps
// names to them. Definitions are never freed before the registry, so the
// pointers handed out stay valid even after an op is unregistered.

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash_map.h"
#include "base/rwlock.h"
#include "registry/op_def_internal.h"
#include "registry/op_registry_generation.h"
#include "registry/op_registry_internal.h"

typedef struct op_entry_t {
  struct op_entry_t* next_all;   // every entry ever added
  struct op_entry_t* next_hash;  // entries whose names share a hash
  loom__arena_t arena;
  loom_op_def_t def;
  bool registered;
  // Whether a look-up returned the definition: then its holder may still
  // use it, and it stays allocated after it is unregistered. One never
  // handed out (a failed plugin's) is freed when it is unregistered.
  atomic_bool handed_out;
} op_entry_t;

_Atomic uint64_t loom__registry_generation_counter = 1;

struct loom_op_registry_t {
  loom_allocator_t allocator;
  pthread_rwlock_t lock;
  loom__hash_map_t by_hash;  // loom__hash_bytes(name) -> op_entry_t*
  op_entry_t* all;
  size_t count;
};

loom_status_t loom_op_registry_create(loom_allocator_t allocator,
                                      loom_op_registry_t** out_registry) {
  if (!out_registry) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_registry_create: out_registry is NULL");
  }
  *out_registry = NULL;
  loom_op_registry_t* registry = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*registry), (void**)&registry));
  registry->allocator = allocator;
  loom__rwlock_initialize(&registry->lock);
  loom__hash_map_initialize(&registry->by_hash, allocator);
  *out_registry = registry;
  return loom_ok_status();
}

static void entry_free(loom_allocator_t allocator, op_entry_t* entry) {
  loom_op_attrs_release(entry->def.defaults);
  loom__arena_deinitialize(&entry->arena);
  loom_allocator_free(allocator, entry);
}

void loom_op_registry_destroy(loom_op_registry_t* registry) {
  if (!registry) return;
  for (op_entry_t* entry = registry->all; entry;) {
    op_entry_t* next = entry->next_all;
    entry_free(registry->allocator, entry);
    entry = next;
  }
  loom__hash_map_deinitialize(&registry->by_hash);
  pthread_rwlock_destroy(&registry->lock);
  loom_allocator_free(registry->allocator, registry);
}

// TensorFlow's op registration (TF_RegisterOpDefinition, static
// initializers of plugins) names no registry: one is process-wide.
static loom_op_registry_t* g_global_registry = NULL;
static pthread_once_t g_global_once = PTHREAD_ONCE_INIT;

static void create_global_registry(void) {
  // The process-wide registry lives until exit. Failing to allocate these
  // few bytes at start-up leaves it NULL; callers then report the error.
  loom_status_ignore(
      loom_op_registry_create(loom_allocator_system(), &g_global_registry));
}

loom_op_registry_t* loom_op_registry_global(void) {
  pthread_once(&g_global_once, create_global_registry);
  return g_global_registry;
}

// The registered entry named `name`; call with the lock held.
static op_entry_t* find_locked(loom_op_registry_t* registry, const char* name) {
  uint64_t head = 0;
  if (!loom__hash_map_find(&registry->by_hash,
                           loom__hash_bytes(name, strlen(name)), &head)) {
    return NULL;
  }
  for (op_entry_t* entry = (op_entry_t*)(uintptr_t)head; entry;
       entry = entry->next_hash) {
    if (entry->registered && strcmp(entry->def.name, name) == 0) return entry;
  }
  return NULL;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

static loom_attr_def_t* find_builder_attr(loom_op_def_builder_t* builder,
                                          const char* name) {
  for (int32_t i = 0; i < builder->num_attrs; ++i) {
    if (strcmp(builder->attrs[i].name, name) == 0) return &builder->attrs[i];
  }
  return NULL;
}

static loom_status_t arg_error(const loom_op_def_builder_t* builder,
                               bool output, const loom_arg_def_t* arg,
                               const char* message, const char* detail) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Op '%s': %s \"%s\": %s%s", builder->def.name,
                          output ? "output" : "input", arg->spec, message,
                          detail ? detail : "");
}

// Resolves an argument's attr references; records implied minimums.
static loom_status_t resolve_arg(loom_op_def_builder_t* builder,
                                 loom_arg_def_t* arg, bool output,
                                 bool* explicit_minimum) {
  char detail[160];
  if (arg->number_attr) {
    loom_attr_def_t* number = find_builder_attr(builder, arg->number_attr);
    if (!number) {
      snprintf(detail, sizeof(detail), "'%s' is not defined", arg->number_attr);
      return arg_error(builder, output, arg, "the length attr ", detail);
    }
    if (number->kind != LOOM_ATTR_KIND_I64 || number->is_list) {
      snprintf(detail, sizeof(detail), "'%s' must be an int attr, not \"%s\"",
               arg->number_attr, number->spec);
      return arg_error(builder, output, arg, "the length attr ", detail);
    }
    int32_t index = (int32_t)(number - builder->attrs);
    if (!explicit_minimum[index]) {
      number->has_minimum = true;
      number->minimum = 1;
    } else if (number->minimum < 0) {
      snprintf(detail, sizeof(detail),
               "'%s' is used as a length, so its minimum must be >= 0",
               arg->number_attr);
      return arg_error(builder, output, arg, "attr ", detail);
    }
  }
  if (arg->type_attr) {
    loom_attr_def_t* type = find_builder_attr(builder, arg->type_attr);
    if (!type) {
      snprintf(detail, sizeof(detail),
               "'%s' is neither a type nor a defined attr", arg->type_attr);
      return arg_error(builder, output, arg, "", detail);
    }
    if (type->kind != LOOM_ATTR_KIND_DTYPE) {
      snprintf(detail, sizeof(detail),
               "attr '%s' is used as a type, so it must be 'type' or "
               "'list(type)', not \"%s\"",
               arg->type_attr, type->spec);
      return arg_error(builder, output, arg, "", detail);
    }
    if (type->is_list) {
      if (arg->number_attr) {
        snprintf(detail, sizeof(detail),
                 "a list(type) attr ('%s') cannot be repeated by a length",
                 arg->type_attr);
        return arg_error(builder, output, arg, "", detail);
      }
      arg->type_list_attr = arg->type_attr;
      arg->type_attr = NULL;
      int32_t index = (int32_t)(type - builder->attrs);
      if (!explicit_minimum[index]) {
        type->has_minimum = true;
        type->minimum = 1;
      }
    }
  }
  return loom_ok_status();
}

// Checks names, resolves arguments and validates defaults.
static loom_status_t validate(loom_op_def_builder_t* builder) {
  int32_t total =
      builder->num_attrs + builder->num_inputs + builder->num_outputs;
  bool* explicit_minimum = NULL;
  const char** names = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &builder->arena, sizeof(bool) * (size_t)(builder->num_attrs + 1),
      (void**)&explicit_minimum));
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &builder->arena, sizeof(char*) * (size_t)(total + 1), (void**)&names));
  int32_t num_names = 0;
  for (int32_t i = 0; i < builder->num_attrs; ++i) {
    explicit_minimum[i] = builder->attrs[i].has_minimum;
  }
  for (int32_t i = 0; i < total; ++i) {
    const char* name;
    const char* spec;
    if (i < builder->num_attrs) {
      name = builder->attrs[i].name;
      spec = builder->attrs[i].spec;
    } else if (i < builder->num_attrs + builder->num_inputs) {
      name = builder->inputs[i - builder->num_attrs].name;
      spec = builder->inputs[i - builder->num_attrs].spec;
    } else {
      name =
          builder->outputs[i - builder->num_attrs - builder->num_inputs].name;
      spec =
          builder->outputs[i - builder->num_attrs - builder->num_inputs].spec;
    }
    for (int32_t j = 0; j < num_names; ++j) {
      if (strcmp(names[j], name) == 0) {
        return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "Op '%s': duplicate name '%s' (in \"%s\")",
                                builder->def.name, name, spec);
      }
    }
    names[num_names++] = name;
  }
  for (int32_t i = 0; i < builder->num_inputs; ++i) {
    LOOM_RETURN_IF_ERROR(
        resolve_arg(builder, &builder->inputs[i], false, explicit_minimum));
    if (builder->inputs[i].dtype == LOOM_DTYPE_RESOURCE) {
      builder->def.is_stateful = true;
    }
  }
  for (int32_t i = 0; i < builder->num_outputs; ++i) {
    LOOM_RETURN_IF_ERROR(
        resolve_arg(builder, &builder->outputs[i], true, explicit_minimum));
    // As in TensorFlow, producing a resource (VarHandleOp) is stateful too.
    if (builder->outputs[i].dtype == LOOM_DTYPE_RESOURCE) {
      builder->def.is_stateful = true;
    }
  }
  loom_op_def_t* def = &builder->def;
  def->attrs = builder->attrs;
  def->num_attrs = builder->num_attrs;
  for (int32_t i = 0; i < builder->num_attrs; ++i) {
    const loom_attr_def_t* attr = &builder->attrs[i];
    loom_attr_value_t value;
    if (!attr->has_default ||
        !loom_op_attrs_get(&builder->defaults, attr->name, &value)) {
      continue;
    }
    loom_status_t status = loom_attr_def_check_value(def, attr, &value);
    if (status) {
      return loom_status_annotate(status, "default of attr \"%s\"", attr->spec);
    }
  }
  return loom_ok_status();
}

// Copies the builder's arrays into its arena so the entry owns one block.
static loom_status_t copy_array(loom__arena_t* arena, const void* source,
                                size_t size, void** out) {
  *out = NULL;
  if (size == 0) return loom_ok_status();
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(arena, size, out));
  memcpy(*out, source, size);
  return loom_ok_status();
}

static loom_status_t build_entry(loom_op_registry_t* registry,
                                 loom_op_def_builder_t* builder,
                                 op_entry_t** out_entry) {
  LOOM_RETURN_IF_ERROR(validate(builder));
  loom_op_def_t* def = &builder->def;
  loom__arena_t* arena = &builder->arena;
  LOOM_RETURN_IF_ERROR(
      copy_array(arena, builder->inputs,
                 sizeof(loom_arg_def_t) * (size_t)builder->num_inputs,
                 (void**)&def->inputs));
  def->num_inputs = builder->num_inputs;
  LOOM_RETURN_IF_ERROR(
      copy_array(arena, builder->outputs,
                 sizeof(loom_arg_def_t) * (size_t)builder->num_outputs,
                 (void**)&def->outputs));
  def->num_outputs = builder->num_outputs;
  LOOM_RETURN_IF_ERROR(
      copy_array(arena, builder->attrs,
                 sizeof(loom_attr_def_t) * (size_t)builder->num_attrs,
                 (void**)&def->attrs));
  op_entry_t* entry = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(registry->allocator,
                                             sizeof(*entry), (void**)&entry));
  loom_status_t status =
      loom_op_attrs_freeze(&builder->defaults, &def->defaults);
  if (status) {
    loom_allocator_free(registry->allocator, entry);
    return status;
  }
  entry->def = *def;
  entry->arena = builder->arena;
  loom__arena_initialize(&builder->arena, builder->allocator);  // moved
  def->defaults = NULL;
  *out_entry = entry;
  return loom_ok_status();
}

static loom_status_t register_op(loom_op_registry_t* registry,
                                 loom_op_def_builder_t* builder,
                                 loom__registration_journal_t* journal) {
  if (!registry || !builder) {
    loom_op_def_builder_destroy(builder);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_registry_register: %s is NULL",
                            !registry ? "registry" : "builder");
  }
  op_entry_t* entry = NULL;
  loom_status_t status = build_entry(registry, builder, &entry);
  loom_op_def_builder_destroy(builder);
  if (status) return status;
  if (journal) {
    status = loom__registration_journal_reserve(journal);
    if (status) {
      entry_free(registry->allocator, entry);
      return status;
    }
  }

  pthread_rwlock_wrlock(&registry->lock);
  if (find_locked(registry, entry->def.name)) {
    pthread_rwlock_unlock(&registry->lock);
    status = loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                              "Op '%s' is already registered", entry->def.name);
    entry_free(registry->allocator, entry);
    return status;
  }
  uint64_t key = loom__hash_bytes(entry->def.name, strlen(entry->def.name));
  uint64_t head = 0;
  loom__hash_map_find(&registry->by_hash, key, &head);
  entry->next_hash = (op_entry_t*)(uintptr_t)head;
  status = loom__hash_map_insert(&registry->by_hash, key,
                                 (uint64_t)(uintptr_t)entry);
  if (status) {
    pthread_rwlock_unlock(&registry->lock);
    entry_free(registry->allocator, entry);
    return status;
  }
  entry->registered = true;
  entry->next_all = registry->all;
  registry->all = entry;
  registry->count++;
  pthread_rwlock_unlock(&registry->lock);
  loom__registry_generation_advance();
  if (journal)
    loom__registration_journal_add_op(journal, registry, &entry->def);
  return loom_ok_status();
}

loom_status_t loom_op_registry_lookup(loom_op_registry_t* registry,
                                      const char* name,
                                      const loom_op_def_t** out_op) {
  if (!registry || !name || !out_op) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_registry_lookup: %s is NULL",
                            !registry ? "registry"
                            : !name   ? "name"
                                      : "out_op");
  }
  *out_op = loom_op_registry_find(registry, name);
  if (!*out_op) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "Op type not registered '%s'", name);
  }
  return loom_ok_status();
}

const loom_op_def_t* loom_op_registry_find(loom_op_registry_t* registry,
                                           const char* name) {
  if (!registry || !name) return NULL;
  pthread_rwlock_rdlock(&registry->lock);
  op_entry_t* entry = find_locked(registry, name);
  if (entry &&
      !atomic_load_explicit(&entry->handed_out, memory_order_relaxed)) {
    atomic_store_explicit(&entry->handed_out, true, memory_order_relaxed);
  }
  pthread_rwlock_unlock(&registry->lock);
  return entry ? &entry->def : NULL;
}

static int compare_names(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

// Inserts `name` into the sorted names[0, *count) that keeps the
// `capacity` smallest names seen.
static void insert_smallest(const char** names, size_t capacity, size_t* count,
                            const char* name) {
  size_t at = *count;
  while (at > 0 && strcmp(names[at - 1], name) > 0) --at;
  if (at >= capacity) return;
  size_t last = *count < capacity ? *count : capacity - 1;
  memmove(names + at + 1, names + at, sizeof(char*) * (last - at));
  names[at] = name;
  if (*count < capacity) ++*count;
}

size_t loom_op_registry_list(loom_op_registry_t* registry, const char** names,
                             size_t capacity) {
  if (!registry) return 0;
  if (!names) capacity = 0;
  pthread_rwlock_rdlock(&registry->lock);
  size_t count = registry->count;
  if (capacity == 0) {
    pthread_rwlock_unlock(&registry->lock);
    return count;
  }
  // Sort all names in a temporary array; without memory for one, keep the
  // `capacity` smallest directly in `names` (slower, but still correct).
  const char** all = NULL;
  loom_status_t status = loom_allocator_malloc(
      registry->allocator, sizeof(char*) * (count ? count : 1), (void**)&all);
  if (status) {
    loom_status_free(status);
    size_t kept = 0;
    for (op_entry_t* entry = registry->all; entry; entry = entry->next_all) {
      if (entry->registered) {
        insert_smallest(names, capacity, &kept, entry->def.name);
      }
    }
    pthread_rwlock_unlock(&registry->lock);
    return count;
  }
  size_t n = 0;
  for (op_entry_t* entry = registry->all; entry; entry = entry->next_all) {
    if (entry->registered) all[n++] = entry->def.name;
  }
  pthread_rwlock_unlock(&registry->lock);
  qsort(all, n, sizeof(char*), compare_names);
  for (size_t i = 0; i < n && i < capacity; ++i) names[i] = all[i];
  loom_allocator_free(registry->allocator, all);
  return n;
}

// Removes `entry` from the chain of its name's hash, so look-ups no longer
// walk past it; call with the lock held for writing.
static void unlink_hash_locked(loom_op_registry_t* registry,
                               op_entry_t* entry) {
  uint64_t key = loom__hash_bytes(entry->def.name, strlen(entry->def.name));
  uint64_t head = 0;
  loom__hash_map_find(&registry->by_hash, key, &head);
  op_entry_t* first = (op_entry_t*)(uintptr_t)head;
  for (op_entry_t** link = &first; *link; link = &(*link)->next_hash) {
    if (*link == entry) {
      *link = entry->next_hash;
      break;
    }
  }
  entry->next_hash = NULL;
  if (first) {
    // Replacing the value of a present key allocates nothing.
    loom_status_ignore(loom__hash_map_insert(&registry->by_hash, key,
                                             (uint64_t)(uintptr_t)first));
  } else {
    loom__hash_map_remove(&registry->by_hash, key);
  }
}

// Removes `entry` from the list of every entry, before freeing it; call
// with the lock held for writing.
static void unlink_all_locked(loom_op_registry_t* registry, op_entry_t* entry) {
  for (op_entry_t** link = &registry->all; *link; link = &(*link)->next_all) {
    if (*link == entry) {
      *link = entry->next_all;
      break;
    }
  }
}

loom_status_t loom_op_registry_unregister(loom_op_registry_t* registry,
                                          const char* name) {
  if (!registry || !name) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_registry_unregister: %s is NULL",
                            !registry ? "registry" : "name");
  }
  pthread_rwlock_wrlock(&registry->lock);
  op_entry_t* entry = find_locked(registry, name);
  bool found = entry != NULL;
  if (entry) {
    entry->registered = false;
    registry->count--;
    // An unregistered entry leaves its hash chain at once, so that look-ups
    // do not slow down as a process registers and removes ops; one handed
    // out stays on the list of all entries until the registry goes.
    unlink_hash_locked(registry, entry);
    if (atomic_load_explicit(&entry->handed_out, memory_order_relaxed)) {
      entry = NULL;  // kept: see op_entry_t
    } else {
      unlink_all_locked(registry, entry);
    }
  }
  pthread_rwlock_unlock(&registry->lock);
  if (!found) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "Op type not registered '%s'", name);
  }
  loom__registry_generation_advance();
  if (entry) entry_free(registry->allocator, entry);
  return loom_ok_status();
}

loom_status_t loom_op_registry_register(loom_op_registry_t* registry,
                                        loom_op_def_builder_t* builder) {
  loom__registration_journal_t* journal = loom__registration_journal_begin();
  loom_status_t status = register_op(registry, builder, journal);
  loom__registration_journal_record_failure(journal, status);
  loom__registration_journal_end();
  return status;
}
