// The pass-through handler base: what a front-end transformation that runs
// its ops on the handler it was merged with (its outer handler) needs from
// every such handler, written once.
//
// A handler embeds loom__passthrough_t first in its state and describes its
// type with a loom__passthrough_type_t; its vtable takes the base's hooks
// and adds its own execute and whatever else differs:
//
//   typedef struct numerics_state_t {
//     loom__passthrough_t base;
//     loom_prepared_op_t* check;  // made by initialize
//   } numerics_state_t;
//
//   static const loom_op_handler_vtable_t kNumericsVtable = {
//       .struct_size = sizeof(loom_op_handler_vtable_t),
//       .type_name = "NUMERICS",
//       LOOM__PASSTHROUGH_HOOKS,
//       .execute = numerics_execute,
//   };
//   static const loom__passthrough_type_t kNumericsType = {
//       .vtable = &kNumericsVtable,
//       .state_size = sizeof(numerics_state_t),
//       .initialize = numerics_initialize,
//       .deinitialize = numerics_deinitialize,
//   };
//
// The base keeps the outer handler (NULL: the context's CPU), prepares each
// op on it when the op is prepared here (the op data is that prepared op,
// or handler data embedding it, as the tape's and forward mode's), merges
// (a new handler of the same type over a new outer handler, sharing the
// handler's shared state), destroys, takes inputs from other handlers as
// they are (they go to the outer handler), and forwards an invocation to
// the outer handler. A handler with a tensor representation of its own
// (vmap, parallel) takes LOOM__PASSTHROUGH_BASE_HOOKS and decides itself
// which inputs it takes as they are.
//
// Handlers are used from any thread: the hooks of a type must be
// thread-safe, and so must what its states share.

#ifndef LOOM_FRONTEND_PASSTHROUGH_HANDLER_H_
#define LOOM_FRONTEND_PASSTHROUGH_HANDLER_H_

#include "base/ref_count.h"
#include "loom/eager.h"
#include "loom/op_handler.h"
#include "loom/tensor_handle.h"

typedef struct loom__passthrough_t loom__passthrough_t;
typedef struct loom__passthrough_op_t loom__passthrough_op_t;

// A handler type built on the base. Every hook may be NULL.
typedef struct loom__passthrough_type_t {
  const loom_op_handler_vtable_t* vtable;
  // The size of the handler's state, which embeds loom__passthrough_t
  // first; the base zero-fills it.
  size_t state_size;
  // What a handler and its merges share (its `shared`): each state holds
  // one reference.
  void (*retain_shared)(void* shared);
  void (*release_shared)(void* shared);
  // Completes a new state once its handler is made (base->handler set);
  // on failure the handler is released, which runs deinitialize.
  loom_status_t (*initialize)(loom__passthrough_t* base);
  // Frees what the handler's own fields hold, before the base's fields go;
  // also for a state whose initialize failed or never ran.
  void (*deinitialize)(loom__passthrough_t* base);

  // Per-op data. 0: the op data is the op prepared on the outer handler
  // (loom__passthrough_forward_prepared). Else the size of the handler's
  // op data, which embeds loom__passthrough_op_t first (zero-filled).
  size_t op_data_size;
  // Fills the handler's fields of new op data (the outer op is prepared).
  loom_status_t (*prepare_op)(loom__passthrough_t* base, const char* op_name,
                              const loom_op_def_t* op_def,
                              loom__passthrough_op_t* data);
  // Whether op data another handler of the type prepared still serves
  // (loom__passthrough_reuse_op_data; both run on the same outer handler).
  bool (*op_data_reusable)(const loom__passthrough_t* base,
                           const loom__passthrough_op_t* data);
  // The op data depends on the op, the outer handler and the registries
  // only (not on the handler's own state): a handler over a final outer
  // handler takes the data another handler of the type prepared there on
  // this thread (passthrough_op_cache.h), while the registries are
  // unchanged and op_data_reusable accepts it. For handlers made per call.
  bool cache_op_data;
} loom__passthrough_type_t;

struct loom__passthrough_t {
  const loom__passthrough_type_t* type;
  loom_allocator_t allocator;  // of the state and the op data
  loom_context_t* context;
  loom_op_handler_t* handler;          // the handler this state belongs to
  loom_op_handler_t* outer;            // retained; NULL: the context's CPU
  loom_op_handler_t* effective_outer;  // `outer`, or the context's CPU
  void* shared;                        // retained through the type
};

// Op data that handler data embeds first (op_data_size > 0). Shared by the
// prepared ops of handlers that reuse it (loom__passthrough_reuse_op_data).
struct loom__passthrough_op_t {
  loom__ref_count_t ref_count;
  loom_allocator_t allocator;
  loom_prepared_op_t* outer_op;  // the op prepared on the outer handler
};

// Shared state that needs nothing but freeing embeds this first and takes
// the base's retain_shared / release_shared.
typedef struct loom__passthrough_shared_t {
  loom__ref_count_t ref_count;
  loom_allocator_t allocator;
} loom__passthrough_shared_t;

// `size` zero-filled bytes of shared state (embedding the above), holding
// one reference for the caller.
LOOM_MUST_USE_RESULT loom_status_t loom__passthrough_shared_create(
    loom_allocator_t allocator, size_t size, void** out_shared);
void loom__passthrough_shared_retain(void* shared);
void loom__passthrough_shared_release(void* shared);

// Makes a handler of `type` whose ops run on `outer` (NULL: the context's
// CPU; retained) and which shares `shared` (retained through the type).
// The state is allocated with `allocator`, as are its merges'.
LOOM_MUST_USE_RESULT loom_status_t loom__passthrough_create(
    const loom__passthrough_type_t* type, loom_context_t* context,
    loom_allocator_t allocator, void* shared, loom_op_handler_t* outer,
    loom_op_handler_t** out_handler);

void loom__passthrough_destroy(void* state);

// The base of `handler` when it is a handler of `type` (or a merge of
// one), else NULL. (A handler built on the base has the base's destroy
// hook; the runtime keeps a copy of the vtable, not its address.)
static inline loom__passthrough_t* loom__passthrough_of(
    const loom_op_handler_t* handler, const loom__passthrough_type_t* type) {
  if (!handler ||
      loom_op_handler_vtable(handler)->destroy != loom__passthrough_destroy) {
    return NULL;
  }
  loom__passthrough_t* base = loom_op_handler_state(handler);
  return base->type == type ? base : NULL;
}

// The merge of `handler` (a handler built on the base) that tensors made
// now should live on, as a new reference: `handler` itself when it is a
// merge; else the handler of its type and shared state in this thread's
// scope (found through the pass-through handlers above it); else the one
// entering `handler`'s scope gives. NULL (and OK) when there is none, which
// the caller reports or replaces.
LOOM_MUST_USE_RESULT loom_status_t loom__passthrough_entry_handler(
    loom_op_handler_t* handler, loom_op_handler_t** out);

// Passes `invocation` on to `outer_op` (prepared on the outer handler):
// copies onto the outer handler the arguments it needs there, then runs
// the op there. The invocation's contract holds (arguments consumed,
// results filled, error handles on failure).
static inline loom_status_t loom__passthrough_forward(
    const loom__passthrough_t* base, loom_op_invocation_t* invocation,
    loom_prepared_op_t* outer_op) {
  // Arguments on the outer handler already need nothing (the usual case:
  // the tensors a pass-through handler makes are its outer handler's).
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    if (loom_tensor_handle_handler(invocation->arguments[i]) !=
        base->effective_outer) {
      LOOM_RETURN_IF_ERROR(loom_context_forward_arguments(
          base->context, base->effective_outer, invocation));
      break;
    }
  }
  return loom_op_invocation_forward(invocation, outer_op);
}

// The same for a type whose op data is the outer prepared op.
static inline loom_status_t loom__passthrough_forward_prepared(
    const loom__passthrough_t* base, loom_op_invocation_t* invocation) {
  return loom__passthrough_forward(
      base, invocation,
      (loom_prepared_op_t*)loom_prepared_op_data(invocation->op));
}

// loom__passthrough_forward_prepared with a note (`key`, `value`) left on
// the invocation for the handlers it reaches, taken off after.
LOOM_MUST_USE_RESULT loom_status_t loom__passthrough_forward_noted(
    const loom__passthrough_t* base, loom_op_invocation_t* invocation,
    const void* key, const void* value);

// Replaces the results of `invocation`, which ran, with error handles on
// `handler` carrying `error` (consumed); returns it. For a handler whose
// work after the op failed.
LOOM_MUST_USE_RESULT loom_status_t
loom__passthrough_fail_results(loom_op_invocation_t* invocation,
                               loom_op_handler_t* handler, loom_status_t error);

// Checks that a copy op (CopyOn, CopyOff, ...) named `op_name` has one
// input and one result; otherwise fails the invocation with
// INVALID_ARGUMENT.
static inline loom_status_t loom__handler_copy_check(
    loom_op_invocation_t* invocation, const char* op_name) {
  if (invocation->num_arguments == 1 && invocation->arguments[0] &&
      invocation->num_results == 1) {
    return loom_ok_status();
  }
  return loom_op_invocation_fail(
      invocation,
      loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                       "%s takes one input and has one result", op_name),
      true);
}

// Ends a copy op: `result` (a reference the caller gives) replaces its
// input, which is released.
static inline loom_status_t loom__handler_copy_finish(
    loom_op_invocation_t* invocation, loom_tensor_handle_t* result) {
  loom_tensor_handle_release(invocation->arguments[0]);
  invocation->arguments[0] = NULL;
  invocation->results[0] = result;
  return loom_ok_status();
}

// The base's hooks.
loom_status_t loom__passthrough_prepare(loom_op_handler_t* handler,
                                        const char* op_name,
                                        const loom_op_def_t* op_def,
                                        void** out_op_data);
void loom__passthrough_release_op_data(loom_op_handler_t* handler,
                                       void* op_data);
// Drops a reference to op data of a type with op_data_size > 0.
void loom__passthrough_op_release(loom__passthrough_op_t* data);
// Shares the op data of a handler of the same type that runs its ops on
// the same outer handler (and that the type's op_data_reusable accepts);
// NOT_FOUND otherwise. Opt-in: a vtable lists it as reuse_op_data.
loom_status_t loom__passthrough_reuse_op_data(loom_op_handler_t* handler,
                                              const loom_op_handler_t* source,
                                              void* source_op_data,
                                              void** out_op_data);
// Runs a call the handler took beneath it: offered whole to its outer
// handler in turn (execute_function_call; a vmap beneath a tape batches
// it), else op by op (call->run). The outer handler keeps no replay data
// on the call: its key is the handler's.
loom_status_t loom__passthrough_run_call_beneath(
    const loom__passthrough_t* base, loom_function_call_t* call,
    loom_tensor_handle_t** results);
// Runs `outer_op` (prepared on the context's CPU: the op data's outer_op
// of a handler over the CPU) on inputs[0, n) (borrowed) with `attrs`, into
// results[0, m) (new references), straight through the runtime: what a
// handler that runs the op it was given on other inputs (a vmap's batching
// rule) runs without making an eager op. Only for a stateless op with
// results, on a synchronous thread, every input on the CPU; otherwise
// *out_done is false and nothing was written (the caller runs an eager
// op).
LOOM_MUST_USE_RESULT loom_status_t loom__passthrough_run_outer_op(
    loom_context_t* context, loom_prepared_op_t* outer_op,
    loom_tensor_handle_t* const* inputs, int32_t n,
    const loom_op_attrs_t* attrs, loom_tensor_handle_t** results, int32_t m,
    bool* out_done);
// Forwards every op (loom__passthrough_forward_prepared): the execute hook
// of a type that only passes ops on.
loom_status_t loom__passthrough_execute(loom_op_handler_t* handler,
                                        loom_op_invocation_t* invocation);
loom_status_t loom__passthrough_merge(loom_op_handler_t* handler,
                                      loom_op_handler_t* outer,
                                      loom_op_handler_t** out_merged);
// True: inputs from other handlers go to the outer handler, not onto this
// one.
bool loom__passthrough_takes_foreign_inputs(const loom_op_handler_t* handler,
                                            const char* op_name);

// The hooks every type built on the base takes, for its vtable; a handler
// with a tensor representation of its own (whose inputs from other
// handlers are copied on) adds its own takes_foreign_inputs.
#define LOOM__PASSTHROUGH_BASE_HOOKS                    \
  .prepare = loom__passthrough_prepare,                 \
  .release_op_data = loom__passthrough_release_op_data, \
  .destroy = loom__passthrough_destroy, .merge = loom__passthrough_merge

// The hooks of a type whose results are the outer handler's tensors.
#define LOOM__PASSTHROUGH_HOOKS \
  LOOM__PASSTHROUGH_BASE_HOOKS, \
      .takes_foreign_inputs = loom__passthrough_takes_foreign_inputs

#endif  // LOOM_FRONTEND_PASSTHROUGH_HANDLER_H_
