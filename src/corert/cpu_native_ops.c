// The cpu handler's native ops: ops registered on one cpu handler with a
// dispatch function of their own (and a metadata function), found by name
// when the handler prepares an op.

#include <string.h>

#include "corert/cpu_op_handler_internal.h"
#include "loom/cpu_op_handler.h"

typedef cpu_native_op_t native_op_t;

native_op_t* loom__cpu_find_native(cpu_state_t* cpu, const char* name) {
  uint64_t head = 0;
  pthread_rwlock_rdlock(&cpu->lock);
  native_op_t* found = NULL;
  if (loom__hash_map_find(&cpu->natives, loom__hash_bytes(name, strlen(name)),
                          &head)) {
    for (native_op_t* op = (native_op_t*)(uintptr_t)head; op; op = op->next) {
      if (strcmp(op->name, name) == 0) {
        found = op;
        break;
      }
    }
  }
  pthread_rwlock_unlock(&cpu->lock);
  return found;
}

loom_status_t loom__cpu_check_handler(loom_op_handler_t* cpu,
                                      const char* function) {
  if (!cpu || !loom__is_cpu_handler(cpu)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: the handler is not a cpu handler", function);
  }
  return loom_ok_status();
}

// Finds or adds the native entry for `name`.
static loom_status_t native_entry(cpu_state_t* cpu, const char* name,
                                  native_op_t** out) {
  uint64_t hash = loom__hash_bytes(name, strlen(name));
  uint64_t head = 0;
  loom__hash_map_find(&cpu->natives, hash, &head);
  for (native_op_t* op = (native_op_t*)(uintptr_t)head; op; op = op->next) {
    if (strcmp(op->name, name) == 0) {
      *out = op;
      return loom_ok_status();
    }
  }
  native_op_t* op = NULL;
  size_t length = strlen(name);
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      cpu->allocator, sizeof(*op) + length + 1, (void**)&op));
  op->name = (char*)(op + 1);
  memcpy(op->name, name, length + 1);
  op->next = (native_op_t*)(uintptr_t)head;
  loom_status_t status =
      loom__hash_map_insert(&cpu->natives, hash, (uint64_t)(uintptr_t)op);
  if (status) {
    loom_allocator_free(cpu->allocator, op);
    return status;
  }
  *out = op;
  return loom_ok_status();
}

loom_status_t loom_cpu_op_handler_add_op(loom_op_handler_t* cpu,
                                         const char* op_name,
                                         loom_cpu_dispatch_fn_t dispatch,
                                         uint32_t flags) {
  LOOM_RETURN_IF_ERROR(
      loom__cpu_check_handler(cpu, "loom_cpu_op_handler_add_op"));
  if (!op_name || !dispatch) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_cpu_op_handler_add_op: %s is NULL",
                            !op_name ? "op_name" : "dispatch");
  }
  cpu_state_t* state = cpu->state;
  pthread_rwlock_wrlock(&state->lock);
  native_op_t* op = NULL;
  loom_status_t status = native_entry(state, op_name, &op);
  if (!status && op->dispatch) {
    status = loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                              "op '%s' is already registered on the cpu "
                              "handler",
                              op_name);
  }
  if (!status) {
    op->dispatch = dispatch;
    op->flags = flags;
  }
  pthread_rwlock_unlock(&state->lock);
  return status;
}

loom_status_t loom_cpu_op_handler_add_metadata_fn(
    loom_op_handler_t* cpu, const char* op_name,
    loom_cpu_metadata_fn_t metadata_fn) {
  LOOM_RETURN_IF_ERROR(
      loom__cpu_check_handler(cpu, "loom_cpu_op_handler_add_metadata_fn"));
  if (!op_name || !metadata_fn) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_cpu_op_handler_add_metadata_fn: %s is NULL",
                            !op_name ? "op_name" : "metadata_fn");
  }
  cpu_state_t* state = cpu->state;
  pthread_rwlock_wrlock(&state->lock);
  native_op_t* op = NULL;
  loom_status_t status = native_entry(state, op_name, &op);
  if (!status && op->metadata) {
    status =
        loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                         "op '%s' already has a metadata function", op_name);
  }
  if (!status) op->metadata = metadata_fn;
  pthread_rwlock_unlock(&state->lock);
  return status;
}

loom_status_t loom_cpu_set_result(loom_async_value_t* result,
                                  loom_tensor_t* tensor) {
  if (!result || !tensor) {
    loom_tensor_release(tensor);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_cpu_set_result: %s is NULL",
                            !result ? "result" : "tensor");
  }
  if (loom_async_value_type(result) != &loom_async_value_type_tensor ||
      loom_async_value_is_set(result)) {
    loom_tensor_release(tensor);
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "loom_cpu_set_result: the result is not an unset "
                            "tensor value");
  }
  *(loom_tensor_t**)loom_async_value_payload(result) = tensor;
  return loom_async_value_set_available(result);
}
