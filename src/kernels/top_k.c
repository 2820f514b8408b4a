// TopKV2 (TensorFlow's signature, attrs and messages): the k largest
// entries of each row along the last dimension and their indices, largest
// first; equal values keep the lower index first, as TensorFlow's CPU
// kernel does. `sorted = false` returns them in the same order (TensorFlow
// promises no order then). Each row keeps a heap of its k best entries
// (O(n log k)); rows are split over the thread pool.

#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "kernels/array_internal.h"
#include "kernels/builtin_families.h"

// The checks and the output shape (input.shape[:-1] + [k]); without
// `k_known`, the last dim is unknown.
static loom_status_t top_k_plan(const loom_shape_t* input,
                                const loom_shape_t* k_shape, bool k_known,
                                int64_t k, loom_shape_t* out) {
  char text[128];
  *out = loom_shape_unknown();
  if (k_shape->rank > 0) {
    return loom__array_invalid(
        "k must be scalar, got shape %s",
        loom__shape_debug_string(k_shape, text, sizeof(text)));
  }
  if (!k_known) k = LOOM_UNKNOWN_DIM;
  if (k_known && k < 0) {
    return loom__array_invalid("Need k >= 0, got %" PRId64, k);
  }
  if (input->rank < 0) return loom_ok_status();
  if (input->rank < 1) {
    return loom__array_invalid(
        "input must be >= 1-D, got shape %s",
        loom__shape_debug_string(input, text, sizeof(text)));
  }
  const int64_t* in_dims = loom_shape_dims(input);
  int64_t columns = in_dims[input->rank - 1];
  if (k_known && columns >= 0 && columns < k) {
    return loom__array_invalid(
        "input must have at least k columns. Had %" PRId64 ", needed %" PRId64,
        columns, k);
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  memcpy(dims, in_dims, sizeof(int64_t) * (size_t)input->rank);
  dims[input->rank - 1] = k;
  return loom_shape_initialize_large(out, dims, input->rank);
}

static loom_status_t top_k_shape_fn(loom_shape_inference_context_t* c,
                                    void* user_data) {
  (void)user_data;
  loom_shape_t input, k_shape, out;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &input));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &k_shape));
  const loom_tensor_t* k_tensor =
      loom_shape_inference_context_input_tensor(c, 1);
  bool known = k_tensor && k_shape.rank == 0;
  int64_t k = known ? loom__array_index_at(k_tensor, 0) : 0;
  LOOM_RETURN_IF_ERROR(top_k_plan(&input, &k_shape, known, k, &out));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_set_output(c, 0, &out));
  return loom_shape_inference_context_set_output(c, 1, &out);
}

typedef struct top_k_job_t {
  loom_dtype_t dtype;
  loom_dtype_t index_dtype;
  const void* input;
  void* values;
  void* indices;
  int64_t n, k;
  _Atomic bool failed;  // scratch could not be allocated
} top_k_job_t;

// One row, for one element type: heap[0, k) holds the best entries seen
// (a before b: larger, or equal with the lower index), the worst at the
// root; then the heap is emptied worst first from the back, leaving heap[]
// best first.
#define TOP_K_ROW(name, T)                                            \
  static void name(const T* x, int64_t n, int64_t k, int64_t* heap) { \
    int64_t size = 0;                                                 \
    for (int64_t i = 0; i < n; ++i) {                                 \
      if (size == k) {                                                \
        int64_t w = heap[0];                                          \
        if (!(x[i] > x[w])) continue; /* ties: i > w, so w stays */   \
        heap[0] = i;                                                  \
      } else {                                                        \
        int64_t at = size++;                                          \
        heap[at] = i;                                                 \
        while (at > 0) { /* sift up: parent must be worse */          \
          int64_t parent = (at - 1) / 2;                              \
          int64_t a = heap[at], p = heap[parent];                     \
          bool worse = x[a] < x[p] || (!(x[p] < x[a]) && a > p);      \
          if (!worse) break;                                          \
          heap[at] = p;                                               \
          heap[parent] = a;                                           \
          at = parent;                                                \
        }                                                             \
        continue;                                                     \
      }                                                               \
      name##_sift(x, heap, size, 0);                                  \
    }                                                                 \
    for (int64_t end = size - 1; end > 0; --end) {                    \
      int64_t w = heap[0];                                            \
      heap[0] = heap[end];                                            \
      heap[end] = w;                                                  \
      name##_sift(x, heap, end, 0);                                   \
    }                                                                 \
  }

// Sift down from `at` in heap[0, size): each parent worse than its
// children.
#define TOP_K_SIFT(name, T)                                            \
  static void name##_sift(const T* x, int64_t* heap, int64_t size,     \
                          int64_t at) {                                \
    for (;;) {                                                         \
      int64_t worst = at;                                              \
      for (int64_t c = 2 * at + 1; c <= 2 * at + 2 && c < size; ++c) { \
        int64_t a = heap[c], b = heap[worst];                          \
        if (x[a] < x[b] || (!(x[b] < x[a]) && a > b)) worst = c;       \
      }                                                                \
      if (worst == at) return;                                         \
      int64_t t = heap[at];                                            \
      heap[at] = heap[worst];                                          \
      heap[worst] = t;                                                 \
      at = worst;                                                      \
    }                                                                  \
  }

#define TOP_K_TYPE(name, T) \
  TOP_K_SIFT(name, T)       \
  TOP_K_ROW(name, T)

TOP_K_TYPE(row_f32, float)
TOP_K_TYPE(row_f64, double)
TOP_K_TYPE(row_i8, int8_t)
TOP_K_TYPE(row_u8, uint8_t)
TOP_K_TYPE(row_i16, int16_t)
TOP_K_TYPE(row_u16, uint16_t)
TOP_K_TYPE(row_i32, int32_t)
TOP_K_TYPE(row_u32, uint32_t)
TOP_K_TYPE(row_i64, int64_t)
TOP_K_TYPE(row_u64, uint64_t)

static void write_index(loom_dtype_t dtype, void* out, int64_t at,
                        int64_t value) {
  switch (dtype) {
    case LOOM_DTYPE_INT16:
      ((int16_t*)out)[at] = (int16_t)value;
      break;
    case LOOM_DTYPE_INT32:
      ((int32_t*)out)[at] = (int32_t)value;
      break;
    default:
      ((int64_t*)out)[at] = value;
      break;
  }
}

static void run_top_k(void* arg, int64_t begin, int64_t end) {
  top_k_job_t* job = arg;
  int64_t n = job->n, k = job->k;
  size_t size = loom_dtype_size(job->dtype);
  bool half = job->dtype == LOOM_DTYPE_HALF;
  bool wide16 = half || job->dtype == LOOM_DTYPE_BFLOAT16;
  // The heap, and for 16-bit floats the row in float.
  int64_t* heap = malloc(sizeof(int64_t) * (size_t)k +
                         (wide16 ? sizeof(float) * (size_t)n : 0));
  if (!heap) {
    atomic_store_explicit(&job->failed, true, memory_order_relaxed);
    return;
  }
  float* row = (float*)(heap + k);
  for (int64_t r = begin; r < end; ++r) {
    const char* x = (const char*)job->input + (size_t)(r * n) * size;
    switch (job->dtype) {
      case LOOM_DTYPE_FLOAT:
        row_f32((const float*)x, n, k, heap);
        break;
      case LOOM_DTYPE_DOUBLE:
        row_f64((const double*)x, n, k, heap);
        break;
      case LOOM_DTYPE_HALF:
      case LOOM_DTYPE_BFLOAT16:
        for (int64_t i = 0; i < n; ++i) {
          uint16_t bits = ((const uint16_t*)x)[i];
          row[i] =
              half ? loom__half_to_float(bits) : loom__bfloat16_to_float(bits);
        }
        row_f32(row, n, k, heap);
        break;
      case LOOM_DTYPE_INT8:
        row_i8((const int8_t*)x, n, k, heap);
        break;
      case LOOM_DTYPE_UINT8:
        row_u8((const uint8_t*)x, n, k, heap);
        break;
      case LOOM_DTYPE_INT16:
        row_i16((const int16_t*)x, n, k, heap);
        break;
      case LOOM_DTYPE_UINT16:
        row_u16((const uint16_t*)x, n, k, heap);
        break;
      case LOOM_DTYPE_INT32:
        row_i32((const int32_t*)x, n, k, heap);
        break;
      case LOOM_DTYPE_UINT32:
        row_u32((const uint32_t*)x, n, k, heap);
        break;
      case LOOM_DTYPE_INT64:
        row_i64((const int64_t*)x, n, k, heap);
        break;
      default:
        row_u64((const uint64_t*)x, n, k, heap);
        break;
    }
    char* values = (char*)job->values + (size_t)(r * k) * size;
    for (int64_t j = 0; j < k; ++j) {
      memcpy(values + (size_t)j * size, x + (size_t)heap[j] * size, size);
      write_index(job->index_dtype, job->indices, r * k + j, heap[j]);
    }
  }
  free(heap);
}

static loom_status_t top_k_run(loom_kernel_context_t* ctx,
                               loom_tensor_t* const* inputs) {
  loom_tensor_t* input = inputs[0];
  const loom_shape_t* shape = loom_tensor_shape(input);
  const loom_shape_t* k_shape = loom_tensor_shape(inputs[1]);
  int64_t k = k_shape->rank == 0 ? loom__array_index_at(inputs[1], 0) : 0;
  loom_shape_t out_shape;
  LOOM_RETURN_IF_ERROR(top_k_plan(shape, k_shape, true, k, &out_shape));
  int64_t n = loom_shape_dims(shape)[shape->rank - 1];
  if (loom_kernel_context_output_dtype(ctx, 1) == LOOM_DTYPE_INT16 &&
      n - 1 > INT16_MAX) {
    return loom__array_invalid(
        "TopKV2: index_type int16 cannot hold the indices of rows of "
        "%" PRId64 " elements",
        n);
  }
  loom_tensor_t *values = NULL, *indices = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, &out_shape, &values));
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 1, &out_shape, &indices));
  if (loom_tensor_num_elements(values) == 0) return loom_ok_status();
  top_k_job_t job = {
      .dtype = loom_tensor_dtype(input),
      .index_dtype = loom_tensor_dtype(indices),
      .input = loom_tensor_data(input),
      .values = loom_tensor_data(values),
      .indices = loom_tensor_data(indices),
      .n = n,
      .k = k,
  };
  atomic_init(&job.failed, false);
  int64_t rows = loom_tensor_num_elements(input) / job.n;
  loom_thread_pool_t* pool = loom__array_pool(ctx);
  // About log2(k) comparisons per element.
  int64_t log_k = 1;
  while ((int64_t)1 << log_k < k) ++log_k;
  int64_t cost = job.n * (2 + log_k);
  if (!pool || rows * cost < 64 * 1024) {
    run_top_k(&job, 0, rows);
  } else {
    LOOM_RETURN_IF_ERROR(
        loom_thread_pool_parallel_for(pool, rows, cost, run_top_k, &job));
  }
  if (atomic_load(&job.failed)) {
    return loom_make_status(
        LOOM_STATUS_RESOURCE_EXHAUSTED,
        "TopKV2: out of memory for a row's %" PRId64 " entries", job.k);
  }
  return loom_ok_status();
}

static void top_k_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, top_k_run);
}

static const loom__builtin_op_t kOps[] = {
    {.name = "TopKV2",
     .inputs = {"input: T", "k: Tk"},
     .outputs = {"values: T", "indices: index_type"},
     .attrs = {"sorted: bool = true", "T: realnumbertype",
               "Tk: {int16, int32, int64} = DT_INT32",
               "index_type: {int16, int32, int64} = DT_INT32"},
     .shape_fn = top_k_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "TopKV2",
     .compute = top_k_compute,
     .type_attr = "T",
     .types = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF,
               LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_INT8, LOOM_DTYPE_INT16,
               LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, LOOM_DTYPE_UINT8,
               LOOM_DTYPE_UINT16, LOOM_DTYPE_UINT32, LOOM_DTYPE_UINT64},
     .host_memory = {"k"},
     .any_rank = true},
};

loom_status_t loom__register_top_k_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
