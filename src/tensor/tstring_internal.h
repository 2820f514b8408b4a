// Internal hooks of loom_tstring_t (see loom/tstring.h).

#ifndef LOOM_TENSOR_TSTRING_INTERNAL_H_
#define LOOM_TENSOR_TSTRING_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>

// Asked before each malloc/realloc of a string's LARGE bytes: allow()
// returning false makes that allocation fail as if the C heap were
// exhausted.
typedef struct loom__tstring_allocation_gate_t {
  bool (*allow)(size_t size, void* context);
  void* context;
} loom__tstring_allocation_gate_t;

// Installs `gate` (not copied: it must stay valid until replaced; NULL
// removes it) for every string in the process. LARGE bytes must come from
// malloc, because code TensorFlow's ctstring.h inlined into plugins frees
// them with free(): there is no allocator to inject failures through, so
// tests use this process-wide gate instead.
void loom__tstring_set_allocation_gate(
    const loom__tstring_allocation_gate_t* gate);

#endif  // LOOM_TENSOR_TSTRING_INTERNAL_H_
