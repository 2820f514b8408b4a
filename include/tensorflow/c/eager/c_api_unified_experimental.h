/* TensorFlow's eager/graph-agnostic ("unified") C API as Loom provides it:
 * execution contexts, abstract ops and tensors, output lists, functions.
 * An eager execution context wraps a TFE_Context and its abstract tensors
 * are TFE_TensorHandles; a tracing context (TF_CreateFunction) records the
 * operations executed on it into a function with Loom's trace handler
 * (loom/trace.h), and its abstract tensors are symbolic values without
 * data. Functions with a TF_Status* set it on every call. Valid C11 and
 * C++. */

#ifndef TENSORFLOW_C_EAGER_C_API_UNIFIED_EXPERIMENTAL_H_
#define TENSORFLOW_C_EAGER_C_API_UNIFIED_EXPERIMENTAL_H_

#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where operations execute (eager here). */
typedef struct TF_ExecutionContext TF_ExecutionContext;
/* An input or output of an operation. */
typedef struct TF_AbstractTensor TF_AbstractTensor;
/* An operation being described: its type, name and attributes. */
typedef struct TF_AbstractOp TF_AbstractOp;
/* The outputs of an operation. */
typedef struct TF_OutputList TF_OutputList;
/* A function made by tracing, to register in an execution context. */
typedef struct TF_AbstractFunction TF_AbstractFunction;

/* A shape: num_dims -1 for an unknown rank; a dim of -1 is unknown. */
typedef struct TF_Shape {
  int num_dims;
  int64_t* dim_sizes;
} TF_Shape;

/* Chooses the tracing engine of later TF_CreateFunction calls: "graphdef"
 * (TensorFlow's default) or "mlir". Loom has one engine, its trace
 * handler, which both names select; INVALID_ARGUMENT for another name. */
TF_CAPI_EXPORT extern void TF_SetTracingImplementation(const char* name,
                                                       TF_Status* s);

/* A tracing context for function `fn_name` (a context of its own): the
 * operations executed on it are recorded, not run; its tensors are
 * parameters (TF_AddFunctionParameter) and the operations' outputs.
 * TF_FinalizeFunction makes the function and deletes the context. */
TF_CAPI_EXPORT extern TF_ExecutionContext* TF_CreateFunction(
    const char* fn_name, TF_Status* s);

/* Adds a parameter of `dtype` and `shape` to a tracing context's function:
 * its symbolic value (delete it with TF_DeleteAbstractTensor). */
TF_CAPI_EXPORT extern TF_AbstractTensor* TF_AddFunctionParameter(
    TF_ExecutionContext* func, TF_DataType dtype, TF_Shape shape, TF_Status* s);

/* Makes the function of a tracing context, returning the tensors of
 * `outputs` (values of the trace), and deletes the context (also on
 * error). An eager context is INVALID_ARGUMENT and is kept. */
TF_CAPI_EXPORT extern TF_AbstractFunction* TF_FinalizeFunction(
    TF_ExecutionContext* ctx, TF_OutputList* outputs, TF_Status* s);

TF_CAPI_EXPORT extern void TF_DeleteAbstractFunction(TF_AbstractFunction* func);

/* Adds `func` to the function library of `ctx`: it is then called by name
 * (TF_AbstractOpSetOpType with its name, TFE_NewOp). */
TF_CAPI_EXPORT extern void TF_ExecutionContextRegisterFunction(
    TF_ExecutionContext* ctx, TF_AbstractFunction* func, TF_Status* s);

/* A context executing eagerly, with a TFE_Context made from `options` (may
 * be NULL). */
TF_CAPI_EXPORT extern TF_ExecutionContext* TF_NewEagerExecutionContext(
    TFE_ContextOptions* options, TF_Status* s);
/* Frees the context (its TFE_Context too), once its abstract ops are
 * deleted. */
TF_CAPI_EXPORT extern void TF_DeleteExecutionContext(TF_ExecutionContext* ctx);
/* The TFE_Context of an eager execution context (owned by it). */
TF_CAPI_EXPORT extern TFE_Context* TF_ExecutionContextGetTFEContext(
    TF_ExecutionContext* ctx, TF_Status* s);

/* An operation for `ctx`; set its type before executing it. It keeps the
 * context alive: deleting the context (or finalizing a tracing one) before
 * the op frees it when the op is deleted. */
TF_CAPI_EXPORT extern TF_AbstractOp* TF_NewAbstractOp(TF_ExecutionContext* ctx);
TF_CAPI_EXPORT extern void TF_DeleteAbstractOp(TF_AbstractOp* op);

/* The registered op to run ("AddV2"); NOT_FOUND for an unknown one. */
TF_CAPI_EXPORT extern void TF_AbstractOpSetOpType(TF_AbstractOp* op,
                                                  const char* const op_type,
                                                  TF_Status* s);
/* A name for the node (kept; neither eager execution nor Loom's traces,
 * which name nodes "<op type>_<index>", use it). */
TF_CAPI_EXPORT extern void TF_AbstractOpSetOpName(TF_AbstractOp* op,
                                                  const char* const op_name,
                                                  TF_Status* s);
/* Sets a type attribute. */
TF_CAPI_EXPORT extern void TF_AbstractOpSetAttrType(TF_AbstractOp* op,
                                                    const char* const attr_name,
                                                    TF_DataType value,
                                                    TF_Status* s);

/* Drops the reference an abstract tensor holds. */
TF_CAPI_EXPORT extern void TF_DeleteAbstractTensor(TF_AbstractTensor* t);

/* A list of outputs; it does not own them (delete each with
 * TF_DeleteAbstractTensor). */
TF_CAPI_EXPORT extern TF_OutputList* TF_NewOutputList(void);
TF_CAPI_EXPORT extern void TF_DeleteOutputList(TF_OutputList* o);
/* The number of outputs the next execution expects. */
TF_CAPI_EXPORT extern void TF_OutputListSetNumOutputs(TF_OutputList* o,
                                                      int num_outputs,
                                                      TF_Status* s);
TF_CAPI_EXPORT extern int TF_OutputListNumOutputs(TF_OutputList* o);
/* Output `i` (borrowed), or NULL out of range. */
TF_CAPI_EXPORT extern TF_AbstractTensor* TF_OutputListGet(TF_OutputList* o,
                                                          int i);
TF_CAPI_EXPORT extern void TF_OutputListPushBack(TF_OutputList* o,
                                                 TF_AbstractTensor* tensor,
                                                 TF_Status* s);

/* Adds `inputs` to `op` and executes it, replacing the outputs in `o` with
 * the results: in an eager context as many as TF_OutputListSetNumOutputs
 * allowed; in a tracing context, the op's symbolic outputs, however many
 * (its inputs must be values of that trace). */
TF_CAPI_EXPORT extern void TF_ExecuteOperation(TF_AbstractOp* op,
                                               int num_inputs,
                                               TF_AbstractTensor* const* inputs,
                                               TF_OutputList* o, TF_Status* s);

/* Wraps an eager tensor, taking over the caller's reference to it. */
TF_CAPI_EXPORT extern TF_AbstractTensor* TF_CreateAbstractTensorFromEagerTensor(
    TFE_TensorHandle* t, TF_Status* s);
/* The eager tensor of an abstract one (borrowed); INVALID_ARGUMENT for a
 * tensor of a tracing context. */
TF_CAPI_EXPORT extern TFE_TensorHandle* TF_AbstractTensorGetEagerTensor(
    TF_AbstractTensor* at, TF_Status* s);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_C_EAGER_C_API_UNIFIED_EXPERIMENTAL_H_ */
