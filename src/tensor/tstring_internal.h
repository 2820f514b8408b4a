// Internal hooks of loom_tstring_t (see loom/tstring.h).

#ifndef LOOM_TENSOR_TSTRING_INTERNAL_H_
#define LOOM_TENSOR_TSTRING_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>

// Asked before each malloc/realloc of a string's LARGE bytes: false makes
// that allocation fail as if the C heap were exhausted.
typedef bool (*loom__tstring_allocation_gate_fn_t)(size_t size, void* context);

// Installs `gate` (NULL removes it) for every string in the process. LARGE
// bytes must come from malloc, because code TensorFlow's ctstring.h inlined
// into plugins frees them with free(): there is no allocator to inject
// failures through, so tests use this process-wide gate instead. Not
// thread-safe: set it only while no other thread touches strings.
void loom__tstring_set_allocation_gate(loom__tstring_allocation_gate_fn_t gate,
                                       void* context);

#endif  // LOOM_TENSOR_TSTRING_INTERNAL_H_
