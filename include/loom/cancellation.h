// Cancellation of chosen work (TensorFlow's CancellationManager): a caller
// hands one to the ops it may want to stop, and starting it fails those
// that have not run yet with CANCELLED and runs the callbacks registered on
// it (work that can stop part way registers one). Unlike
// loom_host_context_cancel, it touches only the work given it.
//
// Thread-safe. Reference-counted: an op executing with one holds a
// reference until it has run.

#ifndef LOOM_CANCELLATION_H_
#define LOOM_CANCELLATION_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/allocator.h"
#include "loom/macros.h"
#include "loom/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_cancellation_t loom_cancellation_t;

// Names a callback; from loom_cancellation_new_token, never reused.
typedef int64_t loom_cancellation_token_t;

typedef void (*loom_cancellation_fn_t)(void* arg);

LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_cancellation_create(
    loom_allocator_t allocator, loom_cancellation_t** out_cancellation);
LOOM_API void loom_cancellation_retain(loom_cancellation_t* cancellation);
LOOM_API void loom_cancellation_release(loom_cancellation_t* cancellation);

// Starts cancelling: every registered callback runs once, on this thread,
// then the cancellation is cancelled. Starting again does nothing.
LOOM_API void loom_cancellation_start(loom_cancellation_t* cancellation);

// Whether loom_cancellation_start has finished (cancelled) or begun
// (cancelling). False for NULL.
LOOM_API bool loom_cancellation_is_cancelled(
    const loom_cancellation_t* cancellation);
LOOM_API bool loom_cancellation_is_cancelling(
    const loom_cancellation_t* cancellation);

// The CANCELLED error work stopped by `cancellation` reports, naming
// `what` (an op's name; may be NULL).
LOOM_API loom_status_t loom_cancellation_error(const char* what);

LOOM_API loom_cancellation_token_t
loom_cancellation_new_token(loom_cancellation_t* cancellation);

// Registers fn(arg) to run when cancellation starts. False, and nothing
// registered, when it has started already (the caller stops on its own), or
// the token is in use or out of memory.
LOOM_API bool loom_cancellation_register(loom_cancellation_t* cancellation,
                                         loom_cancellation_token_t token,
                                         loom_cancellation_fn_t fn, void* arg);

// Removes the callback of `token`. True when it was removed before it ran.
// False when cancellation started: the callback has run or is running, and
// deregister waits for the callbacks to finish, so that after it returns
// none of them runs (a callback must not deregister its own token this way:
// it would wait for itself; use try_deregister). try_deregister does not
// wait.
LOOM_API bool loom_cancellation_deregister(loom_cancellation_t* cancellation,
                                           loom_cancellation_token_t token);
LOOM_API bool loom_cancellation_try_deregister(
    loom_cancellation_t* cancellation, loom_cancellation_token_t token);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // LOOM_CANCELLATION_H_
