// The core runtime (TFRT's CoreRuntime): op-by-op execution on op
// handlers, with async tensor handles whose metadata is known at once.
//
//   loom_runtime_execute(runtime, "AddV2", cpu, location, args, 2, &attrs,
//                        results, 1, NULL);
//
// runs the op's metadata function synchronously (an invalid shape or dtype
// is an error right away, at `location`), fills the result handles with
// their metadata, and dispatches the kernel when the arguments are
// available: inline on the calling thread for cheap ops whose inputs are
// ready, on the host thread pool otherwise. Execute takes ownership of the
// argument handles (their slots are set to NULL); keep a handle by
// retaining it first. A failing op makes error handles: ops that consume
// them do not run and pass the same error on, and the diagnostic handler is
// called once, for the op where the error arose. Thread-safe.

#ifndef LOOM_RUNTIME_H_
#define LOOM_RUNTIME_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/async_value.h"
#include "loom/host_context.h"
#include "loom/kernel.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/op_def.h"
#include "loom/status.h"
#include "loom/tensor.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_runtime_t loom_runtime_t;
typedef struct loom_op_handler_t loom_op_handler_t;
typedef struct loom_tensor_handle_t loom_tensor_handle_t;
typedef struct loom_prepared_op_t loom_prepared_op_t;

// An opaque source location chosen by the client (a Python frame, a
// line:column of a program file...). Only the diagnostic handler reads it.
typedef struct loom_location_t {
  uint64_t token;
} loom_location_t;

// What the diagnostic handler receives: where the error arose (decode the
// token into file:line:column) and the error itself (borrowed).
typedef struct loom_diagnostic_t {
  loom_location_t location;
  loom_status_t error;
  const char* op_name;
} loom_diagnostic_t;

// Called once per error at its origin, on whichever thread found it.
typedef void (*loom_diagnostic_handler_t)(void* user_data,
                                          const loom_diagnostic_t* diagnostic);

typedef struct loom_runtime_options_t {
  loom_host_context_t* host;  // required; must outlive the runtime's objects
  loom_diagnostic_handler_t diagnostic_handler;  // may be NULL
  void* diagnostic_user_data;
  loom_op_registry_t* ops;          // NULL: the global op registry
  loom_kernel_registry_t* kernels;  // NULL: the global kernel registry
  // Debugging and benchmarking: every op completes before Execute returns.
  bool synchronous;
  // Ops whose inputs hold at most this many elements in all run inline when
  // their inputs are ready (0: the default, 16384; negative: never inline).
  int64_t inline_element_limit;
  // The object the runtime works for (an eager context), for code that
  // reaches the runtime only through a handle: see loom_runtime_owner.
  // `owner_kind` tells owners of different types apart: the address of
  // something the owner's module defines once. Both may be NULL.
  const void* owner_kind;
  void* owner;
} loom_runtime_options_t;

LOOM_API void loom_runtime_options_initialize(loom_runtime_options_t* options,
                                              loom_host_context_t* host);

// Creates a runtime with the "cpu" and "null" op handlers registered (cpu
// falls back to null for ops it does not know).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_runtime_create(
    const loom_runtime_options_t* options, loom_runtime_t** out_runtime);

// Waits for pending work, then drops the runtime's own references (its
// handler registry and prepared ops). Handles, handlers and prepared ops
// still referenced elsewhere stay valid until released; the memory goes
// with the last of them. The host context must outlive them all.
LOOM_API void loom_runtime_destroy(loom_runtime_t* runtime);

LOOM_API loom_host_context_t* loom_runtime_host(const loom_runtime_t* runtime);

// The owner given at creation if it is of `owner_kind`, until
// loom_runtime_destroy (handles may keep the runtime's memory longer, not
// its owner); NULL otherwise.
LOOM_API void* loom_runtime_owner(const loom_runtime_t* runtime,
                                  const void* owner_kind);
LOOM_API loom_op_registry_t* loom_runtime_ops(const loom_runtime_t* runtime);
LOOM_API loom_kernel_registry_t* loom_runtime_kernels(
    const loom_runtime_t* runtime);

// Handlers by name ("cpu", "null", ...). register takes a new reference;
// ALREADY_EXISTS for a name in use. get returns a borrowed pointer or NULL.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_runtime_register_op_handler(
    loom_runtime_t* runtime, const char* name, loom_op_handler_t* handler);
LOOM_API loom_op_handler_t* loom_runtime_get_op_handler(loom_runtime_t* runtime,
                                                        const char* name);

// Resolves an op on a handler once (TFRT's MakeOp), so that executing it
// does no string lookups. NOT_FOUND when neither the handler nor its
// fallbacks know the op. The prepared op holds references to the handler.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_runtime_prepare_op(
    loom_runtime_t* runtime, const char* op_name, loom_op_handler_t* handler,
    loom_prepared_op_t** out_op);

// As loom_runtime_prepare_op, but on a final handler (the cpu handler) a
// stateless op is prepared once per runtime and the same prepared op is
// returned again (a new reference each time): what a handler that passes
// ops on to the handler below it, or a short-lived eager op, should use so
// that a new tape or backward pass finds its kernels ready. Stateful ops
// and other handlers get a new prepared op, as loom_runtime_prepare_op.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_runtime_prepare_op_shared(
    loom_runtime_t* runtime, const char* op_name, loom_op_handler_t* handler,
    loom_prepared_op_t** out_op);
// As loom_runtime_prepare_op_shared for `sibling`'s op, on `handler`: when
// `handler` is of the same type as the handler `sibling` was prepared on
// and takes its op data (the reuse_op_data hook), nothing is looked up or
// prepared again. An eager op run under a new handler of the type it last
// ran under (a new gradient tape each step) prepares itself this way.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_runtime_prepare_op_like(
    loom_prepared_op_t* sibling, loom_op_handler_t* handler,
    loom_prepared_op_t** out_op);
LOOM_API void loom_prepared_op_retain(loom_prepared_op_t* op);
LOOM_API void loom_prepared_op_release(loom_prepared_op_t* op);
LOOM_API const char* loom_prepared_op_name(const loom_prepared_op_t* op);

// Executes a prepared op. arguments[0, num_arguments) are consumed (set to
// NULL); results[0, num_results) receive new handles — always, error
// handles when the op fails. `chain` (may be NULL) orders side effects:
// the op waits for *chain and replaces it with a chain that becomes
// available when the op is done. Returns the error the op's metadata
// function (or argument checking) reported synchronously, or OK; dispatch
// errors arrive later in the result handles.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_runtime_execute_prepared(
    loom_prepared_op_t* op, loom_location_t location,
    loom_tensor_handle_t** arguments, int32_t num_arguments,
    const loom_op_attrs_t* attrs, loom_tensor_handle_t** results,
    int32_t num_results, loom_async_value_t** chain);

// Executes `invocation` (op, location, arguments, attrs, results, chain and
// cancellation set, notes NULL) with loom_runtime_execute_prepared's
// contract: the form for callers that pass a cancellation. An invocation
// whose cancellation is cancelled already fails with CANCELLED; one
// cancelled before its kernel starts (a dispatch waiting for inputs) fails
// with CANCELLED then.
typedef struct loom_op_invocation_t loom_op_invocation_t;
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_runtime_execute_invocation(loom_op_invocation_t* invocation);

// Prepares `op_name` on `handler` and executes it.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_runtime_execute(
    loom_runtime_t* runtime, const char* op_name, loom_op_handler_t* handler,
    loom_location_t location, loom_tensor_handle_t** arguments,
    int32_t num_arguments, const loom_op_attrs_t* attrs,
    loom_tensor_handle_t** results, int32_t num_results,
    loom_async_value_t** chain);

// Waits until every op executed so far has finished.
LOOM_API void loom_runtime_quiesce(loom_runtime_t* runtime);

// Counters (tests and benchmarks). A pseudo handler that executes an op on
// the handler it wraps counts once itself and once through the wrapped one.
typedef struct loom_runtime_statistics_t {
  int64_t ops_executed;     // inline + enqueued + failed before dispatch
  int64_t ops_inline;       // run on the calling thread during Execute
  int64_t ops_enqueued;     // waited for inputs or ran on the thread pool
  int64_t errors_reported;  // diagnostic handler calls
} loom_runtime_statistics_t;

LOOM_API loom_runtime_statistics_t
loom_runtime_statistics(const loom_runtime_t* runtime);

LOOM_EXTERN_C_END

#endif  // LOOM_RUNTIME_H_
