// The checked functions of calls under the numerics handler
// (handlers/numerics/numerics_call_check.h): a call of a stateless
// function under the handler runs a function of its own, the body replayed
// once under a numerics handler of its own that leaves calls (so that it
// checks the body's ops: each floating-point result followed by its
// CheckNumericsV2), kept in the context's library
// (function/function_derived.h) as "<f>_checked_<k>", then called like any
// function — planned, on plain tensors — at every later such call. The key
// is the inputs' dtypes and shapes. A body that cannot be traced is left to
// the handler (op by op); the library remembers that.

#include <string.h>

#include "handlers/numerics/numerics_call_check.h"
#include "handlers/trace/trace_derived.h"
#include "loom/handlers.h"
#include "loom/trace.h"

typedef struct check_request_t {
  loom_context_t* eager;
  const char* function;
  int32_t n, m;
  const loom_tensor_metadata_t* inputs;  // [n]
} check_request_t;

// 'N', the number of inputs and outputs, then per input its dtype and
// shape.
static void write_key(const void* request, loom__derived_key_t* w) {
  const check_request_t* r = request;
  loom__derived_key_put(w, "N", 1);
  int32_t head[2] = {r->n, r->m};
  loom__derived_key_put(w, head, sizeof(head));
  for (int32_t i = 0; i < r->n; ++i) {
    loom__derived_key_put_metadata(w, true, &r->inputs[i]);
  }
}

// The call again in the scope of a numerics handler that leaves calls:
// params[n] in, ys[m] out.
static loom_status_t trace_body(const check_request_t* r,
                                loom_tensor_handle_t** params,
                                loom_tensor_handle_t** ys) {
  loom_op_handler_t* numerics = NULL;
  LOOM_RETURN_IF_ERROR(loom_numerics_handler_create(r->eager, &numerics));
  loom__numerics_leave_calls(numerics);
  loom_status_t status = loom_context_enter_scope(r->eager, numerics);
  if (!status) {
    loom_function_t* f = NULL;
    status = loom_context_find_function(r->eager, r->function, &f);
    if (!status) {
      status = loom__derived_call(r->eager, f, params, r->n, ys, r->m);
    }
    loom_function_release(f);
    status = loom__derived_exit_scope(r->eager, status);
  }
  loom_op_handler_release(numerics);
  return status;
}

// Traces the checked function `name` of the request.
static loom_status_t trace_checked(const void* request, const char* name,
                                   loom_function_t** out_function) {
  const check_request_t* r = request;
  loom_allocator_t allocator = loom_allocator_system();
  // params[n], ys[m]: all owned
  size_t count = (size_t)(r->n + r->m) + 1;
  loom_tensor_handle_t** all = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*all) * count, (void**)&all));
  loom_tensor_handle_t** params = all;
  loom_tensor_handle_t** ys = params + r->n;
  loom_op_handler_t* trace = NULL;
  // Executing: ops of constants only run as they are traced.
  loom_status_t status = loom_trace_create_executing(r->eager, name, &trace);
  bool entered = false;
  if (!status) {
    status = loom_context_enter_scope(r->eager, trace);
    entered = !status;
  }
  for (int32_t i = 0; !status && i < r->n; ++i) {
    status = loom_trace_add_parameter(trace, NULL, r->inputs[i].dtype,
                                      &r->inputs[i].shape, &params[i]);
  }
  if (!status) status = trace_body(r, params, ys);
  if (entered) status = loom__derived_exit_scope(r->eager, status);
  if (!status) status = loom_trace_finish(trace, ys, r->m, out_function);
  loom_op_handler_release(trace);
  for (size_t i = 0; i < count; ++i) loom_tensor_handle_release(all[i]);
  loom_allocator_free(allocator, all);
  return status;
}

static loom_status_t call_checked(loom_context_t* context,
                                  const char* function_name, int32_t n,
                                  loom_tensor_handle_t* const* inputs,
                                  int32_t m, loom_tensor_handle_t** outputs,
                                  bool* out_done) {
  *out_done = false;
  loom_function_t* base = NULL;
  loom_status_t status =
      loom_context_find_function(context, function_name, &base);
  if (status) {
    loom_status_free(status);  // not a function of the library
    return loom_ok_status();
  }
  loom_allocator_t allocator = loom_allocator_system();
  loom_tensor_metadata_t* metadata = NULL;
  status = loom_allocator_calloc(allocator, sizeof(*metadata) * ((size_t)n + 1),
                                 (void**)&metadata);
  check_request_t r = {
      .eager = context,
      .function = function_name,
      .n = n,
      .m = m,
      .inputs = metadata,
  };
  for (int32_t i = 0; !status && i < n; ++i) {
    status = loom_tensor_handle_wait_metadata(inputs[i], &metadata[i]);
  }
  loom_function_t* checked = NULL;
  if (!status) {
    loom__derived_builder_t builder = {&r, write_key, trace_checked};
    bool made = false;
    status = loom__derived_find_or_make(context, base, function_name, "checked",
                                        &builder, &checked, &made);
  }
  if (!status && checked) {
    status = loom__derived_call(context, checked, inputs, n, outputs, m);
    *out_done = true;
  }
  loom_allocator_free(allocator, metadata);
  loom_function_release(checked);
  loom_function_release(base);
  return status;
}

void loom__trace_install_call_checked(void) {
  loom__numerics_set_call_check(call_checked);
}
