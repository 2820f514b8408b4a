// The eager op object (shared by eager_op.c, eager_op_pool.c and
// execute.c).

#ifndef LOOM_FRONTEND_EAGER_OP_INTERNAL_H_
#define LOOM_FRONTEND_EAGER_OP_INTERNAL_H_

#include "corert/corert_internal.h"
#include "frontend/frontend_internal.h"
#include "registry/op_registry_generation.h"

enum { kEagerInlineInputs = 12 };

struct loom_eager_op_t {
  loom_context_t* context;
  char name[128];
  const loom_op_def_t* def;
  // An op that calls a function (a function's name, or PartitionedCall):
  // its executions go to the context's function library. `function` is
  // the function its name designates (retained), or NULL.
  bool calls_function;
  void* function;
  // The registry generation `def` and `prepared` were looked up at.
  uint64_t generation;
  int32_t output_count;  // results of every execution, or -1: per attrs
  loom_op_attrs_t attrs;
  loom_tensor_handle_t** inputs;  // retained; NULL once consumed
  int32_t num_inputs;
  int32_t inputs_capacity;
  int32_t num_consumed;  // inputs handed to an execution (NULL slots)
  loom_status_t error;   // recorded by loom_eager_op_fail, returned next
  loom_cancellation_t* cancellation;  // retained, may be NULL
  char device[192];                   // "" : no explicit placement
  loom_op_handler_t* device_handler;  // found from `device` (borrowed)
  uint32_t device_generation;         // context->generation when found
  // The op prepared on the handler it last executed on.
  loom_op_handler_t* prepared_handler;  // borrowed: the prepared op holds it
  loom_prepared_op_t* prepared;
  // What the last inline run of a kernel's direct entry found, for the next
  // execution with inputs like its (execute.c); empty (memo.prepared NULL)
  // whenever `prepared` changes.
  loom__cpu_memo_t memo;
  loom_tensor_handle_t* inline_inputs[kEagerInlineInputs];
};

// Looks the op's definition up again after the registries changed (it may
// have been registered again, or removed) and drops the prepared op, whose
// handler or kernels may differ now. NOT_FOUND when the op is gone.
loom_status_t loom__eager_op_refresh(loom_eager_op_t* op);

// Drops the prepared op (and the handler references it holds).
void loom__eager_op_drop_prepared(loom_eager_op_t* op);

// The input dtypes of `op` (waiting for metadata not known yet) into
// dtypes[0, num_inputs).
loom_status_t loom__eager_op_input_dtypes(loom_eager_op_t* op,
                                          loom_dtype_t* dtypes);

#endif  // LOOM_FRONTEND_EAGER_OP_INTERNAL_H_
