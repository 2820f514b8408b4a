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
  // The batch dims (all but the two transposed ones).
  int32_t batch_rank;
  int64_t batch_dims[LOOM_MAX_RANK];
  int64_t batch_src[LOOM_MAX_RANK];
  int64_t batch_dst[LOOM_MAX_RANK];
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

// The transpose of a non-empty `in` (above LOOM_MAX_RANK) by `perm` as one
// of at most LOOM_MAX_RANK dims moving the same elements: size-1 dims are
// dropped and input dims that stay next to each other, in order, under the
// permutation become one. UNIMPLEMENTED when more dims remain.
static loom_status_t fold_transpose(const loom_shape_t* in, const int32_t* perm,
                                    loom_shape_t* folded,
                                    int32_t* folded_perm) {
  const int64_t* dims = loom_shape_dims(in);
  int32_t rank = in->rank;
  // compact[i]: input dim i among the dims above 1 (-1: dropped).
  int32_t compact[LOOM_MAX_SHAPE_RANK], order[LOOM_MAX_SHAPE_RANK];
  int32_t position[LOOM_MAX_SHAPE_RANK], group[LOOM_MAX_SHAPE_RANK];
  int64_t kept_dims[LOOM_MAX_SHAPE_RANK];
  int32_t kept = 0, n = 0;
  for (int32_t i = 0; i < rank; ++i) {
    compact[i] = dims[i] == 1 ? -1 : kept;
    if (dims[i] != 1) kept_dims[kept++] = dims[i];
  }
  for (int32_t k = 0; k < rank; ++k) {
    if (compact[perm[k]] >= 0) order[n++] = compact[perm[k]];
  }
  for (int32_t p = 0; p < n; ++p) position[order[p]] = p;
  // Input dim j joins j - 1's group when it comes right after it.
  int64_t group_dims[LOOM_MAX_RANK];
  int32_t groups = 0;
  for (int32_t j = 0; j < kept; ++j) {
    if (j > 0 && position[j] == position[j - 1] + 1) {
      group[j] = group[j - 1];
      group_dims[group[j]] *= kept_dims[j];  // below the input's count
      continue;
    }
    if (groups == LOOM_MAX_RANK) {
      char shape_text[LOOM_SHAPE_FORMAT_MAX];
      return loom_make_status(
          LOOM_STATUS_UNIMPLEMENTED,
          "Transpose of a tensor of shape %s: after merging the dims that "
          "stay adjacent, more than %d dims move",
          loom__shape_debug_string(in, shape_text, sizeof(shape_text)),
          LOOM_MAX_RANK);
    }
    group[j] = groups;
    group_dims[groups++] = kept_dims[j];
  }
  if (groups == 0) {  // every dim is 1
    group_dims[0] = 1;
    folded_perm[0] = 0;
    return loom_shape_initialize(folded, group_dims, 1);
  }
  int32_t m = 0;
  for (int32_t p = 0; p < n; ++p) {
    int32_t j = order[p];
    if (j == 0 || group[j] != group[j - 1]) folded_perm[m++] = group[j];
  }
  return loom_shape_initialize(folded, group_dims, groups);
}

loom_status_t loom__array_transpose(loom_kernel_context_t* ctx,
                                    loom_tensor_t* input, const int32_t* perm,
                                    int32_t index) {
  const loom_shape_t* in = loom_tensor_shape(input);
  int32_t rank = in->rank;
  loom_shape_t out_shape = *in;
  loom_shape_t folded;
  int32_t folded_perm[LOOM_MAX_RANK];
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
  // Above LOOM_MAX_RANK the copy is planned on the folded transpose.
  const loom_shape_t* walk_in = in;
  if (LOOM_UNLIKELY(rank > LOOM_MAX_RANK)) {
    LOOM_RETURN_IF_ERROR(fold_transpose(in, perm, &folded, folded_perm));
    walk_in = &folded;
    perm = folded_perm;
    rank = folded.rank;
  }
  loom_shape_t walk_out = *walk_in;
  for (int32_t i = 0; i < rank; ++i) walk_out.dims[i] = walk_in->dims[perm[i]];
  loom__array_copy_t copy;
  copy.rank = rank;
  int64_t in_strides[LOOM_MAX_RANK], out_strides[LOOM_MAX_RANK];
  if (!loom__array_strides(walk_in, in_strides) ||
      !loom__array_strides(&walk_out, out_strides)) {
    return loom__array_invalid("Transpose: the strides overflow");
  }
  for (int32_t i = 0; i < rank; ++i) {
    copy.dims[i] = walk_out.dims[i];
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
  loom_dtype_t dtype = loom_tensor_dtype(input);
  size_t size = loom__array_element_size(dtype);
  loom__transpose_panel_fn_t panel =
      dtype == LOOM_DTYPE_STRING ? NULL : loom__transpose_panel(size);
  loom_thread_pool_t* pool = loom__array_pool(ctx);
  if (plan.src_strides[plan.rank - 1] == 1 || !panel) {
    return loom__array_copy(pool, dtype, loom_tensor_data(input),
                            loom_tensor_data(output), &plan);
  }
  int32_t b = -1;
  for (int32_t k = 0; k < plan.rank - 1; ++k) {
    if (plan.src_strides[k] == 1) b = k;
  }
  if (b < 0) {
    return loom__array_copy(pool, dtype, loom_tensor_data(input),
                            loom_tensor_data(output), &plan);
  }
  return transpose_2d(pool, panel, size, loom_tensor_data(input),
                      loom_tensor_data(output), &plan, b);
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
  // and dims of size 1 drop out: any rank runs when at most
  // kArrayMaxCopyRank alternating groups remain. The input holds elements,
  // so the groups' sizes, strides and offsets fit int64.
  const int64_t* in_dims = loom_shape_dims(in);
  loom__array_copy_t copy = {.rank = 0};
  bool flags[kArrayMaxCopyRank];
  for (int32_t d = 0; d < in->rank; ++d) {
    if (in_dims[d] == 1) continue;
    if (copy.rank > 0 && flags[copy.rank - 1] == reversed[d]) {
      copy.dims[copy.rank - 1] *= in_dims[d];
      continue;
    }
    if (copy.rank == kArrayMaxCopyRank) {
      return loom_make_status(
          LOOM_STATUS_UNIMPLEMENTED,
          "ReverseV2: the input of rank %d alternates between reversed and "
          "kept dims more than %d times",
          in->rank, (int)kArrayMaxCopyRank);
    }
    copy.dims[copy.rank] = in_dims[d];
    flags[copy.rank] = reversed[d];
    copy.rank++;
  }
  if (copy.rank == 0) {  // one element
    copy.dims[0] = 1;
    flags[0] = false;
    copy.rank = 1;
  }
  loom_dtype_t dtype = loom_tensor_dtype(input);
  size_t size = loom__array_element_size(dtype);
  int64_t offset = 0, stride = 1;
  for (int32_t g = copy.rank - 1; g >= 0; --g) {
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
