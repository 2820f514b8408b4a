// loom_buffer_t: a ref-counted block of host memory that tensors share.
//
// A buffer either owns memory Loom allocated (64-byte aligned, one
// allocation with the header) or wraps memory the caller provides together
// with a deallocator, which is called exactly once, when the last reference
// goes away (or at once, when wrapping fails).

#ifndef LOOM_BUFFER_H_
#define LOOM_BUFFER_H_

#include <stdbool.h>
#include <stddef.h>

#include "loom/allocator.h"
#include "loom/macros.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_buffer_t loom_buffer_t;

// Frees wrapped memory: (data, size) as given to loom_buffer_wrap, and arg.
typedef void (*loom_buffer_deallocator_fn_t)(void* data, size_t size,
                                             void* arg);

// Allocates `size` uninitialised bytes aligned to `alignment` (a power of two;
// 0 means LOOM_DEFAULT_DATA_ALIGNMENT). The caller holds one reference.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_buffer_allocate(loom_allocator_t allocator, size_t size, size_t alignment,
                     loom_buffer_t** out_buffer);

// Wraps caller memory. Takes ownership of `data` in every case: on failure
// the deallocator (if any) has been called before this returns. A NULL
// deallocator means the memory outlives the buffer.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_buffer_wrap(loom_allocator_t allocator, void* data, size_t size,
                 loom_buffer_deallocator_fn_t deallocator,
                 void* deallocator_arg, loom_buffer_t** out_buffer);

LOOM_API void loom_buffer_retain(loom_buffer_t* buffer);
LOOM_API void loom_buffer_release(loom_buffer_t* buffer);

LOOM_API void* loom_buffer_data(const loom_buffer_t* buffer);
LOOM_API size_t loom_buffer_size(const loom_buffer_t* buffer);

// True when the caller holds the only reference: a kernel may then reuse the
// memory for its output.
LOOM_API bool loom_buffer_is_unique(const loom_buffer_t* buffer);

// True for memory Loom allocated (wrapped caller memory is never reused).
LOOM_API bool loom_buffer_owns_memory(const loom_buffer_t* buffer);

LOOM_EXTERN_C_END

#endif  // LOOM_BUFFER_H_
