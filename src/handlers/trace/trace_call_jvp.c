// The JVP functions of calls (handlers/forward/forward_call_jvp.h): a call
// a forward accumulator takes as one op runs a function of its own, traced
// once per key and kept in the context's library
// (function/function_derived.h) as "<f>_jvp_<k>", then called like any
// function — planned, on plain tensors — at every later such call.
//
// The key is what the trace specialises on: the call's input dtypes and
// shapes, and which inputs carry a tangent. The body is the function's
// body under an accumulator of its own that leaves calls (so it
// differentiates the body's ops): its inputs are the call's, then the
// tangents given; its outputs are the call's outputs, then their tangents
// (zeros where the inputs do not reach).
//
// A body whose JVP cannot be traced is left to the accumulator (op by op);
// the library remembers that, so the trace is tried once per key.

#include <string.h>

#include "handlers/forward/forward_call_jvp.h"
#include "handlers/trace/trace_derived.h"
#include "loom/trace.h"

typedef struct jvp_request_t {
  loom_context_t* eager;
  const char* function;
  int32_t n, m;
  const loom_tensor_metadata_t* inputs;   // [n]
  loom_tensor_handle_t* const* tangents;  // [n], NULL: zero
  int32_t num_tangents;
  // A loop body's (m == n): only the tangents of the outputs whose input
  // has one, so that its outputs match its inputs.
  bool loop;
} jvp_request_t;

// 'J' ('L' for a loop body's), the number of inputs and outputs, then per
// input its dtype and shape and whether it carries a tangent.
static void write_key(const void* request, loom__derived_key_t* w) {
  const jvp_request_t* r = request;
  loom__derived_key_put(w, r->loop ? "L" : "J", 1);
  int32_t head[2] = {r->n, r->m};
  loom__derived_key_put(w, head, sizeof(head));
  for (int32_t i = 0; i < r->n; ++i) {
    loom__derived_key_put_metadata(w, true, &r->inputs[i]);
    unsigned char tangent = r->tangents[i] != NULL;
    loom__derived_key_put(w, &tangent, 1);
  }
}

// The call under an accumulator of its own, in the trace's scope: xs[n]
// and ts (the tangents given) are its parameters; outs[2m] receive the
// outputs and their tangents. watched[n] and ys[m] are scratch (owned).
static loom_status_t accumulate(const jvp_request_t* r,
                                loom_tensor_handle_t** xs,
                                loom_tensor_handle_t** ts,
                                loom_tensor_handle_t** watched,
                                loom_tensor_handle_t** ys,
                                loom_tensor_handle_t** outs) {
  loom_op_handler_t* accumulator = NULL;
  LOOM_RETURN_IF_ERROR(loom_forward_accumulator_create(r->eager, &accumulator));
  loom__forward_leave_calls(accumulator);
  loom_status_t status = loom_context_enter_scope(r->eager, accumulator);
  if (status) {
    loom_op_handler_release(accumulator);
    return status;
  }
  for (int32_t i = 0, t = 0; !status && i < r->n; ++i) {
    if (r->tangents[i]) {
      status = loom_forward_accumulator_watch(accumulator, xs[i], ts[t++],
                                              &watched[i]);
    } else {
      loom_tensor_handle_retain(xs[i]);
      watched[i] = xs[i];
    }
  }
  loom_function_t* f = NULL;
  if (!status) status = loom_context_find_function(r->eager, r->function, &f);
  if (!status) {
    status = loom__derived_call(r->eager, f, watched, r->n, ys, r->m);
  }
  loom_function_release(f);
  status = loom__derived_exit_scope(r->eager, status);
  for (int32_t k = 0; !status && k < r->m; ++k) {
    outs[k] = loom__forward_primal(accumulator, ys[k]);
    loom_tensor_handle_retain(outs[k]);
    status = loom_forward_accumulator_jvp(
        accumulator, ys[k], LOOM_UNCONNECTED_ZERO, &outs[r->m + k]);
  }
  loom_op_handler_release(accumulator);
  return status;
}

// The body of the JVP function (loom__derived_body_fn_t): the parameters
// are the primals, then the tangents given.
static loom_status_t trace_body(const void* request,
                                loom_tensor_handle_t** params,
                                loom_tensor_handle_t** outs,
                                int32_t* out_count) {
  const jvp_request_t* r = request;
  // watched[n], ys[m]: owned
  loom_tensor_handle_t** scratch = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      loom_allocator_system(), sizeof(*scratch) * (size_t)(r->n + r->m + 1),
      (void**)&scratch));
  loom_status_t status =
      accumulate(r, params, params + r->n, scratch, scratch + r->n, outs);
  int32_t num_outs = 2 * r->m;
  if (!status && r->loop) {
    // The tangents kept move up after the outputs (outs stays owned in
    // full: the others go to the end).
    num_outs = r->m;
    for (int32_t k = 0; k < r->m; ++k) {
      if (!r->tangents[k]) continue;
      loom_tensor_handle_t* kept = outs[r->m + k];
      outs[r->m + k] = outs[num_outs];
      outs[num_outs++] = kept;
    }
  }
  if (!status) *out_count = num_outs;
  for (int32_t i = 0; i < r->n + r->m; ++i) {
    loom_tensor_handle_release(scratch[i]);
  }
  loom_allocator_free(loom_allocator_system(), scratch);
  return status;
}

// Traces the JVP function `name` of the request.
static loom_status_t trace_jvp(const void* request, const char* name,
                               loom_function_t** out_function) {
  const jvp_request_t* r = request;
  // The parameters' metadata: the inputs', then those with a tangent.
  loom_tensor_metadata_t* params = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      loom_allocator_system(), sizeof(*params) * (size_t)(2 * r->n + 1),
      (void**)&params));
  int32_t p = r->n;
  for (int32_t i = 0; i < r->n; ++i) {
    params[i] = r->inputs[i];
    if (r->tangents[i]) params[p++] = r->inputs[i];
  }
  loom_status_t status = loom__derived_trace(
      r->eager, name, params, p, 2 * r->m, trace_body, r, out_function);
  loom_allocator_free(loom_allocator_system(), params);
  return status;
}

loom_status_t loom__trace_jvp_function(loom_context_t* context,
                                       const char* function_name, int32_t n,
                                       loom_tensor_handle_t* const* primals,
                                       loom_tensor_handle_t* const* tangents,
                                       int32_t m, bool loop,
                                       loom_function_t** out_jvp) {
  *out_jvp = NULL;
  loom_function_t* base = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_context_find_function(context, function_name, &base));
  loom_allocator_t allocator = loom_allocator_system();
  loom_tensor_metadata_t* metadata = NULL;
  loom_status_t status = loom_allocator_calloc(
      allocator, sizeof(*metadata) * ((size_t)n + 1), (void**)&metadata);
  jvp_request_t r = {
      .eager = context,
      .function = function_name,
      .n = n,
      .m = m,
      .inputs = metadata,
      .tangents = tangents,
      .loop = loop,
  };
  for (int32_t i = 0; !status && i < n; ++i) {
    status = loom_tensor_handle_wait_metadata(primals[i], &metadata[i]);
    r.num_tangents += tangents[i] != NULL;
  }
  loom__derived_builder_t builder = {&r, write_key, trace_jvp};
  bool traced = false;
  if (!status) {
    status = loom__derived_find_or_make(context, base, function_name, "jvp",
                                        &builder, out_jvp, &traced);
  }
  loom_allocator_free(allocator, metadata);
  loom_function_release(base);
  return status;
}

static loom_status_t call_jvp(loom_context_t* context,
                              const char* function_name, int32_t n,
                              loom_tensor_handle_t* const* primals,
                              loom_tensor_handle_t* const* tangents, int32_t m,
                              loom_tensor_handle_t** outputs,
                              loom_tensor_handle_t** output_tangents,
                              bool* out_done) {
  *out_done = false;
  if (!loom_context_has_function(context, function_name)) {
    return loom_ok_status();  // not a function of the library
  }
  loom_function_t* jvp = NULL;
  LOOM_RETURN_IF_ERROR(loom__trace_jvp_function(
      context, function_name, n, primals, tangents, m, false, &jvp));
  if (!jvp) return loom_ok_status();
  loom_allocator_t allocator = loom_allocator_system();
  loom_tensor_handle_t** results = NULL;
  loom_status_t status = loom_allocator_calloc(
      allocator, sizeof(*results) * ((size_t)(2 * m) + 1), (void**)&results);
  loom_eager_op_t* op = NULL;
  if (!status) {
    status = loom_eager_op_create(context, loom_function_name(jvp), &op);
  }
  for (int32_t i = 0; !status && i < n; ++i) {
    status = loom_eager_op_add_input(op, primals[i]);
  }
  for (int32_t i = 0; !status && i < n; ++i) {
    if (tangents[i]) status = loom_eager_op_add_input(op, tangents[i]);
  }
  int32_t made = 0;
  if (!status) status = loom_eager_op_execute(op, results, 2 * m, &made);
  if (!status && made != 2 * m) {
    status = loom_make_status(LOOM_STATUS_INTERNAL,
                              "JVP function '%s' gave %d results, %d "
                              "expected",
                              loom_function_name(jvp), made, 2 * m);
  }
  for (int32_t k = 0; !status && k < m; ++k) {
    outputs[k] = results[k];
    output_tangents[k] = results[m + k];
    results[k] = results[m + k] = NULL;
  }
  *out_done = true;
  if (op) loom_eager_op_destroy(op);
  if (results) {
    for (int32_t k = 0; k < 2 * m; ++k) loom_tensor_handle_release(results[k]);
  }
  loom_allocator_free(allocator, results);
  loom_function_release(jvp);
  return status;
}

void loom__trace_install_call_jvp(void) {
  loom__forward_set_call_jvp(call_jvp);
}
