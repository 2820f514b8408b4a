// Calls under a forward accumulator (forward.c's execute_function_call): a
// call of a stateless function whose parameters carry tangents is taken as
// one op, and its primal and tangent outputs come from the function's JVP
// function — the body traced once under an accumulator of its own, made by
// the builder installed here (the trace layer's, handlers/trace/
// trace_call_jvp.c) — called beneath the accumulator. Without a builder,
// or when it declines, the body runs op by op and the accumulator
// differentiates each op.

#ifndef LOOM_HANDLERS_FORWARD_FORWARD_CALL_JVP_H_
#define LOOM_HANDLERS_FORWARD_FORWARD_CALL_JVP_H_

#include <stdbool.h>

#include "loom/autodiff.h"
#include "loom/op_handler.h"

// Runs the JVP function of `function_name` in the current scope on
// primals[0, n) and the tangents given (NULL: zero): outputs[0, m) and
// output_tangents[0, m) receive new references. *out_done false: the
// builder leaves the call to the accumulator (nothing written).
typedef loom_status_t (*loom__forward_call_jvp_fn_t)(
    loom_context_t* context, const char* function_name, int32_t n,
    loom_tensor_handle_t* const* primals, loom_tensor_handle_t* const* tangents,
    int32_t m, loom_tensor_handle_t** outputs,
    loom_tensor_handle_t** output_tangents, bool* out_done);

// Installs `fn` for the process.
void loom__forward_set_call_jvp(loom__forward_call_jvp_fn_t fn);

// Makes `accumulator` (and its merges) leave the calls it is offered, so
// that it differentiates their bodies op by op: what tracing a JVP
// function needs.
void loom__forward_leave_calls(loom_op_handler_t* accumulator);

// The primal of `handle` when it is a tensor of `accumulator`, else
// `handle` (borrowed either way).
loom_tensor_handle_t* loom__forward_primal(loom_op_handler_t* accumulator,
                                           loom_tensor_handle_t* handle);

#endif  // LOOM_HANDLERS_FORWARD_FORWARD_CALL_JVP_H_
