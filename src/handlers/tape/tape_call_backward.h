// The backward functions of calls (tape_call.c): the gradient of a call
// the tape recorded as one op first asks the builder installed here — the
// trace layer's, which can make functions (handlers/trace/
// trace_call_backward.c) — and otherwise runs the call again under a tape
// of its own.

#ifndef LOOM_HANDLERS_TAPE_TAPE_CALL_BACKWARD_H_
#define LOOM_HANDLERS_TAPE_TAPE_CALL_BACKWARD_H_

#include <stdbool.h>

#include "loom/autodiff.h"
#include "loom/op_handler.h"

// Computes the gradients dxs[i] of the inputs that need one, from the
// gradients `dys` (NULL where none) of the outputs of a call of
// `function_name`; *out_done false: the builder leaves this call to the
// tape.
typedef loom_status_t (*loom__tape_call_backward_fn_t)(
    loom_gradient_context_t* context, const char* function_name,
    loom_tensor_handle_t* const* dys, loom_tensor_handle_t** dxs,
    bool* out_done);

// Installs `fn` for the process (one builder; the last one installed).
void loom__tape_set_call_backward(loom__tape_call_backward_fn_t fn);

// Makes `tape` (a tape made by loom_tape_create, not yet in use) leave the
// function calls it is offered, so that it records their bodies op by op:
// what computing a call's gradient needs.
void loom__tape_leave_calls(loom_op_handler_t* tape);

#endif  // LOOM_HANDLERS_TAPE_TAPE_CALL_BACKWARD_H_
