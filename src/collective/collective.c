// The backend collectives run on, and the names of their operations.

#include "collective/collective.h"

#include <stdatomic.h>
#include <stddef.h>

static _Atomic(const loom__collective_backend_t*) g_backend = NULL;

const loom__collective_backend_t* loom__collective_backend(void) {
  const loom__collective_backend_t* backend =
      atomic_load_explicit(&g_backend, memory_order_acquire);
  return backend ? backend : loom__collective_local_backend();
}

void loom__collective_set_backend(const loom__collective_backend_t* backend) {
  atomic_store_explicit(&g_backend, backend, memory_order_release);
}

loom_status_t loom__collective_all_reduce(
    const loom__collective_reduce_t* request, loom_tensor_t* output) {
  const loom__collective_backend_t* backend = loom__collective_backend();
  return backend->all_reduce(backend->state, request, output);
}

loom_status_t loom__collective_all_gather(
    const loom__collective_reduce_t* request, loom_tensor_t* output) {
  const loom__collective_backend_t* backend = loom__collective_backend();
  return backend->all_gather(backend->state, request, output);
}

loom_status_t loom__collective_reduce_scatter(
    const loom__collective_reduce_t* request, loom_tensor_t* output) {
  const loom__collective_backend_t* backend = loom__collective_backend();
  return backend->reduce_scatter(backend->state, request, output);
}

loom_status_t loom__collective_all_to_all(
    const loom__collective_reduce_t* request, loom_tensor_t* output) {
  const loom__collective_backend_t* backend = loom__collective_backend();
  return backend->all_to_all(backend->state, request, output);
}

loom_status_t loom__collective_broadcast(
    const loom__collective_reduce_t* request, bool is_sender,
    loom_tensor_t* data) {
  const loom__collective_backend_t* backend = loom__collective_backend();
  return backend->broadcast(backend->state, request, is_sender, data);
}

const char* loom__collective_merge_name(loom__collective_merge_t merge) {
  switch (merge) {
    case LOOM__COLLECTIVE_MERGE_MIN:
      return "Min";
    case LOOM__COLLECTIVE_MERGE_MAX:
      return "Max";
    case LOOM__COLLECTIVE_MERGE_MUL:
      return "Mul";
    case LOOM__COLLECTIVE_MERGE_ADD:
      return "Add";
  }
  return "?";
}

const char* loom__collective_final_name(loom__collective_final_t final_op) {
  return final_op == LOOM__COLLECTIVE_FINAL_DIV ? "Div" : "Id";
}
