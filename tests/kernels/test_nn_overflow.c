// Sizes from user values that overflow int64 in the NN and math kernels
// (convolutions, pooling, batch normalisation, matrix products,
// reductions, softmax, random ops, CheckNumerics): each is an error that
// names the op, the argument and the values, or, where TensorFlow gives
// one, the right result; never a wrapped size. Zero-element tensors with
// huge dimensions are legal and must not overflow on the way.

#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "test_support.h"

#define P62 ((int64_t)1 << 62)
#define P40 ((int64_t)1 << 40)

static loom_context_t* g_context;

static float g_arange[50];

static int setup(void** state) {
  (void)state;
  for (int i = 0; i < 50; ++i) g_arange[i] = (float)i;
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

static loom_eager_op_t* new_op(const char* name) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, name, &op));
  return op;
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

static void expect_shape(const loom_tensor_t* t, const int64_t* dims,
                         int rank) {
  const loom_shape_t* shape = loom_tensor_shape(t);
  assert_int_equal(shape->rank, rank);
  for (int i = 0; i < rank; ++i) assert_int_equal(shape->dims[i], dims[i]);
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

enum { kMaxInputs = 6, kMaxAttrs = 6, kMaxExpect = 5 };

typedef struct input_t {
  loom_dtype_t dtype;
  int rank;
  int64_t dims[4];
  const void* data;  // NULL: zeros
} input_t;

typedef enum attr_kind_t {
  kAttrNone = 0,
  kAttrInts,
  kAttrString,
  kAttrBool,
  kAttrDtype,
} attr_kind_t;

typedef struct attr_t {
  const char* name;
  attr_kind_t kind;
  int count;  // of ints
  int64_t ints[8];
  const char* string;
  bool flag;
  loom_dtype_t dtype;
} attr_t;

// One op run: INVALID_ARGUMENT with every substring of `expect`, or (no
// expect) output 0 of shape out_dims[0, out_rank) whose first num_values
// elements are `values`.
typedef struct case_t {
  const char* name;
  const char* op;
  int num_inputs;
  input_t in[kMaxInputs];
  attr_t attrs[kMaxAttrs];
  int num_outputs;  // 0: 1
  const char* expect[kMaxExpect];
  int out_rank;
  int64_t out_dims[4];
  int num_values;
  const float* values;
} case_t;

#define F32(r, ...)                                                 \
  {                                                                 \
    .dtype = LOOM_DTYPE_FLOAT, .rank = (r), .dims = { __VA_ARGS__ } \
  }
#define F32_DATA(values, r, ...)                                   \
  {                                                                \
    .dtype = LOOM_DTYPE_FLOAT, .rank = (r), .dims = {__VA_ARGS__}, \
    .data = (values)                                               \
  }
#define I32_VECTOR(n, v) \
  { .dtype = LOOM_DTYPE_INT32, .rank = 1, .dims = {(n)}, .data = (v) }
#define I64_VECTOR(n, v) \
  { .dtype = LOOM_DTYPE_INT64, .rank = 1, .dims = {(n)}, .data = (v) }
#define I32_SCALAR(v) \
  { .dtype = LOOM_DTYPE_INT32, .rank = 0, .data = (v) }

#define INTS(n, ...)                                                    \
  {                                                                     \
    .name = (n), .kind = kAttrInts,                                     \
    .count = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
    .ints = {                                                           \
      __VA_ARGS__                                                       \
    }                                                                   \
  }
#define STRING(n, v) \
  { .name = (n), .kind = kAttrString, .string = (v) }
#define FLAG(n, v) \
  { .name = (n), .kind = kAttrBool, .flag = (v) }
#define DTYPE(n, v) \
  { .name = (n), .kind = kAttrDtype, .dtype = (v) }

// A float Conv2D-like op: strides and dilations over H and W, a padding.
#define CONV(padding, stride, dilation)                                    \
  DTYPE("T", LOOM_DTYPE_FLOAT), INTS("strides", 1, (stride), (stride), 1), \
      INTS("dilations", 1, (dilation), (dilation), 1),                     \
      STRING("padding", (padding))
// A float pool: a ksize and strides over H and W, a padding.
#define POOL(padding, ksize, stride)                                   \
  DTYPE("T", LOOM_DTYPE_FLOAT), INTS("ksize", 1, (ksize), (ksize), 1), \
      INTS("strides", 1, (stride), (stride), 1), STRING("padding", (padding))

#define RUN(cases) run_cases((cases), sizeof(cases) / sizeof((cases)[0]))

static void set_attr(loom_eager_op_t* op, const attr_t* a) {
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  switch (a->kind) {
    case kAttrInts:
      LOOM_ASSERT_OK(loom_op_attrs_set_list(attrs, a->name, LOOM_ATTR_KIND_I64,
                                            a->ints, a->count));
      break;
    case kAttrString:
      set_string(op, a->name, a->string);
      break;
    case kAttrBool:
      LOOM_ASSERT_OK(loom_op_attrs_set_bool(attrs, a->name, a->flag));
      break;
    case kAttrDtype:
      LOOM_ASSERT_OK(loom_op_attrs_set_dtype(attrs, a->name, a->dtype));
      break;
    case kAttrNone:
      break;
  }
}

static void expect_messages(const case_t* c, loom_status_t status) {
  if (!status) fail_msg("%s: expected INVALID_ARGUMENT, got OK", c->name);
  char text[1024];
  loom_status_format(status, text, sizeof(text));
  loom_status_code_t code = loom_status_code(status);
  const char* message = loom_status_message(status);
  const char* missing = NULL;
  for (int i = 0; i < kMaxExpect && c->expect[i] && !missing; ++i) {
    if (!strstr(message, c->expect[i])) missing = c->expect[i];
  }
  loom_status_free(status);
  if (code != LOOM_STATUS_INVALID_ARGUMENT) {
    fail_msg("%s: expected INVALID_ARGUMENT, got: %s", c->name, text);
  }
  if (missing) fail_msg("%s: message lacks \"%s\": %s", c->name, missing, text);
}

static void run_case(const case_t* c) {
  loom_eager_op_t* op = new_op(c->op);
  for (int i = 0; i < kMaxAttrs && c->attrs[i].name; ++i) {
    set_attr(op, &c->attrs[i]);
  }
  loom_tensor_handle_t* inputs[kMaxInputs] = {NULL};
  for (int i = 0; i < c->num_inputs; ++i) {
    inputs[i] =
        tensor(c->in[i].dtype, c->in[i].dims, c->in[i].rank, c->in[i].data);
  }
  int outputs = c->num_outputs ? c->num_outputs : 1;
  if (c->expect[0]) {
    expect_messages(c, run(op, inputs, c->num_inputs, outputs, NULL));
    return;
  }
  loom_tensor_t* out = NULL;
  loom_status_t status = run(op, inputs, c->num_inputs, outputs, &out);
  if (status) {
    char text[1024];
    loom_status_format(status, text, sizeof(text));
    loom_status_free(status);
    fail_msg("%s: expected OK, got: %s", c->name, text);
  }
  expect_shape(out, c->out_dims, c->out_rank);
  const float* y = loom_tensor_data(out);
  for (int i = 0; i < c->num_values; ++i) {
    if (y[i] != c->values[i]) {
      loom_tensor_release(out);
      fail_msg("%s: element %d is %g, expected %g", c->name, i, (double)y[i],
               (double)c->values[i]);
    }
  }
  loom_tensor_release(out);
}

static void run_cases(const case_t* cases, size_t n) {
  for (size_t i = 0; i < n; ++i) run_case(&cases[i]);
}

static const float kOnes[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
static const float kFour = 4.0f;
static const int32_t kHugeSizes[4] = {INT32_MAX, INT32_MAX, INT32_MAX, 1};

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

static void conv2d_sizes_that_overflow(void** state) {
  (void)state;
  static const int32_t kInputSizes[4] = {1, 5, 4, 1};
  static const int32_t kFilterSizes[4] = {3, 3, 1, 1};
  // numpy: arange(25).reshape(5, 5)[0:3, 0:3].sum() = 54: the one window
  // of stride INT64_MAX, at (0, 0), for VALID (ceil((5 - 3 + 1) / s) = 1)
  // and SAME (ceil(5 / s) = 1, padding max(0 * s + 3 - 5, 0) = 0).
  static const float kWindowSum[1] = {54};
  const case_t cases[] = {
      {.name = "Conv2D VALID dilation 2^62",
       .op = "Conv2D",
       .num_inputs = 2,
       .in = {F32(4, 1, 5, 5, 1), F32(4, 3, 3, 1, 1)},
       .attrs = {CONV("VALID", 1, P62)},
       .expect = {"Conv2D", "dilations", "4611686018427387904"}},
      {.name = "Conv2D SAME dilation 2^62",
       .op = "Conv2D",
       .num_inputs = 2,
       .in = {F32(4, 1, 5, 5, 1), F32(4, 3, 3, 1, 1)},
       .attrs = {CONV("SAME", 1, P62)},
       .expect = {"Conv2D", "dilations", "4611686018427387904"}},
      {.name = "Conv2D NCHW dilation INT64_MAX over columns",
       .op = "Conv2D",
       .num_inputs = 2,
       .in = {F32(4, 1, 1, 5, 5), F32(4, 3, 3, 1, 1)},
       .attrs = {DTYPE("T", LOOM_DTYPE_FLOAT), INTS("strides", 1, 1, 1, 1),
                 INTS("dilations", 1, 1, 2, INT64_MAX),
                 STRING("padding", "SAME"), STRING("data_format", "NCHW")},
       .expect = {"Conv2D", "dilations", "columns", "9223372036854775807"}},
      // TensorFlow: "filter must not have zero elements".
      {.name = "Conv2D empty filter",
       .op = "Conv2D",
       .num_inputs = 2,
       .in = {F32(4, 1, 5, 5, 1), F32(4, 0, 3, 1, 1)},
       .attrs = {CONV("SAME", 1, 1)},
       .expect = {"Conv2D", "filter must not have zero elements"}},
      {.name = "Conv2D VALID stride INT64_MAX",
       .op = "Conv2D",
       .num_inputs = 2,
       .in = {F32_DATA(g_arange, 4, 1, 5, 5, 1),
              F32_DATA(kOnes, 4, 3, 3, 1, 1)},
       .attrs = {CONV("VALID", INT64_MAX, 1)},
       .out_rank = 4,
       .out_dims = {1, 1, 1, 1},
       .num_values = 1,
       .values = kWindowSum},
      {.name = "Conv2D SAME stride INT64_MAX",
       .op = "Conv2D",
       .num_inputs = 2,
       .in = {F32_DATA(g_arange, 4, 1, 5, 5, 1),
              F32_DATA(kOnes, 4, 3, 3, 1, 1)},
       .attrs = {CONV("SAME", INT64_MAX, 1)},
       .out_rank = 4,
       .out_dims = {1, 1, 1, 1},
       .num_values = 1,
       .values = kWindowSum},
      {.name = "Conv2D explicit paddings INT64_MAX",
       .op = "Conv2D",
       .num_inputs = 2,
       .in = {F32(4, 1, 5, 5, 1), F32(4, 3, 3, 1, 1)},
       .attrs = {CONV("EXPLICIT", 1, 1),
                 INTS("explicit_paddings", 0, 0, INT64_MAX, INT64_MAX, 0, 0, 0,
                      0)},
       .expect = {"Conv2D", "explicit_paddings", "9223372036854775807"}},
      // [2^62, 0, 0, 1] by a [1, 1, 1, 4] filter: the output
      // [2^62, 0, 0, 4] is empty and fine.
      {.name = "Conv2D of a huge empty batch",
       .op = "Conv2D",
       .num_inputs = 2,
       .in = {F32(4, P62, 0, 0, 1), F32(4, 1, 1, 1, 4)},
       .attrs = {CONV("VALID", 1, 1)},
       .out_rank = 4,
       .out_dims = {P62, 0, 0, 4}},
      // [2^62, 1, 1, 0] by a [1, 1, 1, 8] filter: an output
      // [2^62, 1, 1, 8] of 2^65 elements.
      {.name = "Conv2D output of 2^65 elements",
       .op = "Conv2D",
       .num_inputs = 2,
       .in = {F32(4, P62, 1, 1, 0), F32(4, 1, 1, 1, 8)},
       .attrs = {CONV("VALID", 1, 1)},
       .expect = {"Conv2D", "output", "4611686018427387904"}},
      {.name = "Conv2DBackpropInput dilation 2^62",
       .op = "Conv2DBackpropInput",
       .num_inputs = 3,
       .in = {I32_VECTOR(4, kInputSizes), F32(4, 3, 3, 1, 1),
              F32(4, 1, 3, 2, 1)},
       .attrs = {CONV("VALID", 1, P62)},
       .expect = {"Conv2DBackpropInput", "dilations", "4611686018427387904"}},
      {.name = "Conv2DBackpropFilter dilation 2^62",
       .op = "Conv2DBackpropFilter",
       .num_inputs = 3,
       .in = {F32(4, 1, 5, 4, 1), I32_VECTOR(4, kFilterSizes),
              F32(4, 1, 3, 2, 1)},
       .attrs = {CONV("SAME", 1, P62)},
       .expect = {"Conv2DBackpropFilter", "dilations", "4611686018427387904"}},
      // filter_sizes and input_sizes of (2^31 - 1)^3 elements: more than
      // int64 holds.
      {.name = "Conv2DBackpropFilter huge filter_sizes",
       .op = "Conv2DBackpropFilter",
       .num_inputs = 3,
       .in = {F32(4, 1, 5, 4, 1), I32_VECTOR(4, kHugeSizes),
              F32(4, 1, 3, 2, 1)},
       .attrs = {CONV("VALID", 1, 1)},
       .expect = {"Conv2DBackpropFilter", "filter", "2147483647"}},
      {.name = "Conv2DBackpropInput huge input_sizes",
       .op = "Conv2DBackpropInput",
       .num_inputs = 3,
       .in = {I32_VECTOR(4, kHugeSizes), F32(4, 3, 3, 1, 1),
              F32(4, 1, 3, 2, 1)},
       .attrs = {CONV("VALID", 1, 1)},
       .expect = {"Conv2DBackpropInput", "input", "2147483647"}},
  };
  RUN(cases);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

static void pools_with_huge_windows_and_strides(void** state) {
  (void)state;
  // numpy: arange(25).reshape(5, 5); VALID: ceil((5 - 2 + 1) / s) = 1
  // window at (0, 0): mean(x[0:2, 0:2]) = 3, max 6; SAME: ceil(5 / s) = 1,
  // padding max((1 - 1) * s + 2 - 5, 0) = 0: the same window.
  static const float kMean[1] = {3}, kMax[1] = {6};
  // Two planes of arange(50).reshape(2, 5, 5): the 3x3 windows at (0, 0)
  // (numpy: max 12 and 37, mean 6 and 31).
  static const float kPlaneMax[2] = {12, 37}, kPlaneMean[2] = {6, 31};
  const case_t cases[] = {
      {.name = "AvgPool VALID stride INT64_MAX",
       .op = "AvgPool",
       .num_inputs = 1,
       .in = {F32_DATA(g_arange, 4, 1, 5, 5, 1)},
       .attrs = {POOL("VALID", 2, INT64_MAX)},
       .out_rank = 4,
       .out_dims = {1, 1, 1, 1},
       .num_values = 1,
       .values = kMean},
      {.name = "AvgPool SAME stride INT64_MAX",
       .op = "AvgPool",
       .num_inputs = 1,
       .in = {F32_DATA(g_arange, 4, 1, 5, 5, 1)},
       .attrs = {POOL("SAME", 2, INT64_MAX)},
       .out_rank = 4,
       .out_dims = {1, 1, 1, 1},
       .num_values = 1,
       .values = kMean},
      {.name = "MaxPool VALID stride INT64_MAX",
       .op = "MaxPool",
       .num_inputs = 1,
       .in = {F32_DATA(g_arange, 4, 1, 5, 5, 1)},
       .attrs = {POOL("VALID", 2, INT64_MAX)},
       .out_rank = 4,
       .out_dims = {1, 1, 1, 1},
       .num_values = 1,
       .values = kMax},
      {.name = "MaxPool SAME stride INT64_MAX",
       .op = "MaxPool",
       .num_inputs = 1,
       .in = {F32_DATA(g_arange, 4, 1, 5, 5, 1)},
       .attrs = {POOL("SAME", 2, INT64_MAX)},
       .out_rank = 4,
       .out_dims = {1, 1, 1, 1},
       .num_values = 1,
       .values = kMax},
      // VALID with a window of INT64_MAX over 5 elements does not fit:
      // TensorFlow's "Computed output size would be negative".
      {.name = "MaxPool VALID window INT64_MAX",
       .op = "MaxPool",
       .num_inputs = 1,
       .in = {F32(4, 1, 5, 5, 1)},
       .attrs = {POOL("VALID", INT64_MAX, 1)},
       .expect = {"MaxPool", "9223372036854775807"}},
      // SAME with that window: the padding it needs overflows.
      {.name = "AvgPool SAME window INT64_MAX",
       .op = "AvgPool",
       .num_inputs = 1,
       .in = {F32(4, 1, 5, 5, 1)},
       .attrs = {POOL("SAME", INT64_MAX, 2)},
       .expect = {"AvgPool", "ksize", "9223372036854775807"}},
      {.name = "MaxPool explicit paddings near INT64_MAX",
       .op = "MaxPool",
       .num_inputs = 1,
       .in = {F32(4, 1, 5, 5, 1)},
       .attrs = {POOL("EXPLICIT", 2, 1),
                 INTS("explicit_paddings", 0, 0, 1, 1, 3, INT64_MAX - 7, 0, 0)},
       .expect = {"MaxPool", "explicit_paddings", "columns",
                  "9223372036854775800"}},
      {.name = "MaxPool NCHW stride INT64_MAX",
       .op = "MaxPool",
       .num_inputs = 1,
       .in = {F32_DATA(g_arange, 4, 1, 2, 5, 5)},
       .attrs = {DTYPE("T", LOOM_DTYPE_FLOAT), INTS("ksize", 1, 1, 3, 3),
                 INTS("strides", 1, 1, INT64_MAX, INT64_MAX),
                 STRING("padding", "SAME"), STRING("data_format", "NCHW")},
       .out_rank = 4,
       .out_dims = {1, 2, 1, 1},
       .num_values = 2,
       .values = kPlaneMax},
      {.name = "AvgPool NCHW stride INT64_MAX",
       .op = "AvgPool",
       .num_inputs = 1,
       .in = {F32_DATA(g_arange, 4, 1, 2, 5, 5)},
       .attrs = {DTYPE("T", LOOM_DTYPE_FLOAT), INTS("ksize", 1, 1, 3, 3),
                 INTS("strides", 1, 1, INT64_MAX, INT64_MAX),
                 STRING("padding", "SAME"), STRING("data_format", "NCHW")},
       .out_rank = 4,
       .out_dims = {1, 2, 1, 1},
       .num_values = 2,
       .values = kPlaneMean},
      {.name = "AvgPool of a huge empty batch",
       .op = "AvgPool",
       .num_inputs = 1,
       .in = {F32(4, P62, 4, 4, 0)},
       .attrs = {POOL("VALID", 2, 2)},
       .out_rank = 4,
       .out_dims = {P62, 2, 2, 0}},
      {.name = "MaxPool of a huge empty batch",
       .op = "MaxPool",
       .num_inputs = 1,
       .in = {F32(4, P62, 4, 4, 0)},
       .attrs = {POOL("VALID", 2, 2)},
       .out_rank = 4,
       .out_dims = {P62, 2, 2, 0}},
  };
  RUN(cases);
}

static void pool_grads_with_huge_values(void** state) {
  (void)state;
  static const int32_t kOrig[4] = {1, 5, 5, 1};
  // AvgPoolGrad: one window of stride INT64_MAX: the gradient 4 spreads as
  // 1 over x[0:2, 0:2] (numpy).
  static const float kSpread[25] = {1, 1, 0, 0, 0, 1, 1};
  // MaxPoolGrad: the gradient goes to the window's maximum, x[1][1].
  static const float kAtMax[25] = {0, 0, 0, 0, 0, 0, 4};
  // MaxPoolGradGrad: the output takes grad (shaped like x) at the window's
  // maximum, x[1][1]: grad = x gives 6.
  static const float kSix[1] = {6};
  const case_t cases[] = {
      {.name = "AvgPoolGrad stride INT64_MAX",
       .op = "AvgPoolGrad",
       .num_inputs = 2,
       .in = {I32_VECTOR(4, kOrig), F32_DATA(&kFour, 4, 1, 1, 1, 1)},
       .attrs = {POOL("VALID", 2, INT64_MAX)},
       .out_rank = 4,
       .out_dims = {1, 5, 5, 1},
       .num_values = 25,
       .values = kSpread},
      {.name = "MaxPoolGrad stride INT64_MAX",
       .op = "MaxPoolGrad",
       .num_inputs = 3,
       .in = {F32_DATA(g_arange, 4, 1, 5, 5, 1),
              F32_DATA(&kFour, 4, 1, 1, 1, 1), F32_DATA(&kFour, 4, 1, 1, 1, 1)},
       .attrs = {POOL("SAME", 2, INT64_MAX)},
       .out_rank = 4,
       .out_dims = {1, 5, 5, 1},
       .num_values = 25,
       .values = kAtMax},
      {.name = "MaxPoolGradGrad stride INT64_MAX",
       .op = "MaxPoolGradGrad",
       .num_inputs = 3,
       .in = {F32_DATA(g_arange, 4, 1, 5, 5, 1),
              F32_DATA(&kFour, 4, 1, 1, 1, 1),
              F32_DATA(g_arange, 4, 1, 5, 5, 1)},
       .attrs = {POOL("VALID", 2, INT64_MAX)},
       .out_rank = 4,
       .out_dims = {1, 1, 1, 1},
       .num_values = 1,
       .values = kSix},
      // An orig_input_shape of (2^31 - 1)^3 elements: its size overflows.
      {.name = "AvgPoolGrad huge orig_input_shape",
       .op = "AvgPoolGrad",
       .num_inputs = 2,
       .in = {I32_VECTOR(4, kHugeSizes), F32_DATA(&kFour, 4, 1, 1, 1, 1)},
       .attrs = {POOL("VALID", 1, INT64_MAX)},
       .expect = {"AvgPoolGrad", "input", "2147483647"}},
  };
  RUN(cases);
}

//===----------------------------------------------------------------------===//
// Batch normalisation
//===----------------------------------------------------------------------===//

static void fused_batch_norm_over_huge_empty_shapes(void** state) {
  (void)state;
  static const float kTwoOnes[2] = {1, 1};
  const case_t cases[] = {
      {.name = "FusedBatchNormV3 of a huge empty batch",
       .op = "FusedBatchNormV3",
       .num_inputs = 5,
       .in = {F32(4, P62, 8, 0, 2), F32_DATA(kTwoOnes, 1, 2), F32(1, 2),
              F32(1, 2), F32_DATA(kTwoOnes, 1, 2)},
       .attrs = {FLAG("is_training", true)},
       .num_outputs = 6,
       .out_rank = 4,
       .out_dims = {P62, 8, 0, 2}},
      // [2^62, 8, 1, 0]: no channels; the dims before them multiply past
      // int64.
      {.name = "FusedBatchNormV3 without channels",
       .op = "FusedBatchNormV3",
       .num_inputs = 5,
       .in = {F32(4, P62, 8, 1, 0), F32(1, 0), F32(1, 0), F32(1, 0), F32(1, 0)},
       .attrs = {FLAG("is_training", true)},
       .num_outputs = 6,
       .out_rank = 4,
       .out_dims = {P62, 8, 1, 0}},
      {.name = "FusedBatchNormGradV3 without channels",
       .op = "FusedBatchNormGradV3",
       .num_inputs = 6,
       .in = {F32(4, P62, 8, 1, 0), F32(4, P62, 8, 1, 0), F32(1, 0), F32(1, 0),
              F32(1, 0), F32(1, 0)},
       .num_outputs = 5,
       .out_rank = 4,
       .out_dims = {P62, 8, 1, 0}},
      {.name = "FusedBatchNormGradV3 of a huge empty batch",
       .op = "FusedBatchNormGradV3",
       .num_inputs = 6,
       .in = {F32(4, P62, 8, 0, 2), F32(4, P62, 8, 0, 2),
              F32_DATA(kTwoOnes, 1, 2), F32(1, 2), F32_DATA(kTwoOnes, 1, 2),
              F32(1, 2)},
       .attrs = {FLAG("is_training", true)},
       .num_outputs = 5,
       .out_rank = 4,
       .out_dims = {P62, 8, 0, 2}},
  };
  RUN(cases);
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

static void matrix_products_with_huge_dims(void** state) {
  (void)state;
  const case_t cases[] = {
      // [2^62, 0] . [0, 8]: an output of 2^65 elements.
      {.name = "MatMul output of 2^65 elements",
       .op = "MatMul",
       .num_inputs = 2,
       .in = {F32(2, P62, 0), F32(2, 0, 8)},
       .expect = {"MatMul", "4611686018427387904"}},
      // Transposed: [0, 2^62]^T . [8, 0]^T.
      {.name = "MatMul transposed output of 2^65 elements",
       .op = "MatMul",
       .num_inputs = 2,
       .in = {F32(2, 0, P62), F32(2, 8, 0)},
       .attrs = {FLAG("transpose_a", true), FLAG("transpose_b", true)},
       .expect = {"MatMul", "4611686018427387904"}},
      // A huge inner dimension with an empty output is fine.
      {.name = "MatMul huge inner dimension",
       .op = "MatMul",
       .num_inputs = 2,
       .in = {F32(2, 0, P62), F32(2, P62, 0)},
       .out_rank = 2,
       .out_dims = {0, 0}},
      // [2^62, 1, 0, 2] . [1, 4, 2, 3]: the broadcast batch 2^64 wraps,
      // but the output [2^62, 4, 0, 3] is empty.
      {.name = "BatchMatMulV2 huge empty broadcast batch",
       .op = "BatchMatMulV2",
       .num_inputs = 2,
       .in = {F32(4, P62, 1, 0, 2), F32(4, 1, 4, 2, 3)},
       .out_rank = 4,
       .out_dims = {P62, 4, 0, 3}},
      // [2^62, 1, 2, 0] . [1, 4, 0, 3]: an output of 2^62 * 4 * 2 * 3.
      {.name = "BatchMatMulV2 output past int64",
       .op = "BatchMatMulV2",
       .num_inputs = 2,
       .in = {F32(4, P62, 1, 2, 0), F32(4, 1, 4, 0, 3)},
       .expect = {"BatchMatMulV2", "4611686018427387904"}},
      // Adjoint: [1, 0, 2^62] adj . [1, 0, 8]: an output [1, 2^62, 8].
      {.name = "BatchMatMulV2 adjoint output past int64",
       .op = "BatchMatMulV2",
       .num_inputs = 2,
       .in = {F32(3, 1, 0, P62), F32(3, 1, 0, 8)},
       .attrs = {FLAG("adj_x", true)},
       .expect = {"BatchMatMulV2", "4611686018427387904"}},
  };
  RUN(cases);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static void reductions_over_huge_empty_shapes(void** state) {
  (void)state;
  static const int32_t kAxis0[1] = {0}, kAxes01[2] = {0, 1}, kAxis1[1] = {1},
                       kAxis2[1] = {2};
  const char* ops[] = {"Sum", "Mean", "Prod", "Max", "Min"};
  for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); ++o) {
    // Over axis 0 or axes {0, 1} (their product 2^65 wraps): empty
    // outputs; over the empty axis: an output [2^62, 8] of 2^65 elements.
    const case_t cases[] = {
        {.name = "over axis 0",
         .op = ops[o],
         .num_inputs = 2,
         .in = {F32(3, P62, 8, 0), I32_VECTOR(1, kAxis0)},
         .out_rank = 2,
         .out_dims = {8, 0}},
        {.name = "over axes 0 and 1, keep_dims",
         .op = ops[o],
         .num_inputs = 2,
         .in = {F32(3, P62, 8, 0), I32_VECTOR(2, kAxes01)},
         .attrs = {FLAG("keep_dims", true)},
         .out_rank = 3,
         .out_dims = {1, 1, 0}},
        {.name = "over axis 1",
         .op = ops[o],
         .num_inputs = 2,
         .in = {F32(3, P62, 8, 0), I32_VECTOR(1, kAxis1)},
         .out_rank = 2,
         .out_dims = {P62, 0}},
        {.name = "over the empty axis",
         .op = ops[o],
         .num_inputs = 2,
         .in = {F32(3, P62, 8, 0), I32_VECTOR(1, kAxis2)},
         .expect = {ops[o], "4611686018427387904"}},
    };
    RUN(cases);
  }
}

static void reductions_and_arg_max_of_empty_shapes(void** state) {
  (void)state;
  static const int32_t kAxis0 = 0, kAxis1[1] = {1};
  // numpy: prod(zeros((2, 0)), axis=1) = [1, 1].
  static const float kProducts[2] = {1, 1};
  const case_t cases[] = {
      {.name = "Prod over an empty axis",
       .op = "Prod",
       .num_inputs = 2,
       .in = {F32(2, 2, 0), I32_VECTOR(1, kAxis1)},
       .out_rank = 1,
       .out_dims = {2},
       .num_values = 2,
       .values = kProducts},
      {.name = "ArgMax of a huge empty shape",
       .op = "ArgMax",
       .num_inputs = 2,
       .in = {F32(3, P62, 8, 0), I32_SCALAR(&kAxis0)},
       .out_rank = 2,
       .out_dims = {8, 0}},
      {.name = "ArgMin of a huge empty shape",
       .op = "ArgMin",
       .num_inputs = 2,
       .in = {F32(3, P62, 8, 0), I32_SCALAR(&kAxis0)},
       .out_rank = 2,
       .out_dims = {8, 0}},
  };
  RUN(cases);
}

//===----------------------------------------------------------------------===//
// Softmax and cross entropies
//===----------------------------------------------------------------------===//

static void softmax_over_huge_empty_shapes(void** state) {
  (void)state;
  const char* ops[2] = {"Softmax", "LogSoftmax"};
  for (int o = 0; o < 2; ++o) {
    const case_t cases[] = {
        {.name = "[2^62, 8, 0]",
         .op = ops[o],
         .num_inputs = 1,
         .in = {F32(3, P62, 8, 0)},
         .out_rank = 3,
         .out_dims = {P62, 8, 0}},
        {.name = "[0, 8, 2^62]",
         .op = ops[o],
         .num_inputs = 1,
         .in = {F32(3, 0, 8, P62)},
         .out_rank = 3,
         .out_dims = {0, 8, P62}},
        {.name = "[8, 0, 2^62]",
         .op = ops[o],
         .num_inputs = 1,
         .in = {F32(3, 8, 0, P62)},
         .out_rank = 3,
         .out_dims = {8, 0, P62}},
    };
    RUN(cases);
  }
}

static void cross_entropy_with_huge_batches(void** state) {
  (void)state;
  const case_t cases[] = {
      // Logits [2^62, 0]: the loss [2^62] has 2^62 floats, more bytes than
      // int64 counts.
      {.name = "SoftmaxCrossEntropyWithLogits loss of 2^62 floats",
       .op = "SoftmaxCrossEntropyWithLogits",
       .num_inputs = 2,
       .in = {F32(2, P62, 0), F32(2, P62, 0)},
       .num_outputs = 2,
       .expect = {"SoftmaxCrossEntropyWithLogits", "4611686018427387904"}},
      // An empty batch of huge classes: empty loss, empty backprop.
      {.name = "SoftmaxCrossEntropyWithLogits empty batch",
       .op = "SoftmaxCrossEntropyWithLogits",
       .num_inputs = 2,
       .in = {F32(2, 0, P62), F32(2, 0, P62)},
       .num_outputs = 2,
       .out_rank = 1,
       .out_dims = {0}},
      {.name = "SparseSoftmaxCrossEntropyWithLogits empty batch",
       .op = "SparseSoftmaxCrossEntropyWithLogits",
       .num_inputs = 2,
       .in = {F32(2, 0, P62), I32_VECTOR(0, NULL)},
       .num_outputs = 2,
       .out_rank = 1,
       .out_dims = {0}},
  };
  RUN(cases);
}

//===----------------------------------------------------------------------===//
// Random ops and CheckNumerics
//===----------------------------------------------------------------------===//

static void random_of_huge_shapes_is_an_error(void** state) {
  (void)state;
  // [2^40, 2^40]: 2^80 elements; [2^61, 2]: the elements fit, their bytes
  // (of float) do not; a zero dimension after huge ones: an empty tensor.
  static const int64_t kSquare40[2] = {P40, P40};
  static const int64_t kBytes[2] = {(int64_t)1 << 61, 2};
  static const int64_t kEmpty[3] = {P62, 8, 0};
  const char* ops[3] = {"RandomUniform", "RandomStandardNormal",
                        "TruncatedNormal"};
  for (int o = 0; o < 3; ++o) {
    const case_t cases[] = {
        {.name = "shape [2^40, 2^40]",
         .op = ops[o],
         .num_inputs = 1,
         .in = {I64_VECTOR(2, kSquare40)},
         .attrs = {DTYPE("dtype", LOOM_DTYPE_FLOAT)},
         .expect = {ops[o], "shape", "1099511627776"}},
        {.name = "shape [2^61, 2]",
         .op = ops[o],
         .num_inputs = 1,
         .in = {I64_VECTOR(2, kBytes)},
         .attrs = {DTYPE("dtype", LOOM_DTYPE_FLOAT)},
         .expect = {ops[o], "2305843009213693952"}},
        {.name = "shape [2^62, 8, 0]",
         .op = ops[o],
         .num_inputs = 1,
         .in = {I64_VECTOR(3, kEmpty)},
         .attrs = {DTYPE("dtype", LOOM_DTYPE_FLOAT)},
         .out_rank = 3,
         .out_dims = {P62, 8, 0}},
    };
    RUN(cases);
  }
}

static void check_numerics_over_huge_empty_shapes(void** state) {
  (void)state;
  const case_t cases[] = {
      {.name = "CheckNumericsV2 [2^62, 8, 0]",
       .op = "CheckNumericsV2",
       .num_inputs = 1,
       .in = {F32(3, P62, 8, 0)},
       .attrs = {STRING("message", "m")},
       .out_rank = 3,
       .out_dims = {P62, 8, 0}},
  };
  RUN(cases);
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
      cmocka_unit_test(conv2d_sizes_that_overflow),
      cmocka_unit_test(pools_with_huge_windows_and_strides),
      cmocka_unit_test(pool_grads_with_huge_values),
      cmocka_unit_test(fused_batch_norm_over_huge_empty_shapes),
      cmocka_unit_test(matrix_products_with_huge_dims),
      cmocka_unit_test(reductions_over_huge_empty_shapes),
      cmocka_unit_test(reductions_and_arg_max_of_empty_shapes),
      cmocka_unit_test(softmax_over_huge_empty_shapes),
      cmocka_unit_test(cross_entropy_with_huge_batches),
      cmocka_unit_test(random_of_huge_shapes_is_an_error),
      cmocka_unit_test(check_numerics_over_huge_empty_shapes),
      cmocka_unit_test(gradient_descent_on_a_huge_empty_variable),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
