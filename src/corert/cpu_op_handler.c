// The cpu op handler (TFRT's CpuOpHandler): runs ops on the host.
//
// Execute runs the op's metadata function (a native one, or the registered
// TensorFlow shape function) on the calling thread, so invalid shapes,
// dtypes and attributes are reported at once. An op whose arguments are all
// available, that is cheap and has no chain then runs inline: its kernel
// computes before Execute returns, with no record, attribute copy or string
// lookup — the prepared op caches the kernel per input dtypes. Everything
// else goes through a dispatch record (cpu_dispatch.c). An eager op run
// inline through a kernel's direct entry leaves a memo for its next run
// (cpu_memo.c); native ops registered on the handler are in
// cpu_native_ops.c.

#include "loom/cpu_op_handler.h"

#include <string.h>

#include "base/rwlock.h"
#include "base/small_vector.h"
#include "corert/cpu_op_handler_internal.h"
#include "host/async_value_internal.h"
#include "loom/host_context.h"

typedef cpu_native_op_t native_op_t;

static cpu_state_t* cpu_state_of(loom_op_handler_t* handler) {
  return handler->state;
}

static bool is_cpu_handler(const loom_op_handler_t* handler);

//===----------------------------------------------------------------------===//
// Prepare
//===----------------------------------------------------------------------===//

static void op_initialize(cpu_op_t* op, loom_op_handler_t* handler,
                          const native_op_t* native, const loom_op_def_t* def) {
  op->cpu = cpu_state_of(handler);
  op->runtime = handler->runtime;
  op->native = native;
  op->def = def;
  pthread_mutex_init(&op->specs_mutex, NULL);
  atomic_init(&op->generation, loom__registry_generation());
  op->first_table.next_retired = NULL;
  atomic_init(&op->first_table.count, 0);
  atomic_init(&op->table, &op->first_table);
  op->retired_tables = NULL;
  op->retired = NULL;
}

static void op_destroy(cpu_op_t* op) {
  cpu_spec_table_t* table = atomic_load(&op->table);
  int32_t count = atomic_load(&table->count);
  for (int32_t i = 0; i < count; ++i) {
    loom__cpu_spec_destroy(op->cpu->allocator, table->specs[i]);
  }
  for (cpu_spec_table_t* old = op->retired_tables; old;) {
    cpu_spec_table_t* next = old->next_retired;
    if (old != &op->first_table) loom_allocator_free(op->cpu->allocator, old);
    old = next;
  }
  if (table != &op->first_table) loom_allocator_free(op->cpu->allocator, table);
  for (cpu_kernel_spec_t* spec = op->retired; spec;) {
    cpu_kernel_spec_t* next = spec->next_retired;
    loom__cpu_spec_destroy(op->cpu->allocator, spec);
    spec = next;
  }
  pthread_mutex_destroy(&op->specs_mutex);
  loom_allocator_free(op->cpu->allocator, op);
}

// Whether the op's kernels hold its state: a stateful op without a
// resource input (a random generator; a variable op's state is in the
// resource). Such an op keeps its kernels to itself: each prepared op has
// its own state, as each TensorFlow node has.
static bool kernel_holds_state(const loom_op_def_t* def) {
  if (!def || !def->is_stateful) return false;
  for (int32_t i = 0; i < def->num_inputs; ++i) {
    if (def->inputs[i].dtype == LOOM_DTYPE_RESOURCE) return false;
  }
  return true;
}

// The shared entry of `op_name` with this native entry and definition (a
// native op registered since makes a new entry; the old one stays with
// the prepared ops that use it), or NULL.
static cpu_op_t* find_op_locked(cpu_state_t* cpu, uint64_t hash,
                                const char* op_name, const native_op_t* native,
                                const loom_op_def_t* def) {
  uint64_t head = 0;
  loom__hash_map_find(&cpu->ops, hash, &head);
  for (cpu_op_t* op = (cpu_op_t*)(uintptr_t)head; op; op = op->next) {
    if (op->native == native && op->def == def &&
        strcmp(op->name, op_name) == 0) {
      return op;
    }
  }
  return NULL;
}

static loom_status_t cpu_prepare(loom_op_handler_t* handler,
                                 const char* op_name, const loom_op_def_t* def,
                                 void** out_op_data) {
  cpu_state_t* cpu = cpu_state_of(handler);
  native_op_t* native = loom__cpu_find_native(cpu, op_name);
  if (native && !native->dispatch) native = NULL;  // metadata only
  size_t length = strlen(op_name);
  uint64_t hash = loom__hash_bytes(op_name, length);
  uint64_t head = 0;
  if (!kernel_holds_state(def)) {
    pthread_mutex_lock(&cpu->ops_mutex);
    cpu_op_t* found = find_op_locked(cpu, hash, op_name, native, def);
    pthread_mutex_unlock(&cpu->ops_mutex);
    if (found) {
      *out_op_data = found;
      return loom_ok_status();
    }
  }
  // A registered op is accepted even without a kernel now: its kernel is
  // looked up per input dtypes when it executes, which then either finds
  // one registered since or says which kernels there are.
  if (!native && !def) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND, "op '%s' is not registered",
                            op_name);
  }
  cpu_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      cpu->allocator, sizeof(*op) + length + 1, (void**)&op));
  char* name = (char*)(op + 1);
  memcpy(name, op_name, length + 1);
  op->name = name;
  op_initialize(op, handler, native, def);
  if (kernel_holds_state(def)) {
    op->is_private = true;
    *out_op_data = op;
    return loom_ok_status();
  }
  pthread_mutex_lock(&cpu->ops_mutex);
  // Another thread may have added it meanwhile: then its entry is used.
  cpu_op_t* raced = find_op_locked(cpu, hash, op_name, native, def);
  loom_status_t status = loom_ok_status();
  if (!raced) {
    loom__hash_map_find(&cpu->ops, hash, &head);
    op->next = (cpu_op_t*)(uintptr_t)head;
    status = loom__hash_map_insert(&cpu->ops, hash, (uint64_t)(uintptr_t)op);
  }
  pthread_mutex_unlock(&cpu->ops_mutex);
  if (raced || status) op_destroy(op);
  if (status) return status;
  *out_op_data = raced ? raced : op;
  return loom_ok_status();
}

// The handler owns its shared ops (cpu_destroy frees them); a private one
// goes with its prepared op.
static void cpu_release_op_data(loom_op_handler_t* handler, void* data) {
  (void)handler;
  cpu_op_t* op = data;
  if (op && op->is_private) op_destroy(op);
}

//===----------------------------------------------------------------------===//
// Execute
//===----------------------------------------------------------------------===//

// Execute is one pipeline:
//   gather the arguments → the metadata function → the result handles →
//   run the kernel now, or leave the op to a dispatch record.
// An op runs now when its arguments are available, it has no chain, it is
// cheap (few elements, not marked expensive) and its kernel is
// synchronous: the common case of op-by-op execution, which then takes no
// heap allocation, no lock and no string lookup here.

// An invocation's arrays (argument metadata and tensors, result metadata
// and values) share one block: inline up to kCpuInlineArity arguments and
// results, else on the heap.
typedef union execution_word_t {
  loom_tensor_metadata_t metadata;
  loom_tensor_t* tensor;
  loom_async_value_t* value;
} execution_word_t;
// The words n arguments and m results take: a metadata each, then their
// pointers packed.
#define EXECUTION_WORDS(n, m) \
  ((n) + (m) + ((n) + (m)) * sizeof(void*) / sizeof(execution_word_t) + 1)
LOOM_DEFINE_SMALL_VECTOR(execution_block, execution_word_t,
                         EXECUTION_WORDS(kCpuInlineArity, kCpuInlineArity))

// One invocation as Execute sees it.
typedef struct execution_t {
  loom_op_handler_t* handler;
  loom_op_invocation_t* invocation;
  cpu_op_t* op;
  bool has_chain;
  bool ready;           // every argument available
  bool known;           // every argument's metadata known
  bool scalars;         // an argument is a SCALAR host tensor
  bool metadata_known;  // the results' metadata is in `results`
  bool metadata_by_fn;  // ... decided by the op's metadata function
  bool spec_owned;
  // The arguments are lent (loom__cpu_execute_lent): the caller keeps its
  // references, the invocation's slots are read, never released or
  // cleared. Only an inline run keeps them so; every other path takes
  // references of its own first (own_arguments).
  bool lent;
  bool large_ranks;         // an argument's rank is above LOOM_MAX_RANK
  bool ran_direct;          // run_direct ran the kernel, which succeeded
  int64_t elements;         // in the arguments whose shapes are known
  cpu_kernel_spec_t* spec;  // TensorFlow ops, once their dtypes are known
  // n argument metadata and tensors (NULL while unavailable), m result
  // metadata and result values.
  loom_tensor_metadata_t* inputs;
  loom_tensor_t** tensors;
  loom_tensor_metadata_t* results;
  loom_async_value_t** values;
} execution_t;

static inline loom_status_t execution_initialize(
    execution_t* e, execution_block_t* block, loom_op_handler_t* handler,
    loom_op_invocation_t* invocation, bool lent) {
  *e = (execution_t){
      .handler = handler,
      .invocation = invocation,
      .op = invocation->op->data,
      .has_chain = invocation->chain && *invocation->chain,
      .ready = true,
      .known = true,
      .lent = lent,
  };
  execution_block_initialize(block);
  size_t n = (size_t)invocation->num_arguments;
  size_t m = (size_t)invocation->num_results;
  loom_status_t status = loom_ok_status();
  if (LOOM_UNLIKELY(n > kCpuInlineArity || m > kCpuInlineArity)) {
    status = execution_block_reserve(block, handler->runtime->allocator,
                                     EXECUTION_WORDS(n, m));
  }
  execution_word_t* words = execution_block_data(block);
  e->inputs = &words[0].metadata;
  e->results = &words[n].metadata;
  e->tensors = &words[n + m].tensor;
  e->values = &words[n + m].value + n;
  return status;
}

static inline void execution_deinitialize(execution_t* e,
                                          execution_block_t* block) {
  if (e->spec_owned) loom__cpu_spec_destroy(e->op->cpu->allocator, e->spec);
  if (LOOM_UNLIKELY(!execution_block_is_inline(block))) {
    execution_block_deinitialize(block, e->handler->runtime->allocator);
  }
}

// Lent arguments become the invocation's own (one more reference each),
// as every path but an inline run expects them.
static void own_arguments(execution_t* e) {
  if (LOOM_LIKELY(!e->lent)) return;
  e->lent = false;
  loom_op_invocation_t* invocation = e->invocation;
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_retain(invocation->arguments[i]);
  }
}

// loom_op_invocation_fail, which releases the arguments.
static loom_status_t fail(execution_t* e, loom_status_t error, bool report) {
  own_arguments(e);
  return loom_op_invocation_fail(e->invocation, error, report);
}

// An argument (or the chain) is an error: the op does not run and its
// results carry the same error, reported where it arose, not here.
static loom_status_t propagate_error(execution_t* e, loom_status_t error) {
  loom_status_free(fail(e, loom_status_clone(error), false));
  return loom_ok_status();
}

// What the op itself requires before its arguments are looked at: a chain
// for a side-effecting op, a chain that is not an error. Returns false,
// having failed the invocation (*out_status), otherwise.
static inline bool check_chain(execution_t* e, loom_status_t* out_status) {
  loom_op_invocation_t* invocation = e->invocation;
  const cpu_native_op_t* native = e->op->native;
  if (LOOM_UNLIKELY(native && (native->flags & LOOM_CPU_OP_SIDE_EFFECTING) &&
                    !e->has_chain)) {
    *out_status =
        fail(e,
             loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "op '%s' has side effects and needs a chain",
                              invocation->op->name),
             true);
    return false;
  }
  if (LOOM_UNLIKELY(e->has_chain &&
                    loom_async_value_is_error(*invocation->chain))) {
    *out_status =
        propagate_error(e, loom_async_value_error(*invocation->chain));
    return false;
  }
  return true;
}

// What is known of the arguments now: their tensors when available, else
// their metadata when known. Returns false, having failed the invocation
// (*out_status), when an argument lives on another handler or is an error.
static inline bool gather_arguments(execution_t* e, loom_status_t* out_status) {
  loom_op_invocation_t* invocation = e->invocation;
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_t* handle = invocation->arguments[i];
    loom_async_value_t* value = handle->value;
    if (LOOM_UNLIKELY(!value)) {
      *out_status =
          fail(e,
               loom_make_status(
                   LOOM_STATUS_INVALID_ARGUMENT,
                   "%s: argument %d lives on op handler '%s'; copy it "
                   "onto the cpu handler first",
                   invocation->op->name, i, handle->handler->vtable->type_name),
               true);
      return false;
    }
    loom_async_value_state_t state = loom_async_value_state(value);
    if (LOOM_LIKELY(state == LOOM_ASYNC_VALUE_AVAILABLE)) {
      loom_tensor_t* tensor = loom__tensor_of_value(value);
      e->tensors[i] = tensor;
      e->inputs[i] = *loom_tensor_metadata(tensor);
      e->large_ranks |= e->inputs[i].shape.rank > LOOM_MAX_RANK;
      e->elements += loom_tensor_num_elements(tensor);
      e->scalars |= loom_tensor_kind(tensor) == LOOM_TENSOR_SCALAR;
      continue;
    }
    if (state == LOOM_ASYNC_VALUE_ERROR) {
      *out_status = propagate_error(e, loom_async_value_error(value));
      return false;
    }
    e->tensors[i] = NULL;
    e->ready = false;
    if (handle->metadata_available) {
      e->inputs[i] = handle->metadata;
      e->large_ranks |= e->inputs[i].shape.rank > LOOM_MAX_RANK;
      e->elements += loom_shape_num_elements(&e->inputs[i].shape);
    } else {
      e->known = false;
    }
  }
  return true;
}

// The metadata function, synchronously, once the arguments' metadata is
// known: a native op's own, or the TensorFlow op's shape function with the
// kernel specialised for the argument dtypes. Its errors are the caller's.
static inline loom_status_t infer_metadata(execution_t* e) {
  if (!e->known) return loom_ok_status();
  loom_op_invocation_t* invocation = e->invocation;
  cpu_op_t* op = e->op;
  int32_t n = invocation->num_arguments;
  int32_t m = invocation->num_results;
  loom_status_t status = loom_ok_status();
  if (op->native) {
    if (LOOM_UNLIKELY(e->large_ranks)) {
      return loom__cpu_check_large_ranks(NULL, invocation->op->name, e->inputs,
                                         n);
    }
    if (!op->native->metadata) return loom_ok_status();
    status =
        op->native->metadata(e->inputs, n, invocation->attrs, e->results, m);
    e->metadata_known = status == NULL;
  } else {
    status = loom__cpu_spec_get(op, e->inputs, n, invocation->attrs, &e->spec,
                                &e->spec_owned);
    if (LOOM_UNLIKELY(e->large_ranks) && status == NULL) {
      status = loom__cpu_check_large_ranks(e->spec, invocation->op->name,
                                           e->inputs, n);
    }
    if (LOOM_LIKELY(status == NULL)) {
      status = loom__cpu_spec_infer(op, e->spec, e->inputs, e->tensors, m,
                                    e->results, &e->metadata_known,
                                    &e->metadata_by_fn);
    }
  }
  if (LOOM_UNLIKELY(status != NULL)) {
    status = loom__cpu_annotate(status, invocation->op->name);
  }
  return status;
}

// Whether the op runs now, on this thread (else a dispatch record runs it,
// on the pool when `*out_expensive`).
static inline bool runs_now(const execution_t* e, bool* out_expensive) {
  const loom_runtime_t* runtime = e->handler->runtime;
  const cpu_native_op_t* native = e->op->native;
  int64_t limit = runtime->inline_element_limit;
  bool expensive = (native && (native->flags & LOOM_CPU_OP_EXPENSIVE)) ||
                   !e->known || limit < 0 || e->elements > limit;
  if (runtime->synchronous) expensive = false;
  *out_expensive = expensive;
  return e->ready && !e->has_chain && !expensive &&
         loom__cpu_call_is_sync(e->spec);
}

// Gives ops that do not take SCALAR host tensors dense ones. A converted
// input is owned (its argument handle released now).
static loom_status_t convert_scalars(execution_t* e, uint64_t* owned) {
  const cpu_op_t* op = e->op;
  if (op->native && (op->native->flags & LOOM_CPU_OP_ALLOWS_SCALAR)) {
    return loom_ok_status();
  }
  loom_op_invocation_t* invocation = e->invocation;
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_t* tensor = e->tensors[i];
    if (loom_tensor_kind(tensor) != LOOM_TENSOR_SCALAR) continue;
    loom_tensor_t* dense = NULL;
    LOOM_RETURN_IF_ERROR(loom_tensor_convert_to_dense(
        e->handler->runtime->allocator, tensor, &dense));
    if (invocation->arguments[i]) {
      loom_tensor_handle_release(invocation->arguments[i]);
      invocation->arguments[i] = NULL;
    } else {
      loom_tensor_release(tensor);
    }
    e->tensors[i] = dense;
    if (i < 64) *owned |= (uint64_t)1 << i;
  }
  return loom_ok_status();
}

// Makes the op's result handles, each over an unavailable value: they come
// first, so that nothing can fail once the kernel has run. On failure none
// is left.
static inline loom_status_t create_results(execution_t* e) {
  loom_op_invocation_t* invocation = e->invocation;
  const loom_tensor_metadata_t* metadata =
      e->metadata_known ? e->results : NULL;
  int32_t m = invocation->num_results;
  int32_t made = 0;
  loom_status_t status = loom_ok_status();
  for (; made < m; ++made) {
    status = loom__tensor_handle_create_pending(
        e->handler, metadata ? &metadata[made] : NULL,
        &invocation->results[made], &e->values[made]);
    if (LOOM_UNLIKELY(status != NULL)) break;
  }
  if (LOOM_LIKELY(status == NULL)) return status;
  for (int32_t k = 0; k < made; ++k) {
    loom_tensor_handle_release(invocation->results[k]);
  }
  return status;
}

// The arguments' tensors (already read from their available values) move
// out of the handles nobody else holds (the kernel may then forward them;
// their slots become NULL); the others' are borrowed. Returns the
// owned-inputs mask of loom_cpu_dispatch_context_t.
static inline uint64_t take_arguments(loom_op_invocation_t* invocation) {
  uint64_t owned = 0;
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    if (loom__tensor_handle_take_tensor(invocation->arguments[i])) {
      invocation->arguments[i] = NULL;
      if (i < 64) owned |= (uint64_t)1 << i;
    }
  }
  return owned;
}

// A TensorFlow kernel's direct entry, for a one-result op whose metadata is
// known: the kernel runs without a kernel context and its output becomes
// the result. *out_done is false when the entry declined (nothing done).
static loom_status_t run_direct(execution_t* e, uint64_t owned,
                                bool* out_done) {
  loom_runtime_t* runtime = e->handler->runtime;
  loom_op_invocation_t* invocation = e->invocation;
  loom__kernel_direct_call_t call = {
      .instance = e->spec->instance,
      .host = runtime->host,
      .allocator = runtime->allocator,
      .inputs = e->tensors,
      .num_inputs = invocation->num_arguments,
      .owned_inputs = owned,
      .output = &e->results[0],
      .output_elements = -1,
  };
  loom_tensor_t* output = NULL;
  loom_status_t status = loom_ok_status();
  *out_done = e->spec->direct(&call, &output, &status);
  if (!*out_done) return loom_ok_status();
  if (LOOM_UNLIKELY(status != NULL)) {
    return loom__cpu_annotate(status, invocation->op->name);
  }
  // The value was made by this Execute and nobody sees it yet.
  *(loom_tensor_t**)loom_async_value_payload(e->values[0]) = output;
  loom__async_value_set_available_unshared(e->values[0]);
  e->ran_direct = true;
  return loom_ok_status();
}

// Fills `memo` after run_direct ran the kernel on lent arguments, when a
// later run may skip straight to it: the spec is the op's (not owned by
// this run), and the result's metadata follows from the inputs' alone (the
// op's metadata function decided it, reading no input values).
static void remember(const execution_t* e, loom__cpu_memo_t* memo) {
  const loom_op_invocation_t* invocation = e->invocation;
  int32_t n = invocation->num_arguments;
  if (e->spec_owned || !e->lent || n > kCpuMemoMaxInputs ||
      !e->metadata_by_fn) {
    return;
  }
  loom__cpu_memo_fill(memo, invocation->op, e->spec, e->inputs, n, e->elements,
                      &e->results[0]);
}

// Runs the op's kernel on the available inputs: a native op's dispatch
// function straight from its result metadata, a TensorFlow kernel's direct
// entry when it has one that takes these inputs, else (a TensorFlow kernel,
// or a native op whose result metadata is not known) through a call record.
// Failures come back annotated with the op's name.
static inline loom_status_t run_kernel(execution_t* e, uint64_t owned) {
  loom_runtime_t* runtime = e->handler->runtime;
  loom_op_invocation_t* invocation = e->invocation;
  const loom_tensor_metadata_t* metadata =
      e->metadata_known ? e->results : NULL;
  const cpu_native_op_t* native = e->op->native;
  if (native && metadata) {
    loom_cpu_dispatch_context_t context = {
        .host = runtime->host,
        .allocator = runtime->allocator,
        .location = invocation->location,
        .inputs = e->tensors,
        .num_inputs = invocation->num_arguments,
        .attrs = invocation->attrs,
        .result_metadata = metadata,
        .results = e->values,
        .num_results = invocation->num_results,
        .owned_inputs = owned,
    };
    loom_status_t status = native->dispatch(&context);
    if (LOOM_UNLIKELY(status != NULL)) {
      status = loom__cpu_annotate(status, invocation->op->name);
    }
    return status;
  }
  if (e->spec && e->spec->direct && metadata && invocation->num_results == 1) {
    bool done = false;
    loom_status_t status = run_direct(e, owned, &done);
    if (done) return status;
  }
  cpu_call_t call = {
      .op = e->op,
      .op_name = invocation->op->name,
      .location = invocation->location,
      .attrs = invocation->attrs,
      .spec = e->spec,
      .inputs = e->tensors,
      .num_inputs = invocation->num_arguments,
      .owned_inputs = owned,
      .result_metadata = metadata,
      .results = e->values,
      .num_results = invocation->num_results,
      .results_owned = false,
  };
  return loom__cpu_call_run(&call);
}

// After the kernel: drops the arguments (their handles, or the tensors
// taken from them) and, when it failed, reports `status` once and gives it
// to every result it did not set.
static inline void finish_now(execution_t* e, loom_status_t status) {
  loom_op_invocation_t* invocation = e->invocation;
  for (int32_t i = 0; i < invocation->num_arguments && !e->lent; ++i) {
    if (invocation->arguments[i]) {
      loom_tensor_handle_release(invocation->arguments[i]);
      invocation->arguments[i] = NULL;
    } else {
      loom_tensor_release(e->tensors[i]);
    }
  }
  if (LOOM_LIKELY(status == NULL)) return;
  loom__runtime_report(e->handler->runtime, invocation->location,
                       invocation->op->name, status);
  for (int32_t i = 0; i < invocation->num_results; ++i) {
    if (loom_async_value_is_set(e->values[i])) continue;
    loom_status_ignore(
        loom_async_value_set_error(e->values[i], loom_status_clone(status)));
  }
  loom_status_free(status);
}

// Runs the op now. Dispatch failures go to the result handles.
static inline loom_status_t run_now(execution_t* e) {
  loom_status_t status = create_results(e);
  if (LOOM_UNLIKELY(status != NULL)) {
    return fail(e, status, true);
  }
  loom__runtime_count_dispatch(e->handler->runtime, true);
  uint64_t owned = 0;
  if (LOOM_UNLIKELY(e->scalars)) {
    // Converted scalars are owned tensors in argument slots: not lent.
    own_arguments(e);
    owned = take_arguments(e->invocation);
    status = convert_scalars(e, &owned);
  } else if (!e->lent) {
    owned = take_arguments(e->invocation);
  }
  if (LOOM_LIKELY(status == NULL)) status = run_kernel(e, owned);
  finish_now(e, status);
  return loom_ok_status();
}

static inline loom_status_t execute(loom_op_handler_t* handler,
                                    loom_op_invocation_t* invocation, bool lent,
                                    loom__cpu_memo_t* memo) {
  execution_t e;
  execution_block_t block;
  loom_status_t status =
      execution_initialize(&e, &block, handler, invocation, lent);
  if (LOOM_UNLIKELY(status != NULL)) {
    execution_deinitialize(&e, &block);
    return fail(&e, status, true);
  }
  if (check_chain(&e, &status) && gather_arguments(&e, &status)) {
    status = infer_metadata(&e);
    bool expensive = false;
    if (LOOM_UNLIKELY(status != NULL)) {
      status = fail(&e, status, true);
    } else if (LOOM_LIKELY(runs_now(&e, &expensive))) {
      status = run_now(&e);
      if (memo && e.ran_direct) remember(&e, memo);
    } else {
      own_arguments(&e);
      // The record takes the spec (and frees it if owned).
      bool owned = e.spec_owned;
      e.spec_owned = false;
      status = loom__cpu_dispatch_later(handler, invocation, e.spec, owned,
                                        e.metadata_known ? e.results : NULL,
                                        expensive);
    }
  }
  execution_deinitialize(&e, &block);
  return status;
}

static loom_status_t cpu_execute(loom_op_handler_t* handler,
                                 loom_op_invocation_t* invocation) {
  return execute(handler, invocation, false, NULL);
}

loom_status_t loom__cpu_execute_lent(loom_op_handler_t* handler,
                                     loom_op_invocation_t* invocation,
                                     loom__cpu_memo_t* memo) {
  return execute(handler, invocation, true, memo);
}

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

static const char* cpu_device_name(const loom_op_handler_t* handler) {
  return cpu_state_of((loom_op_handler_t*)handler)->device_name;
}

loom_status_t loom_cpu_op_handler_set_device_name(loom_op_handler_t* cpu,
                                                  const char* name) {
  LOOM_RETURN_IF_ERROR(
      loom__cpu_check_handler(cpu, "loom_cpu_op_handler_set_device_name"));
  if (!name || !*name ||
      strlen(name) >= sizeof(cpu_state_of(cpu)->device_name)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_cpu_op_handler_set_device_name: the name "
                            "must be 1 to %zu bytes",
                            sizeof(cpu_state_of(cpu)->device_name) - 1);
  }
  strcpy(cpu_state_of(cpu)->device_name, name);
  return loom_ok_status();
}

static void cpu_destroy(void* opaque) {
  cpu_state_t* cpu = opaque;
  size_t cursor = 0;
  uint64_t head = 0;
  while (loom__hash_map_next(&cpu->natives, &cursor, NULL, &head)) {
    for (native_op_t* op = (native_op_t*)(uintptr_t)head; op;) {
      native_op_t* next = op->next;
      loom_allocator_free(cpu->allocator, op);
      op = next;
    }
  }
  loom__hash_map_deinitialize(&cpu->natives);
  cursor = 0;
  while (loom__hash_map_next(&cpu->ops, &cursor, NULL, &head)) {
    for (cpu_op_t* op = (cpu_op_t*)(uintptr_t)head; op;) {
      cpu_op_t* next = op->next;
      op_destroy(op);
      op = next;
    }
  }
  loom__hash_map_deinitialize(&cpu->ops);
  pthread_mutex_destroy(&cpu->ops_mutex);
  pthread_rwlock_destroy(&cpu->lock);
  loom_allocator_free(cpu->allocator, cpu);
}

static const loom_op_handler_vtable_t kCpuVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "cpu",
    .prepare = cpu_prepare,
    .release_op_data = cpu_release_op_data,
    .execute = cpu_execute,
    .device_name = cpu_device_name,
    .destroy = cpu_destroy,
};

static bool is_cpu_handler(const loom_op_handler_t* handler) {
  return handler->vtable->execute == kCpuVtable.execute;
}

bool loom__is_cpu_handler(const loom_op_handler_t* handler) {
  return is_cpu_handler(handler);
}

loom_status_t loom__cpu_register_builtin_ops(loom_op_handler_t* cpu);

loom_status_t loom_cpu_op_handler_create(loom_runtime_t* runtime,
                                         loom_op_handler_t* fallback,
                                         loom_op_handler_t** out_handler) {
  if (!runtime || !out_handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_cpu_op_handler_create: %s is NULL",
                            !runtime ? "runtime" : "out_handler");
  }
  *out_handler = NULL;
  cpu_state_t* cpu = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(runtime->allocator, sizeof(*cpu), (void**)&cpu));
  cpu->allocator = runtime->allocator;
  strcpy(cpu->device_name, "/job:localhost/replica:0/task:0/device:CPU:0");
  loom__rwlock_initialize(&cpu->lock);
  loom__hash_map_initialize(&cpu->natives, runtime->allocator);
  pthread_mutex_init(&cpu->ops_mutex, NULL);
  loom__hash_map_initialize(&cpu->ops, runtime->allocator);
  loom_op_handler_t* handler = NULL;
  loom_status_t status =
      loom_op_handler_create(runtime, &kCpuVtable, cpu, fallback, &handler);
  if (status) {
    cpu_destroy(cpu);
    return status;
  }
  status = loom__cpu_register_builtin_ops(handler);
  if (status) {
    loom_op_handler_release(handler);
    return status;
  }
  *out_handler = handler;
  return loom_ok_status();
}
