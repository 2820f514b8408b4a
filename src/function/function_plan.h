// A called function's plan (function_plan.c): its body prepared once for
// one input signature — each live node an eager op of its own with its
// attrs set, its inputs slots of a flat value array — and run straight
// through when only the CPU is active (no handler scope, synchronous, no
// device or cancellation on the call, inputs on the CPU). Handlers on the
// stack take the op-by-op path (function_call.c) so that they see the body.
//
// Built from a successful op-by-op call, which fixed each node's result
// count: dead nodes (reaching neither an output nor a stateful node) are
// left out, a stateless node identical to an earlier one (op, attrs,
// inputs) reads that one's results, and a node computed from constants
// only keeps the value that call made.

#ifndef LOOM_FUNCTION_FUNCTION_PLAN_H_
#define LOOM_FUNCTION_FUNCTION_PLAN_H_

#include "frontend/eager_op_internal.h"
#include "function/function_internal.h"

// What a node produced in an op-by-op call.
typedef struct loom__function_node_values_t {
  const loom_op_def_t* def;  // of the node's op
  loom_tensor_handle_t** handles;
  int32_t count;
  int32_t* starts;  // where each output argument begins; [num_outputs] = count
} loom__function_node_values_t;

typedef struct loom__function_plan_t loom__function_plan_t;

// What an op-by-op call of `function` had and made: its op (the key: its
// attrs and, with `partitioned`, its kind), its inputs, the complete
// attrs of the call (for placeholders) and the values of every node.
typedef struct loom__function_plan_source_t {
  loom_eager_op_t* op;
  bool partitioned;
  loom_tensor_handle_t* const* inputs;  // op's, num_inputs of the function
  const loom_op_attrs_t* call_attrs;
  const loom__function_node_values_t* values;  // per node
  // Where each input and output argument begins among the call's tensors,
  // and the end (a list argument spans its length).
  const int32_t* input_starts;
  const int32_t* output_starts;
  int32_t num_results;
} loom__function_plan_source_t;

// Whether the calling thread's call of `op` may run a plan (see above).
bool loom__function_plan_applies(loom_eager_op_t* op);

// Makes the plan of `function` for `source`. Errors only for allocation
// (the caller then simply has no plan).
LOOM_MUST_USE_RESULT loom_status_t loom__function_plan_create(
    loom_function_t* function, const loom__function_plan_source_t* source,
    loom__function_plan_t** out_plan);

void loom__function_plan_destroy(loom__function_plan_t* plan);

// Whether `plan` was made for a call like `op` (same kind and attrs,
// inputs of the same dtypes and shapes, registries unchanged).
bool loom__function_plan_matches(const loom__function_plan_t* plan,
                                 loom_eager_op_t* op, bool partitioned);

// Runs `plan` on the inputs of `op`; the results (the call's tensors out:
// loom__function_plan_num_results, at most `capacity`, checked by the
// caller) as loom__function_call writes them.
LOOM_MUST_USE_RESULT loom_status_t
loom__function_plan_run(loom__function_plan_t* plan, loom_eager_op_t* op,
                        loom_tensor_handle_t** results);

// The nodes a plan runs.
int32_t loom__function_plan_num_nodes(const loom__function_plan_t* plan);

// The tensors a call running `plan` gives.
int32_t loom__function_plan_num_results(const loom__function_plan_t* plan);

// The plan of `function` in the library of `context`, taken out so that
// only the caller runs it (NULL when there is none or another thread runs
// it); loom__function_library_put_plan gives it back (or a new one: it
// replaces the old, which is destroyed, as is `plan` when the function is
// no longer in the library).
loom__function_plan_t* loom__function_library_take_plan(
    loom_context_t* context, loom_function_t* function);
void loom__function_library_put_plan(loom_context_t* context,
                                     loom_function_t* function,
                                     loom__function_plan_t* plan);

#endif  // LOOM_FUNCTION_FUNCTION_PLAN_H_
