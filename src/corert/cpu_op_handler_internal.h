// The cpu op handler's pieces, shared by its files:
//   cpu_op_handler.c  the handler, its native op registry, prepare, Execute;
//   cpu_kernel_spec.c TensorFlow kernels specialised per input dtypes;
//   cpu_kernel_call.c running a kernel on available host tensors;
//   cpu_dispatch.c    the dispatch record of an op that cannot run at once.

#ifndef LOOM_CORERT_CPU_OP_HANDLER_INTERNAL_H_
#define LOOM_CORERT_CPU_OP_HANDLER_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>

#include "base/hash_map.h"
#include "corert/corert_internal.h"
#include "loom/cpu_op_handler.h"
#include "registry/kernel_context.h"
#include "registry/op_registry_generation.h"

enum {
  // Arguments and results handled without heap arrays (an Adam update
  // takes ten).
  kCpuInlineArity = 12,
  // Specialisations cached per op (shared by all its prepared ops).
  kCpuMaxSpecs = 32,
};

typedef struct cpu_native_op_t {
  struct cpu_native_op_t* next;
  char* name;
  loom_cpu_dispatch_fn_t dispatch;
  loom_cpu_metadata_fn_t metadata;
  uint32_t flags;
} cpu_native_op_t;

typedef struct cpu_state_t {
  loom_allocator_t allocator;
  // The device it is ("/job:localhost/replica:0/task:0/device:CPU:0" unless
  // loom_cpu_op_handler_set_device_name said otherwise before it was used).
  char device_name[128];
  pthread_rwlock_t lock;
  loom__hash_map_t natives;  // loom__hash_bytes(name) -> cpu_native_op_t* chain
  // The ops prepared so far, kept until the handler is destroyed so that
  // their kernel specialisations outlive the prepared ops: a new eager op,
  // tape or backward pass reuses them instead of finding and constructing
  // kernels again. loom__hash_bytes(name) -> cpu_op_t* chain, newest first.
  pthread_mutex_t ops_mutex;
  loom__hash_map_t ops;
} cpu_state_t;

// A TensorFlow op's kernel for one combination of input dtypes and caller
// attributes: everything Execute would otherwise recompute per call.
// Immutable once published.
typedef struct cpu_kernel_spec_t {
  const loom_op_attrs_t* caller_attrs;  // frozen; NULL when there were none
  const loom_op_attrs_t* attrs;         // frozen, complete
  const loom_kernel_def_t* kernel;
  void* instance;
  // The kernel's direct entry (registry/kernel_context.h), or NULL.
  loom__kernel_direct_fn_t direct;
  uint64_t serial;  // unique for the process's life (the shape memo)
  struct cpu_kernel_spec_t* next_retired;  // cpu_op_t.retired
  int32_t num_inputs;
  int32_t num_outputs;
  loom_dtype_t* input_dtypes;   // num_inputs, after the struct
  loom_dtype_t* output_dtypes;  // num_outputs, after the inputs
} cpu_kernel_spec_t;

// An op's specialisations. Slots below `count` are written once, before the
// count that publishes them; a reader takes the table once and reads it
// without locks.
typedef struct cpu_spec_table_t {
  struct cpu_spec_table_t* next_retired;
  _Atomic int32_t count;
  cpu_kernel_spec_t* specs[kCpuMaxSpecs];
} cpu_spec_table_t;

// A prepared op's cpu data: one per op name (and native entry), shared by
// every prepared op of that name, owned by the handler.
typedef struct cpu_op_t {
  struct cpu_op_t* next;  // cpu_state_t.ops chain
  const char* name;       // after the struct
  bool is_private;        // a stateful op's own: freed with its prepared op
  cpu_state_t* cpu;
  loom_runtime_t* runtime;
  const cpu_native_op_t* native;  // or NULL for a TensorFlow op
  const loom_op_def_t* def;       // the registered definition, if any
  pthread_mutex_t specs_mutex;    // serialises changing specialisations
  // The registry generation the specs were found (or checked) at. Once it
  // moved, the next look-up checks each spec's kernel again and publishes
  // a new table of those still chosen, then the generation.
  _Atomic uint64_t generation;
  _Atomic(cpu_spec_table_t*) table;
  cpu_spec_table_t first_table;  // the table until the registries change
  // Tables replaced and specs whose kernel the registry no longer chooses.
  // Another thread may still be reading or running them: they are freed
  // with the op.
  cpu_spec_table_t* retired_tables;
  cpu_kernel_spec_t* retired;
} cpu_op_t;

// Prefixes an error with the op's name unless its message names the op
// already (shape functions and kernels often do): "AddV2: ...".
loom_status_t loom__cpu_annotate(loom_status_t status, const char* op_name);

//===----------------------------------------------------------------------===//
// Specialisations (cpu_kernel_spec.c)
//===----------------------------------------------------------------------===//

static inline bool loom__cpu_spec_matches(const cpu_kernel_spec_t* spec,
                                          const loom_tensor_metadata_t* inputs,
                                          int32_t num_inputs,
                                          const loom_op_attrs_t* caller_attrs) {
  if (spec->num_inputs != num_inputs) return false;
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (spec->input_dtypes[i] != inputs[i].dtype) return false;
  }
  // A spec of no caller attrs (NULL) matches a call without any at once.
  if (!spec->caller_attrs) return loom_op_attrs_count(caller_attrs) == 0;
  return loom_op_attrs_equal(spec->caller_attrs, caller_attrs);
}

// loom__cpu_spec_get on a miss or after the registries changed: checks the
// specs' kernels again if they did, looks again under the op's lock, else
// creates the spec (and constructs its kernel).
loom_status_t loom__cpu_spec_create(cpu_op_t* op,
                                    const loom_tensor_metadata_t* inputs,
                                    int32_t num_inputs,
                                    const loom_op_attrs_t* caller_attrs,
                                    cpu_kernel_spec_t** out_spec,
                                    bool* out_owned);

// The specialisation for these inputs' dtypes and caller attrs (may be NULL),
// created on first use. *out_owned is set when it is not cached (the cache
// is full, or the attrs hold tensors, which the handler would otherwise keep
// alive): the caller then destroys the spec after the call. The cached look-
// up is inline: every Execute makes it.
static inline loom_status_t loom__cpu_spec_get(
    cpu_op_t* op, const loom_tensor_metadata_t* inputs, int32_t num_inputs,
    const loom_op_attrs_t* caller_attrs, cpu_kernel_spec_t** out_spec,
    bool* out_owned) {
  *out_owned = false;
  cpu_kernel_spec_t* const* specs = op->first_table.specs;
  int32_t count = 0;
  if (LOOM_LIKELY(atomic_load_explicit(&op->generation, memory_order_acquire) ==
                  loom__registry_generation())) {
    const cpu_spec_table_t* table =
        atomic_load_explicit(&op->table, memory_order_relaxed);
    specs = table->specs;
    count = atomic_load_explicit(&table->count, memory_order_acquire);
  }
  for (int32_t i = 0; i < count; ++i) {
    if (loom__cpu_spec_matches(specs[i], inputs, num_inputs, caller_attrs)) {
      *out_spec = specs[i];
      return loom_ok_status();
    }
  }
  return loom__cpu_spec_create(op, inputs, num_inputs, caller_attrs, out_spec,
                               out_owned);
}
void loom__cpu_spec_destroy(loom_allocator_t allocator,
                            cpu_kernel_spec_t* spec);
// A serial for a new spec (never 0, never repeated).
uint64_t loom__cpu_spec_next_serial(void);

// Inputs above LOOM_MAX_RANK (their dims spilled, loom/shape.h) reach only
// kernels that read shapes through loom_shape_dims (spec->kernel->any_rank):
// INVALID_ARGUMENT naming the op, the input and its rank otherwise. `spec`
// is NULL for a native op (which never takes them).
//
// The one check of ranks. It must run before the op's metadata (shape)
// function, which reads the shapes too, and that runs at Execute when the
// inputs' metadata is known there (infer_metadata) and at dispatch when it
// is not (specialise for TensorFlow ops, run_native for native ones): so
// those are its callers, rather than the kernel call, which comes after.
loom_status_t loom__cpu_check_large_ranks(const cpu_kernel_spec_t* spec,
                                          const char* op_name,
                                          const loom_tensor_metadata_t* inputs,
                                          int32_t num_inputs);

// The results' metadata for these inputs: dtypes from the spec, shapes
// from the op's metadata function when it decides (the common case, here
// inline), else from its shape function with the spec's attrs (remembered
// per input shapes), which reads the inputs' metadata in place. Results
// whose shape is not fully defined leave *out_known false (their metadata
// comes with their values). *out_by_metadata_fn (when not NULL) says
// whether the metadata function decided: the results then follow from the
// inputs' metadata alone, never from their values.
loom_status_t loom__cpu_spec_infer_by_shape_fn(
    const cpu_op_t* op, const cpu_kernel_spec_t* spec,
    const loom_tensor_metadata_t* inputs, loom_tensor_t* const* input_tensors,
    int32_t num_results, loom_tensor_metadata_t* results, bool* out_known);
static inline loom_status_t loom__cpu_spec_infer(
    const cpu_op_t* op, const cpu_kernel_spec_t* spec,
    const loom_tensor_metadata_t* inputs, loom_tensor_t* const* input_tensors,
    int32_t num_results, loom_tensor_metadata_t* results, bool* out_known,
    bool* out_by_metadata_fn) {
  loom_metadata_fn_t metadata_fn = op->def->metadata_fn;
  if (LOOM_LIKELY(metadata_fn != NULL && num_results == spec->num_outputs) &&
      metadata_fn(inputs, spec->num_inputs, results, num_results)) {
    for (int32_t i = 0; i < num_results; ++i) {
      results[i].dtype = spec->output_dtypes[i];
    }
    *out_known = true;
    if (out_by_metadata_fn) *out_by_metadata_fn = true;
    return loom_ok_status();
  }
  return loom__cpu_spec_infer_by_shape_fn(op, spec, inputs, input_tensors,
                                          num_results, results, out_known);
}

// The native op `name` registered on `cpu` (cpu_native_ops.c), or NULL.
cpu_native_op_t* loom__cpu_find_native(cpu_state_t* cpu, const char* name);

// INVALID_ARGUMENT naming `function` unless `cpu` is a cpu handler.
loom_status_t loom__cpu_check_handler(loom_op_handler_t* cpu,
                                      const char* function);

// Fills `memo` (cpu_memo.c) after an inline run of `spec`'s direct entry
// on lent inputs of `inputs` metadata (`elements` in all) gave `result`.
void loom__cpu_memo_fill(loom__cpu_memo_t* memo,
                         const loom_prepared_op_t* prepared,
                         const cpu_kernel_spec_t* spec,
                         const loom_tensor_metadata_t* inputs,
                         int32_t num_inputs, int64_t elements,
                         const loom_tensor_metadata_t* result);

//===----------------------------------------------------------------------===//
// Kernel calls (cpu_kernel_call.c)
//===----------------------------------------------------------------------===//

// What one run of an op's kernel needs.
typedef struct cpu_call_t {
  cpu_op_t* op;
  const char* op_name;
  loom_location_t location;
  const loom_op_attrs_t* attrs;  // caller attrs (native ops)
  cpu_kernel_spec_t* spec;       // TensorFlow ops
  loom_tensor_t* const* inputs;  // available host tensors, borrowed
  int32_t num_inputs;
  uint64_t owned_inputs;                          // see loom_kernel_context_t
  const loom_tensor_metadata_t* result_metadata;  // NULL when unknown
  loom_async_value_t** results;                   // unavailable tensor values
  int32_t num_results;
  // true (dispatch records): the call holds a reference to each result; a
  // TensorFlow kernel's outputs are set with it dropped first (and the slot
  // set to NULL), so a consumer running in the value's continuation may
  // forward the tensor. false (inline): the results were made by this
  // Execute and no other thread can reach them yet.
  bool results_owned;
} cpu_call_t;

// Runs a native dispatch function or a synchronous TensorFlow kernel. On
// success the results are set (or, for asynchronous native ops, will be).
// A failure is returned annotated with the op name; the results are then
// untouched.
loom_status_t loom__cpu_call_run(const cpu_call_t* call);

// Whether the op can run through loom__cpu_call_run (asynchronous
// TensorFlow kernels cannot: they go through a dispatch record).
static inline bool loom__cpu_call_is_sync(const cpu_kernel_spec_t* spec) {
  return !spec || spec->kernel->compute != NULL;
}

// Runs an asynchronous TensorFlow kernel; `done` (with `arg`) runs once the
// results are set or failed — possibly before this returns.
void loom__cpu_call_run_async(const cpu_call_t* call,
                              void (*done)(void* arg, loom_status_t error),
                              void* arg);

// Converts SCALAR inputs to dense for ops that do not take them: each
// inputs[i] may be replaced (the old reference released).
loom_status_t loom__cpu_convert_inputs(const cpu_op_t* op,
                                       loom_allocator_t allocator,
                                       loom_tensor_t** inputs,
                                       int32_t num_inputs);

//===----------------------------------------------------------------------===//
// Dispatch records (cpu_dispatch.c)
//===----------------------------------------------------------------------===//

// Executes an invocation that cannot run inline now (inputs pending, a
// chain, an expensive or asynchronous op): creates the result handles (with
// `result_metadata` when known) and runs the op once its inputs are ready.
// `spec` (may be NULL: found at dispatch) is borrowed from the op's cache,
// or owned when `spec_owned`.
loom_status_t loom__cpu_dispatch_later(loom_op_handler_t* handler,
                                       loom_op_invocation_t* invocation,
                                       cpu_kernel_spec_t* spec, bool spec_owned,
                                       const loom_tensor_metadata_t* metadata,
                                       bool enqueue);

#endif  // LOOM_CORERT_CPU_OP_HANDLER_INTERNAL_H_
