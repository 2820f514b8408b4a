// ArgMax and ArgMin, with TensorFlow's signatures, shape functions,
// semantics and messages: the index of the first best element along one
// axis, run on the reductions' plan (reduction_plan.h) as a reduction of
// [outer, extent, inner] over its middle dim.

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/reduction.h"
#include "kernels/reduction_plan.h"
#include "kernels/shape_fns.h"
#include "tensor/checked_size.h"

//===----------------------------------------------------------------------===//
// Axis and shape
//===----------------------------------------------------------------------===//

// The axis of ArgMax / ArgMin, checked as TensorFlow's kernel does.
static loom_status_t arg_axis(const loom_tensor_t* dimension,
                              const loom_shape_t* input, int32_t* out_axis) {
  const loom_shape_t* shape = loom_tensor_shape(dimension);
  if (shape->rank != 0) {
    char text[160];
    loom__shape_debug_string(shape, text, sizeof(text));
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "dim must be a scalar, but received tensor of shape: %s", text);
  }
  int64_t dim;
  if (!loom__reduce_read_index(dimension, 0, &dim)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "dimension must be int16, int32 or int64, got %s",
                            loom_dtype_name(loom_tensor_dtype(dimension)));
  }
  int64_t rank = input->rank;
  int64_t axis = dim < 0 ? dim + rank : dim;
  if (axis < 0 || axis >= rank) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Expected dimension in the range [%lld, %lld), but got %lld",
        (long long)-rank, (long long)rank, (long long)dim);
  }
  if (loom_shape_dims(input)[axis] == 0) {
    char text[160];
    loom__shape_debug_string(input, text, sizeof(text));
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Reduction axis %lld is empty in shape %s",
                            (long long)dim, text);
  }
  *out_axis = (int32_t)axis;
  return loom_ok_status();
}

// `input` without dim `axis`.
static loom_status_t shape_without_axis(const loom_shape_t* input, int32_t axis,
                                        loom_shape_t* out) {
  const int64_t* in = loom_shape_dims(input);
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t rank = 0;
  for (int32_t d = 0; d < input->rank; ++d) {
    if (d != axis) dims[rank++] = in[d];
  }
  return loom_shape_initialize_large(out, dims, rank);
}

static loom_status_t arg_shape_fn(loom_shape_inference_context_t* context,
                                  void* user_data) {
  (void)user_data;
  loom_shape_t input;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &input));
  const loom_tensor_t* dimension =
      loom_shape_inference_context_input_tensor(context, 1);
  loom_shape_t out = loom_shape_unknown();
  if (input.rank >= 0 && dimension) {
    // The axis is known: checked now (its size only when known), and the
    // other dims pass through, known or not.
    const int64_t* in = loom_shape_dims(&input);
    int64_t dims[LOOM_MAX_SHAPE_RANK];
    for (int32_t d = 0; d < input.rank; ++d) dims[d] = in[d] < 0 ? 1 : in[d];
    loom_shape_t checked;
    LOOM_RETURN_IF_ERROR(
        loom_shape_initialize_large(&checked, dims, input.rank));
    int32_t axis = 0;
    LOOM_RETURN_IF_ERROR(arg_axis(dimension, &checked, &axis));
    LOOM_RETURN_IF_ERROR(shape_without_axis(&input, axis, &out));
  } else if (input.rank > 0) {
    int64_t dims[LOOM_MAX_SHAPE_RANK];
    for (int32_t d = 0; d < input.rank - 1; ++d) dims[d] = LOOM_UNKNOWN_DIM;
    LOOM_RETURN_IF_ERROR(
        loom_shape_initialize_large(&out, dims, input.rank - 1));
  }
  return loom_shape_inference_context_set_output(context, 0, &out);
}

//===----------------------------------------------------------------------===//
// ArgMax / ArgMin
//===----------------------------------------------------------------------===//

typedef struct arg_job_t {
  loom__reduce_plan_t plan;  // rows_walk over the outer dims; no outer_walk
  loom__reduce_split_t split;
  const loom__arg_loops_t* loops;
  const char* x;
  int64_t* index;       // outputs indices (int64), or partial indices
  char* partial_best;   // parts * outputs best values, when parts > 1
  int64_t* partial_at;  // parts * outputs indices, when parts > 1
  size_t in_size;
  loom_allocator_t allocator;
  _Atomic int failed;  // a block could not allocate its running bests
} arg_job_t;

static void arg_units(void* arg, int64_t begin, int64_t end) {
  arg_job_t* job = arg;
  const loom__reduce_plan_t* plan = &job->plan;
  const loom__arg_loops_t* loops = job->loops;
  // Running best values and their positions, one per output of a block.
  size_t bytes = (size_t)job->split.tile * (sizeof(int64_t) * 2);
  char* best = NULL;
  loom_status_t status =
      loom_allocator_malloc_aligned(job->allocator, bytes, 64, (void**)&best);
  if (status) {
    loom_status_free(status);
    job->failed = 1;
    return;
  }
  int64_t* at = (int64_t*)(best + (size_t)job->split.tile * sizeof(int64_t));
  for (int64_t unit = begin; unit < end; ++unit) {
    loom__reduce_unit_t u = loom__reduce_unit_at(plan, &job->split, unit);
    loops->init(best, at, u.count);
    const char* base =
        job->x + (size_t)loom__reduce_walk_offset(&plan->rows_walk, u.row) *
                     job->in_size;
    int64_t n = u.end - u.begin;
    if (plan->inner_reduced) {
      loops->rows(
          base + (size_t)(u.first * plan->row_stride + u.begin) * job->in_size,
          plan->row_stride, u.count, n, u.begin, best, at);
    } else {
      loops->columns(
          base + (size_t)(u.begin * plan->row_stride + u.first) * job->in_size,
          plan->row_stride, n, u.count, u.begin, best, at);
    }
    int64_t output = u.row * plan->width + u.first;
    if (job->split.parts == 1) {
      memcpy(job->index + output, at, (size_t)u.count * sizeof(int64_t));
    } else {
      int64_t part = unit % job->split.parts;
      size_t slot = (size_t)part * (size_t)plan->outputs + (size_t)output;
      memcpy(job->partial_best + slot * job->loops->value_size, best,
             (size_t)u.count * job->loops->value_size);
      memcpy(job->partial_at + slot, at, (size_t)u.count * sizeof(int64_t));
    }
  }
  loom_allocator_free(job->allocator, best);
}

// Converts int64 indices to the output type (int16, uint16, int32, int64).
static void store_indices(const int64_t* index, int64_t n, loom_dtype_t dtype,
                          void* out) {
  switch (dtype) {
    case LOOM_DTYPE_INT16:
      for (int64_t i = 0; i < n; ++i) ((int16_t*)out)[i] = (int16_t)index[i];
      break;
    case LOOM_DTYPE_UINT16:
      for (int64_t i = 0; i < n; ++i) ((uint16_t*)out)[i] = (uint16_t)index[i];
      break;
    case LOOM_DTYPE_INT32:
      for (int64_t i = 0; i < n; ++i) ((int32_t*)out)[i] = (int32_t)index[i];
      break;
    default:
      if (out != (const void*)index) {
        memcpy(out, index, (size_t)n * sizeof(int64_t));
      }
      break;
  }
}

static void arg_compute(loom_kernel_context_t* ctx, loom__arg_op_t op) {
  loom_tensor_t* x = loom_kernel_context_input(ctx, 0);
  const loom_shape_t* shape = loom_tensor_shape(x);
  loom_dtype_t dtype = loom_tensor_dtype(x);
  int32_t axis = 0;
  loom_status_t status =
      arg_axis(loom_kernel_context_input(ctx, 1), shape, &axis);
  if (status) FAIL_AND_RETURN(ctx, status);
  const loom__arg_loops_t* loops = loom__arg_loops(op, dtype);
  if (!loops) {
    FAIL_AND_RETURN(ctx, loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                                          "no CPU loop for input dtype %s",
                                          loom_dtype_name(dtype)));
  }
  loom_shape_t out_shape;
  status = shape_without_axis(shape, axis, &out_shape);
  if (status) FAIL_AND_RETURN(ctx, status);
  int64_t outputs;
  status = loom__reduce_output_count(ctx, loom_shape_dims(&out_shape),
                                     out_shape.rank, &outputs);
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_tensor_t* out = NULL;
  status = loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out);
  if (status) FAIL_AND_RETURN(ctx, status);
  if (outputs == 0) return;
  // Both divide the output count, which fits.
  int64_t outer, inner;
  const int64_t* dims = loom_shape_dims(shape);
  if (!loom__size_product(dims, axis, &outer) ||
      !loom__size_product(dims + axis + 1, shape->rank - axis - 1, &inner)) {
    FAIL_AND_RETURN(ctx, loom_make_status(LOOM_STATUS_INTERNAL,
                                          "%s: the output count %lld fits "
                                          "but its parts do not",
                                          loom_kernel_context_op(ctx)->name,
                                          (long long)outputs));
  }
  // [outer, extent, inner]: rows when inner == 1, else columns per outer.
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  arg_job_t job = {.loops = loops,
                   .x = loom_tensor_data(x),
                   .in_size = loom_dtype_size(dtype),
                   .allocator = allocator};
  loom__reduce_plan_t* plan = &job.plan;
  int64_t extent = dims[axis];
  plan->outer_walk.count = 0;
  plan->segments = 1;
  plan->extent = extent;
  plan->reduced = extent;
  plan->outputs = outputs;
  plan->rows_walk.count = 0;
  if (inner == 1) {
    plan->inner_reduced = true;
    plan->out_rows = 1;
    plan->width = outer;
    plan->row_stride = extent;
  } else {
    plan->inner_reduced = false;
    plan->out_rows = outer;
    plan->width = inner;
    plan->row_stride = inner;
    plan->rows_walk.count = 1;
    plan->rows_walk.dims[0] = outer;
    plan->rows_walk.strides[0] = extent * inner;
  }
  job.split = loom__reduce_plan_split(plan);
  loom_dtype_t out_dtype = loom_tensor_dtype(out);
  void* scratch = NULL;
  if (out_dtype == LOOM_DTYPE_INT64 && job.split.parts == 1) {
    job.index = loom_tensor_data(out);
  } else {
    // An index (and with parts, a best value) per output and part.
    int64_t slots;
    size_t bytes;
    size_t per_slot =
        sizeof(int64_t) + (job.split.parts > 1 ? loops->value_size : 0);
    if (!loom__size_mul(outputs, job.split.parts, &slots) ||
        !loom__size_bytes(slots, per_slot, &bytes)) {
      FAIL_AND_RETURN(ctx, loom__size_overflow_error(
                               loom_kernel_context_op(ctx)->name,
                               "partial bests", "(%lld parts of %lld outputs)",
                               (long long)job.split.parts, (long long)outputs));
    }
    status = loom_allocator_malloc_aligned(allocator, bytes, 64, &scratch);
    if (status) FAIL_AND_RETURN(ctx, status);
    if (job.split.parts > 1) {
      job.partial_at = scratch;
      job.partial_best = (char*)scratch + (size_t)outputs *
                                              (size_t)job.split.parts *
                                              sizeof(int64_t);
      job.index = job.partial_at;
    } else {
      job.index = scratch;
    }
  }
  status = loom__reduce_run_parallel(
      ctx, job.split.units, loom_tensor_num_elements(x), 1, arg_units, &job);
  if (!status && atomic_load(&job.failed)) {
    status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory for an arg reduction's bests");
  }
  if (!status && job.split.parts > 1) {
    for (int64_t p = 1; p < job.split.parts; ++p) {
      size_t slot = (size_t)p * (size_t)outputs;
      loops->combine(job.partial_best, job.partial_at,
                     job.partial_best + slot * loops->value_size,
                     job.partial_at + slot, outputs);
    }
  }
  if (!status)
    store_indices(job.index, outputs, out_dtype, loom_tensor_data(out));
  loom_allocator_free(allocator, scratch);
  if (status) loom_kernel_context_fail(ctx, status);
}

static void argmax_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  arg_compute(ctx, LOOM_ARG_MAX);
}

static void argmin_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  arg_compute(ctx, LOOM_ARG_MIN);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

#define ARG_OP(op_name)                                                 \
  {                                                                     \
    .name = op_name, .inputs = {"input: T", "dimension: Tidx"},         \
    .outputs = {"output: output_type"},                                 \
    .attrs = {"T: {numbertype, bool}",                                  \
              "Tidx: {int16, int32, int64} = DT_INT32",                 \
              "output_type: {int16, uint16, int32, int64} = DT_INT64"}, \
    .shape_fn = arg_shape_fn                                            \
  }

static const loom__builtin_op_t kOps[] = {
    ARG_OP("ArgMax"),
    ARG_OP("ArgMin"),
};

#define REAL_TYPES                                                           \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16, \
      LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, LOOM_DTYPE_UINT8, LOOM_DTYPE_INT8, \
      LOOM_DTYPE_INT16, LOOM_DTYPE_UINT16, LOOM_DTYPE_UINT32,                \
      LOOM_DTYPE_UINT64

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "ArgMax",
     .compute = argmax_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {REAL_TYPES, LOOM_DTYPE_BOOL},
     .host_memory = {"dimension"}},
    {.op_name = "ArgMin",
     .compute = argmin_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {REAL_TYPES, LOOM_DTYPE_BOOL},
     .host_memory = {"dimension"}},
};

loom_status_t loom__register_reduction_arg_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
