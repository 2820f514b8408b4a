// Helpers for the built-in JVP functions.

#include "handlers/autodiff/jvp_ops.h"

#include "handlers/autodiff/grad_ops.h"

loom_status_t loom__jvp_rerun(loom_gradient_context_t* context,
                              loom_tensor_handle_t* const* replacements,
                              loom_tensor_handle_t** results) {
  int32_t n = loom_gradient_context_num_inputs(context);
  int32_t m = loom_gradient_context_num_outputs(context);
  for (int32_t k = 0; k < m; ++k) results[k] = NULL;
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_eager_op_create(loom_gradient_context_eager(context),
                           loom_gradient_context_op_name(context), &op));
  const loom_op_attrs_t* attrs = loom_gradient_context_attrs(context);
  loom_status_t status =
      attrs ? loom_eager_op_add_attrs(op, attrs) : loom_ok_status();
  for (int32_t j = 0; j < n && !status; ++j) {
    loom_tensor_handle_t* input = replacements[j]
                                      ? replacements[j]
                                      : loom_gradient_context_input(context, j);
    if (!input) {
      status = loom_make_status(LOOM_STATUS_INTERNAL,
                                "JVP of %s: input %d is not available",
                                loom_gradient_context_op_name(context), j);
      break;
    }
    status = loom_eager_op_add_input(op, input);
  }
  int32_t count = 0;
  if (!status) status = loom_eager_op_execute(op, results, m, &count);
  if (!status && count != m) {
    loom__grad_release_all(results, count);
    status = loom_make_status(LOOM_STATUS_INTERNAL,
                              "JVP of %s: %d results, expected %d",
                              loom_gradient_context_op_name(context), count, m);
  }
  loom_eager_op_destroy(op);
  return status;
}

loom_status_t loom__jvp_add(loom_gradient_context_t* context,
                            loom_tensor_handle_t* a, loom_tensor_handle_t* b,
                            loom_tensor_handle_t** out) {
  *out = NULL;
  if (!a || !b) {
    *out = a ? a : b;
    return loom_ok_status();
  }
  loom_status_t status = loom__grad_binary(context, "AddV2", a, b, out);
  loom_tensor_handle_release(a);
  loom_tensor_handle_release(b);
  return status;
}

loom_status_t loom__jvp_fit_output(loom_gradient_context_t* context,
                                   loom_tensor_handle_t* tangent, int32_t index,
                                   loom_tensor_handle_t** out) {
  *out = NULL;
  const loom_tensor_metadata_t* target =
      loom_gradient_context_output_metadata(context, index);
  loom_tensor_metadata_t metadata;
  loom_status_t status =
      target ? loom_tensor_handle_wait_metadata(tangent, &metadata)
             : loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                                "loom__jvp_fit_output: no output %d", index);
  if (!status && loom_shape_equal(&metadata.shape, &target->shape)) {
    *out = tangent;
    return loom_ok_status();
  }
  loom_tensor_handle_t* dims = NULL;
  if (!status)
    status = loom__grad_shape_constant(context, &target->shape, &dims);
  if (!status) {
    status = loom__grad_binary(context, "BroadcastTo", tangent, dims, out);
  }
  loom_tensor_handle_release(dims);
  loom_tensor_handle_release(tangent);
  return status;
}

loom_status_t loom__jvp_zeros_like_input(loom_gradient_context_t* context,
                                         int32_t index,
                                         loom_tensor_handle_t** out) {
  *out = NULL;
  const loom_tensor_metadata_t* metadata =
      loom_gradient_context_input_metadata(context, index);
  if (!metadata) {
    return loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                            "loom__jvp_zeros_like_input: no input %d", index);
  }
  return loom__grad_filled(context, metadata, 0.0, out);
}
