// Calls under the numerics handler as checked functions
// (numerics_handler.c's execute_function_call): a call of a stateless
// function first asks the builder installed here — the trace layer's
// (handlers/trace/trace_call_checked.c), which can make functions — to run
// the function's checked function: the body replayed once under a numerics
// handler into a new function ("<f>_checked_<k>", every floating-point
// result followed by its CheckNumericsV2), made once per key and kept in
// the context's library, then called planned on the outer handler.
// Otherwise the body runs op by op and the handler checks each op.

#ifndef LOOM_HANDLERS_NUMERICS_NUMERICS_CALL_CHECK_H_
#define LOOM_HANDLERS_NUMERICS_NUMERICS_CALL_CHECK_H_

#include <stdbool.h>

#include "loom/eager.h"
#include "loom/op_handler.h"

// Runs the checked function of `function_name` in the current scope on
// inputs[0, n) (the call's parameters): outputs[0, m) receive new
// references. *out_done false: the builder leaves the call (nothing
// written).
typedef loom_status_t (*loom__numerics_call_check_fn_t)(
    loom_context_t* context, const char* function_name, int32_t n,
    loom_tensor_handle_t* const* inputs, int32_t m,
    loom_tensor_handle_t** outputs, bool* out_done);

// Installs `fn` for the process.
void loom__numerics_set_call_check(loom__numerics_call_check_fn_t fn);

// Makes `numerics` (a numerics handler not yet in use, and its merges)
// leave the calls it is offered, so that it checks their bodies op by op:
// what replaying a body into a checked function needs.
void loom__numerics_leave_calls(loom_op_handler_t* numerics);

#endif  // LOOM_HANDLERS_NUMERICS_NUMERICS_CALL_CHECK_H_
