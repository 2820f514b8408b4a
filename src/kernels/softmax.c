// Softmax, LogSoftmax, SoftmaxCrossEntropyWithLogits and
// SparseSoftmaxCrossEntropyWithLogits, with TensorFlow's signatures,
// checks and messages. Rows (the last axis) are independent and run on the
// thread pool; half and bfloat16 rows are widened to float, computed, and
// narrowed back.

#include "kernels/softmax.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/matmul.h"
#include "kernels/shape_fns.h"
#include "loom/thread_pool.h"
#include "tensor/checked_size.h"

const loom__softmax_loops_t* loom__softmax_loops(void) {
  static const loom__softmax_loops_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__softmax_loops_baseline, &loom__softmax_loops_avx2,
      &loom__softmax_loops_avx512};
  return kTables[loom__isa_level()];
}

// A shape as TensorFlow's DebugString prints it: "[2,3]".
#define FAIL_AND_RETURN(ctx, status)       \
  do {                                     \
    loom_kernel_context_fail(ctx, status); \
    return;                                \
  } while (0)

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

static loom_status_t logits_rank(const loom_shape_t* logits) {
  if (logits->rank == 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "logits must have >= 1 dimension, got []");
  }
  return loom_ok_status();
}

static loom_status_t softmax_shape_fn(loom_shape_inference_context_t* context,
                                      void* user_data) {
  (void)user_data;
  loom_shape_t logits;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &logits));
  LOOM_RETURN_IF_ERROR(logits_rank(&logits));
  return loom_shape_inference_context_set_output(context, 0, &logits);
}

// The [batch, classes] shape features and labels broadcast to.
static loom_status_t xent_shape(const loom_shape_t* features,
                                const loom_shape_t* labels, loom_shape_t* out) {
  int32_t rank = features->rank > labels->rank ? features->rank : labels->rank;
  *out = loom_shape_scalar();
  out->rank = rank;
  for (int32_t i = 0; i < rank; ++i) {
    int32_t ia = i - (rank - features->rank), ib = i - (rank - labels->rank);
    int64_t da = ia >= 0 ? features->dims[ia] : 1;
    int64_t db = ib >= 0 ? labels->dims[ib] : 1;
    if (da != db && da != 1 && db != 1 && da >= 0 && db >= 0) {
      char ta[160], tb[160];
      loom__shape_debug_string(features, ta, sizeof(ta));
      loom__shape_debug_string(labels, tb, sizeof(tb));
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "logits and labels must be broadcastable: "
                              "logits_size=%s labels_size=%s",
                              ta, tb);
    }
    out->dims[i] = da == 1 ? db : (db == 1 ? da : (da >= 0 ? da : db));
  }
  if (rank != 2) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "logits and labels must be either 2-dimensional, "
                            "or broadcasted to be 2-dimensional");
  }
  return loom_ok_status();
}

static loom_status_t xent_shape_fn(loom_shape_inference_context_t* context,
                                   void* user_data) {
  (void)user_data;
  loom_shape_t features, labels, shape;
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_input(context, 0, &features));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 1, &labels));
  if (features.rank < 0 || labels.rank < 0) return loom_ok_status();
  LOOM_RETURN_IF_ERROR(xent_shape(&features, &labels, &shape));
  loom_shape_t loss = loom_shape_scalar();
  loss.rank = 1;
  loss.dims[0] = shape.dims[0];
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_set_output(context, 0, &loss));
  return loom_shape_inference_context_set_output(context, 1, &shape);
}

static loom_status_t sparse_xent_shapes(const loom_shape_t* features,
                                        const loom_shape_t* labels) {
  if (LOOM_LIKELY(features->rank == 2 && labels->rank == 1 &&
                  (features->dims[0] < 0 || labels->dims[0] < 0 ||
                   features->dims[0] == labels->dims[0]) &&
                  features->dims[1] != 0)) {
    return loom_ok_status();  // the shapes are formatted for errors only
  }
  char ta[160], tb[160];
  loom__shape_debug_string(features, ta, sizeof(ta));
  loom__shape_debug_string(labels, tb, sizeof(tb));
  if (features->rank != 2) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "logits must be 2-D, but got shape %s", ta);
  }
  if (labels->rank != 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "labels must be 1-D, but got shape %s", tb);
  }
  if (features->dims[0] >= 0 && labels->dims[0] >= 0 &&
      features->dims[0] != labels->dims[0]) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "logits and labels must have the same first dimension, got logits "
        "shape %s and labels shape %s",
        ta, tb);
  }
  if (features->dims[1] == 0) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Must have at least one class, but got logits shape %s", ta);
  }
  return loom_ok_status();
}

static loom_status_t sparse_xent_shape_fn(
    loom_shape_inference_context_t* context, void* user_data) {
  (void)user_data;
  loom_shape_t features, labels;
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_input(context, 0, &features));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 1, &labels));
  if (features.rank < 0 || labels.rank < 0) return loom_ok_status();
  LOOM_RETURN_IF_ERROR(sparse_xent_shapes(&features, &labels));
  loom_shape_t loss = loom_shape_scalar();
  loss.rank = 1;
  loss.dims[0] = features.dims[0] >= 0 ? features.dims[0] : labels.dims[0];
  loom_shape_t backprop = features;
  backprop.dims[0] = loss.dims[0];
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_set_output(context, 0, &loss));
  return loom_shape_inference_context_set_output(context, 1, &backprop);
}

//===----------------------------------------------------------------------===//
// Row jobs
//===----------------------------------------------------------------------===//

// Rows below this many elements in all run on the calling thread.
enum { kMinParallelElements = 16384 };
// Approximate cost per element (exp, a few passes).
enum { kCostPerElement = 8 };
// Sparse cross-entropy rows shorter than this go a chunk of rows at a time.
enum { kFewClasses = 16 };

typedef enum softmax_kind_t {
  KIND_SOFTMAX,
  KIND_LOG_SOFTMAX,
  KIND_XENT,
  KIND_SPARSE_XENT,
} softmax_kind_t;

typedef struct row_job_t {
  softmax_kind_t kind;
  loom_dtype_t dtype;
  const loom__softmax_loops_t* loops;
  const loom__matmul_loops_t* convert;  // 16-bit floats
  loom_allocator_t allocator;
  int64_t n;  // classes (row length)
  const char* x;
  int64_t x_row_stride, x_col_stride;  // elements (0: broadcast)
  const char* labels;
  int64_t l_row_stride, l_col_stride;
  loom_dtype_t label_dtype;  // sparse: int32 or int64
  char* y;                   // softmax output or backprop
  char* loss;                // one per row (cross entropies)
  size_t size;
  _Atomic int failed;  // a block could not get scratch memory
} row_job_t;

static int64_t label_at(const row_job_t* job, int64_t row) {
  return job->label_dtype == LOOM_DTYPE_INT64
             ? ((const int64_t*)job->labels)[row]
             : ((const int32_t*)job->labels)[row];
}

// A row of `count` elements at stride `col_stride` (0: one broadcast value)
// as float or double into `dst` (contiguous), widening 16-bit floats.
static void load_row(const row_job_t* job, const char* src, int64_t col_stride,
                     void* dst) {
  int64_t n = job->n;
  size_t size = job->size;
  if (job->dtype == LOOM_DTYPE_HALF || job->dtype == LOOM_DTYPE_BFLOAT16) {
    void (*widen)(const uint16_t*, float*, int64_t) =
        job->dtype == LOOM_DTYPE_HALF ? job->convert->half_to_float
                                      : job->convert->bfloat16_to_float;
    if (col_stride == 1) {
      widen((const uint16_t*)src, dst, n);
    } else {
      float value;
      widen((const uint16_t*)src, &value, 1);
      for (int64_t i = 0; i < n; ++i) ((float*)dst)[i] = value;
    }
    return;
  }
  if (col_stride == 1) {
    memcpy(dst, src, (size_t)n * size);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      memcpy((char*)dst + (size_t)i * size, src, size);
    }
  }
}

static void store_row(const row_job_t* job, const float* src, char* dst,
                      int64_t n) {
  void (*narrow)(const float*, uint16_t*, int64_t) =
      job->dtype == LOOM_DTYPE_HALF ? job->convert->float_to_half
                                    : job->convert->float_to_bfloat16;
  narrow(src, (uint16_t*)dst, n);
}

static void run_row(const row_job_t* job, int64_t row, char* scratch) {
  int64_t n = job->n;
  size_t size = job->size;
  const char* x = job->x + (size_t)(row * job->x_row_stride) * size;
  char* y = job->y + (size_t)(row * n) * size;
  bool wide =
      job->dtype == LOOM_DTYPE_HALF || job->dtype == LOOM_DTYPE_BFLOAT16;
  bool f64 = job->dtype == LOOM_DTYPE_DOUBLE;
  // Contiguous float/double rows: the tensors themselves, or scratch.
  size_t row_bytes = (size_t)n * (f64 ? sizeof(double) : sizeof(float));
  const void* xr = x;
  void* yr = y;
  if (wide || job->x_col_stride != 1) {
    load_row(job, x, job->x_col_stride, scratch);
    xr = scratch;
  }
  if (wide) yr = scratch + row_bytes;
  const loom__softmax_loops_t* loops = job->loops;
  double loss = 0;
  switch (job->kind) {
    case KIND_SOFTMAX:
    case KIND_LOG_SOFTMAX: {
      int log = job->kind == KIND_LOG_SOFTMAX;
      if (f64) {
        loops->softmax_f64(xr, yr, n, log);
      } else {
        loops->softmax_f32(xr, yr, n, log);
      }
      break;
    }
    case KIND_XENT: {
      const char* l = job->labels + (size_t)(row * job->l_row_stride) * size;
      const void* lr = l;
      if (wide || job->l_col_stride != 1) {
        load_row(job, l, job->l_col_stride, scratch + 2 * row_bytes);
        lr = scratch + 2 * row_bytes;
      }
      loss =
          f64 ? loops->xent_f64(xr, lr, yr, n) : loops->xent_f32(xr, lr, yr, n);
      break;
    }
    case KIND_SPARSE_XENT: {
      int64_t label = label_at(job, row);
      loss = f64 ? loops->sparse_xent_f64(xr, label, yr, n)
                 : loops->sparse_xent_f32(xr, label, yr, n);
      break;
    }
  }
  if (wide) store_row(job, yr, y, n);
  if (job->kind == KIND_XENT || job->kind == KIND_SPARSE_XENT) {
    char* out = job->loss + (size_t)row * size;
    if (f64) {
      *(double*)out = loss;
    } else if (wide) {
      float value = (float)loss;
      store_row(job, &value, out, 1);
    } else {
      *(float*)out = (float)loss;
    }
  }
}

static void run_rows(void* arg, int64_t begin, int64_t end) {
  row_job_t* job = arg;
  // Three rows of float or double: input, output, labels.
  size_t bytes = 3 * (size_t)(job->n > 0 ? job->n : 1) * sizeof(double);
  _Alignas(64) char local[3 * 256 * sizeof(double)];
  char* scratch = local;
  if (bytes > sizeof(local)) {
    loom_status_t status = loom_allocator_malloc_aligned(job->allocator, bytes,
                                                         64, (void**)&scratch);
    if (status) {
      loom_status_free(status);
      job->failed = 1;
      return;
    }
  }
  int64_t row = begin;
  if (job->kind == KIND_SPARSE_XENT && job->dtype == LOOM_DTYPE_FLOAT &&
      job->n < kFewClasses && job->x_col_stride == 1 &&
      job->x_row_stride == job->n) {
    // Rows of a few classes: a chunk of rows at a time (one exp pass).
    int64_t labels[LOOM_SOFTMAX_ROWS_CHUNK];
    for (; row < end; row += LOOM_SOFTMAX_ROWS_CHUNK) {
      int64_t rows = end - row < LOOM_SOFTMAX_ROWS_CHUNK
                         ? end - row
                         : LOOM_SOFTMAX_ROWS_CHUNK;
      for (int64_t r = 0; r < rows; ++r) labels[r] = label_at(job, row + r);
      job->loops->sparse_xent_rows_f32((const float*)job->x + row * job->n,
                                       labels, (float*)job->y + row * job->n,
                                       (float*)job->loss + row, rows, job->n);
    }
  }
  for (; row < end; ++row) run_row(job, row, scratch);
  if (scratch != local) loom_allocator_free(job->allocator, scratch);
}

static void run_job(loom_kernel_context_t* ctx, row_job_t* job, int64_t rows) {
  loom_status_t status = loom_ok_status();
  if (rows * job->n < kMinParallelElements || rows == 1) {
    run_rows(job, 0, rows);
  } else {
    loom_thread_pool_t* pool =
        loom_host_context_thread_pool(loom_kernel_context_host(ctx));
    // job->n is a row of a non-empty operand: far below INT64_MAX / 8.
    status = loom_thread_pool_parallel_for(pool, rows, job->n * kCostPerElement,
                                           run_rows, job);
  }
  if (!status && job->failed) {
    status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "cannot allocate scratch rows of %lld classes",
                              (long long)job->n);
  }
  if (status) loom_kernel_context_fail(ctx, status);
}

static void init_job(loom_kernel_context_t* ctx, row_job_t* job,
                     softmax_kind_t kind, loom_dtype_t dtype, int64_t n) {
  memset(job, 0, sizeof(*job));
  job->kind = kind;
  job->dtype = dtype;
  job->loops = loom__softmax_loops();
  job->convert = loom__matmul_loops();
  job->allocator = loom_kernel_context_allocator(ctx);
  job->n = n;
  job->size = loom_dtype_size(dtype);
  job->x_col_stride = 1;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

static void softmax_common(loom_kernel_context_t* ctx, softmax_kind_t kind) {
  loom_tensor_t* logits = loom_kernel_context_input(ctx, 0);
  const loom_shape_t* shape = loom_tensor_shape(logits);
  loom_status_t status = logits_rank(shape);
  if (status) FAIL_AND_RETURN(ctx, status);
  // The result may take the logits' buffer: each row is read before it is
  // written.
  int32_t candidate = 0;
  loom_tensor_t* out = NULL;
  status = loom_kernel_context_forward_or_allocate(ctx, &candidate, 1, 0, shape,
                                                   NULL, &out);
  if (status) FAIL_AND_RETURN(ctx, status);
  // Any rank: the rows are every dim but the last, flattened.
  int64_t n = loom_shape_dims(shape)[shape->rank - 1];
  int64_t total = loom_tensor_num_elements(logits);
  if (total == 0) return;
  row_job_t job;
  init_job(ctx, &job, kind, loom_tensor_dtype(logits), n);
  job.x = loom_tensor_data(logits);
  job.x_row_stride = n;
  job.y = loom_tensor_data(out);
  run_job(ctx, &job, total / n);
}

static void softmax_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  softmax_common(ctx, KIND_SOFTMAX);
}

static void log_softmax_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  softmax_common(ctx, KIND_LOG_SOFTMAX);
}

// Row and column strides (elements) of an operand broadcast to [rows, n].
static void broadcast_strides(const loom_shape_t* shape, int64_t* row_stride,
                              int64_t* col_stride) {
  int64_t cols = shape->rank >= 1 ? shape->dims[shape->rank - 1] : 1;
  int64_t rows = shape->rank >= 2 ? shape->dims[shape->rank - 2] : 1;
  *col_stride = cols == 1 ? 0 : 1;
  *row_stride = rows == 1 ? 0 : cols;
}

static void xent_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_tensor_t* features = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* labels = loom_kernel_context_input(ctx, 1);
  loom_shape_t shape;
  loom_status_t status = xent_shape(loom_tensor_shape(features),
                                    loom_tensor_shape(labels), &shape);
  if (status) FAIL_AND_RETURN(ctx, status);
  // The broadcast [batch, classes] and the loss [batch] must be tensors:
  // broadcasting (or an empty class dim) can make either pass int64 in
  // elements or bytes while the inputs are small.
  int64_t count;
  size_t bytes;
  size_t size = loom_dtype_size(loom_tensor_dtype(features));
  if (!loom__size_product(shape.dims, 2, &count) ||
      !loom__size_bytes(count, size, &bytes) ||
      !loom__size_bytes(shape.dims[0], size, &bytes)) {
    char text[96];
    FAIL_AND_RETURN(
        ctx, loom__size_overflow_error(
                 "SoftmaxCrossEntropyWithLogits", "logits and labels broadcast",
                 "%s (loss [batch], backprop [batch, classes])",
                 loom__format_int64s(shape.dims, 2, text, sizeof(text))));
  }
  loom_shape_t loss_shape = loom_shape_scalar();
  loss_shape.rank = 1;
  loss_shape.dims[0] = shape.dims[0];
  loom_tensor_t *loss = NULL, *backprop = NULL;
  status = loom_kernel_context_allocate_output(ctx, 0, &loss_shape, &loss);
  if (!status) {
    status = loom_kernel_context_allocate_output(ctx, 1, &shape, &backprop);
  }
  if (status) FAIL_AND_RETURN(ctx, status);
  int64_t rows = shape.dims[0], n = shape.dims[1];
  if (rows == 0) return;
  loom_dtype_t dtype = loom_tensor_dtype(features);
  if (n == 0) {  // no classes: zero loss
    memset(loom_tensor_data(loss), 0, loom_tensor_byte_size(loss));
    return;
  }
  row_job_t job;
  init_job(ctx, &job, KIND_XENT, dtype, n);
  job.x = loom_tensor_data(features);
  broadcast_strides(loom_tensor_shape(features), &job.x_row_stride,
                    &job.x_col_stride);
  job.labels = loom_tensor_data(labels);
  broadcast_strides(loom_tensor_shape(labels), &job.l_row_stride,
                    &job.l_col_stride);
  job.y = loom_tensor_data(backprop);
  job.loss = loom_tensor_data(loss);
  run_job(ctx, &job, rows);
}

// TensorFlow's CPU check (CheckInvalidLabelIndex): every label in
// [0, classes), else an error naming the first extreme out of range and
// listing the labels.
static loom_status_t check_labels(const loom_tensor_t* labels,
                                  int64_t classes) {
  int64_t count = loom_tensor_num_elements(labels);
  if (count == 0) return loom_ok_status();
  bool wide = loom_tensor_dtype(labels) == LOOM_DTYPE_INT64;
  const void* data = loom_tensor_data(labels);
  int64_t low = INT64_MAX, high = INT64_MIN;
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = wide ? ((const int64_t*)data)[i] : ((const int32_t*)data)[i];
    if (v < low) low = v;
    if (v > high) high = v;
  }
  if (low >= 0 && high < classes) return loom_ok_status();
  int64_t bad = low < 0 ? low : high;
  // The label values, as TensorFlow lists them (the first 1000).
  enum { kMaxListed = 1000 };
  size_t capacity = 22 * (size_t)(count < kMaxListed ? count : kMaxListed) + 8;
  char* list = malloc(capacity);
  if (!list) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Received a label value of %lld which is outside the valid range of "
        "[0, %lld).",
        (long long)bad, (long long)classes);
  }
  size_t length = 0;
  for (int64_t i = 0; i < count && i < kMaxListed; ++i) {
    int64_t v = wide ? ((const int64_t*)data)[i] : ((const int32_t*)data)[i];
    length += (size_t)snprintf(list + length, capacity - length, "%s%lld",
                               i ? " " : "", (long long)v);
  }
  if (count > kMaxListed) snprintf(list + length, capacity - length, "...");
  loom_status_t status = loom_make_status(
      LOOM_STATUS_INVALID_ARGUMENT,
      "Received a label value of %lld which is outside the valid range of "
      "[0, %lld).  Label values: %s",
      (long long)bad, (long long)classes, list);
  free(list);
  return status;
}

static void sparse_xent_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_tensor_t* features = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* labels = loom_kernel_context_input(ctx, 1);
  const loom_shape_t* shape = loom_tensor_shape(features);
  loom_status_t status = sparse_xent_shapes(shape, loom_tensor_shape(labels));
  if (!status) status = check_labels(labels, shape->dims[1]);
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_shape_t loss_shape = loom_shape_scalar();
  loss_shape.rank = 1;
  loss_shape.dims[0] = shape->dims[0];
  loom_tensor_t *loss = NULL, *backprop = NULL;
  status = loom_kernel_context_allocate_output(ctx, 0, &loss_shape, &loss);
  if (!status) {
    status = loom_kernel_context_allocate_output(ctx, 1, shape, &backprop);
  }
  if (status) FAIL_AND_RETURN(ctx, status);
  int64_t rows = shape->dims[0];
  if (rows == 0) return;
  row_job_t job;
  init_job(ctx, &job, KIND_SPARSE_XENT, loom_tensor_dtype(features),
           shape->dims[1]);
  job.x = loom_tensor_data(features);
  job.x_row_stride = shape->dims[1];
  job.labels = loom_tensor_data(labels);
  job.label_dtype = loom_tensor_dtype(labels);
  job.y = loom_tensor_data(backprop);
  job.loss = loom_tensor_data(loss);
  run_job(ctx, &job, rows);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

#define SOFTMAX_TYPES "T: {half, bfloat16, float, double}"

static const loom__builtin_op_t kOps[] = {
    {.name = "Softmax",
     .inputs = {"logits: T"},
     .outputs = {"softmax: T"},
     .attrs = {SOFTMAX_TYPES},
     .shape_fn = softmax_shape_fn},
    {.name = "LogSoftmax",
     .inputs = {"logits: T"},
     .outputs = {"logsoftmax: T"},
     .attrs = {SOFTMAX_TYPES},
     .shape_fn = softmax_shape_fn},
    {.name = "SoftmaxCrossEntropyWithLogits",
     .inputs = {"features: T", "labels: T"},
     .outputs = {"loss: T", "backprop: T"},
     .attrs = {SOFTMAX_TYPES},
     .shape_fn = xent_shape_fn},
    {.name = "SparseSoftmaxCrossEntropyWithLogits",
     .inputs = {"features: T", "labels: Tlabels"},
     .outputs = {"loss: T", "backprop: T"},
     .attrs = {SOFTMAX_TYPES, "Tlabels: {int32, int64} = DT_INT64"},
     .shape_fn = sparse_xent_shape_fn},
};

#define FLOAT_TYPES \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Softmax",
     .compute = softmax_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {FLOAT_TYPES}},
    {.op_name = "LogSoftmax",
     .compute = log_softmax_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {FLOAT_TYPES}},
    {.op_name = "SoftmaxCrossEntropyWithLogits",
     .compute = xent_compute,
     .type_attr = "T",
     .types = {FLOAT_TYPES}},
    {.op_name = "SparseSoftmaxCrossEntropyWithLogits",
     .compute = sparse_xent_compute,
     .type_attr = "T",
     .types = {FLOAT_TYPES}},
};

loom_status_t loom__register_softmax_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
