// The kernel registry: kernel definitions by op name, chosen per invocation
// by device, type constraints, label and priority.

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/hash_map.h"
#include "base/rwlock.h"
#include "registry/kernel_registry_internal.h"
#include "registry/op_registry_generation.h"
#include "registry/op_registry_internal.h"

// The kernels of one op name; buckets whose names hash alike are chained.
typedef struct op_bucket_t {
  struct op_bucket_t* next_same_hash;
  struct op_bucket_t* next_all;
  const char* op_name;         // after the struct
  loom_kernel_def_t* kernels;  // newest first, via next_for_op
} op_bucket_t;

struct loom_kernel_registry_t {
  loom_allocator_t allocator;
  pthread_rwlock_t lock;
  loom_kernel_def_t* all;    // newest first
  loom__hash_map_t buckets;  // loom__hash_bytes(op name) -> op_bucket_t*
  op_bucket_t* all_buckets;
  uint64_t next_id;
};

loom_status_t loom_kernel_registry_create(loom_allocator_t allocator,
                                          loom_kernel_registry_t** out) {
  if (!out) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_kernel_registry_create: out_registry is NULL");
  }
  *out = NULL;
  loom_kernel_registry_t* registry = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*registry), (void**)&registry));
  registry->allocator = allocator;
  registry->next_id = 1;
  loom__hash_map_initialize(&registry->buckets, allocator);
  loom__rwlock_initialize(&registry->lock);
  *out = registry;
  return loom_ok_status();
}

static void free_def(loom_kernel_def_t* def) {
  loom_allocator_free(def->allocator, def->constraints);
  loom_allocator_free(def->allocator, def->host_memory_args);
  loom__arena_deinitialize(&def->arena);
}

void loom_kernel_registry_destroy(loom_kernel_registry_t* registry) {
  if (!registry) return;
  for (loom_kernel_def_t* def = registry->all; def;) {
    loom_kernel_def_t* next = def->next;
    free_def(def);
    loom_allocator_free(registry->allocator, def);
    def = next;
  }
  for (op_bucket_t* bucket = registry->all_buckets; bucket;) {
    op_bucket_t* next = bucket->next_all;
    loom_allocator_free(registry->allocator, bucket);
    bucket = next;
  }
  loom__hash_map_deinitialize(&registry->buckets);
  pthread_rwlock_destroy(&registry->lock);
  loom_allocator_free(registry->allocator, registry);
}

// TF_RegisterKernelBuilder names no registry: one is process-wide.
static loom_kernel_registry_t* g_global = NULL;
static pthread_once_t g_global_once = PTHREAD_ONCE_INIT;

static void create_global(void) {
  loom_status_ignore(
      loom_kernel_registry_create(loom_allocator_system(), &g_global));
}

loom_kernel_registry_t* loom_kernel_registry_global(void) {
  pthread_once(&g_global_once, create_global);
  return g_global;
}

//===----------------------------------------------------------------------===//
// Builder
//===----------------------------------------------------------------------===//

loom_status_t loom_kernel_builder_create(
    loom_allocator_t allocator, const char* op_name, const char* device_type,
    loom_kernel_create_fn_t create, loom_kernel_compute_fn_t compute,
    loom_kernel_compute_async_fn_t compute_async,
    loom_kernel_delete_fn_t destroy, loom_kernel_builder_t** out_builder) {
  if (!out_builder || !op_name || !device_type) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_kernel_builder_create: %s is NULL",
                            !out_builder ? "out_builder"
                            : !op_name   ? "op_name"
                                         : "device_type");
  }
  *out_builder = NULL;
  if ((compute == NULL) == (compute_async == NULL)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "kernel for op '%s': exactly one of compute and compute_async must "
        "be given",
        op_name);
  }
  loom_kernel_builder_t* builder = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*builder), (void**)&builder));
  builder->allocator = allocator;
  loom_kernel_def_t* def = &builder->def;
  def->allocator = allocator;
  loom__arena_initialize(&def->arena, allocator);
  def->create = create;
  def->compute = compute;
  def->compute_async = compute_async;
  def->destroy = destroy;
  loom_status_t status =
      loom__arena_strndup(&def->arena, op_name, strlen(op_name), &def->op_name);
  if (!status) {
    status = loom__arena_strndup(&def->arena, device_type, strlen(device_type),
                                 &def->device_type);
  }
  if (!status) status = loom__arena_strndup(&def->arena, "", 0, &def->label);
  if (status) {
    loom_kernel_builder_destroy(builder);
    return status;
  }
  *out_builder = builder;
  return loom_ok_status();
}

void loom_kernel_builder_destroy(loom_kernel_builder_t* builder) {
  if (!builder) return;
  free_def(&builder->def);
  loom_allocator_free(builder->allocator, builder);
}

static loom_status_t grow(loom_allocator_t allocator, void** array,
                          int32_t count, int32_t* capacity, size_t size) {
  if (count < *capacity) return loom_ok_status();
  int32_t new_capacity = *capacity ? *capacity * 2 : 4;
  void* grown = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, size * (size_t)new_capacity, &grown));
  if (count) memcpy(grown, *array, size * (size_t)count);
  loom_allocator_free(allocator, *array);
  *array = grown;
  *capacity = new_capacity;
  return loom_ok_status();
}

loom_status_t loom_kernel_builder_type_constraint(
    loom_kernel_builder_t* builder, const char* attr_name, loom_dtype_t dtype) {
  if (!builder || !attr_name) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_kernel_builder_type_constraint: %s is NULL",
                            !builder ? "builder" : "attr_name");
  }
  loom_kernel_def_t* def = &builder->def;
  if (!loom_dtype_is_valid(dtype)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "kernel for op '%s': type constraint on attr '%s' names invalid "
        "dtype %d",
        def->op_name, attr_name, (int)dtype);
  }
  loom__type_constraint_t* constraint = NULL;
  for (int32_t i = 0; i < def->num_constraints; ++i) {
    if (strcmp(def->constraints[i].attr_name, attr_name) == 0) {
      constraint = &def->constraints[i];
    }
  }
  if (!constraint) {
    LOOM_RETURN_IF_ERROR(grow(
        builder->allocator, (void**)&def->constraints, def->num_constraints,
        &builder->constraints_capacity, sizeof(loom__type_constraint_t)));
    constraint = &def->constraints[def->num_constraints];
    memset(constraint, 0, sizeof(*constraint));
    LOOM_RETURN_IF_ERROR(loom__arena_strndup(
        &def->arena, attr_name, strlen(attr_name), &constraint->attr_name));
    def->num_constraints++;
  }
  for (int32_t i = 0; i < constraint->num_types; ++i) {
    if (constraint->types[i] == dtype) return loom_ok_status();
  }
  if (constraint->num_types ==
      (int32_t)(sizeof(constraint->types) / sizeof(constraint->types[0]))) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "kernel for op '%s': too many types allowed for "
                            "attr '%s'",
                            def->op_name, attr_name);
  }
  constraint->types[constraint->num_types++] = dtype;
  return loom_ok_status();
}

loom_status_t loom_kernel_builder_host_memory(loom_kernel_builder_t* builder,
                                              const char* arg_name) {
  if (!builder || !arg_name) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_kernel_builder_host_memory: %s is NULL",
                            !builder ? "builder" : "arg_name");
  }
  loom_kernel_def_t* def = &builder->def;
  LOOM_RETURN_IF_ERROR(grow(builder->allocator, (void**)&def->host_memory_args,
                            def->num_host_memory_args,
                            &builder->host_memory_capacity, sizeof(char*)));
  // Count the entry only once it holds a name: a failed copy leaves the
  // builder as it was (TF_KernelBuilder_HostMemory ignores the error).
  LOOM_RETURN_IF_ERROR(
      loom__arena_strndup(&def->arena, arg_name, strlen(arg_name),
                          &def->host_memory_args[def->num_host_memory_args]));
  def->num_host_memory_args++;
  return loom_ok_status();
}

void loom__kernel_builder_set_any_rank(loom_kernel_builder_t* builder) {
  builder->def.any_rank = true;
}

void loom_kernel_builder_priority(loom_kernel_builder_t* builder,
                                  int32_t priority) {
  if (builder) builder->def.priority = priority;
}

loom_status_t loom_kernel_builder_label(loom_kernel_builder_t* builder,
                                        const char* label) {
  if (!builder || !label) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_kernel_builder_label: %s is NULL",
                            !builder ? "builder" : "label");
  }
  return loom__arena_strndup(&builder->def.arena, label, strlen(label),
                             &builder->def.label);
}

//===----------------------------------------------------------------------===//
// Registration and lookup
//===----------------------------------------------------------------------===//

// The bucket of `op_name`, or NULL; call with the lock held.
static op_bucket_t* find_bucket(const loom_kernel_registry_t* registry,
                                const char* op_name, uint64_t hash) {
  uint64_t head = 0;
  if (!loom__hash_map_find(&registry->buckets, hash, &head)) return NULL;
  for (op_bucket_t* bucket = (op_bucket_t*)(uintptr_t)head; bucket;
       bucket = bucket->next_same_hash) {
    if (strcmp(bucket->op_name, op_name) == 0) return bucket;
  }
  return NULL;
}

// Adds `def` to its op's bucket, creating the bucket; call with the lock
// held. On failure nothing changed.
static loom_status_t add_to_bucket(loom_kernel_registry_t* registry,
                                   loom_kernel_def_t* def) {
  uint64_t hash = loom__hash_bytes(def->op_name, strlen(def->op_name));
  op_bucket_t* bucket = find_bucket(registry, def->op_name, hash);
  if (!bucket) {
    // The bucket keeps its own name: its kernels may be freed (rollback).
    size_t length = strlen(def->op_name);
    LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
        registry->allocator, sizeof(*bucket) + length + 1, (void**)&bucket));
    char* name = (char*)(bucket + 1);
    memcpy(name, def->op_name, length + 1);
    bucket->op_name = name;
    uint64_t head = 0;
    loom__hash_map_find(&registry->buckets, hash, &head);
    bucket->next_same_hash = (op_bucket_t*)(uintptr_t)head;
    loom_status_t status = loom__hash_map_insert(&registry->buckets, hash,
                                                 (uint64_t)(uintptr_t)bucket);
    if (status) {
      loom_allocator_free(registry->allocator, bucket);
      return status;
    }
    bucket->next_all = registry->all_buckets;
    registry->all_buckets = bucket;
  }
  def->next_for_op = bucket->kernels;
  bucket->kernels = def;
  return loom_ok_status();
}

static loom_status_t register_kernel(loom_kernel_registry_t* registry,
                                     const char* kernel_name,
                                     loom_kernel_builder_t* builder,
                                     loom__registration_journal_t* journal) {
  if (!registry || !builder || !kernel_name) {
    loom_kernel_builder_destroy(builder);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_kernel_registry_register: %s is NULL",
                            !registry  ? "registry"
                            : !builder ? "builder"
                                       : "kernel_name");
  }
  loom_kernel_def_t* def = NULL;
  loom_status_t status =
      loom_allocator_malloc(registry->allocator, sizeof(*def), (void**)&def);
  if (!status) {
    *def = builder->def;
    status = loom__arena_strndup(&def->arena, kernel_name, strlen(kernel_name),
                                 &def->name);
    if (status) {
      builder->def.arena = def->arena;  // give the arena back
      loom_allocator_free(registry->allocator, def);
      def = NULL;
    }
  }
  if (!status && journal) {
    status = loom__registration_journal_reserve(journal);
    if (status) {
      builder->def.arena = def->arena;
      loom_allocator_free(registry->allocator, def);
      def = NULL;
    }
  }
  if (status) {
    loom_kernel_builder_destroy(builder);
    return status;
  }
  // The definition now owns the builder's arrays and arena.
  loom_allocator_free(builder->allocator, builder);

  pthread_rwlock_wrlock(&registry->lock);
  status = add_to_bucket(registry, def);
  if (status) {
    pthread_rwlock_unlock(&registry->lock);
    free_def(def);
    loom_allocator_free(registry->allocator, def);
    return status;
  }
  def->id = registry->next_id++;
  def->registered = true;
  atomic_init(&def->handed_out, false);
  def->next = registry->all;
  registry->all = def;
  pthread_rwlock_unlock(&registry->lock);
  loom__registry_generation_advance();
  if (journal)
    loom__registration_journal_add_kernel(journal, registry, def->id);
  return loom_ok_status();
}

loom_status_t loom_kernel_registry_register(loom_kernel_registry_t* registry,
                                            const char* kernel_name,
                                            loom_kernel_builder_t* builder) {
  loom__registration_journal_t* journal = loom__registration_journal_begin();
  loom_status_t status =
      register_kernel(registry, kernel_name, builder, journal);
  loom__registration_journal_record_failure(journal, status);
  loom__registration_journal_end();
  return status;
}

void loom__kernel_registry_unregister(loom_kernel_registry_t* registry,
                                      uint64_t id) {
  pthread_rwlock_wrlock(&registry->lock);
  loom_kernel_def_t* freed = NULL;
  for (loom_kernel_def_t** link = &registry->all; *link;
       link = &(*link)->next) {
    loom_kernel_def_t* def = *link;
    if (def->id != id) continue;
    def->registered = false;
    // It leaves its op's bucket at once, so that look-ups do not slow down
    // as a process registers and removes kernels; one handed out stays on
    // the list of all kernels until the registry goes.
    op_bucket_t* bucket =
        find_bucket(registry, def->op_name,
                    loom__hash_bytes(def->op_name, strlen(def->op_name)));
    for (loom_kernel_def_t** in_bucket = bucket ? &bucket->kernels : NULL;
         in_bucket && *in_bucket; in_bucket = &(*in_bucket)->next_for_op) {
      if (*in_bucket == def) {
        *in_bucket = def->next_for_op;
        break;
      }
    }
    def->next_for_op = NULL;
    if (!atomic_load_explicit(&def->handed_out, memory_order_relaxed)) {
      *link = def->next;
      freed = def;
    }
    break;
  }
  pthread_rwlock_unlock(&registry->lock);
  loom__registry_generation_advance();
  if (freed) {
    free_def(freed);
    loom_allocator_free(registry->allocator, freed);
  }
}

loom_status_t loom__kernel_registry_visit(
    loom_kernel_registry_t* registry, const char* op_name,
    loom_status_t (*visit)(const loom_kernel_def_t* def, void* user_data),
    void* user_data) {
  loom_status_t status = loom_ok_status();
  pthread_rwlock_rdlock(&registry->lock);
  for (loom_kernel_def_t* def = registry->all; def && !status;
       def = def->next) {
    if (def->registered && (!op_name || strcmp(def->op_name, op_name) == 0)) {
      status = visit(def, user_data);
    }
  }
  pthread_rwlock_unlock(&registry->lock);
  return status;
}

size_t loom_kernel_registry_count(loom_kernel_registry_t* registry,
                                  const char* op_name) {
  if (!registry || !op_name) return 0;
  size_t count = 0;
  pthread_rwlock_rdlock(&registry->lock);
  op_bucket_t* bucket = find_bucket(registry, op_name,
                                    loom__hash_bytes(op_name, strlen(op_name)));
  for (loom_kernel_def_t* def = bucket ? bucket->kernels : NULL; def;
       def = def->next_for_op) {
    if (def->registered) count++;
  }
  pthread_rwlock_unlock(&registry->lock);
  return count;
}

// Whether `def`'s constraints and label accept `attrs`.
static bool matches(const loom_kernel_def_t* def,
                    const loom_op_attrs_t* attrs) {
  for (int32_t c = 0; c < def->num_constraints; ++c) {
    const loom__type_constraint_t* constraint = &def->constraints[c];
    loom_attr_value_t value;
    if (!loom_op_attrs_get(attrs, constraint->attr_name, &value) ||
        value.kind != LOOM_ATTR_KIND_DTYPE) {
      return false;
    }
    for (int64_t i = 0; i < value.count; ++i) {
      loom_dtype_t dtype = value.is_list
                               ? ((const loom_dtype_t*)value.u.list)[i]
                               : value.u.dtype;
      bool allowed = false;
      for (int32_t t = 0; t < constraint->num_types && !allowed; ++t) {
        allowed = constraint->types[t] == dtype;
      }
      if (!allowed) return false;
    }
  }
  loom_attr_value_t label;
  if (loom_op_attrs_get(attrs, "_kernel", &label) &&
      label.kind == LOOM_ATTR_KIND_STRING && !label.is_list) {
    return strlen(def->label) == label.u.string.size &&
           memcmp(def->label, label.u.string.data, label.u.string.size) == 0;
  }
  return def->label[0] == '\0';
}

// Appends text to a bounded message.
static void append(char* buffer, size_t capacity, size_t* length,
                   const char* text) {
  size_t n = strlen(text);
  if (*length + n + 1 > capacity)
    n = capacity > *length + 1 ? capacity - *length - 1 : 0;
  memcpy(buffer + *length, text, n);
  *length += n;
  buffer[*length] = '\0';
}

static void describe_kernel(const loom_kernel_def_t* def, char* buffer,
                            size_t capacity, size_t* length) {
  char part[256];
  snprintf(part, sizeof(part), "\n  device='%s'", def->device_type);
  append(buffer, capacity, length, part);
  if (def->label[0]) {
    snprintf(part, sizeof(part), "; label='%s'", def->label);
    append(buffer, capacity, length, part);
  }
  for (int32_t c = 0; c < def->num_constraints; ++c) {
    snprintf(part, sizeof(part), "; %s in [", def->constraints[c].attr_name);
    append(buffer, capacity, length, part);
    for (int32_t t = 0; t < def->constraints[c].num_types; ++t) {
      snprintf(part, sizeof(part), "%s%s", t ? ", " : "",
               loom_dtype_name(def->constraints[c].types[t]));
      append(buffer, capacity, length, part);
    }
    append(buffer, capacity, length, "]");
  }
}

static void describe_attrs(const loom_op_def_t* op,
                           const loom_op_attrs_t* attrs, char* buffer,
                           size_t capacity) {
  size_t length = 0;
  buffer[0] = '\0';
  for (int32_t i = 0; i < op->num_attrs; ++i) {
    loom_attr_value_t value;
    if (!loom_op_attrs_get(attrs, op->attrs[i].name, &value)) continue;
    if (value.kind != LOOM_ATTR_KIND_DTYPE) continue;
    char text[128];
    char formatted[96];
    loom_attr_value_format(&value, formatted, sizeof(formatted));
    snprintf(text, sizeof(text), "%s%s=%s", length ? ", " : "",
             op->attrs[i].name, formatted);
    append(buffer, capacity, &length, text);
  }
}

loom_status_t loom_kernel_registry_lookup(loom_kernel_registry_t* registry,
                                          const loom_op_def_t* op,
                                          const char* device_type,
                                          const loom_op_attrs_t* attrs,
                                          const loom_kernel_def_t** out) {
  if (!registry || !op || !device_type || !attrs || !out) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_kernel_registry_lookup: NULL argument");
  }
  *out = NULL;
  const loom_kernel_def_t* best = NULL;
  const loom_kernel_def_t* tie = NULL;
  size_t registered_for_op = 0;
  uint64_t hash = loom__hash_bytes(op->name, strlen(op->name));
  pthread_rwlock_rdlock(&registry->lock);
  op_bucket_t* bucket = find_bucket(registry, op->name, hash);
  loom_kernel_def_t* first = bucket ? bucket->kernels : NULL;
  for (loom_kernel_def_t* def = first; def; def = def->next_for_op) {
    if (!def->registered) continue;
    registered_for_op++;
    if (strcmp(def->device_type, device_type) != 0 || !matches(def, attrs)) {
      continue;
    }
    if (!best || def->priority > best->priority) {
      best = def;
      tie = NULL;
    } else if (def->priority == best->priority) {
      tie = def;
    }
  }
  if (best && !tie) {
    loom_kernel_def_t* chosen = (loom_kernel_def_t*)best;
    if (!atomic_load_explicit(&chosen->handed_out, memory_order_relaxed)) {
      atomic_store_explicit(&chosen->handed_out, true, memory_order_relaxed);
    }
    pthread_rwlock_unlock(&registry->lock);
    *out = best;
    return loom_ok_status();
  }
  char kernels[2048];
  size_t length = 0;
  kernels[0] = '\0';
  for (loom_kernel_def_t* def = first; def; def = def->next_for_op) {
    if (def->registered)
      describe_kernel(def, kernels, sizeof(kernels), &length);
  }
  loom_status_t status;
  if (tie) {
    status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Multiple kernels for op '%s' on device '%s' match at priority %d: "
        "'%s' and '%s'",
        op->name, device_type, best->priority, best->name, tie->name);
  } else {
    char requested[512];
    describe_attrs(op, attrs, requested, sizeof(requested));
    status = loom_make_status(
        LOOM_STATUS_NOT_FOUND,
        "No registered '%s' kernel for '%s' devices compatible with "
        "attributes {%s}. Registered:%s",
        op->name, device_type, requested,
        registered_for_op ? kernels : " <no registered kernels>");
  }
  pthread_rwlock_unlock(&registry->lock);
  return status;
}

const char* loom_kernel_def_name(const loom_kernel_def_t* kernel) {
  return kernel->name;
}
const char* loom_kernel_def_op_name(const loom_kernel_def_t* kernel) {
  return kernel->op_name;
}
const char* loom_kernel_def_device_type(const loom_kernel_def_t* kernel) {
  return kernel->device_type;
}
int32_t loom_kernel_def_priority(const loom_kernel_def_t* kernel) {
  return kernel->priority;
}
const char* loom_kernel_def_label(const loom_kernel_def_t* kernel) {
  return kernel->label;
}
bool loom_kernel_def_is_async(const loom_kernel_def_t* kernel) {
  return kernel->compute_async != NULL;
}
bool loom_kernel_def_is_host_memory_arg(const loom_kernel_def_t* kernel,
                                        const char* arg_name) {
  if (!kernel || !arg_name) return false;
  for (int32_t i = 0; i < kernel->num_host_memory_args; ++i) {
    if (strcmp(kernel->host_memory_args[i], arg_name) == 0) return true;
  }
  return false;
}
