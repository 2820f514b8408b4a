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

// The input of an op of definition `def` whose handler sees the op itself
// when it is not a CPU (an If's condition, a Case's branch index), or -1.
int32_t loom__control_flow_placing_input(const loom_op_def_t* def);

// Runs `op` (one of them) op by op: the branch it selects, or the loop's
// condition and body per iteration, called as eager ops of the op's
// context. As loom_eager_op_execute.
loom_status_t loom__control_flow_execute(loom_eager_op_t* op,
                                         loom_tensor_handle_t** results,
                                         int32_t capacity, int32_t* out_count);

#endif  // LOOM_FUNCTION_FUNCTION_CONTROL_FLOW_H_
