// The eager front end: contexts, handler scopes and op-by-op execution as
// TensorFlow's eager API offers them (tensorflow/c/eager/c_api.h is a thin
// layer over this), with the front-end op handlers of TensorFlow's design:
// transformations (a gradient tape, a parallel handler, ...) that intercept
// ops, stack by merging, keep their own tensor representations and copy
// tensors on and off.
//
// One handler interface serves devices and transformations
// (loom/op_handler.h): a device handler (the "cpu" one, a custom device) is
// final; a transformation handler has a merge hook and executes the ops it
// sees on the handler it was merged with.
//
//   loom_context_t* ctx;
//   LOOM_RETURN_IF_ERROR(loom_context_create(NULL, &ctx));
//   loom_eager_op_t* op;
//   LOOM_RETURN_IF_ERROR(loom_eager_op_create(ctx, "AddV2", &op));
//   LOOM_RETURN_IF_ERROR(loom_eager_op_add_input(op, x));
//   LOOM_RETURN_IF_ERROR(loom_eager_op_add_input(op, y));
//   loom_tensor_handle_t* z;
//   int32_t count;
//   LOOM_RETURN_IF_ERROR(loom_eager_op_execute(op, &z, 1, &count));

#ifndef LOOM_EAGER_H_
#define LOOM_EAGER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/allocator.h"
#include "loom/cancellation.h"
#include "loom/host_context.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/op_def.h"
#include "loom/op_handler.h"
#include "loom/runtime.h"
#include "loom/status.h"
#include "loom/tensor_handle.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_context_t loom_context_t;
typedef struct loom_eager_op_t loom_eager_op_t;

//===----------------------------------------------------------------------===//
// Contexts
//===----------------------------------------------------------------------===//

typedef struct loom_context_options_t {
  // Ops return before they complete; their errors surface at the next wait
  // (loom_context_wait) or when a result is resolved. Otherwise every op is
  // complete, and its error returned, when execute returns.
  bool async;
  // Worker threads; -1: one per core but one (the calling thread computes
  // too, so as many threads compute as there are cores).
  int num_threads;
  loom_allocator_t allocator;  // everything the context makes
  // CPU devices: CPU:0 .. CPU:n-1 (0 or 1: CPU:0 alone); see
  // loom_context_set_cpu_device_count.
  int32_t num_cpu_devices;
} loom_context_options_t;

LOOM_API void loom_context_options_initialize(loom_context_options_t* options);

// A context with its own host context (thread pool) and core runtime, and
// the device "/job:localhost/replica:0/task:0/device:CPU:0". `options` may
// be NULL (synchronous, one thread per core, the default allocator).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_context_create(
    const loom_context_options_t* options, loom_context_t** out_context);

// Waits for pending ops, then frees the context. Every op made in it must
// be destroyed first; tensor handles may outlive it.
LOOM_API void loom_context_destroy(loom_context_t* context);

LOOM_API loom_runtime_t* loom_context_runtime(const loom_context_t* context);
LOOM_API loom_host_context_t* loom_context_host(const loom_context_t* context);
LOOM_API bool loom_context_is_async(const loom_context_t* context);
// The context's CPU device handler.
LOOM_API loom_op_handler_t* loom_context_cpu(const loom_context_t* context);

// Waits until every op executed so far has finished; returns (and keeps)
// the first error an op of this context reported since the last clear.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_context_wait(loom_context_t* context);
// Forgets that error.
LOOM_API void loom_context_clear_error(loom_context_t* context);

// Overrides, for the calling thread only, whether this context's ops run
// asynchronously (TensorFlow's per-thread executors). An asynchronous
// thread on a synchronous context still completes each op before execute
// returns, but reports its errors as an asynchronous one would.
LOOM_API void loom_context_set_thread_async(loom_context_t* context,
                                            bool async);
// Whether ops executed by the calling thread are asynchronous.
LOOM_API bool loom_context_thread_is_async(loom_context_t* context);

// How inputs on another device than the op's are treated (TensorFlow's
// TFE_ContextDevicePlacementPolicy; the values are equal). Loom's devices
// all share host memory, so inputs are always usable in place; the policy is
// recorded for the API's users.
typedef enum loom_placement_policy_t {
  LOOM_PLACEMENT_EXPLICIT = 0,
  LOOM_PLACEMENT_WARN = 1,
  LOOM_PLACEMENT_SILENT = 2,
  LOOM_PLACEMENT_SILENT_FOR_INT32 = 3,
} loom_placement_policy_t;

// The context's policy (default SILENT); `thread` sets or reads the calling
// thread's override instead (reading falls back to the context's).
LOOM_API void loom_context_set_placement_policy(loom_context_t* context,
                                                bool thread,
                                                loom_placement_policy_t policy);
LOOM_API loom_placement_policy_t
loom_context_placement_policy(loom_context_t* context);

//===----------------------------------------------------------------------===//
// Devices and handlers
//===----------------------------------------------------------------------===//

// Gives the context at least `count` CPU devices, CPU:0 .. CPU:count-1
// (TensorFlow's logical CPU devices): each added one is a cpu op handler of
// its own on the context's runtime, sharing its thread pool, so that ops
// placed on CPU:1 run beside those on CPU:0 as on separate devices. A count
// at or below the current one changes nothing; INVALID_ARGUMENT outside
// [1, 1024].
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_context_set_cpu_device_count(loom_context_t* context, int32_t count);

// Soft placement (TensorFlow's allow_soft_placement): an op placed on a
// device the context does not have runs on CPU:0 instead of failing.
LOOM_API void loom_context_set_soft_placement(loom_context_t* context,
                                              bool enable);
// Logs each op's device to stderr as it executes ("Executing op AddV2 in
// device /job:localhost/replica:0/task:0/device:CPU:0").
LOOM_API void loom_context_set_log_placement(loom_context_t* context,
                                             bool enable);

// Adds `handler` (a new reference is taken) under the next free name
// "/job:localhost/replica:0/task:0/device:<type>:<index>", written to
// *out_name (valid while the context lives; may be NULL).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_context_add_handler(loom_context_t* context, const char* type,
                         loom_op_handler_t* handler, const char** out_name);

// Adds `handler` under a full name of the form
// "/job:<job>/replica:<n>/task:<n>/device:<type>:<n>". INVALID_ARGUMENT for
// another form; ALREADY_EXISTS when the name is taken.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_context_add_named_handler(
    loom_context_t* context, const char* name, loom_op_handler_t* handler);

// The handler a device name designates: full, or partial as TensorFlow
// accepts them ("CPU:0", "/device:CPU:0", "cpu:0", "/job:localhost/...").
// NULL when none matches (borrowed).
LOOM_API loom_op_handler_t* loom_context_find_handler(loom_context_t* context,
                                                      const char* name);

// The full name of a handler of this context, or NULL (valid while the
// context lives).
LOOM_API const char* loom_context_handler_name(
    loom_context_t* context, const loom_op_handler_t* handler);

// Writes up to `capacity` device names (the handlers added so far, merges
// included) and returns how many there are.
LOOM_API size_t loom_context_list_handlers(loom_context_t* context,
                                           const char** names, size_t capacity);

// As loom_context_list_handlers, for devices only (final handlers: the CPU,
// custom devices), with their device types ("CPU") when `types` is not
// NULL.
LOOM_API size_t loom_context_list_devices(loom_context_t* context,
                                          const char** names,
                                          const char** types, size_t capacity);

// The device name of the handler a tensor lives on: its handler's
// device_name hook, else its name in the context. NULL when unknown.
LOOM_API const char* loom_context_device_name(
    loom_context_t* context, const loom_tensor_handle_t* handle);

// The context whose runtime the handler of `handle` belongs to, or NULL
// (a handle made without a context, or one whose context was destroyed).
LOOM_API loom_context_t* loom_context_of_handle(
    const loom_tensor_handle_t* handle);

//===----------------------------------------------------------------------===//
// Handler scopes (per thread)
//===----------------------------------------------------------------------===//

// Enters a scope in which ops run on `handler`. A transformation handler
// entered inside another is merged with it (its merge hook), so the scope
// entered last sees an op first and executes on the outer ones; merging
// the same pair again gives the same merged handler. Entering a merged
// handler re-opens its parts in order, skipping those already open. A
// device handler sets the device the stack ends on.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_context_enter_scope(loom_context_t* context, loom_op_handler_t* handler);

// Leaves the innermost scope entered on this thread (all the handlers one
// enter opened). FAILED_PRECONDITION when there is none.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_context_exit_scope(loom_context_t* context);

// The handler ops run on in this thread's current scope, or NULL outside
// any scope (borrowed).
LOOM_API loom_op_handler_t* loom_context_scope_handler(loom_context_t* context);

//===----------------------------------------------------------------------===//
// Eager ops
//===----------------------------------------------------------------------===//

// An op to execute, by registered op name. NOT_FOUND for an unknown name.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_eager_op_create(
    loom_context_t* context, const char* op_name, loom_eager_op_t** out_op);
LOOM_API void loom_eager_op_destroy(loom_eager_op_t* op);

// Ops for short-lived use, kept by the context between uses: acquire gives
// an idle op of that name (or a new one), recycle takes it back, reset (or
// destroys it when the context keeps enough). A code path that executes
// many transient ops (a gradient tape's backward pass) keeps its prepared
// ops, and so its kernels, from one run to the next. Thread-safe.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_eager_op_acquire(
    loom_context_t* context, const char* op_name, loom_eager_op_t** out_op);
LOOM_API void loom_eager_op_recycle(loom_eager_op_t* op);

// Makes the op new again (inputs, attributes, device and recorded error
// cleared) for `op_name` (NULL: the same op).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_eager_op_reset(loom_eager_op_t* op, const char* op_name);

// As reset, then places the op on `device_name` (NULL or "": no explicit
// placement). Reusing the previous device name keeps its lookup.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_eager_op_reset_placed(
    loom_eager_op_t* op, const char* op_name, const char* device_name);

// Records an error (consumed; the first is kept) that the next execute
// returns before doing anything: for setters that cannot return one.
LOOM_API void loom_eager_op_fail(loom_eager_op_t* op, loom_status_t error);

LOOM_API const char* loom_eager_op_name(const loom_eager_op_t* op);
LOOM_API const loom_op_def_t* loom_eager_op_def(const loom_eager_op_t* op);
LOOM_API loom_context_t* loom_eager_op_context(const loom_eager_op_t* op);

// Places the op explicitly ("" or NULL: no explicit placement). A malformed
// name is INVALID_ARGUMENT at once (the op keeps its device); whether a
// device of that name exists is checked when the op executes. An explicit
// placement wins over scopes and inputs.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_eager_op_set_device(loom_eager_op_t* op, const char* device_name);
LOOM_API const char* loom_eager_op_device(const loom_eager_op_t* op);

// Executions of the op from now on run under `cancellation` (retained; NULL
// for none; a reset clears it): an execution whose cancellation has started
// fails with CANCELLED ("Operation was cancelled"), at once or, for an op
// waiting for its inputs, when it would run (TensorFlow's
// TFE_OpSetCancellationManager).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_eager_op_set_cancellation(
    loom_eager_op_t* op, loom_cancellation_t* cancellation);

// Adds an input (a new reference is taken). INVALID_ARGUMENT "Invalid
// handle" for NULL.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_eager_op_add_input(loom_eager_op_t* op, loom_tensor_handle_t* handle);
// Adds inputs[0, count) as one list argument: the first variadic input
// argument whose length attr is still unset gets `count` as its length
// (TensorFlow's TFE_OpAddInputList). Nothing is added on error.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_eager_op_add_input_list(
    loom_eager_op_t* op, loom_tensor_handle_t* const* inputs, int32_t count);
LOOM_API int32_t loom_eager_op_num_inputs(const loom_eager_op_t* op);
// Input `index` (borrowed), or NULL out of range or when a previous
// execution consumed it (see loom_eager_op_execute).
LOOM_API loom_tensor_handle_t* loom_eager_op_input(const loom_eager_op_t* op,
                                                   int32_t index);

// The number of tensors the input (outputs == false) or output argument
// `arg_name` stands for with the attributes set so far (Split's `output`
// once num_split is set) or, failing that, as the inputs added so far
// complete them. INVALID_ARGUMENT for an unknown name ("Input 'x' not
// found", TensorFlow's words) and when its length is not known yet.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_eager_op_arg_length(loom_eager_op_t* op, bool outputs,
                         const char* arg_name, int32_t* out_length);

// The op's attributes: set them here (inferred ones and defaults are added
// at execution).
LOOM_API loom_op_attrs_t* loom_eager_op_attrs(loom_eager_op_t* op);

// Adds the entries of `attrs` the op does not have yet (TensorFlow's
// TFE_OpAddAttrs: existing values are kept).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_eager_op_add_attrs(loom_eager_op_t* op, const loom_op_attrs_t* attrs);

// The kind of attribute `attr_name` of registered op `op_name` and whether
// it is a list. NOT_FOUND for an unknown op; INVALID_ARGUMENT ("Attribute
// 'x' does not exist for this operation") for an unknown attribute.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_context_attr_kind(
    loom_context_t* context, const char* op_name, const char* attr_name,
    loom_attr_kind_t* out_kind, bool* out_is_list);

// Executes the op on the handler its placement picks — the explicit device,
// else the handler an input lives on (inputs on two different handlers are
// an error naming both), else the current scope's, else the CPU — copying
// inputs from devices onto a transformation handler (CopyOn) first.
// Writes up to `capacity` result handles (new references) and their count.
// The inputs stay the op's, except one that only the op still refers to:
// that one is handed to the execution, so that its buffer may be reused for
// a result (TensorFlow's forwarding); the op then no longer has it, and
// executing it again without adding it is FAILED_PRECONDITION.
// Synchronous contexts return the op's error; asynchronous ones report the
// errors of running the op at the next wait or resolve (the results are
// then error handles), and once an error is recorded, new ops fail with it
// until loom_context_clear_error.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_eager_op_execute(loom_eager_op_t* op, loom_tensor_handle_t** results,
                      int32_t capacity, int32_t* out_count);

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

// A handle on the CPU device holding `tensor` (retained).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_context_new_handle(loom_context_t* context, loom_tensor_t* tensor,
                        loom_tensor_handle_t** out_handle);

// The host tensor of a handle (a new reference): waits for it, and copies
// it off its handler first when it lives on a transformation handler.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_context_resolve(loom_context_t* context, loom_tensor_handle_t* handle,
                     loom_tensor_t** out_tensor);

// A handle with the same value on handler `target` (CopyOn / CopyOff as
// the handlers implement them; a device-to-device copy shares the buffer).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_context_copy_to(
    loom_context_t* context, loom_tensor_handle_t* handle,
    loom_op_handler_t* target, loom_tensor_handle_t** out_handle);

// For a transformation handler's execute hook passing `invocation` on to
// `target` (the handler it was merged with): copies onto `target` the
// arguments it needs there, as the front end does for the ops it places.
// Arguments already on `target`, device tensors when `target` is a device,
// and all arguments of an op `target` takes as they are
// (takes_foreign_inputs) stay. On failure the invocation is failed (its
// results are error handles, its arguments released) and the error
// returned.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_context_forward_arguments(
    loom_context_t* context, loom_op_handler_t* target,
    loom_op_invocation_t* invocation);

// A handle on the process-wide host CPU device, usable in every context as
// that context's CPU (TensorFlow's context-free TFE_NewTensorHandle).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_host_handle_create(
    loom_tensor_t* tensor, loom_tensor_handle_t** out_handle);

// The metadata of a handle, waiting for it when it is not known yet (the
// value, or the handler's tensor_metadata hook for its own tensors).
// Returns the handle's error if it has one.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_tensor_handle_wait_metadata(
    loom_tensor_handle_t* handle, loom_tensor_metadata_t* out_metadata);

// The dtype of a handle, without waiting when it is known (LOOM_DTYPE_INVALID
// for a failed handle).
LOOM_API loom_dtype_t loom_tensor_handle_dtype(loom_tensor_handle_t* handle);

// A value known without running anything (tf.get_static_value): an
// available device tensor, or what the handler's static_value hook gives
// for one of its own (a new reference). NOT_FOUND otherwise (still
// computing, or a handler that cannot tell).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_tensor_handle_static_value(
    loom_tensor_handle_t* handle, loom_tensor_t** out_tensor);

// A description of the tensor, like snprintf (returns the full length):
// its handler's tensor_debug_string, else the value as TFRT prints host
// tensors when it is available, else its dtype, shape and handler.
LOOM_API size_t loom_tensor_handle_debug_string(loom_tensor_handle_t* handle,
                                                char* buffer, size_t capacity);

//===----------------------------------------------------------------------===//
// Handler plugins
//===----------------------------------------------------------------------===//

// Loads a handler plugin (see loom/plugin.h): the library's registration
// entry points run (loom_plugin_load), then its LoomCreateOpHandler makes a
// handler for `context` with `options` (may be NULL), which is added to the
// context under its vtable's type name (loom_context_add_handler).
// *out_handler receives a new reference, *out_name (may be NULL) its
// device name. NOT_FOUND when the library does not export
// LoomCreateOpHandler; the entry point's error otherwise.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_context_load_handler(
    loom_context_t* context, const char* path, const char* options,
    loom_op_handler_t** out_handler, const char** out_name);

LOOM_EXTERN_C_END

#endif  // LOOM_EAGER_H_
