// Growing a tensor: Tile, Pad, PadV2, BroadcastTo. Tile and BroadcastTo are
// strided copies whose repeated dimensions read with stride 0; Pad writes
// every output row once (padding and the input's row side by side). Each is
// a view of the input when it changes nothing.

#include <inttypes.h>
#include <stdatomic.h>
#include <string.h>

#include "kernels/array_internal.h"
#include "tensor/checked_size.h"

// A shape from the values of a vector of dims (INVALID_ARGUMENT naming
// negative ones and an element count past int64).
static loom_status_t shape_from_vector(const char* op, const char* argument,
                                       const loom_tensor_t* t,
                                       loom_shape_t* out) {
  int64_t n = loom_tensor_num_elements(t);
  if (n > LOOM_MAX_SHAPE_RANK) {
    return loom__array_invalid("a shape of %" PRId64
                               " dimensions exceeds the maximum rank %d",
                               n, LOOM_MAX_SHAPE_RANK);
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int64_t i = 0; i < n; ++i) {
    dims[i] = loom__array_index_at(t, i);
    if (dims[i] < 0) {
      return loom__array_invalid("Dimension %" PRId64 " must be >= 0", dims[i]);
    }
  }
  LOOM_RETURN_IF_ERROR(loom__size_product_checked_quoting(
      op, argument, dims, (int)n, dims, (int)n, NULL));
  return loom_shape_initialize_large(out, dims, (int)n);
}

//===----------------------------------------------------------------------===//
// Tile
//===----------------------------------------------------------------------===//

static loom_status_t tile_plan(const loom_shape_t* in,
                               const loom_shape_t* multiples_shape,
                               const loom_tensor_t* multiples,
                               loom_shape_t* out) {
  int64_t n = multiples_shape->rank == 1 ? multiples_shape->dims[0] : -1;
  if (multiples_shape->rank != 1 || n != in->rank) {
    return loom__array_invalid(
        "Expected multiples argument to be a vector of length %d but got "
        "length %" PRId64,
        in->rank, multiples_shape->rank >= 1 ? multiples_shape->dims[0] : 0);
  }
  if (!multiples) return loom__array_unknown_dims(in->rank, out);
  const int64_t* in_dims = loom_shape_dims(in);
  int64_t values[LOOM_MAX_SHAPE_RANK], dims[LOOM_MAX_SHAPE_RANK];
  for (int32_t i = 0; i < in->rank; ++i) {
    int64_t m = loom__array_index_at(multiples, i);
    values[i] = m;
    if (m < 0) {
      return loom__array_invalid(
          "Expected multiples[%d] >= 0, but got %" PRId64, i, m);
    }
    dims[i] = LOOM_UNKNOWN_DIM;
    if (in_dims[i] >= 0 && !loom__size_mul(in_dims[i], m, &dims[i])) {
      return loom__size_overflow_error("Tile", "multiples",
                                       "[%d] = %" PRId64
                                       " times dimension %d of size %" PRId64,
                                       i, m, i, in_dims[i]);
    }
  }
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(out, dims, in->rank));
  return loom__array_check_count("Tile", "multiples", values, in->rank, out);
}

static loom_status_t tile_shape_fn(loom_shape_inference_context_t* c,
                                   void* user_data) {
  (void)user_data;
  loom_shape_t in, multiples_shape, out = loom_shape_unknown();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_input(c, 1, &multiples_shape));
  if (in.rank >= 0 && multiples_shape.rank >= 0) {
    LOOM_RETURN_IF_ERROR(
        tile_plan(&in, &multiples_shape,
                  loom_shape_inference_context_input_tensor(c, 1), &out));
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

// Tile's copy of more than LOOM_MAX_RANK groups (repeats[g] copies of
// sizes[g] elements, outermost first), planned as tile_run's and run by
// loom__array_copy_any. Out of line: its plan is large.
static __attribute__((noinline)) loom_status_t tile_many_groups(
    loom_kernel_context_t* ctx, loom_tensor_t* input, loom_tensor_t* out,
    const int64_t* repeats, const int64_t* sizes, int32_t groups) {
  loom__array_copy_any_t* copy = NULL;
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, sizeof(*copy), (void**)&copy));
  copy->rank = 2 * groups;
  int64_t in_stride = 1, out_stride = 1;
  for (int32_t g = groups - 1; g >= 0; --g) {
    int64_t d = sizes[g];
    copy->dims[2 * g] = repeats[g];
    copy->src_strides[2 * g] = 0;
    copy->dst_strides[2 * g] = d * out_stride;
    copy->dims[2 * g + 1] = d;
    copy->src_strides[2 * g + 1] = in_stride;
    copy->dst_strides[2 * g + 1] = out_stride;
    in_stride *= d;
    out_stride *= d * repeats[g];
  }
  loom_status_t status = loom__array_copy_any(
      loom__array_pool(ctx), loom_tensor_dtype(out), loom_tensor_data(input),
      loom_tensor_data(out), copy, NULL);
  loom_allocator_free(allocator, copy);
  return status;
}

static loom_status_t tile_run(loom_kernel_context_t* ctx,
                              loom_tensor_t* const* inputs) {
  loom_tensor_t* input = inputs[0];
  const loom_shape_t* in = loom_tensor_shape(input);
  loom_shape_t out_shape;
  LOOM_RETURN_IF_ERROR(
      tile_plan(in, loom_tensor_shape(inputs[1]), inputs[1], &out_shape));
  if (loom_shape_equal(in, &out_shape)) {
    return loom__array_set_view(ctx, 0, input, 0, &out_shape);
  }
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out));
  if (loom_tensor_num_elements(out) == 0) return loom_ok_status();
  // Dim i of the output is (repeat k of m_i, element j of d_i): two copy
  // dims, the repeat reading with stride 0. Dims fold into groups: one that
  // is not repeated joins the group before it (its elements follow each of
  // that group's), a group of one element takes the next dim's repeats
  // into its own, and dims of size 1 repeated once drop out. Up to
  // LOOM_MAX_RANK groups run as one copy; more through
  // loom__array_copy_any (tile_many_groups).
  const int64_t* in_dims = loom_shape_dims(in);
  const int64_t* out_dims = loom_shape_dims(&out_shape);
  int64_t repeats[LOOM_MAX_SHAPE_RANK], sizes[LOOM_MAX_SHAPE_RANK];
  int32_t groups = 0;
  for (int32_t i = 0; i < in->rank; ++i) {
    int64_t d = in_dims[i], m = out_dims[i] / d;
    if (d == 1 && m == 1) continue;
    if (groups > 0 && m == 1) {
      sizes[groups - 1] *= d;  // below the input's count
      continue;
    }
    if (groups > 0 && sizes[groups - 1] == 1) {
      repeats[groups - 1] *= m;  // below the output's count
      sizes[groups - 1] = d;
      continue;
    }
    repeats[groups] = m;
    sizes[groups] = d;
    groups++;
  }
  if (LOOM_UNLIKELY(groups > LOOM_MAX_RANK)) {
    return tile_many_groups(ctx, input, out, repeats, sizes, groups);
  }
  // The output holds elements, so the input does, and their strides fit.
  loom__array_copy_t copy;
  copy.rank = 2 * groups;
  int64_t in_stride = 1, out_stride = 1;
  for (int32_t g = groups - 1; g >= 0; --g) {
    int64_t d = sizes[g];
    copy.dims[2 * g] = repeats[g];
    copy.src_strides[2 * g] = 0;
    copy.dst_strides[2 * g] = d * out_stride;
    copy.dims[2 * g + 1] = d;
    copy.src_strides[2 * g + 1] = in_stride;
    copy.dst_strides[2 * g + 1] = out_stride;
    in_stride *= d;
    out_stride *= d * repeats[g];
  }
  if (groups == 0) {  // every dim of size 1 (a copy of one element)
    copy.rank = 1;
    copy.dims[0] = 1;
    copy.src_strides[0] = copy.dst_strides[0] = 1;
  }
  return loom__array_copy(loom__array_pool(ctx), loom_tensor_dtype(out),
                          loom_tensor_data(input), loom_tensor_data(out),
                          &copy);
}

static void tile_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, tile_run);
}

//===----------------------------------------------------------------------===//
// Pad, PadV2
//===----------------------------------------------------------------------===//

static loom_status_t pad_check(const loom_shape_t* in,
                               const loom_shape_t* paddings) {
  char a[128], b[128];
  if (paddings->rank >= 0 &&
      (paddings->rank != 2 ||
       (paddings->dims[1] >= 0 && paddings->dims[1] != 2))) {
    return loom__array_invalid(
        "paddings must be a matrix with 2 columns: %s",
        loom__shape_debug_string(paddings, a, sizeof(a)));
  }
  if (in->rank >= 0 && paddings->rank == 2 && paddings->dims[0] >= 0 &&
      paddings->dims[0] != in->rank) {
    return loom__array_invalid(
        "The first dimension of paddings must be the rank of inputs%s %s",
        loom__shape_debug_string(paddings, a, sizeof(a)),
        loom__shape_debug_string(in, b, sizeof(b)));
  }
  return loom_ok_status();
}

static loom_status_t pad_plan(const char* op, const loom_shape_t* in,
                              const loom_tensor_t* paddings, int64_t* before,
                              int64_t* after, loom_shape_t* out) {
  const int64_t* in_dims = loom_shape_dims(in);
  int64_t values[2 * LOOM_MAX_SHAPE_RANK], dims[LOOM_MAX_SHAPE_RANK];
  for (int32_t i = 0; i < in->rank; ++i) {
    before[i] = values[2 * i] = loom__array_index_at(paddings, 2 * i);
    after[i] = values[2 * i + 1] = loom__array_index_at(paddings, 2 * i + 1);
    if (before[i] < 0 || after[i] < 0) {
      return loom__array_invalid("Paddings must be non-negative: %" PRId64
                                 " %" PRId64,
                                 before[i], after[i]);
    }
    int64_t dim = in_dims[i];
    dims[i] = LOOM_UNKNOWN_DIM;
    if (dim >= 0 && (!loom__size_add(dim, before[i], &dims[i]) ||
                     !loom__size_add(dims[i], after[i], &dims[i]))) {
      return loom__size_overflow_error(op, "paddings",
                                       "[%" PRId64 ", %" PRId64
                                       "] of dimension %d of size %" PRId64,
                                       before[i], after[i], i, dim);
    }
  }
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(out, dims, in->rank));
  return loom__array_check_count(op, "paddings", values, 2 * in->rank, out);
}

static loom_status_t pad_shape_fn(loom_shape_inference_context_t* c,
                                  void* user_data) {
  (void)user_data;
  loom_shape_t in, paddings_shape, out = loom_shape_unknown();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_input(c, 1, &paddings_shape));
  LOOM_RETURN_IF_ERROR(pad_check(&in, &paddings_shape));
  if (loom_shape_inference_context_num_inputs(c) == 3) {
    loom_shape_t value;
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 2, &value));
    if (value.rank > 0) {
      char text[128];
      return loom__array_invalid(
          "constant_values must be a scalar. Got: %s",
          loom__shape_debug_string(&value, text, sizeof(text)));
    }
  }
  const loom_tensor_t* paddings =
      loom_shape_inference_context_input_tensor(c, 1);
  int32_t rank = in.rank >= 0 ? in.rank
                 : paddings_shape.rank == 2 && paddings_shape.dims[0] >= 0 &&
                         paddings_shape.dims[0] <= LOOM_MAX_SHAPE_RANK
                     ? (int32_t)paddings_shape.dims[0]
                     : LOOM_UNKNOWN_RANK;
  if (rank >= 0) {
    LOOM_RETURN_IF_ERROR(loom__array_unknown_dims(rank, &out));
    if (paddings && in.rank >= 0) {
      int64_t before[LOOM_MAX_SHAPE_RANK], after[LOOM_MAX_SHAPE_RANK];
      LOOM_RETURN_IF_ERROR(pad_plan(loom_shape_inference_context_op(c)->name,
                                    &in, paddings, before, after, &out));
    }
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

typedef struct pad_job_t {
  loom_dtype_t dtype;
  int64_t size;
  const char* src;
  char* dst;
  const void* value;
  // Rows: the output's dims [0, axis); each row is the output's dims
  // [axis, rank): `before` fill, `middle` input elements, `after` fill.
  // Any rank (TensorFlow's Pad stops at 8; its arrays would be 2 KB each).
  int32_t axis;
  int64_t out_dims[LOOM_MAX_SHAPE_RANK];
  int64_t lo[LOOM_MAX_SHAPE_RANK];  // first output index holding input
  int64_t hi[LOOM_MAX_SHAPE_RANK];  // one past the last
  int64_t in_strides[LOOM_MAX_SHAPE_RANK];
  int64_t row, before, middle, after;
  _Atomic bool failed;
} pad_job_t;

static void run_pad_rows(void* arg, int64_t begin, int64_t end) {
  pad_job_t* job = arg;
  int64_t index[LOOM_MAX_SHAPE_RANK];
  int64_t rest = begin;
  for (int32_t k = job->axis - 1; k >= 0; --k) {
    index[k] = rest % job->out_dims[k];
    rest /= job->out_dims[k];
  }
  bool ok = true;
  for (int64_t r = begin; r < end; ++r) {
    char* dst = job->dst + r * job->row * job->size;
    bool inside = true;
    int64_t src_row = 0;
    for (int32_t k = 0; k < job->axis && inside; ++k) {
      inside = index[k] >= job->lo[k] && index[k] < job->hi[k];
      src_row += (index[k] - job->lo[k]) * job->in_strides[k];
    }
    if (!inside) {
      ok &= loom__array_copy_row(job->dtype, job->value, 0, dst, 1, job->row);
    } else {
      ok &=
          loom__array_copy_row(job->dtype, job->value, 0, dst, 1, job->before);
      ok &= loom__array_copy_row(job->dtype, job->src + src_row * job->size, 1,
                                 dst + job->before * job->size, 1, job->middle);
      ok &= loom__array_copy_row(job->dtype, job->value, 0,
                                 dst + (job->before + job->middle) * job->size,
                                 1, job->after);
    }
    for (int32_t k = job->axis - 1; k >= 0; --k) {
      if (++index[k] < job->out_dims[k]) break;
      index[k] = 0;
    }
  }
  if (!ok) atomic_store_explicit(&job->failed, true, memory_order_relaxed);
}

// Output 0 = input padded by before/after with *value.
static loom_status_t pad_run(loom_kernel_context_t* ctx, loom_tensor_t* input,
                             const int64_t* before, const int64_t* after,
                             const loom_shape_t* out_shape, const void* value) {
  const loom_shape_t* in = loom_tensor_shape(input);
  if (loom_shape_equal(in, out_shape)) {
    return loom__array_set_view(ctx, 0, input, 0, out_shape);
  }
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, out_shape, &out));
  int64_t count = loom_tensor_num_elements(out);
  if (count == 0) return loom_ok_status();
  loom_dtype_t dtype = loom_tensor_dtype(out);
  loom_thread_pool_t* pool = loom__array_pool(ctx);
  if (loom_tensor_num_elements(input) == 0) {
    return loom__array_fill(pool, dtype, loom_tensor_data(out), count, value);
  }
  pad_job_t job;
  job.dtype = dtype;
  job.size = (int64_t)loom__array_element_size(dtype);
  job.src = loom_tensor_data(input);
  job.dst = loom_tensor_data(out);
  job.value = value;
  // The last padded dim splits rows; the dims after it are whole.
  int32_t axis = in->rank - 1;
  while (axis > 0 && before[axis] == 0 && after[axis] == 0) axis--;
  // Both tensors hold elements here, so every product and sum of their
  // dims below fits int64 (the output's count bounds them).
  int64_t inner = loom__array_dims_product(in, axis + 1, in->rank);
  job.axis = axis;
  if (!loom__array_strides(in, job.in_strides)) {
    return loom__array_invalid("Pad: the input's strides overflow");
  }
  const int64_t* in_dims = loom_shape_dims(in);
  const int64_t* out_dims = loom_shape_dims(out_shape);
  int64_t rows = loom__array_dims_product(out_shape, 0, axis);
  for (int32_t k = 0; k < axis; ++k) {
    job.out_dims[k] = out_dims[k];
    job.lo[k] = before[k];
    job.hi[k] = before[k] + in_dims[k];
  }
  job.before = before[axis] * inner;
  job.middle = in_dims[axis] * inner;
  job.after = after[axis] * inner;
  job.row = job.before + job.middle + job.after;
  atomic_init(&job.failed, false);
  if (rows == 1) {
    // One long row: each part is split over the pool on its own.
    char* dst = job.dst;
    LOOM_RETURN_IF_ERROR(loom__array_fill(pool, dtype, dst, job.before, value));
    loom__array_block_t block = {.src = job.src,
                                 .dst = dst + job.before * job.size,
                                 .rows = 1,
                                 .row_elements = job.middle,
                                 .src_stride = job.middle,
                                 .dst_stride = job.middle};
    LOOM_RETURN_IF_ERROR(loom__array_copy_blocks(pool, dtype, &block, 1));
    return loom__array_fill(pool, dtype,
                            dst + (job.before + job.middle) * job.size,
                            job.after, value);
  }
  if (!pool || count * job.size < 64 * 1024) {
    run_pad_rows(&job, 0, rows);
  } else {
    int64_t cost =
        dtype == LOOM_DTYPE_STRING ? 20 * job.row : job.row * job.size / 8 + 20;
    LOOM_RETURN_IF_ERROR(
        loom_thread_pool_parallel_for(pool, rows, cost, run_pad_rows, &job));
  }
  if (atomic_load(&job.failed)) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory copying string elements");
  }
  return loom_ok_status();
}

static loom_status_t pad_op_run(loom_kernel_context_t* ctx,
                                loom_tensor_t* const* inputs) {
  loom_tensor_t* input = inputs[0];
  loom_tensor_t* paddings = inputs[1];
  const loom_shape_t* in = loom_tensor_shape(input);
  LOOM_RETURN_IF_ERROR(pad_check(in, loom_tensor_shape(paddings)));
  _Alignas(16) unsigned char zero[sizeof(loom_tstring_t)];
  memset(zero, 0, sizeof(zero));  // 0 of every type, and the empty string
  const void* value = zero;
  if (loom_kernel_context_num_inputs(ctx) == 3) {
    const loom_shape_t* constant = loom_tensor_shape(inputs[2]);
    if (constant->rank != 0) {
      char text[128];
      return loom__array_invalid(
          "constant_values must be a scalar. Got: %s",
          loom__shape_debug_string(constant, text, sizeof(text)));
    }
    value = loom_tensor_data(inputs[2]);
  }
  int64_t before[LOOM_MAX_SHAPE_RANK], after[LOOM_MAX_SHAPE_RANK];
  loom_shape_t out_shape;
  LOOM_RETURN_IF_ERROR(pad_plan(loom_kernel_context_op(ctx)->name, in, paddings,
                                before, after, &out_shape));
  return pad_run(ctx, input, before, after, &out_shape, value);
}

static void pad_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, pad_op_run);
}

//===----------------------------------------------------------------------===//
// BroadcastTo
//===----------------------------------------------------------------------===//

static loom_status_t broadcast_to_check(const loom_shape_t* in,
                                        const loom_shape_t* out) {
  char a[LOOM_SHAPE_FORMAT_MAX], b[LOOM_SHAPE_FORMAT_MAX];
  if (in->rank > out->rank) {
    return loom__array_invalid(
        "Rank of input (%d) must be no greater than "
        "rank of output shape (%d).",
        in->rank, out->rank);
  }
  bool unable = false;
  const int64_t* in_dims = loom_shape_dims(in);
  const int64_t* out_dims = loom_shape_dims(out);
  for (int32_t i = 0; i < in->rank; ++i) {
    int64_t x = in_dims[in->rank - 1 - i];
    int64_t y = out_dims[out->rank - 1 - i];
    if (x < 0 || y < 0 || x == y || x == 1) continue;
    if (y == 1) {
      unable = true;  // broadcasting would give x, not the 1 asked for
      continue;
    }
    return loom__array_invalid("Incompatible shapes: %s vs. %s",
                               loom__shape_debug_string(in, a, sizeof(a)),
                               loom__shape_debug_string(out, b, sizeof(b)));
  }
  if (unable) {
    return loom__array_invalid(
        "Unable to broadcast tensor of shape %s to tensor of shape %s",
        loom__shape_debug_string(in, a, sizeof(a)),
        loom__shape_debug_string(out, b, sizeof(b)));
  }
  return loom_ok_status();
}

static loom_status_t broadcast_to_shape_fn(loom_shape_inference_context_t* c,
                                           void* user_data) {
  (void)user_data;
  loom_shape_t in, shape_shape, out = loom_shape_unknown();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &shape_shape));
  if (shape_shape.rank >= 0 && shape_shape.rank != 1) {
    return loom__array_invalid("Shape must be rank 1 but is rank %d",
                               shape_shape.rank);
  }
  const loom_tensor_t* shape = loom_shape_inference_context_input_tensor(c, 1);
  if (shape) {
    LOOM_RETURN_IF_ERROR(
        shape_from_vector("BroadcastTo", "shape", shape, &out));
    if (in.rank >= 0) LOOM_RETURN_IF_ERROR(broadcast_to_check(&in, &out));
  } else if (shape_shape.rank == 1 && shape_shape.dims[0] >= 0 &&
             shape_shape.dims[0] <= LOOM_MAX_SHAPE_RANK) {
    int64_t dims[LOOM_MAX_SHAPE_RANK];
    for (int64_t i = 0; i < shape_shape.dims[0]; ++i) {
      dims[i] = LOOM_UNKNOWN_DIM;
    }
    LOOM_RETURN_IF_ERROR(
        loom_shape_initialize_large(&out, dims, (int)shape_shape.dims[0]));
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

// BroadcastTo's copy of `input` into `out` (non-empty, above
// LOOM_MAX_RANK): a copy dim per output dim, reading with stride 0 where
// the input broadcasts, run by loom__array_copy_any. Out of line: its plan
// is large.
static __attribute__((noinline)) loom_status_t broadcast_to_large(
    loom_kernel_context_t* ctx, loom_tensor_t* input, loom_tensor_t* out) {
  const loom_shape_t* in = loom_tensor_shape(input);
  const loom_shape_t* out_shape = loom_tensor_shape(out);
  const int64_t* in_dims = loom_shape_dims(in);
  const int64_t* out_dims = loom_shape_dims(out_shape);
  // The output holds elements, so the input does, and their strides fit.
  int64_t in_strides[LOOM_MAX_SHAPE_RANK], out_strides[LOOM_MAX_SHAPE_RANK];
  if (!loom__array_strides(in, in_strides) ||
      !loom__array_strides(out_shape, out_strides)) {
    return loom__array_invalid("BroadcastTo: the strides overflow");
  }
  loom__array_copy_any_t* copy = NULL;
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, sizeof(*copy), (void**)&copy));
  copy->rank = out_shape->rank;
  int32_t shift = out_shape->rank - in->rank;
  for (int32_t i = 0; i < out_shape->rank; ++i) {
    int32_t j = i - shift;
    copy->dims[i] = out_dims[i];
    copy->src_strides[i] =
        j >= 0 && in_dims[j] == out_dims[i] ? in_strides[j] : 0;
    copy->dst_strides[i] = out_strides[i];
  }
  loom_status_t status = loom__array_copy_any(
      loom__array_pool(ctx), loom_tensor_dtype(out), loom_tensor_data(input),
      loom_tensor_data(out), copy, NULL);
  loom_allocator_free(allocator, copy);
  return status;
}

static loom_status_t broadcast_to_run(loom_kernel_context_t* ctx,
                                      loom_tensor_t* const* inputs) {
  loom_tensor_t* input = inputs[0];
  const loom_shape_t* in = loom_tensor_shape(input);
  const loom_shape_t* shape_shape = loom_tensor_shape(inputs[1]);
  if (shape_shape->rank != 1) {
    return loom__array_invalid("Shape must be rank 1 but is rank %d",
                               shape_shape->rank);
  }
  loom_shape_t out_shape;
  LOOM_RETURN_IF_ERROR(
      shape_from_vector("BroadcastTo", "shape", inputs[1], &out_shape));
  LOOM_RETURN_IF_ERROR(broadcast_to_check(in, &out_shape));
  if (loom_shape_equal(in, &out_shape)) {
    return loom__array_set_view(ctx, 0, input, 0, &out_shape);
  }
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out));
  if (loom_tensor_num_elements(out) == 0) return loom_ok_status();
  // Above LOOM_MAX_RANK the copy has a dim per dim, of any number.
  if (LOOM_UNLIKELY(out_shape.rank > LOOM_MAX_RANK)) {
    return broadcast_to_large(ctx, input, out);
  }
  const loom_shape_t* walk_in = in;
  const loom_shape_t* walk_out = &out_shape;
  // The output holds elements, so the input does, and their strides fit.
  int64_t in_strides[LOOM_MAX_RANK], out_strides[LOOM_MAX_RANK];
  if (!loom__array_strides(walk_in, in_strides) ||
      !loom__array_strides(walk_out, out_strides)) {
    return loom__array_invalid("BroadcastTo: the strides overflow");
  }
  loom__array_copy_t copy;
  copy.rank = walk_out->rank;
  int32_t shift = walk_out->rank - walk_in->rank;
  for (int32_t i = 0; i < walk_out->rank; ++i) {
    int32_t j = i - shift;
    copy.dims[i] = walk_out->dims[i];
    copy.src_strides[i] =
        j >= 0 && walk_in->dims[j] == walk_out->dims[i] ? in_strides[j] : 0;
    copy.dst_strides[i] = out_strides[i];
  }
  return loom__array_copy(loom__array_pool(ctx), loom_tensor_dtype(out),
                          loom_tensor_data(input), loom_tensor_data(out),
                          &copy);
}

static void broadcast_to_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, broadcast_to_run);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__builtin_op_t kOps[] = {
    {.name = "Tile",
     .inputs = {"input: T", "multiples: Tmultiples"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "Tmultiples: {int32, int64} = DT_INT32"},
     .shape_fn = tile_shape_fn},
    {.name = "Pad",
     .inputs = {"input: T", "paddings: Tpaddings"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "Tpaddings: {int32, int64} = DT_INT32"},
     .shape_fn = pad_shape_fn},
    {.name = "PadV2",
     .inputs = {"input: T", "paddings: Tpaddings", "constant_values: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "Tpaddings: {int32, int64} = DT_INT32"},
     .shape_fn = pad_shape_fn},
    {.name = "BroadcastTo",
     .inputs = {"input: T", "shape: Tidx"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "Tidx: {int32, int64} = DT_INT32"},
     .shape_fn = broadcast_to_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Tile",
     .compute = tile_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"multiples"}},
    {.op_name = "Pad",
     .compute = pad_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"paddings"}},
    {.op_name = "PadV2",
     .compute = pad_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"paddings"}},
    {.op_name = "BroadcastTo",
     .compute = broadcast_to_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"shape"}},
};

loom_status_t loom__register_array_pad_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
