// Op handlers: what executes an op (TFRT's OpHandler, and the front-end op
// handlers of TensorFlow's design — one interface for both).
//
// A handler is a vtable of hooks plus opaque state. A device handler ("cpu")
// is final: it runs kernels. A pseudo handler ("logging") or a
// transformation handler does its work and executes ops on the handler it
// wraps. A tensor handle names the handler it lives on and keeps it alive.
// Handlers are ref-counted and thread-safe.

#ifndef LOOM_OP_HANDLER_H_
#define LOOM_OP_HANDLER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loom/cancellation.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/op_def.h"
#include "loom/runtime.h"
#include "loom/status.h"
#include "loom/tensor_metadata.h"

LOOM_EXTERN_C_BEGIN

// The eager front end's op (loom_eager_op_t, loom/eager.h), which a device
// that runs ops itself receives whole.
struct loom_eager_op_t;

// A note a handler leaves on an invocation it passes on, for the handlers
// the invocation reaches after it: a recompute handler's segment, which
// the tape below it records the op in. Notes live on the stack of the
// handler that left them, for the duration of its forward call.
typedef struct loom_op_invocation_note_t {
  // What the note says: the address of an object its writer and its
  // readers agree on.
  const void* key;
  const void* value;
  const struct loom_op_invocation_note_t* next;  // left before it, or NULL
} loom_op_invocation_note_t;

// One op invocation, as Execute hands it to a handler (TFRT's
// OpInvocation).
typedef struct loom_op_invocation_t {
  loom_prepared_op_t* op;
  loom_location_t location;
  // Owned by the handler from here on: it releases them (and may set the
  // slots to NULL).
  loom_tensor_handle_t** arguments;
  int32_t num_arguments;
  const loom_op_attrs_t* attrs;  // borrowed; freeze to keep
  // The handler stores a new handle in each slot, error handles on failure.
  loom_tensor_handle_t** results;
  int32_t num_results;
  loom_async_value_t** chain;  // may be NULL
  // The notes of the handlers that passed the invocation on, the last one
  // first; NULL when there are none (Execute starts with none). A handler
  // adds one before loom_op_invocation_forward and takes it off after.
  const loom_op_invocation_note_t* notes;
  // Borrowed, may be NULL: once it is cancelled, the op fails with
  // CANCELLED unless it has started (loom_runtime_execute_invocation).
  loom_cancellation_t* cancellation;
} loom_op_invocation_t;

// The value of the last note left on `invocation` with `key`, or NULL.
static inline const void* loom_op_invocation_note(
    const loom_op_invocation_t* invocation, const void* key) {
  for (const loom_op_invocation_note_t* note = invocation->notes; note;
       note = note->next) {
    if (note->key == key) return note->value;
  }
  return NULL;
}

// Function calls a handler is offered as one op (TensorFlow's op-handler
// design, "Op handlers inside functions and control flow"): a call of a
// function of the eager API whose ops would be placed on the handler.

// The summary of one input of a call, which keys the function's replay
// cache: calls whose inputs have equal summaries (both fields) on the
// handler share a replay, and with it the data the handler keeps there.
// `kind` tells handlers apart (a tape's summary is not a logging
// handler's); handlers of one type (two tapes of two training steps) give
// the same kind, so that they share replays.
typedef struct loom_function_input_summary_t {
  const void* kind;
  uint64_t bits;
} loom_function_input_summary_t;

// A call as the execute_function_call hook sees it. Filled by the function
// layer and valid during the hook.
typedef struct loom_function_call_t {
  size_t struct_size;  // sizeof(loom_function_call_t)
  const char* function_name;
  // The body has stateful ops: running it again gives other values.
  bool stateful;
  // The call's inputs (borrowed), of which the last num_captured are values
  // the function captured and binds itself (calling the function by name
  // takes the others), and its number of results.
  loom_tensor_handle_t* const* inputs;
  int32_t num_inputs;
  int32_t num_captured;
  int32_t num_outputs;
  // Runs the body op by op, as a call the handler had not taken runs:
  // FunctionInput, the nodes, FunctionOutput, each placed by its inputs
  // and the thread's scopes (a handler that runs it in its own scope
  // stops its own processing of those ops first). Writes
  // results[0, num_outputs) (new references).
  loom_status_t (*run)(struct loom_function_call_t* call,
                       loom_tensor_handle_t** results);
  // What the handler keeps on the call's replay, shared by the calls whose
  // inputs' dtypes, shapes and summaries (function_input_summary) equal
  // this call's: NULL when nothing is kept for the key yet or the handler
  // gives no summaries.
  void* replay_data;
  // Keeps `data` on the call's replay (made now when its key has none)
  // until the function goes, then frees it with `release`. False, keeping
  // nothing, when the call has no key (the handler gives no summaries),
  // its replay has data already, or the function's cache is full.
  bool (*set_replay_data)(struct loom_function_call_t* call, void* data,
                          void (*release)(void* data));
  void* internal;  // the function layer's
} loom_function_call_t;

typedef struct loom_op_handler_vtable_t {
  size_t struct_size;  // sizeof(loom_op_handler_vtable_t)
  const char* type_name;
  // Resolves `op_name` (its definition is `op`, or NULL for ops only this
  // handler knows): OK with per-op data in *out_op_data, or NOT_FOUND when
  // the handler cannot run it.
  loom_status_t (*prepare)(loom_op_handler_t* handler, const char* op_name,
                           const loom_op_def_t* op, void** out_op_data);
  // Frees what prepare returned (may be NULL).
  void (*release_op_data)(loom_op_handler_t* handler, void* op_data);
  // Executes one invocation; see loom_runtime_execute_prepared for the
  // contract. Returns the synchronous error, if any, after filling the
  // results with error handles.
  loom_status_t (*execute)(loom_op_handler_t* handler,
                           loom_op_invocation_t* invocation);
  // The device name shown for tensors on this handler (may be NULL).
  const char* (*device_name)(const loom_op_handler_t* handler);
  // Frees the handler's state (may be NULL).
  void (*destroy)(void* state);

  // The front-end hooks of TensorFlow's op-handler design (all may be NULL;
  // a vtable whose struct_size ends before them has none of them).
  //
  // Makes a handler of this type whose ops execute on `outer`, with a state
  // of its own (the design's merge): the scope entered last sees an op
  // first. NULL: a final handler (a device) that nothing stacks on.
  loom_status_t (*merge)(loom_op_handler_t* handler, loom_op_handler_t* outer,
                         loom_op_handler_t** out_merged);
  // Frees a tensor representation this handler made
  // (loom_tensor_handle_create_representation), when its handle goes.
  void (*release_representation)(loom_op_handler_t* handler,
                                 void* representation);
  // A value known without running anything (get_static_value), or
  // NOT_FOUND. *out_tensor receives a new reference.
  loom_status_t (*static_value)(loom_op_handler_t* handler,
                                loom_tensor_handle_t* handle,
                                loom_tensor_t** out_tensor);
  // Whether `op_name` takes inputs from other handlers as they are, without
  // the implicit CopyOn (a parallel handler's pack, a tape's watch).
  bool (*takes_foreign_inputs)(const loom_op_handler_t* handler,
                               const char* op_name);
  // Debug strings of the handler and of one of its tensors, like snprintf.
  size_t (*debug_string)(const loom_op_handler_t* handler, char* buffer,
                         size_t capacity);
  size_t (*tensor_debug_string)(const loom_op_handler_t* handler,
                                const loom_tensor_handle_t* handle,
                                char* buffer, size_t capacity);
  // The metadata of one of its tensors made without it (a representation
  // whose shape is computed on demand, as a custom device's): may wait, must
  // not copy the tensor off. NULL: such tensors have none until copied off.
  loom_status_t (*tensor_metadata)(loom_op_handler_t* handler,
                                   const loom_tensor_handle_t* handle,
                                   loom_tensor_metadata_t* out_metadata);
  // Offered the op data `source` (a handler of this type) prepared for an
  // op, for the same op on this handler (loom_runtime_prepare_op_like):
  // OK with *out_op_data — the same data, which the hook then holds one
  // more reference to, or new data — when this handler can use it;
  // NOT_FOUND to have the op prepared as usual. What makes a new tape each
  // training step find its ops ready.
  loom_status_t (*reuse_op_data)(loom_op_handler_t* handler,
                                 const loom_op_handler_t* source,
                                 void* source_op_data, void** out_op_data);

  // The hooks of a device that runs ops itself (the eager API's custom
  // devices; all may be NULL).
  //
  // Executes an eager op (loom/eager.h) placed on this handler as its
  // caller built it — name, attributes, inputs wherever they live — instead
  // of its being prepared and passed to execute. `expected` is the op's
  // number of results when known, else -1. Writes up to `capacity` results
  // (new references) and their number. A device with this hook keeps
  // tensors of its own: a copy onto it is a CopyOn it executes, never a
  // shared host tensor.
  loom_status_t (*execute_eager_op)(loom_op_handler_t* handler,
                                    struct loom_eager_op_t* op,
                                    int32_t expected,
                                    loom_tensor_handle_t** results,
                                    int32_t capacity, int32_t* out_count);
  // Whether an eager op that one of its inputs placed on this handler (no
  // explicit device) stays here; false sends it to the context's CPU. NULL:
  // it stays. The error of the decision, if any, is the op's.
  loom_status_t (*pins_op)(loom_op_handler_t* handler,
                           struct loom_eager_op_t* op, bool* out_pin);
  // The dtype of one of its tensors made without metadata, without working
  // out its shape (which tensor_metadata may compute at a cost).
  loom_dtype_t (*tensor_dtype)(const loom_op_handler_t* handler,
                               const loom_tensor_handle_t* handle);

  // Function calls (all may be NULL).
  //
  // The summary of `handle`, an input of a function call this handler is
  // offered (execute_function_call). NULL: calls offered to the handler
  // have no replay, and share nothing.
  loom_status_t (*function_input_summary)(
      loom_op_handler_t* handler, loom_tensor_handle_t* handle,
      loom_function_input_summary_t* out_summary);
  // Delayed processing: offered a call whose ops would be placed on this
  // handler, it takes the call as one op — *out_taken true, with
  // results[0, call->num_outputs) filled (new references), typically by
  // running call->run with its own processing paused and treating the
  // call once (a tape records one node, a logging handler one line) — or
  // leaves it (*out_taken false, nothing written): the body then runs op by
  // op and the handler sees its ops. An error is the call's. NULL: every
  // call is left.
  loom_status_t (*execute_function_call)(loom_op_handler_t* handler,
                                         loom_function_call_t* call,
                                         loom_tensor_handle_t** results,
                                         bool* out_taken);
} loom_op_handler_vtable_t;

// The struct_size of a vtable that stops after `destroy` (before the
// front-end hooks): still accepted.
#define LOOM_OP_HANDLER_VTABLE_V1_SIZE \
  (offsetof(loom_op_handler_vtable_t, destroy) + sizeof(void (*)(void*)))

// Creates a handler. `vtable` must outlive it. The runtime's references are
// taken by loom_runtime_register_op_handler; `fallback` (may be NULL) is the
// handler ops go to when this one cannot prepare them (retained).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_op_handler_create(
    loom_runtime_t* runtime, const loom_op_handler_vtable_t* vtable,
    void* state, loom_op_handler_t* fallback, loom_op_handler_t** out_handler);
LOOM_API void loom_op_handler_retain(loom_op_handler_t* handler);
LOOM_API void loom_op_handler_release(loom_op_handler_t* handler);

LOOM_API void* loom_op_handler_state(const loom_op_handler_t* handler);
LOOM_API loom_runtime_t* loom_op_handler_runtime(
    const loom_op_handler_t* handler);
LOOM_API const char* loom_op_handler_type_name(
    const loom_op_handler_t* handler);
LOOM_API const char* loom_op_handler_device_name(
    const loom_op_handler_t* handler);
LOOM_API loom_op_handler_t* loom_op_handler_fallback(
    const loom_op_handler_t* handler);
LOOM_API const loom_op_handler_vtable_t* loom_op_handler_vtable(
    const loom_op_handler_t* handler);
// The number of references to the handler now (collection of unused
// merges; a value that others may change at once unless they cannot reach
// the handler).
LOOM_API uint32_t loom_op_handler_ref_count(const loom_op_handler_t* handler);
// A final handler (a device) has no merge hook: nothing stacks on it.
LOOM_API bool loom_op_handler_is_final(const loom_op_handler_t* handler);

// What a handler's execute hook uses: the prepared op's parts.
LOOM_API const loom_op_def_t* loom_prepared_op_def(
    const loom_prepared_op_t* op);
LOOM_API void* loom_prepared_op_data(const loom_prepared_op_t* op);
LOOM_API loom_op_handler_t* loom_prepared_op_handler(
    const loom_prepared_op_t* op);

// Passes `invocation` on to `op`, prepared on another handler (a
// transformation's outer handler): the invocation becomes that op's and
// its handler's execute hook runs it, with the contract of the hook
// (arguments consumed, results filled). What a handler that forwards each
// op does instead of loom_runtime_execute_prepared, which would check the
// arguments, cancellation and synchronous completion once more.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_op_invocation_forward(
    loom_op_invocation_t* invocation, loom_prepared_op_t* op);

// Fills every result slot of `invocation` with an error handle carrying
// `error` (consumed), reports it to the diagnostic handler when `report` is
// set, releases the arguments, and returns a copy of the error.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_op_invocation_fail(
    loom_op_invocation_t* invocation, loom_status_t error, bool report);

// The built-in handlers.

// "null": every op fails with "<op> was not supported by NullOpHandler".
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_null_op_handler_create(
    loom_runtime_t* runtime, loom_op_handler_t** out_handler);

// "logging", TFRT's logging op handler: wraps one handler given here (not
// a scope; the front end's scope handler is
// loom_scope_logging_handler_create in loom/handlers.h) and prints every
// dispatch to `stream` (NULL: nothing printed, for
// measuring the handler's own cost) as
//   [N] dispatch 'op' K arguments, M results, <attrs or no attributes>
// and, with print_tensors, the arguments and results; then executes the op
// on `wrapped`.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_dispatch_logging_handler_create(loom_runtime_t* runtime,
                                     loom_op_handler_t* wrapped, FILE* stream,
                                     bool print_tensors,
                                     loom_op_handler_t** out_handler);

LOOM_EXTERN_C_END

#endif  // LOOM_OP_HANDLER_H_
