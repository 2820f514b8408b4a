// The pass-through handler base: creation, merging and destruction of the
// state, and the op data prepared on the outer handler.

#include "frontend/passthrough_handler.h"

#include "corert/corert_internal.h"
#include "frontend/frontend_internal.h"
#include "loom/tensor_handle.h"
#include "registry/op_registry_generation.h"

loom_status_t loom__passthrough_shared_create(loom_allocator_t allocator,
                                              size_t size, void** out_shared) {
  loom__passthrough_shared_t* shared = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(allocator, size, (void**)&shared));
  loom__ref_count_init(&shared->ref_count);
  shared->allocator = allocator;
  *out_shared = shared;
  return loom_ok_status();
}

void loom__passthrough_shared_retain(void* shared) {
  loom__ref_count_inc(&((loom__passthrough_shared_t*)shared)->ref_count);
}

void loom__passthrough_shared_release(void* opaque) {
  loom__passthrough_shared_t* shared = opaque;
  if (shared && loom__ref_count_dec(&shared->ref_count)) {
    loom_allocator_free(shared->allocator, shared);
  }
}

loom_status_t loom__passthrough_create(const loom__passthrough_type_t* type,
                                       loom_context_t* context,
                                       loom_allocator_t allocator, void* shared,
                                       loom_op_handler_t* outer,
                                       loom_op_handler_t** out_handler) {
  *out_handler = NULL;
  loom__passthrough_t* base = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, type->state_size, (void**)&base));
  base->type = type;
  base->allocator = allocator;
  base->context = context;
  base->outer = outer;
  loom_op_handler_retain(outer);
  base->effective_outer = outer ? outer : loom_context_cpu(context);
  base->shared = shared;
  if (shared && type->retain_shared) type->retain_shared(shared);
  loom_status_t status = loom_op_handler_create(
      loom_context_runtime(context), type->vtable, base, NULL, &base->handler);
  if (status) {
    loom__passthrough_destroy(base);
    return status;
  }
  if (type->initialize) status = type->initialize(base);
  if (status) {
    loom_op_handler_release(base->handler);  // destroys the state
    return status;
  }
  *out_handler = base->handler;
  return loom_ok_status();
}

void loom__passthrough_destroy(void* state) {
  loom__passthrough_t* base = state;
  if (base->type->deinitialize) base->type->deinitialize(base);
  loom_op_handler_release(base->outer);
  if (base->shared && base->type->release_shared) {
    base->type->release_shared(base->shared);
  }
  loom_allocator_free(base->allocator, base);
}

loom_status_t loom__passthrough_merge(loom_op_handler_t* handler,
                                      loom_op_handler_t* outer,
                                      loom_op_handler_t** out_merged) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  return loom__passthrough_create(base->type, base->context, base->allocator,
                                  base->shared, outer, out_merged);
}

bool loom__passthrough_takes_foreign_inputs(const loom_op_handler_t* handler,
                                            const char* op_name) {
  (void)handler;
  (void)op_name;
  return true;
}

loom_status_t loom__passthrough_execute(loom_op_handler_t* handler,
                                        loom_op_invocation_t* invocation) {
  return loom__passthrough_forward_prepared(loom_op_handler_state(handler),
                                            invocation);
}

static bool keeps_no_replay(loom_function_call_t* call, void* data,
                            void (*release)(void* data)) {
  (void)call;
  (void)data;
  (void)release;
  return false;
}

loom_status_t loom__passthrough_run_call_beneath(
    const loom__passthrough_t* base, loom_function_call_t* call,
    loom_tensor_handle_t** results) {
  loom_op_handler_t* outer = base->effective_outer;
  const loom_op_handler_vtable_t* vtable = loom_op_handler_vtable(outer);
  if (vtable->execute_function_call && !loom_op_handler_is_final(outer)) {
    loom_function_call_t beneath = *call;
    beneath.replay_data = NULL;
    beneath.set_replay_data = keeps_no_replay;
    bool taken = false;
    LOOM_RETURN_IF_ERROR(
        vtable->execute_function_call(outer, &beneath, results, &taken));
    if (taken) return loom_ok_status();
  }
  return call->run(call, results);
}

loom_status_t loom__passthrough_run_outer_op(
    loom_context_t* context, loom_prepared_op_t* outer_op,
    loom_tensor_handle_t* const* inputs, int32_t n,
    const loom_op_attrs_t* attrs, loom_tensor_handle_t** results, int32_t m,
    bool* out_done) {
  *out_done = false;
  enum { kMaxInputs = 8 };
  const loom_op_def_t* def = loom_prepared_op_def(outer_op);
  if (!def || def->is_stateful || m == 0 || n > kMaxInputs ||
      loom_prepared_op_handler(outer_op) != context->cpu ||
      loom__thread_async(context, loom__scope_stack(context, false))) {
    return loom_ok_status();
  }
  loom_tensor_handle_t* args[kMaxInputs];
  for (int32_t i = 0; i < n; ++i) {
    if (!inputs[i] ||
        !loom__is_cpu(context, loom_tensor_handle_handler(inputs[i]))) {
      return loom_ok_status();
    }
    args[i] = inputs[i];
  }
  for (int32_t k = 0; k < m; ++k) results[k] = NULL;
  loom_op_invocation_t invocation = {
      .op = outer_op,
      .arguments = args,
      .num_arguments = n,
      .attrs = attrs,
      .results = results,
      .num_results = m,
  };
  *out_done = true;
  loom_status_t status = loom__runtime_execute_lent(&invocation, NULL);
  if (!status) status = loom__results_error(results, m);
  if (status) {
    for (int32_t k = 0; k < m; ++k) {
      loom_tensor_handle_release(results[k]);
      results[k] = NULL;
    }
  }
  return status;
}

// Whether `handler` is a handler of `base`'s type sharing its state (one
// of its merges, or the handler itself).
static bool same_handler(const loom__passthrough_t* base,
                         const loom_op_handler_t* handler) {
  const loom__passthrough_t* other = loom__passthrough_of(handler, base->type);
  return other && other->shared == base->shared &&
         (base->shared || other == base);
}

loom_status_t loom__passthrough_entry_handler(loom_op_handler_t* handler,
                                              loom_op_handler_t** out) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  loom_context_t* context = base->context;
  *out = NULL;
  if (base->outer) {
    loom_op_handler_retain(handler);
    *out = handler;
    return loom_ok_status();
  }
  for (loom_op_handler_t* h = loom_context_scope_handler(context);
       h && loom_op_handler_vtable(h)->destroy == loom__passthrough_destroy;
       h = ((loom__passthrough_t*)loom_op_handler_state(h))->outer) {
    if (same_handler(base, h)) {
      loom_op_handler_retain(h);
      *out = h;
      return loom_ok_status();
    }
  }
  LOOM_RETURN_IF_ERROR(loom_context_enter_scope(context, handler));
  loom_op_handler_t* top = loom_context_scope_handler(context);
  if (same_handler(base, top)) {
    loom_op_handler_retain(top);
    *out = top;
  }
  loom_status_ignore(loom_context_exit_scope(context));
  return loom_ok_status();
}

loom_status_t loom__passthrough_forward_noted(const loom__passthrough_t* base,
                                              loom_op_invocation_t* invocation,
                                              const void* key,
                                              const void* value) {
  const loom_op_invocation_note_t* previous = invocation->notes;
  loom_op_invocation_note_t note = {
      .key = key,
      .value = value,
      .next = previous,
  };
  invocation->notes = &note;  // on this stack: valid while the op passes
  loom_status_t status = loom__passthrough_forward_prepared(base, invocation);
  invocation->notes = previous;
  return status;
}

loom_status_t loom__passthrough_fail_results(loom_op_invocation_t* invocation,
                                             loom_op_handler_t* handler,
                                             loom_status_t error) {
  for (int32_t k = 0; k < invocation->num_results; ++k) {
    loom_tensor_handle_release(invocation->results[k]);
    invocation->results[k] = NULL;
    loom_status_ignore(loom_tensor_handle_create_error(
        handler, loom_status_clone(error), &invocation->results[k]));
  }
  return error;
}

//===----------------------------------------------------------------------===//
// Op data
//===----------------------------------------------------------------------===//

// The thread's cache of op data when `base`'s ops may take it, else NULL.
static loom__passthrough_op_cache_t* op_cache_of(
    const loom__passthrough_t* base, const loom_op_def_t* op_def) {
  if (!base->type->cache_op_data || !op_def ||
      !loom_op_handler_is_final(base->effective_outer)) {
    return NULL;
  }
  scope_stack_t* stack = loom__scope_stack(base->context, true);
  return stack ? &stack->op_cache : NULL;
}

loom_status_t loom__passthrough_prepare(loom_op_handler_t* handler,
                                        const char* op_name,
                                        const loom_op_def_t* op_def,
                                        void** out_op_data) {
  loom__passthrough_t* base = loom_op_handler_state(handler);
  const loom__passthrough_type_t* type = base->type;
  loom__passthrough_op_cache_t* cache =
      type->op_data_size ? op_cache_of(base, op_def) : NULL;
  if (cache) {
    loom__passthrough_op_t* cached =
        loom__passthrough_op_cache_find(cache, base, op_name, op_def);
    if (cached) {
      *out_op_data = cached;
      return loom_ok_status();
    }
  }
  // Read before the look-ups: a registration meanwhile makes the entry
  // look stale, never the other way round.
  uint64_t generation = loom__registry_generation();
  loom_prepared_op_t* outer_op = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_runtime_prepare_op_shared(loom_op_handler_runtime(handler), op_name,
                                     base->effective_outer, &outer_op));
  if (!type->op_data_size) {
    *out_op_data = outer_op;
    return loom_ok_status();
  }
  loom__passthrough_op_t* data = NULL;
  loom_status_t status =
      loom_allocator_calloc(base->allocator, type->op_data_size, (void**)&data);
  if (status) {
    loom_prepared_op_release(outer_op);
    return status;
  }
  loom__ref_count_init(&data->ref_count);
  data->allocator = base->allocator;
  data->outer_op = outer_op;
  if (type->prepare_op) status = type->prepare_op(base, op_name, op_def, data);
  if (status) {
    loom__passthrough_op_release(data);
    return status;
  }
  if (cache) {
    loom__passthrough_op_cache_insert(cache, base, op_name, op_def, generation,
                                      data);
  }
  *out_op_data = data;
  return loom_ok_status();
}

void loom__passthrough_op_release(loom__passthrough_op_t* data) {
  if (!data || !loom__ref_count_dec(&data->ref_count)) return;
  loom_prepared_op_release(data->outer_op);
  loom_allocator_free(data->allocator, data);
}

void loom__passthrough_release_op_data(loom_op_handler_t* handler,
                                       void* op_data) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  if (!base->type->op_data_size) {
    loom_prepared_op_release(op_data);
    return;
  }
  loom__passthrough_op_release(op_data);
}

loom_status_t loom__passthrough_reuse_op_data(loom_op_handler_t* handler,
                                              const loom_op_handler_t* source,
                                              void* source_op_data,
                                              void** out_op_data) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  const loom__passthrough_t* other = loom_op_handler_state(source);
  const loom__passthrough_type_t* type = base->type;
  if (other->effective_outer != base->effective_outer || other->type != type) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND, "not shareable");
  }
  if (!type->op_data_size) {
    loom_prepared_op_retain(source_op_data);
  } else {
    loom__passthrough_op_t* data = source_op_data;
    if (type->op_data_reusable && !type->op_data_reusable(base, data)) {
      return loom_make_status(LOOM_STATUS_NOT_FOUND, "not shareable");
    }
    loom__ref_count_inc(&data->ref_count);
  }
  *out_op_data = source_op_data;
  return loom_ok_status();
}
