// The core runtime's objects, shared by its files.

#ifndef LOOM_CORERT_CORERT_INTERNAL_H_
#define LOOM_CORERT_CORERT_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>

#include "base/hash_map.h"
#include "base/ref_count.h"
#include "loom/op_handler.h"
#include "loom/runtime.h"
#include "loom/tensor_handle.h"

enum { kMaxHandlers = 64 };

struct loom_runtime_t {
  // One reference for the caller (until loom_runtime_destroy), one per op
  // handler: handles outliving the runtime's destroy still reach its
  // allocator through their handler.
  loom__ref_count_t ref_count;
  loom_host_context_t* host;
  loom_allocator_t allocator;
  loom_diagnostic_handler_t diagnostic_handler;
  void* diagnostic_user_data;
  loom_op_registry_t* ops;
  loom_kernel_registry_t* kernels;
  bool synchronous;
  int64_t inline_element_limit;
  const void* owner_kind;
  void* _Atomic owner;  // NULL from loom_runtime_destroy on

  pthread_rwlock_t handlers_lock;
  const char* handler_names[kMaxHandlers];  // owned copies
  loom_op_handler_t* handlers[kMaxHandlers];
  int32_t num_handlers;

  // Ops executed by name: prepared once per (handler, name), kept until the
  // runtime goes. loom__hash_bytes(name) ^ handler -> chain via next_cached.
  pthread_rwlock_t prepared_lock;
  loom__hash_map_t prepared;

  _Atomic int64_t ops_failed_early;  // before dispatch (metadata, arguments)
  _Atomic int64_t ops_inline;
  _Atomic int64_t ops_enqueued;
  _Atomic int64_t errors_reported;
  _Atomic int64_t pending;  // dispatches not finished yet
};

struct loom_op_handler_t {
  loom__ref_count_t ref_count;
  loom_runtime_t* runtime;
  const loom_op_handler_vtable_t* vtable;  // &vtable_copy
  // The creator's vtable, padded with NULL hooks where its struct_size ends.
  loom_op_handler_vtable_t vtable_copy;
  void* state;
  loom_op_handler_t* fallback;  // retained, may be NULL
};

struct loom_prepared_op_t {
  loom__ref_count_t ref_count;
  loom_runtime_t* runtime;
  loom_op_handler_t* requested;  // the handler asked (retained: cache key)
  loom_op_handler_t* handler;    // the handler that accepted the op (retained)
  const loom_op_def_t* def;      // NULL for native-only ops
  void* data;                    // the handler's per-op data
  struct loom_prepared_op_t* next_cached;  // runtime->prepared chain
  uint64_t cache_key;
  // The registry generation before the op was looked up: the runtime's
  // cache prepares it again once the registries changed.
  uint64_t generation;
  char name[];
};

struct loom_tensor_handle_t {
  loom__ref_count_t ref_count;
  bool metadata_available;
  bool value_embedded;         // the value lives in this handle's block
  loom_op_handler_t* handler;  // retained
  // A device handler's tensors have a value (payload loom_tensor_t*,
  // retained); a front-end handler's may have its opaque representation
  // instead (value NULL), freed with the handler's release_representation.
  loom_async_value_t* value;
  void* representation;
  loom_tensor_metadata_t metadata;
  _Atomic uint64_t tag;  // loom_tensor_handle_tag; 0 when not set
};

// What an inline run of a TensorFlow kernel's direct entry on the cpu
// handler found for one eager op (its specialisation, its inputs' and its
// result's metadata), so that the next execution of that op with inputs of
// the same metadata runs the kernel at once (loom__cpu_execute_memo). The
// eager op keeps it while it keeps `prepared`, and empties it when it drops
// or changes that.
enum { kCpuMemoMaxInputs = 4 };
typedef struct loom__cpu_memo_t {
  const loom_prepared_op_t* prepared;  // NULL: empty
  const void* spec;                    // the cpu handler's cpu_kernel_spec_t
  int32_t num_inputs;
  int64_t elements;  // in the inputs
  loom_tensor_metadata_t inputs[kCpuMemoMaxInputs];
  loom_tensor_metadata_t result;
  int64_t result_elements;
} loom__cpu_memo_t;

// loom_runtime_prepare_op_shared for an op whose definition the caller
// looked up in the runtime's op registry (`def`, at registry generation
// `generation`): while the registries have not changed since, the look-up
// is not made again (a new per-call handler preparing ops it ran before).
// A NULL `def` (not a registered op) is looked up by name.
LOOM_MUST_USE_RESULT loom_status_t loom__runtime_prepare_op_known(
    loom_runtime_t* runtime, const char* op_name, const loom_op_def_t* def,
    uint64_t generation, loom_op_handler_t* handler,
    loom_prepared_op_t** out_op);

// loom_runtime_execute_invocation for a caller that validated the
// invocation (a prepared op, arrays of the counts, no NULL argument) and
// lends its arguments: it keeps its references, and the handles stay alive
// until this returns. The cpu handler's inline run reads them in place;
// every other path takes references of its own first, so the handler sees
// the invocation it always does.
//
// `memo` (may be NULL) is the caller's loom__cpu_memo_t for this op: an
// inline run of a TensorFlow kernel's direct entry on the cpu handler fills
// it in.
loom_status_t loom__runtime_execute_lent(loom_op_invocation_t* invocation,
                                         loom__cpu_memo_t* memo);

// How many handler executions the calling thread is inside (op_handler.c):
// ops a handler runs while it executes one are its own, placed where it
// puts them (an explicit device is where its op runs, past the
// transformations of the scope); only ops run outside every handler are
// placed under the scope's transformations.
extern _Thread_local int32_t loom__handler_execution_depth;

// `handler`'s execute, counted in loom__handler_execution_depth.
static inline loom_status_t loom__handler_execute(
    loom_op_handler_t* handler, loom_op_invocation_t* invocation) {
  ++loom__handler_execution_depth;
  loom_status_t status = handler->vtable->execute(handler, invocation);
  --loom__handler_execution_depth;
  return status;
}

// The cpu handler's execute with lent arguments (cpu_op_handler.c).
bool loom__is_cpu_handler(const loom_op_handler_t* handler);
loom_status_t loom__cpu_execute_lent(loom_op_handler_t* handler,
                                     loom_op_invocation_t* invocation,
                                     loom__cpu_memo_t* memo);

// Runs the op `memo` remembers again, inline, on inputs (lent, memo->
// num_inputs of them) of the metadata it remembers, with caller attributes
// equal to the first run's: the remembered specialisation's direct entry on
// the remembered result metadata, with no placement, preparation, look-up
// or shape inference. Returns true with a new handle in *out_result when it
// ran and succeeded; false, having done nothing, when anything differs
// (an input elsewhere, unavailable, held by nobody else, of other
// metadata; other attributes; a cancelled host; a kernel that declines or
// fails): the caller then executes the op as usual.
bool loom__cpu_execute_memo(const loom__cpu_memo_t* memo,
                            loom_tensor_handle_t* const* inputs,
                            const loom_op_attrs_t* attrs,
                            loom_tensor_handle_t** out_result);

void loom__runtime_retain(loom_runtime_t* runtime);
void loom__runtime_release(loom_runtime_t* runtime);

// Reports `error` (borrowed) to the diagnostic handler.
void loom__runtime_report(loom_runtime_t* runtime, loom_location_t location,
                          const char* op_name, loom_status_t error);

// Tracks dispatches still running, for quiesce.
void loom__runtime_dispatch_started(loom_runtime_t* runtime);
void loom__runtime_dispatch_finished(loom_runtime_t* runtime);
void loom__runtime_count_dispatch(loom_runtime_t* runtime, bool inline_run);

// A handle on `handler` over a new UNAVAILABLE tensor value made in the same
// allocation; *out_value is borrowed from the handle (set it to deliver the
// tensor). `metadata` may be NULL when not known before the value.
loom_status_t loom__tensor_handle_create_pending(
    loom_op_handler_t* handler, const loom_tensor_metadata_t* metadata,
    loom_tensor_handle_t** out_handle, loom_async_value_t** out_value);

// Takes an argument handle with an AVAILABLE value apart for a kernel run,
// consuming the caller's reference to it. When that was the only path to
// the tensor, the handle is released, the tensor's reference moves to the
// caller (release the tensor after the run) and true is returned.
// Otherwise the caller borrows the tensor from the handle, which it
// releases after the run. No locked instruction either way.
bool loom__tensor_handle_take_tensor(loom_tensor_handle_t* handle);

// An error async value of the tensor type (for error handles).
loom_status_t loom__tensor_error_value(loom_allocator_t allocator,
                                       loom_status_t error,
                                       loom_async_value_t** out_value);

// The host tensor of an AVAILABLE tensor value (borrowed).
static inline loom_tensor_t* loom__tensor_of_value(loom_async_value_t* value) {
  return *(loom_tensor_t**)loom_async_value_payload(value);
}

#endif  // LOOM_CORERT_CORERT_INTERNAL_H_
