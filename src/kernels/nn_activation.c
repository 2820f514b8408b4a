// Activations with attributes and the L2 loss, outside the SIMD unary
// family (which has no attributes): LeakyRelu, LeakyReluGrad and L2Loss,
// with TensorFlow's signatures, formulas and messages. Half and bfloat16
// are computed in float and rounded once per operation, as Eigen does:
// alpha is first rounded to T, then x * alpha.

#include <stdio.h>
#include <string.h>

#include "base/half.h"
#include "base/small_vector.h"
#include "kernels/array_internal.h"
#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"
#include "loom/tensor.h"
#include "loom/thread_pool.h"

// Elements per parallel-for unit, and the cost of one unit.
enum { kBlock = 4096, kBlockCost = 4096 };

static float attr_alpha(loom_kernel_context_t* ctx) {
  float alpha = 0.2f;
  loom_status_t status =
      loom_op_attrs_get_f32(loom_kernel_context_attrs(ctx), "alpha", &alpha);
  loom_status_free(status);  // the op's default fills it in
  return alpha;
}

//===----------------------------------------------------------------------===//
// LeakyRelu, LeakyReluGrad
//===----------------------------------------------------------------------===//

// y = x > 0 ? g : g * alpha, where g is x for LeakyRelu and the incoming
// gradient for LeakyReluGrad (alpha may be > 1 or < 0: no max()).
typedef struct leaky_job_t {
  loom_dtype_t dtype;
  const void* g;
  const void* x;
  void* y;
  int64_t count;
  float alpha;
} leaky_job_t;

static void leaky_block(void* arg, int64_t begin_block, int64_t end_block) {
  const leaky_job_t* job = arg;
  int64_t begin = begin_block * kBlock;
  int64_t end =
      end_block * kBlock < job->count ? end_block * kBlock : job->count;
  switch (job->dtype) {
    case LOOM_DTYPE_FLOAT: {
      const float *g = job->g, *x = job->x;
      float* y = job->y;
      for (int64_t i = begin; i < end; ++i) {
        y[i] = x[i] > 0 ? g[i] : g[i] * job->alpha;
      }
      break;
    }
    case LOOM_DTYPE_DOUBLE: {
      const double *g = job->g, *x = job->x;
      double* y = job->y;
      double alpha = job->alpha;
      for (int64_t i = begin; i < end; ++i) {
        y[i] = x[i] > 0 ? g[i] : g[i] * alpha;
      }
      break;
    }
    case LOOM_DTYPE_HALF: {
      const uint16_t *g = job->g, *x = job->x;
      uint16_t* y = job->y;
      float alpha = loom__half_to_float(loom__float_to_half(job->alpha));
      for (int64_t i = begin; i < end; ++i) {
        y[i] = loom__half_to_float(x[i]) > 0
                   ? g[i]
                   : loom__float_to_half(loom__half_to_float(g[i]) * alpha);
      }
      break;
    }
    case LOOM_DTYPE_BFLOAT16: {
      const uint16_t *g = job->g, *x = job->x;
      uint16_t* y = job->y;
      float alpha =
          loom__bfloat16_to_float(loom__float_to_bfloat16(job->alpha));
      for (int64_t i = begin; i < end; ++i) {
        y[i] = loom__bfloat16_to_float(x[i]) > 0
                   ? g[i]
                   : loom__float_to_bfloat16(loom__bfloat16_to_float(g[i]) *
                                             alpha);
      }
      break;
    }
    default:
      break;
  }
}

static loom_status_t leaky_run(loom_kernel_context_t* ctx, loom_tensor_t* g,
                               loom_tensor_t* x) {
  loom_tensor_t* y = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, loom_tensor_shape(x), &y));
  leaky_job_t job = {
      .dtype = loom_tensor_dtype(x),
      .g = loom_tensor_data(g),
      .x = loom_tensor_data(x),
      .y = loom_tensor_data(y),
      .count = loom_tensor_num_elements(x),
      .alpha = attr_alpha(ctx),
  };
  if (job.count == 0) return loom_ok_status();
  int64_t blocks = (job.count + kBlock - 1) / kBlock;
  return loom_thread_pool_parallel_for(loom__array_pool(ctx), blocks,
                                       kBlockCost, leaky_block, &job);
}

static loom_status_t leaky_relu_run(loom_kernel_context_t* ctx,
                                    loom_tensor_t* const* inputs) {
  return leaky_run(ctx, inputs[0], inputs[0]);
}

// TensorFlow's OpKernelContext::ValidateInputsAreSameShape message; the
// shape function gives it too, as the unary family's gradient ops do.
static loom_status_t leaky_relu_grad_run(loom_kernel_context_t* ctx,
                                         loom_tensor_t* const* inputs) {
  const loom_shape_t* gs = loom_tensor_shape(inputs[0]);
  const loom_shape_t* xs = loom_tensor_shape(inputs[1]);
  if (!loom_shape_equal(gs, xs)) {
    return loom__same_shape_error(loom_kernel_context_op(ctx)->name, gs, xs);
  }
  return leaky_run(ctx, inputs[0], inputs[1]);
}

static void leaky_relu_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, leaky_relu_run);
}

static void leaky_relu_grad_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, leaky_relu_grad_run);
}

//===----------------------------------------------------------------------===//
// L2Loss
//===----------------------------------------------------------------------===//

// sum(t[begin, end) * t[begin, end)), accumulated in double (float, double)
// or from float (half, bfloat16).
static double l2_sum(loom_dtype_t dtype, const void* data, int64_t begin,
                     int64_t end) {
  double sum = 0;
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      for (int64_t i = begin; i < end; ++i) {
        double v = ((const float*)data)[i];
        sum += v * v;
      }
      break;
    case LOOM_DTYPE_DOUBLE:
      for (int64_t i = begin; i < end; ++i) {
        double v = ((const double*)data)[i];
        sum += v * v;
      }
      break;
    case LOOM_DTYPE_HALF:
      for (int64_t i = begin; i < end; ++i) {
        double v = loom__half_to_float(((const uint16_t*)data)[i]);
        sum += v * v;
      }
      break;
    case LOOM_DTYPE_BFLOAT16:
      for (int64_t i = begin; i < end; ++i) {
        double v = loom__bfloat16_to_float(((const uint16_t*)data)[i]);
        sum += v * v;
      }
      break;
    default:
      break;
  }
  return sum;
}

// The sum of squares is split into fixed chunks whatever the thread count;
// the chunks' partial sums are added in chunk order, so the loss has the
// same bits serially and on any pool (the reductions' rule).
enum { kL2Chunk = 16 * kBlock };

// Partial sums: up to 16 chunks without allocating.
LOOM_DEFINE_SMALL_VECTOR(partial_vector, double, 16)

typedef struct l2_job_t {
  loom_dtype_t dtype;
  const void* data;
  int64_t count;
  double* partial;  // one per chunk
} l2_job_t;

static void l2_chunks(void* arg, int64_t begin, int64_t end) {
  l2_job_t* job = arg;
  for (int64_t c = begin; c < end; ++c) {
    int64_t lo = c * kL2Chunk;
    int64_t hi = lo + kL2Chunk < job->count ? lo + kL2Chunk : job->count;
    job->partial[c] = l2_sum(job->dtype, job->data, lo, hi);
  }
}

// sum(t * t) / 2, rounded to T once by the caller.
static loom_status_t l2_loss_value(loom_kernel_context_t* ctx,
                                   loom_dtype_t dtype, const void* data,
                                   int64_t count, double* out_loss) {
  int64_t chunks = (count + kL2Chunk - 1) / kL2Chunk;
  if (chunks <= 1) {
    *out_loss = l2_sum(dtype, data, 0, count) / 2;
    return loom_ok_status();
  }
  partial_vector_t partial;
  partial_vector_initialize(&partial);
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(
      partial_vector_resize_uninitialized(&partial, allocator, (size_t)chunks));
  l2_job_t job = {.dtype = dtype,
                  .data = data,
                  .count = count,
                  .partial = partial_vector_data(&partial)};
  loom_thread_pool_t* pool = loom__array_pool(ctx);
  loom_status_t status = loom_ok_status();
  if (!pool) {
    l2_chunks(&job, 0, chunks);
  } else {
    status = loom_thread_pool_parallel_for(pool, chunks, 2 * kL2Chunk,
                                           l2_chunks, &job);
  }
  double sum = 0;
  for (int64_t c = 0; !status && c < chunks; ++c) sum += job.partial[c];
  partial_vector_deinitialize(&partial, allocator);
  *out_loss = sum / 2;
  return status;
}

static loom_status_t l2_loss_run(loom_kernel_context_t* ctx,
                                 loom_tensor_t* const* inputs) {
  loom_tensor_t* t = inputs[0];
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, &scalar, &out));
  loom_dtype_t dtype = loom_tensor_dtype(t);
  double loss = 0;
  LOOM_RETURN_IF_ERROR(l2_loss_value(ctx, dtype, loom_tensor_data(t),
                                     loom_tensor_num_elements(t), &loss));
  void* y = loom_tensor_data(out);
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      *(float*)y = (float)loss;
      break;
    case LOOM_DTYPE_DOUBLE:
      *(double*)y = loss;
      break;
    case LOOM_DTYPE_HALF:
      *(uint16_t*)y = loom__float_to_half((float)loss);
      break;
    case LOOM_DTYPE_BFLOAT16:
      *(uint16_t*)y = loom__float_to_bfloat16((float)loss);
      break;
    default:
      break;
  }
  return loom_ok_status();
}

static void l2_loss_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, l2_loss_run);
}

static loom_status_t scalar_shape_fn(loom_shape_inference_context_t* c,
                                     void* user_data) {
  (void)user_data;
  loom_shape_t scalar = loom_shape_scalar();
  return loom_shape_inference_context_set_output(c, 0, &scalar);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

#define ACTIVATION_TYPES "{half, bfloat16, float, double}"
#define ACTIVATION_DTYPES \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16

static const loom__builtin_op_t kOps[] = {
    {.name = "LeakyRelu",
     .inputs = {"features: T"},
     .outputs = {"activations: T"},
     .attrs = {"alpha: float = 0.2", "T: " ACTIVATION_TYPES " = DT_FLOAT"},
     .shape_fn = loom__shape_fn_unchanged},
    {.name = "LeakyReluGrad",
     .inputs = {"gradients: T", "features: T"},
     .outputs = {"backprops: T"},
     .attrs = {"alpha: float = 0.2", "T: " ACTIVATION_TYPES " = DT_FLOAT"},
     .shape_fn = loom__shape_fn_merge_inputs},
    {.name = "L2Loss",
     .inputs = {"t: T"},
     .outputs = {"output: T"},
     .attrs = {"T: " ACTIVATION_TYPES},
     .shape_fn = scalar_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "LeakyRelu",
     .any_rank = true,
     .compute = leaky_relu_compute,
     .type_attr = "T",
     .types = {ACTIVATION_DTYPES}},
    {.op_name = "LeakyReluGrad",
     .any_rank = true,
     .compute = leaky_relu_grad_compute,
     .type_attr = "T",
     .types = {ACTIVATION_DTYPES}},
    {.op_name = "L2Loss",
     .any_rank = true,
     .compute = l2_loss_compute,
     .type_attr = "T",
     .types = {ACTIVATION_DTYPES}},
};

loom_status_t loom__register_nn_activation_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
