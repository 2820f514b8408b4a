// GatherNd (TensorFlow's signature, attrs and messages): each innermost
// vector of `indices` picks a slice of `params` by its leading dims;
// output shape indices.shape[:-1] + params.shape[depth:]. Every tuple is
// checked before anything is copied, as TensorFlow's CPU kernel does;
// `bad_indices_policy: "IGNORE"` writes zeros for bad tuples instead.
// Slices are copied in parallel (a memcpy each, strings assigned).

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "kernels/array_internal.h"
#include "kernels/nd_index.h"

// Checks the ranks; *out gets indices.shape[:-1] + params.shape[depth:]
// (unknown dims stay unknown; out is unknown while a rank is).
static loom_status_t gather_nd_plan(const loom_shape_t* params,
                                    const loom_shape_t* indices,
                                    loom_shape_t* out) {
  *out = loom_shape_unknown();
  if (params->rank == 0) {
    return loom__array_invalid("params must be at least a vector");
  }
  if (indices->rank == 0) {
    return loom__array_invalid("indices must be at least a vector");
  }
  if (params->rank < 0 || indices->rank < 0) return loom_ok_status();
  const int64_t* index_dims = loom_shape_dims(indices);
  const int64_t* params_dims = loom_shape_dims(params);
  int64_t depth = index_dims[indices->rank - 1];
  if (depth > params->rank) {
    return loom__array_invalid(
        "index innermost dimension length must be <= params rank; saw: "
        "%" PRId64 " vs. %d",
        depth, params->rank);
  }
  if (depth < 0) return loom_ok_status();
  int32_t rank = indices->rank - 1 + params->rank - (int32_t)depth;
  if (rank > LOOM_MAX_SHAPE_RANK) {
    char text[LOOM_SHAPE_FORMAT_MAX];
    return loom__array_invalid(
        "GatherNd: the result would have rank %d, above the maximum rank %d "
        "(indices %s)",
        rank, LOOM_MAX_SHAPE_RANK,
        loom__shape_debug_string(indices, text, sizeof(text)));
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t outer = indices->rank - 1;
  memcpy(dims, index_dims, sizeof(int64_t) * (size_t)outer);
  memcpy(dims + outer, params_dims + depth,
         sizeof(int64_t) * (size_t)(params->rank - depth));
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(out, dims, rank));
  return loom__array_check_count(
      "GatherNd", "params and indices give output shape", dims, rank, out);
}

static loom_status_t gather_nd_shape_fn(loom_shape_inference_context_t* c,
                                        void* user_data) {
  (void)user_data;
  loom_shape_t params, indices, out;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &params));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &indices));
  LOOM_RETURN_IF_ERROR(gather_nd_plan(&params, &indices, &out));
  return loom_shape_inference_context_set_output(c, 0, &out);
}

typedef struct gather_nd_job_t {
  const loom__nd_index_t* index;
  loom_dtype_t dtype;
  const char* params;
  char* out;
  int64_t inner;       // elements per slice
  size_t slice_bytes;  // bytes per slice
  _Atomic bool failed;
} gather_nd_job_t;

static void run_gather_nd(void* arg, int64_t begin, int64_t end) {
  gather_nd_job_t* job = arg;
  bool ok = true;
  for (int64_t i = begin; i < end; ++i) {
    int64_t slice = loom__nd_index_slice(job->index, i);
    char* dst = job->out + (size_t)i * job->slice_bytes;
    if (slice < 0) {  // IGNORE: zeros (the output was allocated zeroed)
      continue;
    }
    const char* src = job->params + (size_t)slice * job->slice_bytes;
    if (job->dtype == LOOM_DTYPE_STRING) {
      ok &= loom__array_copy_row(job->dtype, src, 1, dst, 1, job->inner);
    } else {
      memcpy(dst, src, job->slice_bytes);
    }
  }
  if (!ok) atomic_store_explicit(&job->failed, true, memory_order_relaxed);
}

static loom_status_t gather_nd_run(loom_kernel_context_t* ctx,
                                   loom_tensor_t* const* inputs) {
  loom_tensor_t* params = inputs[0];
  loom_tensor_t* indices = inputs[1];
  const loom_shape_t* ps = loom_tensor_shape(params);
  loom_shape_t out_shape;
  LOOM_RETURN_IF_ERROR(
      gather_nd_plan(ps, loom_tensor_shape(indices), &out_shape));
  loom__nd_index_t index;
  (void)loom__nd_index_init(&index, indices, ps);
  if (loom_tensor_num_elements(params) == 0 && index.count > 0 &&
      index.depth > 0) {
    char text[LOOM_SHAPE_FORMAT_MAX];
    return loom__array_invalid(
        "Requested more than 0 entries, but params is empty.  Params shape: "
        "%s",
        loom__shape_debug_string(ps, text, sizeof(text)));
  }
  bool ignore = false;
  LOOM_RETURN_IF_ERROR(
      loom__nd_index_policy(loom_kernel_context_attrs(ctx), &ignore));
  if (!ignore) {
    int64_t bad = loom__nd_index_first_bad(&index);
    if (bad >= 0) {
      char suffix[96];
      snprintf(suffix, sizeof(suffix), ", node name: %s",
               loom_kernel_context_op(ctx)->name);
      return loom__nd_index_error(&index, bad, "param shape", ps, suffix);
    }
  }
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out));
  int64_t count = loom_tensor_num_elements(out);
  if (count == 0) return loom_ok_status();
  gather_nd_job_t job = {
      .index = &index,
      .dtype = loom_tensor_dtype(params),
      .params = loom_tensor_data(params),
      .out = loom_tensor_data(out),
      .inner = loom__array_dims_product(ps, index.depth, ps->rank),
  };
  job.slice_bytes = (size_t)job.inner * loom__array_element_size(job.dtype);
  atomic_init(&job.failed, false);
  if (ignore && job.dtype != LOOM_DTYPE_STRING) {
    memset(job.out, 0, (size_t)count * loom__array_element_size(job.dtype));
  }
  loom_thread_pool_t* pool = loom__array_pool(ctx);
  if (!pool || (int64_t)job.slice_bytes * index.count < 64 * 1024) {
    run_gather_nd(&job, 0, index.count);
  } else {
    int64_t cost = job.dtype == LOOM_DTYPE_STRING
                       ? 20 * job.inner
                       : (int64_t)job.slice_bytes / 8 + 4 * index.depth;
    LOOM_RETURN_IF_ERROR(loom_thread_pool_parallel_for(pool, index.count, cost,
                                                       run_gather_nd, &job));
  }
  if (atomic_load(&job.failed)) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory copying string elements");
  }
  return loom_ok_status();
}

static void gather_nd_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, gather_nd_run);
}

static const loom__builtin_op_t kOps[] = {
    {.name = "GatherNd",
     .inputs = {"params: Tparams", "indices: Tindices"},
     .outputs = {"output: Tparams"},
     .attrs = {"Tparams: type", "Tindices: {int16, int32, int64}",
               "bad_indices_policy: string = ''"},
     .shape_fn = gather_nd_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "GatherNd",
     .compute = gather_nd_compute,
     .type_attr = "Tparams",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .any_rank = true},
};

loom_status_t loom__register_gather_nd_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
