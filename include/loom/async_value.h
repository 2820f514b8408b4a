// loom_async_value_t: a ref-counted future/promise, the unit of asynchrony
// in Loom (TFRT's AsyncValue).
//
// A value starts UNAVAILABLE, and is set exactly once, to AVAILABLE (its
// payload is written) or to ERROR (it carries a loom_status_t). Code that
// needs the value registers a continuation with loom_async_value_and_then:
// it runs exactly once, on the thread that sets the value, or at once on the
// caller's thread when the value is already set. Setting and adding
// continuations may race freely from any threads.
//
// The payload is stored inline, after the header; its layout is described by
// a loom_async_value_type_t. Chains (loom_async_value_type_chain) carry no
// payload: they only order side effects.

#ifndef LOOM_ASYNC_VALUE_H_
#define LOOM_ASYNC_VALUE_H_

#include <stdbool.h>
#include <stddef.h>

#include "loom/allocator.h"
#include "loom/macros.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_async_value_t loom_async_value_t;

typedef enum loom_async_value_state_t {
  LOOM_ASYNC_VALUE_UNAVAILABLE = 0,
  LOOM_ASYNC_VALUE_AVAILABLE = 2,
  LOOM_ASYNC_VALUE_ERROR = 3,
} loom_async_value_state_t;

// Describes a payload. Types are static constants compared by address.
typedef struct loom_async_value_type_t {
  const char* name;
  size_t payload_size;  // may be 0
  // Called once when an AVAILABLE value is destroyed; may be NULL.
  void (*destroy_payload)(void* payload);
} loom_async_value_type_t;

// The value-less type of chains.
LOOM_API extern const loom_async_value_type_t loom_async_value_type_chain;

// A continuation node. loom_async_value_and_then_node links a caller-owned
// node without allocating; the node must stay valid until `fn` runs, and
// `fn` may free it.
typedef struct loom_async_waiter_t {
  struct loom_async_waiter_t* next;  // owned by the async value while linked
  void (*fn)(void* arg);
  void* arg;
} loom_async_waiter_t;

// Creates an UNAVAILABLE value of `type` (payload_size at most 4096 bytes,
// aligned to 16). The caller holds one reference.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_async_value_create(
    loom_allocator_t allocator, const loom_async_value_type_t* type,
    loom_async_value_t** out_value);

// Creates a value already in the ERROR state. Consumes `error` (which must
// not be OK) even when creation fails.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_async_value_create_error(
    loom_allocator_t allocator, const loom_async_value_type_t* type,
    loom_status_t error, loom_async_value_t** out_value);

// Creates an UNAVAILABLE chain.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_async_value_create_chain(
    loom_allocator_t allocator, loom_async_value_t** out_chain);

LOOM_API void loom_async_value_retain(loom_async_value_t* value);
// Drops a reference; the last one destroys the value (and its payload or
// error). Continuations never run on an unset value that is destroyed.
LOOM_API void loom_async_value_release(loom_async_value_t* value);

// The current state, read with acquire ordering: after it returns AVAILABLE
// the payload is visible, after ERROR the error is.
LOOM_API loom_async_value_state_t
loom_async_value_state(const loom_async_value_t* value);

static inline bool loom_async_value_is_available(const loom_async_value_t* v) {
  return loom_async_value_state(v) == LOOM_ASYNC_VALUE_AVAILABLE;
}
static inline bool loom_async_value_is_error(const loom_async_value_t* v) {
  return loom_async_value_state(v) == LOOM_ASYNC_VALUE_ERROR;
}
// AVAILABLE or ERROR.
static inline bool loom_async_value_is_set(const loom_async_value_t* v) {
  return loom_async_value_state(v) != LOOM_ASYNC_VALUE_UNAVAILABLE;
}

LOOM_API const loom_async_value_type_t* loom_async_value_type(
    const loom_async_value_t* value);

// The inline payload. The producer writes it before set_available; readers
// read it only after observing AVAILABLE.
LOOM_API void* loom_async_value_payload(loom_async_value_t* value);

// The error of an ERROR value, borrowed: valid while the value lives. OK for
// any other state.
LOOM_API loom_status_t loom_async_value_error(const loom_async_value_t* value);

// Publishes the payload and runs the continuations. FAILED_PRECONDITION when
// the value was already set (the value is left unchanged).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_async_value_set_available(loom_async_value_t* value);

// Sets the ERROR state and runs the continuations. Consumes `error`, which
// must not be OK (INVALID_ARGUMENT). FAILED_PRECONDITION when already set.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_async_value_set_error(loom_async_value_t* value, loom_status_t error);

// Runs fn(arg) once the value is set: now, on this thread, when it already
// is. Allocates the continuation node from the value's allocator;
// RESOURCE_EXHAUSTED (and fn never runs) when that fails.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_async_value_and_then(
    loom_async_value_t* value, void (*fn)(void* arg), void* arg);

// As loom_async_value_and_then with a caller-owned node: never fails.
LOOM_API void loom_async_value_and_then_node(loom_async_value_t* value,
                                             loom_async_waiter_t* node);

LOOM_EXTERN_C_END

#endif  // LOOM_ASYNC_VALUE_H_
