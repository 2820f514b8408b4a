// Async value internals for the layers above the host runtime: values made
// inside a larger block (a tensor handle carries its value in its own
// allocation, so a result handle costs one allocation rather than two), and
// the uniqueness test that lets the core runtime move a tensor out of a
// value nobody else sees.

#ifndef LOOM_HOST_ASYNC_VALUE_INTERNAL_H_
#define LOOM_HOST_ASYNC_VALUE_INTERNAL_H_

#include "loom/async_value.h"

// Creates an UNAVAILABLE value at the end of a block that starts with
// `prefix_size` bytes for the caller (*out_prefix, 16-byte aligned). The
// block is freed when the value's last reference goes: whatever lives in the
// prefix must be done with it by then. `allocator` has both functions (the
// caller's owner checked it when it was given).
loom_status_t loom__async_value_create_with_prefix(
    loom_allocator_t allocator, const loom_async_value_type_t* type,
    size_t prefix_size, loom_async_value_t** out_value, void** out_prefix);

// Sets an UNAVAILABLE value available and drops the caller's reference
// before running the continuations: a consumer that runs in one then sees
// the value as its producer left it — held by the handles alone — and may
// move the payload out (buffer forwarding). The value must not be set.
void loom__async_value_set_available_and_release(loom_async_value_t* value);

// Sets a value that no other thread can reach yet (no continuations, no
// other setter: a result made and computed inside one Execute call)
// available without a locked instruction.
void loom__async_value_set_available_unshared(loom_async_value_t* value);

// Drops a reference to a value whose payload is one pointer (not NULL).
// When it was the last and the value is available, returns that pointer
// rather than destroying the payload: the caller then owns what it points
// to (a tensor handle releases its tensor without the type's indirect
// destroy call). NULL otherwise.
void* loom__async_value_release_taking_pointer(loom_async_value_t* value);

// Whether the caller holds the only reference (acquire).
bool loom__async_value_is_unique(const loom_async_value_t* value);

#endif  // LOOM_HOST_ASYNC_VALUE_INTERNAL_H_
