// MatrixDiagV3 and MatrixDiagPartV3 (TensorFlow's signatures, attrs and
// messages): batched matrices from a band of diagonals and back. Diagonal
// d (k[0] <= d <= k[1]; d > 0 above the main one) is row k[1] - d of the
// packed form, which is max_diag_len long; a shorter diagonal is padded
// with `padding_value`, on the side `align` says ("RIGHT_LEFT": diagonals
// above the main one are right-aligned, those below left-aligned).

#include <inttypes.h>
#include <string.h>

#include "kernels/array_internal.h"
#include "kernels/builtin_families.h"

// The diagonal band and its layout.
typedef struct diag_plan_t {
  int64_t lower, upper;       // k[0], k[1]
  int64_t rows, cols;         // of the matrices
  int64_t max_len;            // of a packed diagonal
  bool left_super, left_sub;  // alignment of d >= 0 and d < 0
} diag_plan_t;

static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
static int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}

static int64_t diag_length(const diag_plan_t* p, int64_t d) {
  return min64(p->rows + min64(d, 0), p->cols - max64(d, 0));
}

// Where element 0 of diagonal d sits in its packed row.
static int64_t diag_offset(const diag_plan_t* p, int64_t d) {
  bool left = d >= 0 ? p->left_super : p->left_sub;
  return left ? 0 : p->max_len - diag_length(p, d);
}

static loom_status_t read_align(const loom_op_attrs_t* attrs,
                                diag_plan_t* plan) {
  plan->left_super = false;
  plan->left_sub = true;  // the default, RIGHT_LEFT
  loom_attr_value_t value;
  if (!loom_op_attrs_get(attrs, "align", &value) ||
      value.kind != LOOM_ATTR_KIND_STRING || value.is_list) {
    return loom_ok_status();
  }
  static const char* const kAligns[] = {"LEFT_RIGHT", "RIGHT_LEFT", "LEFT_LEFT",
                                        "RIGHT_RIGHT"};
  for (int i = 0; i < 4; ++i) {
    if (value.u.string.size == strlen(kAligns[i]) &&
        memcmp(value.u.string.data, kAligns[i], value.u.string.size) == 0) {
      plan->left_super = i == 0 || i == 2;
      plan->left_sub = i == 1 || i == 2;
      return loom_ok_status();
    }
  }
  return loom__array_invalid("Unknown align: %.*s", (int)value.u.string.size,
                             value.u.string.data);
}

// k: a scalar or a vector of one or two elements.
static loom_status_t read_k(const loom_tensor_t* k, diag_plan_t* plan) {
  char text[128];
  const loom_shape_t* shape = loom_tensor_shape(k);
  if (shape->rank > 1) {
    return loom__array_invalid(
        "diag_index must be a scalar or vector, received shape: %s",
        loom__shape_debug_string(shape, text, sizeof(text)));
  }
  int64_t n = loom_tensor_num_elements(k);
  if (n < 1) {
    return loom__array_invalid(
        "diag_index must have at least one element, received shape: %s",
        loom__shape_debug_string(shape, text, sizeof(text)));
  }
  if (n > 2) {
    return loom__array_invalid(
        "diag_index must have only one or two elements, received %" PRId64
        " elements.",
        n);
  }
  plan->lower = loom__array_index_at(k, 0);
  plan->upper = n == 2 ? loom__array_index_at(k, 1) : plan->lower;
  if (plan->lower > plan->upper) {
    return loom__array_invalid(
        "lower_diag_index must not be greater than upper_diag_index, "
        "received lower_diag_index = %" PRId64
        " and upper_diag_index = "
        "%" PRId64,
        plan->lower, plan->upper);
  }
  return loom_ok_status();
}

static loom_status_t need_scalar(const char* name, const loom_shape_t* shape) {
  char text[128];
  if (shape->rank == 0) return loom_ok_status();
  return loom__array_invalid(
      "%s must be a scalar, received shape: %s", name,
      loom__shape_debug_string(shape, text, sizeof(text)));
}

//===----------------------------------------------------------------------===//
// MatrixDiagPartV3
//===----------------------------------------------------------------------===//

// The plan and the output shape of MatrixDiagPartV3(input, k, padding).
static loom_status_t part_plan(const loom_shape_t* input,
                               const loom_tensor_t* k,
                               const loom_shape_t* padding, diag_plan_t* plan,
                               loom_shape_t* out) {
  char text[128];
  if (input->rank < 2) {
    return loom__array_invalid(
        "input must be at least 2-dim, received shape: %s",
        loom__shape_debug_string(input, text, sizeof(text)));
  }
  LOOM_RETURN_IF_ERROR(read_k(k, plan));
  LOOM_RETURN_IF_ERROR(need_scalar("padding_value", padding));
  const int64_t* in_dims = loom_shape_dims(input);
  plan->rows = in_dims[input->rank - 2];
  plan->cols = in_dims[input->rank - 1];
  const int64_t bounds[2] = {plan->lower, plan->upper};
  const char* names[2] = {"lower_diag_index", "upper_diag_index"};
  for (int i = 0; i < 2; ++i) {
    int64_t d = bounds[i];
    if (!((-plan->rows < d && d < plan->cols) || d == 0)) {
      return loom__array_invalid("%s is out of bound: %" PRId64
                                 ". It must be between %" PRId64
                                 " and %" PRId64,
                                 names[i], d, -plan->rows, plan->cols);
    }
  }
  plan->max_len = min64(plan->rows + min64(plan->upper, 0),
                        plan->cols - max64(plan->lower, 0));
  if (plan->max_len < 0) plan->max_len = 0;
  int64_t num_diags = plan->upper - plan->lower + 1;
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t rank = input->rank - 2;
  memcpy(dims, in_dims, sizeof(int64_t) * (size_t)rank);
  if (num_diags > 1) dims[rank++] = num_diags;
  dims[rank++] = plan->max_len;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(out, dims, rank));
  return loom__array_check_count("MatrixDiagPartV3",
                                 "input and k give diagonals of shape", dims,
                                 rank, out);
}

static loom_status_t part_shape_fn(loom_shape_inference_context_t* c,
                                   void* user_data) {
  (void)user_data;
  loom_shape_t input, k_shape, padding, out = loom_shape_unknown();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &input));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &k_shape));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 2, &padding));
  const loom_tensor_t* k = loom_shape_inference_context_input_tensor(c, 1);
  if (input.rank >= 0 && input.rank < 2) {
    char text[128];
    return loom__array_invalid(
        "input must be at least 2-dim, received shape: %s",
        loom__shape_debug_string(&input, text, sizeof(text)));
  }
  if (k && loom_shape_is_fully_defined(&input) && input.rank >= 0 &&
      padding.rank >= 0) {
    diag_plan_t plan;
    LOOM_RETURN_IF_ERROR(part_plan(&input, k, &padding, &plan, &out));
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

// Copies element (m, n) of each matrix to or from its packed place, for
// every diagonal of the band; `to_packed` picks the direction. The packed
// side's other places are set to *padding first when `pad` is set.
static void move_band(const diag_plan_t* p, size_t size, int64_t batches,
                      char* matrices, char* packed, bool to_packed) {
  int64_t num_diags = p->upper - p->lower + 1;
  size_t matrix_bytes = (size_t)(p->rows * p->cols) * size;
  size_t packed_bytes = (size_t)(num_diags * p->max_len) * size;
  for (int64_t b = 0; b < batches; ++b) {
    char* matrix = matrices + (size_t)b * matrix_bytes;
    char* rows = packed + (size_t)b * packed_bytes;
    for (int64_t d = p->upper; d >= p->lower; --d) {
      char* row = rows + (size_t)((p->upper - d) * p->max_len) * size;
      int64_t length = diag_length(p, d), offset = diag_offset(p, d);
      int64_t m = max64(-d, 0), n = max64(d, 0);
      for (int64_t j = 0; j < length; ++j) {
        char* element = matrix + (size_t)((m + j) * p->cols + n + j) * size;
        char* slot = row + (size_t)(offset + j) * size;
        if (to_packed) {
          memcpy(slot, element, size);
        } else {
          memcpy(element, slot, size);
        }
      }
    }
  }
}

static void fill(char* data, int64_t count, const void* value, size_t size) {
  for (int64_t i = 0; i < count; ++i) {
    memcpy(data + (size_t)i * size, value, size);
  }
}

static loom_status_t part_run(loom_kernel_context_t* ctx,
                              loom_tensor_t* const* inputs) {
  diag_plan_t plan;
  LOOM_RETURN_IF_ERROR(read_align(loom_kernel_context_attrs(ctx), &plan));
  const loom_shape_t* shape = loom_tensor_shape(inputs[0]);
  loom_shape_t out_shape;
  LOOM_RETURN_IF_ERROR(part_plan(shape, inputs[1], loom_tensor_shape(inputs[2]),
                                 &plan, &out_shape));
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out));
  int64_t count = loom_tensor_num_elements(out);
  if (count == 0) return loom_ok_status();
  size_t size = loom__array_element_size(loom_tensor_dtype(out));
  fill(loom_tensor_data(out), count, loom_tensor_data(inputs[2]), size);
  int64_t batches = loom__array_dims_product(shape, 0, shape->rank - 2);
  move_band(&plan, size, batches, loom_tensor_data(inputs[0]),
            loom_tensor_data(out), true);
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// MatrixDiagV3
//===----------------------------------------------------------------------===//

// The plan and the output shape of MatrixDiagV3(diagonal, k, num_rows,
// num_cols, padding); -1 rows or columns are inferred.
static loom_status_t diag_plan(const loom_shape_t* diagonal,
                               const loom_tensor_t* k,
                               const loom_tensor_t* num_rows,
                               const loom_tensor_t* num_cols,
                               const loom_shape_t* padding, diag_plan_t* plan,
                               loom_shape_t* out) {
  char text[128];
  LOOM_RETURN_IF_ERROR(read_k(k, plan));
  LOOM_RETURN_IF_ERROR(need_scalar("num_rows", loom_tensor_shape(num_rows)));
  LOOM_RETURN_IF_ERROR(need_scalar("num_cols", loom_tensor_shape(num_cols)));
  LOOM_RETURN_IF_ERROR(need_scalar("padding_value", padding));
  int32_t rank = diagonal->rank;
  if (rank < 1) {
    return loom__array_invalid(
        "diagonal must be at least 1-dim, received shape: %s",
        loom__shape_debug_string(diagonal, text, sizeof(text)));
  }
  int64_t num_diags = plan->upper - plan->lower + 1;
  const int64_t* in_dims = loom_shape_dims(diagonal);
  if (plan->lower != plan->upper &&
      (rank < 2 || in_dims[rank - 2] != num_diags)) {
    return loom__array_invalid(
        "The number of diagonals provided in the input does not match the "
        "lower_diag_index and upper_diag_index range.");
  }
  plan->max_len = in_dims[rank - 1];
  int64_t min_rows = 0, min_cols = 0;
  if (!loom__size_add(plan->max_len, -min64(plan->upper, 0), &min_rows) ||
      !loom__size_add(plan->max_len, max64(plan->lower, 0), &min_cols)) {
    return loom__size_overflow_error("MatrixDiagV3", "diagonals of length",
                                     "%" PRId64 " with k [%" PRId64 ", %" PRId64
                                     "]",
                                     plan->max_len, plan->lower, plan->upper);
  }
  int64_t rows = loom__array_index_at(num_rows, 0);
  int64_t cols = loom__array_index_at(num_cols, 0);
  if (rows == -1 && cols == -1) {
    rows = cols = max64(min_rows, min_cols);
  } else if (rows == -1) {
    rows = min_rows;
  } else if (cols == -1) {
    cols = min_cols;
  }
  if (rows < min_rows) {
    return loom__array_invalid("The number of rows is too small.");
  }
  if (cols < min_cols) {
    return loom__array_invalid("The number of columns is too small.");
  }
  if (rows != min_rows && cols != min_cols) {
    return loom__array_invalid(
        "The number of rows or columns is not consistent with the specified "
        "d_lower, d_upper, and diagonal.");
  }
  plan->rows = rows;
  plan->cols = cols;
  int32_t batch_rank = plan->lower == plan->upper ? rank - 1 : rank - 2;
  if (batch_rank + 2 > LOOM_MAX_SHAPE_RANK) {
    return loom__array_invalid(
        "MatrixDiagV3: the result would have rank %d, above the maximum "
        "rank %d",
        batch_rank + 2, LOOM_MAX_SHAPE_RANK);
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  memcpy(dims, in_dims, sizeof(int64_t) * (size_t)batch_rank);
  dims[batch_rank] = rows;
  dims[batch_rank + 1] = cols;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(out, dims, batch_rank + 2));
  return loom__array_check_count("MatrixDiagV3",
                                 "diagonal, num_rows and num_cols give shape",
                                 dims, batch_rank + 2, out);
}

static loom_status_t diag_shape_fn(loom_shape_inference_context_t* c,
                                   void* user_data) {
  (void)user_data;
  loom_shape_t diagonal, padding, out = loom_shape_unknown();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &diagonal));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 4, &padding));
  const loom_tensor_t* k = loom_shape_inference_context_input_tensor(c, 1);
  const loom_tensor_t* rows = loom_shape_inference_context_input_tensor(c, 2);
  const loom_tensor_t* cols = loom_shape_inference_context_input_tensor(c, 3);
  if (k && rows && cols && diagonal.rank >= 0 &&
      loom_shape_is_fully_defined(&diagonal) && padding.rank >= 0) {
    diag_plan_t plan;
    LOOM_RETURN_IF_ERROR(
        diag_plan(&diagonal, k, rows, cols, &padding, &plan, &out));
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

static loom_status_t diag_run(loom_kernel_context_t* ctx,
                              loom_tensor_t* const* inputs) {
  diag_plan_t plan;
  LOOM_RETURN_IF_ERROR(read_align(loom_kernel_context_attrs(ctx), &plan));
  const loom_shape_t* shape = loom_tensor_shape(inputs[0]);
  loom_shape_t out_shape;
  LOOM_RETURN_IF_ERROR(diag_plan(shape, inputs[1], inputs[2], inputs[3],
                                 loom_tensor_shape(inputs[4]), &plan,
                                 &out_shape));
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out));
  int64_t count = loom_tensor_num_elements(out);
  if (count == 0) return loom_ok_status();
  size_t size = loom__array_element_size(loom_tensor_dtype(out));
  fill(loom_tensor_data(out), count, loom_tensor_data(inputs[4]), size);
  int64_t batches = count / (plan.rows * plan.cols);
  move_band(&plan, size, batches, loom_tensor_data(out),
            loom_tensor_data(inputs[0]), false);
  return loom_ok_status();
}

static void part_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, part_run);
}

static void diag_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, diag_run);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

#define ALIGN_ATTR                                                     \
  "align: {'LEFT_RIGHT', 'RIGHT_LEFT', 'LEFT_LEFT', 'RIGHT_RIGHT'} = " \
  "'RIGHT_LEFT'"

static const loom__builtin_op_t kOps[] = {
    {.name = "MatrixDiagV3",
     .inputs = {"diagonal: T", "k: int32", "num_rows: int32", "num_cols: int32",
                "padding_value: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type", ALIGN_ATTR},
     .shape_fn = diag_shape_fn},
    {.name = "MatrixDiagPartV3",
     .inputs = {"input: T", "k: int32", "padding_value: T"},
     .outputs = {"diagonal: T"},
     .attrs = {"T: type", ALIGN_ATTR},
     .shape_fn = part_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "MatrixDiagV3",
     .compute = diag_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_POD_TYPES},
     .host_memory = {"k", "num_rows", "num_cols"},
     .any_rank = true},
    {.op_name = "MatrixDiagPartV3",
     .compute = part_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_POD_TYPES},
     .host_memory = {"k"},
     .any_rank = true},
};

loom_status_t loom__register_matrix_ops(void) {
  LOOM_RETURN_IF_ERROR(loom__register_matrix_band_ops());
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
