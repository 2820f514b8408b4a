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

// Whether the ops a call (or a control-flow op) `op` runs op by op reach a
// handler: a scope is open on the thread, or an input lives on a handler
// other than the context's CPU and a custom device (which runs the ops it
// knows, not the indicators). Such a call marks the values crossing its
// boundary with the indicator ops (FunctionInput, IfInput, ...), which the
// handlers see and may intercept (TensorFlow's op-handler design).
bool loom__function_call_sees_handlers(loom_eager_op_t* op);

// Executes indicator op `op_name` on `input` in `op`'s context, with `op`'s
// device and cancellation and attrs `index` and, when `extra_attr` is not
// NULL, `extra_attr` = `extra_value` (ints); writes its `count` results
// (new references; nothing on error). A resource handle passes as it is
// (each result is `input`).
loom_status_t loom__function_indicator(loom_eager_op_t* op, const char* op_name,
                                       loom_tensor_handle_t* input,
                                       int64_t index, const char* extra_attr,
                                       int64_t extra_value,
                                       loom_tensor_handle_t** results,
                                       int32_t count);

#endif  // LOOM_FUNCTION_FUNCTION_CALL_H_
