// Captured values of a traced function (handlers/trace): the body reads
// them as its last inputs, and each call binds them itself, so that the
// function's callers see a signature without them (the call signature) and
// pass only the others (TensorFlow's captured inputs of a ConcreteFunction).

#ifndef LOOM_FUNCTION_FUNCTION_CAPTURE_H_
#define LOOM_FUNCTION_FUNCTION_CAPTURE_H_

#include "loom/eager.h"
#include "loom/function.h"

typedef struct loom__function_captures_t {
  loom_op_registry_t* registry;    // holds `signature`
  const loom_op_def_t* signature;  // the inputs but the captured ones
  loom_tensor_handle_t** handles;  // retained, one per captured input
  int32_t count;
} loom__function_captures_t;

// Makes the last `count` inputs of `function` (just finished, no attrs,
// not yet shared) captured: handles[i] (retained) is bound to input
// num_inputs - count + i at every call.
LOOM_MUST_USE_RESULT loom_status_t loom__function_set_captures(
    loom_function_t* function, loom_tensor_handle_t* const* handles,
    int32_t count);

// The signature callers see: without the captured inputs.
const loom_op_def_t* loom__function_call_signature(
    const loom_function_t* function);

// The number of captured inputs (0 for a function without captures).
int32_t loom__function_num_captures(const loom_function_t* function);

// Frees the captures (when the function goes).
void loom__function_release_captures(loom_function_t* function);

// Calls `function`, which has captures, with the inputs of `op` followed
// by the captured values; as loom__function_call otherwise.
LOOM_MUST_USE_RESULT loom_status_t loom__function_call_captured(
    loom_eager_op_t* op, loom_function_t* function, bool partitioned,
    loom_tensor_handle_t** results, int32_t capacity, int32_t* out_count);

#endif  // LOOM_FUNCTION_FUNCTION_CAPTURE_H_
