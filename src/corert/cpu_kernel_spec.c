// Specialisations of a TensorFlow op on the cpu handler: for one set of
// input dtypes and caller attributes, the completed attributes, the output
// dtypes and the constructed kernel, found once and then reused by every
// Execute of the prepared op without a string lookup or an allocation.
//
// Lookups are lock-free: specs are published by a release store of the
// count and never change afterwards. Adding one takes the op's mutex.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/small_vector.h"
#include "corert/cpu_op_handler_internal.h"
#include "loom/op_signature.h"
#include "loom/shape_inference.h"
#include "registry/shape_inference_internal.h"

void loom__cpu_spec_destroy(loom_allocator_t allocator,
                            cpu_kernel_spec_t* spec) {
  if (!spec) return;
  if (spec->kernel && spec->kernel->destroy) {
    spec->kernel->destroy(spec->instance);
  }
  loom_op_attrs_release(spec->attrs);
  loom_op_attrs_release(spec->caller_attrs);
  loom_allocator_free(allocator, spec);
}

LOOM_DEFINE_SMALL_VECTOR(dtype_vector, loom_dtype_t, kCpuInlineArity)

// The output dtypes of `attrs`, into `outputs`.
static loom_status_t output_dtypes(const loom_op_def_t* def,
                                   const loom_op_attrs_t* attrs,
                                   loom_allocator_t allocator,
                                   dtype_vector_t* outputs) {
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(
      loom_op_def_flat_types(def, attrs, true, dtype_vector_data(outputs),
                             (int32_t)outputs->capacity, &count));
  if ((size_t)count > outputs->capacity) {
    LOOM_RETURN_IF_ERROR(
        dtype_vector_reserve(outputs, allocator, (size_t)count));
    LOOM_RETURN_IF_ERROR(loom_op_def_flat_types(
        def, attrs, true, dtype_vector_data(outputs), count, &count));
  }
  outputs->size = (size_t)count;
  return loom_ok_status();
}

// An attr the op does not define is an error, as in TensorFlow (whose
// message this follows); names starting with '_' are the runtime's own
// (a kernel label) and always allowed.
static loom_status_t check_attr_names(const loom_op_def_t* def,
                                      const loom_op_attrs_t* caller_attrs) {
  size_t count = loom_op_attrs_count(caller_attrs);
  for (size_t i = 0; i < count; ++i) {
    const char* name = NULL;
    loom_attr_value_t value;
    if (!loom_op_attrs_entry_at(caller_attrs, i, &name, &value)) continue;
    if (name[0] == '_' || loom_op_def_find_attr(def, name)) continue;
    char defined[256];
    size_t length = 0;
    defined[0] = '\0';
    for (int32_t a = 0; a < def->num_attrs && length < sizeof(defined); ++a) {
      int written = snprintf(defined + length, sizeof(defined) - length, "%s%s",
                             a ? ", " : "", def->attrs[a].name);
      if (written < 0) break;
      length += (size_t)written;
    }
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "NodeDef mentions attr '%s' not in Op<name=%s>: the op's attrs are "
        "%s%s%s",
        name, def->name, def->num_attrs ? "{" : "(none)", defined,
        def->num_attrs ? "}" : "");
  }
  return loom_ok_status();
}

// Builds a spec: completes the attrs, finds and constructs the kernel.
static loom_status_t create_spec(cpu_op_t* op,
                                 const loom_tensor_metadata_t* inputs,
                                 int32_t num_inputs,
                                 const loom_op_attrs_t* caller_attrs,
                                 cpu_kernel_spec_t** out_spec) {
  loom_allocator_t allocator = op->cpu->allocator;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator);
  const loom_kernel_def_t* kernel = NULL;
  cpu_kernel_spec_t* spec = NULL;
  dtype_vector_t input_dtypes;
  dtype_vector_t output_dtype_vector;
  dtype_vector_initialize(&input_dtypes);
  dtype_vector_initialize(&output_dtype_vector);
  loom_status_t status =
      dtype_vector_reserve(&input_dtypes, allocator, (size_t)num_inputs);
  loom_dtype_t* dtypes = dtype_vector_data(&input_dtypes);
  for (int32_t i = 0; !status && i < num_inputs; ++i) {
    dtypes[i] = inputs[i].dtype;
  }
  if (!status) status = check_attr_names(op->def, caller_attrs);
  if (!status) status = loom_op_attrs_merge(&attrs, caller_attrs);
  if (!status) {
    status = loom_op_def_complete_attrs(op->def, dtypes, num_inputs, &attrs);
  }
  if (!status) {
    status = output_dtypes(op->def, &attrs, allocator, &output_dtype_vector);
  }
  const loom_dtype_t* outputs = dtype_vector_data(&output_dtype_vector);
  int32_t num_outputs = (int32_t)output_dtype_vector.size;
  if (!status) {
    status = loom_kernel_registry_lookup(op->runtime->kernels, op->def,
                                         LOOM_DEVICE_CPU, &attrs, &kernel);
  }
  if (!status) {
    status = loom_allocator_calloc(
        allocator,
        sizeof(*spec) +
            sizeof(loom_dtype_t) * (size_t)(num_inputs + num_outputs),
        (void**)&spec);
  }
  if (!status) {
    spec->serial = loom__cpu_spec_next_serial();
    spec->num_inputs = num_inputs;
    spec->num_outputs = num_outputs;
    spec->input_dtypes = (loom_dtype_t*)(spec + 1);
    spec->output_dtypes = spec->input_dtypes + num_inputs;
    memcpy(spec->input_dtypes, dtypes,
           sizeof(loom_dtype_t) * (size_t)num_inputs);
    memcpy(spec->output_dtypes, outputs,
           sizeof(loom_dtype_t) * (size_t)num_outputs);
    status = loom_op_attrs_freeze(&attrs, &spec->attrs);
  }
  if (!status && loom_op_attrs_count(caller_attrs) > 0) {
    status = loom_op_attrs_freeze(caller_attrs, &spec->caller_attrs);
  }
  if (!status) {
    loom_kernel_construction_t construction;
    memset(&construction, 0, sizeof(construction));
    construction.op = op->def;
    construction.attrs = spec->attrs;
    construction.kernel = kernel;
    construction.node_name = op->def->name;
    spec->instance = kernel->create ? kernel->create(&construction) : NULL;
    spec->kernel = kernel;  // from here on destroy deletes the instance
    spec->direct = loom__kernel_direct_entry(kernel->compute);
    if (construction.status) {
      // As loom_kernel_run names it. The op's name must be in it: the
      // kernel's name contains the op's, which stops Execute adding it.
      status = loom_status_annotate(construction.status,
                                    "Op '%s' (kernel '%s') construction",
                                    op->def->name, kernel->name);
    }
  }
  dtype_vector_deinitialize(&output_dtype_vector, allocator);
  dtype_vector_deinitialize(&input_dtypes, allocator);
  loom_op_attrs_deinitialize(&attrs);
  if (status) {
    loom__cpu_spec_destroy(allocator, spec);
    return status;  // Execute names the op
  }
  *out_spec = spec;
  return loom_ok_status();
}

// Whether `attrs` hold a tensor (a Const's value): a spec of them is not
// cached, or the op would keep the tensor until the handler goes.
static bool holds_tensors(const loom_op_attrs_t* attrs) {
  size_t count = loom_op_attrs_count(attrs);
  for (size_t i = 0; i < count; ++i) {
    const char* name = NULL;
    loom_attr_value_t value;
    loom_op_attrs_entry_at(attrs, i, &name, &value);
    if (value.kind == LOOM_ATTR_KIND_TENSOR) return true;
  }
  return false;
}

// Whether the registry still chooses `spec`'s kernel for its attributes.
static bool spec_is_current(const cpu_op_t* op, const cpu_kernel_spec_t* spec) {
  const loom_kernel_def_t* kernel = NULL;
  loom_status_t status = loom_kernel_registry_lookup(
      op->runtime->kernels, op->def, LOOM_DEVICE_CPU, spec->attrs, &kernel);
  loom_status_free(status);
  return !status && kernel == spec->kernel;
}

// After a registry change: publishes a table of the specs whose kernel is
// still the one chosen and retires the others (a kernel rolled back,
// overridden by a higher priority, ...). Call with the op's mutex held.
// Readers that took the old table keep reading it (it stays allocated).
static loom_status_t refresh_specs(cpu_op_t* op, uint64_t generation) {
  cpu_spec_table_t* old =
      atomic_load_explicit(&op->table, memory_order_relaxed);
  cpu_spec_table_t* table = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(op->cpu->allocator, sizeof(*table),
                                             (void**)&table));
  int32_t count = atomic_load_explicit(&old->count, memory_order_relaxed);
  int32_t kept = 0;
  for (int32_t i = 0; i < count; ++i) {
    cpu_kernel_spec_t* spec = old->specs[i];
    if (spec_is_current(op, spec)) {
      table->specs[kept++] = spec;
    } else {
      spec->next_retired = op->retired;
      op->retired = spec;
    }
  }
  atomic_init(&table->count, kept);
  old->next_retired = op->retired_tables;
  op->retired_tables = old;
  atomic_store_explicit(&op->table, table, memory_order_release);
  atomic_store_explicit(&op->generation, generation, memory_order_release);
  return loom_ok_status();
}

loom_status_t loom__cpu_spec_create(cpu_op_t* op,
                                    const loom_tensor_metadata_t* inputs,
                                    int32_t num_inputs,
                                    const loom_op_attrs_t* caller_attrs,
                                    cpu_kernel_spec_t** out_spec,
                                    bool* out_owned) {
  *out_owned = false;
  pthread_mutex_lock(&op->specs_mutex);
  // Read before the look-ups below, so that a change made during them
  // moves the generation past the one recorded.
  uint64_t generation = loom__registry_generation();
  cpu_spec_table_t* table =
      atomic_load_explicit(&op->table, memory_order_relaxed);
  if (atomic_load_explicit(&op->generation, memory_order_relaxed) !=
      generation) {
    loom_status_t refreshed = refresh_specs(op, generation);
    if (refreshed) {
      pthread_mutex_unlock(&op->specs_mutex);
      return refreshed;
    }
    table = atomic_load_explicit(&op->table, memory_order_relaxed);
  }
  // Another thread may have added it since the caller looked.
  int32_t now = atomic_load_explicit(&table->count, memory_order_relaxed);
  for (int32_t i = 0; i < now; ++i) {
    if (loom__cpu_spec_matches(table->specs[i], inputs, num_inputs,
                               caller_attrs)) {
      *out_spec = table->specs[i];
      pthread_mutex_unlock(&op->specs_mutex);
      return loom_ok_status();
    }
  }
  cpu_kernel_spec_t* spec = NULL;
  loom_status_t status =
      create_spec(op, inputs, num_inputs, caller_attrs, &spec);
  if (!status) {
    if (now < kCpuMaxSpecs && !holds_tensors(caller_attrs)) {
      table->specs[now] = spec;
      atomic_store_explicit(&table->count, now + 1, memory_order_release);
    } else {
      *out_owned = true;  // the cache is full: this call's own kernel
    }
    *out_spec = spec;
  }
  pthread_mutex_unlock(&op->specs_mutex);
  return status;
}

//===----------------------------------------------------------------------===//
// Shape memo: output shapes by spec and input shapes, per thread
//===----------------------------------------------------------------------===//

// A spec's shape function gives the same output shapes for the same input
// shapes unless it reads input values (Reshape's shape): an op run again on
// shapes seen before skips the function. The memo is per thread (no
// locks), direct-mapped by a hash of the spec's serial (a spec's address
// may be reused after it is freed; its serial never is) and the input
// shapes, so that one spec used on several shapes in turn (MatMul in each
// layer) finds each of them.
enum {
  kMemoSlots = 128,
  kMemoArgs = 16,  // inputs + outputs
  kMemoDims = 24,  // their dimensions, in all
};
typedef struct shape_memo_t {
  uint64_t serial;  // 0: empty
  uint64_t hash;
  int32_t num_input_dims;
  bool known;               // every output shape fully defined
  int8_t ranks[kMemoArgs];  // the inputs', then the outputs'
  int64_t dims[kMemoDims];
} shape_memo_t;
// A per-thread cache (the thread runs ops of any runtime): its keys, the
// serials, are unique in the process so that one runtime's spec never
// matches another's. Its ~30 KB live on the heap, allocated at a thread's
// first op and freed when the thread exits: the library's thread-locals
// stay a few hundred bytes, which lets them use the initial-exec model
// (see LoomCompilerOptions.cmake) and still fit the static TLS space that
// dlopen has left.
static _Thread_local shape_memo_t* t_memo;
static pthread_key_t g_memo_key;
static bool g_have_memo_key;
static pthread_once_t g_memo_key_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t g_next_serial = 1;

uint64_t loom__cpu_spec_next_serial(void) {
  return atomic_fetch_add_explicit(&g_next_serial, 1, memory_order_relaxed);
}

// A spec's input shapes, packed: what an entry is found by.
typedef struct memo_key_t {
  uint64_t hash;  // 0: the shapes do not fit in an entry
  int32_t num_dims;
  int8_t ranks[kMemoArgs];
  int64_t dims[kMemoDims];
} memo_key_t;

static void memo_key(const cpu_kernel_spec_t* spec,
                     const loom_tensor_metadata_t* inputs, memo_key_t* key) {
  key->hash = 0;
  if (spec->num_inputs + spec->num_outputs > kMemoArgs) return;
  // A cheap mix: one multiply per input, the dims folded in by adds and
  // rotations (the entry is compared in full anyway).
  uint64_t hash = spec->serial * 0x9e3779b97f4a7c15ull;
  int32_t n = 0;
  for (int32_t i = 0; i < spec->num_inputs; ++i) {
    const loom_shape_t* shape = &inputs[i].shape;
    int32_t rank = shape->rank;
    // Unknown ranks, and spilled shapes (whose dims are not inline), are
    // not remembered.
    if (rank < 0 || rank > LOOM_MAX_RANK || n + rank > kMemoDims) return;
    key->ranks[i] = (int8_t)rank;
    uint64_t folded = (uint64_t)rank;
    for (int32_t d = 0; d < rank; ++d) {
      key->dims[n++] = shape->dims[d];
      folded = ((folded << 7) | (folded >> 57)) + (uint64_t)shape->dims[d];
    }
    hash = (hash ^ folded) * 0xff51afd7ed558ccdull;
  }
  key->num_dims = n;
  key->hash = hash | 1;
}

static void create_memo_key(void) {
  // Without the key (out of keys), memos are not made: ops still run.
  g_have_memo_key = pthread_key_create(&g_memo_key, free) == 0;
}

// The calling thread's memo, made on first use; NULL if it cannot be (the
// op then runs its shape function).
static shape_memo_t* thread_memo(void) {
  shape_memo_t* memo = t_memo;
  if (memo) return memo;
  pthread_once(&g_memo_key_once, create_memo_key);
  if (!g_have_memo_key) return NULL;
  memo = calloc(kMemoSlots, sizeof(shape_memo_t));
  if (!memo) return NULL;
  if (pthread_setspecific(g_memo_key, memo) != 0) {
    free(memo);
    return NULL;
  }
  t_memo = memo;
  return memo;
}

static shape_memo_t* memo_slot(uint64_t hash) {
  shape_memo_t* memo = thread_memo();
  return memo ? &memo[(hash >> 32) % kMemoSlots] : NULL;
}

static bool memo_find(const cpu_kernel_spec_t* spec, const memo_key_t* key,
                      loom_tensor_metadata_t* results, bool* out_known) {
  const shape_memo_t* memo = memo_slot(key->hash);
  if (!memo || memo->serial != spec->serial || memo->hash != key->hash ||
      memo->num_input_dims != key->num_dims) {
    return false;
  }
  for (int32_t i = 0; i < spec->num_inputs; ++i) {
    if (memo->ranks[i] != key->ranks[i]) return false;
  }
  for (int32_t d = 0; d < key->num_dims; ++d) {
    if (memo->dims[d] != key->dims[d]) return false;
  }
  const int64_t* dims = memo->dims + key->num_dims;
  for (int32_t o = 0; o < spec->num_outputs; ++o) {
    loom_shape_t* shape = &results[o].shape;
    shape->rank = memo->ranks[spec->num_inputs + o];
    for (int32_t d = 0; d < shape->rank; ++d) shape->dims[d] = *dims++;
    results[o].dtype = spec->output_dtypes[o];
  }
  *out_known = memo->known;
  return true;
}

static void memo_store(const cpu_kernel_spec_t* spec, const memo_key_t* key,
                       const loom_tensor_metadata_t* results, bool known) {
  int32_t n = key->num_dims;
  for (int32_t o = 0; o < spec->num_outputs; ++o) {
    // Unknown output shapes are not remembered.
    if (results[o].shape.rank < 0) return;
    if (results[o].shape.rank > LOOM_MAX_RANK) return;  // spilled
    n += results[o].shape.rank;
  }
  if (n > kMemoDims) return;
  shape_memo_t* memo = memo_slot(key->hash);
  if (!memo) return;
  memo->serial = spec->serial;
  memo->hash = key->hash;
  memo->num_input_dims = key->num_dims;
  memo->known = known;
  memcpy(memo->ranks, key->ranks, (size_t)spec->num_inputs);
  memcpy(memo->dims, key->dims, sizeof(int64_t) * (size_t)key->num_dims);
  int64_t* out = memo->dims + key->num_dims;
  for (int32_t o = 0; o < spec->num_outputs; ++o) {
    const loom_shape_t* shape = &results[o].shape;
    memo->ranks[spec->num_inputs + o] = (int8_t)shape->rank;
    for (int32_t d = 0; d < shape->rank; ++d) *out++ = shape->dims[d];
  }
}

loom_status_t loom__cpu_spec_infer_by_shape_fn(
    const cpu_op_t* op, const cpu_kernel_spec_t* spec,
    const loom_tensor_metadata_t* inputs, loom_tensor_t* const* input_tensors,
    int32_t num_results, loom_tensor_metadata_t* results, bool* out_known) {
  *out_known = false;
  if (num_results != spec->num_outputs) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s produces %d results, the caller expects %d",
                            op->def->name, spec->num_outputs, num_results);
  }
  memo_key_t key;
  memo_key(spec, inputs, &key);
  if (key.hash && memo_find(spec, &key, results, out_known)) {
    return loom_ok_status();
  }
  bool read_tensors = false;
  LOOM_RETURN_IF_ERROR(loom__op_def_infer_metadata(
      op->def, spec->attrs, inputs, input_tensors, spec->num_inputs, results,
      num_results, &read_tensors));
  bool known = true;
  for (int32_t i = 0; i < num_results; ++i) {
    results[i].dtype = spec->output_dtypes[i];
    known = known && loom_shape_is_fully_defined(&results[i].shape);
  }
  if (key.hash && !read_tensors) memo_store(spec, &key, results, known);
  *out_known = known;
  return loom_ok_status();
}

static loom_status_t large_rank_error(const char* op_name, int32_t index,
                                      int32_t rank) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Op '%s': input %d has rank %d; the kernel of '%s' "
                          "takes ranks up to %d",
                          op_name, (int)index, (int)rank, op_name,
                          LOOM_MAX_RANK);
}

loom_status_t loom__cpu_check_large_ranks(const cpu_kernel_spec_t* spec,
                                          const char* op_name,
                                          const loom_tensor_metadata_t* inputs,
                                          int32_t num_inputs) {
  if (spec && spec->kernel->any_rank) return loom_ok_status();
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (inputs[i].shape.rank > LOOM_MAX_RANK) {
      return large_rank_error(op_name, i, inputs[i].shape.rank);
    }
  }
  return loom_ok_status();
}
