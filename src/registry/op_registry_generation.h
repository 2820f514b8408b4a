// The registry generation: a count of the changes made to any op or kernel
// registry (a registration, an unregistration, a plugin's rollback). Caches
// of look-ups (prepared ops, kernel specialisations, the shape memos keyed
// by them) remember the generation they were filled at and look again once
// it moved: checking costs one load and one compare on the execute path.

#ifndef LOOM_REGISTRY_OP_REGISTRY_GENERATION_H_
#define LOOM_REGISTRY_OP_REGISTRY_GENERATION_H_

#include <stdatomic.h>
#include <stdint.h>

// Process-wide rather than per registry: a prepared op depends on an op
// registry and a kernel registry at once, and one counter keeps its check
// to one load. A change in an unrelated registry (a test's own) only makes
// the caches look once more.
// Declared hidden (the library is built with hidden visibility, but an
// extern declaration alone still makes the compiler go through the GOT):
// the execute path then reads it with one instruction.
extern __attribute__((
    visibility("hidden"))) _Atomic uint64_t loom__registry_generation_counter;

// The current generation. A cache records the value read *before* its
// look-up: a change made during the look-up then moves the generation past
// it.
static inline uint64_t loom__registry_generation(void) {
  return atomic_load_explicit(&loom__registry_generation_counter,
                              memory_order_acquire);
}

// Called after a registry changed (with the change visible to look-ups).
static inline void loom__registry_generation_advance(void) {
  atomic_fetch_add_explicit(&loom__registry_generation_counter, 1,
                            memory_order_acq_rel);
}

#endif  // LOOM_REGISTRY_OP_REGISTRY_GENERATION_H_
