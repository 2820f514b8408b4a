// A fault-injecting allocator for tests: it wraps another allocator, counts
// allocations and live blocks, and makes a chosen allocation fail.
//
// The classic sweep (as SQLite does it): run an operation once to count its
// allocations N, then for i in 1..N run it again with the i-th allocation
// failing, and check that it returns an error and leaves no live block.

#ifndef LOOM_FAULT_ALLOCATOR_H_
#define LOOM_FAULT_ALLOCATOR_H_

#include <stdint.h>

#include "loom/allocator.h"
#include "loom/macros.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_fault_allocator_t loom_fault_allocator_t;

// Creates a fault allocator over `inner` (its own state is allocated from
// `inner`). Thread-safe: allocations may come from any thread.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_fault_allocator_create(
    loom_allocator_t inner, loom_fault_allocator_t** out_fault_allocator);

// Destroys it. Blocks still live stay owned by `inner`'s memory.
LOOM_API void loom_fault_allocator_destroy(loom_fault_allocator_t* fault);

// The allocator to hand to the code under test.
LOOM_API loom_allocator_t
loom_fault_allocator_allocator(loom_fault_allocator_t* fault);

// Makes the n-th allocation from now (1-based) fail, once; 0 disables.
// Also resets the allocation count to 0.
LOOM_API void loom_fault_allocator_fail_nth(loom_fault_allocator_t* fault,
                                            int64_t n);

// Allocations attempted since the last fail_nth call (failed ones included).
LOOM_API int64_t
loom_fault_allocator_allocation_count(const loom_fault_allocator_t* fault);

// Allocations that failed on purpose since creation.
LOOM_API int64_t
loom_fault_allocator_injected_failures(const loom_fault_allocator_t* fault);

// Blocks allocated and not yet freed.
LOOM_API int64_t
loom_fault_allocator_live_count(const loom_fault_allocator_t* fault);

LOOM_EXTERN_C_END

#endif  // LOOM_FAULT_ALLOCATOR_H_
