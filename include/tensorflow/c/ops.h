/* Registering ops and writing their shape inference functions: the op part
 * of TensorFlow's kernel and op C API, as provided by Loom. Valid C11 and
 * C++.
 *
 *   TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder("Bitcast");
 *   TF_OpDefinitionBuilderAddInput(b, "input: T");
 *   TF_OpDefinitionBuilderAddOutput(b, "output: type");
 *   TF_OpDefinitionBuilderAddAttr(b, "T: {float, int32}");
 *   TF_OpDefinitionBuilderAddAttr(b, "type: {float, int32}");
 *   TF_OpDefinitionBuilderSetShapeInferenceFunction(b, &bitcast_shape);
 *   TF_RegisterOpDefinition(b, status);  // consumes b
 *
 * Unlike TensorFlow, which defers it, Loom checks a definition when it is
 * registered: a malformed spec or an inconsistent definition makes
 * TF_RegisterOpDefinition fail with a message that quotes the spec and says
 * what is wrong where. */

#ifndef TENSORFLOW_C_OPS_H_
#define TENSORFLOW_C_OPS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TF_DimensionHandle TF_DimensionHandle;
typedef struct TF_OpDefinitionBuilder TF_OpDefinitionBuilder;
typedef struct TF_ShapeHandle TF_ShapeHandle;
typedef struct TF_ShapeInferenceContext TF_ShapeInferenceContext;

/* A builder for op `op_name`; free it with TF_RegisterOpDefinition or
 * TF_DeleteOpDefinitionBuilder, never both. NULL when memory is exhausted
 * (the builder functions accept NULL and TF_RegisterOpDefinition reports
 * it). */
TF_CAPI_EXPORT extern TF_OpDefinitionBuilder* TF_NewOpDefinitionBuilder(
    const char* op_name);

/* Validates and registers the op in the process-wide registry; always frees
 * `builder`. ALREADY_EXISTS for a name registered before, INVALID_ARGUMENT
 * for a malformed or inconsistent definition. */
TF_CAPI_EXPORT extern void TF_RegisterOpDefinition(
    TF_OpDefinitionBuilder* builder, TF_Status* status);

TF_CAPI_EXPORT extern void TF_DeleteOpDefinitionBuilder(
    TF_OpDefinitionBuilder* builder);

/* "<name>: <type> [>= <min>] [= <default>]"; see loom/op_def.h. */
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderAddAttr(
    TF_OpDefinitionBuilder* builder, const char* attr_spec);

/* "<name>: <type-expr>" or "<name>: Ref(<type-expr>)". */
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderAddInput(
    TF_OpDefinitionBuilder* builder, const char* input_spec);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderAddOutput(
    TF_OpDefinitionBuilder* builder, const char* output_spec);

TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetIsCommutative(
    TF_OpDefinitionBuilder* builder, bool is_commutative);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetIsAggregate(
    TF_OpDefinitionBuilder* builder, bool is_aggregate);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetIsStateful(
    TF_OpDefinitionBuilder* builder, bool is_stateful);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetAllowsUninitializedInput(
    TF_OpDefinitionBuilder* builder, bool allows_uninitialized_input);

/* Marks the op deprecated from GraphDef `version` on. */
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderDeprecated(
    TF_OpDefinitionBuilder* builder, int version, const char* explanation);

/* The shape inference (metadata) function: runs synchronously before any
 * kernel; an error it sets in `status` is the op's error. */
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetShapeInferenceFunction(
    TF_OpDefinitionBuilder* builder,
    void (*shape_inference_func)(TF_ShapeInferenceContext* ctx,
                                 TF_Status* status));

/* ---- Shape inference ---------------------------------------------------- */

TF_CAPI_EXPORT extern int64_t TF_ShapeInferenceContextNumInputs(
    TF_ShapeInferenceContext* ctx);

/* A new handle (an unknown shape); free with TF_DeleteShapeHandle. */
TF_CAPI_EXPORT extern TF_ShapeHandle* TF_NewShapeHandle(void);

/* Copies input i's shape into `handle`; TF_INVALID_ARGUMENT (out of range)
 * for a bad index. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextGetInput(
    TF_ShapeInferenceContext* ctx, int i, TF_ShapeHandle* handle,
    TF_Status* status);

/* Sets output i to a copy of `handle`'s shape. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextSetOutput(
    TF_ShapeInferenceContext* ctx, int i, TF_ShapeHandle* handle,
    TF_Status* status);

/* New handles holding a scalar shape / a vector of `size` elements. */
TF_CAPI_EXPORT extern TF_ShapeHandle* TF_ShapeInferenceContextScalar(
    TF_ShapeInferenceContext* ctx);
TF_CAPI_EXPORT extern TF_ShapeHandle* TF_ShapeInferenceContextVectorFromSize(
    TF_ShapeInferenceContext* ctx, size_t size);

/* A new dimension handle (unknown); free with TF_DeleteDimensionHandle. */
TF_CAPI_EXPORT extern TF_DimensionHandle* TF_NewDimensionHandle(void);

/* Reads the type attr `attr_name`. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContext_GetAttrType(
    TF_ShapeInferenceContext* ctx, const char* attr_name, TF_DataType* val,
    TF_Status* status);

/* The rank of `handle`'s shape (-1 when unknown), and whether it is known. */
TF_CAPI_EXPORT extern int64_t TF_ShapeInferenceContextRank(
    TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle);
TF_CAPI_EXPORT extern int TF_ShapeInferenceContextRankKnown(
    TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle);

/* Assert a rank (exact, at least, at most) on `handle`'s shape; the result
 * (with dims when the rank was unknown) goes to `result`. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextWithRank(
    TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle, int64_t rank,
    TF_ShapeHandle* result, TF_Status* status);
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextWithRankAtLeast(
    TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle, int64_t rank,
    TF_ShapeHandle* result, TF_Status* status);
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextWithRankAtMost(
    TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle, int64_t rank,
    TF_ShapeHandle* result, TF_Status* status);

/* Dimension i of the shape (negative i counts from the end); unknown when
 * the rank is unknown or i is out of range. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextDim(
    TF_ShapeInferenceContext* ctx, TF_ShapeHandle* shape_handle, int64_t i,
    TF_DimensionHandle* result);

/* Dimensions [start, end) (negative: from the end; clamped to the rank). */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextSubshape(
    TF_ShapeInferenceContext* ctx, TF_ShapeHandle* shape_handle, int64_t start,
    int64_t end, TF_ShapeHandle* result, TF_Status* status);

/* Sets every output to an unknown shape. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextSetUnknownShape(
    TF_ShapeInferenceContext* ctx, TF_Status* status);

TF_CAPI_EXPORT extern int TF_DimensionHandleValueKnown(
    TF_DimensionHandle* dim_handle);
/* The dimension's value (-1 when unknown). */
TF_CAPI_EXPORT extern int64_t TF_DimensionHandleValue(
    TF_DimensionHandle* dim_handle);

/* The dims of `first` followed by those of `second`. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextConcatenateShapes(
    TF_ShapeInferenceContext* ctx, TF_ShapeHandle* first,
    TF_ShapeHandle* second, TF_ShapeHandle* result, TF_Status* status);

TF_CAPI_EXPORT extern void TF_DeleteShapeHandle(TF_ShapeHandle* handle);
TF_CAPI_EXPORT extern void TF_DeleteDimensionHandle(TF_DimensionHandle* handle);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_C_OPS_H_ */
