// The objects of TensorFlow's unified C API, shared by eager_unified.c
// (the eager side and what both sides share) and eager_unified_graph.c
// (tracing contexts and functions).

#ifndef LOOM_COMPAT_EAGER_UNIFIED_INTERNAL_H_
#define LOOM_COMPAT_EAGER_UNIFIED_INTERNAL_H_

#include <stdatomic.h>

#include "loom/eager.h"
#include "loom/function.h"
#include "tensorflow/c/eager/c_api_unified_experimental.h"

struct TF_ExecutionContext {
  // TF_DeleteExecutionContext drops one reference and each abstract op
  // holds one: TensorFlow's TF_FinalizeFunction deletes a tracing context
  // while its ops may still be alive.
  _Atomic int32_t references;
  loom_allocator_t allocator;
  loom_context_t* context;  // owned
  // A tracing context's trace handler (TF_CreateFunction), else NULL.
  loom_op_handler_t* trace;
};

struct TF_AbstractOp {
  loom_allocator_t allocator;
  TF_ExecutionContext* context;
  loom_eager_op_t* op;  // NULL until the type is set
  char name[128];
};

struct TF_OutputList {
  loom_allocator_t allocator;
  int expected;  // outputs the next execution may produce
  int count;
  int capacity;
  TF_AbstractTensor** outputs;  // not owned
};

struct TF_AbstractFunction {
  loom_allocator_t allocator;
  loom_function_t* function;  // owned
};

// Takes a reference on `ctx`; TF_DeleteExecutionContext drops one.
void loom__tf_execution_context_retain(TF_ExecutionContext* ctx);

// Grows the list to hold `capacity` outputs.
loom_status_t loom__tf_output_list_reserve(TF_OutputList* o, int capacity);

// Executes `op` (its type set, `o` not NULL) on a tracing context: the
// inputs must be values of its trace; `o` receives every output.
loom_status_t loom__tf_execute_traced(TF_AbstractOp* op, int num_inputs,
                                      TF_AbstractTensor* const* inputs,
                                      TF_OutputList* o);

#endif  // LOOM_COMPAT_EAGER_UNIFIED_INTERNAL_H_
