// FusedBatchNormV3 and FusedBatchNormGradV3 with TensorFlow's CPU
// semantics:
//
//   training   y = (x - mean) * rsqrt(var + epsilon) * scale + offset with
//              the batch's mean and biased variance; batch_mean and
//              batch_variance are the running statistics TensorFlow
//              returns: the batch's mean and Bessel-corrected variance
//              (n / (n - 1)), or with exponential_avg_factor f != 1,
//              (1 - f) * old + f * new; reserve_space_1/2 hold the batch
//              mean and biased variance the gradient needs;
//   inference  the given mean and variance normalise; batch_mean and
//              batch_variance are those inputs (and so are
//              reserve_space_1/2, which TensorFlow leaves unset);
//   reserve_space_3 is a scalar 0, as TensorFlow's CPU kernel makes it;
//   an empty x gives NaN statistics.
//
// data_format NHWC / NCHW (and the 5-D NDHWC / NCDHW). The statistics are
// summed in double in a fixed number of blocks, so results do not depend
// on the thread count. T may be half or bfloat16 (widened to float),
// float or double (Loom's addition: TensorFlow stops at float); U may be
// bfloat16, float or double.

#include <math.h>
#include <string.h>

#include "base/half.h"
#include "kernels/elementwise.h"
#include "kernels/nn_internal.h"

//===----------------------------------------------------------------------===//
// Geometry and checks
//===----------------------------------------------------------------------===//

// x viewed as [outer, channels, inner]: channels last has inner 1.
typedef struct bn_layout_t {
  int32_t rank;  // 4 or 5
  int32_t channel_axis;
  int64_t channels, outer, inner;
} bn_layout_t;

static loom_status_t bn_format(const loom_op_attrs_t* attrs, bn_layout_t* out) {
  static const struct {
    const char* name;
    int32_t rank, channel_axis;
  } kFormats[] = {
      {.name = "NHWC", .rank = 4, .channel_axis = 3},
      {.name = "NCHW", .rank = 4, .channel_axis = 1},
      {.name = "NDHWC", .rank = 5, .channel_axis = 4},
      {.name = "NCDHW", .rank = 5, .channel_axis = 1},
  };
  loom_attr_value_t value;
  if (!loom_op_attrs_get(attrs, "data_format", &value)) {
    out->rank = 4;
    out->channel_axis = 3;
    return loom_ok_status();
  }
  for (size_t i = 0; i < sizeof(kFormats) / sizeof(kFormats[0]); ++i) {
    if (loom__nn_attr_string_is(attrs, "data_format", kFormats[i].name)) {
      out->rank = kFormats[i].rank;
      out->channel_axis = kFormats[i].channel_axis;
      return loom_ok_status();
    }
  }
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Invalid data format: data_format must be NHWC, "
                          "NCHW, NDHWC or NCDHW");
}

static const char* bn_format_name(const bn_layout_t* layout) {
  if (layout->rank == 4) return layout->channel_axis == 1 ? "NCHW" : "NHWC";
  return layout->channel_axis == 1 ? "NCDHW" : "NDHWC";
}

// x's rank for the format, and the [outer, channels, inner] view.
static loom_status_t bn_layout(const loom_shape_t* x, const char* what,
                               bn_layout_t* layout) {
  if (x->rank != layout->rank) {
    char text[LOOM_SHAPE_TEXT_SIZE];
    loom__format_dims(x, text);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s must be %d-dimensional for data_format %s, "
                            "got shape %s",
                            what, layout->rank, bn_format_name(layout), text);
  }
  // A zero anywhere makes the products 0 ([2^62, 8, 0, 2] has no rows);
  // the whole shape's count must fit int64.
  int32_t axis = layout->channel_axis;
  int64_t count;
  layout->channels = x->dims[axis];
  LOOM_RETURN_IF_ERROR(loom__size_product_checked("FusedBatchNorm", what,
                                                  x->dims, x->rank, &count));
  if (layout->channels == 0) {
    // No channels, no work; the dims around them may multiply past int64.
    layout->outer = layout->inner = 0;
    return loom_ok_status();
  }
  // With channels > 0, each part divides the count: neither overflows.
  LOOM_RETURN_IF_ERROR(loom__size_product_checked(
      "FusedBatchNorm", what, x->dims, axis, &layout->outer));
  return loom__size_product_checked("FusedBatchNorm", what, x->dims + axis + 1,
                                    x->rank - axis - 1, &layout->inner);
}

// A per-channel vector argument: 1-D, and (when `check_size`) channels
// long.
static loom_status_t channel_vector(const loom_shape_t* shape, const char* what,
                                    int64_t channels, bool check_size,
                                    const char* prefix) {
  if (shape->rank != 1) {
    char text[LOOM_SHAPE_TEXT_SIZE];
    loom__format_dims(shape, text);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s must be 1-dimensional, got shape %s", what,
                            text);
  }
  if (check_size && shape->dims[0] != channels) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s%s must have the same number of elements as "
                            "the channels of x, got %lld and %lld",
                            prefix, what, (long long)shape->dims[0],
                            (long long)channels);
  }
  return loom_ok_status();
}

typedef struct bn_attrs_t {
  bn_layout_t layout;
  double epsilon;
  double factor;  // exponential_avg_factor
  bool training;
} bn_attrs_t;

static loom_status_t bn_attrs(const loom_op_attrs_t* attrs, bn_attrs_t* out) {
  LOOM_RETURN_IF_ERROR(bn_format(attrs, &out->layout));
  float epsilon = 0.0001f, factor = 1.0f;
  bool training = true;
  loom_status_t status = loom_op_attrs_get_f32(attrs, "epsilon", &epsilon);
  if (status) loom_status_free(status);
  status = loom_op_attrs_get_f32(attrs, "exponential_avg_factor", &factor);
  if (status) loom_status_free(status);
  status = loom_op_attrs_get_bool(attrs, "is_training", &training);
  if (status) loom_status_free(status);
  // TensorFlow adds epsilon as a float.
  out->epsilon = epsilon;
  out->factor = factor;
  out->training = training;
  return loom_ok_status();
}

// FusedBatchNormV3's checks, on x, scale, offset, mean, variance.
static loom_status_t forward_check(bn_attrs_t* a, const loom_shape_t* shapes) {
  LOOM_RETURN_IF_ERROR(bn_layout(&shapes[0], "x", &a->layout));
  int64_t c = a->layout.channels;
  LOOM_RETURN_IF_ERROR(channel_vector(&shapes[1], "scale", c, true, ""));
  LOOM_RETURN_IF_ERROR(channel_vector(&shapes[2], "offset", c, true, ""));
  bool need = !a->training || a->factor != 1.0;
  const char* prefix = a->training ? "When exponential_avg_factor != 1, "
                                   : "When is_training=false, ";
  LOOM_RETURN_IF_ERROR(channel_vector(&shapes[3], "mean", c, need, prefix));
  return channel_vector(&shapes[4], "variance", c, need, prefix);
}

// FusedBatchNormGradV3's checks, on y_backprop, x, scale, reserve_space_1,
// reserve_space_2.
static loom_status_t grad_check(bn_attrs_t* a, const loom_shape_t* shapes) {
  LOOM_RETURN_IF_ERROR(bn_layout(&shapes[0], "y_backprop", &a->layout));
  LOOM_RETURN_IF_ERROR(bn_layout(&shapes[1], "x", &a->layout));
  if (!loom_shape_equal(&shapes[0], &shapes[1])) {
    char tx[LOOM_SHAPE_TEXT_SIZE], ty[LOOM_SHAPE_TEXT_SIZE];
    loom__format_dims(&shapes[1], tx);
    loom__format_dims(&shapes[0], ty);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "x and y_backprop must have same shape, but x has "
                            "shape %s and y_backprop has shape %s",
                            tx, ty);
  }
  int64_t c = a->layout.channels;
  LOOM_RETURN_IF_ERROR(channel_vector(&shapes[2], "scale", c, true, ""));
  LOOM_RETURN_IF_ERROR(
      channel_vector(&shapes[3], "reserve_space_1", c, true, ""));
  return channel_vector(&shapes[4], "reserve_space_2", c, true, "");
}

static loom_shape_t vector_shape(int64_t n) {
  loom_shape_t shape = loom_shape_scalar();
  shape.rank = 1;
  shape.dims[0] = n;
  return shape;
}

loom_status_t loom__nn_batchnorm_shape_fn(
    loom_shape_inference_context_t* context, void* user_data) {
  (void)user_data;
  bool grad = strcmp(loom_shape_inference_context_op(context)->name,
                     "FusedBatchNormGradV3") == 0;
  bn_attrs_t a;
  LOOM_RETURN_IF_ERROR(
      bn_attrs(loom_shape_inference_context_attrs(context), &a));
  loom_shape_t shapes[5];
  bool known = true;
  for (int32_t i = 0; i < 5; ++i) {
    LOOM_RETURN_IF_ERROR(
        loom_shape_inference_context_input(context, i, &shapes[i]));
    known = known && loom__nn_fully_known(&shapes[i]);
  }
  loom_shape_t x, vector = vector_shape(LOOM_UNKNOWN_DIM);
  if (known) {
    LOOM_RETURN_IF_ERROR(grad ? grad_check(&a, shapes)
                              : forward_check(&a, shapes));
    x = shapes[0];
    vector = vector_shape(a.layout.channels);
  } else {
    LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&shapes[0], a.layout.rank, &x));
  }
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_set_output(context, 0, &x));
  for (int32_t i = 1; i < 3; ++i) {
    LOOM_RETURN_IF_ERROR(
        loom_shape_inference_context_set_output(context, i, &vector));
  }
  if (grad) {
    loom_shape_t empty = vector_shape(0);
    LOOM_RETURN_IF_ERROR(
        loom_shape_inference_context_set_output(context, 3, &empty));
    return loom_shape_inference_context_set_output(context, 4, &empty);
  }
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_set_output(context, 3, &vector));
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_set_output(context, 4, &vector));
  loom_shape_t scalar = loom_shape_scalar();
  return loom_shape_inference_context_set_output(context, 5, &scalar);
}

//===----------------------------------------------------------------------===//
// Per-channel vectors
//===----------------------------------------------------------------------===//

static void vector_to_double(const loom_tensor_t* t, double* out, int64_t n) {
  const void* data = loom_tensor_data(t);
  for (int64_t i = 0; i < n; ++i) {
    switch (loom_tensor_dtype(t)) {
      case LOOM_DTYPE_DOUBLE:
        out[i] = ((const double*)data)[i];
        break;
      case LOOM_DTYPE_BFLOAT16:
        out[i] = loom__bfloat16_to_float(((const uint16_t*)data)[i]);
        break;
      case LOOM_DTYPE_HALF:
        out[i] = loom__half_to_float(((const uint16_t*)data)[i]);
        break;
      default:
        out[i] = ((const float*)data)[i];
        break;
    }
  }
}

static void vector_from_double(const double* in, loom_tensor_t* t, int64_t n) {
  void* data = loom_tensor_data(t);
  for (int64_t i = 0; i < n; ++i) {
    switch (loom_tensor_dtype(t)) {
      case LOOM_DTYPE_DOUBLE:
        ((double*)data)[i] = in[i];
        break;
      case LOOM_DTYPE_BFLOAT16:
        ((uint16_t*)data)[i] = loom__float_to_bfloat16((float)in[i]);
        break;
      case LOOM_DTYPE_HALF:
        ((uint16_t*)data)[i] = loom__float_to_half((float)in[i]);
        break;
      default:
        ((float*)data)[i] = (float)in[i];
        break;
    }
  }
}

//===----------------------------------------------------------------------===//
// Passes over x
//===----------------------------------------------------------------------===//

typedef enum bn_pass_t {
  PASS_SUM,       // partial[unit][c] = sum x
  PASS_SUMSQ,     // partial[unit][c] = sum (x - mean)^2
  PASS_AFFINE,    // y = x * a + b
  PASS_GRAD_SUM,  // partial[unit][2c] = sum dy, sum dy * (x - mean)
  PASS_GRAD,      // dx = a * (dy - dmean - (x - mean) * k)
} bn_pass_t;

typedef struct bn_job_t {
  bn_pass_t pass;
  const bn_layout_t* layout;
  const loom__nn_loops_t* loops;
  bool f64;
  const void* x;
  const void* dy;
  void* y;
  // Units: channels last, blocks of `rows` rows; channels first, planes
  // (outer index, channel).
  int64_t rows;
  int64_t units;
  double* partial;  // per unit: channels (or one, or two per plane) sums
  const double* mean;
  // Float and double copies of the per-channel coefficients.
  const float* af;
  const float* bf;
  const float* mf;
  const float* kf;
  const double* md;
  const double* ad;
  const double* bd;
} bn_job_t;

static void bn_rows(const bn_job_t* job, int64_t unit) {
  const bn_layout_t* l = job->layout;
  int64_t c = l->channels;
  int64_t r0 = unit * job->rows, rows = l->outer - r0;
  if (rows > job->rows) rows = job->rows;
  int64_t offset = r0 * c;
  const loom__nn_loops_t* loops = job->loops;
  double* partial = job->partial ? job->partial + unit * c * 2 : NULL;
  switch (job->pass) {
    case PASS_SUM:
      memset(partial, 0, (size_t)c * sizeof(double));
      if (job->f64) {
        loops->sum_rows_f64((const double*)job->x + offset, partial, rows, c);
      } else {
        loops->sum_rows_f32((const float*)job->x + offset, partial, rows, c);
      }
      break;
    case PASS_SUMSQ:
      memset(partial, 0, (size_t)c * sizeof(double));
      if (job->f64) {
        loops->sumsq_rows_f64((const double*)job->x + offset, job->mean,
                              partial, rows, c);
      } else {
        loops->sumsq_rows_f32((const float*)job->x + offset, job->mean, partial,
                              rows, c);
      }
      break;
    case PASS_AFFINE:
      if (job->f64) {
        loops->affine_rows_f64((const double*)job->x + offset,
                               (double*)job->y + offset, job->md, job->ad,
                               job->bd, rows, c);
      } else {
        loops->affine_rows_f32((const float*)job->x + offset,
                               (float*)job->y + offset, job->mf, job->af,
                               job->bf, rows, c);
      }
      break;
    case PASS_GRAD_SUM:
      memset(partial, 0, (size_t)(2 * c) * sizeof(double));
      loops->grad_sums_rows_f32((const float*)job->dy + offset,
                                (const float*)job->x + offset, job->mean,
                                partial, partial + c, rows, c);
      break;
    case PASS_GRAD:
      loops->grad_apply_rows_f32(
          (const float*)job->dy + offset, (const float*)job->x + offset,
          (float*)job->y + offset, job->af, job->bf, job->mf, job->kf, rows, c);
      break;
  }
}

static void bn_plane(const bn_job_t* job, int64_t unit) {
  const bn_layout_t* l = job->layout;
  int64_t j = unit % l->channels, n = l->inner;
  int64_t offset = unit * n;
  const loom__nn_loops_t* loops = job->loops;
  double* partial = job->partial ? job->partial + unit * 2 : NULL;
  switch (job->pass) {
    case PASS_SUM:
      partial[0] = job->f64
                       ? loops->sum_plane_f64((const double*)job->x + offset, n)
                       : loops->sum_plane_f32((const float*)job->x + offset, n);
      break;
    case PASS_SUMSQ:
      partial[0] = job->f64
                       ? loops->sumsq_plane_f64((const double*)job->x + offset,
                                                job->mean[j], n)
                       : loops->sumsq_plane_f32((const float*)job->x + offset,
                                                job->mean[j], n);
      break;
    case PASS_AFFINE:
      if (job->f64) {
        loops->affine_plane_f64((const double*)job->x + offset,
                                (double*)job->y + offset, job->md[j],
                                job->ad[j], job->bd[j], n);
      } else {
        loops->affine_plane_f32((const float*)job->x + offset,
                                (float*)job->y + offset, job->mf[j], job->af[j],
                                job->bf[j], n);
      }
      break;
    case PASS_GRAD_SUM:
      partial[0] = partial[1] = 0;
      loops->grad_sums_plane_f32((const float*)job->dy + offset,
                                 (const float*)job->x + offset, job->mean[j],
                                 &partial[0], &partial[1], n);
      break;
    case PASS_GRAD:
      loops->grad_apply_plane_f32((const float*)job->dy + offset,
                                  (const float*)job->x + offset,
                                  (float*)job->y + offset, job->af[j],
                                  job->bf[j], job->mf[j], job->kf[j], n);
      break;
  }
}

static void bn_units(void* arg, int64_t begin, int64_t end) {
  const bn_job_t* job = arg;
  for (int64_t unit = begin; unit < end; ++unit) {
    if (job->layout->inner == 1) {
      bn_rows(job, unit);
    } else {
      bn_plane(job, unit);
    }
  }
}

enum { kBlockElements = 1 << 15 };

static loom_status_t run_pass(loom_kernel_context_t* ctx, bn_job_t* job,
                              bn_pass_t pass) {
  job->pass = pass;
  int64_t per_unit = job->layout->inner == 1 ? job->rows * job->layout->channels
                                             : job->layout->inner;
  // About one cost unit per element (a streaming pass).
  return loom_thread_pool_parallel_for(loom__nn_pool(ctx), job->units,
                                       per_unit + 1, bn_units, job);
}

// Per-channel totals of a sum pass: out[c] (and out[c + channels] for the
// gradient's second sum), summed over the units in order.
static void reduce_partials(const bn_job_t* job, int sums, double* out) {
  const bn_layout_t* l = job->layout;
  int64_t c = l->channels;
  memset(out, 0, (size_t)(sums * c) * sizeof(double));
  if (l->inner == 1) {
    for (int64_t u = 0; u < job->units; ++u) {
      const double* p = job->partial + u * c * 2;
      for (int64_t j = 0; j < sums * c; ++j) out[j] += p[j];
    }
  } else {
    for (int64_t u = 0; u < job->units; ++u) {
      int64_t j = u % c;
      out[j] += job->partial[u * 2];
      if (sums == 2) out[c + j] += job->partial[u * 2 + 1];
    }
  }
}

// The job's units and partial sums for x's layout.
static loom_status_t bn_job_init(loom_kernel_context_t* ctx,
                                 const bn_layout_t* layout, bool f64,
                                 bn_job_t* job, char** partial_block) {
  memset(job, 0, sizeof(*job));
  job->layout = layout;
  job->loops = loom__nn_loops();
  job->f64 = f64;
  if (layout->inner == 1) {
    int64_t c = layout->channels > 0 ? layout->channels : 1;
    job->rows = kBlockElements / c;
    if (job->rows < 1) job->rows = 1;
    job->units = (layout->outer + job->rows - 1) / job->rows;
  } else {
    job->units = layout->outer * layout->channels;
  }
  // Two sums per unit and channel (channels last) or per unit.
  int64_t dims[3] = {job->units, layout->inner == 1 ? layout->channels : 1, 2};
  int64_t count;
  LOOM_RETURN_IF_ERROR(loom__size_product_checked(
      loom_kernel_context_op(ctx)->name, "partial sums", dims, 3, &count));
  LOOM_RETURN_IF_ERROR(loom__nn_scratch(ctx, "partial sums", 1, count,
                                        sizeof(double), partial_block, NULL));
  job->partial = (double*)*partial_block;
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// FusedBatchNormV3
//===----------------------------------------------------------------------===//

#define FAIL_AND_RETURN(ctx, status)       \
  do {                                     \
    loom_kernel_context_fail(ctx, status); \
    return;                                \
  } while (0)

static bool is_half(loom_dtype_t dtype) {
  return dtype == LOOM_DTYPE_HALF || dtype == LOOM_DTYPE_BFLOAT16;
}

// Normalises x (float or double data) into y with per-channel statistics:
// in training, computes mean and biased variance into *mean / *var first.
static loom_status_t normalise(loom_kernel_context_t* ctx, const bn_attrs_t* a,
                               bool f64, const void* x, void* y,
                               const double* scale, const double* offset,
                               double* mean, double* var) {
  const bn_layout_t* l = &a->layout;
  int64_t c = l->channels;
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  bn_job_t job;
  char* partial = NULL;
  char* coefficients = NULL;
  LOOM_RETURN_IF_ERROR(bn_job_init(ctx, l, f64, &job, &partial));
  job.x = x;
  job.y = y;
  loom_status_t status = loom__nn_scratch(
      ctx, "coefficients", 1, c, 2 * sizeof(double) + 3 * sizeof(float),
      &coefficients, NULL);
  double count = (double)(l->outer * l->inner);
  if (!status && a->training) {
    status = run_pass(ctx, &job, PASS_SUM);
    if (!status) {
      reduce_partials(&job, 1, mean);
      for (int64_t j = 0; j < c; ++j) mean[j] /= count;
      job.mean = mean;
      status = run_pass(ctx, &job, PASS_SUMSQ);
    }
    if (!status) {
      reduce_partials(&job, 1, var);
      for (int64_t j = 0; j < c; ++j) var[j] /= count;
    }
  }
  if (!status) {
    // y = (x - mean) * (scale / sqrt(var + epsilon)) + offset, as
    // TensorFlow evaluates it.
    double* ad = (double*)coefficients;
    float* af = (float*)(ad + c);
    float* mf = af + c;
    float* bf = mf + c;
    for (int64_t j = 0; j < c; ++j) {
      ad[j] = scale[j] / sqrt(var[j] + a->epsilon);
      af[j] = (float)ad[j];
      mf[j] = (float)mean[j];
      bf[j] = (float)offset[j];
    }
    job.md = mean;
    job.ad = ad;
    job.bd = offset;
    job.mf = mf;
    job.af = af;
    job.bf = bf;
    job.partial = NULL;
    status = run_pass(ctx, &job, PASS_AFFINE);
  }
  loom_allocator_free(allocator, coefficients);
  loom_allocator_free(allocator, partial);
  return status;
}

void loom__nn_batchnorm_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  bn_attrs_t a;
  loom_status_t status = bn_attrs(loom_kernel_context_attrs(ctx), &a);
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_tensor_t* inputs[5];
  loom_shape_t shapes[5];
  for (int32_t i = 0; i < 5; ++i) {
    inputs[i] = loom_kernel_context_input(ctx, i);
    shapes[i] = *loom_tensor_shape(inputs[i]);
  }
  status = forward_check(&a, shapes);
  if (status) FAIL_AND_RETURN(ctx, status);
  const bn_layout_t* l = &a.layout;
  int64_t c = l->channels;
  loom_tensor_t* x = inputs[0];
  loom_dtype_t dtype = loom_tensor_dtype(x);
  int64_t count = loom_tensor_num_elements(x);
  // y reuses x's buffer when nobody else holds it.
  loom_tensor_t* outputs[6];
  int32_t candidate = 0;
  status = loom_kernel_context_forward_or_allocate(
      ctx, &candidate, 1, 0, &shapes[0], NULL, &outputs[0]);
  loom_shape_t vector = vector_shape(c), scalar = loom_shape_scalar();
  for (int32_t i = 1; !status && i < 6; ++i) {
    status = loom_kernel_context_allocate_output(
        ctx, i, i == 5 ? &scalar : &vector, &outputs[i]);
  }
  if (status) FAIL_AND_RETURN(ctx, status);
  double zero = 0;
  vector_from_double(&zero, outputs[5], 1);
  // Per channel: scale, offset, mean, variance, and the two outputs.
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  char* block = NULL;
  status = loom__nn_scratch(ctx, "channel statistics", 1, c, 6 * sizeof(double),
                            &block, NULL);
  if (status) FAIL_AND_RETURN(ctx, status);
  double* scale = (double*)block;
  double* offset = scale + c;
  double* old_mean = offset + c;
  double* old_var = old_mean + c;
  double* mean = old_var + c;
  double* var = mean + c;
  if (count == 0) {
    for (int64_t j = 0; j < c; ++j) mean[j] = var[j] = NAN;
    for (int32_t i = 1; i < 5; ++i) {
      vector_from_double(mean, outputs[i], c);
    }
    loom_allocator_free(allocator, block);
    return;
  }
  vector_to_double(inputs[1], scale, c);
  vector_to_double(inputs[2], offset, c);
  bool use_old = !a.training || a.factor != 1.0;
  if (use_old) {
    vector_to_double(inputs[3], old_mean, c);
    vector_to_double(inputs[4], old_var, c);
  }
  if (!a.training) {
    memcpy(mean, old_mean, (size_t)c * sizeof(double));
    memcpy(var, old_var, (size_t)c * sizeof(double));
  }
  void* y = loom_tensor_data(outputs[0]);
  if (is_half(dtype)) {
    char* wide = NULL;
    status = loom__nn_scratch(ctx, "float copy", 1, count, sizeof(float), &wide,
                              NULL);
    if (!status) {
      loom__nn_widen(dtype, loom_tensor_data(x), (float*)wide, count);
      status = normalise(ctx, &a, false, wide, wide, scale, offset, mean, var);
      if (!status) loom__nn_narrow(dtype, (const float*)wide, y, count);
      loom_allocator_free(allocator, wide);
    }
  } else {
    status = normalise(ctx, &a, dtype == LOOM_DTYPE_DOUBLE, loom_tensor_data(x),
                       y, scale, offset, mean, var);
  }
  if (!status) {
    // reserve_space_1/2: the statistics used; batch_mean/variance: the
    // running statistics.
    vector_from_double(mean, outputs[3], c);
    vector_from_double(var, outputs[4], c);
    if (a.training) {
      double n = (double)(l->outer * l->inner);
      double bessel = n > 1 ? n / (n - 1) : 1;
      for (int64_t j = 0; j < c; ++j) {
        double new_var = var[j] * bessel;
        if (a.factor != 1.0) {
          mean[j] = (1 - a.factor) * old_mean[j] + a.factor * mean[j];
          new_var = (1 - a.factor) * old_var[j] + a.factor * new_var;
        }
        var[j] = new_var;
      }
    }
    vector_from_double(mean, outputs[1], c);
    vector_from_double(var, outputs[2], c);
  }
  loom_allocator_free(allocator, block);
  if (status) loom_kernel_context_fail(ctx, status);
}

//===----------------------------------------------------------------------===//
// FusedBatchNormGradV3
//===----------------------------------------------------------------------===//

// x_backprop and the scale / offset gradients, on float data.
static loom_status_t grad_float(loom_kernel_context_t* ctx, const bn_attrs_t* a,
                                const float* dy, const float* x, float* dx,
                                const double* scale, const double* mean,
                                const double* var, double* scale_grad,
                                double* offset_grad) {
  const bn_layout_t* l = &a->layout;
  int64_t c = l->channels;
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  bn_job_t job;
  char* partial = NULL;
  char* coefficients = NULL;
  LOOM_RETURN_IF_ERROR(bn_job_init(ctx, l, false, &job, &partial));
  job.x = x;
  job.dy = dy;
  job.y = dx;
  job.mean = mean;
  loom_status_t status = loom__nn_scratch(
      ctx, "coefficients", 1, c, 2 * sizeof(double) + 4 * sizeof(float),
      &coefficients, NULL);
  if (!status) status = run_pass(ctx, &job, PASS_GRAD_SUM);
  if (!status) {
    double* sums = (double*)coefficients;  // dy sums, then dy * (x - mean)
    reduce_partials(&job, 2, sums);
    float* af = (float*)(sums + 2 * c);
    float* dmean = af + c;
    float* mf = dmean + c;
    float* kf = mf + c;
    double n = (double)(l->outer * l->inner);
    for (int64_t j = 0; j < c; ++j) {
      double rsv = 1.0 / sqrt(var[j] + a->epsilon);
      offset_grad[j] = sums[j];
      scale_grad[j] = sums[c + j] * rsv;
      af[j] = (float)(scale[j] * rsv);
      mf[j] = (float)mean[j];
      if (a->training) {
        dmean[j] = (float)(sums[j] / n);
        kf[j] = (float)(rsv * rsv * sums[c + j] / n);
      } else {
        dmean[j] = 0;
        kf[j] = 0;
      }
    }
    job.af = af;
    job.bf = dmean;
    job.mf = mf;
    job.kf = kf;
    job.partial = NULL;
    status = run_pass(ctx, &job, PASS_GRAD);
  }
  loom_allocator_free(allocator, coefficients);
  loom_allocator_free(allocator, partial);
  return status;
}

void loom__nn_batchnorm_grad_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  bn_attrs_t a;
  loom_status_t status = bn_attrs(loom_kernel_context_attrs(ctx), &a);
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_tensor_t* inputs[5];
  loom_shape_t shapes[5];
  for (int32_t i = 0; i < 5; ++i) {
    inputs[i] = loom_kernel_context_input(ctx, i);
    shapes[i] = *loom_tensor_shape(inputs[i]);
  }
  status = grad_check(&a, shapes);
  if (status) FAIL_AND_RETURN(ctx, status);
  int64_t c = a.layout.channels;
  loom_tensor_t* outputs[5];
  int32_t candidate = 0;  // x_backprop may reuse y_backprop's buffer
  status = loom_kernel_context_forward_or_allocate(
      ctx, &candidate, 1, 0, &shapes[0], NULL, &outputs[0]);
  loom_shape_t vector = vector_shape(c), empty = vector_shape(0);
  for (int32_t i = 1; !status && i < 5; ++i) {
    status = loom_kernel_context_allocate_output(
        ctx, i, i < 3 ? &vector : &empty, &outputs[i]);
  }
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  char* block = NULL;
  status = loom__nn_scratch(ctx, "channel statistics", 1, c, 5 * sizeof(double),
                            &block, NULL);
  if (status) FAIL_AND_RETURN(ctx, status);
  double* scale = (double*)block;
  double* mean = scale + c;
  double* var = mean + c;
  double* scale_grad = var + c;
  double* offset_grad = scale_grad + c;
  int64_t count = loom_tensor_num_elements(inputs[1]);
  memset(scale_grad, 0, (size_t)(2 * c) * sizeof(double));
  if (count > 0) {
    vector_to_double(inputs[2], scale, c);
    vector_to_double(inputs[3], mean, c);
    vector_to_double(inputs[4], var, c);
    loom_dtype_t dtype = loom_tensor_dtype(inputs[1]);
    float* dx = loom_tensor_data(outputs[0]);
    if (is_half(dtype)) {
      char* wide = NULL;
      status = loom__nn_scratch(ctx, "float copies", 1, count,
                                2 * sizeof(float), &wide, NULL);
      if (!status) {
        float* fdy = (float*)wide;
        float* fx = fdy + count;
        loom__nn_widen(dtype, loom_tensor_data(inputs[0]), fdy, count);
        loom__nn_widen(dtype, loom_tensor_data(inputs[1]), fx, count);
        status = grad_float(ctx, &a, fdy, fx, fdy, scale, mean, var, scale_grad,
                            offset_grad);
        if (!status) loom__nn_narrow(dtype, fdy, dx, count);
        loom_allocator_free(allocator, wide);
      }
    } else {
      status = grad_float(ctx, &a, loom_tensor_data(inputs[0]),
                          loom_tensor_data(inputs[1]), dx, scale, mean, var,
                          scale_grad, offset_grad);
    }
  }
  if (!status) {
    vector_from_double(scale_grad, outputs[1], c);
    vector_from_double(offset_grad, outputs[2], c);
  }
  loom_allocator_free(allocator, block);
  if (status) loom_kernel_context_fail(ctx, status);
}
