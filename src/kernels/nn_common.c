// The sliding-window geometry of the neural-network family: attribute
// parsing and output sizes with TensorFlow's rules and messages
// (GetWindowedOutputSize, CheckValidPadding, the Conv2D / pooling
// parameter checks), shared by the shape functions and the kernels so
// both report the same error.

#include <string.h>

#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/nn_internal.h"
#include "loom/host_context.h"
#include "tensor/checked_size.h"

const loom__nn_loops_t* loom__nn_loops(void) {
  static const loom__nn_loops_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__nn_loops_baseline, &loom__nn_loops_avx2, &loom__nn_loops_avx512};
  return kTables[loom__isa_level()];
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

bool loom__nn_fully_known(const loom_shape_t* shape) {
  if (shape->rank < 0) return false;
  for (int32_t i = 0; i < shape->rank; ++i) {
    if (shape->dims[i] < 0) return false;
  }
  return true;
}

loom_shape_t loom__nn_unknown_image(void) {
  loom_shape_t shape = loom_shape_scalar();
  shape.rank = 4;
  for (int i = 0; i < 4; ++i) shape.dims[i] = LOOM_UNKNOWN_DIM;
  return shape;
}

bool loom__nn_attr_string_is(const loom_op_attrs_t* attrs, const char* name,
                             const char* text) {
  loom_attr_value_t value;
  size_t length = strlen(text);
  return loom_op_attrs_get(attrs, name, &value) &&
         value.kind == LOOM_ATTR_KIND_STRING && !value.is_list &&
         value.u.string.size == length &&
         memcmp(value.u.string.data, text, length) == 0;
}

// A list(int) attr: its length (capacity at most are stored), -1 when
// absent or of another kind.
static int64_t int_list(const loom_op_attrs_t* attrs, const char* name,
                        int64_t* values, int64_t capacity) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(attrs, name, &value) || !value.is_list) return -1;
  if (value.count == 0) return 0;
  if (value.kind != LOOM_ATTR_KIND_I64 && value.kind != LOOM_ATTR_KIND_I32) {
    return -1;
  }
  for (int64_t i = 0; i < value.count && i < capacity; ++i) {
    values[i] = value.kind == LOOM_ATTR_KIND_I64
                    ? ((const int64_t*)value.u.list)[i]
                    : ((const int32_t*)value.u.list)[i];
  }
  return value.count;
}

// data_format and padding (the op definitions restrict their values; a
// value they do not know is still reported here, naming it).
static loom_status_t format_and_padding(const loom_op_attrs_t* attrs,
                                        loom__nn_window_attrs_t* out) {
  loom_attr_value_t value;
  out->nchw = false;
  if (loom_op_attrs_get(attrs, "data_format", &value)) {
    if (loom__nn_attr_string_is(attrs, "data_format", "NCHW")) {
      out->nchw = true;
    } else if (!loom__nn_attr_string_is(attrs, "data_format", "NHWC")) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Invalid data format: data_format must be NHWC "
                              "or NCHW");
    }
  }
  if (loom__nn_attr_string_is(attrs, "padding", "SAME")) {
    out->padding = LOOM_NN_PADDING_SAME;
  } else if (loom__nn_attr_string_is(attrs, "padding", "VALID")) {
    out->padding = LOOM_NN_PADDING_VALID;
  } else if (loom__nn_attr_string_is(attrs, "padding", "EXPLICIT")) {
    out->padding = LOOM_NN_PADDING_EXPLICIT;
  } else {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Invalid padding: padding must be SAME, VALID or EXPLICIT");
  }
  return loom_ok_status();
}

// TensorFlow's CheckValidPadding.
static loom_status_t explicit_paddings(const loom_op_attrs_t* attrs,
                                       loom__nn_window_attrs_t* out) {
  int64_t values[16];
  int64_t count = int_list(attrs, "explicit_paddings", values, 16);
  if (count < 0) count = 0;
  memset(out->explicit_paddings, 0, sizeof(out->explicit_paddings));
  if (out->padding != LOOM_NN_PADDING_EXPLICIT) {
    if (count != 0) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "explicit_paddings attribute must be empty if "
                              "the padding attribute is not EXPLICIT");
    }
    return loom_ok_status();
  }
  if (count != 8) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "explicit_paddings attribute must contain 8 "
                            "values, but got: %lld",
                            (long long)count);
  }
  for (int i = 0; i < 8; ++i) {
    if (values[i] < 0) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "All elements of explicit_paddings must be nonnegative");
    }
    out->explicit_paddings[i] = values[i];
  }
  int batch = 0, depth = out->nchw ? 1 : 3;
  if (values[2 * batch] || values[2 * batch + 1] || values[2 * depth] ||
      values[2 * depth + 1]) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Nonzero explicit padding in the batch or depth "
                            "dimensions is not supported");
  }
  return loom_ok_status();
}

// A list(int) attr of exactly 4 values.
static loom_status_t four(const loom_op_attrs_t* attrs, const char* name,
                          const char* field, int64_t fallback,
                          int64_t* values) {
  int64_t count = int_list(attrs, name, values, 4);
  if (count < 0 && fallback > 0) {
    for (int i = 0; i < 4; ++i) values[i] = fallback;
    return loom_ok_status();
  }
  if (count != 4) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Sliding window %s field must specify 4 dimensions, got %lld", field,
        (long long)(count < 0 ? 0 : count));
  }
  return loom_ok_status();
}

loom_status_t loom__nn_conv_attrs(const char* op, const loom_op_attrs_t* attrs,
                                  loom__nn_window_attrs_t* out) {
  memset(out, 0, sizeof(*out));
  out->op = op;
  LOOM_RETURN_IF_ERROR(format_and_padding(attrs, out));
  LOOM_RETURN_IF_ERROR(four(attrs, "strides", "strides", 0, out->strides));
  LOOM_RETURN_IF_ERROR(
      four(attrs, "dilations", "dilations", 1, out->dilations));
  for (int i = 0; i < 4; ++i) out->ksize[i] = 1;
  int c = out->nchw ? 1 : 3, h = out->nchw ? 2 : 1, w = out->nchw ? 3 : 2;
  if (out->strides[0] != 1 || out->strides[c] != 1) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "Current implementation does not yet support "
                            "strides in the batch and depth dimensions.");
  }
  if (out->strides[h] <= 0 || out->strides[w] <= 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Row and column strides should be larger than 0.");
  }
  if (out->dilations[0] != 1 || out->dilations[c] != 1) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "Current implementation does not yet support "
                            "dilations in the batch and depth dimensions.");
  }
  if (out->dilations[h] <= 0 || out->dilations[w] <= 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Dilated rates should be larger than 0.");
  }
  return explicit_paddings(attrs, out);
}

loom_status_t loom__nn_pool_attrs(const char* op, const loom_op_attrs_t* attrs,
                                  loom__nn_window_attrs_t* out) {
  memset(out, 0, sizeof(*out));
  out->op = op;
  out->pooling = true;
  LOOM_RETURN_IF_ERROR(format_and_padding(attrs, out));
  LOOM_RETURN_IF_ERROR(four(attrs, "ksize", "ksize", 0, out->ksize));
  LOOM_RETURN_IF_ERROR(four(attrs, "strides", "stride", 0, out->strides));
  for (int i = 0; i < 4; ++i) out->dilations[i] = 1;
  for (int i = 0; i < 4; ++i) {
    if (out->ksize[i] <= 0) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Sliding window ksize for dimension %d was zero "
                              "or negative.",
                              i);
    }
    if (out->strides[i] <= 0) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Sliding window stride for dimension %d was "
                              "zero or negative.",
                              i);
    }
  }
  int c = out->nchw ? 1 : 3;
  if (out->ksize[0] != 1 || out->strides[0] != 1) {
    return loom_make_status(
        LOOM_STATUS_UNIMPLEMENTED,
        "Pooling is not yet supported on the batch dimension.");
  }
  if (out->ksize[c] != 1 || out->strides[c] != 1) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "Pooling across depth is not supported: ksize "
                            "and strides must be 1 in the depth dimension.");
  }
  return explicit_paddings(attrs, out);
}

//===----------------------------------------------------------------------===//
// Geometry
//===----------------------------------------------------------------------===//

// TensorFlow's GetWindowedOutputSizeVerbose (dilated), through
// loom__window_output_size: an extent, a padding or a SAME window's
// reach that overflows int64 is an error naming the argument at fault;
// a VALID window larger than its input is TensorFlow's negative size.
// `dim` names the spatial dimension in messages.
static loom_status_t windowed_size(const loom__nn_window_attrs_t* attrs,
                                   const char* dim, int64_t input,
                                   int64_t filter, int64_t dilation,
                                   int64_t stride, int64_t before,
                                   int64_t after, int64_t* out_size,
                                   int64_t* out_before) {
  static const loom_window_padding_t kPadding[] = {
      [LOOM_NN_PADDING_VALID] = LOOM_WINDOW_VALID,
      [LOOM_NN_PADDING_SAME] = LOOM_WINDOW_SAME,
      [LOOM_NN_PADDING_EXPLICIT] = LOOM_WINDOW_EXPLICIT};
  bool pool = attrs->pooling;
  const char* op = attrs->op ? attrs->op : (pool ? "pooling" : "convolution");
  int64_t effective;
  if (!loom__window_extent(filter, dilation, &effective)) {
    if (filter < 1) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: %s must not have zero elements (i.e. all "
                              "dimensions must be non-zero), got %lld %s",
                              op, pool ? "ksize" : "filter", (long long)filter,
                              dim);
    }
    return loom__size_overflow_error(
        op, pool ? "ksize" : (dilation > 1 ? "dilations" : "filter"),
        "(%s: window %lld, dilation %lld, extent (window - 1) * dilation + 1)",
        dim, (long long)filter, (long long)dilation);
  }
  loom_window_padding_t padding = kPadding[attrs->padding];
  if (padding == LOOM_WINDOW_EXPLICIT) {
    int64_t span;
    if (!loom__size_add(input, before, &span) ||
        !loom__size_add(span, after, &span)) {
      return loom__size_overflow_error(
          op, "explicit_paddings", "(%s: input %lld, padding %lld + %lld)", dim,
          (long long)input, (long long)before, (long long)after);
    }
  }
  if (loom__window_output_size(input, filter, dilation, stride, padding, before,
                               after, out_size, out_before)) {
    return loom_ok_status();
  }
  if (padding == LOOM_WINDOW_SAME) {
    // The last window, padded to end at the input's end, reaches past
    // int64.
    return loom__size_overflow_error(
        op, pool ? "ksize" : (dilation > 1 ? "dilations" : "filter"),
        "(%s: input %lld, effective window %lld, stride %lld, SAME padding)",
        dim, (long long)input, (long long)effective, (long long)stride);
  }
  // The window does not fit: TensorFlow's (span + stride) / stride, with
  // span = padded input - extent < 0 (the padded sum fits: checked above).
  int64_t padded =
      padding == LOOM_WINDOW_EXPLICIT ? input + before + after : input;
  int64_t span = padded - effective;
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "%s: Computed output size would be negative: %lld "
                          "[input_size: %lld, effective_filter_size: %lld, "
                          "stride: %lld]",
                          op, (long long)((span + stride) / stride),
                          (long long)input, (long long)effective,
                          (long long)stride);
}

static loom_status_t rank4(const loom_shape_t* shape, const char* what) {
  if (shape->rank == 4) return loom_ok_status();
  char text[LOOM_SHAPE_TEXT_SIZE];
  loom__format_dims(shape, text);
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "%s must be 4-dimensional, got shape %s", what, text);
}

// Output sizes and padding of a geometry whose input, window, strides and
// dilations are set.
static loom_status_t spatial(const loom__nn_window_attrs_t* attrs,
                             loom__nn_geometry_t* g) {
  int h = attrs->nchw ? 2 : 1, w = attrs->nchw ? 3 : 2;
  LOOM_RETURN_IF_ERROR(windowed_size(
      attrs, "rows", g->in_h, g->k_h, g->dil_h, g->stride_h,
      attrs->explicit_paddings[2 * h], attrs->explicit_paddings[2 * h + 1],
      &g->out_h, &g->pad_top));
  LOOM_RETURN_IF_ERROR(windowed_size(
      attrs, "columns", g->in_w, g->k_w, g->dil_w, g->stride_w,
      attrs->explicit_paddings[2 * w], attrs->explicit_paddings[2 * w + 1],
      &g->out_w, &g->pad_left));
  // The output image must be a shape: its element count fits int64.
  int64_t dims[4] = {g->batch, g->out_h, g->out_w, g->out_c}, count;
  if (!loom__size_product(dims, 4, &count)) {
    char text[96];
    return loom__size_overflow_error(
        attrs->op ? attrs->op : "convolution", "output",
        "%s (batch, rows, columns, depth)",
        loom__format_int64s(dims, 4, text, sizeof(text)));
  }
  return loom_ok_status();
}

// A shape the geometry reads (the backprops' input_sizes or filter_sizes,
// AvgPoolGrad's orig_input_shape) must count its elements in int64.
static loom_status_t countable(const loom__nn_window_attrs_t* attrs,
                               const loom_shape_t* shape, const char* what) {
  int64_t count;
  if (loom__size_product(shape->dims, shape->rank, &count)) {
    return loom_ok_status();
  }
  char text[160];
  return loom__size_overflow_error(
      attrs->op ? attrs->op : (attrs->pooling ? "pooling" : "convolution"),
      what, "%s",
      loom__format_int64s(shape->dims, shape->rank, text, sizeof(text)));
}

static void read_image(const loom__nn_window_attrs_t* attrs,
                       const loom_shape_t* input, loom__nn_geometry_t* g) {
  g->nchw = attrs->nchw;
  g->batch = input->dims[0];
  g->in_c = input->dims[attrs->nchw ? 1 : 3];
  g->in_h = input->dims[attrs->nchw ? 2 : 1];
  g->in_w = input->dims[attrs->nchw ? 3 : 2];
  int h = attrs->nchw ? 2 : 1, w = attrs->nchw ? 3 : 2;
  g->stride_h = attrs->strides[h];
  g->stride_w = attrs->strides[w];
  g->dil_h = attrs->dilations[h];
  g->dil_w = attrs->dilations[w];
}

loom_status_t loom__nn_conv_geometry(const loom__nn_window_attrs_t* attrs,
                                     const loom_shape_t* input,
                                     const loom_shape_t* filter,
                                     loom__nn_geometry_t* g) {
  LOOM_RETURN_IF_ERROR(rank4(input, "input"));
  LOOM_RETURN_IF_ERROR(rank4(filter, "filter"));
  LOOM_RETURN_IF_ERROR(countable(attrs, input, "input"));
  LOOM_RETURN_IF_ERROR(countable(attrs, filter, "filter"));
  memset(g, 0, sizeof(*g));
  read_image(attrs, input, g);
  g->k_h = filter->dims[0];
  g->k_w = filter->dims[1];
  g->filter_c = filter->dims[2];
  g->out_c = filter->dims[3];
  char ti[LOOM_SHAPE_TEXT_SIZE], tf[LOOM_SHAPE_TEXT_SIZE];
  if (g->filter_c <= 0 || g->in_c % g->filter_c != 0) {
    loom__format_dims(input, ti);
    loom__format_dims(filter, tf);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "input depth must be evenly divisible by filter "
                            "depth: %lld vs %lld (input %s, filter %s)",
                            (long long)g->in_c, (long long)g->filter_c, ti, tf);
  }
  g->groups = g->in_c / g->filter_c;
  if (g->groups > 1 && g->out_c % g->groups != 0) {
    loom__format_dims(input, ti);
    loom__format_dims(filter, tf);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "output depth must be evenly divisible by number "
                            "of groups: %lld vs %lld (input %s, filter %s)",
                            (long long)g->out_c, (long long)g->groups, ti, tf);
  }
  if (g->groups == 0) g->groups = 1;  // in_c == 0: no groups to speak of
  return spatial(attrs, g);
}

loom_status_t loom__nn_pool_geometry(const loom__nn_window_attrs_t* attrs,
                                     const loom_shape_t* input,
                                     loom__nn_geometry_t* g) {
  LOOM_RETURN_IF_ERROR(rank4(input, "input"));
  LOOM_RETURN_IF_ERROR(countable(attrs, input, "input"));
  memset(g, 0, sizeof(*g));
  read_image(attrs, input, g);
  int h = attrs->nchw ? 2 : 1, w = attrs->nchw ? 3 : 2;
  g->k_h = attrs->ksize[h];
  g->k_w = attrs->ksize[w];
  g->filter_c = g->out_c = g->in_c;
  g->groups = 1;
  return spatial(attrs, g);
}

loom_shape_t loom__nn_image_shape(bool nchw, int64_t batch, int64_t h,
                                  int64_t w, int64_t c) {
  loom_shape_t shape = loom_shape_scalar();
  shape.rank = 4;
  shape.dims[0] = batch;
  shape.dims[1] = nchw ? c : h;
  shape.dims[2] = nchw ? h : w;
  shape.dims[3] = nchw ? w : c;
  return shape;
}

loom_status_t loom__nn_shape_from_tensor(const loom_tensor_t* tensor,
                                         const char* what,
                                         loom_shape_t* out_shape) {
  const loom_shape_t* shape = loom_tensor_shape(tensor);
  loom_dtype_t dtype = loom_tensor_dtype(tensor);
  if (shape->rank != 1 || shape->dims[0] != 4 ||
      (dtype != LOOM_DTYPE_INT32 && dtype != LOOM_DTYPE_INT64)) {
    char text[LOOM_SHAPE_TEXT_SIZE];
    loom__format_dims(shape, text);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s must be a 1-D tensor of 4 integers, got "
                            "shape %s",
                            what, text);
  }
  int64_t dims[4];
  for (int i = 0; i < 4; ++i) {
    dims[i] = dtype == LOOM_DTYPE_INT32
                  ? ((const int32_t*)loom_tensor_data(tensor))[i]
                  : ((const int64_t*)loom_tensor_data(tensor))[i];
    if (dims[i] < 0) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s must not hold negative sizes, got %lld at "
                              "index %d",
                              what, (long long)dims[i], i);
    }
  }
  return loom_shape_initialize(out_shape, dims, 4);
}

//===----------------------------------------------------------------------===//
// Scratch, threads and 16-bit floats
//===----------------------------------------------------------------------===//

loom_status_t loom__nn_scratch(loom_kernel_context_t* ctx, const char* what,
                               int64_t count, int64_t elements,
                               size_t element_size, char** out,
                               size_t* out_stride) {
  size_t bytes = 0, total = 0;
  int64_t blocks = count > 0 ? count : 1, stride = 0;
  bool fits = loom__size_bytes(elements, element_size, &bytes) &&
              loom__size_add((int64_t)bytes, 63, &stride);
  stride = stride < 64 ? 64 : stride / 64 * 64;
  if (!fits || !loom__size_bytes(blocks, (size_t)stride, &total)) {
    return loom__size_overflow_error(
        loom_kernel_context_op(ctx)->name, what,
        "(%lld blocks of %lld elements of %zu bytes)", (long long)count,
        (long long)elements, element_size);
  }
  void* block = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc_aligned(
      loom_kernel_context_allocator(ctx), total, 64, &block));
  *out = block;
  if (out_stride) *out_stride = (size_t)stride;
  return loom_ok_status();
}

loom_thread_pool_t* loom__nn_pool(loom_kernel_context_t* ctx) {
  return loom_host_context_thread_pool(loom_kernel_context_host(ctx));
}

int64_t loom__nn_concurrency(loom_kernel_context_t* ctx) {
  return (int64_t)loom_thread_pool_num_threads(loom__nn_pool(ctx)) + 1;
}

void loom__nn_widen(loom_dtype_t dtype, const void* in, float* out, int64_t n) {
  const loom__matmul_loops_t* loops = loom__matmul_loops();
  if (dtype == LOOM_DTYPE_HALF) {
    loops->half_to_float(in, out, n);
  } else {
    loops->bfloat16_to_float(in, out, n);
  }
}

void loom__nn_narrow(loom_dtype_t dtype, const float* in, void* out,
                     int64_t n) {
  const loom__matmul_loops_t* loops = loom__matmul_loops();
  if (dtype == LOOM_DTYPE_HALF) {
    loops->float_to_half(in, out, n);
  } else {
    loops->float_to_bfloat16(in, out, n);
  }
}
