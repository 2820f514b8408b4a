// Handler scopes, per thread and context, and the merges they make.
//
// A stack entry is a handler that was opened (its base) and the handler ops
// run on inside it (its effective handler): a device is its own effective
// handler; a transformation handler is merged — its merge hook — onto the
// effective handler below it (the CPU at the bottom), so the scope opened
// last sees an op first. Merges are remembered per (inner, outer) pair, so
// re-opening the same handlers gives the same merged handlers; a merged
// handler that nothing but the context refers to any more is dropped when a
// scope closes.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corert/corert_internal.h"
#include "frontend/frontend_internal.h"

// A thread's own identity: scope stacks live in their context, found by
// this id, which unlike pthread_self() never names a later thread once the
// first one has ended (its stacks stay until the context goes).
static _Atomic uint64_t g_next_thread_id = 1;
static _Thread_local uint64_t t_thread_id;

uint64_t loom__thread_id(void) {
  if (!t_thread_id) t_thread_id = atomic_fetch_add(&g_next_thread_id, 1);
  return t_thread_id;
}

// This thread's stacks of the last few contexts it used; a NULL stack
// records that the thread has none there (no lock on the next look-up). A
// per-thread cache of what the contexts own, keyed by context id (never
// reused), so a slot of a destroyed context is never matched again.
enum { kThreadSlots = 4 };
static _Thread_local struct {
  uint64_t context_id;
  scope_stack_t* stack;
} t_slots[kThreadSlots];
static _Thread_local unsigned t_next_slot;

// The look-up the slots did not answer: under the context's mutex, making
// the stack when `create`; `slot` is the context's slot, or -1.
static __attribute__((noinline)) scope_stack_t* find_scope_stack(
    loom_context_t* context, bool create, int slot) {
  uint64_t self = loom__thread_id();
  scope_stack_t* stack = NULL;
  pthread_mutex_lock(&context->mutex);
  for (scope_stack_t* s = context->stacks; s && !stack; s = s->next) {
    if (s->owner == self) stack = s;
  }
  if (!stack && create) {
    loom_status_t status = loom_allocator_calloc(
        context->allocator, sizeof(*stack), (void**)&stack);
    if (status) {
      loom_status_free(status);
      stack = NULL;
    } else {
      stack->owner = self;
      stack->async_override = -1;
      stack->policy_override = -1;
      loom__passthrough_op_cache_initialize(&stack->op_cache,
                                            context->allocator);
      stack->next = context->stacks;
      context->stacks = stack;
    }
  }
  pthread_mutex_unlock(&context->mutex);
  if (create && !stack) return NULL;  // out of memory: nothing to cache
  if (slot < 0) slot = (int)(t_next_slot++ % kThreadSlots);
  t_slots[slot].context_id = context->id;
  t_slots[slot].stack = stack;
  return stack;
}

scope_stack_t* loom__scope_stack(loom_context_t* context, bool create) {
  // Every eager op asks: the slots' address is looked up once.
  __typeof__(t_slots[0])* slots = t_slots;
  uint64_t id = context->id;
  for (int i = 0; i < kThreadSlots; ++i) {
    if (slots[i].context_id != id) continue;
    if (slots[i].stack || !create) return slots[i].stack;
    return find_scope_stack(context, create, i);  // known to have none
  }
  return find_scope_stack(context, create, -1);
}

loom_op_handler_t* loom__scope_stack_top(const scope_stack_t* stack) {
  if (!stack || stack->num_entries == 0) return NULL;
  return stack->entries[stack->num_entries - 1].effective;
}

static void pop_entry(scope_stack_t* stack) {
  scope_entry_t* entry = &stack->entries[--stack->num_entries];
  loom_op_handler_release(entry->effective);
  loom_op_handler_release(entry->base);
}

void loom__scope_stacks_free(loom_context_t* context) {
  for (scope_stack_t* stack = context->stacks; stack;) {
    scope_stack_t* next = stack->next;
    while (stack->num_entries) pop_entry(stack);
    loom_async_value_release(stack->chain);
    loom__passthrough_op_cache_deinitialize(&stack->op_cache);
    // Ops recycled after the pool was cleared (by the context's last ops).
    for (int32_t i = 0; i < stack->pool_count; ++i) {
      loom_eager_op_destroy(stack->pool[i]);
    }
    loom_allocator_free(context->allocator, stack->entries);
    loom_allocator_free(context->allocator, stack->frames);
    loom_allocator_free(context->allocator, stack);
    stack = next;
  }
  context->stacks = NULL;
}

//===----------------------------------------------------------------------===//
// Merges
//===----------------------------------------------------------------------===//

merge_record_t* loom__find_merge(loom_context_t* context,
                                 const loom_op_handler_t* merged) {
  for (int32_t i = 0; i < context->num_merges; ++i) {
    if (context->merges[i].merged == merged) return &context->merges[i];
  }
  return NULL;
}

bool loom__handler_stacks_on(loom_context_t* context,
                             const loom_op_handler_t* handler,
                             const loom_op_handler_t* ancestor) {
  pthread_mutex_lock(&context->mutex);
  bool found = false;
  for (const loom_op_handler_t* h = handler; h && !found;) {
    if (h == ancestor) {
      found = true;
      break;
    }
    merge_record_t* record = loom__find_merge(context, h);
    h = record ? record->outer : NULL;
  }
  pthread_mutex_unlock(&context->mutex);
  return found;
}

// The record merging `inner` onto `outer`, or NULL (mutex held).
static merge_record_t* find_pair(loom_context_t* context,
                                 const loom_op_handler_t* inner,
                                 const loom_op_handler_t* outer) {
  for (int32_t i = 0; i < context->num_merges; ++i) {
    merge_record_t* record = &context->merges[i];
    if (record->inner == inner && record->outer == outer) return record;
  }
  return NULL;
}

// The device type merged handlers of `inner` are named with: the inner
// handler's type as the context knows it, else its vtable's.
static void handler_type(loom_context_t* context,
                         const loom_op_handler_t* inner, char* type,
                         size_t capacity) {
  const char* name = loom_context_handler_name(context, inner);
  const char* source = name ? strstr(name, "/device:") : NULL;
  size_t length = 0;
  if (source) {
    source += 8;
    const char* colon = strrchr(source, ':');
    length = colon ? (size_t)(colon - source) : strlen(source);
  } else {
    source = loom_op_handler_type_name(inner);
    length = strlen(source);
  }
  // A plain copy, no snprintf: this runs for each new merge (a tape per
  // training step).
  if (length >= capacity) length = capacity - 1;
  memcpy(type, source, length);
  type[length] = '\0';
}

// The merge of `inner` onto `outer` (a new reference): the remembered one,
// or a new one from inner's merge hook, named and remembered.
static loom_status_t merge(loom_context_t* context, loom_op_handler_t* inner,
                           loom_op_handler_t* outer,
                           loom_op_handler_t** out_merged) {
  pthread_mutex_lock(&context->mutex);
  merge_record_t* existing = find_pair(context, inner, outer);
  if (existing) {
    loom_op_handler_retain(existing->merged);
    *out_merged = existing->merged;
    pthread_mutex_unlock(&context->mutex);
    return loom_ok_status();
  }
  pthread_mutex_unlock(&context->mutex);
  // The hook runs unlocked (it is the handler's code); another thread may
  // merge the same pair meanwhile: the first recorded wins.
  loom_op_handler_t* merged = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_op_handler_vtable(inner)->merge(inner, outer, &merged));
  if (!merged) {
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "op handler '%s': merge gave no handler",
                            loom_op_handler_type_name(inner));
  }
  char type[64];
  handler_type(context, inner, type, sizeof(type));
  loom_status_t status = loom_ok_status();
  pthread_mutex_lock(&context->mutex);
  existing = find_pair(context, inner, outer);
  if (existing) {
    loom_op_handler_retain(existing->merged);
    *out_merged = existing->merged;
    pthread_mutex_unlock(&context->mutex);
    loom_op_handler_release(merged);
    return loom_ok_status();
  }
  if (context->num_merges == context->merges_capacity) {
    int32_t capacity =
        context->merges_capacity ? 2 * context->merges_capacity : 8;
    merge_record_t* grown = NULL;
    status = loom_allocator_malloc(
        context->allocator, sizeof(*grown) * (size_t)capacity, (void**)&grown);
    if (!status) {
      if (context->num_merges) {
        memcpy(grown, context->merges,
               sizeof(*grown) * (size_t)context->num_merges);
      }
      loom_allocator_free(context->allocator, context->merges);
      context->merges = grown;
      context->merges_capacity = capacity;
    }
  }
  if (!status) {
    status = loom__context_add_handler_locked(context, type, merged, NULL);
  }
  if (!status) {
    merge_record_t* record = &context->merges[context->num_merges++];
    record->merged = merged;  // the context's reference
    record->inner = inner;
    record->outer = outer;
    loom_op_handler_retain(inner);
    loom_op_handler_retain(outer);
    loom_op_handler_retain(merged);  // the caller's
  }
  pthread_mutex_unlock(&context->mutex);
  if (status) {
    loom_op_handler_release(merged);
    return status;
  }
  *out_merged = merged;
  return loom_ok_status();
}

// Drops merges only the context still refers to (its record and its name),
// repeatedly: dropping one may free the one below it.
static void collect_unused_merges(loom_context_t* context) {
  for (bool dropped = true; dropped;) {
    dropped = false;
    loom_op_handler_t* release[3] = {NULL, NULL, NULL};
    pthread_mutex_lock(&context->mutex);
    for (int32_t i = context->num_merges - 1; i >= 0 && !dropped; --i) {
      merge_record_t* record = &context->merges[i];
      if (loom_op_handler_ref_count(record->merged) != 2) continue;
      release[0] = record->merged;
      release[1] = record->inner;
      release[2] = record->outer;
      context->merges[i] = context->merges[--context->num_merges];
      for (int32_t j = 0; j < context->num_handlers; ++j) {
        named_handler_t* named = &context->handlers[j];
        if (named->handler != release[0]) continue;
        loom_op_handler_release(named->handler);
        loom_allocator_free(context->allocator, named->name);
        loom_allocator_free(context->allocator, named->type);
        memmove(named, named + 1,
                sizeof(*named) * (size_t)(context->num_handlers - j - 1));
        context->num_handlers--;
        break;
      }
      dropped = true;
      atomic_fetch_add(&context->generation, 1);
    }
    pthread_mutex_unlock(&context->mutex);
    for (int i = 0; i < 3; ++i) loom_op_handler_release(release[i]);
  }
}

//===----------------------------------------------------------------------===//
// Entering and leaving
//===----------------------------------------------------------------------===//

static loom_status_t grow(loom_allocator_t allocator, void** array,
                          int32_t count, int32_t* capacity, size_t size) {
  if (count < *capacity) return loom_ok_status();
  int32_t new_capacity = *capacity ? 2 * *capacity : 8;
  void* grown = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, size * (size_t)new_capacity, &grown));
  if (count) memcpy(grown, *array, size * (size_t)count);
  loom_allocator_free(allocator, *array);
  *array = grown;
  *capacity = new_capacity;
  return loom_ok_status();
}

static bool is_open(const scope_stack_t* stack,
                    const loom_op_handler_t* handler) {
  for (int32_t i = 0; i < stack->num_entries; ++i) {
    if (stack->entries[i].base == handler) return true;
  }
  return false;
}

static int32_t parts_of(loom_context_t* context, loom_op_handler_t* handler,
                        loom_op_handler_t** parts, int32_t capacity);

// Whether `handler` places the ops of its scope itself rather than passing
// them to the scope around it: a device (a final handler), or a handler
// that names the device its tensors live on (the parallel handler, which
// runs its ops on its own component devices). Transformations (tape,
// forward mode, vmap, trace) name none: their tensors live where the
// scope around them puts them.
static bool places_ops(loom_context_t* context, loom_op_handler_t* handler) {
  (void)context;
  return loom_op_handler_is_final(handler) ||
         loom_op_handler_vtable(handler)->device_name != NULL;
}

// The handler ops run on in a scope of `base` (which places its ops)
// entered inside `top`: the transformations of `top` (tape, forward mode,
// trace, ...) merged again onto `base` in their order, so that they still
// see the ops — a tape records ops whatever their device, as TensorFlow's
// does. The devices and placing handlers of `top` are left: `base`
// replaces them.
static loom_status_t restack(loom_context_t* context, loom_op_handler_t* base,
                             loom_op_handler_t* top,
                             loom_op_handler_t** out_effective) {
  loom_op_handler_t* parts[64];
  int32_t count = parts_of(context, top, parts, 64);
  loom_op_handler_t* effective = base;
  loom_op_handler_retain(effective);
  for (int32_t i = 0; i < count; ++i) {
    if (parts[i] == context->cpu || places_ops(context, parts[i])) continue;
    loom_op_handler_t* merged = NULL;
    loom_status_t status = merge(context, parts[i], effective, &merged);
    loom_op_handler_release(effective);
    if (status) return status;
    effective = merged;
  }
  *out_effective = effective;
  return loom_ok_status();
}

loom_status_t loom__scope_place_on_device(loom_context_t* context,
                                          loom_op_handler_t* device,
                                          loom_op_handler_t* top,
                                          loom_op_handler_t** out_handler) {
  *out_handler = NULL;
  if (!top || top == device || loom_op_handler_is_final(top) ||
      !loom_op_handler_is_final(device)) {
    return loom_ok_status();
  }
  loom_op_handler_t* effective = NULL;
  LOOM_RETURN_IF_ERROR(restack(context, device, top, &effective));
  if (effective == device) {
    loom_op_handler_release(effective);  // no transformation is open
  } else {
    *out_handler = effective;
  }
  return loom_ok_status();
}

static loom_status_t push(loom_context_t* context, scope_stack_t* stack,
                          loom_op_handler_t* base) {
  LOOM_RETURN_IF_ERROR(grow(context->allocator, (void**)&stack->entries,
                            stack->num_entries, &stack->entries_capacity,
                            sizeof(scope_entry_t)));
  loom_op_handler_t* top = loom__scope_stack_top(stack);
  loom_op_handler_t* effective = NULL;
  // A placing handler the top already runs on, entered by a handler as it
  // executes an op, runs that handler's ops past the transformations above
  // it (a handler escaping to its outer handler, as vmap's rules do): it
  // replaces them. Entered by the user (`with device("CPU:0")` inside a
  // tape), or another one, it goes under them: they still see its ops.
  if (top && places_ops(context, base) &&
      (loom__handler_execution_depth == 0 ||
       !loom__handler_stacks_on(context, top, base))) {
    // A placing handler's own merge (the handler itself) goes under the
    // transformations open around it.
    loom_op_handler_t* placed = base;
    if (!loom_op_handler_is_final(base)) {
      LOOM_RETURN_IF_ERROR(merge(context, base, context->cpu, &placed));
    } else {
      loom_op_handler_retain(placed);
    }
    loom_status_t status = restack(context, placed, top, &effective);
    loom_op_handler_release(placed);
    LOOM_RETURN_IF_ERROR(status);
  } else if (loom_op_handler_is_final(base)) {
    loom_op_handler_retain(base);
    effective = base;
  } else {
    LOOM_RETURN_IF_ERROR(
        merge(context, base, top ? top : context->cpu, &effective));
  }
  loom_op_handler_retain(base);
  stack->entries[stack->num_entries].base = base;
  stack->entries[stack->num_entries].effective = effective;
  stack->num_entries++;
  return loom_ok_status();
}

// The handlers `handler` is made of, innermost last: its parts when it is a
// merge (the device at the bottom only when it is not the CPU), else itself.
static int32_t parts_of(loom_context_t* context, loom_op_handler_t* handler,
                        loom_op_handler_t** parts, int32_t capacity) {
  loom_op_handler_t* reversed[64];
  int32_t count = 0;
  pthread_mutex_lock(&context->mutex);
  for (loom_op_handler_t* h = handler; h && count < 64;) {
    merge_record_t* record = loom__find_merge(context, h);
    if (!record) {
      if (h != context->cpu || count == 0) reversed[count++] = h;
      break;
    }
    reversed[count++] = record->inner;
    h = record->outer;
  }
  pthread_mutex_unlock(&context->mutex);
  int32_t n = count < capacity ? count : capacity;
  for (int32_t i = 0; i < n; ++i) parts[i] = reversed[count - 1 - i];
  return n;
}

loom_status_t loom_context_enter_scope(loom_context_t* context,
                                       loom_op_handler_t* handler) {
  if (!context || !handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_enter_scope: %s is NULL",
                            !context ? "context" : "handler");
  }
  scope_stack_t* stack = loom__scope_stack(context, true);
  if (!stack) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory entering a handler scope");
  }
  LOOM_RETURN_IF_ERROR(grow(context->allocator, (void**)&stack->frames,
                            stack->num_frames, &stack->frames_capacity,
                            sizeof(int32_t)));
  loom_op_handler_t* parts[64];
  // A final handler (a device) is never a merge: it is its only part (the
  // handlers that run their rules on the CPU enter it once per op).
  int32_t num_parts = 1;
  parts[0] = handler;
  if (!loom_op_handler_is_final(handler)) {
    num_parts = parts_of(context, handler, parts, 64);
  }
  int32_t opened = 0;
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; i < num_parts && !status; ++i) {
    if (is_open(stack, parts[i])) continue;  // re-entry: already open
    status = push(context, stack, parts[i]);
    if (!status) opened++;
  }
  if (status) {
    while (opened-- > 0) pop_entry(stack);
    return status;
  }
  stack->frames[stack->num_frames++] = opened;
  return loom_ok_status();
}

loom_status_t loom_context_exit_scope(loom_context_t* context) {
  if (!context) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_exit_scope: context is NULL");
  }
  scope_stack_t* stack = loom__scope_stack(context, false);
  if (!stack || stack->num_frames == 0) {
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "loom_context_exit_scope: no handler scope is "
                            "open on this thread");
  }
  int32_t opened = stack->frames[--stack->num_frames];
  // Closing only final handlers releases no merge: nothing to collect.
  bool merges = false;
  while (opened-- > 0) {
    const scope_entry_t* entry = &stack->entries[stack->num_entries - 1];
    if (entry->effective != entry->base ||
        !loom_op_handler_is_final(entry->base)) {
      merges = true;
    }
    pop_entry(stack);
  }
  if (merges) collect_unused_merges(context);
  return loom_ok_status();
}

loom_op_handler_t* loom_context_scope_handler(loom_context_t* context) {
  if (!context) return NULL;
  return loom__scope_stack_top(loom__scope_stack(context, false));
}
