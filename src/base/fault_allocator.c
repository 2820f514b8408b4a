// Fault-injecting allocator: counts allocations, fails the chosen one.

#include "loom/fault_allocator.h"

#include <stdatomic.h>

struct loom_fault_allocator_t {
  loom_allocator_t inner;
  _Atomic int64_t attempts;  // since the last fail_nth
  _Atomic int64_t fail_at;   // 1-based attempt number to fail; 0 = never
  _Atomic int64_t injected;
  _Atomic int64_t live;
};

static void* fault_allocate(void* self, size_t size, size_t alignment) {
  loom_fault_allocator_t* fault = self;
  int64_t attempt = atomic_fetch_add(&fault->attempts, 1) + 1;
  int64_t fail_at = atomic_load(&fault->fail_at);
  if (fail_at != 0 && attempt == fail_at) {
    atomic_fetch_add(&fault->injected, 1);
    return NULL;
  }
  void* ptr = fault->inner.allocate(fault->inner.self, size, alignment);
  if (ptr) atomic_fetch_add(&fault->live, 1);
  return ptr;
}

static void fault_deallocate(void* self, void* ptr) {
  loom_fault_allocator_t* fault = self;
  atomic_fetch_sub(&fault->live, 1);
  fault->inner.deallocate(fault->inner.self, ptr);
}

loom_status_t loom_fault_allocator_create(loom_allocator_t inner,
                                          loom_fault_allocator_t** out) {
  if (!out) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_fault_allocator_create: out is NULL");
  }
  *out = NULL;
  loom_fault_allocator_t* fault = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(inner, sizeof(*fault), (void**)&fault));
  fault->inner = inner;
  atomic_init(&fault->attempts, 0);
  atomic_init(&fault->fail_at, 0);
  atomic_init(&fault->injected, 0);
  atomic_init(&fault->live, 0);
  *out = fault;
  return loom_ok_status();
}

void loom_fault_allocator_destroy(loom_fault_allocator_t* fault) {
  if (!fault) return;
  loom_allocator_free(fault->inner, fault);
}

loom_allocator_t loom_fault_allocator_allocator(loom_fault_allocator_t* fault) {
  loom_allocator_t allocator = {.self = fault,
                                .allocate = fault_allocate,
                                .deallocate = fault_deallocate};
  return allocator;
}

void loom_fault_allocator_fail_nth(loom_fault_allocator_t* fault, int64_t n) {
  atomic_store(&fault->fail_at, n < 0 ? 0 : n);
  atomic_store(&fault->attempts, 0);
}

int64_t loom_fault_allocator_allocation_count(
    const loom_fault_allocator_t* fault) {
  return atomic_load(&((loom_fault_allocator_t*)fault)->attempts);
}

int64_t loom_fault_allocator_injected_failures(
    const loom_fault_allocator_t* fault) {
  return atomic_load(&((loom_fault_allocator_t*)fault)->injected);
}

int64_t loom_fault_allocator_live_count(const loom_fault_allocator_t* fault) {
  return atomic_load(&((loom_fault_allocator_t*)fault)->live);
}
