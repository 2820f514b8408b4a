// A first tour of Loom's lower layers: a host context with its thread pool,
// dense / scalar / string host tensors, parallel work with per-worker
// scratch space, async tasks awaited together, and the same tensor seen
// through TensorFlow's C API.
//
//   hello_loom [--threads N] [--size N]

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "tensorflow/c/tf_tensor.h"
#include "tensorflow/c/tf_tstring.h"

static int fail(loom_status_t status, const char* what) {
  char text[512];
  loom_status_format(status, text, sizeof(text));
  loom_status_free(status);
  fprintf(stderr, "hello_loom: %s: %s\n", what, text);
  return 1;
}

#define TRY(expr, what)                              \
  do {                                               \
    loom_status_t try_status_ = (expr);              \
    if (try_status_) return fail(try_status_, what); \
  } while (0)

// Fills x[i] = sin(i / n * 2 pi), one block of indices per call.
typedef struct fill_t {
  float* data;
  int64_t count;
} fill_t;

static void fill_block(void* arg, int64_t begin, int64_t end) {
  fill_t* fill = arg;
  for (int64_t i = begin; i < end; ++i) {
    fill->data[i] = sinf((float)i / (float)fill->count * 6.2831853f);
  }
}

// Sums squares into one partial sum per worker id: no locks, no sharing.
typedef struct sum_t {
  const float* data;
  double* partial;  // num_threads + 1 slots
} sum_t;

static void sum_block(void* arg, int64_t begin, int64_t end, int worker_id) {
  sum_t* sum = arg;
  double acc = 0;
  for (int64_t i = begin; i < end; ++i)
    acc += (double)sum->data[i] * sum->data[i];
  sum->partial[worker_id] += acc;
}

// An async task: the mean of one row of a [rows, cols] tensor.
typedef struct row_mean_t {
  const float* row;
  int64_t cols;
} row_mean_t;

static const loom_async_value_type_t kDoubleType = {
    .name = "double", .payload_size = sizeof(double)};

static void row_mean(void* arg, loom_async_value_t* result) {
  row_mean_t* task = arg;
  double acc = 0;
  for (int64_t i = 0; i < task->cols; ++i) acc += task->row[i];
  *(double*)loom_async_value_payload(result) = acc / (double)task->cols;
  loom_status_ignore(loom_async_value_set_available(result));
}

int main(int argc, char** argv) {
  int threads = -1;
  int64_t size = 1 << 22;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
      size = atoll(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--threads N] [--size N]\n", argv[0]);
      return 2;
    }
  }
  if (size < 8) size = 8;

  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = threads;
  loom_host_context_t* host = NULL;
  TRY(loom_host_context_create(&options, &host), "creating the host context");
  loom_thread_pool_t* pool = loom_host_context_thread_pool(host);
  loom_allocator_t allocator = loom_host_context_allocator(host);
  int num_threads = loom_thread_pool_num_threads(pool);
  printf("host context: %d worker threads\n", num_threads);

  // A dense f32 tensor, filled in parallel.
  int64_t cols = 1024;
  int64_t rows = size / cols;
  int64_t dims[2] = {rows, cols};
  loom_shape_t shape;
  TRY(loom_shape_initialize(&shape, dims, 2), "shape");
  loom_tensor_t* x = NULL;
  TRY(loom_tensor_create_dense(allocator, LOOM_DTYPE_FLOAT, &shape, &x),
      "creating x");
  char metadata[128];
  loom_tensor_metadata_format(loom_tensor_metadata(x), metadata,
                              sizeof(metadata));
  printf("x: %s, %zu bytes, 64-byte aligned: %s\n", metadata,
         loom_tensor_byte_size(x), loom_tensor_is_aligned(x) ? "yes" : "no");
  fill_t fill = {loom_tensor_data(x), loom_tensor_num_elements(x)};
  TRY(loom_thread_pool_parallel_for(pool, fill.count, 20, fill_block, &fill),
      "parallel fill");

  // Sum of squares with per-worker partial sums.
  double* partial = calloc((size_t)num_threads + 1, sizeof(double));
  sum_t sum = {loom_tensor_data(x), partial};
  TRY(loom_thread_pool_parallel_for_with_worker_id(pool, fill.count, 2,
                                                   sum_block, &sum),
      "parallel sum");
  double total = 0;
  for (int i = 0; i <= num_threads; ++i) total += partial[i];
  free(partial);
  printf("sum(x^2) = %.3f (n/2 = %.3f)\n", total, (double)fill.count / 2);

  // One async task per row (up to 8 rows), awaited together.
  enum { kTasks = 8 };
  int64_t task_count = rows < kTasks ? rows : kTasks;
  row_mean_t tasks[kTasks];
  loom_async_value_t* means[kTasks];
  for (int64_t r = 0; r < task_count; ++r) {
    tasks[r] = (row_mean_t){(const float*)loom_tensor_data(x) + r * cols, cols};
    loom_task_t task = {.run = row_mean, .arg = &tasks[r]};
    TRY(loom_host_context_submit(host, &task, &kDoubleType, &means[r]),
        "submitting a row task");
  }
  TRY(loom_host_context_await(host, means, (size_t)task_count), "await");
  printf("row means:");
  for (int64_t r = 0; r < task_count; ++r) {
    printf(" %+.4f", *(double*)loom_async_value_payload(means[r]));
    loom_async_value_release(means[r]);
  }
  printf("\n");

  // A scalar host tensor expanded to dense.
  float seven = 7.0f;
  loom_shape_t small_shape;
  int64_t small_dims[2] = {2, 3};
  TRY(loom_shape_initialize(&small_shape, small_dims, 2), "shape");
  loom_tensor_t* scalar = NULL;
  loom_tensor_t* dense = NULL;
  TRY(loom_tensor_create_scalar(allocator, LOOM_DTYPE_FLOAT, &small_shape,
                                &seven, &scalar),
      "scalar tensor");
  TRY(loom_tensor_convert_to_dense(allocator, scalar, &dense), "convert");
  const float* values = loom_tensor_data(dense);
  printf("scalar 7 as dense [2, 3]: %g %g %g %g %g %g\n", values[0], values[1],
         values[2], values[3], values[4], values[5]);
  loom_tensor_release(dense);
  loom_tensor_release(scalar);

  // The same tensor through TensorFlow's C API: a TF_Tensor is a host tensor.
  TF_Tensor* tf = (TF_Tensor*)x;
  printf("TF_Tensor view: dtype %d, dims [%lld, %lld], %zu bytes\n",
         (int)TF_TensorType(tf), (long long)TF_Dim(tf, 0),
         (long long)TF_Dim(tf, 1), TF_TensorByteSize(tf));

  // A string tensor built with the TF_TString functions.
  int64_t string_dims[1] = {2};
  TF_Tensor* strings =
      TF_AllocateTensor(TF_STRING, string_dims, 1, 2 * sizeof(TF_TString));
  if (!strings) {
    fprintf(stderr, "hello_loom: TF_AllocateTensor failed\n");
    return 1;
  }
  TF_TString* elements = TF_TensorData(strings);
  TF_StringCopy(&elements[0], "hello", 5);
  TF_StringCopy(&elements[1], "a string long enough to live on the heap", 40);
  printf("strings: \"%s\" (%zu bytes), \"%s\" (%zu bytes)\n",
         TF_StringGetDataPointer(&elements[0]), TF_StringGetSize(&elements[0]),
         TF_StringGetDataPointer(&elements[1]), TF_StringGetSize(&elements[1]));
  TF_DeleteTensor(strings);

  loom_tensor_release(x);
  loom_host_context_destroy(host);
  return 0;
}
