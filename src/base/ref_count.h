// Atomic reference counts for Loom's heap objects.
//
// Increments are relaxed (a new reference is always made from an existing
// one); the final decrement is acquire-release so the thread that destroys
// an object sees every write made through the other references.

#ifndef LOOM_BASE_REF_COUNT_H_
#define LOOM_BASE_REF_COUNT_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct loom__ref_count_t {
  _Atomic uint32_t value;
} loom__ref_count_t;

static inline void loom__ref_count_init(loom__ref_count_t* count) {
  atomic_init(&count->value, 1);
}

static inline void loom__ref_count_inc(loom__ref_count_t* count) {
  atomic_fetch_add_explicit(&count->value, 1, memory_order_relaxed);
}

// Returns true when this was the last reference: the caller destroys.
// A count of one needs no locked instruction: the caller holds the only
// reference, so nobody else can add one (they would need one to copy), and
// the acquire load still orders this thread after every earlier release.
static inline bool loom__ref_count_dec(loom__ref_count_t* count) {
  if (atomic_load_explicit(&count->value, memory_order_acquire) == 1) {
    return true;
  }
  return atomic_fetch_sub_explicit(&count->value, 1, memory_order_acq_rel) == 1;
}

// True when the caller holds the only reference. Acquire, so a caller that
// then reuses the object sees all writes made by released references.
static inline bool loom__ref_count_is_one(const loom__ref_count_t* count) {
  return atomic_load_explicit(&((loom__ref_count_t*)count)->value,
                              memory_order_acquire) == 1;
}

static inline uint32_t loom__ref_count_get(const loom__ref_count_t* count) {
  return atomic_load_explicit(&((loom__ref_count_t*)count)->value,
                              memory_order_relaxed);
}

#endif  // LOOM_BASE_REF_COUNT_H_
