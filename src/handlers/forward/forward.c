// The forward accumulator (forward-mode autodiff) as an op handler with a
// tensor representation of its own: a tensor on the accumulator is a
// primal (a tensor of the handler the accumulator was merged with) and its
// tangent for this accumulator (NULL: zero).
//
// An op in its scope whose inputs carry no tangent runs on the outer
// handler and its results are that handler's tensors, unwrapped. Otherwise
// the op runs on the primals (on the outer handler) and the tangents of
// its outputs come from the op's JVP function, or, for an op with only a
// gradient function, from transposing the gradient; they are computed in
// the scope of the outer handler, so that an accumulator or a tape around
// this one sees the tangent computation too (nested derivatives). Each
// accumulator has its own tangents: nested accumulators keep their
// perturbations apart, as a tape and an accumulator do in either order.

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/ref_count.h"
#include "frontend/passthrough_handler.h"
#include "handlers/autodiff/autodiff_internal.h"
#include "handlers/autodiff/grad_ops.h"
#include "handlers/forward/forward_call_jvp.h"
#include "handlers/forward/forward_internal.h"

LOOM_DEFINE_SMALL_VECTOR(handler_vector, loom_op_handler_t*, 4)

// What an accumulator and all its merges share (their base's `shared`).
typedef struct accumulator_t {
  loom__ref_count_t ref_count;
  loom_allocator_t allocator;
  loom_context_t* context;
  pthread_mutex_t mutex;    // merges
  handler_vector_t merges;  // not retained: each removes itself
  // Set before use: calls offered are left (forward_call_jvp.h).
  bool leaves_calls;
} accumulator_t;

// The representation of a tensor on the accumulator.
typedef struct forward_tensor_t {
  loom_tensor_handle_t* primal;   // retained
  loom_tensor_handle_t* tangent;  // retained; NULL: zero
} forward_tensor_t;

typedef enum op_kind_t {
  kOpDifferentiated = 0,
  kOpCopyOn,
  kOpCopyOff,
} op_kind_t;

// Per op and handler: the op prepared on the outer handler and its JVP and
// gradient definitions, looked up once.
typedef struct forward_op_data_t {
  loom__passthrough_op_t base;
  const loom_jvp_def_t* jvp;
  const loom_gradient_def_t* gradient;
  op_kind_t kind;
} forward_op_data_t;

static const loom__passthrough_type_t kForwardType;

static bool is_forward_handler(const loom_op_handler_t* handler) {
  return loom__passthrough_of(handler, &kForwardType) != NULL;
}

static accumulator_t* accumulator_of(const loom_op_handler_t* handler) {
  loom__passthrough_t* base = loom__passthrough_of(handler, &kForwardType);
  return base ? base->shared : NULL;
}

// The representation of `handle` when it is a tensor of `accumulator` (on
// any of its merges), else NULL.
static forward_tensor_t* own_tensor(const accumulator_t* accumulator,
                                    const loom_tensor_handle_t* handle) {
  loom_op_handler_t* handler = loom_tensor_handle_handler(handle);
  if (accumulator_of(handler) != accumulator) return NULL;
  return loom_tensor_handle_representation(handle);
}

static void accumulator_retain(void* accumulator) {
  loom__ref_count_inc(&((accumulator_t*)accumulator)->ref_count);
}

static void accumulator_release(void* opaque) {
  accumulator_t* accumulator = opaque;
  if (!accumulator || !loom__ref_count_dec(&accumulator->ref_count)) return;
  handler_vector_deinitialize(&accumulator->merges, accumulator->allocator);
  pthread_mutex_destroy(&accumulator->mutex);
  loom_allocator_free(accumulator->allocator, accumulator);
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

// A tensor on `handler` made of `primal` and `tangent` (both retained).
static loom_status_t wrap(loom_op_handler_t* handler,
                          loom_tensor_handle_t* primal,
                          loom_tensor_handle_t* tangent,
                          loom_tensor_handle_t** out) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  *out = NULL;
  forward_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(base->allocator, sizeof(*tensor), (void**)&tensor));
  loom_tensor_metadata_t metadata;
  bool known = false;
  if (loom_tensor_handle_metadata_available(primal)) {
    loom_status_t status = loom_tensor_handle_metadata(primal, &metadata);
    known = !status;
    loom_status_free(status);
  }
  loom_status_t status = loom_tensor_handle_create_representation(
      handler, known ? &metadata : NULL, tensor, out);
  if (status) {
    loom_allocator_free(base->allocator, tensor);
    return status;
  }
  loom_tensor_handle_retain(primal);
  tensor->primal = primal;
  if (tangent) loom_tensor_handle_retain(tangent);
  tensor->tangent = tangent;
  return loom_ok_status();
}

static void forward_release_representation(loom_op_handler_t* handler,
                                           void* representation) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  forward_tensor_t* tensor = representation;
  if (!tensor) return;
  loom_tensor_handle_release(tensor->primal);
  loom_tensor_handle_release(tensor->tangent);
  loom_allocator_free(base->allocator, tensor);
}

static loom_status_t forward_tensor_metadata(
    loom_op_handler_t* handler, const loom_tensor_handle_t* handle,
    loom_tensor_metadata_t* out_metadata) {
  (void)handler;
  forward_tensor_t* tensor = loom_tensor_handle_representation(handle);
  return loom_tensor_handle_wait_metadata(tensor->primal, out_metadata);
}

static loom_status_t forward_static_value(loom_op_handler_t* handler,
                                          loom_tensor_handle_t* handle,
                                          loom_tensor_t** out_tensor) {
  (void)handler;
  forward_tensor_t* tensor = loom_tensor_handle_representation(handle);
  return loom_tensor_handle_static_value(tensor->primal, out_tensor);
}

static size_t forward_tensor_debug_string(const loom_op_handler_t* handler,
                                          const loom_tensor_handle_t* handle,
                                          char* buffer, size_t capacity) {
  (void)handler;
  forward_tensor_t* tensor = loom_tensor_handle_representation(handle);
  char primal[256], tangent[256] = "0";
  loom_tensor_handle_debug_string(tensor->primal, primal, sizeof(primal));
  if (tensor->tangent) {
    loom_tensor_handle_debug_string(tensor->tangent, tangent, sizeof(tangent));
  }
  return (size_t)snprintf(buffer, capacity, "<forward primal=%s tangent=%s>",
                          primal, tangent);
}

//===----------------------------------------------------------------------===//
// Executing ops
//===----------------------------------------------------------------------===//

static loom_status_t forward_prepare_op(loom__passthrough_t* base,
                                        const char* op_name,
                                        const loom_op_def_t* op_def,
                                        loom__passthrough_op_t* opaque) {
  (void)base;
  (void)op_def;
  forward_op_data_t* data = (forward_op_data_t*)opaque;
  data->jvp = loom_jvp_find(op_name);
  data->gradient = loom_gradient_find(op_name);
  data->kind = strcmp(op_name, "CopyOn") == 0    ? kOpCopyOn
               : strcmp(op_name, "CopyOff") == 0 ? kOpCopyOff
                                                 : kOpDifferentiated;
  return loom_ok_status();
}

// The one input of a copy op (which has one result), or NULL after failing
// the invocation.
static loom_tensor_handle_t* copy_input(loom_op_invocation_t* invocation,
                                        const char* op_name,
                                        loom_status_t* out_status) {
  if (invocation->num_arguments == 1 && invocation->arguments[0] &&
      invocation->num_results == 1) {
    *out_status = loom_ok_status();
    return invocation->arguments[0];
  }
  *out_status = loom_op_invocation_fail(
      invocation,
      loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                       "%s takes one input and has one result", op_name),
      true);
  return NULL;
}

// CopyOn: a tensor of another handler becomes a primal with no tangent.
static loom_status_t copy_on(loom_op_handler_t* handler,
                             loom_op_invocation_t* invocation) {
  loom_status_t status;
  loom_tensor_handle_t* input = copy_input(invocation, "CopyOn", &status);
  if (!input) return status;
  loom_tensor_handle_t* result = NULL;
  if (own_tensor(accumulator_of(handler), input)) {
    loom_tensor_handle_retain(input);
    result = input;
  } else {
    status = wrap(handler, input, NULL, &result);
  }
  if (status) return loom_op_invocation_fail(invocation, status, true);
  return loom__handler_copy_finish(invocation, result);
}

// CopyOff: the primal (its tangent stays behind).
static loom_status_t copy_off(loom_op_handler_t* handler,
                              loom_op_invocation_t* invocation) {
  loom_status_t status;
  loom_tensor_handle_t* input = copy_input(invocation, "CopyOff", &status);
  if (!input) return status;
  forward_tensor_t* tensor = own_tensor(accumulator_of(handler), input);
  loom_tensor_handle_t* result = tensor ? tensor->primal : input;
  loom_tensor_handle_retain(result);
  return loom__handler_copy_finish(invocation, result);
}

// Checks a tangent a JVP function made for output `index`.
static loom_status_t check_tangent(const char* op_name, int32_t index,
                                   loom_tensor_handle_t* tangent,
                                   const loom_tensor_metadata_t* output) {
  loom_tensor_metadata_t metadata;
  LOOM_RETURN_IF_ERROR(loom__grad_metadata(tangent, &metadata));
  if (metadata.dtype == output->dtype &&
      loom_shape_equal(&metadata.shape, &output->shape)) {
    return loom_ok_status();
  }
  char got[96], want[96];
  loom_shape_format(&metadata.shape, got, sizeof(got));
  loom_shape_format(&output->shape, want, sizeof(want));
  return loom_make_status(LOOM_STATUS_INTERNAL,
                          "the JVP of %s gave output %d a %s %s tangent; the "
                          "output is %s %s",
                          op_name, index, loom_dtype_name(metadata.dtype), got,
                          loom_dtype_name(output->dtype), want);
}

typedef struct differentiated_t {
  const char* op_name;
  const loom_op_def_t* op_def;
  const loom_op_attrs_t* attrs;
  int32_t num_inputs;
  loom_tensor_handle_t** primals;
  loom_tensor_handle_t** tangents;
  loom_tensor_metadata_t* input_metadata;
  int32_t num_outputs;
  loom_tensor_handle_t** outputs;
  loom_tensor_metadata_t* output_metadata;
  loom_tensor_handle_t** output_tangents;
} differentiated_t;

// Runs the op's JVP (or transposed gradient) function in the scope of the
// outer handler.
static loom_status_t compute_tangents(const loom__passthrough_t* base,
                                      const forward_op_data_t* data,
                                      differentiated_t* d) {
  loom_gradient_context_t context;
  loom__gradient_context_initialize(
      &context, base->context, d->op_name, d->op_def, d->attrs, d->num_inputs,
      d->primals, d->input_metadata, d->num_outputs, d->outputs,
      d->output_metadata);
  LOOM_RETURN_IF_ERROR(
      loom_context_enter_scope(base->context, base->effective_outer));
  loom_status_t status;
  if (data->jvp) {
    status = data->jvp->fn(&context, d->tangents, d->output_tangents,
                           data->jvp->user_data);
  } else {
    status = loom__forward_jvp_by_transposition(
        data->gradient, &context, d->tangents, d->output_tangents);
  }
  loom_status_ignore(loom_context_exit_scope(base->context));
  loom__gradient_context_deinitialize(&context);
  for (int32_t k = 0; k < d->num_outputs && !status; ++k) {
    loom_tensor_handle_t* tangent = d->output_tangents[k];
    if (!tangent) continue;
    if (!loom_dtype_is_floating(d->output_metadata[k].dtype)) {
      loom_tensor_handle_release(tangent);  // no tangents for integers
      d->output_tangents[k] = NULL;
      continue;
    }
    status = check_tangent(d->op_name, k, tangent, &d->output_metadata[k]);
  }
  if (status) loom__grad_release_all(d->output_tangents, d->num_outputs);
  return status;
}

// Runs the op on the primals and computes the tangents of its results.
// The arguments are the primals already; tangents[i] are owned.
static loom_status_t differentiate(loom_op_handler_t* handler,
                                   loom_op_invocation_t* invocation,
                                   const forward_op_data_t* data,
                                   loom_tensor_handle_t** tangents) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  int32_t n = invocation->num_arguments;
  int32_t m = invocation->num_results;
  loom__handle_vector_t handles;  // the primals, then the output tangents
  loom__metadata_vector_t metadata;
  loom__handle_vector_initialize(&handles);
  loom__metadata_vector_initialize(&metadata);
  loom_status_t status =
      loom__handle_vector_resize(&handles, base->allocator, (size_t)(n + m));
  if (!status) {
    status = loom__metadata_vector_resize_uninitialized(
        &metadata, base->allocator, (size_t)(n + m));
  }
  if (status) {
    loom__handle_vector_deinitialize(&handles, base->allocator);
    return loom_op_invocation_fail(invocation, status, true);
  }
  differentiated_t d = {
      .op_name = loom_prepared_op_name(invocation->op),
      .op_def = loom_prepared_op_def(invocation->op),
      .attrs = invocation->attrs,
      .num_inputs = n,
      .primals = loom__handle_vector_data(&handles),
      .tangents = tangents,
      .input_metadata = loom__metadata_vector_data(&metadata),
      .num_outputs = m,
      .outputs = invocation->results,
      .output_metadata = loom__metadata_vector_data(&metadata) + n,
      .output_tangents = loom__handle_vector_data(&handles) + n,
  };
  if (d.op_def) d.op_name = d.op_def->name;
  bool known = true;
  for (int32_t i = 0; i < n; ++i) {
    d.primals[i] = invocation->arguments[i];
    loom_tensor_handle_retain(d.primals[i]);
    loom_status_t meta_status =
        loom__grad_metadata(d.primals[i], &d.input_metadata[i]);
    if (meta_status) {
      known = false;  // a failed input: the op fails too
      loom_status_free(meta_status);
    }
  }
  status = loom__passthrough_forward(base, invocation, data->base.outer_op);
  for (int32_t k = 0; k < m && !status && known; ++k) {
    loom_status_t meta_status =
        invocation->results[k]
            ? loom__grad_metadata(invocation->results[k], &d.output_metadata[k])
            : loom_make_status(LOOM_STATUS_INTERNAL, "no result");
    if (meta_status) {
      known = false;  // an error result: nothing to differentiate
      loom_status_free(meta_status);
    }
  }
  if (!status && known) {
    status = compute_tangents(base, data, &d);
    if (status) {
      status = loom__passthrough_fail_results(
          invocation, handler,
          loom_status_annotate(status, "forward-mode derivative of %s",
                               d.op_name));
    }
  }
  for (int32_t k = 0; k < m && !status && known; ++k) {
    loom_tensor_handle_t* tangent = d.output_tangents[k];
    if (!tangent) continue;
    loom_tensor_handle_t* wrapped = NULL;
    status = wrap(handler, invocation->results[k], tangent, &wrapped);
    if (status) {
      status = loom__passthrough_fail_results(invocation, handler, status);
      break;
    }
    loom_tensor_handle_release(invocation->results[k]);
    invocation->results[k] = wrapped;
  }
  loom__grad_release_all(loom__handle_vector_data(&handles), n + m);
  loom__handle_vector_deinitialize(&handles, base->allocator);
  loom__metadata_vector_deinitialize(&metadata, base->allocator);
  return status;
}

// Replaces the arguments that are this accumulator's tensors by their
// primals; their tangents go to tangents[0, n) (NULL: zero). Returns
// whether any argument has a tangent.
static bool unwrap_arguments(const accumulator_t* accumulator,
                             loom_op_invocation_t* invocation,
                             loom_tensor_handle_t** tangents) {
  bool any = false;
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_t* argument = invocation->arguments[i];
    forward_tensor_t* tensor = own_tensor(accumulator, argument);
    tangents[i] = NULL;
    if (!tensor) continue;
    if (tensor->tangent) {
      loom_tensor_handle_retain(tensor->tangent);
      tangents[i] = tensor->tangent;
      any = true;
    }
    loom_tensor_handle_retain(tensor->primal);
    invocation->arguments[i] = tensor->primal;
    loom_tensor_handle_release(argument);
  }
  return any;
}

static loom_status_t forward_execute(loom_op_handler_t* handler,
                                     loom_op_invocation_t* invocation) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  const forward_op_data_t* data = loom_prepared_op_data(invocation->op);
  if (data->kind == kOpCopyOn) return copy_on(handler, invocation);
  if (data->kind == kOpCopyOff) return copy_off(handler, invocation);
  int32_t n = invocation->num_arguments;
  loom__handle_vector_t tangents;
  loom__handle_vector_initialize(&tangents);
  loom_status_t status = loom__handle_vector_resize_uninitialized(
      &tangents, base->allocator, (size_t)n);
  if (status) return loom_op_invocation_fail(invocation, status, true);
  // The primals replace the arguments; the tangents are kept aside.
  bool any = unwrap_arguments(base->shared, invocation,
                              loom__handle_vector_data(&tangents));
  bool differentiable = data->jvp
                            ? data->jvp->fn != NULL
                            : data->gradient && data->gradient->fn != NULL;
  if (!any || (!differentiable && (data->jvp || data->gradient))) {
    // Nothing to differentiate, or an op whose outputs have no tangent.
    status = loom__passthrough_forward(base, invocation, data->base.outer_op);
  } else if (!differentiable) {
    const char* name = loom_prepared_op_name(invocation->op);
    status = loom_op_invocation_fail(
        invocation,
        loom_make_status(LOOM_STATUS_NOT_FOUND,
                         "forward-mode derivative of %s: no JVP or gradient "
                         "function is registered for it (register one with "
                         "loom_jvp_register or loom_gradient_register)",
                         name),
        true);
  } else {
    status = differentiate(handler, invocation, data,
                           loom__handle_vector_data(&tangents));
  }
  loom__grad_release_all(loom__handle_vector_data(&tangents), n);
  loom__handle_vector_deinitialize(&tangents, base->allocator);
  return status;
}

//===----------------------------------------------------------------------===//
// Function calls (forward_call_jvp.h)
//===----------------------------------------------------------------------===//

static _Atomic(loom__forward_call_jvp_fn_t) g_call_jvp;

void loom__forward_set_call_jvp(loom__forward_call_jvp_fn_t fn) {
  atomic_store_explicit(&g_call_jvp, fn, memory_order_release);
}

void loom__forward_leave_calls(loom_op_handler_t* accumulator) {
  accumulator_t* shared = accumulator_of(accumulator);
  if (shared) shared->leaves_calls = true;
}

loom_tensor_handle_t* loom__forward_primal(loom_op_handler_t* accumulator,
                                           loom_tensor_handle_t* handle) {
  forward_tensor_t* tensor = own_tensor(accumulator_of(accumulator), handle);
  return tensor ? tensor->primal : handle;
}

// Takes a call of a stateless function whose parameters carry tangents
// (none of its captured values does): the JVP function, run beneath the
// accumulator, gives the outputs and their tangents.
static loom_status_t forward_execute_function_call(
    loom_op_handler_t* handler, loom_function_call_t* call,
    loom_tensor_handle_t** results, bool* out_taken) {
  *out_taken = false;
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  accumulator_t* accumulator = base->shared;
  loom__forward_call_jvp_fn_t jvp =
      atomic_load_explicit(&g_call_jvp, memory_order_acquire);
  if (!jvp || accumulator->leaves_calls || call->stateful) {
    return loom_ok_status();
  }
  int32_t n = call->num_inputs - call->num_captured;
  int32_t m = call->num_outputs;
  bool any = false;
  for (int32_t i = 0; i < call->num_inputs; ++i) {
    forward_tensor_t* tensor = own_tensor(accumulator, call->inputs[i]);
    if (!tensor || !tensor->tangent) continue;
    if (i >= n) return loom_ok_status();  // a captured value's tangent
    any = true;
  }
  if (!any) return loom_ok_status();
  loom__handle_vector_t handles;  // primals[n], tangents[n], ys[m], tys[m]
  loom__handle_vector_initialize(&handles);
  LOOM_RETURN_IF_ERROR(loom__handle_vector_resize(&handles, base->allocator,
                                                  (size_t)(2 * n + 2 * m)));
  loom_tensor_handle_t** primals = loom__handle_vector_data(&handles);
  loom_tensor_handle_t** tangents = primals + n;
  loom_tensor_handle_t** ys = tangents + n;
  loom_tensor_handle_t** tys = ys + m;
  for (int32_t i = 0; i < n; ++i) {
    forward_tensor_t* tensor = own_tensor(accumulator, call->inputs[i]);
    primals[i] = tensor ? tensor->primal : call->inputs[i];
    tangents[i] = tensor ? tensor->tangent : NULL;
  }
  bool done = false;
  loom_status_t status =
      loom_context_enter_scope(base->context, base->effective_outer);
  if (!status) {
    status = jvp(base->context, call->function_name, n, primals, tangents, m,
                 ys, tys, &done);
    loom_status_ignore(loom_context_exit_scope(base->context));
  }
  for (int32_t k = 0; !status && done && k < m; ++k) {
    loom_tensor_metadata_t metadata;
    status = loom__grad_metadata(ys[k], &metadata);
    if (status) break;
    if (tys[k] && loom_dtype_is_floating(metadata.dtype)) {
      status = wrap(handler, ys[k], tys[k], &results[k]);
    } else {
      loom_tensor_handle_retain(ys[k]);
      results[k] = ys[k];
    }
  }
  if (status) {
    for (int32_t k = 0; k < m; ++k) {
      loom_tensor_handle_release(results[k]);
      results[k] = NULL;
    }
  }
  *out_taken = done || status;
  // The primals and tangents are borrowed; the outputs owned.
  loom__grad_release_all(ys, 2 * m);
  loom__handle_vector_deinitialize(&handles, base->allocator);
  if (status) {
    status = loom_status_annotate(status,
                                  "forward-mode derivative of a call of '%s'",
                                  call->function_name);
  }
  return status;
}

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

// A merge is listed in its accumulator (watch_target looks for it there).
static loom_status_t forward_initialize(loom__passthrough_t* base) {
  if (!base->outer) return loom_ok_status();
  accumulator_t* accumulator = base->shared;
  pthread_mutex_lock(&accumulator->mutex);
  loom_status_t status = handler_vector_push(
      &accumulator->merges, accumulator->allocator, base->handler);
  pthread_mutex_unlock(&accumulator->mutex);
  return status;
}

static void forward_deinitialize(loom__passthrough_t* base) {
  accumulator_t* accumulator = base->shared;
  pthread_mutex_lock(&accumulator->mutex);
  loom_op_handler_t** merges = handler_vector_data(&accumulator->merges);
  for (size_t i = 0; i < handler_vector_size(&accumulator->merges); ++i) {
    if (merges[i] != base->handler) continue;
    handler_vector_erase_unordered(&accumulator->merges, i);
    break;
  }
  pthread_mutex_unlock(&accumulator->mutex);
}

static size_t forward_debug_string(const loom_op_handler_t* handler,
                                   char* buffer, size_t capacity) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  return (size_t)snprintf(buffer, capacity, "forward accumulator%s",
                          base->outer ? " (merged)" : "");
}

// Inputs from other handlers are taken as primals without a tangent.
static const loom_op_handler_vtable_t kForwardVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "FORWARD",
    LOOM__PASSTHROUGH_HOOKS,
    .execute = forward_execute,
    .release_representation = forward_release_representation,
    .static_value = forward_static_value,
    .debug_string = forward_debug_string,
    .tensor_debug_string = forward_tensor_debug_string,
    .tensor_metadata = forward_tensor_metadata,
    .execute_function_call = forward_execute_function_call,
};

static const loom__passthrough_type_t kForwardType = {
    .vtable = &kForwardVtable,
    .state_size = sizeof(loom__passthrough_t),
    .retain_shared = accumulator_retain,
    .release_shared = accumulator_release,
    .initialize = forward_initialize,
    .deinitialize = forward_deinitialize,
    .op_data_size = sizeof(forward_op_data_t),
    .prepare_op = forward_prepare_op,
};

//===----------------------------------------------------------------------===//
// The public API
//===----------------------------------------------------------------------===//

loom_status_t loom_forward_accumulator_create(
    loom_context_t* context, loom_op_handler_t** out_accumulator) {
  if (!context || !out_accumulator) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_forward_accumulator_create: %s is NULL",
                            !context ? "context" : "out_accumulator");
  }
  *out_accumulator = NULL;
  // The JVP and gradient functions register before the first op is
  // prepared on the accumulator.
  (void)loom_jvp_find("Identity");
  loom_allocator_t allocator = loom_allocator_default();
  accumulator_t* accumulator = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(allocator, sizeof(*accumulator),
                                             (void**)&accumulator));
  loom__ref_count_init(&accumulator->ref_count);
  accumulator->allocator = allocator;
  accumulator->context = context;
  pthread_mutex_init(&accumulator->mutex, NULL);
  handler_vector_initialize(&accumulator->merges);
  loom_status_t status = loom__passthrough_create(
      &kForwardType, context, allocator, accumulator, NULL, out_accumulator);
  accumulator_release(accumulator);  // the handler holds it (or it is freed)
  return status;
}

static loom_status_t not_an_accumulator(const char* function,
                                        const loom_op_handler_t* handler) {
  if (!handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: accumulator is NULL", function);
  }
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "%s: the handler is not a forward accumulator "
                          "(type '%s')",
                          function, loom_op_handler_type_name(handler));
}

// The merge of `accumulator` the tensors it watches now should live on (a
// new reference): `handler` itself when it is a merge; else the one in
// this thread's scope, found through the forward handlers above it; else
// the one entering its scope here gives (its merge with the current scope,
// made now if need be); else its only merge.
static loom_status_t watch_target(loom_op_handler_t* handler,
                                  loom_op_handler_t** out) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  accumulator_t* accumulator = base->shared;
  loom_context_t* context = accumulator->context;
  *out = NULL;
  if (base->outer) {
    loom_op_handler_retain(handler);
    *out = handler;
    return loom_ok_status();
  }
  for (loom_op_handler_t* h = loom_context_scope_handler(context);
       h && is_forward_handler(h);
       h = ((loom__passthrough_t*)loom_op_handler_state(h))->outer) {
    if (accumulator_of(h) == accumulator) {
      loom_op_handler_retain(h);
      *out = h;
      return loom_ok_status();
    }
  }
  LOOM_RETURN_IF_ERROR(loom_context_enter_scope(context, handler));
  loom_op_handler_t* top = loom_context_scope_handler(context);
  if (accumulator_of(top) == accumulator) {
    loom_op_handler_retain(top);
    *out = top;
  }
  loom_status_ignore(loom_context_exit_scope(context));
  if (*out) return loom_ok_status();
  // Open already, under a handler that is not an accumulator (a tape).
  pthread_mutex_lock(&accumulator->mutex);
  if (handler_vector_size(&accumulator->merges) == 1) {
    *out = handler_vector_data(&accumulator->merges)[0];
    loom_op_handler_retain(*out);
  }
  pthread_mutex_unlock(&accumulator->mutex);
  if (*out) return loom_ok_status();
  return loom_make_status(
      LOOM_STATUS_FAILED_PRECONDITION,
      "loom_forward_accumulator_watch: the accumulator runs in several "
      "scopes; pass the merged handler the scope runs on (the accumulator's "
      "merge, as loom_context_scope_handler gives it in its scope)");
}

loom_status_t loom_forward_accumulator_watch(
    loom_op_handler_t* handler, loom_tensor_handle_t* primal,
    loom_tensor_handle_t* tangent, loom_tensor_handle_t** out_handle) {
  static const char kFunction[] = "loom_forward_accumulator_watch";
  if (!is_forward_handler(handler)) {
    return not_an_accumulator(kFunction, handler);
  }
  if (!primal || !tangent || !out_handle) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kFunction,
                            !primal    ? "primal"
                            : !tangent ? "tangent"
                                       : "out_handle");
  }
  *out_handle = NULL;
  accumulator_t* accumulator = accumulator_of(handler);
  forward_tensor_t* existing = own_tensor(accumulator, primal);
  if (existing) primal = existing->primal;  // watched again: a new tangent
  loom_tensor_metadata_t primal_metadata, tangent_metadata;
  LOOM_RETURN_IF_ERROR(
      loom_tensor_handle_wait_metadata(primal, &primal_metadata));
  LOOM_RETURN_IF_ERROR(
      loom_tensor_handle_wait_metadata(tangent, &tangent_metadata));
  if (!loom_dtype_is_floating(primal_metadata.dtype)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: the primal is a %s tensor; only "
                            "floating-point tensors have tangents",
                            kFunction, loom_dtype_name(primal_metadata.dtype));
  }
  if (tangent_metadata.dtype != primal_metadata.dtype) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: the tangent's dtype %s does not match the "
                            "primal's %s",
                            kFunction, loom_dtype_name(tangent_metadata.dtype),
                            loom_dtype_name(primal_metadata.dtype));
  }
  if (!loom_shape_equal(&tangent_metadata.shape, &primal_metadata.shape)) {
    char got[96], want[96];
    loom_shape_format(&tangent_metadata.shape, got, sizeof(got));
    loom_shape_format(&primal_metadata.shape, want, sizeof(want));
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: the tangent's shape %s does not match the "
                            "primal's %s",
                            kFunction, got, want);
  }
  loom_op_handler_t* target = NULL;
  LOOM_RETURN_IF_ERROR(watch_target(handler, &target));
  loom_status_t status = wrap(target, primal, tangent, out_handle);
  loom_op_handler_release(target);
  return status;
}

loom_status_t loom_forward_accumulator_jvp(
    loom_op_handler_t* handler, loom_tensor_handle_t* handle,
    loom_unconnected_gradients_t unconnected,
    loom_tensor_handle_t** out_tangent) {
  static const char kFunction[] = "loom_forward_accumulator_jvp";
  if (!is_forward_handler(handler)) {
    return not_an_accumulator(kFunction, handler);
  }
  if (!handle || !out_tangent) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kFunction, !handle ? "handle" : "out_tangent");
  }
  *out_tangent = NULL;
  if (unconnected != LOOM_UNCONNECTED_NONE &&
      unconnected != LOOM_UNCONNECTED_ZERO) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: unknown unconnected gradients policy %d",
                            kFunction, (int)unconnected);
  }
  accumulator_t* accumulator = accumulator_of(handler);
  // A tensor of another accumulator nested inside this one: its primal is
  // this accumulator's tensor.
  loom_tensor_handle_t* current = handle;
  while (is_forward_handler(loom_tensor_handle_handler(current))) {
    forward_tensor_t* tensor = loom_tensor_handle_representation(current);
    if (!tensor) break;  // an error handle
    if (accumulator_of(loom_tensor_handle_handler(current)) == accumulator) {
      if (tensor->tangent) {
        loom_tensor_handle_retain(tensor->tangent);
        *out_tangent = tensor->tangent;
        return loom_ok_status();
      }
      break;
    }
    current = tensor->primal;
  }
  if (unconnected == LOOM_UNCONNECTED_NONE) return loom_ok_status();
  loom_tensor_metadata_t metadata;
  LOOM_RETURN_IF_ERROR(loom_tensor_handle_wait_metadata(handle, &metadata));
  loom_gradient_context_t context;
  loom__gradient_context_initialize(&context, accumulator->context, "ZerosLike",
                                    NULL, NULL, 0, NULL, NULL, 0, NULL, NULL);
  return loom__grad_filled(&context, &metadata, 0.0, out_tangent);
}
