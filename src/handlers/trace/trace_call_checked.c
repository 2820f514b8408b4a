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
// params[n] in, outs[m] out.
static loom_status_t trace_body(const void* request,
                                loom_tensor_handle_t** params,
                                loom_tensor_handle_t** outs,
                                int32_t* out_count) {
  const check_request_t* r = request;
  loom_op_handler_t* numerics = NULL;
  LOOM_RETURN_IF_ERROR(loom_numerics_handler_create(r->eager, &numerics));
  loom__numerics_leave_calls(numerics);
  loom_status_t status = loom_context_enter_scope(r->eager, numerics);
  if (!status) {
    loom_function_t* f = NULL;
    status = loom_context_find_function(r->eager, r->function, &f);
    if (!status) {
      status = loom__derived_call(r->eager, f, params, r->n, outs, r->m);
    }
    if (!status) *out_count = r->m;
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
  return loom__derived_trace(r->eager, name, r->inputs, r->n, r->m, trace_body,
                             r, out_function);
}

static loom_status_t call_checked(loom_context_t* context,
                                  const char* function_name, int32_t n,
                                  loom_tensor_handle_t* const* inputs,
                                  int32_t m, loom_tensor_handle_t** outputs,
                                  bool* out_done) {
  *out_done = false;
  loom_tensor_metadata_t* metadata = NULL;
  LOOM_RETURN_IF_ERROR(loom__derived_metadata(inputs, n, &metadata));
  check_request_t r = {
      .eager = context,
      .function = function_name,
      .n = n,
      .m = m,
      .inputs = metadata,
  };
  loom__derived_builder_t builder = {&r, write_key, trace_checked};
  loom_status_t status =
      loom__derived_run(context, function_name, "checked", &builder, inputs, n,
                        outputs, m, out_done);
  loom_allocator_free(loom_allocator_system(), metadata);
  return status;
}

void loom__trace_install_call_checked(void) {
  loom__numerics_set_call_check(call_checked);
}
