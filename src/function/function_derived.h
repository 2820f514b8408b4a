// Functions derived from another, kept by a context's function library
// (function_library.c): a call's backward function, made once per key (the
// call's input dtypes and shapes and what is differentiated) and called by
// name like any function. A derived function is in the library under its
// own name, found again by its base function and the key, and removed with
// its base (and what was derived from it in turn).

#ifndef LOOM_FUNCTION_FUNCTION_DERIVED_H_
#define LOOM_FUNCTION_FUNCTION_DERIVED_H_

#include <stdbool.h>
#include <stddef.h>

#include "loom/eager.h"
#include "loom/function.h"

// The function derived from `base` under `key` (`size` bytes) in
// `context`'s library: *out_found tells whether there is an entry, and
// *out_derived is a new reference to its function, or NULL when the entry
// records that none could be made. An entry whose function was removed from
// the library meanwhile is dropped (not found).
void loom__function_library_find_derived(loom_context_t* context,
                                         const loom_function_t* base,
                                         const void* key, size_t size,
                                         bool* out_found,
                                         loom_function_t** out_derived);

// Adds `derived` (retained, and added to the library under its name; NULL:
// none can be made for this key) as the function derived from `base` (in
// the library) under `key`. When another thread added one meanwhile,
// *out_derived is that one; else `derived`; a new reference either way
// (NULL for an entry without a function). RESOURCE_EXHAUSTED past a
// base's limit of entries, FAILED_PRECONDITION when `base` is no longer in
// the library.
loom_status_t loom__function_library_add_derived(loom_context_t* context,
                                                 loom_function_t* base,
                                                 const void* key, size_t size,
                                                 loom_function_t* derived,
                                                 loom_function_t** out_derived);

// Counts a backward function made for `base`, or a gradient that found
// one (loom_function_stats_t).
void loom__function_count_backward(loom_function_t* base, bool built);

#endif  // LOOM_FUNCTION_FUNCTION_DERIVED_H_
