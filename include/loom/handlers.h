// Ready-made front-end op handlers (src/handlers/*): transformations that
// watch every op of a scope and pass it on. Enter one as a scope
// (loom_context_enter_scope; from the TensorFlow API, place ops on its
// device name) and every op of the scope goes through it:
//
//   loom_op_handler_t* numerics;
//   LOOM_RETURN_IF_ERROR(loom_numerics_handler_create(ctx, &numerics));
//   LOOM_RETURN_IF_ERROR(loom_context_enter_scope(ctx, numerics));
//   ... ops: an inf or NaN result is an error naming the op ...
//   LOOM_RETURN_IF_ERROR(loom_context_exit_scope(ctx));
//   loom_op_handler_release(numerics);
//
// Both are pass-through handlers: they run each op on the handler they are
// merged with (the CPU, or the scope entered before them), and the op's
// results are that handler's tensors, so nothing stays on them once the
// scope is left.

#ifndef LOOM_HANDLERS_H_
#define LOOM_HANDLERS_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "loom/eager.h"
#include "loom/macros.h"
#include "loom/op_handler.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

// "LOGGING", the front end's logging transformation, entered as a scope
// (loom_context_enter_scope) and merged like any front-end handler; the
// runtime's loom_dispatch_logging_handler_create instead wraps one given
// handler, as TFRT's logging op handler does. Writes one line per op to
// `stream` (NULL: counts ops without
// printing), then runs it:
//   [7] MatMul(float [2, 2], float [2, 2]) T=DT_FLOAT, transpose_a=false,
//       transpose_b=false
// (one line; `?` for what is not known yet). Attributes are those the op
// will run with (given, inferred and defaults). The handler and its merges
// share the stream and the count.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_scope_logging_handler_create(
    loom_context_t* context, FILE* stream, loom_op_handler_t** out_handler);

// Whether a logging handler (and its merges) logs the calls of functions
// of the eager API it is offered as one op — one line
//   [3] f(float [3]) (function call)
// and none for the body's ops — rather than the body op by op (the
// default). The call is offered when the handler is the innermost scope
// (loom/op_handler.h, execute_function_call). INVALID_ARGUMENT when
// `handler` is not a logging handler.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_scope_logging_handler_set_whole_calls(loom_op_handler_t* handler,
                                           bool whole_calls);

// The number of ops a logging handler (or any merge of it) has seen.
LOOM_API int64_t
loom_scope_logging_handler_count(const loom_op_handler_t* handler);

// "NUMERICS": after each op, checks its floating-point results (half,
// bfloat16, float, double) for infinities and NaNs, as
// tf.debugging.enable_check_numerics does: a result holding one becomes an
// error (INVALID_ARGUMENT) naming the op, returned by a synchronous execute
// and carried by the result otherwise:
//   Detected Infinity or NaN in output 0 of eagerly-executing op "RealDiv"
//   (# of outputs: 1) : Tensor had +Inf values
// The check is the op CheckNumericsV2 run after each op, so asynchronous
// contexts keep running ahead.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_numerics_handler_create(
    loom_context_t* context, loom_op_handler_t** out_handler);

LOOM_EXTERN_C_END

#endif  // LOOM_HANDLERS_H_
