// TensorFlow's unified (eager/graph-agnostic) C API, eager side and what
// both sides share, over loom/eager.h: an execution context wraps a
// loom_context_t, an abstract op a loom_eager_op_t and an abstract tensor
// is a loom_tensor_handle_t (an eager tensor, or a symbolic value of a
// trace: eager_unified_graph.c).

#include <string.h>

#include "compat/eager_unified_internal.h"
#include "compat/tf_status_internal.h"
#include "loom/trace.h"

static loom_status_t null_error(const char* function, const char* what) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                          function, what);
}

TF_ExecutionContext* TF_NewEagerExecutionContext(TFE_ContextOptions* options,
                                                 TF_Status* s) {
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
  TF_Status* inner = TF_NewStatus();
  ctx->context = (loom_context_t*)TFE_NewContext(options, inner);
  status =
      inner ? loom__tf_status_take(inner)
            : loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  TF_DeleteStatus(inner);
  if (!status && !ctx->context) {
    status = loom_make_status(LOOM_STATUS_INTERNAL, "no context was made");
  }
  if (status) {
    loom_context_destroy(ctx->context);
    loom_allocator_free(allocator, ctx);
    loom__tf_status_set(s, status);
    return NULL;
  }
  loom__tf_status_set(s, loom_ok_status());
  return ctx;
}

void loom__tf_execution_context_retain(TF_ExecutionContext* ctx) {
  atomic_fetch_add_explicit(&ctx->references, 1, memory_order_relaxed);
}

void TF_DeleteExecutionContext(TF_ExecutionContext* ctx) {
  if (!ctx || atomic_fetch_sub_explicit(&ctx->references, 1,
                                        memory_order_acq_rel) != 1) {
    return;
  }
  loom_op_handler_release(ctx->trace);
  loom_context_destroy(ctx->context);
  loom_allocator_free(ctx->allocator, ctx);
}

TFE_Context* TF_ExecutionContextGetTFEContext(TF_ExecutionContext* ctx,
                                              TF_Status* s) {
  if (!ctx || ctx->trace) {
    // TensorFlow's words for a tracing context.
    loom__tf_status_set(
        s, !ctx ? null_error("TF_ExecutionContextGetTFEContext", "ctx")
                : loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                   "Not an eager context: a tracing context "
                                   "(TF_CreateFunction) records operations "
                                   "and has no TFE_Context"));
    return NULL;
  }
  loom__tf_status_set(s, loom_ok_status());
  return (TFE_Context*)ctx->context;
}

TF_AbstractOp* TF_NewAbstractOp(TF_ExecutionContext* ctx) {
  if (!ctx) return NULL;
  TF_AbstractOp* op = NULL;
  loom_status_t status =
      loom_allocator_calloc(ctx->allocator, sizeof(*op), (void**)&op);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  op->allocator = ctx->allocator;
  op->context = ctx;
  loom__tf_execution_context_retain(ctx);
  return op;
}

void TF_DeleteAbstractOp(TF_AbstractOp* op) {
  if (!op) return;
  loom_eager_op_destroy(op->op);
  TF_ExecutionContext* ctx = op->context;
  loom_allocator_free(op->allocator, op);
  TF_DeleteExecutionContext(ctx);  // the op's reference
}

void TF_AbstractOpSetOpType(TF_AbstractOp* op, const char* const op_type,
                            TF_Status* s) {
  if (!op || !op_type) {
    loom__tf_status_set(
        s, null_error("TF_AbstractOpSetOpType", !op ? "op" : "op_type"));
    return;
  }
  if (op->op) {
    loom__tf_status_set(s, loom_eager_op_reset(op->op, op_type));
    return;
  }
  loom__tf_status_set(
      s, loom_eager_op_create(op->context->context, op_type, &op->op));
}

void TF_AbstractOpSetOpName(TF_AbstractOp* op, const char* const op_name,
                            TF_Status* s) {
  if (!op || !op_name) {
    loom__tf_status_set(
        s, null_error("TF_AbstractOpSetOpName", !op ? "op" : "op_name"));
    return;
  }
  size_t length = strlen(op_name);
  if (length >= sizeof(op->name)) length = sizeof(op->name) - 1;
  memcpy(op->name, op_name, length);
  op->name[length] = '\0';
  loom__tf_status_set(s, loom_ok_status());
}

static loom_status_t need_type(const TF_AbstractOp* op, const char* function) {
  if (!op) return null_error(function, "op");
  if (!op->op) {
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "%s: the op's type is not set "
                            "(TF_AbstractOpSetOpType)",
                            function);
  }
  return loom_ok_status();
}

void TF_AbstractOpSetAttrType(TF_AbstractOp* op, const char* const attr_name,
                              TF_DataType value, TF_Status* s) {
  loom_status_t status = need_type(op, "TF_AbstractOpSetAttrType");
  if (!status) {
    status = loom_op_attrs_set_dtype(loom_eager_op_attrs(op->op), attr_name,
                                     (loom_dtype_t)value);
  }
  loom__tf_status_set(s, status);
}

void TF_DeleteAbstractTensor(TF_AbstractTensor* t) {
  loom_tensor_handle_release((loom_tensor_handle_t*)t);
}

TF_AbstractTensor* TF_CreateAbstractTensorFromEagerTensor(TFE_TensorHandle* t,
                                                          TF_Status* s) {
  loom__tf_status_set(
      s, t ? loom_ok_status()
           : loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "Invalid handle"));
  return (TF_AbstractTensor*)t;
}

TFE_TensorHandle* TF_AbstractTensorGetEagerTensor(TF_AbstractTensor* at,
                                                  TF_Status* s) {
  if (!at || loom_trace_is_symbolic((loom_tensor_handle_t*)at)) {
    // TensorFlow's words.
    loom__tf_status_set(
        s, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Not an eager tensor handle.%s",
                            at ? " It is a tensor of a tracing context "
                                 "(TF_CreateFunction), which has no value."
                               : ""));
    return NULL;
  }
  loom__tf_status_set(s, loom_ok_status());
  return (TFE_TensorHandle*)at;
}

TF_OutputList* TF_NewOutputList(void) {
  loom_allocator_t allocator = loom_allocator_default();
  TF_OutputList* o = NULL;
  loom_status_t status =
      loom_allocator_calloc(allocator, sizeof(*o), (void**)&o);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  o->allocator = allocator;
  return o;
}

void TF_DeleteOutputList(TF_OutputList* o) {
  if (!o) return;
  loom_allocator_free(o->allocator, o->outputs);
  loom_allocator_free(o->allocator, o);
}

loom_status_t loom__tf_output_list_reserve(TF_OutputList* o, int capacity) {
  if (capacity <= o->capacity) return loom_ok_status();
  TF_AbstractTensor** grown = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      o->allocator, sizeof(*grown) * (size_t)capacity, (void**)&grown));
  if (o->count) memcpy(grown, o->outputs, sizeof(*grown) * (size_t)o->count);
  loom_allocator_free(o->allocator, o->outputs);
  o->outputs = grown;
  o->capacity = capacity;
  return loom_ok_status();
}

void TF_OutputListSetNumOutputs(TF_OutputList* o, int num_outputs,
                                TF_Status* s) {
  if (!o || num_outputs < 0) {
    loom__tf_status_set(
        s, !o ? null_error("TF_OutputListSetNumOutputs", "the list")
              : loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "TF_OutputListSetNumOutputs: %d outputs",
                                 num_outputs));
    return;
  }
  loom_status_t status = loom__tf_output_list_reserve(o, num_outputs);
  if (!status) {
    o->expected = num_outputs;
    o->count = 0;
  }
  loom__tf_status_set(s, status);
}

int TF_OutputListNumOutputs(TF_OutputList* o) {
  return o ? o->count : 0;
}

TF_AbstractTensor* TF_OutputListGet(TF_OutputList* o, int i) {
  if (!o || i < 0 || i >= o->count) return NULL;
  return o->outputs[i];
}

void TF_OutputListPushBack(TF_OutputList* o, TF_AbstractTensor* tensor,
                           TF_Status* s) {
  if (!o || !tensor) {
    loom__tf_status_set(s, !o ? null_error("TF_OutputListPushBack", "the list")
                              : loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                                 "Invalid handle"));
    return;
  }
  loom_status_t status = loom_ok_status();
  if (o->count == o->capacity) {
    status = loom__tf_output_list_reserve(o, o->capacity ? 2 * o->capacity : 4);
  }
  if (!status) o->outputs[o->count++] = tensor;
  loom__tf_status_set(s, status);
}

void TF_ExecuteOperation(TF_AbstractOp* op, int num_inputs,
                         TF_AbstractTensor* const* inputs, TF_OutputList* o,
                         TF_Status* s) {
  loom_status_t status = need_type(op, "TF_ExecuteOperation");
  if (!status && (!o || num_inputs < 0 || (num_inputs > 0 && !inputs))) {
    status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "TF_ExecuteOperation: %s",
        !o ? "the output list is NULL" : "invalid inputs");
  }
  if (!status && op->context->trace) {
    status = loom__tf_execute_traced(op, num_inputs, inputs, o);
    loom__tf_status_set(s, status);
    return;
  }
  for (int i = 0; !status && i < num_inputs; ++i) {
    loom_tensor_handle_t* input = (loom_tensor_handle_t*)inputs[i];
    if (input && loom_trace_is_symbolic(input)) {
      status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "TF_ExecuteOperation: input %d is not an "
                                "eager tensor handle (it is a tensor of a "
                                "tracing context)",
                                i);
      break;
    }
    status = loom_eager_op_add_input(op->op, input);
  }
  int32_t count = 0;
  if (!status) {
    status = loom_eager_op_execute(op->op, (loom_tensor_handle_t**)o->outputs,
                                   o->expected, &count);
  }
  if (o) o->count = status ? 0 : count;
  loom__tf_status_set(s, status);
}
