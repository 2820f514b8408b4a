// The JVP of MaxPool: each output takes the tangent of the input element
// its window's maximum came from (the first one on ties, as the
// gradient). The windows are extracted exactly with a Conv2D whose filter
// is a one-hot bank (patch element k of channel c to output channel
// k * C + c); the maximum's position is the first element equal to the
// output, padding excluded. (MaxPoolGrad and MaxPoolGradGrad have no JVP
// functions: forward mode transposes their gradients, each the other op.)

#include <string.h>

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"
#include "handlers/autodiff/jvp_ops.h"

typedef loom_tensor_handle_t handle_t;

enum { kMaxWindow = 4096 };

static loom_status_t read_ints(const loom_op_attrs_t* attrs, const char* name,
                               int64_t* out) {
  loom_attr_value_t value;
  if (!attrs || !loom_op_attrs_get(attrs, name, &value) || !value.is_list ||
      value.kind != LOOM_ATTR_KIND_I64 || value.count != 4) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "JVP of MaxPool: attribute '%s' must be 4 ints",
                            name);
  }
  memcpy(out, value.u.list, sizeof(int64_t) * 4);
  return loom_ok_status();
}

static bool string_attr_is(const loom_op_attrs_t* attrs, const char* name,
                           const char* expected) {
  loom_attr_value_t value;
  if (!attrs || !loom_op_attrs_get(attrs, name, &value) ||
      value.kind != LOOM_ATTR_KIND_STRING) {
    return false;
  }
  return value.u.string.size == strlen(expected) &&
         memcmp(value.u.string.data, expected, value.u.string.size) == 0;
}

// A constant of `dtype` with the given dims and values.
static loom_status_t constant(loom_gradient_context_t* ctx, loom_dtype_t dtype,
                              const int64_t* dims, int32_t rank,
                              const double* values, handle_t** out) {
  *out = NULL;
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, dims, rank));
  loom_dtype_t made = dtype == LOOM_DTYPE_DOUBLE ? dtype : LOOM_DTYPE_FLOAT;
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(loom_allocator_default(), made,
                                                &shape, &tensor));
  int64_t n = loom_shape_num_elements(&shape);
  for (int64_t i = 0; i < n; ++i) {
    if (made == LOOM_DTYPE_DOUBLE) {
      ((double*)loom_tensor_data(tensor))[i] = values ? values[i] : 0.0;
    } else {
      ((float*)loom_tensor_data(tensor))[i] = values ? (float)values[i] : 0.0f;
    }
  }
  handle_t* handle = NULL;
  loom_status_t status = loom_context_new_handle(
      loom_gradient_context_eager(ctx), tensor, &handle);
  loom_tensor_release(tensor);
  if (status || made == dtype) {
    *out = handle;
    return status;
  }
  status = loom__grad_op(ctx, "Cast", &handle, 1,
                         LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("DstT", dtype)), out);
  loom_tensor_handle_release(handle);
  return status;
}

// The one-hot filter bank [kh, kw, C, kh * kw * C].
static loom_status_t patch_filter(loom_gradient_context_t* ctx,
                                  loom_dtype_t dtype, int64_t kh, int64_t kw,
                                  int64_t c, handle_t** out) {
  int64_t k = kh * kw;
  int64_t dims[4] = {kh, kw, c, k * c};
  int64_t count = k * c * k * c;
  double* values = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(loom_allocator_default(),
                                             sizeof(double) * (size_t)count,
                                             (void**)&values));
  for (int64_t p = 0; p < k; ++p) {
    for (int64_t ch = 0; ch < c; ++ch) {
      // Element (p, ch) of the filter feeds output channel p * C + ch.
      values[(p * c + ch) * (k * c) + p * c + ch] = 1.0;
    }
  }
  loom_status_t status = constant(ctx, dtype, dims, 4, values, out);
  loom_allocator_free(loom_allocator_default(), values);
  return status;
}

static loom_status_t transpose(loom_gradient_context_t* ctx, handle_t* x,
                               const int64_t* perm, handle_t** out) {
  return loom__grad_transpose(ctx, x, perm, 4, out);
}

static loom_status_t max_pool_jvp(loom_gradient_context_t* ctx,
                                  handle_t* const* t, handle_t** out,
                                  void* user_data) {
  (void)user_data;
  if (!t[0]) return loom_ok_status();
  const loom_op_attrs_t* attrs = loom_gradient_context_attrs(ctx);
  int64_t ksize[4], strides[4];
  LOOM_RETURN_IF_ERROR(read_ints(attrs, "ksize", ksize));
  LOOM_RETURN_IF_ERROR(read_ints(attrs, "strides", strides));
  bool nchw = string_attr_is(attrs, "data_format", "NCHW");
  bool same = string_attr_is(attrs, "padding", "SAME");
  int spatial = nchw ? 2 : 1;
  int channel = nchw ? 1 : 3;
  int64_t kh = ksize[spatial], kw = ksize[spatial + 1];
  int64_t sh = strides[spatial], sw = strides[spatial + 1];
  if (ksize[0] != 1 || ksize[channel] != 1 || kh * kw > kMaxWindow) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "JVP of MaxPool: only windows over the spatial "
                            "dimensions (of at most %d elements)",
                            kMaxWindow);
  }
  static const int64_t kToNhwc[4] = {0, 2, 3, 1};
  static const int64_t kToNchw[4] = {0, 3, 1, 2};
  const loom_tensor_metadata_t* x_meta =
      loom_gradient_context_input_metadata(ctx, 0);
  const loom_tensor_metadata_t* y_meta =
      loom_gradient_context_output_metadata(ctx, 0);
  loom_dtype_t dtype = x_meta->dtype;
  const int64_t* xd = x_meta->shape.dims;
  const int64_t* yd = y_meta->shape.dims;
  int64_t n = xd[0], c = nchw ? xd[1] : xd[3];
  int64_t oh = nchw ? yd[2] : yd[1], ow = nchw ? yd[3] : yd[2];
  int64_t k = kh * kw;
  enum {
    kX,
    kT,
    kY,
    kOnes,
    kFilter,
    kPx,
    kPt,
    kP1,
    kPx5,
    kPt5,
    kP15,
    kY5,
    kEq,
    kHalf,
    kValid,
    kMatch,
    kIndex,
    kBig,
    kMasked,
    kFirst,
    kOneHot,
    kZero,
    kPicked,
    kSum,
    kCount
  };
  handle_t* h[kCount] = {NULL};
  loom_status_t status = loom_ok_status();
  handle_t* x = loom_gradient_context_input(ctx, 0);
  handle_t* y = loom_gradient_context_output(ctx, 0);
  if (nchw) {
    status = transpose(ctx, x, kToNhwc, &h[kX]);
    if (!status) status = transpose(ctx, t[0], kToNhwc, &h[kT]);
    if (!status) status = transpose(ctx, y, kToNhwc, &h[kY]);
  } else {
    loom_tensor_handle_retain(x);
    loom_tensor_handle_retain(t[0]);
    loom_tensor_handle_retain(y);
    h[kX] = x;
    h[kT] = t[0];
    h[kY] = y;
  }
  int64_t conv_strides[4] = {1, sh, sw, 1};
  loom__grad_attr_t conv_attrs[2] = {
      LOOM_GRAD_INTS("strides", conv_strides, 4),
      LOOM_GRAD_STRING("padding", same ? "SAME" : "VALID")};
  if (!status) status = patch_filter(ctx, dtype, kh, kw, c, &h[kFilter]);
  if (!status) status = loom__grad_ones_like(ctx, h[kX], &h[kOnes]);
  const int inputs[3] = {kX, kT, kOnes};
  const int patches[3] = {kPx, kPt, kP1};
  const int reshaped[3] = {kPx5, kPt5, kP15};
  int64_t dims5[5] = {n, oh, ow, k, c};
  for (int i = 0; i < 3 && !status; ++i) {
    status =
        loom__grad_op(ctx, "Conv2D", LOOM_GRAD_INPUTS(h[inputs[i]], h[kFilter]),
                      conv_attrs, 2, &h[patches[i]]);
    if (!status) {
      status =
          loom__grad_reshape(ctx, h[patches[i]], dims5, 5, &h[reshaped[i]]);
    }
  }
  int64_t y5[5] = {n, oh, ow, 1, c};
  if (!status) status = loom__grad_reshape(ctx, h[kY], y5, 5, &h[kY5]);
  if (!status)
    status = loom__grad_binary(ctx, "Equal", h[kPx5], h[kY5], &h[kEq]);
  if (!status) status = loom__grad_scalar(ctx, dtype, 0.5, &h[kHalf]);
  if (!status) {
    status = loom__grad_binary(ctx, "Greater", h[kP15], h[kHalf], &h[kValid]);
  }
  if (!status) {
    status =
        loom__grad_binary(ctx, "LogicalAnd", h[kEq], h[kValid], &h[kMatch]);
  }
  double positions[kMaxWindow];
  for (int64_t p = 0; p < k; ++p) positions[p] = (double)p;
  int64_t index_dims[5] = {1, 1, 1, k, 1};
  if (!status) {
    status = constant(ctx, dtype, index_dims, 5, positions, &h[kIndex]);
  }
  if (!status) status = loom__grad_scalar(ctx, dtype, (double)k, &h[kBig]);
  if (!status) {
    status = loom__grad_op(ctx, "SelectV2",
                           LOOM_GRAD_INPUTS(h[kMatch], h[kIndex], h[kBig]),
                           LOOM_GRAD_NO_ATTRS, &h[kMasked]);
  }
  if (!status) {
    int64_t axis = 3;
    handle_t* axes = NULL;
    status = loom__grad_int_vector(ctx, LOOM_DTYPE_INT32, &axis, 1, &axes);
    if (!status) {
      status = loom__grad_op(ctx, "Min", LOOM_GRAD_INPUTS(h[kMasked], axes),
                             LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("keep_dims", true)),
                             &h[kFirst]);
    }
    loom_tensor_handle_release(axes);
  }
  if (!status) {
    status = loom__grad_binary(ctx, "Equal", h[kIndex], h[kFirst], &h[kOneHot]);
  }
  if (!status) status = loom__grad_scalar(ctx, dtype, 0.0, &h[kZero]);
  if (!status) {
    status = loom__grad_op(ctx, "SelectV2",
                           LOOM_GRAD_INPUTS(h[kOneHot], h[kPt5], h[kZero]),
                           LOOM_GRAD_NO_ATTRS, &h[kPicked]);
  }
  if (!status) {
    int64_t axis = 3;
    status = loom__grad_sum(ctx, h[kPicked], &axis, 1, false, &h[kSum]);
  }
  if (!status) {
    if (nchw) {
      status = transpose(ctx, h[kSum], kToNchw, &out[0]);
    } else {
      out[0] = h[kSum];
      h[kSum] = NULL;
    }
  }
  loom__grad_release_all(h, kCount);
  return status;
}

loom_status_t loom__register_pool_jvps(void) {
  loom_jvp_def_t def = {
      .struct_size = sizeof(def),
      .op_name = "MaxPool",
      .fn = max_pool_jvp,
      .inputs_used = LOOM_GRADIENT_USES_ALL,
      .outputs_used = LOOM_GRADIENT_USES_ALL,
  };
  return loom_jvp_register(&def);
}
