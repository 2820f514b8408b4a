// TensorFlow's unified C API, graph side: a tracing context (TF_CreateFunction)
// is a context of its own with a trace handler (loom/trace.h); executing an
// op on it records a node; finalizing it makes a loom_function_t, which an
// eager context registers and calls like any function.
//
// TensorFlow chooses among tracing engines by name ("graphdef", "mlir");
// Loom has one, so both names select it.

#include <stdio.h>
#include <string.h>

#include "compat/eager_unified_internal.h"
#include "compat/tf_status_internal.h"
#include "loom/trace.h"

static const char* const kEngines[] = {"graphdef", "mlir"};

void TF_SetTracingImplementation(const char* name, TF_Status* s) {
  for (size_t i = 0; name && i < sizeof(kEngines) / sizeof(kEngines[0]); ++i) {
    if (strcmp(name, kEngines[i]) == 0) {
      loom__tf_status_set(s, loom_ok_status());
      return;
    }
  }
  // TensorFlow's words.
  loom__tf_status_set(
      s, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "No tracing engine factory has been registered with "
                          "the key '%s' (available: graphdef, mlir)",
                          name ? name : "(null)"));
}

TF_ExecutionContext* TF_CreateFunction(const char* fn_name, TF_Status* s) {
  if (!fn_name) {
    loom__tf_status_set(s, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                            "TF_CreateFunction: fn_name is "
                                            "NULL"));
    return NULL;
  }
  loom_allocator_t allocator = loom_allocator_default();
  TF_ExecutionContext* ctx = NULL;
  loom_status_t status =
      loom_allocator_calloc(allocator, sizeof(*ctx), (void**)&ctx);
  if (status) {
    loom__tf_status_set(s, status);
    return NULL;
  }
  atomic_init(&ctx->references, 1);
  ctx->allocator = allocator;
  // Nothing runs in a tracing context: one thread is enough.
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.num_threads = 1;
  status = loom_context_create(&options, &ctx->context);
  if (!status) status = loom_trace_create(ctx->context, fn_name, &ctx->trace);
  if (status) {
    TF_DeleteExecutionContext(ctx);
    loom__tf_status_set(
        s, loom_status_annotate(status, "TF_CreateFunction('%s')", fn_name));
    return NULL;
  }
  loom__tf_status_set(s, loom_ok_status());
  return ctx;
}

TF_AbstractTensor* TF_AddFunctionParameter(TF_ExecutionContext* func,
                                           TF_DataType dtype, TF_Shape shape,
                                           TF_Status* s) {
  if (!func || !func->trace) {
    // TensorFlow's words.
    loom__tf_status_set(
        s, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "TF_AddFunctionParameter must be called on a "
                            "TracingContext."));
    return NULL;
  }
  loom_shape_t known;
  loom_status_t status = loom_ok_status();
  if (shape.num_dims < -1 || (shape.num_dims > 0 && !shape.dim_sizes)) {
    status =
        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                         "TF_AddFunctionParameter: shape.num_dims is %d "
                         "with %s dim_sizes (expected -1 for an unknown "
                         "rank, or the number of dim_sizes)",
                         shape.num_dims, shape.dim_sizes ? "non-NULL" : "NULL");
  } else if (shape.num_dims >= 0) {
    status = loom_shape_initialize(&known, shape.dim_sizes, shape.num_dims);
  }
  loom_tensor_handle_t* value = NULL;
  if (!status) {
    status =
        loom_trace_add_parameter(func->trace, NULL, (loom_dtype_t)dtype,
                                 shape.num_dims >= 0 ? &known : NULL, &value);
  }
  loom__tf_status_set(s, status);
  return (TF_AbstractTensor*)value;
}

loom_status_t loom__tf_execute_traced(TF_AbstractOp* op, int num_inputs,
                                      TF_AbstractTensor* const* inputs,
                                      TF_OutputList* o) {
  TF_ExecutionContext* ctx = op->context;
  for (int i = 0; i < num_inputs; ++i) {
    loom_tensor_handle_t* input = (loom_tensor_handle_t*)inputs[i];
    if (!input || !loom_trace_is_symbolic(input) ||
        loom_context_of_handle(input) != ctx->context) {
      // TensorFlow's words: a graph op takes the graph's tensors only.
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Unable to cast input to GraphTensor: input %d "
                              "of %s is not a tensor of this tracing context",
                              i, loom_eager_op_name(op->op));
    }
    LOOM_RETURN_IF_ERROR(loom_eager_op_add_input(op->op, input));
  }
  // A graph op gives all its outputs, whatever the list expected.
  enum { kMaxOutputs = 64 };
  int capacity = o->expected > kMaxOutputs ? o->expected : kMaxOutputs;
  LOOM_RETURN_IF_ERROR(loom__tf_output_list_reserve(o, capacity));
  // The list does not own what it held: the slots start empty.
  memset(o->outputs, 0, sizeof(*o->outputs) * (size_t)capacity);
  o->count = 0;
  LOOM_RETURN_IF_ERROR(loom_context_enter_scope(ctx->context, ctx->trace));
  int32_t count = 0;
  loom_status_t status = loom_eager_op_execute(
      op->op, (loom_tensor_handle_t**)o->outputs, capacity, &count);
  loom_status_ignore(loom_context_exit_scope(ctx->context));
  if (!status) o->count = count;
  return status;
}

TF_AbstractFunction* TF_FinalizeFunction(TF_ExecutionContext* ctx,
                                         TF_OutputList* outputs, TF_Status* s) {
  if (!ctx || !ctx->trace) {
    // TensorFlow's words; the context is kept.
    loom__tf_status_set(
        s, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Only TracingContext can be converted into a "
                            "function."));
    return NULL;
  }
  loom_status_t status = loom_ok_status();
  TF_AbstractFunction* func = NULL;
  if (!outputs) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TF_FinalizeFunction: outputs is NULL");
  }
  if (!status) {
    status =
        loom_allocator_calloc(ctx->allocator, sizeof(*func), (void**)&func);
  }
  if (!status) {
    func->allocator = ctx->allocator;
    status = loom_trace_finish(ctx->trace,
                               (loom_tensor_handle_t* const*)outputs->outputs,
                               outputs->count, &func->function);
  }
  if (status && func) {
    loom_allocator_free(func->allocator, func);
    func = NULL;
  }
  // The context is consumed, as TensorFlow's is, on success and on error.
  TF_DeleteExecutionContext(ctx);
  loom__tf_status_set(s, status);
  return func;
}

void TF_DeleteAbstractFunction(TF_AbstractFunction* func) {
  if (!func) return;
  loom_function_release(func->function);
  loom_allocator_free(func->allocator, func);
}

void TF_ExecutionContextRegisterFunction(TF_ExecutionContext* ctx,
                                         TF_AbstractFunction* func,
                                         TF_Status* s) {
  if (!ctx || !func) {
    loom__tf_status_set(
        s, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "TF_ExecutionContextRegisterFunction: %s is NULL",
                            !ctx ? "ctx" : "func"));
    return;
  }
  loom__tf_status_set(s,
                      loom_context_add_function(ctx->context, func->function));
}
