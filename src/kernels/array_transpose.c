// Transpose. A permutation that keeps every dimension of size > 1 in order
// is a view of the input; one that keeps the innermost dimension in place
// copies contiguous rows; any other one is a batch of 2-D transposes between
// the output's innermost dimension and the input's, done panel by panel
// with the SIMD kernels of array_transpose_loops.c and split over the
// thread pool. InvertPermutation, the permutation that undoes one, and
// ReverseV2, a strided copy that walks the reversed dims backwards.

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kernels/array_internal.h"

loom__transpose_panel_fn_t loom__transpose_panel(size_t size) {
  static const loom__transpose_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__transpose_panels_baseline, &loom__transpose_panels_avx2,
      &loom__transpose_panels_avx512};
  int slot = loom__array_size_slot(size);
  return slot < 0 ? NULL : (*kTables[loom__isa_level()])[slot];
}

// Checks `perm` against a tensor of rank `rank` as TensorFlow does and
// writes it to out_perm.
static loom_status_t check_perm(const loom_shape_t* perm_shape,
                                const loom_tensor_t* perm, int32_t rank,
                                int32_t* out_perm) {
  char text[256];
  if (perm_shape->rank != 1) {
    return loom__array_invalid(
        "perm must be rank 1, got shape %s",
        loom__shape_debug_string(perm_shape, text, sizeof(text)));
  }
  int64_t n = loom_tensor_num_elements(perm);
  if (n != rank) {
    return loom__array_invalid(
        "transpose expects a vector of size %d. But "
        "input(1) is a vector of size %" PRId64,
        rank, n);
  }
  bool seen[LOOM_MAX_SHAPE_RANK] = {false};
  for (int32_t i = 0; i < rank; ++i) {
    int64_t d = loom__array_index_at(perm, i);
    if (d < 0 || d >= rank) {
      return loom__array_invalid("%" PRId64 " is out of range [0 .. %d)", d,
                                 rank);
    }
    seen[d] = true;
    out_perm[i] = (int32_t)d;
  }
  for (int32_t i = 0; i < rank; ++i) {
    if (seen[i]) continue;
    size_t used = 0;
    for (int32_t k = 0; k < rank && used < sizeof(text); ++k) {
      used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%d",
                               k ? "," : "", out_perm[k]);
    }
    return loom__array_invalid("%d is missing from {%s}.", i, text);
  }
  return loom_ok_status();
}

static loom_status_t transpose_shape_fn(loom_shape_inference_context_t* c,
                                        void* user_data) {
  (void)user_data;
  loom_shape_t in, perm_shape;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &perm_shape));
  const loom_tensor_t* perm = loom_shape_inference_context_input_tensor(c, 1);
  loom_shape_t out = loom_shape_unknown();
  if (in.rank >= 0) {
    int64_t dims[LOOM_MAX_SHAPE_RANK];
    for (int32_t i = 0; i < in.rank; ++i) dims[i] = LOOM_UNKNOWN_DIM;
    if (perm) {
      int32_t p[LOOM_MAX_SHAPE_RANK];
      LOOM_RETURN_IF_ERROR(check_perm(&perm_shape, perm, in.rank, p));
      const int64_t* in_dims = loom_shape_dims(&in);
      for (int32_t i = 0; i < in.rank; ++i) dims[i] = in_dims[p[i]];
    }
    LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(&out, dims, in.rank));
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

//===----------------------------------------------------------------------===//
// Batched 2-D transposes
//===----------------------------------------------------------------------===//

typedef struct transpose_job_t {
  loom__transpose_panel_fn_t panel;
  const char* src;
  char* dst;
  int64_t size;
  bool stream;
  // The batch dims (all but the two transposed ones): a plan has up to
  // kArrayMaxCopyRank dims when loom__array_copy_any runs transpose_plan.
  int32_t batch_rank;
  int64_t batch_dims[kArrayMaxCopyRank];
  int64_t batch_src[kArrayMaxCopyRank];
  int64_t batch_dst[kArrayMaxCopyRank];
  // Dim a: the output's innermost (dst stride 1, src stride sa), of size
  // A; dim b: the input's innermost (src stride 1, dst stride db), of size
  // B.
  int64_t A, B, sa, db;
  // A unit of work: `group` panels of `panel_rows` along a, by `jchunk`
  // elements along b.
  int64_t panel_rows;
  int64_t groups, group;
  int64_t jchunks, jchunk;
} transpose_job_t;

static void run_transpose_units(void* arg, int64_t begin, int64_t end) {
  const transpose_job_t* job = arg;
  int64_t P = job->panel_rows;
  int64_t size = job->size;
  int64_t per_batch = job->groups * job->jchunks;
  for (int64_t unit = begin; unit < end; ++unit) {
    int64_t batch = unit / per_batch;
    int64_t rest = unit % per_batch;
    int64_t g = rest / job->jchunks, jc = rest % job->jchunks;
    int64_t so = 0, dO = 0;
    for (int32_t k = job->batch_rank - 1; k >= 0; --k) {
      int64_t i = batch % job->batch_dims[k];
      batch /= job->batch_dims[k];
      so += i * job->batch_src[k];
      dO += i * job->batch_dst[k];
    }
    int64_t j = jc * job->jchunk;
    int64_t cols = job->B - j < job->jchunk ? job->B - j : job->jchunk;
    int64_t i_end = (g + 1) * job->group * P;
    if (i_end > job->A) i_end = job->A;
    for (int64_t i = g * job->group * P; i < i_end; i += P) {
      int64_t rows = i_end - i < P ? i_end - i : P;
      job->panel(job->src + (so + i * job->sa + j) * size, job->sa,
                 job->dst + (dO + j * job->db + i) * size, job->db, rows, cols,
                 job->stream);
    }
  }
}

// Elements per unit of parallel work, about.
enum { kUnitElements = 64 * 1024 };

static loom_status_t transpose_2d(loom_thread_pool_t* pool,
                                  loom__transpose_panel_fn_t panel, size_t size,
                                  const void* src, void* dst,
                                  const loom__array_copy_t* plan, int32_t b) {
  transpose_job_t job;
  int32_t a = plan->rank - 1;
  job.panel = panel;
  job.src = src;
  job.dst = dst;
  job.size = (int64_t)size;
  job.A = plan->dims[a];
  job.B = plan->dims[b];
  job.sa = plan->src_strides[a];
  job.db = plan->dst_strides[b];
  job.batch_rank = 0;
  int64_t batch = 1;
  for (int32_t k = 0; k < a; ++k) {
    if (k == b) continue;
    job.batch_dims[job.batch_rank] = plan->dims[k];
    job.batch_src[job.batch_rank] = plan->src_strides[k];
    job.batch_dst[job.batch_rank] = plan->dst_strides[k];
    job.batch_rank++;
    batch *= plan->dims[k];
  }
  int64_t total = batch * job.A * job.B;
  job.stream = total * (int64_t)size >= kArrayStreamBytes;
  // A panel fills one 64-byte line of each output row it writes.
  int64_t P = 64 / (int64_t)size;
  job.panel_rows = P;
  int64_t panels = (job.A + P - 1) / P;
  if (P * job.B >= kUnitElements) {
    job.group = 1;
    job.jchunk = (kUnitElements / P) & ~(int64_t)15;
  } else {
    job.group = kUnitElements / (P * job.B);
    job.jchunk = job.B;
  }
  if (job.group > panels) job.group = panels;
  job.groups = (panels + job.group - 1) / job.group;
  job.jchunks = (job.B + job.jchunk - 1) / job.jchunk;
  int64_t units = batch * job.groups * job.jchunks;
  if (!pool || units == 1 || total * (int64_t)size < 64 * 1024) {
    run_transpose_units(&job, 0, units);
    return loom_ok_status();
  }
  int64_t cost = (job.group * P * job.jchunk * (int64_t)size) / 4 + 50;
  return loom_thread_pool_parallel_for(pool, units, cost, run_transpose_units,
                                       &job);
}

// Runs the collapsed transpose copy `plan`: a batch of 2-D panel
// transposes when the input's innermost dim moves, else a strided copy.
// A loom__array_copy_fn_t, so loom__array_copy_any runs it too.
static loom_status_t transpose_plan(loom_thread_pool_t* pool,
                                    loom_dtype_t dtype, const void* src,
                                    void* dst, const loom__array_copy_t* plan) {
  size_t size = loom__array_element_size(dtype);
  loom__transpose_panel_fn_t panel =
      dtype == LOOM_DTYPE_STRING ? NULL : loom__transpose_panel(size);
  if (plan->src_strides[plan->rank - 1] == 1 || !panel) {
    return loom__array_copy(pool, dtype, src, dst, plan);
  }
  int32_t b = -1;
  for (int32_t k = 0; k < plan->rank - 1; ++k) {
    if (plan->src_strides[k] == 1) b = k;
  }
  if (b < 0) return loom__array_copy(pool, dtype, src, dst, plan);
  return transpose_2d(pool, panel, size, src, dst, plan, b);
}

// The transpose of a non-empty `input` above LOOM_MAX_RANK by `perm` to
// `out_shape`: one copy dim per dim, collapsed (size-1 dims dropped, dims
// that stay next to each other merged), so that any number of groups runs
// through loom__array_copy_any, the inner ones as transpose_plan. Out of
// line: its plan is large.
static __attribute__((noinline)) loom_status_t transpose_large(
    loom_kernel_context_t* ctx, loom_tensor_t* input, const int32_t* perm,
    int32_t index, const loom_shape_t* out_shape) {
  const loom_shape_t* in = loom_tensor_shape(input);
  int32_t rank = in->rank;
  // The input holds elements, so its strides, and the output's, fit.
  int64_t in_strides[LOOM_MAX_SHAPE_RANK], out_strides[LOOM_MAX_SHAPE_RANK];
  if (!loom__array_strides(in, in_strides) ||
      !loom__array_strides(out_shape, out_strides)) {
    return loom__array_invalid("Transpose: the strides overflow");
  }
  loom__array_copy_any_t* copy = NULL;
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, sizeof(*copy), (void**)&copy));
  const int64_t* out_dims = loom_shape_dims(out_shape);
  copy->rank = rank;
  for (int32_t i = 0; i < rank; ++i) {
    copy->dims[i] = out_dims[i];
    copy->src_strides[i] = in_strides[perm[i]];
    copy->dst_strides[i] = out_strides[i];
  }
  loom__array_copy_any_collapse(copy);
  loom_status_t status;
  if (copy->rank == 1 && copy->src_strides[0] == 1) {
    // Only dims of size 1 move: the same elements in the same order.
    status = loom__array_set_view(ctx, index, input, 0, out_shape);
  } else {
    loom_tensor_t* output = NULL;
    status =
        loom_kernel_context_allocate_output(ctx, index, out_shape, &output);
    if (!status) {
      status =
          loom__array_copy_any(loom__array_pool(ctx), loom_tensor_dtype(input),
                               loom_tensor_data(input),
                               loom_tensor_data(output), copy, transpose_plan);
    }
  }
  loom_allocator_free(allocator, copy);
  return status;
}

loom_status_t loom__array_transpose(loom_kernel_context_t* ctx,
                                    loom_tensor_t* input, const int32_t* perm,
                                    int32_t index) {
  const loom_shape_t* in = loom_tensor_shape(input);
  int32_t rank = in->rank;
  loom_shape_t out_shape = *in;
  if (LOOM_UNLIKELY(rank > LOOM_MAX_RANK)) {
    const int64_t* in_dims = loom_shape_dims(in);
    int64_t dims[LOOM_MAX_SHAPE_RANK];
    for (int32_t i = 0; i < rank; ++i) dims[i] = in_dims[perm[i]];
    LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(&out_shape, dims, rank));
  } else {
    for (int32_t i = 0; i < rank; ++i) out_shape.dims[i] = in->dims[perm[i]];
  }
  loom_tensor_t* output = NULL;
  if (loom_tensor_num_elements(input) == 0) {
    // Nothing to move (and the dims of an empty tensor need not multiply
    // within int64, so there are no strides to plan with).
    return loom_kernel_context_allocate_output(ctx, index, &out_shape, &output);
  }
  // Above LOOM_MAX_RANK the copy is planned on any number of dims.
  if (LOOM_UNLIKELY(rank > LOOM_MAX_RANK)) {
    return transpose_large(ctx, input, perm, index, &out_shape);
  }
  loom__array_copy_t copy;
  copy.rank = rank;
  int64_t in_strides[LOOM_MAX_RANK], out_strides[LOOM_MAX_RANK];
  if (!loom__array_strides(in, in_strides) ||
      !loom__array_strides(&out_shape, out_strides)) {
    return loom__array_invalid("Transpose: the strides overflow");
  }
  for (int32_t i = 0; i < rank; ++i) {
    copy.dims[i] = out_shape.dims[i];
    copy.src_strides[i] = in_strides[perm[i]];
    copy.dst_strides[i] = out_strides[i];
  }
  loom__array_copy_t plan;
  bool nonempty = loom__array_copy_collapse(&copy, &plan);
  if (nonempty && plan.rank == 1 && plan.src_strides[0] == 1) {
    // Only dims of size 1 move: the same elements in the same order.
    return loom__array_set_view(ctx, index, input, 0, &out_shape);
  }
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, index, &out_shape, &output));
  if (!nonempty) return loom_ok_status();
  return transpose_plan(loom__array_pool(ctx), loom_tensor_dtype(input),
                        loom_tensor_data(input), loom_tensor_data(output),
                        &plan);
}

static loom_status_t transpose_run(loom_kernel_context_t* ctx,
                                   loom_tensor_t* const* inputs) {
  int32_t p[LOOM_MAX_SHAPE_RANK];
  LOOM_RETURN_IF_ERROR(check_perm(loom_tensor_shape(inputs[1]), inputs[1],
                                  loom_tensor_shape(inputs[0])->rank, p));
  return loom__array_transpose(ctx, inputs[0], p, 0);
}

static void transpose_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, transpose_run);
}

//===----------------------------------------------------------------------===//
// InvertPermutation
//===----------------------------------------------------------------------===//

static loom_status_t invert_permutation_shape_fn(
    loom_shape_inference_context_t* c, void* user_data) {
  (void)user_data;
  loom_shape_t in, out;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&in, 1, &out));
  return loom_shape_inference_context_set_output(c, 0, &out);
}

// y[x[i]] = i, TensorFlow's checks and messages: every x[i] in [0, n) and
// none twice.
static loom_status_t invert_permutation_run(loom_kernel_context_t* ctx,
                                            loom_tensor_t* const* inputs) {
  loom_tensor_t* x = inputs[0];
  const loom_shape_t* shape = loom_tensor_shape(x);
  if (shape->rank != 1) {
    return loom__array_invalid("invert_permutation expects a 1D vector.");
  }
  int64_t n = shape->dims[0];
  if (n > INT32_MAX) {
    return loom__array_invalid(
        "permutation of nonnegative int32s must have <= int32 max elements");
  }
  loom_tensor_t* y = NULL;
  LOOM_RETURN_IF_ERROR(loom_kernel_context_allocate_output(ctx, 0, shape, &y));
  bool wide = loom_tensor_dtype(y) == LOOM_DTYPE_INT64;
  int32_t* y32 = loom_tensor_data(y);
  int64_t* y64 = loom_tensor_data(y);
  for (int64_t i = 0; i < n; ++i) {
    if (wide) {
      y64[i] = -1;
    } else {
      y32[i] = -1;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = loom__array_index_at(x, i);
    if (d < 0 || d >= n) {
      return loom__array_invalid("%" PRId64 " is not between 0 and %" PRId64, d,
                                 n);
    }
    if ((wide ? y64[d] : y32[d]) != -1) {
      return loom__array_invalid("%" PRId64 " is duplicated in the input.", d);
    }
    if (wide) {
      y64[d] = i;
    } else {
      y32[d] = (int32_t)i;
    }
  }
  return loom_ok_status();
}

static void invert_permutation_compute(void* kernel,
                                       loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, invert_permutation_run);
}

//===----------------------------------------------------------------------===//
// ReverseV2
//===----------------------------------------------------------------------===//

// Marks the axes in `axis` (any integer dtype, negative from the end) in
// reversed[0, rank), with TensorFlow's messages.
static loom_status_t reverse_axes(const loom_tensor_t* axis, int32_t rank,
                                  bool* reversed) {
  for (int32_t d = 0; d < rank; ++d) reversed[d] = false;
  int64_t count = loom_tensor_num_elements(axis);
  for (int64_t i = 0; i < count; ++i) {
    int64_t value = loom__array_index_at(axis, i);
    int64_t canonical = value < 0 ? value + rank : value;
    if (canonical < 0 || canonical >= rank) {
      return loom__array_invalid("'axis'[%" PRId64 "] = %" PRId64
                                 " is out of valid range [0, %d",
                                 i, value, rank - 1);
    }
    if (reversed[canonical]) {
      return loom__array_invalid("axis %" PRId64 " specified more than once.",
                                 canonical);
    }
    reversed[canonical] = true;
  }
  return loom_ok_status();
}

static loom_status_t reverse_shape_fn(loom_shape_inference_context_t* c,
                                      void* user_data) {
  (void)user_data;
  loom_shape_t in, axis_shape, axis_vector;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &axis_shape));
  LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&axis_shape, 1, &axis_vector));
  const loom_tensor_t* axis = loom_shape_inference_context_input_tensor(c, 1);
  if (axis && in.rank >= 0) {
    bool reversed[LOOM_MAX_SHAPE_RANK];
    LOOM_RETURN_IF_ERROR(reverse_axes(axis, in.rank, reversed));
  }
  return loom_shape_inference_context_set_output(c, 0, &in);
}

// ReverseV2's copy of more than kArrayMaxCopyRank alternating groups
// (dims[g] elements each, reversed when flags[g]), planned as reverse_run's
// and run by loom__array_copy_any. Out of line: its plan is large.
static __attribute__((noinline)) loom_status_t reverse_many_groups(
    loom_kernel_context_t* ctx, loom_dtype_t dtype, const void* src, void* dst,
    const int64_t* dims, const bool* flags, int32_t groups) {
  loom__array_copy_any_t* copy = NULL;
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, sizeof(*copy), (void**)&copy));
  copy->rank = groups;
  int64_t offset = 0, stride = 1;
  for (int32_t g = groups - 1; g >= 0; --g) {
    copy->dims[g] = dims[g];
    copy->dst_strides[g] = stride;
    copy->src_strides[g] = flags[g] ? -stride : stride;
    if (flags[g]) offset += (dims[g] - 1) * stride;
    stride *= dims[g];
  }
  ptrdiff_t size = (ptrdiff_t)loom__array_element_size(dtype);
  loom_status_t status = loom__array_copy_any(
      loom__array_pool(ctx), dtype, (const char*)src + (ptrdiff_t)offset * size,
      dst, copy, NULL);
  loom_allocator_free(allocator, copy);
  return status;
}

static loom_status_t reverse_run(loom_kernel_context_t* ctx,
                                 loom_tensor_t* const* inputs) {
  loom_tensor_t* input = inputs[0];
  const loom_shape_t* in = loom_tensor_shape(input);
  // As TensorFlow: a scalar or an empty tensor is its own reverse, whatever
  // the axes.
  if (in->rank == 0 || loom_tensor_num_elements(input) == 0) {
    return loom__array_set_view(ctx, 0, input, 0, in);
  }
  const loom_shape_t* axis_shape = loom_tensor_shape(inputs[1]);
  if (axis_shape->rank != 1) {
    return loom__array_invalid("'dims' must be 1-dimension, not %d",
                               axis_shape->rank);
  }
  bool reversed[LOOM_MAX_SHAPE_RANK];
  LOOM_RETURN_IF_ERROR(reverse_axes(inputs[1], in->rank, reversed));
  loom_tensor_t* output = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, in, &output));
  // Neighbouring dims both reversed or both kept reverse as one dim (the
  // flat index i * B + j of a reversed pair goes to A * B - 1 - (i * B + j)),
  // and dims of size 1 drop out. Up to kArrayMaxCopyRank alternating groups
  // run as one copy; more through loom__array_copy_any (reverse_many_groups).
  // The input holds elements, so the groups' sizes, strides and offsets fit
  // int64.
  const int64_t* in_dims = loom_shape_dims(in);
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  bool flags[LOOM_MAX_SHAPE_RANK];
  int32_t groups = 0;
  for (int32_t d = 0; d < in->rank; ++d) {
    if (in_dims[d] == 1) continue;
    if (groups > 0 && flags[groups - 1] == reversed[d]) {
      dims[groups - 1] *= in_dims[d];
      continue;
    }
    dims[groups] = in_dims[d];
    flags[groups] = reversed[d];
    groups++;
  }
  if (groups == 0) {  // one element
    dims[0] = 1;
    flags[0] = false;
    groups = 1;
  }
  loom_dtype_t dtype = loom_tensor_dtype(input);
  if (LOOM_UNLIKELY(groups > kArrayMaxCopyRank)) {
    return reverse_many_groups(ctx, dtype, loom_tensor_data(input),
                               loom_tensor_data(output), dims, flags, groups);
  }
  loom__array_copy_t copy;
  copy.rank = groups;
  size_t size = loom__array_element_size(dtype);
  int64_t offset = 0, stride = 1;
  for (int32_t g = copy.rank - 1; g >= 0; --g) {
    copy.dims[g] = dims[g];
    copy.dst_strides[g] = stride;
    copy.src_strides[g] = flags[g] ? -stride : stride;
    if (flags[g]) offset += (copy.dims[g] - 1) * stride;
    stride *= copy.dims[g];
  }
  return loom__array_copy(loom__array_pool(ctx), dtype,
                          (const char*)loom_tensor_data(input) +
                              (ptrdiff_t)offset * (ptrdiff_t)size,
                          loom_tensor_data(output), &copy);
}

static void reverse_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, reverse_run);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__builtin_op_t kOps[] = {
    {.name = "Transpose",
     .inputs = {"x: T", "perm: Tperm"},
     .outputs = {"y: T"},
     .attrs = {"T: type", "Tperm: {int32, int64} = DT_INT32"},
     .shape_fn = transpose_shape_fn},
    {.name = "InvertPermutation",
     .inputs = {"x: T"},
     .outputs = {"y: T"},
     .attrs = {"T: {int32, int64} = DT_INT32"},
     .shape_fn = invert_permutation_shape_fn},
    {.name = "ReverseV2",
     .inputs = {"tensor: T", "axis: Tidx"},
     .outputs = {"output: T"},
     .attrs = {"Tidx: {int32, int64} = DT_INT32",
               "T: {uint8, int8, uint16, int16, int32, uint32, int64, uint64, "
               "bool, bfloat16, half, float, double, complex64, complex128, "
               "string}"},
     .shape_fn = reverse_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Transpose",
     .any_rank = true,
     .compute = transpose_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"perm"}},
    {.op_name = "InvertPermutation",
     .compute = invert_permutation_compute,
     .type_attr = "T",
     .types = {LOOM_DTYPE_INT32, LOOM_DTYPE_INT64}},
    {.op_name = "ReverseV2",
     .compute = reverse_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"axis"}},
};

loom_status_t loom__register_array_transpose_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
