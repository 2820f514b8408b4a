// Sizes from user values that overflow int64 in the NN and math kernels
// (convolutions, pooling, batch normalisation, matrix products,
// reductions, softmax, random ops, CheckNumerics): each is an error that
// names the op, the argument and the values, or, where TensorFlow gives
// one, the right result; never a wrapped size. Zero-element tensors with
// huge dimensions are legal and must not overflow on the way.

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "test_support.h"

#define P62 ((int64_t)1 << 62)
#define P40 ((int64_t)1 << 40)

static loom_context_t* g_context;

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_context_create(NULL, &g_context));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_context_destroy(g_context);
  return 0;
}

// A tensor of `dtype` and shape dims[0, rank), its elements from `data`
// (NULL: zeros); the shape may hold huge dimensions when one is 0.
static loom_tensor_handle_t* tensor(loom_dtype_t dtype, const int64_t* dims,
                                    int rank, const void* data) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* t = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_create_dense(loom_allocator_default(), dtype, &shape, &t));
  size_t bytes = (size_t)loom_tensor_num_elements(t) * loom_dtype_size(dtype);
  if (bytes) {
    if (data) {
      memcpy(loom_tensor_data(t), data, bytes);
    } else {
      memset(loom_tensor_data(t), 0, bytes);
    }
  }
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_context, t, &handle));
  loom_tensor_release(t);
  return handle;
}

static loom_tensor_handle_t* floats(const int64_t* dims, int rank,
                                    const float* data) {
  return tensor(LOOM_DTYPE_FLOAT, dims, rank, data);
}

static loom_tensor_handle_t* int64s(const int64_t* values, int64_t count) {
  return tensor(LOOM_DTYPE_INT64, &count, 1, values);
}

static loom_tensor_handle_t* int32s(const int32_t* values, int64_t count) {
  return tensor(LOOM_DTYPE_INT32, &count, 1, values);
}

static loom_eager_op_t* new_op(const char* name) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, name, &op));
  return op;
}

static void set_ints(loom_eager_op_t* op, const char* name, int64_t a,
                     int64_t b, int64_t c, int64_t d) {
  int64_t values[4] = {a, b, c, d};
  LOOM_ASSERT_OK(loom_op_attrs_set_list(loom_eager_op_attrs(op), name,
                                        LOOM_ATTR_KIND_I64, values, 4));
}

static void set_string(loom_eager_op_t* op, const char* name,
                       const char* value) {
  LOOM_ASSERT_OK(loom_op_attrs_set_string(loom_eager_op_attrs(op), name, value,
                                          strlen(value)));
}

// Adds the inputs (released here) and runs op (destroyed here); result 0
// into *out (a new reference) when out is not NULL.
static loom_status_t run(loom_eager_op_t* op, loom_tensor_handle_t** inputs,
                         int count, int outputs, loom_tensor_t** out) {
  for (int i = 0; i < count; ++i) {
    LOOM_ASSERT_OK(loom_eager_op_add_input(op, inputs[i]));
    loom_tensor_handle_release(inputs[i]);
  }
  loom_tensor_handle_t* results[8] = {0};
  int32_t produced = 0;
  loom_status_t status = loom_eager_op_execute(op, results, outputs, &produced);
  loom_eager_op_destroy(op);
  if (!status && out) {
    LOOM_ASSERT_OK(loom_context_resolve(g_context, results[0], out));
  }
  for (int i = 0; i < produced; ++i) loom_tensor_handle_release(results[i]);
  return status;
}

// Checks that status has `code` and that its message holds every one of
// the NULL-ended substrings.
static void expect_error(loom_status_t status, loom_status_code_t code, ...) {
  assert_non_null(status);
  char text[1024];
  loom_status_format(status, text, sizeof(text));
  if (loom_status_code(status) != code) {
    loom_status_free(status);
    fail_msg("expected %s, got: %s", loom_status_code_name(code), text);
  }
  const char* message = loom_status_message(status);
  va_list args;
  va_start(args, code);
  for (const char* want; (want = va_arg(args, const char*)) != NULL;) {
    if (!strstr(message, want)) {
      va_end(args);
      loom_status_free(status);
      fail_msg("message lacks \"%s\": %s", want, text);
    }
  }
  va_end(args);
  loom_status_free(status);
}

static void expect_shape(const loom_tensor_t* t, const int64_t* dims,
                         int rank) {
  const loom_shape_t* shape = loom_tensor_shape(t);
  assert_int_equal(shape->rank, rank);
  for (int i = 0; i < rank; ++i) assert_int_equal(shape->dims[i], dims[i]);
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

static loom_eager_op_t* conv_op(const char* name, const char* padding,
                                int64_t stride, int64_t dilation) {
  loom_eager_op_t* op = new_op(name);
  LOOM_ASSERT_OK(
      loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "T", LOOM_DTYPE_FLOAT));
  set_ints(op, "strides", 1, stride, stride, 1);
  set_ints(op, "dilations", 1, dilation, dilation, 1);
  set_string(op, "padding", padding);
  return op;
}

static void conv2d_dilation_that_overflows_is_an_error(void** state) {
  (void)state;
  const char* paddings[2] = {"VALID", "SAME"};
  for (int p = 0; p < 2; ++p) {
    int64_t in_dims[4] = {1, 5, 5, 1}, f_dims[4] = {3, 3, 1, 1};
    loom_tensor_handle_t* inputs[2] = {floats(in_dims, 4, NULL),
                                       floats(f_dims, 4, NULL)};
    expect_error(
        run(conv_op("Conv2D", paddings[p], 1, P62), inputs, 2, 1, NULL),
        LOOM_STATUS_INVALID_ARGUMENT, "Conv2D", "dilations",
        "4611686018427387904", NULL);
  }
}

static void conv2d_nchw_dilation_that_overflows_is_an_error(void** state) {
  (void)state;
  int64_t in_dims[4] = {1, 1, 5, 5}, f_dims[4] = {3, 3, 1, 1};
  loom_tensor_handle_t* inputs[2] = {floats(in_dims, 4, NULL),
                                     floats(f_dims, 4, NULL)};
  loom_eager_op_t* op = conv_op("Conv2D", "SAME", 1, 1);
  set_ints(op, "strides", 1, 1, 1, 1);
  set_ints(op, "dilations", 1, 1, 2, INT64_MAX);
  set_string(op, "data_format", "NCHW");
  expect_error(run(op, inputs, 2, 1, NULL), LOOM_STATUS_INVALID_ARGUMENT,
               "Conv2D", "dilations", "columns", "9223372036854775807", NULL);
}

static void conv2d_empty_filter_is_an_error(void** state) {
  (void)state;
  // TensorFlow: "filter must not have zero elements".
  int64_t in_dims[4] = {1, 5, 5, 1}, f_dims[4] = {0, 3, 1, 1};
  loom_tensor_handle_t* inputs[2] = {floats(in_dims, 4, NULL),
                                     floats(f_dims, 4, NULL)};
  expect_error(run(conv_op("Conv2D", "SAME", 1, 1), inputs, 2, 1, NULL),
               LOOM_STATUS_INVALID_ARGUMENT, "Conv2D",
               "filter must not have zero elements", NULL);
}

static void conv2d_huge_stride_gives_one_window(void** state) {
  (void)state;
  // One window for VALID (ceil((5 - 3 + 1) / s) = 1) and SAME
  // (ceil(5 / s) = 1, padding max(0 * s + 3 - 5, 0) = 0): both at (0, 0).
  // numpy: arange(25).reshape(5, 5)[0:3, 0:3].sum() = 54.
  float x[25];
  for (int i = 0; i < 25; ++i) x[i] = (float)i;
  float f[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  const char* paddings[2] = {"VALID", "SAME"};
  const float want[2] = {54.0f, 54.0f};
  for (int p = 0; p < 2; ++p) {
    int64_t in_dims[4] = {1, 5, 5, 1}, f_dims[4] = {3, 3, 1, 1};
    loom_tensor_handle_t* inputs[2] = {floats(in_dims, 4, x),
                                       floats(f_dims, 4, f)};
    loom_tensor_t* out = NULL;
    LOOM_ASSERT_OK(
        run(conv_op("Conv2D", paddings[p], INT64_MAX, 1), inputs, 2, 1, &out));
    int64_t dims[4] = {1, 1, 1, 1};
    expect_shape(out, dims, 4);
    assert_float_equal(((const float*)loom_tensor_data(out))[0], want[p], 0);
    loom_tensor_release(out);
  }
}

static void conv2d_explicit_padding_that_overflows_is_an_error(void** state) {
  (void)state;
  int64_t in_dims[4] = {1, 5, 5, 1}, f_dims[4] = {3, 3, 1, 1};
  loom_tensor_handle_t* inputs[2] = {floats(in_dims, 4, NULL),
                                     floats(f_dims, 4, NULL)};
  loom_eager_op_t* op = conv_op("Conv2D", "EXPLICIT", 1, 1);
  int64_t pads[8] = {0, 0, INT64_MAX, INT64_MAX, 0, 0, 0, 0};
  LOOM_ASSERT_OK(loom_op_attrs_set_list(loom_eager_op_attrs(op),
                                        "explicit_paddings", LOOM_ATTR_KIND_I64,
                                        pads, 8));
  expect_error(run(op, inputs, 2, 1, NULL), LOOM_STATUS_INVALID_ARGUMENT,
               "Conv2D", "explicit_paddings", "9223372036854775807", NULL);
}

static void conv2d_output_that_overflows_is_an_error(void** state) {
  (void)state;
  // [2^62, 0, 0, 1] by a [1, 1, 1, 4] filter: the output [2^62, 0, 0, 4]
  // is empty and fine. An input [2^62, 1, 1, 0] with a filter
  // [1, 1, 1, 8] has an output [2^62, 1, 1, 8] of 2^65 elements.
  int64_t in_dims[4] = {P62, 0, 0, 1}, f_dims[4] = {1, 1, 1, 4};
  loom_tensor_handle_t* inputs[2] = {floats(in_dims, 4, NULL),
                                     floats(f_dims, 4, NULL)};
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(run(conv_op("Conv2D", "VALID", 1, 1), inputs, 2, 1, &out));
  int64_t want[4] = {P62, 0, 0, 4};
  expect_shape(out, want, 4);
  loom_tensor_release(out);

  int64_t in2[4] = {P62, 1, 1, 0}, f2[4] = {1, 1, 1, 8};
  loom_tensor_handle_t* inputs2[2] = {floats(in2, 4, NULL),
                                      floats(f2, 4, NULL)};
  expect_error(run(conv_op("Conv2D", "VALID", 1, 1), inputs2, 2, 1, NULL),
               LOOM_STATUS_INVALID_ARGUMENT, "Conv2D", "output",
               "4611686018427387904", NULL);
}

static void conv2d_backprop_input_sizes_that_overflow_are_an_error(
    void** state) {
  (void)state;
  int32_t sizes[4] = {1, 5, 4, 1};
  int64_t f_dims[4] = {3, 3, 1, 1}, dy_ok[4] = {1, 3, 2, 1};
  loom_tensor_handle_t* inputs[3] = {int32s(sizes, 4), floats(f_dims, 4, NULL),
                                     floats(dy_ok, 4, NULL)};
  expect_error(
      run(conv_op("Conv2DBackpropInput", "VALID", 1, P62), inputs, 3, 1, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "Conv2DBackpropInput", "dilations",
      "4611686018427387904", NULL);

  int64_t x_dims[4] = {1, 5, 4, 1};
  int32_t fsizes[4] = {3, 3, 1, 1};
  loom_tensor_handle_t* inputs2[3] = {
      floats(x_dims, 4, NULL), int32s(fsizes, 4), floats(dy_ok, 4, NULL)};
  expect_error(
      run(conv_op("Conv2DBackpropFilter", "SAME", 1, P62), inputs2, 3, 1, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "Conv2DBackpropFilter", "dilations",
      "4611686018427387904", NULL);

  // A filter_sizes of (2^31 - 1)^3 elements: more than int64 holds.
  int32_t huge[4] = {INT32_MAX, INT32_MAX, INT32_MAX, 1};
  loom_tensor_handle_t* inputs3[3] = {floats(x_dims, 4, NULL), int32s(huge, 4),
                                      floats(dy_ok, 4, NULL)};
  expect_error(
      run(conv_op("Conv2DBackpropFilter", "VALID", 1, 1), inputs3, 3, 1, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "Conv2DBackpropFilter", "filter",
      "2147483647", NULL);
  // And an input_sizes of as many.
  int32_t huge_x[4] = {INT32_MAX, INT32_MAX, INT32_MAX, 1};
  loom_tensor_handle_t* inputs4[3] = {
      int32s(huge_x, 4), floats(f_dims, 4, NULL), floats(dy_ok, 4, NULL)};
  expect_error(
      run(conv_op("Conv2DBackpropInput", "VALID", 1, 1), inputs4, 3, 1, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "Conv2DBackpropInput", "input",
      "2147483647", NULL);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

static loom_eager_op_t* pool_op(const char* name, const char* padding,
                                int64_t ksize, int64_t stride) {
  loom_eager_op_t* op = new_op(name);
  LOOM_ASSERT_OK(
      loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "T", LOOM_DTYPE_FLOAT));
  set_ints(op, "ksize", 1, ksize, ksize, 1);
  set_ints(op, "strides", 1, stride, stride, 1);
  set_string(op, "padding", padding);
  return op;
}

static void avg_pool_with_stride_int64_max_has_one_window(void** state) {
  (void)state;
  // numpy: arange(25).reshape(5, 5); VALID: ceil((5 - 2 + 1) / s) = 1
  // window at (0, 0): mean(x[0:2, 0:2]) = 3; SAME: ceil(5 / s) = 1,
  // padding max((1 - 1) * s + 2 - 5, 0) = 0: the same window.
  float x[25];
  for (int i = 0; i < 25; ++i) x[i] = (float)i;
  const char* paddings[2] = {"VALID", "SAME"};
  const char* ops[2] = {"AvgPool", "MaxPool"};
  const float want[2] = {3.0f, 6.0f};
  for (int o = 0; o < 2; ++o) {
    for (int p = 0; p < 2; ++p) {
      int64_t dims[4] = {1, 5, 5, 1};
      loom_tensor_handle_t* input = floats(dims, 4, x);
      loom_tensor_t* out = NULL;
      LOOM_ASSERT_OK(
          run(pool_op(ops[o], paddings[p], 2, INT64_MAX), &input, 1, 1, &out));
      int64_t want_dims[4] = {1, 1, 1, 1};
      expect_shape(out, want_dims, 4);
      assert_float_equal(((const float*)loom_tensor_data(out))[0], want[o], 0);
      loom_tensor_release(out);
    }
  }
}

static void pool_window_larger_than_the_input(void** state) {
  (void)state;
  // VALID with a window of INT64_MAX over 5 elements does not fit:
  // TensorFlow's "Computed output size would be negative".
  int64_t dims[4] = {1, 5, 5, 1};
  loom_tensor_handle_t* input = floats(dims, 4, NULL);
  expect_error(
      run(pool_op("MaxPool", "VALID", INT64_MAX, 1), &input, 1, 1, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "MaxPool", "9223372036854775807", NULL);
  // SAME with that window: the padding it needs overflows.
  input = floats(dims, 4, NULL);
  expect_error(
      run(pool_op("AvgPool", "SAME", INT64_MAX, 2), &input, 1, 1, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "AvgPool", "ksize", "9223372036854775807",
      NULL);
}

static void max_pool_explicit_padding_that_overflows_is_an_error(void** state) {
  (void)state;
  int64_t dims[4] = {1, 5, 5, 1};
  loom_tensor_handle_t* input = floats(dims, 4, NULL);
  loom_eager_op_t* op = pool_op("MaxPool", "EXPLICIT", 2, 1);
  int64_t pads[8] = {0, 0, 1, 1, 3, INT64_MAX - 7, 0, 0};
  LOOM_ASSERT_OK(loom_op_attrs_set_list(loom_eager_op_attrs(op),
                                        "explicit_paddings", LOOM_ATTR_KIND_I64,
                                        pads, 8));
  expect_error(run(op, &input, 1, 1, NULL), LOOM_STATUS_INVALID_ARGUMENT,
               "MaxPool", "explicit_paddings", "columns", "9223372036854775800",
               NULL);
}

static void nchw_pools_with_stride_int64_max(void** state) {
  (void)state;
  // Two planes of arange(50).reshape(2, 5, 5): the 3x3 windows at (0, 0)
  // (numpy: max 12 and 37, mean 6 and 31).
  float x[50];
  for (int i = 0; i < 50; ++i) x[i] = (float)i;
  const char* ops[2] = {"MaxPool", "AvgPool"};
  const float want[2][2] = {{12.0f, 37.0f}, {6.0f, 31.0f}};
  for (int o = 0; o < 2; ++o) {
    int64_t dims[4] = {1, 2, 5, 5};
    loom_tensor_handle_t* input = floats(dims, 4, x);
    loom_eager_op_t* op = pool_op(ops[o], "SAME", 1, 1);
    set_ints(op, "ksize", 1, 1, 3, 3);
    set_ints(op, "strides", 1, 1, INT64_MAX, INT64_MAX);
    set_string(op, "data_format", "NCHW");
    loom_tensor_t* out = NULL;
    LOOM_ASSERT_OK(run(op, &input, 1, 1, &out));
    int64_t want_dims[4] = {1, 2, 1, 1};
    expect_shape(out, want_dims, 4);
    const float* y = loom_tensor_data(out);
    assert_float_equal(y[0], want[o][0], 0);
    assert_float_equal(y[1], want[o][1], 0);
    loom_tensor_release(out);
  }
}

static void pool_over_huge_empty_batches(void** state) {
  (void)state;
  int64_t dims[4] = {P62, 4, 4, 0};
  const char* ops[2] = {"AvgPool", "MaxPool"};
  for (int o = 0; o < 2; ++o) {
    loom_tensor_handle_t* input = floats(dims, 4, NULL);
    loom_tensor_t* out = NULL;
    LOOM_ASSERT_OK(run(pool_op(ops[o], "VALID", 2, 2), &input, 1, 1, &out));
    int64_t want[4] = {P62, 2, 2, 0};
    expect_shape(out, want, 4);
    loom_tensor_release(out);
  }
}

static void pool_grads_with_huge_values(void** state) {
  (void)state;
  float x[25];
  for (int i = 0; i < 25; ++i) x[i] = (float)i;
  // AvgPoolGrad: orig_input_shape [1, 5, 5, 1], one window of stride
  // INT64_MAX: the gradient 4 spreads as 1 over x[0:2, 0:2] (numpy).
  int32_t orig[4] = {1, 5, 5, 1};
  int64_t g_dims[4] = {1, 1, 1, 1};
  float g = 4.0f;
  loom_tensor_handle_t* inputs[2] = {int32s(orig, 4), floats(g_dims, 4, &g)};
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(
      run(pool_op("AvgPoolGrad", "VALID", 2, INT64_MAX), inputs, 2, 1, &out));
  const float* dx = loom_tensor_data(out);
  for (int i = 0; i < 25; ++i) {
    int r = i / 5, c = i % 5;
    assert_float_equal(dx[i], r < 2 && c < 2 ? 1.0f : 0.0f, 0);
  }
  loom_tensor_release(out);

  // MaxPoolGrad: the gradient goes to the window's maximum, x[1][1].
  int64_t x_dims[4] = {1, 5, 5, 1};
  loom_tensor_handle_t* inputs2[3] = {
      floats(x_dims, 4, x), floats(g_dims, 4, &g), floats(g_dims, 4, &g)};
  LOOM_ASSERT_OK(
      run(pool_op("MaxPoolGrad", "SAME", 2, INT64_MAX), inputs2, 3, 1, &out));
  dx = loom_tensor_data(out);
  for (int i = 0; i < 25; ++i) assert_float_equal(dx[i], i == 6 ? 4.0f : 0, 0);
  loom_tensor_release(out);

  // MaxPoolGradGrad: the output takes grad (shaped like x) at the
  // window's maximum, x[1][1]: grad = x gives 6.
  loom_tensor_handle_t* inputs4[3] = {
      floats(x_dims, 4, x), floats(g_dims, 4, &g), floats(x_dims, 4, x)};
  LOOM_ASSERT_OK(run(pool_op("MaxPoolGradGrad", "VALID", 2, INT64_MAX), inputs4,
                     3, 1, &out));
  expect_shape(out, g_dims, 4);
  assert_float_equal(((const float*)loom_tensor_data(out))[0], 6.0f, 0);
  loom_tensor_release(out);

  // AvgPoolGrad with an orig_input_shape of (2^31 - 1)^3 elements: its
  // size overflows.
  int32_t huge[4] = {INT32_MAX, INT32_MAX, INT32_MAX, 1};
  loom_tensor_handle_t* inputs3[2] = {int32s(huge, 4), floats(g_dims, 4, &g)};
  loom_eager_op_t* op = pool_op("AvgPoolGrad", "VALID", 1, INT64_MAX);
  expect_error(run(op, inputs3, 2, 1, NULL), LOOM_STATUS_INVALID_ARGUMENT,
               "AvgPoolGrad", "input", "2147483647", NULL);
}

//===----------------------------------------------------------------------===//
// Batch normalisation
//===----------------------------------------------------------------------===//

static void fused_batch_norm_over_huge_empty_batches(void** state) {
  (void)state;
  int64_t dims[4] = {P62, 8, 0, 2}, c = 2;
  float ones[2] = {1, 1};
  loom_tensor_handle_t* inputs[5] = {floats(dims, 4, NULL), floats(&c, 1, ones),
                                     floats(&c, 1, NULL), floats(&c, 1, NULL),
                                     floats(&c, 1, ones)};
  loom_eager_op_t* op = new_op("FusedBatchNormV3");
  LOOM_ASSERT_OK(
      loom_op_attrs_set_bool(loom_eager_op_attrs(op), "is_training", true));
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(run(op, inputs, 5, 6, &out));
  expect_shape(out, dims, 4);
  loom_tensor_release(out);
}

static void fused_batch_norm_without_channels(void** state) {
  (void)state;
  // [2^62, 8, 1, 0]: no channels; the dims before them multiply past int64.
  int64_t dims[4] = {P62, 8, 1, 0}, c = 0;
  loom_tensor_handle_t* inputs[5] = {floats(dims, 4, NULL), floats(&c, 1, NULL),
                                     floats(&c, 1, NULL), floats(&c, 1, NULL),
                                     floats(&c, 1, NULL)};
  loom_eager_op_t* op = new_op("FusedBatchNormV3");
  LOOM_ASSERT_OK(
      loom_op_attrs_set_bool(loom_eager_op_attrs(op), "is_training", true));
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(run(op, inputs, 5, 6, &out));
  expect_shape(out, dims, 4);
  loom_tensor_release(out);
  loom_tensor_handle_t* grads[6] = {
      floats(dims, 4, NULL), floats(dims, 4, NULL), floats(&c, 1, NULL),
      floats(&c, 1, NULL),   floats(&c, 1, NULL),   floats(&c, 1, NULL)};
  LOOM_ASSERT_OK(run(new_op("FusedBatchNormGradV3"), grads, 6, 5, &out));
  expect_shape(out, dims, 4);
  loom_tensor_release(out);
}

static void fused_batch_norm_grad_over_huge_empty_batches(void** state) {
  (void)state;
  int64_t dims[4] = {P62, 8, 0, 2}, c = 2;
  float ones[2] = {1, 1};
  loom_tensor_handle_t* inputs[6] = {
      floats(dims, 4, NULL), floats(dims, 4, NULL), floats(&c, 1, ones),
      floats(&c, 1, NULL),   floats(&c, 1, ones),   floats(&c, 1, NULL)};
  loom_eager_op_t* op = new_op("FusedBatchNormGradV3");
  LOOM_ASSERT_OK(
      loom_op_attrs_set_bool(loom_eager_op_attrs(op), "is_training", true));
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(run(op, inputs, 6, 5, &out));
  expect_shape(out, dims, 4);
  loom_tensor_release(out);
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

static loom_eager_op_t* matmul_op(const char* name, bool ta, bool tb) {
  loom_eager_op_t* op = new_op(name);
  bool batch = strcmp(name, "MatMul") != 0;
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(loom_eager_op_attrs(op),
                                        batch ? "adj_x" : "transpose_a", ta));
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(loom_eager_op_attrs(op),
                                        batch ? "adj_y" : "transpose_b", tb));
  return op;
}

static void matmul_output_that_overflows_is_an_error(void** state) {
  (void)state;
  // [2^62, 0] . [0, 8]: an output of 2^65 elements.
  int64_t a[2] = {P62, 0}, b[2] = {0, 8};
  loom_tensor_handle_t* inputs[2] = {floats(a, 2, NULL), floats(b, 2, NULL)};
  expect_error(run(matmul_op("MatMul", false, false), inputs, 2, 1, NULL),
               LOOM_STATUS_INVALID_ARGUMENT, "MatMul", "4611686018427387904",
               NULL);
  // Transposed: [0, 2^62]^T . [8, 0]^T.
  int64_t at[2] = {0, P62}, bt[2] = {8, 0};
  loom_tensor_handle_t* inputs2[2] = {floats(at, 2, NULL), floats(bt, 2, NULL)};
  expect_error(run(matmul_op("MatMul", true, true), inputs2, 2, 1, NULL),
               LOOM_STATUS_INVALID_ARGUMENT, "MatMul", "4611686018427387904",
               NULL);
  // A huge inner dimension with an empty output is fine.
  int64_t ak[2] = {0, P62}, bk[2] = {P62, 0};
  loom_tensor_handle_t* inputs3[2] = {floats(ak, 2, NULL), floats(bk, 2, NULL)};
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(run(matmul_op("MatMul", false, false), inputs3, 2, 1, &out));
  int64_t want[2] = {0, 0};
  expect_shape(out, want, 2);
  loom_tensor_release(out);
}

static void batch_matmul_broadcast_with_huge_batches(void** state) {
  (void)state;
  // [2^62, 1, 0, 2] . [1, 4, 2, 3]: the broadcast batch 2^64 wraps, but the
  // output [2^62, 4, 0, 3] is empty.
  int64_t a[4] = {P62, 1, 0, 2}, b[4] = {1, 4, 2, 3};
  loom_tensor_handle_t* inputs[2] = {floats(a, 4, NULL), floats(b, 4, NULL)};
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(
      run(matmul_op("BatchMatMulV2", false, false), inputs, 2, 1, &out));
  int64_t want[4] = {P62, 4, 0, 3};
  expect_shape(out, want, 4);
  loom_tensor_release(out);
  // [2^62, 1, 2, 0] . [1, 4, 0, 3]: an output of 2^62 * 4 * 2 * 3.
  int64_t a2[4] = {P62, 1, 2, 0}, b2[4] = {1, 4, 0, 3};
  loom_tensor_handle_t* inputs2[2] = {floats(a2, 4, NULL), floats(b2, 4, NULL)};
  expect_error(
      run(matmul_op("BatchMatMulV2", false, false), inputs2, 2, 1, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "BatchMatMulV2", "4611686018427387904",
      NULL);
  // Adjoint: [1, 0, 2^62] adj . [1, 0, 8] : an output [1, 2^62, 8].
  int64_t a3[3] = {1, 0, P62}, b3[3] = {1, 0, 8};
  loom_tensor_handle_t* inputs3[2] = {floats(a3, 3, NULL), floats(b3, 3, NULL)};
  expect_error(
      run(matmul_op("BatchMatMulV2", true, false), inputs3, 2, 1, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "BatchMatMulV2", "4611686018427387904",
      NULL);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static loom_status_t reduce(const char* name, const int64_t* dims, int rank,
                            const int32_t* axes, int count, bool keep,
                            loom_tensor_t** out) {
  loom_eager_op_t* op = new_op(name);
  LOOM_ASSERT_OK(
      loom_op_attrs_set_bool(loom_eager_op_attrs(op), "keep_dims", keep));
  loom_tensor_handle_t* inputs[2] = {floats(dims, rank, NULL),
                                     int32s(axes, count)};
  return run(op, inputs, 2, 1, out);
}

static void reductions_over_huge_empty_shapes(void** state) {
  (void)state;
  const char* ops[] = {"Sum", "Mean", "Prod", "Max", "Min"};
  int64_t dims[3] = {P62, 8, 0};
  for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); ++o) {
    // Over axis 0 or axes {0, 1} (their product 2^65 wraps): empty
    // outputs.
    int32_t axis0 = 0, axes01[2] = {0, 1}, axis1 = 1;
    loom_tensor_t* out = NULL;
    LOOM_ASSERT_OK(reduce(ops[o], dims, 3, &axis0, 1, false, &out));
    int64_t want0[2] = {8, 0};
    expect_shape(out, want0, 2);
    loom_tensor_release(out);
    LOOM_ASSERT_OK(reduce(ops[o], dims, 3, axes01, 2, true, &out));
    int64_t want01[3] = {1, 1, 0};
    expect_shape(out, want01, 3);
    loom_tensor_release(out);
    LOOM_ASSERT_OK(reduce(ops[o], dims, 3, &axis1, 1, false, &out));
    int64_t want1[2] = {P62, 0};
    expect_shape(out, want1, 2);
    loom_tensor_release(out);
    // Over the empty axis: an output [2^62, 8] of 2^65 elements.
    int32_t axis2 = 2;
    expect_error(reduce(ops[o], dims, 3, &axis2, 1, false, NULL),
                 LOOM_STATUS_INVALID_ARGUMENT, ops[o], "4611686018427387904",
                 NULL);
  }
}

static void reductions_of_empty_axes_fill_the_identity(void** state) {
  (void)state;
  // [3, 0, 2^62 ... ] is not representable; [0, 2^62] reduced over axis
  // 0 is an output of 2^62 floats: too many bytes for an allocation.
  int64_t dims[2] = {2, 0};
  int32_t axis = 1;
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(reduce("Prod", dims, 2, &axis, 1, false, &out));
  const float* y = loom_tensor_data(out);
  assert_float_equal(y[0], 1.0f, 0);
  assert_float_equal(y[1], 1.0f, 0);
  loom_tensor_release(out);
}

static void arg_max_over_huge_empty_shapes(void** state) {
  (void)state;
  const char* ops[2] = {"ArgMax", "ArgMin"};
  for (int o = 0; o < 2; ++o) {
    int64_t dims[3] = {P62, 8, 0};
    int32_t axis = 0;
    loom_eager_op_t* op = new_op(ops[o]);
    loom_tensor_handle_t* inputs[2] = {
        floats(dims, 3, NULL), tensor(LOOM_DTYPE_INT32, NULL, 0, &axis)};
    loom_tensor_t* out = NULL;
    LOOM_ASSERT_OK(run(op, inputs, 2, 1, &out));
    int64_t want[2] = {8, 0};
    expect_shape(out, want, 2);
    loom_tensor_release(out);
  }
}

//===----------------------------------------------------------------------===//
// Softmax and cross entropies
//===----------------------------------------------------------------------===//

static void softmax_over_huge_empty_shapes(void** state) {
  (void)state;
  const char* ops[2] = {"Softmax", "LogSoftmax"};
  int64_t shapes[3][3] = {{P62, 8, 0}, {0, 8, P62}, {8, 0, P62}};
  for (int o = 0; o < 2; ++o) {
    for (int s = 0; s < 3; ++s) {
      loom_tensor_handle_t* input = floats(shapes[s], 3, NULL);
      loom_tensor_t* out = NULL;
      LOOM_ASSERT_OK(run(new_op(ops[o]), &input, 1, 1, &out));
      expect_shape(out, shapes[s], 3);
      loom_tensor_release(out);
    }
  }
}

static void cross_entropy_with_huge_batches(void** state) {
  (void)state;
  // Logits [2^62, 0]: the loss [2^62] has 2^62 floats, more bytes than
  // int64 counts.
  int64_t dims[2] = {P62, 0};
  loom_tensor_handle_t* inputs[2] = {floats(dims, 2, NULL),
                                     floats(dims, 2, NULL)};
  expect_error(run(new_op("SoftmaxCrossEntropyWithLogits"), inputs, 2, 2, NULL),
               LOOM_STATUS_INVALID_ARGUMENT, "SoftmaxCrossEntropyWithLogits",
               "4611686018427387904", NULL);
  // An empty batch of huge classes: empty loss, empty backprop.
  int64_t dims2[2] = {0, P62};
  loom_tensor_handle_t* inputs2[2] = {floats(dims2, 2, NULL),
                                      floats(dims2, 2, NULL)};
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(
      run(new_op("SoftmaxCrossEntropyWithLogits"), inputs2, 2, 2, &out));
  int64_t want = 0;
  expect_shape(out, &want, 1);
  loom_tensor_release(out);
  int64_t dims3[2] = {0, P62}, zero = 0;
  loom_tensor_handle_t* inputs3[2] = {floats(dims3, 2, NULL),
                                      tensor(LOOM_DTYPE_INT32, &zero, 1, NULL)};
  LOOM_ASSERT_OK(
      run(new_op("SparseSoftmaxCrossEntropyWithLogits"), inputs3, 2, 2, &out));
  expect_shape(out, &want, 1);
  loom_tensor_release(out);
}

//===----------------------------------------------------------------------===//
// Random ops and CheckNumerics
//===----------------------------------------------------------------------===//

static void random_of_huge_shapes_is_an_error(void** state) {
  (void)state;
  const char* ops[3] = {"RandomUniform", "RandomStandardNormal",
                        "TruncatedNormal"};
  for (int o = 0; o < 3; ++o) {
    // [2^40, 2^40]: 2^80 elements.
    int64_t dims[2] = {P40, P40};
    loom_eager_op_t* op = new_op(ops[o]);
    LOOM_ASSERT_OK(loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype",
                                           LOOM_DTYPE_FLOAT));
    loom_tensor_handle_t* shape = int64s(dims, 2);
    expect_error(run(op, &shape, 1, 1, NULL), LOOM_STATUS_INVALID_ARGUMENT,
                 ops[o], "shape", "1099511627776", NULL);
    // [2^61, 2]: elements fit, bytes (of float) do not.
    int64_t dims2[2] = {(int64_t)1 << 61, 2};
    op = new_op(ops[o]);
    LOOM_ASSERT_OK(loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype",
                                           LOOM_DTYPE_FLOAT));
    shape = int64s(dims2, 2);
    expect_error(run(op, &shape, 1, 1, NULL), LOOM_STATUS_INVALID_ARGUMENT,
                 ops[o], "2305843009213693952", NULL);
    // A zero dimension after huge ones: an empty tensor.
    int64_t dims3[3] = {P62, 8, 0};
    op = new_op(ops[o]);
    LOOM_ASSERT_OK(loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype",
                                           LOOM_DTYPE_FLOAT));
    shape = int64s(dims3, 3);
    loom_tensor_t* out = NULL;
    LOOM_ASSERT_OK(run(op, &shape, 1, 1, &out));
    expect_shape(out, dims3, 3);
    loom_tensor_release(out);
  }
}

static void check_numerics_over_huge_empty_shapes(void** state) {
  (void)state;
  int64_t dims[3] = {P62, 8, 0};
  loom_tensor_handle_t* input = floats(dims, 3, NULL);
  loom_eager_op_t* op = new_op("CheckNumericsV2");
  set_string(op, "message", "m");
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(run(op, &input, 1, 1, &out));
  expect_shape(out, dims, 3);
  loom_tensor_release(out);
}

//===----------------------------------------------------------------------===//
// Training ops
//===----------------------------------------------------------------------===//

static void gradient_descent_on_a_huge_empty_variable(void** state) {
  (void)state;
  int64_t dims[3] = {P62, 8, 0};
  loom_eager_op_t* op = new_op("VarHandleOp");
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype",
                                         LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_shape(loom_eager_op_attrs(op), "shape", dims, 3));
  loom_tensor_handle_t* var = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &var, 1, &count));
  loom_eager_op_destroy(op);
  loom_tensor_handle_retain(var);
  loom_tensor_handle_t* assign[2] = {var, floats(dims, 3, NULL)};
  LOOM_ASSERT_OK(run(new_op("AssignVariableOp"), assign, 2, 0, NULL));
  loom_tensor_handle_retain(var);
  float alpha = 0.5f;
  loom_tensor_handle_t* inputs[3] = {var, floats(NULL, 0, &alpha),
                                     floats(dims, 3, NULL)};
  LOOM_ASSERT_OK(
      run(new_op("ResourceApplyGradientDescent"), inputs, 3, 0, NULL));
  loom_eager_op_t* read = new_op("ReadVariableOp");
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(loom_eager_op_attrs(read), "dtype",
                                         LOOM_DTYPE_FLOAT));
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(run(read, &var, 1, 1, &out));
  expect_shape(out, dims, 3);
  loom_tensor_release(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(conv2d_dilation_that_overflows_is_an_error),
      cmocka_unit_test(conv2d_nchw_dilation_that_overflows_is_an_error),
      cmocka_unit_test(conv2d_empty_filter_is_an_error),
      cmocka_unit_test(conv2d_huge_stride_gives_one_window),
      cmocka_unit_test(conv2d_explicit_padding_that_overflows_is_an_error),
      cmocka_unit_test(conv2d_output_that_overflows_is_an_error),
      cmocka_unit_test(conv2d_backprop_input_sizes_that_overflow_are_an_error),
      cmocka_unit_test(avg_pool_with_stride_int64_max_has_one_window),
      cmocka_unit_test(pool_window_larger_than_the_input),
      cmocka_unit_test(max_pool_explicit_padding_that_overflows_is_an_error),
      cmocka_unit_test(nchw_pools_with_stride_int64_max),
      cmocka_unit_test(pool_over_huge_empty_batches),
      cmocka_unit_test(pool_grads_with_huge_values),
      cmocka_unit_test(fused_batch_norm_over_huge_empty_batches),
      cmocka_unit_test(fused_batch_norm_grad_over_huge_empty_batches),
      cmocka_unit_test(fused_batch_norm_without_channels),
      cmocka_unit_test(matmul_output_that_overflows_is_an_error),
      cmocka_unit_test(batch_matmul_broadcast_with_huge_batches),
      cmocka_unit_test(reductions_over_huge_empty_shapes),
      cmocka_unit_test(reductions_of_empty_axes_fill_the_identity),
      cmocka_unit_test(arg_max_over_huge_empty_shapes),
      cmocka_unit_test(softmax_over_huge_empty_shapes),
      cmocka_unit_test(cross_entropy_with_huge_batches),
      cmocka_unit_test(random_of_huge_shapes_is_an_error),
      cmocka_unit_test(check_numerics_over_huge_empty_shapes),
      cmocka_unit_test(gradient_descent_on_a_huge_empty_variable),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
