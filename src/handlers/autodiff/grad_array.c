// Gradient functions of the array op family: shapes, concatenation and
// splitting, slicing, tiling, padding, broadcasting and gathering. Each
// routes the upstream gradient back to the elements an output element came
// from, with ops (Reshape, Slice, Pad, ConcatV2, Sum, ...) whose own
// gradients are known, so that the result is differentiable again.

#include <string.h>

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"

typedef loom_gradient_context_t grad_ctx_t;
typedef loom_tensor_handle_t handle_t;

#define USES(i) LOOM_GRADIENT_USES(i)
#define RELEASE(array) \
  loom__grad_release_all((array), (int32_t)(sizeof(array) / sizeof((array)[0])))

static const loom_shape_t* input_shape(grad_ctx_t* ctx, int32_t index) {
  return &loom_gradient_context_input_metadata(ctx, index)->shape;
}

static const loom_shape_t* output_shape(grad_ctx_t* ctx, int32_t index) {
  return &loom_gradient_context_output_metadata(ctx, index)->shape;
}

static loom_status_t need_known(grad_ctx_t* ctx, const loom_shape_t* shape) {
  if (shape->rank >= 0 && loom_shape_is_fully_defined(shape)) {
    return loom_ok_status();
  }
  return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                          "%s (gradient): shapes must be known",
                          loom_gradient_context_op_name(ctx));
}

static int64_t attr_int(grad_ctx_t* ctx, const char* name, int64_t fallback) {
  loom_attr_value_t value;
  if (!loom_gradient_context_attr(ctx, name, &value) || value.is_list) {
    return fallback;
  }
  if (value.kind == LOOM_ATTR_KIND_I64) return value.u.i64;
  if (value.kind == LOOM_ATTR_KIND_I32) return value.u.i32;
  return fallback;
}

// dx = Reshape(dy, shape of input 0).
static loom_status_t reshape_to_input(grad_ctx_t* ctx, handle_t* const* dys,
                                      handle_t** dxs, void* data) {
  const loom_shape_t* shape = input_shape(ctx, 0);
  LOOM_RETURN_IF_ERROR(need_known(ctx, shape));
  return loom__grad_reshape(ctx, dys[0], loom_shape_dims(shape), shape->rank,
                            &dxs[0]);
}

// Each output's gradient to its input.
static loom_status_t identity_n_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                     handle_t** dxs, void* data) {
  int32_t n = loom_gradient_context_num_inputs(ctx);
  for (int32_t i = 0; i < n; ++i) {
    if (dys[i]) loom_tensor_handle_retain(dys[i]);
    dxs[i] = dys[i];
  }
  return loom_ok_status();
}

// The indicator ops (FunctionInput ... WhileOutput): identities whose
// outputs all are input 0, so its gradient is the sum of theirs.
static loom_status_t fan_out_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                  handle_t** dxs, void* data) {
  (void)data;
  int32_t n = loom_gradient_context_num_outputs(ctx);
  handle_t* sum = NULL;
  for (int32_t i = 0; i < n; ++i) {
    if (!dys[i]) continue;
    if (!sum) {
      loom_tensor_handle_retain(dys[i]);
      sum = dys[i];
      continue;
    }
    handle_t* next = NULL;
    loom_status_t s = loom__grad_binary(ctx, "AddV2", sum, dys[i], &next);
    loom_tensor_handle_release(sum);
    if (s) return s;
    sum = next;
  }
  dxs[0] = sum;
  return loom_ok_status();
}

static loom_status_t transpose_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                    handle_t** dxs, void* data) {
  int64_t perm[LOOM_MAX_SHAPE_RANK], inverse[LOOM_MAX_SHAPE_RANK];
  int32_t rank = 0;
  LOOM_RETURN_IF_ERROR(
      loom__grad_input_ints(ctx, 1, perm, LOOM_MAX_SHAPE_RANK, &rank));
  for (int32_t i = 0; i < rank; ++i) {
    int64_t p = perm[i] < 0 ? perm[i] + rank : perm[i];
    if (p < 0 || p >= rank) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Transpose (gradient): bad permutation");
    }
    inverse[p] = i;
  }
  return loom__grad_transpose(ctx, dys[0], inverse, rank, &dxs[0]);
}

// The gradient of each of `count` outputs, zeros for those with none.
static loom_status_t gradients_or_zeros(grad_ctx_t* ctx, handle_t* const* dys,
                                        int32_t count, handle_t** out) {
  for (int32_t i = 0; i < count; ++i) {
    loom_status_t s = loom__grad_output_gradient_or_zeros(ctx, dys, i, &out[i]);
    if (s) {
      loom__grad_release_all(out, i);
      return s;
    }
  }
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Concatenation and splitting
//===----------------------------------------------------------------------===//

// ConcatV2(values..., axis) and Concat(concat_dim, values...) (data
// non-NULL): each value's gradient is its slice of dy.
static loom_status_t concat_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                 handle_t** dxs, void* data) {
  int32_t n = loom_gradient_context_num_inputs(ctx) - 1;
  int32_t axis_input = data ? 0 : n, first = data ? 1 : 0;
  const loom_shape_t* out = output_shape(ctx, 0);
  LOOM_RETURN_IF_ERROR(need_known(ctx, out));
  int64_t axis_value = 0;
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(
      loom__grad_input_ints(ctx, axis_input, &axis_value, 1, &count));
  int32_t rank = out->rank;
  int64_t axis = axis_value < 0 ? axis_value + rank : axis_value;
  if (count != 1 || axis < 0 || axis >= rank) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s (gradient): bad axis %lld for rank %d",
                            loom_gradient_context_op_name(ctx),
                            (long long)axis_value, (int)rank);
  }
  int64_t begin[LOOM_MAX_SHAPE_RANK] = {0};
  loom_status_t s = loom_ok_status();
  for (int32_t i = 0; i < n && !s; ++i) {
    const loom_shape_t* shape = input_shape(ctx, first + i);
    s = need_known(ctx, shape);
    handle_t* t[2] = {NULL};
    if (!s) {
      s = loom__grad_int_vector(ctx, LOOM_DTYPE_INT32, begin, rank, &t[0]);
    }
    if (!s) {
      s = loom__grad_int_vector(ctx, LOOM_DTYPE_INT32, loom_shape_dims(shape),
                                rank, &t[1]);
    }
    if (!s) {
      s = loom__grad_op(ctx, "Slice", LOOM_GRAD_INPUTS(dys[0], t[0], t[1]),
                        LOOM_GRAD_NO_ATTRS, &dxs[first + i]);
    }
    RELEASE(t);
    if (!s) begin[axis] += loom_shape_dims(shape)[axis];
  }
  if (s) loom__grad_release_all(dxs + first, n);
  return s;
}

// ReverseV2(x, axis): dx = ReverseV2(dy, axis).
static loom_status_t reverse_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                  handle_t** dxs, void* data) {
  if (!dys[0]) return loom_ok_status();
  return loom__grad_op(
      ctx, "ReverseV2",
      LOOM_GRAD_INPUTS(dys[0], loom_gradient_context_input(ctx, 1)),
      LOOM_GRAD_NO_ATTRS, &dxs[0]);
}

// Pack: Unpack the gradient along the same axis.
static loom_status_t pack_grad(grad_ctx_t* ctx, handle_t* const* dys,
                               handle_t** dxs, void* data) {
  int32_t n = loom_gradient_context_num_inputs(ctx);
  return loom__grad_execute(
      ctx, "Unpack", &dys[0], 1,
      LOOM_GRAD_ATTRS(LOOM_GRAD_INT("num", n),
                      LOOM_GRAD_INT("axis", attr_int(ctx, "axis", 0))),
      dxs, n);
}

// Unpack: Pack the outputs' gradients (zeros where none) along the axis.
static loom_status_t unpack_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                 handle_t** dxs, void* data) {
  int32_t n = loom_gradient_context_num_outputs(ctx);
  if (n == 0) {
    return loom__grad_filled(ctx, loom_gradient_context_input_metadata(ctx, 0),
                             0.0, &dxs[0]);
  }
  loom__handle_vector_t vector;
  loom__handle_vector_initialize(&vector);
  loom_status_t s =
      loom__handle_vector_resize(&vector, loom_allocator_default(), (size_t)n);
  handle_t** grads = loom__handle_vector_data(&vector);
  if (!s) s = gradients_or_zeros(ctx, dys, n, grads);
  if (!s) {
    s = loom__grad_op(
        ctx, "Pack", grads, n,
        LOOM_GRAD_ATTRS(LOOM_GRAD_INT("N", n),
                        LOOM_GRAD_INT("axis", attr_int(ctx, "axis", 0))),
        &dxs[0]);
    loom__grad_release_all(grads, n);
  }
  loom__handle_vector_deinitialize(&vector, loom_allocator_default());
  return s;
}

// Split / SplitV: concatenate the outputs' gradients (zeros where none)
// along the split axis (the op's own axis input).
static loom_status_t split_common(grad_ctx_t* ctx, handle_t* const* dys,
                                  int32_t axis_input, handle_t** dx) {
  int32_t n = loom_gradient_context_num_outputs(ctx);
  if (n == 1) {
    return loom__grad_output_gradient_or_zeros(ctx, dys, 0, dx);
  }
  loom__handle_vector_t vector;
  loom__handle_vector_initialize(&vector);
  loom_status_t s = loom__handle_vector_resize(
      &vector, loom_allocator_default(), (size_t)n + 1);
  handle_t** inputs = loom__handle_vector_data(&vector);
  if (!s) s = gradients_or_zeros(ctx, dys, n, inputs);
  if (!s) {
    inputs[n] = loom_gradient_context_input(ctx, axis_input);
    s = loom__grad_op(ctx, "ConcatV2", inputs, n + 1,
                      LOOM_GRAD_ATTRS(LOOM_GRAD_INT("N", n)), dx);
    loom__grad_release_all(inputs, n);
  }
  loom__handle_vector_deinitialize(&vector, loom_allocator_default());
  return s;
}

static loom_status_t split_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                handle_t** dxs, void* data) {
  return split_common(ctx, dys, 0, &dxs[1]);
}

static loom_status_t split_v_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                  handle_t** dxs, void* data) {
  return split_common(ctx, dys, 2, &dxs[0]);
}

//===----------------------------------------------------------------------===//
// Slicing and padding
//===----------------------------------------------------------------------===//

// Pads `g` with zeros: before[d] elements before and after[d] after along
// each dimension d.
static loom_status_t pad_with(grad_ctx_t* ctx, handle_t* g,
                              const int64_t* before, const int64_t* after,
                              int32_t rank, handle_t** out) {
  int64_t values[2 * LOOM_MAX_SHAPE_RANK];
  bool any = false;
  for (int32_t d = 0; d < rank; ++d) {
    values[2 * d] = before[d];
    values[2 * d + 1] = after[d];
    any |= before[d] != 0 || after[d] != 0;
  }
  if (!any) {
    loom_tensor_handle_retain(g);
    *out = g;
    return loom_ok_status();
  }
  int64_t dims[2] = {rank, 2};
  handle_t* paddings = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__grad_int_tensor(ctx, LOOM_DTYPE_INT32, dims, 2, values, &paddings));
  loom_status_t s = loom__grad_binary(ctx, "Pad", g, paddings, out);
  loom_tensor_handle_release(paddings);
  return s;
}

// Slice: pad the gradient back to the input's shape.
static loom_status_t slice_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                handle_t** dxs, void* data) {
  const loom_shape_t* in = input_shape(ctx, 0);
  const loom_shape_t* out = output_shape(ctx, 0);
  LOOM_RETURN_IF_ERROR(need_known(ctx, in));
  LOOM_RETURN_IF_ERROR(need_known(ctx, out));
  int64_t begin[LOOM_MAX_SHAPE_RANK], after[LOOM_MAX_SHAPE_RANK];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(
      loom__grad_input_ints(ctx, 1, begin, LOOM_MAX_SHAPE_RANK, &count));
  if (count != in->rank) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Slice (gradient): begin has %d values for rank %d",
                            count, in->rank);
  }
  for (int32_t d = 0; d < in->rank; ++d) {
    after[d] = loom_shape_dims(in)[d] - begin[d] - loom_shape_dims(out)[d];
  }
  return pad_with(ctx, dys[0], begin, after, in->rank, &dxs[0]);
}

// Pad / PadV2: slice the input's part out of the gradient (no gradient for
// constant_values, as TensorFlow).
static loom_status_t pad_grad(grad_ctx_t* ctx, handle_t* const* dys,
                              handle_t** dxs, void* data) {
  const loom_shape_t* in = input_shape(ctx, 0);
  LOOM_RETURN_IF_ERROR(need_known(ctx, in));
  int64_t paddings[2 * LOOM_MAX_SHAPE_RANK], begin[LOOM_MAX_SHAPE_RANK];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(
      loom__grad_input_ints(ctx, 1, paddings, 2 * LOOM_MAX_SHAPE_RANK, &count));
  if (count != 2 * in->rank) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s (gradient): paddings do not match rank %d",
                            loom_gradient_context_op_name(ctx), in->rank);
  }
  for (int32_t d = 0; d < in->rank; ++d) begin[d] = paddings[2 * d];
  handle_t* t[2] = {NULL};
  loom_status_t s =
      loom__grad_int_vector(ctx, LOOM_DTYPE_INT32, begin, in->rank, &t[0]);
  if (!s) {
    s = loom__grad_int_vector(ctx, LOOM_DTYPE_INT32, loom_shape_dims(in),
                              in->rank, &t[1]);
  }
  if (!s) {
    s = loom__grad_op(ctx, "Slice", LOOM_GRAD_INPUTS(dys[0], t[0], t[1]),
                      LOOM_GRAD_NO_ATTRS, &dxs[0]);
  }
  RELEASE(t);
  return s;
}

// One input dimension of a strided slice: `count` elements from `start`
// by `stride` (shrunk dimensions: one element, stride 1).
typedef struct slice_dim_t {
  int64_t start, stride, count;
} slice_dim_t;

// TensorFlow's strided-slice canonicalisation (the sparse specification
// with its masks, ellipsis and new axes made dense): one slice_dim_t per
// input dimension.
static loom_status_t strided_slice_dims(grad_ctx_t* ctx, int32_t rank,
                                        slice_dim_t* dims) {
  int64_t begin[LOOM_MAX_SHAPE_RANK * 2], end[LOOM_MAX_SHAPE_RANK * 2],
      strides[LOOM_MAX_SHAPE_RANK * 2];
  int32_t nb = 0, ne = 0, ns = 0;
  const int32_t cap = LOOM_MAX_SHAPE_RANK * 2;
  LOOM_RETURN_IF_ERROR(loom__grad_input_ints(ctx, 1, begin, cap, &nb));
  LOOM_RETURN_IF_ERROR(loom__grad_input_ints(ctx, 2, end, cap, &ne));
  LOOM_RETURN_IF_ERROR(loom__grad_input_ints(ctx, 3, strides, cap, &ns));
  if (nb != ne || nb != ns) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "StridedSlice (gradient): begin, end and strides "
                            "differ in length");
  }
  int64_t begin_mask = attr_int(ctx, "begin_mask", 0);
  int64_t end_mask = attr_int(ctx, "end_mask", 0);
  int64_t ellipsis_mask = attr_int(ctx, "ellipsis_mask", 0);
  int64_t new_axis_mask = attr_int(ctx, "new_axis_mask", 0);
  int64_t shrink_mask = attr_int(ctx, "shrink_axis_mask", 0);
  const loom_shape_t* shape = input_shape(ctx, 0);
  // Entries that consume an input dimension (not new axes, not the
  // ellipsis).
  int32_t consuming = 0;
  for (int32_t i = 0; i < nb; ++i) {
    if (!((ellipsis_mask | new_axis_mask) & (1LL << i))) consuming++;
  }
  for (int32_t d = 0; d < rank; ++d) {
    dims[d] = (slice_dim_t){0, 1, loom_shape_dims(shape)[d]};
  }
  int32_t d = 0;
  for (int32_t i = 0; i < nb && d <= rank; ++i) {
    if (ellipsis_mask & (1LL << i)) {
      d += rank - consuming;  // full dimensions
      continue;
    }
    if (new_axis_mask & (1LL << i)) continue;
    if (d >= rank) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "StridedSlice (gradient): index out of range");
    }
    int64_t n = loom_shape_dims(shape)[d];
    int64_t k = strides[i];
    if (k == 0) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "StridedSlice (gradient): stride 0");
    }
    if (shrink_mask & (1LL << i)) {
      int64_t b = begin[i] < 0 ? begin[i] + n : begin[i];
      dims[d++] = (slice_dim_t){b, 1, 1};
      continue;
    }
    int64_t lo = k > 0 ? 0 : -1, hi = k > 0 ? n : n - 1;
    int64_t b, e;
    if (begin_mask & (1LL << i)) {
      b = k > 0 ? 0 : n - 1;
    } else {
      b = begin[i] < 0 ? begin[i] + n : begin[i];
      b = b < lo ? lo : b > hi ? hi : b;
    }
    if (end_mask & (1LL << i)) {
      e = k > 0 ? n : -1;
    } else {
      e = end[i] < 0 ? end[i] + n : end[i];
      e = e < lo ? lo : e > hi ? hi : e;
    }
    int64_t count = k > 0 ? (e - b + k - 1) / k : (b - e + (-k) - 1) / (-k);
    if (count < 0) count = 0;
    dims[d++] = (slice_dim_t){b, k, count};
  }
  return loom_ok_status();
}

// StridedSlice: the gradient, reshaped to one dimension per input
// dimension, is reversed where the stride is negative, spread out by the
// stride (zeros between), then cut and padded into place.
static loom_status_t strided_slice_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                        handle_t** dxs, void* data) {
  const loom_shape_t* in = input_shape(ctx, 0);
  LOOM_RETURN_IF_ERROR(need_known(ctx, in));
  int32_t rank = in->rank;
  slice_dim_t dims[LOOM_MAX_SHAPE_RANK];
  LOOM_RETURN_IF_ERROR(strided_slice_dims(ctx, rank, dims));
  int64_t counts[LOOM_MAX_SHAPE_RANK];
  bool empty = false;
  for (int32_t d = 0; d < rank; ++d) {
    counts[d] = dims[d].count;
    empty |= counts[d] == 0;
  }
  if (empty) {
    return loom__grad_filled(ctx, loom_gradient_context_input_metadata(ctx, 0),
                             0.0, &dxs[0]);
  }
  handle_t* g = NULL;
  LOOM_RETURN_IF_ERROR(loom__grad_reshape(ctx, dys[0], counts, rank, &g));
  loom_status_t s = loom_ok_status();
  // Reverse the dimensions with negative strides (one StridedSlice).
  int64_t zeros[LOOM_MAX_SHAPE_RANK] = {0}, steps[LOOM_MAX_SHAPE_RANK];
  bool reverse = false;
  for (int32_t d = 0; d < rank; ++d) {
    steps[d] = dims[d].stride < 0 ? -1 : 1;
    reverse |= dims[d].stride < 0;
  }
  if (reverse) {
    handle_t* t[3] = {NULL};
    s = loom__grad_int_vector(ctx, LOOM_DTYPE_INT32, zeros, rank, &t[0]);
    if (!s)
      s = loom__grad_int_vector(ctx, LOOM_DTYPE_INT32, steps, rank, &t[1]);
    int64_t all = (1LL << rank) - 1;
    if (!s) {
      s = loom__grad_op(ctx, "StridedSlice",
                        LOOM_GRAD_INPUTS(g, t[0], t[0], t[1]),
                        LOOM_GRAD_ATTRS(LOOM_GRAD_INT("begin_mask", all),
                                        LOOM_GRAD_INT("end_mask", all)),
                        &t[2]);
    }
    if (!s) {
      loom_tensor_handle_release(g);
      g = t[2];
      t[2] = NULL;
    }
    RELEASE(t);
  }
  // Spread each strided dimension: [.., c, ..] -> [.., c, 1, ..] padded to
  // [.., c, |k|, ..] -> [.., c * |k|, ..].
  int64_t extent[LOOM_MAX_SHAPE_RANK];
  for (int32_t d = 0; d < rank; ++d) extent[d] = counts[d];
  for (int32_t d = 0; d < rank && !s; ++d) {
    int64_t k = dims[d].stride < 0 ? -dims[d].stride : dims[d].stride;
    if (k == 1 || counts[d] == 1) continue;
    int64_t split[LOOM_MAX_SHAPE_RANK + 1],
        before[LOOM_MAX_SHAPE_RANK + 1] = {0},
                                     after[LOOM_MAX_SHAPE_RANK + 1] = {0};
    for (int32_t j = 0, o = 0; j < rank; ++j) {
      split[o++] = extent[j];
      if (j == d) split[o++] = 1;
    }
    after[d + 1] = k - 1;
    handle_t* t[2] = {NULL};
    s = loom__grad_reshape(ctx, g, split, rank + 1, &t[0]);
    if (!s) s = pad_with(ctx, t[0], before, after, rank + 1, &t[1]);
    extent[d] = counts[d] * k;
    if (!s) {
      loom_tensor_handle_release(g);
      g = NULL;
      s = loom__grad_reshape(ctx, t[1], extent, rank, &g);
    }
    RELEASE(t);
  }
  // Place: the first element at the lowest index taken, cut what spreading
  // put past the end, pad the rest.
  int64_t before[LOOM_MAX_SHAPE_RANK], after[LOOM_MAX_SHAPE_RANK],
      keep[LOOM_MAX_SHAPE_RANK];
  bool cut = false;
  for (int32_t d = 0; d < rank; ++d) {
    int64_t k = dims[d].stride;
    int64_t first =
        k > 0 ? dims[d].start : dims[d].start + (dims[d].count - 1) * k;
    before[d] = first;
    keep[d] = extent[d];
    if (first + extent[d] > loom_shape_dims(in)[d]) {
      keep[d] = loom_shape_dims(in)[d] - first;
      cut = true;
    }
    after[d] = loom_shape_dims(in)[d] - first - keep[d];
  }
  if (!s && cut) {
    handle_t* t[3] = {NULL};
    s = loom__grad_int_vector(ctx, LOOM_DTYPE_INT32, zeros, rank, &t[0]);
    if (!s) s = loom__grad_int_vector(ctx, LOOM_DTYPE_INT32, keep, rank, &t[1]);
    if (!s) {
      s = loom__grad_op(ctx, "Slice", LOOM_GRAD_INPUTS(g, t[0], t[1]),
                        LOOM_GRAD_NO_ATTRS, &t[2]);
    }
    if (!s) {
      loom_tensor_handle_release(g);
      g = t[2];
      t[2] = NULL;
    }
    RELEASE(t);
  }
  if (!s) s = pad_with(ctx, g, before, after, rank, &dxs[0]);
  loom_tensor_handle_release(g);
  return s;
}

//===----------------------------------------------------------------------===//
// Tiling and broadcasting
//===----------------------------------------------------------------------===//

// Tile: view dy as [m0, d0, m1, d1, ...] and sum the copies.
static loom_status_t tile_grad(grad_ctx_t* ctx, handle_t* const* dys,
                               handle_t** dxs, void* data) {
  const loom_shape_t* in = input_shape(ctx, 0);
  const loom_shape_t* out = output_shape(ctx, 0);
  LOOM_RETURN_IF_ERROR(need_known(ctx, in));
  LOOM_RETURN_IF_ERROR(need_known(ctx, out));
  int32_t rank = in->rank;
  int64_t split[2 * LOOM_MAX_SHAPE_RANK], axes[LOOM_MAX_SHAPE_RANK];
  int32_t num_axes = 0;
  for (int32_t d = 0; d < rank; ++d) {
    if (loom_shape_dims(in)[d] == 0) {
      return loom__grad_filled(
          ctx, loom_gradient_context_input_metadata(ctx, 0), 0.0, &dxs[0]);
    }
    split[2 * d] = loom_shape_dims(out)[d] / loom_shape_dims(in)[d];
    split[2 * d + 1] = loom_shape_dims(in)[d];
    axes[num_axes++] = 2 * d;
  }
  handle_t* t[1] = {NULL};
  loom_status_t s = loom__grad_reshape(ctx, dys[0], split, 2 * rank, &t[0]);
  if (!s) {
    s = loom__grad_sum_to_shape(ctx, t[0], axes, num_axes, in, &dxs[0]);
  }
  RELEASE(t);
  return s;
}

static loom_status_t broadcast_to_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                       handle_t** dxs, void* data) {
  return loom__grad_reduce_to(
      ctx, dys[0], loom_gradient_context_input_metadata(ctx, 0), &dxs[0]);
}

// Fill(dims, value): the value's gradient is the sum of dy.
static loom_status_t fill_grad(grad_ctx_t* ctx, handle_t* const* dys,
                               handle_t** dxs, void* data) {
  const loom_shape_t* out = output_shape(ctx, 0);
  if (out->rank < 0) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "Fill (gradient): the rank must be known");
  }
  int64_t axes[LOOM_MAX_SHAPE_RANK];
  for (int32_t d = 0; d < out->rank; ++d) axes[d] = d;
  return loom__grad_sum(ctx, dys[0], axes, out->rank, false, &dxs[1]);
}

//===----------------------------------------------------------------------===//
// Gathering
//===----------------------------------------------------------------------===//

// Gather / GatherV2 with params [B.., O.., N, R..] (B: batch_dims, N: the
// gathered axis) and indices [B.., K..]: dy, viewed as [B, O, K, R], goes
// back to [B, O, N, R] through a one-hot matrix of the indices,
// dparams[b] = onehot[b]^T @ dy[b] (summing repeated indices), with the O
// dimension moved next to R.
static loom_status_t gather_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                 handle_t** dxs, void* data) {
  bool v2 = data != NULL;
  const loom_tensor_metadata_t* pm =
      loom_gradient_context_input_metadata(ctx, 0);
  const loom_shape_t* params = &pm->shape;
  const loom_shape_t* indices = input_shape(ctx, 1);
  LOOM_RETURN_IF_ERROR(need_known(ctx, params));
  LOOM_RETURN_IF_ERROR(need_known(ctx, indices));
  int64_t axis = 0, batch_dims = 0;
  if (v2) {
    int32_t count = 0;
    LOOM_RETURN_IF_ERROR(loom__grad_input_ints(ctx, 2, &axis, 1, &count));
    batch_dims = attr_int(ctx, "batch_dims", 0);
  }
  if (batch_dims < 0) batch_dims += indices->rank;
  if (axis < 0) axis += params->rank;
  if (axis < batch_dims || axis >= params->rank || batch_dims > indices->rank) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "GatherV2 (gradient): bad axis or batch_dims");
  }
  int64_t b = 1, o = 1, r = 1, k = 1;
  int64_t n = loom_shape_dims(params)[axis];
  for (int32_t d = 0; d < batch_dims; ++d) b *= loom_shape_dims(params)[d];
  for (int32_t d = (int32_t)batch_dims; d < axis; ++d)
    o *= loom_shape_dims(params)[d];
  for (int32_t d = (int32_t)axis + 1; d < params->rank; ++d) {
    r *= loom_shape_dims(params)[d];
  }
  for (int32_t d = (int32_t)batch_dims; d < indices->rank; ++d) {
    k *= loom_shape_dims(indices)[d];
  }
  handle_t* t[12] = {NULL};
  // onehot [B, K, N]
  int64_t bk[2] = {b, k};
  loom_status_t s = loom__grad_reshape(ctx, loom_gradient_context_input(ctx, 1),
                                       bk, 2, &t[0]);
  if (!s) {
    int64_t depth = n;
    s = loom__grad_int_tensor(ctx, LOOM_DTYPE_INT32, NULL, 0, &depth, &t[1]);
  }
  if (!s) s = loom__grad_scalar(ctx, pm->dtype, 1.0, &t[2]);
  if (!s) s = loom__grad_scalar(ctx, pm->dtype, 0.0, &t[3]);
  if (!s) {
    s = loom__grad_op(ctx, "OneHot", LOOM_GRAD_INPUTS(t[0], t[1], t[2], t[3]),
                      LOOM_GRAD_NO_ATTRS, &t[4]);
  }
  // dy as [B, K, O * R]
  if (o == 1) {
    int64_t bkr[3] = {b, k, r};
    if (!s) s = loom__grad_reshape(ctx, dys[0], bkr, 3, &t[5]);
  } else {
    int64_t bokr[4] = {b, o, k, r}, perm[4] = {0, 2, 1, 3};
    int64_t bkor[3] = {b, k, o * r};
    if (!s) s = loom__grad_reshape(ctx, dys[0], bokr, 4, &t[6]);
    if (!s) s = loom__grad_transpose(ctx, t[6], perm, 4, &t[7]);
    if (!s) s = loom__grad_reshape(ctx, t[7], bkor, 3, &t[5]);
  }
  // [B, N, O * R]
  if (!s) {
    s = loom__grad_op(ctx, "BatchMatMulV2", LOOM_GRAD_INPUTS(t[4], t[5]),
                      LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("adj_x", true)), &t[8]);
  }
  if (o == 1) {
    if (!s)
      s = loom__grad_reshape(ctx, t[8], loom_shape_dims(params), params->rank,
                             &dxs[0]);
  } else {
    int64_t bnor[4] = {b, n, o, r}, perm[4] = {0, 2, 1, 3};
    if (!s) s = loom__grad_reshape(ctx, t[8], bnor, 4, &t[9]);
    if (!s) s = loom__grad_transpose(ctx, t[9], perm, 4, &t[10]);
    if (!s) {
      s = loom__grad_reshape(ctx, t[10], loom_shape_dims(params), params->rank,
                             &dxs[0]);
    }
  }
  RELEASE(t);
  return s;
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__gradient_row_t kGradients[] = {
    {.op = "IdentityN", .fn = identity_n_grad},
    {.op = "FunctionInput", .fn = fan_out_grad},
    {.op = "FunctionOutput", .fn = fan_out_grad},
    {.op = "IfInput", .fn = fan_out_grad},
    {.op = "IfOutput", .fn = fan_out_grad},
    {.op = "CaseInput", .fn = fan_out_grad},
    {.op = "CaseOutput", .fn = fan_out_grad},
    {.op = "WhileInput", .fn = fan_out_grad},
    {.op = "WhileOutput", .fn = fan_out_grad},
    {.op = "ExpandDims", .fn = reshape_to_input},
    {.op = "Squeeze", .fn = reshape_to_input},
    {.op = "Transpose", .fn = transpose_grad, .inputs = USES(1)},
    // The axis is the last input; its index depends on N.
    {.op = "ConcatV2", .fn = concat_grad, .inputs = LOOM_GRADIENT_USES_ALL},
    {.op = "Concat",
     .fn = concat_grad,
     .data = "v1",
     .inputs = LOOM_GRADIENT_USES_ALL},
    {.op = "Pack", .fn = pack_grad},
    {.op = "ReverseV2", .fn = reverse_grad, .inputs = USES(1)},
    {.op = "Unpack", .fn = unpack_grad},
    {.op = "Split", .fn = split_grad, .inputs = USES(0)},
    {.op = "SplitV", .fn = split_v_grad, .inputs = USES(2)},
    {.op = "Slice", .fn = slice_grad, .inputs = USES(1)},
    {.op = "StridedSlice",
     .fn = strided_slice_grad,
     .inputs = USES(1) | USES(2) | USES(3)},
    {.op = "Tile", .fn = tile_grad},
    {.op = "Pad", .fn = pad_grad, .inputs = USES(1)},
    {.op = "PadV2", .fn = pad_grad, .inputs = USES(1)},
    {.op = "BroadcastTo", .fn = broadcast_to_grad},
    {.op = "Gather", .fn = gather_grad, .inputs = USES(1)},
    {.op = "GatherV2",
     .fn = gather_grad,
     .data = "v2",
     .inputs = USES(1) | USES(2)},
    {.op = "Fill", .fn = fill_grad},
};

// Constants, indices and index-valued ops (TensorFlow's NotDifferentiable).
static const char* const kNotDifferentiable[] = {"Const", "OneHot", "Where",
                                                 "Range", "InvertPermutation"};

loom_status_t loom__register_array_gradients(void) {
  return LOOM__REGISTER_GRADIENT_FAMILY(kGradients, kNotDifferentiable);
}
