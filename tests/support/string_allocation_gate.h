// Fault sweeps over the LARGE bytes of strings, which come from malloc
// (see src/tensor/tstring_internal.h), not from the sweep's allocator: the
// gate asks that allocator for a block of the same size first and fails
// the malloc whenever it fails. Header-only: the gate is internal to the
// static library, which only some test executables link.

#ifndef LOOM_TESTS_SUPPORT_STRING_ALLOCATION_GATE_H_
#define LOOM_TESTS_SUPPORT_STRING_ALLOCATION_GATE_H_

#include <stdbool.h>

#include "loom/allocator.h"
#include "tensor/tstring_internal.h"

static inline bool loom_test_string_gate(size_t size, void* context) {
  loom_allocator_t* allocator = (loom_allocator_t*)context;
  void* probe = NULL;
  loom_status_t status = loom_allocator_malloc(*allocator, size, &probe);
  if (status) {
    loom_status_free(status);
    return false;
  }
  loom_allocator_free(*allocator, probe);
  return true;
}

// Until loom_test_ungate_strings, string allocations fail when *allocator
// does (it must outlive the gate).
static inline void loom_test_gate_strings(loom_allocator_t* allocator) {
  static loom__tstring_allocation_gate_t gate;
  gate.allow = loom_test_string_gate;
  gate.context = allocator;
  loom__tstring_set_allocation_gate(&gate);
}

static inline void loom_test_ungate_strings(void) {
  loom__tstring_set_allocation_gate(NULL);
}

#endif  // LOOM_TESTS_SUPPORT_STRING_ALLOCATION_GATE_H_
