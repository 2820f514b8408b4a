// TensorFlow's functional control flow as eager ops (function_control_flow.c):
// If, StatelessIf, Case, StatelessCase, While and StatelessWhile, whose
// branches, condition and body are functions of the context's library.

#ifndef LOOM_FUNCTION_FUNCTION_CONTROL_FLOW_H_
#define LOOM_FUNCTION_FUNCTION_CONTROL_FLOW_H_

#include "loom/eager.h"

// Registers the six ops in `registry` (those already there are kept).
loom_status_t loom__control_flow_register(loom_op_registry_t* registry);

// Whether `def` is one of them.
bool loom__control_flow_is_op(const loom_op_def_t* def);

// Whether `op`, a control flow op or not, runs as one op on a handler
// rather than op by op: an If whose condition (a Case whose index, a While
// one of whose loop variables) lives on a handler that cannot give it one
// value to read (a custom device, a batched vmap tensor), which then sees
// the op itself.
bool loom__control_flow_runs_on_handler(loom_eager_op_t* op);

// Runs `op` (one of them) op by op: the branch it selects, or the loop's
// condition and body per iteration, called as eager ops of the op's
// context. As loom_eager_op_execute.
loom_status_t loom__control_flow_execute(loom_eager_op_t* op,
                                         loom_tensor_handle_t** results,
                                         int32_t capacity, int32_t* out_count);

#endif  // LOOM_FUNCTION_FUNCTION_CONTROL_FLOW_H_
