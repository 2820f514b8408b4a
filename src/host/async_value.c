// Async values: a ref-counted header, an inline payload, and one atomic word
// that packs the state (low two bits) with the head of the waiter list.
//
// States: UNAVAILABLE (0) -> SETTING (1) -> AVAILABLE (2) | ERROR (3).
// SETTING is private: it lets exactly one setter claim the value and write
// the payload or error while continuations may still be pushed. The final
// exchange publishes the result (release) and detaches the waiter list,
// whose nodes then run in the order they were added.

#include "loom/async_value.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base/allocator_internal.h"
#include "base/ref_count.h"
#include "host/async_value_internal.h"

enum {
  kStateUnavailable = 0,
  kStateSetting = 1,
  kStateAvailable = LOOM_ASYNC_VALUE_AVAILABLE,
  kStateError = LOOM_ASYNC_VALUE_ERROR,
  kStateMask = 3,
  kMaxPayloadSize = 4096,
};

struct loom_async_value_t {
  loom__ref_count_t ref_count;
  _Atomic uintptr_t waiters_and_state;
  const loom_async_value_type_t* type;
  loom_status_t error;  // valid in the ERROR state
  loom_allocator_t allocator;
  void* block;  // what to free: the value, or the block it was made inside
  alignas(16) unsigned char payload[];
};

const loom_async_value_type_t loom_async_value_type_chain = {
    .name = "chain",
    .payload_size = 0,
    .destroy_payload = NULL,
};

static loom_status_t check_type(const char* name,
                                const loom_async_value_type_t* type) {
  if (!type) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: type is NULL",
                            name);
  }
  if (type->payload_size > kMaxPayloadSize) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: payload of type '%s' is %zu bytes, more than the %d allowed", name,
        type->name ? type->name : "?", type->payload_size, kMaxPayloadSize);
  }
  return loom_ok_status();
}

static size_t round_up(size_t value, size_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

// GCC 12 at -O3 reports a false -Wstringop-overflow on the atomic stores
// into a block that comes back through the allocator's function pointer.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static loom_status_t check_allocator(loom_allocator_t allocator) {
  if (!allocator.allocate || !allocator.deallocate) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "async value: the allocator has no allocate or "
                            "deallocate function");
  }
  return loom_ok_status();
}

// `allocator` was checked (check_allocator), here or where the caller got it.
static loom_status_t allocate_value(loom_allocator_t allocator,
                                    const loom_async_value_type_t* type,
                                    uintptr_t initial_state, size_t prefix_size,
                                    loom_async_value_t** out_value,
                                    void** out_prefix) {
  size_t value_at = round_up(prefix_size, 16);
  char* block = NULL;
  LOOM_RETURN_IF_ERROR(loom__allocate(
      allocator, value_at + sizeof(loom_async_value_t) + type->payload_size, 16,
      (void**)&block));
  loom_async_value_t* value = (loom_async_value_t*)(block + value_at);
  loom__ref_count_init(&value->ref_count);
  atomic_init(&value->waiters_and_state, initial_state);
  value->type = type;
  value->error = loom_ok_status();
  value->allocator = allocator;
  value->block = block;
  *out_value = value;
  if (out_prefix) *out_prefix = block;
  return loom_ok_status();
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

void loom__async_value_set_available_unshared(loom_async_value_t* value) {
  atomic_store_explicit(&value->waiters_and_state, kStateAvailable,
                        memory_order_release);
}

bool loom__async_value_is_unique(const loom_async_value_t* value) {
  return loom__ref_count_is_one(&value->ref_count);
}

loom_status_t loom__async_value_create_with_prefix(
    loom_allocator_t allocator, const loom_async_value_type_t* type,
    size_t prefix_size, loom_async_value_t** out_value, void** out_prefix) {
  return allocate_value(allocator, type, kStateUnavailable, prefix_size,
                        out_value, out_prefix);
}

loom_status_t loom_async_value_create(loom_allocator_t allocator,
                                      const loom_async_value_type_t* type,
                                      loom_async_value_t** out_value) {
  if (!out_value) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_async_value_create: out_value is NULL");
  }
  *out_value = NULL;
  LOOM_RETURN_IF_ERROR(check_type("loom_async_value_create", type));
  LOOM_RETURN_IF_ERROR(check_allocator(allocator));
  return allocate_value(allocator, type, kStateUnavailable, 0, out_value, NULL);
}

loom_status_t loom_async_value_create_chain(loom_allocator_t allocator,
                                            loom_async_value_t** out_chain) {
  return loom_async_value_create(allocator, &loom_async_value_type_chain,
                                 out_chain);
}

loom_status_t loom_async_value_create_error(loom_allocator_t allocator,
                                            const loom_async_value_type_t* type,
                                            loom_status_t error,
                                            loom_async_value_t** out_value) {
  loom_status_t status = loom_ok_status();
  if (!out_value) {
    status =
        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                         "loom_async_value_create_error: out_value is NULL");
  } else if (error == NULL) {
    *out_value = NULL;
    status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_async_value_create_error: the error status is OK");
  } else {
    *out_value = NULL;
    status = check_type("loom_async_value_create_error", type);
    if (!status) status = check_allocator(allocator);
    if (!status) {
      status = allocate_value(allocator, type, kStateError, 0, out_value, NULL);
    }
  }
  if (status) {
    loom_status_free(error);
    return status;
  }
  (*out_value)->error = error;
  return loom_ok_status();
}

void loom_async_value_retain(loom_async_value_t* value) {
  if (value) loom__ref_count_inc(&value->ref_count);
}

static void and_then_trampoline(void* arg);

// Frees a value whose last reference is gone (`word`: its state word).
static void destroy_value(loom_async_value_t* value, uintptr_t word) {
  switch (word & kStateMask) {
    case kStateAvailable:
      if (value->type->destroy_payload) {
        value->type->destroy_payload(value->payload);
      }
      break;
    case kStateError:
      loom_status_free(value->error);
      break;
    default: {
      // Never set: drop the continuations without running them, freeing
      // the nodes this file allocated.
      loom_async_waiter_t* node =
          (loom_async_waiter_t*)(word & ~(uintptr_t)kStateMask);
      while (node) {
        loom_async_waiter_t* next = node->next;
        if (node->fn == and_then_trampoline) {
          loom_allocator_free(value->allocator, node);
        }
        node = next;
      }
      break;
    }
  }
  loom__deallocate(value->allocator, value->block);
}

void loom_async_value_release(loom_async_value_t* value) {
  if (!value || !loom__ref_count_dec(&value->ref_count)) return;
  destroy_value(value, atomic_load_explicit(&value->waiters_and_state,
                                            memory_order_acquire));
}

void* loom__async_value_release_taking_pointer(loom_async_value_t* value) {
  if (!loom__ref_count_dec(&value->ref_count)) return NULL;
  uintptr_t word =
      atomic_load_explicit(&value->waiters_and_state, memory_order_acquire);
  if (LOOM_LIKELY((word & kStateMask) == kStateAvailable)) {
    void* pointer = NULL;
    memcpy(&pointer, value->payload, sizeof(pointer));
    loom__deallocate(value->allocator, value->block);
    return pointer;
  }
  destroy_value(value, word);  // not available: no payload to take
  return NULL;
}

loom_async_value_state_t loom_async_value_state(
    const loom_async_value_t* value) {
  uintptr_t word = atomic_load_explicit(
      &((loom_async_value_t*)value)->waiters_and_state, memory_order_acquire);
  uintptr_t state = word & kStateMask;
  if (state == kStateSetting) return LOOM_ASYNC_VALUE_UNAVAILABLE;
  return (loom_async_value_state_t)state;
}

const loom_async_value_type_t* loom_async_value_type(
    const loom_async_value_t* value) {
  return value->type;
}

void* loom_async_value_payload(loom_async_value_t* value) {
  return value->payload;
}

loom_status_t loom_async_value_error(const loom_async_value_t* value) {
  if (loom_async_value_state(value) != LOOM_ASYNC_VALUE_ERROR) {
    return loom_ok_status();
  }
  return value->error;
}

// Moves UNAVAILABLE -> SETTING, keeping the waiter list. Fails when another
// setter got there first.
static bool claim(loom_async_value_t* value) {
  uintptr_t word =
      atomic_load_explicit(&value->waiters_and_state, memory_order_relaxed);
  for (;;) {
    if ((word & kStateMask) != kStateUnavailable) return false;
    uintptr_t claimed = (word & ~(uintptr_t)kStateMask) | kStateSetting;
    if (atomic_compare_exchange_weak_explicit(&value->waiters_and_state, &word,
                                              claimed, memory_order_acquire,
                                              memory_order_relaxed)) {
      return true;
    }
  }
}

// Publishes the final state and runs the detached continuations in the order
// they were added.
// `release_first`: drop the caller's reference once the state is
// published, before the continuations run (they must not need it).
static void publish(loom_async_value_t* value, uintptr_t state,
                    bool release_first) {
  uintptr_t word = atomic_exchange_explicit(&value->waiters_and_state, state,
                                            memory_order_acq_rel);
  if (release_first) loom_async_value_release(value);
  loom_async_waiter_t* lifo =
      (loom_async_waiter_t*)(word & ~(uintptr_t)kStateMask);
  loom_async_waiter_t* fifo = NULL;
  while (lifo) {
    loom_async_waiter_t* next = lifo->next;
    lifo->next = fifo;
    fifo = lifo;
    lifo = next;
  }
  while (fifo) {
    loom_async_waiter_t* next = fifo->next;  // fn may free the node
    fifo->fn(fifo->arg);
    fifo = next;
  }
}

static loom_status_t already_set(const char* name,
                                 const loom_async_value_t* value) {
  return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                          "%s: async value of type '%s' is already set", name,
                          value->type->name ? value->type->name : "?");
}

loom_status_t loom_async_value_set_available(loom_async_value_t* value) {
  if (!value) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_async_value_set_available: value is NULL");
  }
  // Common case, one atomic: nobody waits yet, so go straight from
  // UNAVAILABLE with an empty list to AVAILABLE (publishing the payload).
  uintptr_t expected = kStateUnavailable;
  if (atomic_compare_exchange_strong_explicit(
          &value->waiters_and_state, &expected, kStateAvailable,
          memory_order_acq_rel, memory_order_relaxed)) {
    return loom_ok_status();
  }
  if (!claim(value)) {
    return already_set("loom_async_value_set_available", value);
  }
  publish(value, kStateAvailable, false);
  return loom_ok_status();
}

loom_status_t loom_async_value_set_error(loom_async_value_t* value,
                                         loom_status_t error) {
  if (!value || error == NULL) {
    loom_status_free(error);
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "loom_async_value_set_error: %s",
        !value ? "value is NULL" : "the error status is OK");
  }
  if (!claim(value)) {
    loom_status_free(error);
    return already_set("loom_async_value_set_error", value);
  }
  value->error = error;
  publish(value, kStateError, false);
  return loom_ok_status();
}

void loom__async_value_set_available_and_release(loom_async_value_t* value) {
  uintptr_t expected = kStateUnavailable;
  if (atomic_compare_exchange_strong_explicit(
          &value->waiters_and_state, &expected, kStateAvailable,
          memory_order_acq_rel, memory_order_relaxed)) {
    loom_async_value_release(value);
    return;
  }
  if (!claim(value)) {
    loom_async_value_release(value);  // already set: a programming error
    return;
  }
  publish(value, kStateAvailable, true);
}

void loom_async_value_and_then_node(loom_async_value_t* value,
                                    loom_async_waiter_t* node) {
  uintptr_t word =
      atomic_load_explicit(&value->waiters_and_state, memory_order_acquire);
  for (;;) {
    uintptr_t state = word & kStateMask;
    if (state == kStateAvailable || state == kStateError) {
      node->fn(node->arg);
      return;
    }
    node->next = (loom_async_waiter_t*)(word & ~(uintptr_t)kStateMask);
    if (atomic_compare_exchange_weak_explicit(
            &value->waiters_and_state, &word, (uintptr_t)node | state,
            memory_order_release, memory_order_acquire)) {
      return;
    }
  }
}

// A heap continuation: the node frees itself before calling the user's fn.
typedef struct heap_waiter_t {
  loom_async_waiter_t node;  // first: the node's arg points at the struct
  loom_allocator_t allocator;
  void (*fn)(void* arg);
  void* arg;
} heap_waiter_t;

static void and_then_trampoline(void* arg) {
  heap_waiter_t* waiter = arg;
  void (*fn)(void*) = waiter->fn;
  void* fn_arg = waiter->arg;
  loom_allocator_free(waiter->allocator, waiter);
  fn(fn_arg);
}

loom_status_t loom_async_value_and_then(loom_async_value_t* value,
                                        void (*fn)(void* arg), void* arg) {
  if (!value || !fn) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_async_value_and_then: %s is NULL",
                            !value ? "value" : "fn");
  }
  if (loom_async_value_is_set(value)) {
    fn(arg);
    return loom_ok_status();
  }
  heap_waiter_t* waiter = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(value->allocator, sizeof(*waiter),
                                             (void**)&waiter));
  waiter->node.fn = and_then_trampoline;
  waiter->node.arg = waiter;
  waiter->allocator = value->allocator;
  waiter->fn = fn;
  waiter->arg = arg;
  loom_async_value_and_then_node(value, &waiter->node);
  return loom_ok_status();
}
