// The backward functions of calls (handlers/tape/tape_call_backward.h):
// the gradient of a call a tape recorded as one op is a function of its
// own, traced once per key and kept in the context's function library
// (function/function_derived.h), then called like any function — planned,
// on plain tensors — at every later gradient of such a call.
//
// The key is what the trace specialises on: the call's input dtypes and
// shapes, which inputs need a gradient, and which outputs bring one (with
// their dtypes and shapes). The replays of the call share this key (their
// key is the inputs' dtypes, shapes and whether the tape tracks each), so
// the backward function is made once per replay key and gradient asked for.
//
// Its body is TensorFlow's SymbolicGradient of a call: the function's body
// again, under a tape of its own that leaves calls (so it records the
// body's ops), and that tape's gradient ops; its inputs are the call's
// inputs, then the gradients of the outputs that have one; its outputs are
// the gradients of the inputs that need one. The forward ops the gradient
// does not read are dropped by the plan, as dead nodes.
//
// A call whose backward function cannot be traced (an op whose gradient
// reads a value, which a trace has not) is left to the tape, which runs the
// call again eagerly; the library remembers that, so the trace is tried
// once per key.

#include <string.h>

#include "function/function_derived.h"
#include "handlers/tape/tape_call_backward.h"
#include "handlers/trace/trace_derived.h"
#include "loom/trace.h"

// What a gradient of a call asks for.
typedef struct request_t {
  loom_context_t* eager;
  const char* function;
  int32_t first;  // the op's input the call's first input is
  int32_t n, m;
  const loom_tensor_metadata_t* inputs;  // [n]
  const bool* wanted;                    // [n]: needs a gradient
  const loom_tensor_metadata_t* seeds;   // [m]: the dys' (when given)
  const bool* seeded;                    // [m]: the outputs given a dy
  loom_tensor_handle_t* const* dys;      // [m] (the call's only)
  int32_t num_wanted, num_seeds;
} request_t;

// The key's bytes: 'B', the number of inputs and outputs, then per input
// its dtype and shape and whether it is differentiated, then per output
// whether it brings a gradient, and that gradient's dtype and shape.
static void write_key(const void* request, loom__derived_key_t* w) {
  const request_t* r = request;
  loom__derived_key_put(w, "B", 1);
  int32_t head[2] = {r->n, r->m};
  loom__derived_key_put(w, head, sizeof(head));
  for (int32_t i = 0; i < r->n; ++i) {
    loom__derived_key_put_metadata(w, true, &r->inputs[i]);
    unsigned char wanted = r->wanted[i];
    loom__derived_key_put(w, &wanted, 1);
  }
  for (int32_t k = 0; k < r->m; ++k) {
    loom__derived_key_put_metadata(w, r->seeded[k], &r->seeds[k]);
  }
}

// The body of the backward function (loom__derived_body_fn_t): the call
// again under a tape, and the tape's gradient. The parameters are the
// call's inputs, then the gradients of the outputs that bring one; outs
// receive the gradients of the inputs that need one.
static loom_status_t trace_body(const void* request,
                                loom_tensor_handle_t** params,
                                loom_tensor_handle_t** outs,
                                int32_t* out_count) {
  const request_t* r = request;
  loom_tensor_handle_t** xs = params;
  loom_tensor_handle_t** seeds = params + r->n;
  // ys[m] (owned), then targets[m] and sources[w] (borrowed)
  loom_tensor_handle_t** scratch = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      loom_allocator_system(),
      sizeof(*scratch) * (size_t)(2 * r->m + r->num_wanted + 1),
      (void**)&scratch));
  loom_tensor_handle_t** ys = scratch;
  loom_tensor_handle_t** targets = ys + r->m;
  loom_tensor_handle_t** sources = targets + r->m;
  loom_op_handler_t* tape = NULL;
  loom_status_t status = loom_tape_create(r->eager, NULL, &tape);
  if (!status) {
    loom__tape_leave_calls(tape);
    status = loom_context_enter_scope(r->eager, tape);
  }
  bool entered = !status;
  int32_t w = 0;
  for (int32_t i = 0; !status && i < r->n; ++i) {
    if (!r->wanted[i]) continue;
    sources[w++] = xs[i];
    status = loom_tape_watch(tape, xs[i]);
  }
  loom_function_t* f = NULL;
  if (!status) status = loom_context_find_function(r->eager, r->function, &f);
  if (!status) status = loom__derived_call(r->eager, f, xs, r->n, ys, r->m);
  loom_function_release(f);
  if (entered) status = loom__derived_exit_scope(r->eager, status);
  // The targets: the outputs that bring a gradient, in order.
  int32_t t = 0;
  for (int32_t k = 0; !status && k < r->m; ++k) {
    if (r->seeded[k]) targets[t++] = ys[k];
  }
  if (!status) {
    status = loom_tape_gradient(tape, targets, t, sources, w, seeds,
                                LOOM_UNCONNECTED_ZERO, outs);
  }
  if (!status) *out_count = r->num_wanted;
  loom_op_handler_release(tape);
  for (int32_t k = 0; k < r->m; ++k) loom_tensor_handle_release(ys[k]);
  loom_allocator_free(loom_allocator_system(), scratch);
  return status;
}

// Traces the backward function `name` of the request.
static loom_status_t trace_backward(const void* request, const char* name,
                                    loom_function_t** out_function) {
  const request_t* r = request;
  // The parameters' metadata: the inputs', then the seeds given.
  loom_tensor_metadata_t* params = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      loom_allocator_system(), sizeof(*params) * (size_t)(r->n + r->m + 1),
      (void**)&params));
  int32_t p = 0;
  for (int32_t i = 0; i < r->n; ++i) params[p++] = r->inputs[i];
  for (int32_t k = 0; k < r->m; ++k) {
    if (r->seeded[k]) params[p++] = r->seeds[k];
  }
  loom_status_t status = loom__derived_trace(
      r->eager, name, params, p, r->num_wanted, trace_body, r, out_function);
  loom_allocator_free(loom_allocator_system(), params);
  return status;
}

// Calls `backward` on the call's inputs and the given dys: the gradients
// of the inputs that need one, into dxs.
static loom_status_t call(loom_gradient_context_t* ctx, const request_t* r,
                          loom_function_t* backward,
                          loom_tensor_handle_t** dxs) {
  loom_allocator_t allocator = loom_allocator_system();
  loom_tensor_handle_t** grads = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator, sizeof(*grads) * ((size_t)r->num_wanted + 1), (void**)&grads));
  loom_eager_op_t* op = NULL;
  loom_status_t status =
      loom_eager_op_create(r->eager, loom_function_name(backward), &op);
  for (int32_t i = 0; !status && i < r->n; ++i) {
    status = loom_eager_op_add_input(
        op, loom_gradient_context_input(ctx, r->first + i));
  }
  for (int32_t k = 0; !status && k < r->m; ++k) {
    if (r->dys[k]) status = loom_eager_op_add_input(op, r->dys[k]);
  }
  int32_t made = 0;
  if (!status) status = loom_eager_op_execute(op, grads, r->num_wanted, &made);
  if (!status && made != r->num_wanted) {
    status =
        loom_make_status(LOOM_STATUS_INTERNAL,
                         "backward function '%s' gave %d results, %d "
                         "expected",
                         loom_function_name(backward), made, r->num_wanted);
  }
  if (op) loom_eager_op_destroy(op);
  for (int32_t i = 0, j = 0; !status && i < r->n; ++i) {
    if (!r->wanted[i]) continue;
    dxs[r->first + i] = grads[j];
    grads[j++] = NULL;
  }
  for (int32_t j = 0; j < r->num_wanted; ++j) {
    loom_tensor_handle_release(grads[j]);
  }
  loom_allocator_free(allocator, grads);
  return status;
}

bool loom__trace_backward_wants(loom_gradient_context_t* ctx, int32_t i) {
  return loom_gradient_context_input_needs_gradient(ctx, i) &&
         loom_dtype_is_floating(
             loom_gradient_context_input_metadata(ctx, i)->dtype);
}

// The request of a gradient of a call of `function_name` on the inputs
// [first, n) of the op `ctx` differentiates; request_deinit frees it.
static loom_status_t request_init(loom_gradient_context_t* ctx,
                                  const char* function_name, int32_t first,
                                  loom_tensor_handle_t* const* dys,
                                  request_t* r) {
  *r = (request_t){
      .eager = loom_gradient_context_eager(ctx),
      .function = function_name,
      .first = first,
      .n = loom_gradient_context_num_inputs(ctx) - first,
      .m = loom_gradient_context_num_outputs(ctx),
      .dys = dys,
  };
  loom_allocator_t allocator = loom_allocator_system();
  // inputs[n], seeds[m]; wanted[n], seeded[m]
  loom_tensor_metadata_t* metadata = NULL;
  bool* wanted = NULL;
  loom_status_t status = loom_allocator_calloc(
      allocator, sizeof(*metadata) * ((size_t)(r->n + r->m) + 1),
      (void**)&metadata);
  if (!status) {
    status = loom_allocator_calloc(
        allocator, sizeof(*wanted) * ((size_t)(r->n + r->m) + 1),
        (void**)&wanted);
  }
  r->inputs = metadata;
  r->seeds = metadata ? metadata + r->n : NULL;
  r->wanted = wanted;
  r->seeded = wanted ? wanted + r->n : NULL;
  for (int32_t i = 0; !status && i < r->n; ++i) {
    metadata[i] = *loom_gradient_context_input_metadata(ctx, first + i);
    wanted[i] = loom__trace_backward_wants(ctx, first + i);
    r->num_wanted += wanted[i];
  }
  for (int32_t k = 0; !status && k < r->m; ++k) {
    if (!dys[k]) continue;
    wanted[r->n + k] = true;  // seeded[k]
    status = loom_tensor_handle_wait_metadata(dys[k], &metadata[r->n + k]);
    ++r->num_seeds;
  }
  return status;
}

static void request_deinit(request_t* r) {
  loom_allocator_free(loom_allocator_system(), (void*)r->wanted);
  loom_allocator_free(loom_allocator_system(), (void*)r->inputs);
}

// The backward function of the request (a call of `base`), found or made;
// NULL when it cannot be traced.
static loom_status_t find_or_make(const request_t* r, loom_function_t* base,
                                  loom_function_t** out_backward) {
  loom__derived_builder_t builder = {r, write_key, trace_backward};
  bool made = false;
  LOOM_RETURN_IF_ERROR(loom__derived_find_or_make(
      r->eager, base, r->function, "backward", &builder, out_backward, &made));
  if (*out_backward) loom__function_count_backward(base, made);
  return loom_ok_status();
}

loom_status_t loom__trace_backward_function(loom_gradient_context_t* ctx,
                                            const char* function_name,
                                            int32_t first,
                                            loom_tensor_handle_t* const* dys,
                                            loom_function_t** out_backward) {
  *out_backward = NULL;
  loom_function_t* base = NULL;
  LOOM_RETURN_IF_ERROR(loom_context_find_function(
      loom_gradient_context_eager(ctx), function_name, &base));
  request_t r;
  loom_status_t status = request_init(ctx, function_name, first, dys, &r);
  if (!status && r.num_wanted && r.num_seeds) {
    status = find_or_make(&r, base, out_backward);
  }
  request_deinit(&r);
  loom_function_release(base);
  return status;
}

loom_status_t loom__trace_backward_function_of(
    loom_context_t* context, const char* function_name, int32_t n, int32_t m,
    const loom_tensor_metadata_t* inputs, const bool* wanted,
    const loom_tensor_metadata_t* seeds, const bool* seeded,
    loom_function_t** out_backward) {
  *out_backward = NULL;
  loom_function_t* base = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_context_find_function(context, function_name, &base));
  request_t r = {
      .eager = context,
      .function = function_name,
      .n = n,
      .m = m,
      .inputs = inputs,
      .wanted = wanted,
      .seeds = seeds,
      .seeded = seeded,
  };
  for (int32_t i = 0; i < n; ++i) r.num_wanted += wanted[i];
  for (int32_t k = 0; k < m; ++k) r.num_seeds += seeded[k];
  loom_status_t status = loom_ok_status();
  if (r.num_wanted && r.num_seeds)
    status = find_or_make(&r, base, out_backward);
  loom_function_release(base);
  return status;
}

static loom_status_t call_backward(loom_gradient_context_t* ctx,
                                   const char* function_name,
                                   loom_tensor_handle_t* const* dys,
                                   loom_tensor_handle_t** dxs, bool* out_done) {
  *out_done = false;
  loom_function_t* base = NULL;
  loom_status_t status = loom_context_find_function(
      loom_gradient_context_eager(ctx), function_name, &base);
  if (status) {
    loom_status_free(status);  // not a function of the library: the tape's
    return loom_ok_status();
  }
  request_t r;
  status = request_init(ctx, function_name, 0, dys, &r);
  if (!status && (!r.num_wanted || !r.num_seeds)) {
    *out_done = true;  // no gradient flows
  } else if (!status) {
    loom_function_t* backward = NULL;
    status = find_or_make(&r, base, &backward);
    if (!status && backward) {
      status = call(ctx, &r, backward, dxs);
      *out_done = true;
    }
    loom_function_release(backward);
  }
  request_deinit(&r);
  loom_function_release(base);
  return status;
}

void loom__trace_install_call_backward(void) {
  loom__tape_set_call_backward(call_backward);
}
