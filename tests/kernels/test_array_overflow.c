// Shape arithmetic of the array and element-wise ops with values that
// overflow int64: a Reshape target whose product wraps, paddings near
// INT64_MAX, sums of concat and split sizes, tiles, broadcasts, ranges and
// empty tensors with huge dims. Every case runs three ways — TensorFlow's
// eager C API (Execute), loom_kernel_run (the kernel alone) and the op's
// shape function with the input values known — and each must end in
// INVALID_ARGUMENT naming the op, the argument and the values, or in the
// right shape; never in a wrapped size, a short buffer or a crash.

#include <stdlib.h>

#include "../compat/eager_test_util.h"
#include "loom/loom.h"

#define P32 ((int64_t)1 << 32)
#define P40 ((int64_t)1 << 40)
#define P62 ((int64_t)1 << 62)

typedef struct input_t {
  loom_dtype_t dtype;
  int rank;
  int64_t dims[LOOM_MAX_RANK];
  // Integer inputs: their values (a zero-filled tensor when NULL). Other
  // dtypes hold 0, 1, 2, ...
  const int64_t* values;
} input_t;

enum { kMaxInputs = 4, kMaxAttrs = 3, kMaxExpect = 4 };

typedef struct case_t {
  const char* name;
  const char* op;
  int num_inputs;
  input_t in[kMaxInputs];
  const char* attr_names[kMaxAttrs];
  int64_t attr_values[kMaxAttrs];
  // Substrings of the INVALID_ARGUMENT message; none: the op succeeds with
  // output 0 of out_rank / out_dims.
  const char* expect[kMaxExpect];
  int out_rank;
  int64_t out_dims[LOOM_MAX_RANK];
  bool kernel_only;  // the shape function cannot see it (no values)
  int num_outputs;   // 0: 1
  // One list(int) attr, when list_name is set.
  const char* list_name;
  const int64_t* list_values;
  int list_count;
  // One string attr, when string_name is set (BiasAddGrad's data_format).
  const char* string_name;
  const char* string_value;
} case_t;

static loom_host_context_t* g_host;
static TFE_Context* g_ctx;

//===----------------------------------------------------------------------===//
// Inputs in both APIs
//===----------------------------------------------------------------------===//

// The tests' tensors are small or empty (however large their dims).
static int64_t element_count(const input_t* in) {
  int64_t count = 1;
  for (int i = 0; i < in->rank; ++i) {
    if (in->dims[i] == 0) return 0;
  }
  for (int i = 0; i < in->rank; ++i) count *= in->dims[i];
  return count;
}

static void fill_values(const input_t* in, void* data) {
  int64_t n = element_count(in);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = in->values ? in->values[i] : i;
    switch (in->dtype) {
      case LOOM_DTYPE_INT32:
        ((int32_t*)data)[i] = (int32_t)v;
        break;
      case LOOM_DTYPE_INT64:
        ((int64_t*)data)[i] = v;
        break;
      case LOOM_DTYPE_FLOAT:
        ((float*)data)[i] = (float)v;
        break;
      case LOOM_DTYPE_BOOL:
        ((bool*)data)[i] = v != 0;
        break;
      default:
        fail_msg("unsupported test dtype %d", (int)in->dtype);
    }
  }
}

static loom_tensor_t* make_tensor(const input_t* in) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, in->dims, in->rank));
  loom_tensor_t* t = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(), in->dtype,
                                          &shape, &t));
  fill_values(in, loom_tensor_data(t));
  return t;
}

static TFE_TensorHandle* make_handle(const input_t* in) {
  size_t bytes = (size_t)element_count(in) * loom_dtype_size(in->dtype);
  TF_Tensor* t =
      TF_AllocateTensor((TF_DataType)in->dtype, in->dims, in->rank, bytes);
  assert_non_null(t);
  fill_values(in, TF_TensorData(t));
  TF_Status* status = TF_NewStatus();
  TFE_TensorHandle* h = TFE_NewTensorHandleFromTensor(g_ctx, t, status);
  ASSERT_TF_OK(status);
  TF_DeleteTensor(t);
  TF_DeleteStatus(status);
  return h;
}

//===----------------------------------------------------------------------===//
// The three runs
//===----------------------------------------------------------------------===//

static void check_message(const case_t* c, const char* how, const char* text) {
  for (int k = 0; k < kMaxExpect && c->expect[k]; ++k) {
    if (!strstr(text, c->expect[k])) {
      fail_msg("%s (%s): message '%s' does not contain '%s'", c->name, how,
               text, c->expect[k]);
    }
  }
}

static void check_status(const case_t* c, const char* how,
                         loom_status_t status) {
  char text[1024];
  loom_status_format(status, text, sizeof(text));
  if (!c->expect[0]) {
    if (status) fail_msg("%s (%s): expected OK, got %s", c->name, how, text);
    return;
  }
  if (loom_status_code(status) != LOOM_STATUS_INVALID_ARGUMENT) {
    fail_msg("%s (%s): expected INVALID_ARGUMENT, got %s", c->name, how,
             status ? text : "OK");
  }
  check_message(c, how, text);
  loom_status_free(status);
}

static void check_shape(const case_t* c, const char* how, int rank,
                        const int64_t* dims) {
  if (rank != c->out_rank) {
    fail_msg("%s (%s): rank %d, expected %d", c->name, how, rank, c->out_rank);
  }
  for (int i = 0; i < rank; ++i) {
    if (dims[i] != c->out_dims[i]) {
      fail_msg("%s (%s): dim %d is %lld, expected %lld", c->name, how, i,
               (long long)dims[i], (long long)c->out_dims[i]);
    }
  }
}

static void set_attrs(const case_t* c, loom_op_attrs_t* attrs) {
  loom_op_attrs_initialize(attrs, loom_allocator_default());
  for (int k = 0; k < kMaxAttrs && c->attr_names[k]; ++k) {
    LOOM_ASSERT_OK(
        loom_op_attrs_set_i64(attrs, c->attr_names[k], c->attr_values[k]));
  }
  if (c->list_name) {
    LOOM_ASSERT_OK(loom_op_attrs_set_list(attrs, c->list_name,
                                          LOOM_ATTR_KIND_I64, c->list_values,
                                          c->list_count));
  }
  if (c->string_name) {
    LOOM_ASSERT_OK(loom_op_attrs_set_string(
        attrs, c->string_name, c->string_value, strlen(c->string_value)));
  }
}

static void run_eager(const case_t* c) {
  TF_Status* status = TF_NewStatus();
  TFE_Op* op = TFE_NewOp(g_ctx, c->op, status);
  ASSERT_TF_OK(status);
  TFE_TensorHandle* handles[kMaxInputs] = {NULL};
  for (int i = 0; i < c->num_inputs; ++i) {
    handles[i] = make_handle(&c->in[i]);
    TFE_OpAddInput(op, handles[i], status);
    ASSERT_TF_OK(status);
  }
  for (int k = 0; k < kMaxAttrs && c->attr_names[k]; ++k) {
    TFE_OpSetAttrInt(op, c->attr_names[k], c->attr_values[k]);
  }
  if (c->list_name) {
    TFE_OpSetAttrIntList(op, c->list_name, c->list_values, c->list_count);
  }
  if (c->string_name) {
    TFE_OpSetAttrString(op, c->string_name, c->string_value,
                        strlen(c->string_value));
  }
  TFE_TensorHandle* outputs[4] = {NULL};
  int num = c->num_outputs ? c->num_outputs : 1;
  TFE_Execute(op, outputs, &num, status);
  if (c->expect[0]) {
    if (TF_GetCode(status) != TF_INVALID_ARGUMENT) {
      fail_msg("%s (eager): expected INVALID_ARGUMENT, got %d: %s", c->name,
               (int)TF_GetCode(status), TF_Message(status));
    }
    check_message(c, "eager", TF_Message(status));
  } else {
    if (TF_GetCode(status) != TF_OK) {
      fail_msg("%s (eager): expected OK, got %s", c->name, TF_Message(status));
    }
    int64_t dims[LOOM_MAX_RANK];
    int rank = TFE_TensorHandleNumDims(outputs[0], status);
    ASSERT_TF_OK(status);
    for (int i = 0; i < rank && i < LOOM_MAX_RANK; ++i) {
      dims[i] = TFE_TensorHandleDim(outputs[0], i, status);
    }
    check_shape(c, "eager", rank, dims);
    for (int i = 0; i < num; ++i) TFE_DeleteTensorHandle(outputs[i]);
  }
  for (int i = 0; i < c->num_inputs; ++i) TFE_DeleteTensorHandle(handles[i]);
  TFE_DeleteOp(op);
  TF_DeleteStatus(status);
}

static void run_kernel(const case_t* c) {
  loom_tensor_t* inputs[kMaxInputs] = {NULL};
  for (int i = 0; i < c->num_inputs; ++i) inputs[i] = make_tensor(&c->in[i]);
  loom_op_attrs_t attrs;
  set_attrs(c, &attrs);
  loom_kernel_run_options_t options = {.host = g_host};
  loom_tensor_t* outputs[4] = {NULL};
  int32_t produced = 0;
  int32_t num = c->num_outputs ? c->num_outputs : 1;
  loom_status_t status = loom_kernel_run(&options, c->op, inputs, c->num_inputs,
                                         &attrs, outputs, num, &produced);
  loom_op_attrs_deinitialize(&attrs);
  if (!status && !c->expect[0]) {
    const loom_shape_t* shape = loom_tensor_shape(outputs[0]);
    check_shape(c, "kernel", shape->rank, shape->dims);
  }
  for (int32_t i = 0; !status && i < produced; ++i) {
    loom_tensor_release(outputs[i]);
  }
  check_status(c, "kernel", status);
}

static void run_shape_fn(const case_t* c) {
  const loom_op_def_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_op_registry_lookup(loom_op_registry_global(), c->op, &op));
  loom_tensor_t* tensors[kMaxInputs] = {NULL};
  loom_shape_t shapes[kMaxInputs];
  loom_dtype_t dtypes[kMaxInputs];
  for (int i = 0; i < c->num_inputs; ++i) {
    tensors[i] = make_tensor(&c->in[i]);
    shapes[i] = *loom_tensor_shape(tensors[i]);
    dtypes[i] = c->in[i].dtype;
  }
  loom_op_attrs_t attrs;
  set_attrs(c, &attrs);
  LOOM_ASSERT_OK(loom_op_def_complete_attrs(op, dtypes, c->num_inputs, &attrs));
  loom_shape_t out[4];
  loom_status_t status = loom_op_def_infer_shapes(
      op, &attrs, shapes, dtypes, tensors, c->num_inputs, out,
      c->num_outputs ? c->num_outputs : op->num_outputs);
  loom_op_attrs_deinitialize(&attrs);
  for (int i = 0; i < c->num_inputs; ++i) loom_tensor_release(tensors[i]);
  if (!status && !c->expect[0]) {
    check_shape(c, "shape function", out[0].rank, out[0].dims);
  }
  check_status(c, "shape function", status);
}

static void run_cases(const case_t* cases, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    run_kernel(&cases[i]);
    if (!cases[i].kernel_only) run_shape_fn(&cases[i]);
    run_eager(&cases[i]);
  }
}

#define F32(r, ...)                                                 \
  {                                                                 \
    .dtype = LOOM_DTYPE_FLOAT, .rank = (r), .dims = { __VA_ARGS__ } \
  }
#define BOOLS(r, ...)                                              \
  {                                                                \
    .dtype = LOOM_DTYPE_BOOL, .rank = (r), .dims = { __VA_ARGS__ } \
  }
#define I64(n, v) \
  { .dtype = LOOM_DTYPE_INT64, .rank = 1, .dims = {(n)}, .values = (v) }
#define I32(n, v) \
  { .dtype = LOOM_DTYPE_INT32, .rank = 1, .dims = {(n)}, .values = (v) }
#define I32_SCALAR(v) \
  { .dtype = LOOM_DTYPE_INT32, .rank = 0, .values = (v) }
#define I64_SCALAR(v) \
  { .dtype = LOOM_DTYPE_INT64, .rank = 0, .values = (v) }
#define I32_MATRIX(r, c, v) \
  { .dtype = LOOM_DTYPE_INT32, .rank = 2, .dims = {(r), (c)}, .values = (v) }
#define I64_MATRIX(r, c, v) \
  { .dtype = LOOM_DTYPE_INT64, .rank = 2, .dims = {(r), (c)}, .values = (v) }

#define RUN(cases) run_cases((cases), sizeof(cases) / sizeof((cases)[0]))

//===----------------------------------------------------------------------===//
// Reshape, Fill, Range
//===----------------------------------------------------------------------===//

static const int64_t kWrapToZero[] = {P32, P32, -1};
static const int64_t kHugeWithZero[] = {P62, 4, 0};
static const int64_t kHugeInferred[] = {P62, 4, -1};
static const int64_t kSquare32[] = {P32, P32};
static const int64_t kMin[] = {INT64_MIN};
static const int64_t kMax[] = {INT64_MAX};
static const int64_t kOne[] = {1};
static const int64_t kZero[] = {0};

static void reshape_fill_range_reject_overflowing_sizes(void** state) {
  (void)state;
  const case_t cases[] = {
      {.name = "Reshape 6 to [2^32, 2^32, -1]",
       .op = "Reshape",
       .num_inputs = 2,
       .in = {F32(1, 6), I64(3, kWrapToZero)},
       .expect = {"Reshape", "shape", "[4294967296, 4294967296, -1]",
                  "overflows"}},
      {.name = "Reshape of nothing to [2^62, 4, -1]",
       .op = "Reshape",
       .num_inputs = 2,
       .in = {F32(1, 0), I64(3, kHugeInferred)},
       .expect = {"Reshape", "shape", "[4611686018427387904, 4, -1]",
                  "overflows"}},
      {.name = "Reshape of nothing to [2^62, 4, 0]",
       .op = "Reshape",
       .num_inputs = 2,
       .in = {F32(1, 0), I64(3, kHugeWithZero)},
       .out_rank = 3,
       .out_dims = {P62, 4, 0}},
      {.name = "Fill [2^32, 2^32]",
       .op = "Fill",
       .num_inputs = 2,
       .in = {I64(2, kSquare32), F32(0)},
       .expect = {"Fill", "dims", "[4294967296, 4294967296]", "overflows"}},
      {.name = "Fill [2^62, 4, 0]",
       .op = "Fill",
       .num_inputs = 2,
       .in = {I64(3, kHugeWithZero), F32(0)},
       .out_rank = 3,
       .out_dims = {P62, 4, 0}},
      {.name = "Range INT64_MIN to INT64_MAX",
       .op = "Range",
       .num_inputs = 3,
       .in = {I64_SCALAR(kMin), I64_SCALAR(kMax), I64_SCALAR(kOne)},
       .expect = {"Range", "(-9223372036854775808, 9223372036854775807, 1)",
                  "overflows"}},
  };
  RUN(cases);
}

//===----------------------------------------------------------------------===//
// Pad, Tile, BroadcastTo
//===----------------------------------------------------------------------===//

static const int64_t kPadMax[] = {INT64_MAX, INT64_MAX};
static const int64_t kPadWrapToOne[] = {0, 0, INT64_MAX - 1, 2};
static const int64_t kTileHuge[] = {1, P40};
static const int64_t kTileSquare[] = {P32, P32};
static const int64_t kTileEmpty[] = {P40, P40, 1};

static void pad_tile_broadcast_to_reject_overflowing_sizes(void** state) {
  (void)state;
  const case_t cases[] = {
      {.name = "Pad [3] by INT64_MAX on both sides",
       .op = "Pad",
       .num_inputs = 2,
       .in = {F32(1, 3), I64_MATRIX(1, 2, kPadMax)},
       .expect = {"Pad", "paddings", "9223372036854775807", "overflows"}},
      {.name = "PadV2 [3] by INT64_MAX on both sides",
       .op = "PadV2",
       .num_inputs = 3,
       .in = {F32(1, 3), I64_MATRIX(1, 2, kPadMax), F32(0)},
       .expect = {"PadV2", "paddings", "9223372036854775807", "overflows"}},
      {.name = "Pad [2, 3] to a dim that wraps",
       .op = "Pad",
       .num_inputs = 2,
       .in = {F32(2, 2, 3), I64_MATRIX(2, 2, kPadWrapToOne)},
       .expect = {"Pad", "paddings", "9223372036854775806", "overflows"}},
      {.name = "Tile a dim past int64",
       .op = "Tile",
       .num_inputs = 2,
       .in = {F32(2, 0, P40), I64(2, kTileHuge)},
       .expect = {"Tile", "multiples", "1099511627776", "overflows"}},
      {.name = "Tile to 2^64 elements",
       .op = "Tile",
       .num_inputs = 2,
       .in = {F32(2, 1, 1), I64(2, kTileSquare)},
       .expect = {"Tile", "multiples", "[4294967296, 4294967296]",
                  "overflows"}},
      {.name = "Tile an empty tensor with huge dims",
       .op = "Tile",
       .num_inputs = 2,
       .in = {F32(3, 1, 1, 0), I64(3, kTileEmpty)},
       .out_rank = 3,
       .out_dims = {P40, P40, 0}},
      {.name = "BroadcastTo [2^32, 2^32]",
       .op = "BroadcastTo",
       .num_inputs = 2,
       .in = {F32(1, 1), I64(2, kTileSquare)},
       .expect = {"BroadcastTo", "shape", "[4294967296, 4294967296]",
                  "overflows"}},
  };
  RUN(cases);
}

//===----------------------------------------------------------------------===//
// Concat, ConcatV2, Pack, Split, SplitV, Unpack
//===----------------------------------------------------------------------===//

// BiasAddGrad of empty inputs (cases the op fuzzer found): NCHW with
// empty inner dims divided by their count, and a huge dim beside a 0 made
// the outer product overflow. The gradient is one sum per channel.
static void bias_add_grad_of_empty_inputs(void** state) {
  (void)state;
  const case_t cases[] = {
      {.name = "BiasAddGrad NCHW with empty inner dims",
       .op = "BiasAddGrad",
       .num_inputs = 1,
       .in = {F32(3, 3, 2, 0)},
       .string_name = "data_format",
       .string_value = "NCHW",
       .out_rank = 1,
       .out_dims = {2}},
      {.name = "BiasAddGrad NCHW of [5, 5, 0, 0, 0]",
       .op = "BiasAddGrad",
       .num_inputs = 1,
       .in = {F32(5, 5, 5, 0, 0, 0)},
       .string_name = "data_format",
       .string_value = "NCHW",
       .out_rank = 1,
       .out_dims = {5}},
      {.name = "BiasAddGrad NHWC with no channels",
       .op = "BiasAddGrad",
       .num_inputs = 1,
       .in = {F32(3, 4, 2, 0)},
       .out_rank = 1,
       .out_dims = {0}},
      {.name = "BiasAddGrad NHWC of a huge dim beside a 0",
       .op = "BiasAddGrad",
       .num_inputs = 1,
       .in = {F32(6, P62, 1, 1, 4, 0, 4)},
       .out_rank = 1,
       .out_dims = {4}},
  };
  RUN(cases);
}

static const int64_t kSplitsMax[] = {INT64_MAX, 2, -1};
static const int64_t kSplitsSum[] = {INT64_MAX, 1};
static const int64_t kAxis0[] = {0};
static const int64_t kAxis1[] = {1};
static const int64_t kAxis3[] = {3};

static void concat_and_split_reject_overflowing_sums(void** state) {
  (void)state;
  const case_t cases[] = {
      {.name = "ConcatV2 of [0, 2^62] twice along 1",
       .op = "ConcatV2",
       .num_inputs = 3,
       .in = {F32(2, 0, P62), F32(2, 0, P62), I32_SCALAR(kAxis1)},
       .expect = {"ConcatV2", "values",
                  "4611686018427387904 (values[0, 1)) + 4611686018427387904",
                  "overflows"}},
      {.name = "ConcatV2 of [2^62, 0] twice along 0",
       .op = "ConcatV2",
       .num_inputs = 3,
       .in = {F32(2, P62, 0), F32(2, P62, 0), I32_SCALAR(kAxis0)},
       .expect = {"ConcatV2", "values", "4611686018427387904", "overflows"}},
      {.name = "Concat of [0, 2^62] twice along 1",
       .op = "Concat",
       .num_inputs = 3,
       .in = {I32_SCALAR(kAxis1), F32(2, 0, P62), F32(2, 0, P62)},
       .expect = {"Concat", "values",
                  "4611686018427387904 (values[0, 1)) + 4611686018427387904",
                  "overflows"}},
      {.name = "Concat of empty tensors with huge dims",
       .op = "Concat",
       .num_inputs = 3,
       .in = {I32_SCALAR(kAxis1), F32(3, P40, P40, 0), F32(3, P40, P40, 0)},
       .out_rank = 3,
       .out_dims = {P40, 2 * P40, 0}},
      {.name = "ConcatV2 of empty tensors with huge dims",
       .op = "ConcatV2",
       .num_inputs = 3,
       .in = {F32(3, P40, P40, 0), F32(3, P40, P40, 0), I32_SCALAR(kAxis1)},
       .out_rank = 3,
       .out_dims = {P40, 2 * P40, 0}},
      {.name = "SplitV sizes summing past int64",
       .op = "SplitV",
       .num_inputs = 3,
       .in = {F32(1, 6), I64(3, kSplitsMax), I32_SCALAR(kAxis0)},
       .attr_names = {"num_split"},
       .attr_values = {3},
       .num_outputs = 3,
       .expect = {"SplitV", "size_splits", "9223372036854775807", "overflows"}},
      {.name = "SplitV sizes summing to INT64_MIN",
       .op = "SplitV",
       .num_inputs = 3,
       .in = {F32(1, 6), I64(2, kSplitsSum), I32_SCALAR(kAxis0)},
       .attr_names = {"num_split"},
       .attr_values = {2},
       .num_outputs = 2,
       .expect = {"SplitV", "size_splits", "[9223372036854775807, 1]",
                  "overflows"}},
      // A split_dim of no elements has no value to read (the fuzzer's
      // heap overflow): its shape is refused first.
      {.name = "Split with an empty split_dim of rank 2",
       .op = "Split",
       .num_inputs = 2,
       .in = {I32_MATRIX(0, 3, NULL), F32(2, 1, 2)},
       .attr_names = {"num_split"},
       .attr_values = {1},
       .expect = {"split_dim must be a scalar", "[0,3]"}},
      {.name = "SplitV with an empty split_dim of rank 2",
       .op = "SplitV",
       .num_inputs = 3,
       .in = {F32(2, 1, 2), I64(1, kAxis1), I32_MATRIX(0, 3, NULL)},
       .attr_names = {"num_split"},
       .attr_values = {1},
       .expect = {"split_dim must be a scalar", "[0,3]"}},
      {.name = "Split an empty tensor with huge outer dims",
       .op = "Split",
       .num_inputs = 2,
       .in = {I32_SCALAR(kAxis3), F32(4, P40, P40, 0, 2)},
       .attr_names = {"num_split"},
       .attr_values = {2},
       .num_outputs = 2,
       .out_rank = 4,
       .out_dims = {P40, P40, 0, 1}},
  };
  RUN(cases);
}

static void pack_and_unpack_handle_empty_tensors_with_huge_dims(void** state) {
  (void)state;
  const case_t cases[] = {
      {.name = "Unpack an empty tensor with huge outer dims",
       .op = "Unpack",
       .num_inputs = 1,
       .in = {F32(4, P40, P40, 0, 2)},
       .attr_names = {"num", "axis"},
       .attr_values = {2, 3},
       .num_outputs = 2,
       .out_rank = 3,
       .out_dims = {P40, P40, 0}},
      {.name = "Pack empty tensors with huge dims",
       .op = "Pack",
       .num_inputs = 2,
       .in = {F32(3, P40, P40, 0), F32(3, P40, P40, 0)},
       .attr_names = {"axis"},
       .attr_values = {2},
       .out_rank = 4,
       .out_dims = {P40, P40, 2, 0}},
  };
  RUN(cases);
}

//===----------------------------------------------------------------------===//
// Slice, StridedSlice
//===----------------------------------------------------------------------===//

static const int64_t kBegin2[] = {2};
static const int64_t kBeginMin[] = {INT64_MIN};
static const int64_t kMinusOne[] = {-1};
static const int64_t kMinus7[] = {-7};
static const int64_t kSeven[] = {7};
static const int64_t kBegin00[] = {0, 0};
static const int64_t kEnd23[] = {2, 3};
static const int64_t kStridesHuge[] = {INT64_MAX, 1};
static const int64_t kBegin000[] = {0, 0, 0};
static const int64_t kSizeRest[] = {0, -1, -1};

static void slices_reject_out_of_range_values_as_given(void** state) {
  (void)state;
  const case_t cases[] = {
      {.name = "Slice size INT64_MAX from 2",
       .op = "Slice",
       .num_inputs = 3,
       .in = {F32(1, 5), I64(1, kBegin2), I64(1, kMax)},
       .expect = {"size[0]", "9223372036854775807"}},
      {.name = "Slice from INT64_MIN to the end",
       .op = "Slice",
       .num_inputs = 3,
       .in = {F32(1, 5), I64(1, kBeginMin), I64(1, kMinusOne)},
       .expect = {"begin[0]", "-9223372036854775808"}},
      {.name = "StridedSlice index -7 of 6",
       .op = "StridedSlice",
       .num_inputs = 4,
       .in = {F32(1, 6), I64(1, kMinus7), I64(1, kZero), I64(1, kOne)},
       .attr_names = {"shrink_axis_mask"},
       .attr_values = {1},
       .expect = {"slice index -7 of dimension 0 out of bounds"}},
      {.name = "StridedSlice index 7 of 6",
       .op = "StridedSlice",
       .num_inputs = 4,
       .in = {F32(1, 6), I64(1, kSeven), I64(1, kZero), I64(1, kOne)},
       .attr_names = {"shrink_axis_mask"},
       .attr_values = {1},
       .expect = {"slice index 7 of dimension 0 out of bounds"}},
      {.name = "StridedSlice stride INT64_MAX",
       .op = "StridedSlice",
       .num_inputs = 4,
       .in = {F32(2, 2, 3), I64(2, kBegin00), I64(2, kEnd23),
              I64(2, kStridesHuge)},
       .out_rank = 2,
       .out_dims = {1, 3}},
      {.name = "StridedSlice ellipsis_mask INT64_MIN",
       .op = "StridedSlice",
       .num_inputs = 4,
       .in = {F32(2, 2, 3), I64(2, kBegin00), I64(2, kEnd23),
              I64(2, kStridesHuge)},
       .attr_names = {"ellipsis_mask", "new_axis_mask", "begin_mask"},
       .attr_values = {INT64_MIN, INT64_MIN, INT64_MIN},
       .out_rank = 2,
       .out_dims = {1, 3}},
      {.name = "Slice of an empty tensor with huge dims",
       .op = "Slice",
       .num_inputs = 3,
       .in = {F32(3, 0, P40, P40), I64(3, kBegin000), I64(3, kSizeRest)},
       .out_rank = 3,
       .out_dims = {0, P40, P40}},
  };
  RUN(cases);
}

//===----------------------------------------------------------------------===//
// Gather, OneHot, Transpose, ExpandDims
//===----------------------------------------------------------------------===//

static const int64_t kAxis2[] = {2};
static const int64_t kPerm210[] = {2, 1, 0};

static void indexing_ops_check_sizes_and_rank_limits(void** state) {
  (void)state;
  const case_t cases[] = {
      {.name = "GatherV2 to 2^80 elements",
       .op = "GatherV2",
       .num_inputs = 3,
       .in = {F32(3, P40, P40, 0), I64(1, kZero), I64_SCALAR(kAxis2)},
       .expect = {"GatherV2", "[1099511627776, 1099511627776, 1]",
                  "overflows"}},
      {.name = "GatherV2 from an empty tensor with huge dims",
       .op = "GatherV2",
       .num_inputs = 3,
       .in = {F32(4, P40, P40, 0, 2), I64(1, kZero), I64_SCALAR(kAxis3)},
       .out_rank = 4,
       .out_dims = {P40, P40, 0, 1}},
      {.name = "Transpose an empty tensor with huge dims",
       .op = "Transpose",
       .num_inputs = 2,
       .in = {F32(3, 0, P40, P40), I64(3, kPerm210)},
       .out_rank = 3,
       .out_dims = {P40, P40, 0}},
  };
  RUN(cases);
}

static const int64_t kZeros65[65] = {0};

static void spec_lengths_name_their_limits(void** state) {
  (void)state;
  const case_t cases[] = {
      {.name = "Squeeze with 65 squeeze_dims",
       .op = "Squeeze",
       .num_inputs = 1,
       .in = {F32(1, 1)},
       .list_name = "squeeze_dims",
       .list_values = kZeros65,
       .list_count = 65,
       .expect = {"squeeze_dims has 65 entries", "above the limit of 64"}},
      {.name = "Shape in int32 of a dim past int32",
       .op = "Shape",
       .num_inputs = 1,
       .in = {F32(2, P40, 0)},
       .kernel_only = true,  // the shape function gives [2] either way
       .expect = {"Shape output type is 32-bit but dim 0 is 1099511627776"}},
      {.name = "StridedSlice with 32-entry specs",
       .op = "StridedSlice",
       .num_inputs = 4,
       .in = {F32(1, 1), I64(32, kZeros65), I64(32, kZeros65),
              I64(32, kZeros65)},
       .expect = {"StridedSlice", "have 32 entries", "above the limit of 31"}},
  };
  RUN(cases);
}

//===----------------------------------------------------------------------===//
// Element-wise broadcasting
//===----------------------------------------------------------------------===//

static void broadcasts_of_empty_tensors_with_huge_dims_plan_safely(
    void** state) {
  (void)state;
  const case_t cases[] = {
      {.name = "AddV2 [0, 2^40, 1] + [0, 1, 2^40]",
       .op = "AddV2",
       .num_inputs = 2,
       .in = {F32(3, 0, P40, 1), F32(3, 0, 1, P40)},
       .out_rank = 3,
       .out_dims = {0, P40, P40}},
      {.name = "Less [0, 2^40, 1] < [0, 1, 2^40]",
       .op = "Less",
       .num_inputs = 2,
       .in = {F32(3, 0, P40, 1), F32(3, 0, 1, P40)},
       .out_rank = 3,
       .out_dims = {0, P40, P40}},
      {.name = "SelectV2 over [0, 2^40, 2^40]",
       .op = "SelectV2",
       .num_inputs = 3,
       .in = {BOOLS(3, 0, P40, 1), F32(3, 0, 1, P40), F32(1, 1)},
       .out_rank = 3,
       .out_dims = {0, P40, P40}},
  };
  RUN(cases);
}

// Shapes too large to hold in memory reach only the shape function.
static void broadcast_shapes_past_int64_are_rejected(void** state) {
  (void)state;
  // NotEqual without incompatible_shape_error still rejects an overflow
  // (it answers shapes that do not broadcast with a scalar).
  const char* const ops[] = {"AddV2", "Less", "Maximum", "NotEqual"};
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); ++i) {
    const loom_op_def_t* op = NULL;
    LOOM_ASSERT_OK(
        loom_op_registry_lookup(loom_op_registry_global(), ops[i], &op));
    loom_shape_t shapes[2];
    const int64_t a[2] = {P32, 1}, b[2] = {1, P32};
    LOOM_ASSERT_OK(loom_shape_initialize(&shapes[0], a, 2));
    LOOM_ASSERT_OK(loom_shape_initialize(&shapes[1], b, 2));
    loom_dtype_t dtypes[2] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT};
    loom_op_attrs_t attrs;
    loom_op_attrs_initialize(&attrs, loom_allocator_default());
    if (strcmp(ops[i], "NotEqual") == 0) {
      LOOM_ASSERT_OK(
          loom_op_attrs_set_bool(&attrs, "incompatible_shape_error", false));
    }
    LOOM_ASSERT_OK(loom_op_def_complete_attrs(op, dtypes, 2, &attrs));
    loom_shape_t out[1];
    loom_status_t status =
        loom_op_def_infer_shapes(op, &attrs, shapes, dtypes, NULL, 2, out, 1);
    loom_op_attrs_deinitialize(&attrs);
    char text[512];
    loom_status_format(status, text, sizeof(text));
    assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(text, ops[i]));
    assert_non_null(strstr(text, "[4294967296, 1] vs. [1, 4294967296]"));
    assert_non_null(strstr(text, "overflows"));
    loom_status_free(status);
  }
}

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_builtin_ops_register());
  LOOM_ASSERT_OK(loom_host_context_create(NULL, &g_host));
  g_ctx = new_context(false);
  return 0;
}

static int teardown(void** state) {
  (void)state;
  TFE_DeleteContext(g_ctx);
  loom_host_context_destroy(g_host);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reshape_fill_range_reject_overflowing_sizes),
      cmocka_unit_test(pad_tile_broadcast_to_reject_overflowing_sizes),
      cmocka_unit_test(concat_and_split_reject_overflowing_sums),
      cmocka_unit_test(bias_add_grad_of_empty_inputs),
      cmocka_unit_test(pack_and_unpack_handle_empty_tensors_with_huge_dims),
      cmocka_unit_test(slices_reject_out_of_range_values_as_given),
      cmocka_unit_test(indexing_ops_check_sizes_and_rank_limits),
      cmocka_unit_test(spec_lengths_name_their_limits),
      cmocka_unit_test(broadcasts_of_empty_tensors_with_huge_dims_plan_safely),
      cmocka_unit_test(broadcast_shapes_past_int64_are_rejected),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
