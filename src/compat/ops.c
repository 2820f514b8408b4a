// TensorFlow's op registration and shape inference C API over Loom's op
// registry (loom/op_def.h, loom/shape_inference.h).

#include "tensorflow/c/ops.h"

#include <stdalign.h>
#include <stddef.h>
#include <string.h>

#include "base/tagged_block.h"
#include "compat/tf_status_internal.h"
#include "loom/op_def.h"
#include "loom/op_signature.h"
#include "loom/shape_inference.h"
#include "registry/op_registry_internal.h"
#include "registry/shape_inference_internal.h"

// TensorFlow's builder functions cannot report errors: the first one is
// kept and returned by TF_RegisterOpDefinition.
struct TF_OpDefinitionBuilder {
  loom_op_def_builder_t* builder;
  loom_status_t first_error;
  void (*shape_fn)(TF_ShapeInferenceContext*, TF_Status*);
};

// Handles remember their allocator: shape functions make and delete them
// on every Execute, from the (caching) default allocator.
struct TF_ShapeHandle {
  loom_shape_t shape;
  loom_allocator_t allocator;
};

struct TF_DimensionHandle {
  int64_t value;
  loom_allocator_t allocator;
};

static loom_shape_inference_context_t* to_loom_context(
    TF_ShapeInferenceContext* ctx) {
  return (loom_shape_inference_context_t*)ctx;
}

TF_OpDefinitionBuilder* TF_NewOpDefinitionBuilder(const char* op_name) {
  TF_OpDefinitionBuilder* builder = NULL;
  loom_status_t status = loom__tagged_block_allocate(
      loom_allocator_default(), sizeof(*builder), (void**)&builder);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  memset(builder, 0, sizeof(*builder));
  builder->first_error = loom_op_def_builder_create(loom_allocator_default(),
                                                    op_name, &builder->builder);
  return builder;
}

void TF_DeleteOpDefinitionBuilder(TF_OpDefinitionBuilder* builder) {
  if (!builder) return;
  loom_op_def_builder_destroy(builder->builder);
  loom_status_free(builder->first_error);
  loom__tagged_block_free(builder);
}

static void keep_first_error(TF_OpDefinitionBuilder* builder,
                             loom_status_t status) {
  if (!builder->first_error) {
    builder->first_error = status;
  } else {
    loom_status_free(status);
  }
}

void TF_OpDefinitionBuilderAddAttr(TF_OpDefinitionBuilder* builder,
                                   const char* attr_spec) {
  if (!builder || !builder->builder) return;
  keep_first_error(builder,
                   loom_op_def_builder_add_attr(builder->builder, attr_spec));
}

void TF_OpDefinitionBuilderAddInput(TF_OpDefinitionBuilder* builder,
                                    const char* input_spec) {
  if (!builder || !builder->builder) return;
  keep_first_error(builder,
                   loom_op_def_builder_add_input(builder->builder, input_spec));
}

void TF_OpDefinitionBuilderAddOutput(TF_OpDefinitionBuilder* builder,
                                     const char* output_spec) {
  if (!builder || !builder->builder) return;
  keep_first_error(
      builder, loom_op_def_builder_add_output(builder->builder, output_spec));
}

void TF_OpDefinitionBuilderSetIsCommutative(TF_OpDefinitionBuilder* builder,
                                            bool is_commutative) {
  if (builder) {
    loom_op_def_builder_set_is_commutative(builder->builder, is_commutative);
  }
}

void TF_OpDefinitionBuilderSetIsAggregate(TF_OpDefinitionBuilder* builder,
                                          bool is_aggregate) {
  if (builder) {
    loom_op_def_builder_set_is_aggregate(builder->builder, is_aggregate);
  }
}

void TF_OpDefinitionBuilderSetIsStateful(TF_OpDefinitionBuilder* builder,
                                         bool is_stateful) {
  if (builder)
    loom_op_def_builder_set_is_stateful(builder->builder, is_stateful);
}

void TF_OpDefinitionBuilderSetAllowsUninitializedInput(
    TF_OpDefinitionBuilder* builder, bool allows_uninitialized_input) {
  if (builder) {
    loom_op_def_builder_set_allows_uninitialized_input(
        builder->builder, allows_uninitialized_input);
  }
}

void TF_OpDefinitionBuilderDeprecated(TF_OpDefinitionBuilder* builder,
                                      int version, const char* explanation) {
  if (!builder || !builder->builder) return;
  keep_first_error(builder, loom_op_def_builder_set_deprecated(
                                builder->builder, version, explanation));
}

// Calls a TensorFlow shape function as a Loom one.
static loom_status_t call_tf_shape_fn(loom_shape_inference_context_t* context,
                                      void* user_data) {
  void (*fn)(TF_ShapeInferenceContext*, TF_Status*);
  memcpy(&fn, &user_data, sizeof(fn));
  TF_Status status;  // on the stack: this runs on every Execute
  loom__tf_status_initialize(&status, loom_allocator_default());
  fn((TF_ShapeInferenceContext*)context, &status);
  loom_status_t result = loom__tf_status_take(&status);
  loom__tf_status_deinitialize(&status);
  return result;
}

void TF_OpDefinitionBuilderSetShapeInferenceFunction(
    TF_OpDefinitionBuilder* builder,
    void (*shape_inference_func)(TF_ShapeInferenceContext* ctx,
                                 TF_Status* status)) {
  if (!builder) return;
  void* user_data = NULL;
  _Static_assert(sizeof(user_data) == sizeof(shape_inference_func),
                 "function pointers fit in a void*");
  memcpy(&user_data, &shape_inference_func, sizeof(user_data));
  loom_op_def_builder_set_shape_fn(
      builder->builder, shape_inference_func ? call_tf_shape_fn : NULL,
      user_data);
}

void TF_RegisterOpDefinition(TF_OpDefinitionBuilder* builder,
                             TF_Status* status) {
  loom_status_t result;
  if (!builder) {
    result = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "TF_RegisterOpDefinition: builder is NULL (out of memory?)");
  } else if (builder->first_error) {
    result = builder->first_error;
    builder->first_error = NULL;
    loom_op_def_builder_destroy(builder->builder);
  } else {
    loom_op_registry_t* registry = loom_op_registry_global();
    if (!registry) {
      loom_op_def_builder_destroy(builder->builder);
      result = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                "the op registry could not be created");
    } else {
      result = loom_op_registry_register(registry, builder->builder);
    }
  }
  if (builder) {
    builder->builder = NULL;
    TF_DeleteOpDefinitionBuilder(builder);
  }
  // The registry records its own failures; a spec that did not parse or a
  // builder that could not be created never reached it. Recording them too
  // makes a plugin that registers such an op fail to load (and be rolled
  // back) even when it ignores `status`.
  loom__registration_journal_report(result);
  loom__tf_status_set(status, result);
}

//===----------------------------------------------------------------------===//
// Shape inference
//===----------------------------------------------------------------------===//

int64_t TF_ShapeInferenceContextNumInputs(TF_ShapeInferenceContext* ctx) {
  return ctx ? loom_shape_inference_context_num_inputs(to_loom_context(ctx))
             : 0;
}

// NULL when memory is exhausted, as TensorFlow's would throw.
static void* new_handle(size_t size) {
  loom_allocator_t allocator = loom_allocator_default();
  return allocator.allocate(allocator.self, size, alignof(max_align_t));
}

TF_ShapeHandle* TF_NewShapeHandle(void) {
  TF_ShapeHandle* handle = new_handle(sizeof(*handle));
  if (!handle) return NULL;
  handle->shape.rank = LOOM_UNKNOWN_RANK;
  handle->allocator = loom_allocator_default();
  return handle;
}

void TF_DeleteShapeHandle(TF_ShapeHandle* handle) {
  if (handle) handle->allocator.deallocate(handle->allocator.self, handle);
}

TF_DimensionHandle* TF_NewDimensionHandle(void) {
  TF_DimensionHandle* handle = new_handle(sizeof(*handle));
  if (!handle) return NULL;
  handle->value = LOOM_UNKNOWN_DIM;
  handle->allocator = loom_allocator_default();
  return handle;
}

void TF_DeleteDimensionHandle(TF_DimensionHandle* handle) {
  if (handle) handle->allocator.deallocate(handle->allocator.self, handle);
}

static bool check_handles(TF_Status* status, const void* a, const void* b,
                          const char* function) {
  if (a && b) return true;
  loom__tf_status_set(status,
                      loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                       "%s: NULL context or handle", function));
  return false;
}

void TF_ShapeInferenceContextGetInput(TF_ShapeInferenceContext* ctx, int i,
                                      TF_ShapeHandle* handle,
                                      TF_Status* status) {
  if (!check_handles(status, ctx, handle, "TF_ShapeInferenceContextGetInput")) {
    return;
  }
  loom_shape_inference_context_t* context = to_loom_context(ctx);
  if (i < 0 || i >= context->num_inputs) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "input index %d is out of range [0, %d) for "
                                 "op '%s'",
                                 i, context->num_inputs, context->op->name));
    return;
  }
  handle->shape = *loom__shape_context_input(context, i);
  loom__tf_status_set(status, loom_ok_status());
}

void TF_ShapeInferenceContextSetOutput(TF_ShapeInferenceContext* ctx, int i,
                                       TF_ShapeHandle* handle,
                                       TF_Status* status) {
  if (!check_handles(status, ctx, handle,
                     "TF_ShapeInferenceContextSetOutput")) {
    return;
  }
  loom_shape_inference_context_t* context = to_loom_context(ctx);
  // TensorFlow reports a bad index here as INVALID_ARGUMENT, as for inputs
  // (the native call says OUT_OF_RANGE).
  if (i < 0 || i >= context->num_outputs) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "output index %d is out of range [0, %d) for "
                                 "op '%s'",
                                 i, context->num_outputs, context->op->name));
    return;
  }
  loom__tf_status_set(status, loom_shape_inference_context_set_output(
                                  context, i, &handle->shape));
}

TF_ShapeHandle* TF_ShapeInferenceContextScalar(TF_ShapeInferenceContext* ctx) {
  (void)ctx;
  TF_ShapeHandle* handle = TF_NewShapeHandle();
  if (handle) handle->shape = loom_shape_scalar();
  return handle;
}

TF_ShapeHandle* TF_ShapeInferenceContextVectorFromSize(
    TF_ShapeInferenceContext* ctx, size_t size) {
  (void)ctx;
  TF_ShapeHandle* handle = TF_NewShapeHandle();
  if (handle) {
    handle->shape = loom_shape_scalar();
    handle->shape.rank = 1;
    handle->shape.dims[0] = (int64_t)size;
  }
  return handle;
}

void TF_ShapeInferenceContext_GetAttrType(TF_ShapeInferenceContext* ctx,
                                          const char* attr_name,
                                          TF_DataType* val, TF_Status* status) {
  if (!check_handles(status, ctx, val,
                     "TF_ShapeInferenceContext_GetAttrType")) {
    return;
  }
  loom_dtype_t dtype = LOOM_DTYPE_INVALID;
  loom_status_t result = loom_op_attrs_get_dtype(
      loom_shape_inference_context_attrs(to_loom_context(ctx)), attr_name,
      &dtype);
  if (!result) *val = (TF_DataType)dtype;
  loom__tf_status_set(status, result);
}

int64_t TF_ShapeInferenceContextRank(TF_ShapeInferenceContext* ctx,
                                     TF_ShapeHandle* handle) {
  (void)ctx;
  return handle ? handle->shape.rank : LOOM_UNKNOWN_RANK;
}

int TF_ShapeInferenceContextRankKnown(TF_ShapeInferenceContext* ctx,
                                      TF_ShapeHandle* handle) {
  (void)ctx;
  return handle && handle->shape.rank >= 0;
}

typedef loom_status_t (*rank_check_fn_t)(const loom_shape_t*, int64_t,
                                         loom_shape_t*);

static void with_rank(TF_ShapeHandle* handle, int64_t rank,
                      TF_ShapeHandle* result, TF_Status* status,
                      rank_check_fn_t check, const char* function) {
  if (!check_handles(status, handle, result, function)) return;
  loom_shape_t shape;
  loom_status_t outcome = check(&handle->shape, rank, &shape);
  if (!outcome) result->shape = shape;
  loom__tf_status_set(status, outcome);
}

void TF_ShapeInferenceContextWithRank(TF_ShapeInferenceContext* ctx,
                                      TF_ShapeHandle* handle, int64_t rank,
                                      TF_ShapeHandle* result,
                                      TF_Status* status) {
  (void)ctx;
  with_rank(handle, rank, result, status, loom_shape_with_rank,
            "TF_ShapeInferenceContextWithRank");
}

void TF_ShapeInferenceContextWithRankAtLeast(TF_ShapeInferenceContext* ctx,
                                             TF_ShapeHandle* handle,
                                             int64_t rank,
                                             TF_ShapeHandle* result,
                                             TF_Status* status) {
  (void)ctx;
  with_rank(handle, rank, result, status, loom_shape_with_rank_at_least,
            "TF_ShapeInferenceContextWithRankAtLeast");
}

void TF_ShapeInferenceContextWithRankAtMost(TF_ShapeInferenceContext* ctx,
                                            TF_ShapeHandle* handle,
                                            int64_t rank,
                                            TF_ShapeHandle* result,
                                            TF_Status* status) {
  (void)ctx;
  with_rank(handle, rank, result, status, loom_shape_with_rank_at_most,
            "TF_ShapeInferenceContextWithRankAtMost");
}

void TF_ShapeInferenceContextDim(TF_ShapeInferenceContext* ctx,
                                 TF_ShapeHandle* shape_handle, int64_t i,
                                 TF_DimensionHandle* result) {
  (void)ctx;
  if (!result) return;
  result->value =
      shape_handle ? loom_shape_dim(&shape_handle->shape, i) : LOOM_UNKNOWN_DIM;
}

void TF_ShapeInferenceContextSubshape(TF_ShapeInferenceContext* ctx,
                                      TF_ShapeHandle* shape_handle,
                                      int64_t start, int64_t end,
                                      TF_ShapeHandle* result,
                                      TF_Status* status) {
  (void)ctx;
  if (!check_handles(status, shape_handle, result,
                     "TF_ShapeInferenceContextSubshape")) {
    return;
  }
  loom_shape_t shape;
  loom_status_t outcome =
      loom_shape_subshape(&shape_handle->shape, start, end, &shape);
  if (!outcome) result->shape = shape;
  loom__tf_status_set(status, outcome);
}

void TF_ShapeInferenceContextSetUnknownShape(TF_ShapeInferenceContext* ctx,
                                             TF_Status* status) {
  if (!check_handles(status, ctx, ctx,
                     "TF_ShapeInferenceContextSetUnknownShape")) {
    return;
  }
  loom_shape_inference_context_t* context = to_loom_context(ctx);
  for (int32_t i = 0; i < context->num_outputs; ++i) {
    *loom__shape_context_output(context, i) = loom_shape_unknown();
  }
  loom__tf_status_set(status, loom_ok_status());
}

int TF_DimensionHandleValueKnown(TF_DimensionHandle* dim_handle) {
  return dim_handle && dim_handle->value >= 0;
}

int64_t TF_DimensionHandleValue(TF_DimensionHandle* dim_handle) {
  return dim_handle ? dim_handle->value : LOOM_UNKNOWN_DIM;
}

void TF_ShapeInferenceContextConcatenateShapes(TF_ShapeInferenceContext* ctx,
                                               TF_ShapeHandle* first,
                                               TF_ShapeHandle* second,
                                               TF_ShapeHandle* result,
                                               TF_Status* status) {
  (void)ctx;
  if (!check_handles(status, first, second,
                     "TF_ShapeInferenceContextConcatenateShapes") ||
      !check_handles(status, result, result,
                     "TF_ShapeInferenceContextConcatenateShapes")) {
    return;
  }
  loom_shape_t shape;
  loom_status_t outcome =
      loom_shape_concatenate(&first->shape, &second->shape, &shape);
  if (!outcome) result->shape = shape;
  loom__tf_status_set(status, outcome);
}
