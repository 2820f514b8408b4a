// The shape functions of Conv2D, Conv2DBackpropInput and
// Conv2DBackpropFilter, and the backprops' geometry check, which the
// kernel repeats at run time.

#include <string.h>

#include "kernels/elementwise.h"
#include "kernels/nn_conv.h"
#include "loom/shape_inference.h"

loom_status_t loom__nn_conv2d_shape_fn(loom_shape_inference_context_t* context,
                                       void* user_data) {
  (void)user_data;
  loom__nn_window_attrs_t attrs;
  LOOM_RETURN_IF_ERROR(
      loom__nn_conv_attrs(loom_shape_inference_context_op(context)->name,
                          loom_shape_inference_context_attrs(context), &attrs));
  loom_shape_t input, filter, out = loom__nn_unknown_image();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &input));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 1, &filter));
  if (loom__nn_fully_known(&input) && loom__nn_fully_known(&filter)) {
    loom__nn_geometry_t g;
    LOOM_RETURN_IF_ERROR(loom__nn_conv_geometry(&attrs, &input, &filter, &g));
    out = loom__nn_image_shape(g.nchw, g.batch, g.out_h, g.out_w, g.out_c);
  } else {
    LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&input, 4, &input));
    LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&filter, 4, &filter));
    out.dims[0] = input.dims[0];
    out.dims[attrs.nchw ? 1 : 3] = filter.dims[3];
  }
  return loom_shape_inference_context_set_output(context, 0, &out);
}

// TensorFlow's ConvBackpropComputeDimensionsV2: the geometry of the
// forward convolution whose gradient is taken, checked against
// out_backprop.
loom_status_t loom__nn_conv_backprop_geometry(
    const char* label, const loom__nn_window_attrs_t* attrs,
    const loom_shape_t* input, const loom_shape_t* filter,
    const loom_shape_t* out_backprop, loom__nn_geometry_t* g) {
  const loom_shape_t* shapes[3] = {input, filter, out_backprop};
  const char* names[3] = {"input", "filter", "out_backprop"};
  for (int i = 0; i < 3; ++i) {
    if (shapes[i]->rank != 4) {
      char text[LOOM_SHAPE_TEXT_SIZE];
      loom__format_dims(shapes[i], text);
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: %s must be 4-dimensional, got shape %s",
                              label, names[i], text);
    }
  }
  char ti[LOOM_SHAPE_TEXT_SIZE], tf[LOOM_SHAPE_TEXT_SIZE],
      to[LOOM_SHAPE_TEXT_SIZE];
  loom__format_dims(input, ti);
  loom__format_dims(filter, tf);
  loom__format_dims(out_backprop, to);
  if (input->dims[0] != out_backprop->dims[0]) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: input and out_backprop must have the same batch size. Input "
        "batch: %lld, outbackprop batch: %lld, batch_dim: 0 (input %s, "
        "out_backprop %s)",
        label, (long long)input->dims[0], (long long)out_backprop->dims[0], ti,
        to);
  }
  loom_status_t status = loom__nn_conv_geometry(attrs, input, filter, g);
  if (status && strncmp(loom_status_message(status), label, strlen(label))) {
    return loom_status_annotate(status, "%s", label);
  }
  if (status) return status;
  int64_t depth = out_backprop->dims[attrs->nchw ? 1 : 3];
  if (g->out_c != depth) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: filter and out_backprop must have the same "
                            "out_depth: %lld vs %lld (filter %s, out_backprop "
                            "%s)",
                            label, (long long)g->out_c, (long long)depth, tf,
                            to);
  }
  int64_t actual[2] = {out_backprop->dims[attrs->nchw ? 2 : 1],
                       out_backprop->dims[attrs->nchw ? 3 : 2]};
  int64_t computed[2] = {g->out_h, g->out_w};
  int64_t in[2] = {g->in_h, g->in_w}, k[2] = {g->k_h, g->k_w};
  int64_t stride[2] = {g->stride_h, g->stride_w};
  int64_t dilation[2] = {g->dil_h, g->dil_w};
  for (int i = 0; i < 2; ++i) {
    if (actual[i] != computed[i]) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "%s: Size of out_backprop doesn't match computed: actual = %lld, "
          "computed = %lld spatial_dim: %d input: %lld filter: %lld output: "
          "%lld stride: %lld dilation: %lld",
          label, (long long)actual[i], (long long)computed[i], i + 1,
          (long long)in[i], (long long)k[i], (long long)actual[i],
          (long long)stride[i], (long long)dilation[i]);
    }
  }
  return loom_ok_status();
}

// Conv2DBackpropInput (sizes at input 0) and Conv2DBackpropFilter (at 1):
// the output shape is the sizes tensor's value; with every shape known,
// the whole geometry is checked now.
loom_status_t loom__nn_conv_backprop_shape_fn(
    loom_shape_inference_context_t* context, void* user_data) {
  (void)user_data;
  const loom_op_def_t* op = loom_shape_inference_context_op(context);
  bool input_grad = strcmp(op->name, "Conv2DBackpropInput") == 0;
  int32_t sizes_index = input_grad ? 0 : 1;
  loom__nn_window_attrs_t attrs;
  LOOM_RETURN_IF_ERROR(
      loom__nn_conv_attrs(loom_shape_inference_context_op(context)->name,
                          loom_shape_inference_context_attrs(context), &attrs));
  const loom_tensor_t* sizes =
      loom_shape_inference_context_input_tensor(context, sizes_index);
  loom_shape_t out = loom__nn_unknown_image();
  if (!sizes) return loom_shape_inference_context_set_output(context, 0, &out);
  LOOM_RETURN_IF_ERROR(loom__nn_shape_from_tensor(
      sizes, input_grad ? "input_sizes" : "filter_sizes", &out));
  loom_shape_t other, out_backprop;
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_input(context, input_grad ? 1 : 0, &other));
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_input(context, 2, &out_backprop));
  if (loom__nn_fully_known(&other) && loom__nn_fully_known(&out_backprop)) {
    loom__nn_geometry_t g;
    LOOM_RETURN_IF_ERROR(loom__nn_conv_backprop_geometry(
        op->name, &attrs, input_grad ? &out : &other,
        input_grad ? &other : &out, &out_backprop, &g));
  }
  return loom_shape_inference_context_set_output(context, 0, &out);
}
