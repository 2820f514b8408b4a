// Indexing: Gather, GatherV2 (axis, batch_dims), OneHot and Where. Gather
// copies one row of params per index (a typed loop when rows are single
// elements, memcpy otherwise), in parallel; indices are checked first, as
// TensorFlow's CPU kernels do.

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/small_vector.h"
#include "kernels/array_internal.h"
#include "tensor/checked_size.h"

// The product of dims [begin, end) of a tensor that holds elements (so it
// fits int64: the kernels return before planning copies of empty tensors).
static int64_t product(const loom_shape_t* shape, int32_t begin, int32_t end) {
  return loom__array_dims_product(shape, begin, end);
}

// "[1,2]": the multi-index of flat element `flat` of `shape`.
static const char* index_text(const loom_shape_t* shape, int64_t flat,
                              char* buffer, size_t capacity) {
  const int64_t* dims = loom_shape_dims(shape);
  int64_t index[LOOM_MAX_SHAPE_RANK];
  for (int32_t k = shape->rank - 1; k >= 0; --k) {
    index[k] = dims[k] ? flat % dims[k] : 0;
    flat = dims[k] ? flat / dims[k] : 0;
  }
  size_t used = (size_t)snprintf(buffer, capacity, "[");
  for (int32_t k = 0; k < shape->rank && used < capacity; ++k) {
    used += (size_t)snprintf(buffer + used, capacity - used, "%s%" PRId64,
                             k ? "," : "", index[k]);
  }
  if (used < capacity) snprintf(buffer + used, capacity - used, "]");
  return buffer;
}

//===----------------------------------------------------------------------===//
// Gather, GatherV2
//===----------------------------------------------------------------------===//

// The output shape of gathering `indices` from `params` along `axis` with
// `batch_dims` leading batch dims; *out_axis and *out_batch get them
// normalised. Unknown dims stay unknown.
static loom_status_t gather_plan(const char* op, const loom_shape_t* params,
                                 const loom_shape_t* indices, int64_t axis,
                                 int64_t batch_dims, loom_shape_t* out,
                                 int32_t* out_axis, int32_t* out_batch) {
  if (params->rank < 1) {
    return loom__array_invalid("params must be at least 1 dimensional");
  }
  int32_t rank = params->rank;
  const int64_t* p_dims = loom_shape_dims(params);
  const int64_t* i_dims = loom_shape_dims(indices);
  if (batch_dims != 0) {
    if (batch_dims < -indices->rank || batch_dims > indices->rank) {
      return loom__array_invalid(
          "Expected batch_dims in the range [%d, %d], "
          "but got %" PRId64,
          -indices->rank, indices->rank, batch_dims);
    }
    if (batch_dims < 0) batch_dims += indices->rank;
    if (batch_dims >= rank) {
      return loom__array_invalid("batch_dims (%" PRId64
                                 ") must be less than rank(params) (%d).",
                                 batch_dims, rank);
    }
    for (int32_t i = 0; i < batch_dims; ++i) {
      int64_t p = p_dims[i], q = i_dims[i];
      if (p >= 0 && q >= 0 && p != q) {
        return loom__array_invalid("params.shape[%d]: %" PRId64
                                   " should be equal to indices.shape[%d]: "
                                   "%" PRId64,
                                   i, p, i, q);
      }
    }
  }
  if (axis < -rank || axis >= rank) {
    return loom__array_invalid(
        "Expected axis in the range [%d, %d), but got %" PRId64, -rank, rank,
        axis);
  }
  if (axis < 0) axis += rank;
  if (batch_dims > axis) {
    return loom__array_invalid("batch_dims (%" PRId64
                               ") must be less than or equal to axis (%" PRId64
                               ").",
                               batch_dims, axis);
  }
  int32_t out_rank = rank - 1 + indices->rank - (int32_t)batch_dims;
  if (out_rank > LOOM_MAX_SHAPE_RANK) {
    return loom__array_invalid(
        "%s: the result would have rank %d, above the maximum rank %d", op,
        out_rank, LOOM_MAX_SHAPE_RANK);
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t n = 0;
  for (int32_t i = 0; i < axis; ++i) dims[n++] = p_dims[i];
  for (int32_t i = (int32_t)batch_dims; i < indices->rank; ++i) {
    dims[n++] = i_dims[i];
  }
  for (int32_t i = (int32_t)axis + 1; i < rank; ++i) dims[n++] = p_dims[i];
  *out_axis = (int32_t)axis;
  *out_batch = (int32_t)batch_dims;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(out, dims, n));
  return loom__array_check_count(op, "params and indices give output shape",
                                 dims, n, out);
}

static loom_status_t gather_axis(const loom_shape_t* axis_shape,
                                 const loom_tensor_t* axis_tensor,
                                 int64_t* out_axis) {
  if (axis_shape->rank > 0) {
    return loom__array_invalid("axis must be scalar");
  }
  if (axis_tensor) *out_axis = loom__array_index_at(axis_tensor, 0);
  return loom_ok_status();
}

static loom_status_t gather_shape_fn(loom_shape_inference_context_t* c,
                                     void* user_data) {
  (void)user_data;
  loom_shape_t params, indices, out = loom_shape_unknown();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &params));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &indices));
  bool v2 = loom_shape_inference_context_num_inputs(c) == 3;
  int64_t axis = 0;
  bool axis_known = true;
  if (v2) {
    loom_shape_t axis_shape;
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 2, &axis_shape));
    const loom_tensor_t* t = loom_shape_inference_context_input_tensor(c, 2);
    LOOM_RETURN_IF_ERROR(gather_axis(&axis_shape, t, &axis));
    axis_known = t != NULL;
  }
  int64_t batch_dims =
      v2 ? loom__array_attr_int(loom_shape_inference_context_attrs(c),
                                "batch_dims", 0)
         : 0;
  if (params.rank >= 0 && indices.rank >= 0) {
    if (axis_known) {
      int32_t ax, batch;
      LOOM_RETURN_IF_ERROR(gather_plan(loom_shape_inference_context_op(c)->name,
                                       &params, &indices, axis, batch_dims,
                                       &out, &ax, &batch));
    } else {
      int64_t rank =
          params.rank + indices.rank - 1 -
          (int32_t)(batch_dims < 0 ? batch_dims + indices.rank : batch_dims);
      if (rank >= 0 && rank <= LOOM_MAX_SHAPE_RANK) {
        LOOM_RETURN_IF_ERROR(loom__array_unknown_dims(rank, &out));
      }
    }
  } else if (params.rank >= 0 && params.rank < 1) {
    return loom__array_invalid("params must be at least 1 dimensional");
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

typedef struct gather_job_t {
  loom_dtype_t dtype;
  int64_t size;
  const char* params;
  const void* indices;
  bool wide;  // int64 indices, else int32
  char* out;
  int64_t outer;  // product of params dims [batch_dims, axis)
  int64_t n;      // indices per batch
  int64_t gather_dim;
  int64_t inner;  // elements per gathered row
  _Atomic bool failed;
} gather_job_t;

static inline int64_t index_of(const gather_job_t* job, int64_t i) {
  return job->wide ? ((const int64_t*)job->indices)[i]
                   : ((const int32_t*)job->indices)[i];
}

// Rows of single elements: a typed loop per element size.
#define GATHER_ELEMENTS(T, I)                                     \
  do {                                                            \
    const T* restrict p = (const T*)job->params;                  \
    const I* restrict idx = (const I*)job->indices;               \
    T* restrict o = (T*)job->out;                                 \
    for (int64_t r = begin; r < end;) {                           \
      int64_t bo = r / job->n, j = r % job->n;                    \
      int64_t stop = r - j + job->n < end ? r - j + job->n : end; \
      const T* base = p + bo * job->gather_dim;                   \
      const I* row = idx + (bo / job->outer) * job->n;            \
      int64_t row_start = r - j;                                  \
      for (; r < stop; ++r) o[r] = base[row[r - row_start]];      \
    }                                                             \
  } while (0)

static void run_gather(void* arg, int64_t begin, int64_t end) {
  gather_job_t* job = arg;
  if (job->inner == 1 && job->dtype != LOOM_DTYPE_STRING) {
    switch (job->size) {
      case 4:
        if (job->wide) {
          GATHER_ELEMENTS(uint32_t, int64_t);
        } else {
          GATHER_ELEMENTS(uint32_t, int32_t);
        }
        return;
      case 8:
        if (job->wide) {
          GATHER_ELEMENTS(uint64_t, int64_t);
        } else {
          GATHER_ELEMENTS(uint64_t, int32_t);
        }
        return;
      case 2:
        if (job->wide) {
          GATHER_ELEMENTS(uint16_t, int64_t);
        } else {
          GATHER_ELEMENTS(uint16_t, int32_t);
        }
        return;
      case 1:
        if (job->wide) {
          GATHER_ELEMENTS(uint8_t, int64_t);
        } else {
          GATHER_ELEMENTS(uint8_t, int32_t);
        }
        return;
      default:
        break;
    }
  }
  bool ok = true;
  int64_t row_bytes = job->inner * job->size;
  for (int64_t r = begin; r < end; ++r) {
    int64_t bo = r / job->n, j = r % job->n;
    int64_t index = index_of(job, (bo / job->outer) * job->n + j);
    const char* src = job->params + (bo * job->gather_dim + index) * row_bytes;
    char* dst = job->out + r * row_bytes;
    if (job->dtype == LOOM_DTYPE_STRING) {
      ok &= loom__array_copy_row(job->dtype, src, 1, dst, 1, job->inner);
    } else {
      memcpy(dst, src, (size_t)row_bytes);
    }
  }
  if (!ok) atomic_store_explicit(&job->failed, true, memory_order_relaxed);
}

// The first index outside [0, limit), or -1.
static int64_t first_bad_index(const void* indices, bool wide, int64_t count,
                               int64_t limit) {
  if (wide) {
    const int64_t* idx = indices;
    uint64_t bad = 0;
    for (int64_t i = 0; i < count; ++i)
      bad |= (uint64_t)idx[i] >= (uint64_t)limit;
    if (!bad) return -1;
    for (int64_t i = 0; i < count; ++i) {
      if ((uint64_t)idx[i] >= (uint64_t)limit) return i;
    }
  } else {
    const int32_t* idx = indices;
    uint32_t bad = 0;
    for (int64_t i = 0; i < count; ++i) {
      bad |= (uint64_t)(int64_t)idx[i] >= (uint64_t)limit;
    }
    if (!bad) return -1;
    for (int64_t i = 0; i < count; ++i) {
      if ((uint64_t)(int64_t)idx[i] >= (uint64_t)limit) return i;
    }
  }
  return -1;
}

static loom_status_t gather_run(loom_kernel_context_t* ctx,
                                loom_tensor_t* const* inputs) {
  loom_tensor_t* params = inputs[0];
  loom_tensor_t* indices = inputs[1];
  int64_t axis = 0, batch_dims = 0;
  if (loom_kernel_context_num_inputs(ctx) == 3) {
    LOOM_RETURN_IF_ERROR(
        gather_axis(loom_tensor_shape(inputs[2]), inputs[2], &axis));
    batch_dims =
        loom__array_attr_int(loom_kernel_context_attrs(ctx), "batch_dims", 0);
  }
  const loom_shape_t* ps = loom_tensor_shape(params);
  const loom_shape_t* is = loom_tensor_shape(indices);
  loom_shape_t out_shape;
  int32_t ax = 0, batch = 0;
  LOOM_RETURN_IF_ERROR(gather_plan(loom_kernel_context_op(ctx)->name, ps, is,
                                   axis, batch_dims, &out_shape, &ax, &batch));
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out));
  // No rows to gather (and params' dims may then pass int64 together).
  if (loom_tensor_num_elements(out) == 0) return loom_ok_status();
  gather_job_t job;
  job.dtype = loom_tensor_dtype(params);
  job.size = (int64_t)loom__array_element_size(job.dtype);
  job.params = loom_tensor_data(params);
  job.indices = loom_tensor_data(indices);
  job.wide = loom_tensor_dtype(indices) == LOOM_DTYPE_INT64;
  job.out = loom_tensor_data(out);
  int64_t batches = product(ps, 0, batch);
  job.outer = product(ps, batch, ax);
  job.gather_dim = loom_shape_dims(ps)[ax];
  job.inner = product(ps, ax + 1, ps->rank);
  job.n = product(is, batch, is->rank);
  atomic_init(&job.failed, false);
  int64_t rows = batches * job.outer * job.n;
  if (rows == 0 || job.inner == 0) return loom_ok_status();
  int64_t bad =
      first_bad_index(job.indices, job.wide, batches * job.n, job.gather_dim);
  if (bad >= 0) {
    char text[128];
    return loom__array_invalid(
        "indices%s = %" PRId64 " is not in [0, %" PRId64 ")",
        index_text(is, bad, text, sizeof(text)),
        loom__array_index_at(indices, bad), job.gather_dim);
  }
  int64_t bytes = rows * job.inner * job.size;
  loom_thread_pool_t* pool = loom__array_pool(ctx);
  if (!pool || bytes < 64 * 1024) {
    run_gather(&job, 0, rows);
  } else {
    int64_t cost = job.dtype == LOOM_DTYPE_STRING
                       ? 20 * job.inner
                       : job.inner * job.size / 8 + 4;
    LOOM_RETURN_IF_ERROR(
        loom_thread_pool_parallel_for(pool, rows, cost, run_gather, &job));
  }
  if (atomic_load(&job.failed)) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory copying string elements");
  }
  return loom_ok_status();
}

static void gather_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, gather_run);
}

//===----------------------------------------------------------------------===//
// OneHot
//===----------------------------------------------------------------------===//

static loom_status_t one_hot_check(int64_t axis, int32_t indices_rank,
                                   const loom_shape_t* depth,
                                   const loom_shape_t* on,
                                   const loom_shape_t* off) {
  char text[128];
  int32_t out_rank = indices_rank + 1;
  if (!(axis == -1 || (axis >= 0 && axis < out_rank))) {
    return loom__array_invalid(
        "Expected axis to be -1 or between [0, %d).  But received: %" PRId64,
        out_rank, axis);
  }
  if (out_rank > LOOM_MAX_SHAPE_RANK) {
    return loom__array_invalid(
        "OneHot: the result would have rank %d, above the maximum rank %d",
        out_rank, LOOM_MAX_SHAPE_RANK);
  }
  if (depth->rank > 0) {
    return loom__array_invalid(
        "depth must be a scalar, but got: %s",
        loom__shape_debug_string(depth, text, sizeof(text)));
  }
  if (on->rank > 0) {
    return loom__array_invalid(
        "on_value must be a scalar, but got: %s",
        loom__shape_debug_string(on, text, sizeof(text)));
  }
  if (off->rank > 0) {
    return loom__array_invalid(
        "off_value must be a scalar, but got: %s",
        loom__shape_debug_string(off, text, sizeof(text)));
  }
  return loom_ok_status();
}

static loom_status_t one_hot_shape(const loom_shape_t* indices, int64_t axis,
                                   int64_t depth, loom_shape_t* out) {
  int32_t at = axis == -1 ? indices->rank : (int32_t)axis;
  const int64_t* in = loom_shape_dims(indices);
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t n = 0;
  for (int32_t i = 0; i < indices->rank; ++i) {
    if (i == at) dims[n++] = depth;
    dims[n++] = in[i];
  }
  if (at == indices->rank) dims[n++] = depth;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(out, dims, n));
  return loom__array_check_count("OneHot", "depth and indices give shape", dims,
                                 n, out);
}

static loom_status_t one_hot_shape_fn(loom_shape_inference_context_t* c,
                                      void* user_data) {
  (void)user_data;
  loom_shape_t shapes[4], out = loom_shape_unknown();
  for (int32_t i = 0; i < 4; ++i) {
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, i, &shapes[i]));
  }
  int64_t axis =
      loom__array_attr_int(loom_shape_inference_context_attrs(c), "axis", -1);
  if (shapes[0].rank >= 0) {
    LOOM_RETURN_IF_ERROR(one_hot_check(axis, shapes[0].rank, &shapes[1],
                                       &shapes[2], &shapes[3]));
    const loom_tensor_t* depth =
        loom_shape_inference_context_input_tensor(c, 1);
    int64_t d = depth ? loom__array_index_at(depth, 0) : LOOM_UNKNOWN_DIM;
    if (depth && d < 0) {
      return loom__array_invalid("depth must be non-negative, got: %" PRId64,
                                 d);
    }
    LOOM_RETURN_IF_ERROR(one_hot_shape(&shapes[0], axis, d, &out));
  } else if (axis < -1) {
    return loom__array_invalid("axis must be >= -1");
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

static loom_status_t one_hot_run(loom_kernel_context_t* ctx,
                                 loom_tensor_t* const* inputs) {
  loom_tensor_t* indices = inputs[0];
  const loom_shape_t* is = loom_tensor_shape(indices);
  int64_t axis =
      loom__array_attr_int(loom_kernel_context_attrs(ctx), "axis", -1);
  LOOM_RETURN_IF_ERROR(one_hot_check(
      axis, is->rank, loom_tensor_shape(inputs[1]),
      loom_tensor_shape(inputs[2]), loom_tensor_shape(inputs[3])));
  int64_t d = loom__array_index_at(inputs[1], 0);
  if (d < 0) {
    return loom__array_invalid("depth must be non-negative, got: %" PRId64, d);
  }
  loom_shape_t out_shape;
  LOOM_RETURN_IF_ERROR(one_hot_shape(is, axis, d, &out_shape));
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out));
  int64_t count = loom_tensor_num_elements(out);
  if (count == 0) return loom_ok_status();
  loom_dtype_t dtype = loom_tensor_dtype(out);
  LOOM_RETURN_IF_ERROR(loom__array_fill(loom__array_pool(ctx), dtype,
                                        loom_tensor_data(out), count,
                                        loom_tensor_data(inputs[3])));
  // Then the on value where an index is in range.
  int32_t at = axis == -1 ? is->rank : (int32_t)axis;
  int64_t suffix = product(is, at, is->rank);
  int64_t n = loom_tensor_num_elements(indices);
  size_t size = loom__array_element_size(dtype);
  char* data = loom_tensor_data(out);
  const void* on = loom_tensor_data(inputs[2]);
  bool ok = true;
  for (int64_t i = 0; i < n; ++i) {
    int64_t index = loom__array_index_at(indices, i);
    if (index < 0 || index >= d) continue;
    int64_t p = i / suffix, s = i % suffix;
    char* at_element = data + (size_t)((p * d + index) * suffix + s) * size;
    if (dtype == LOOM_DTYPE_STRING) {
      ok &= loom__array_copy_row(dtype, on, 0, at_element, 1, 1);
    } else {
      memcpy(at_element, on, size);
    }
  }
  if (!ok) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory copying string elements");
  }
  return loom_ok_status();
}

static void one_hot_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, one_hot_run);
}

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

// Whether element i is true (non-zero; NaN counts, -0.0 does not).
static inline bool is_true(loom_dtype_t dtype, const void* data, int64_t i) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      return ((const float*)data)[i] != 0.0f;
    case LOOM_DTYPE_DOUBLE:
      return ((const double*)data)[i] != 0.0;
    case LOOM_DTYPE_HALF:
    case LOOM_DTYPE_BFLOAT16:
      return (((const uint16_t*)data)[i] & 0x7fff) != 0;
    case LOOM_DTYPE_COMPLEX64:
      return ((const float*)data)[2 * i] != 0.0f ||
             ((const float*)data)[2 * i + 1] != 0.0f;
    case LOOM_DTYPE_COMPLEX128:
      return ((const double*)data)[2 * i] != 0.0 ||
             ((const double*)data)[2 * i + 1] != 0.0;
    default:
      switch (loom_dtype_size(dtype)) {
        case 1:
          return ((const uint8_t*)data)[i] != 0;
        case 2:
          return ((const uint16_t*)data)[i] != 0;
        case 4:
          return ((const uint32_t*)data)[i] != 0;
        default:
          return ((const uint64_t*)data)[i] != 0;
      }
  }
}

// True elements in [begin, end). The common dtypes count in loops that
// vectorise.
static int64_t count_true(loom_dtype_t dtype, const void* data, int64_t begin,
                          int64_t end) {
  int64_t count = 0;
  switch (dtype) {
    case LOOM_DTYPE_BOOL:
    case LOOM_DTYPE_UINT8:
    case LOOM_DTYPE_INT8: {
      const uint8_t* d = data;
      for (int64_t i = begin; i < end; ++i) count += d[i] != 0;
      return count;
    }
    case LOOM_DTYPE_FLOAT: {
      const float* d = data;
      for (int64_t i = begin; i < end; ++i) count += d[i] != 0.0f;
      return count;
    }
    case LOOM_DTYPE_INT32: {
      const int32_t* d = data;
      for (int64_t i = begin; i < end; ++i) count += d[i] != 0;
      return count;
    }
    default:
      for (int64_t i = begin; i < end; ++i) count += is_true(dtype, data, i);
      return count;
  }
}

enum { kWhereChunk = 64 * 1024 };

typedef struct where_job_t {
  loom_dtype_t dtype;
  const void* data;
  int64_t count;
  const loom_shape_t* shape;
  int64_t* chunk_counts;  // per chunk; then their prefix sums
  int64_t* out;
} where_job_t;

static void where_count(void* arg, int64_t begin, int64_t end) {
  where_job_t* job = arg;
  for (int64_t c = begin; c < end; ++c) {
    int64_t lo = c * kWhereChunk;
    int64_t hi = lo + kWhereChunk < job->count ? lo + kWhereChunk : job->count;
    job->chunk_counts[c] = count_true(job->dtype, job->data, lo, hi);
  }
}

static void where_write(void* arg, int64_t begin, int64_t end) {
  where_job_t* job = arg;
  const loom_shape_t* shape = job->shape;
  int32_t rank = shape->rank;
  for (int64_t c = begin; c < end; ++c) {
    int64_t lo = c * kWhereChunk;
    int64_t hi = lo + kWhereChunk < job->count ? lo + kWhereChunk : job->count;
    int64_t* out = job->out + job->chunk_counts[c] * rank;
    const int64_t* dims = loom_shape_dims(shape);  // any rank
    int64_t index[LOOM_MAX_SHAPE_RANK];
    int64_t rest = lo;
    for (int32_t k = rank - 1; k >= 0; --k) {
      index[k] = rest % dims[k];
      rest /= dims[k];
    }
    for (int64_t i = lo; i < hi; ++i) {
      if (is_true(job->dtype, job->data, i)) {
        for (int32_t k = 0; k < rank; ++k) *out++ = index[k];
      }
      for (int32_t k = rank - 1; k >= 0; --k) {
        if (++index[k] < dims[k]) break;
        index[k] = 0;
      }
    }
  }
}

// The shape function counts the true elements of inputs known at Execute up
// to this size; bigger ones get [?, rank] and their count with the value.
enum { kWhereShapeFnLimit = 64 * 1024 };

static loom_status_t where_shape_fn(loom_shape_inference_context_t* c,
                                    void* user_data) {
  (void)user_data;
  loom_shape_t in, out = loom_shape_scalar();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  out.rank = 2;
  out.dims[0] = LOOM_UNKNOWN_DIM;
  out.dims[1] = in.rank < 0 ? LOOM_UNKNOWN_DIM : in.rank;
  const loom_tensor_t* t = loom_shape_inference_context_input_tensor(c, 0);
  if (t && loom_tensor_kind(t) == LOOM_TENSOR_DENSE &&
      loom_tensor_num_elements(t) <= kWhereShapeFnLimit) {
    out.dims[0] = count_true(loom_tensor_dtype(t), loom_tensor_data(t), 0,
                             loom_tensor_num_elements(t));
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

// Where's per-chunk counts: up to 16 chunks without allocating.
LOOM_DEFINE_SMALL_VECTOR(count_vector, int64_t, 16)

static loom_status_t where_run(loom_kernel_context_t* ctx,
                               loom_tensor_t* const* inputs) {
  loom_tensor_t* input = inputs[0];
  where_job_t job;
  job.dtype = loom_tensor_dtype(input);
  job.data = loom_tensor_data(input);
  job.count = loom_tensor_num_elements(input);
  job.shape = loom_tensor_shape(input);
  int64_t chunks = (job.count + kWhereChunk - 1) / kWhereChunk;
  count_vector_t chunk_counts;
  count_vector_initialize(&chunk_counts);
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(count_vector_resize_uninitialized(
      &chunk_counts, allocator, (size_t)chunks));
  job.chunk_counts = count_vector_data(&chunk_counts);
  loom_thread_pool_t* pool = loom__array_pool(ctx);
  int64_t cost = kWhereChunk / 2;
  loom_status_t status = loom_ok_status();
  if (!pool || chunks <= 1) {
    where_count(&job, 0, chunks);
  } else {
    status =
        loom_thread_pool_parallel_for(pool, chunks, cost, where_count, &job);
  }
  int64_t total = 0;
  for (int64_t c = 0; !status && c < chunks; ++c) {
    int64_t n = job.chunk_counts[c];
    job.chunk_counts[c] = total;  // where the chunk's rows start
    total += n;
  }
  loom_shape_t out_shape = loom_shape_scalar();
  out_shape.rank = 2;
  out_shape.dims[0] = total;
  out_shape.dims[1] = job.shape->rank;
  loom_tensor_t* out = NULL;
  if (!status) {
    status = loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out);
  }
  if (!status && total > 0 && job.shape->rank > 0) {
    job.out = loom_tensor_data(out);
    if (!pool || chunks <= 1) {
      where_write(&job, 0, chunks);
    } else {
      status = loom_thread_pool_parallel_for(pool, chunks, 2 * cost,
                                             where_write, &job);
    }
  }
  count_vector_deinitialize(&chunk_counts, allocator);
  return status;
}

static void where_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, where_run);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__builtin_op_t kOps[] = {
    {.name = "Gather",
     .inputs = {"params: Tparams", "indices: Tindices"},
     .outputs = {"output: Tparams"},
     .attrs = {"validate_indices: bool = true", "Tparams: type",
               "Tindices: {int32, int64}"},
     .shape_fn = gather_shape_fn},
    {.name = "GatherV2",
     .inputs = {"params: Tparams", "indices: Tindices", "axis: Taxis"},
     .outputs = {"output: Tparams"},
     .attrs = {"batch_dims: int = 0", "Tparams: type",
               "Tindices: {int32, int64}", "Taxis: {int32, int64}"},
     .shape_fn = gather_shape_fn},
    {.name = "OneHot",
     .inputs = {"indices: TI", "depth: int32", "on_value: T", "off_value: T"},
     .outputs = {"output: T"},
     .attrs = {"axis: int = -1", "T: type",
               "TI: {uint8, int8, int32, int64} = DT_INT64"},
     .shape_fn = one_hot_shape_fn},
    {.name = "Where",
     .inputs = {"input: T"},
     .outputs = {"index: int64"},
     .attrs = {"T: {numbertype, bool} = DT_BOOL"},
     .shape_fn = where_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Gather",
     .compute = gather_compute,
     .any_rank = true,
     .type_attr = "Tparams",
     .types = {LOOM_ARRAY_ALL_TYPES}},
    {.op_name = "GatherV2",
     .compute = gather_compute,
     .any_rank = true,
     .type_attr = "Tparams",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"axis"}},
    {.op_name = "OneHot",
     .compute = one_hot_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"depth"}},
    {.op_name = "Where",
     .compute = where_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {LOOM_ARRAY_POD_TYPES}},
};

loom_status_t loom__register_array_gather_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
