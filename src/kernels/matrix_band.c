// MatrixBandPart (TensorFlow's signature, attrs and messages): keeps the
// entries of each innermost matrix within `num_lower` diagonals below and
// `num_upper` above the main one (a negative count keeps the whole
// triangle) and zeroes the rest. Works in place when the input's buffer
// can be reused; matrices are split over the thread pool.

#include <inttypes.h>
#include <string.h>

#include "kernels/array_internal.h"
#include "kernels/builtin_families.h"

// The band's checks: input rank >= 2, scalar counts within the matrix.
// A count of INT64_MIN stands for one not known yet (shape functions).
static loom_status_t band_check(const loom_shape_t* input,
                                const loom_shape_t* lower_shape,
                                const loom_shape_t* upper_shape, int64_t lower,
                                int64_t upper) {
  char text[128];
  if (input->rank >= 0 && input->rank < 2) {
    return loom__array_invalid(
        "input must be at least 2-dim, received shape: %s",
        loom__shape_debug_string(input, text, sizeof(text)));
  }
  if (lower_shape->rank > 0) {
    return loom__array_invalid(
        "num_lower must be scalar, got shape %s",
        loom__shape_debug_string(lower_shape, text, sizeof(text)));
  }
  if (upper_shape->rank > 0) {
    return loom__array_invalid(
        "num_upper must be scalar, got shape %s",
        loom__shape_debug_string(upper_shape, text, sizeof(text)));
  }
  if (input->rank < 0) return loom_ok_status();
  const int64_t* dims = loom_shape_dims(input);
  int64_t rows = dims[input->rank - 2];
  int64_t cols = dims[input->rank - 1];
  if (rows >= 0 && lower != INT64_MIN && lower > rows) {
    return loom__array_invalid(
        "num_lower must be negative or less or equal to number of rows "
        "(%" PRId64 ") got: %" PRId64,
        rows, lower);
  }
  if (cols >= 0 && upper != INT64_MIN && upper > cols) {
    return loom__array_invalid(
        "num_upper must be negative or less or equal to number of columns "
        "(%" PRId64 ") got: %" PRId64,
        cols, upper);
  }
  return loom_ok_status();
}

static int64_t count_input(loom_shape_inference_context_t* c, int32_t index,
                           const loom_shape_t* shape) {
  const loom_tensor_t* t = loom_shape_inference_context_input_tensor(c, index);
  return t && shape->rank == 0 ? loom__array_index_at(t, 0) : INT64_MIN;
}

static loom_status_t band_shape_fn(loom_shape_inference_context_t* c,
                                   void* user_data) {
  (void)user_data;
  loom_shape_t input, lower, upper;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &input));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &lower));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 2, &upper));
  LOOM_RETURN_IF_ERROR(band_check(&input, &lower, &upper,
                                  count_input(c, 1, &lower),
                                  count_input(c, 2, &upper)));
  return loom_shape_inference_context_set_output(c, 0, &input);
}

typedef struct band_job_t {
  const char* in;
  char* out;
  size_t size;  // bytes per element
  int64_t rows, cols;
  int64_t lower, upper;  // negative: unbounded
} band_job_t;

static void run_band(void* arg, int64_t begin, int64_t end) {
  const band_job_t* job = arg;
  size_t row_bytes = (size_t)job->cols * job->size;
  for (int64_t r = begin; r < end; ++r) {  // r: matrix row over the batch
    int64_t m = r % job->rows;
    const char* in = job->in + (size_t)r * row_bytes;
    char* out = job->out + (size_t)r * row_bytes;
    // Columns [first, last) are in the band.
    int64_t first = job->lower < 0 ? 0 : m - job->lower;
    int64_t last = job->upper < 0 ? job->cols : m + job->upper + 1;
    if (first < 0) first = 0;
    if (last > job->cols) last = job->cols;
    if (first > last) first = last;
    memset(out, 0, (size_t)first * job->size);
    if (in != out && last > first) {
      memcpy(out + (size_t)first * job->size, in + (size_t)first * job->size,
             (size_t)(last - first) * job->size);
    }
    memset(out + (size_t)last * job->size, 0,
           (size_t)(job->cols - last) * job->size);
  }
}

static loom_status_t band_run(loom_kernel_context_t* ctx,
                              loom_tensor_t* const* inputs) {
  loom_tensor_t* input = inputs[0];
  const loom_shape_t* shape = loom_tensor_shape(input);
  const loom_shape_t* ls = loom_tensor_shape(inputs[1]);
  const loom_shape_t* us = loom_tensor_shape(inputs[2]);
  int64_t lower = ls->rank == 0 ? loom__array_index_at(inputs[1], 0) : 0;
  int64_t upper = us->rank == 0 ? loom__array_index_at(inputs[2], 0) : 0;
  LOOM_RETURN_IF_ERROR(band_check(shape, ls, us, lower, upper));
  static const int32_t kCandidates[] = {0};
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(loom_kernel_context_forward_or_allocate(
      ctx, kCandidates, 1, 0, shape, NULL, &out));
  int64_t count = loom_tensor_num_elements(out);
  if (count == 0) return loom_ok_status();
  band_job_t job = {
      .in = loom_tensor_data(input),
      .out = loom_tensor_data(out),
      .size = loom__array_element_size(loom_tensor_dtype(input)),
      .rows = loom_shape_dims(shape)[shape->rank - 2],
      .cols = loom_shape_dims(shape)[shape->rank - 1],
      .lower = lower,
      .upper = upper,
  };
  int64_t all_rows = count / job.cols;
  int64_t cost = job.cols * (int64_t)job.size / 8 + 4;
  loom_thread_pool_t* pool = loom__array_pool(ctx);
  if (!pool || count * (int64_t)job.size < 64 * 1024) {
    run_band(&job, 0, all_rows);
    return loom_ok_status();
  }
  return loom_thread_pool_parallel_for(pool, all_rows, cost, run_band, &job);
}

static void band_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, band_run);
}

static const loom__builtin_op_t kOps[] = {
    {.name = "MatrixBandPart",
     .inputs = {"input: T", "num_lower: Tindex", "num_upper: Tindex"},
     .outputs = {"band: T"},
     .attrs = {"T: type", "Tindex: {int32, int64} = DT_INT64"},
     .shape_fn = band_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "MatrixBandPart",
     .compute = band_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_POD_TYPES},
     .host_memory = {"num_lower", "num_upper"},
     .any_rank = true},
};

loom_status_t loom__register_matrix_band_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
