// Calling an eager function: the body op by op through the eager execution
// path (function_call.c).

#ifndef LOOM_FUNCTION_FUNCTION_CALL_H_
#define LOOM_FUNCTION_FUNCTION_CALL_H_

#include "loom/eager.h"
#include "loom/function.h"

// Runs `function` with the inputs of `op` (the call), writing up to
// `capacity` results as loom_eager_op_execute does. `partitioned`: `op` is
// a PartitionedCall (its attrs are the call op's, not the function's; its
// Tin and Tout, when set, must match the function's types).
loom_status_t loom__function_call(loom_eager_op_t* op,
                                  loom_function_t* function, bool partitioned,
                                  loom_tensor_handle_t** results,
                                  int32_t capacity, int32_t* out_count);

#endif  // LOOM_FUNCTION_FUNCTION_CALL_H_
