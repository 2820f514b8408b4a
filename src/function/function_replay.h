// A function's replay cache and the offer of a call to a handler as one op
// (the execute_function_call hook of loom/op_handler.h): function_replay.c.

#ifndef LOOM_FUNCTION_FUNCTION_REPLAY_H_
#define LOOM_FUNCTION_FUNCTION_REPLAY_H_

#include "loom/eager.h"
#include "loom/function.h"
#include "loom/op_handler.h"

// A function keeps at most this many replays; calls of other keys then
// have none (their handlers keep nothing across calls).
enum { kFunctionMaxReplays = 64 };

// Runs the call op by op into results[0, num_outputs) (function_call.c).
typedef loom_status_t (*loom__function_run_fn_t)(
    void* state, loom_tensor_handle_t** results);

// Offers the call `op` of `function` to `handler` (which has the
// execute_function_call hook): finds or makes the call's replay when the
// handler gives summaries, then lets the handler take the call (*out_taken
// true, results written) or leave it. `run(run_state, results)` runs the
// body op by op. The call gives `num_results` tensors (a list output
// counts its length).
loom_status_t loom__function_offer_call(
    loom_eager_op_t* op, loom_function_t* function, int32_t num_results,
    loom_op_handler_t* handler, loom__function_run_fn_t run, void* run_state,
    loom_tensor_handle_t** results, bool* out_taken);

// Frees the replays and what handlers kept on them (the function goes).
void loom__function_release_replays(loom_function_t* function);

#endif  // LOOM_FUNCTION_FUNCTION_REPLAY_H_
