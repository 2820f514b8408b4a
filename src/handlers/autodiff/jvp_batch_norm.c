// The JVP of FusedBatchNormV3 (its fused gradient, FusedBatchNormGradV3,
// has no gradient of its own to transpose). With d = x - mean,
// inv = rsqrt(var + epsilon) and the statistics over every axis but the
// channel one:
//   training   mean, var are the batch's (biased) statistics:
//              tmean = mean(tx), tvar = 2 mean(d * (tx - tmean)),
//              ty = ((tx - tmean) inv - d inv^3 tvar / 2) scale
//                   + d inv tscale + toffset;
//              batch_mean / batch_variance: f tmean + (1 - f) told_mean and
//              f n/(n-1) tvar + (1 - f) told_var (f: exponential_avg_factor);
//              reserve_space_1/2: tmean, tvar;
//   inference  mean, var are inputs: the same ty with their tangents, which
//              batch_mean / batch_variance and reserve_space_1/2 pass on.
// Computed in the statistics' dtype U (x is widened when it is narrower).

#include <string.h>

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"
#include "handlers/autodiff/jvp_ops.h"

typedef loom_tensor_handle_t handle_t;

enum { kMaxTemps = 64 };

// Intermediate results, released together; the first error is kept.
typedef struct builder_t {
  loom_gradient_context_t* ctx;
  loom_status_t status;
  handle_t* temps[kMaxTemps];
  int32_t count;
} builder_t;

static handle_t* keep(builder_t* b, handle_t* h) {
  if (!h) return NULL;
  if (b->count == kMaxTemps) {
    loom_tensor_handle_release(h);
    if (!b->status) {
      b->status = loom_make_status(LOOM_STATUS_INTERNAL,
                                   "JVP of FusedBatchNormV3: too many terms");
    }
    return NULL;
  }
  b->temps[b->count++] = h;
  return h;
}

static handle_t* unary(builder_t* b, const char* op, handle_t* x) {
  if (b->status || !x) return NULL;
  handle_t* out = NULL;
  b->status = loom__grad_unary(b->ctx, op, x, &out);
  return keep(b, out);
}

static handle_t* binary(builder_t* b, const char* op, handle_t* x,
                        handle_t* y) {
  if (b->status || !x || !y) return NULL;
  handle_t* out = NULL;
  b->status = loom__grad_binary(b->ctx, op, x, y, &out);
  return keep(b, out);
}

// x + y where either may be NULL (zero).
static handle_t* add(builder_t* b, handle_t* x, handle_t* y) {
  if (!x || !y) return x ? x : y;
  return binary(b, "AddV2", x, y);
}

static handle_t* scalar(builder_t* b, loom_dtype_t dtype, double value) {
  if (b->status) return NULL;
  handle_t* out = NULL;
  b->status = loom__grad_scalar(b->ctx, dtype, value, &out);
  return keep(b, out);
}

static handle_t* cast(builder_t* b, handle_t* x, loom_dtype_t dtype) {
  if (b->status || !x) return NULL;
  handle_t* out = NULL;
  b->status =
      loom__grad_op(b->ctx, "Cast", &x, 1,
                    LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("DstT", dtype)), &out);
  return keep(b, out);
}

static handle_t* reshape(builder_t* b, handle_t* x, const int64_t* dims,
                         int32_t rank) {
  if (b->status || !x) return NULL;
  handle_t* out = NULL;
  b->status = loom__grad_reshape(b->ctx, x, dims, rank, &out);
  return keep(b, out);
}

// Mean over `axes`, dims kept.
static handle_t* mean(builder_t* b, handle_t* x, const int64_t* axes,
                      int32_t num_axes) {
  if (b->status || !x) return NULL;
  handle_t* axes_handle = NULL;
  b->status = loom__grad_int_vector(b->ctx, LOOM_DTYPE_INT32, axes, num_axes,
                                    &axes_handle);
  handle_t* out = NULL;
  if (!b->status) {
    b->status =
        loom__grad_op(b->ctx, "Mean", LOOM_GRAD_INPUTS(x, axes_handle),
                      LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("keep_dims", true)), &out);
  }
  loom_tensor_handle_release(axes_handle);
  return keep(b, out);
}

static bool is_channels_first(const loom_op_attrs_t* attrs) {
  loom_attr_value_t value;
  if (!attrs || !loom_op_attrs_get(attrs, "data_format", &value) ||
      value.kind != LOOM_ATTR_KIND_STRING || value.u.string.size < 2) {
    return false;
  }
  return memcmp(value.u.string.data, "NC", 2) == 0;
}

static float float_attr(const loom_op_attrs_t* attrs, const char* name,
                        float otherwise) {
  float value = otherwise;
  loom_status_t status = loom_op_attrs_get_f32(attrs, name, &value);
  loom_status_free(status);
  return status ? otherwise : value;
}

static loom_status_t batch_norm_jvp(loom_gradient_context_t* ctx,
                                    handle_t* const* t, handle_t** out,
                                    void* user_data) {
  (void)user_data;
  const loom_op_attrs_t* attrs = loom_gradient_context_attrs(ctx);
  bool training = true;
  loom_status_t status =
      loom_op_attrs_get_bool(attrs, "is_training", &training);
  loom_status_free(status);
  if (status) training = true;
  float epsilon = float_attr(attrs, "epsilon", 1e-4f);
  float factor = float_attr(attrs, "exponential_avg_factor", 1.0f);
  const loom_tensor_metadata_t* xm =
      loom_gradient_context_input_metadata(ctx, 0);
  loom_dtype_t t_dtype = xm->dtype;
  loom_dtype_t u_dtype = loom_gradient_context_input_metadata(ctx, 1)->dtype;
  int32_t rank = xm->shape.rank;
  if (rank < 3 || !loom_shape_is_fully_defined(&xm->shape)) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "JVP of FusedBatchNormV3: x's shape must be known "
                            "and of rank 3 or more");
  }
  int32_t channel = is_channels_first(attrs) ? 1 : rank - 1;
  int64_t c = xm->shape.dims[channel];
  int64_t axes[LOOM_MAX_RANK];
  int32_t num_axes = 0;
  double count = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (d == channel) continue;
    axes[num_axes++] = d;
    count *= (double)xm->shape.dims[d];
  }
  // Channel vectors broadcast against x: [C] or [C, 1, ..., 1].
  int64_t channel_dims[LOOM_MAX_RANK];
  int32_t channel_rank = rank - channel;
  channel_dims[0] = c;
  for (int32_t d = 1; d < channel_rank; ++d) channel_dims[d] = 1;
  int64_t vector_dims[1] = {c};

  builder_t b = {.ctx = ctx};
  handle_t* x = loom_gradient_context_input(ctx, 0);
  handle_t* tx = t[0];
  if (t_dtype != u_dtype) {
    x = cast(&b, x, u_dtype);
    tx = cast(&b, tx, u_dtype);
  }
  handle_t* scale = reshape(&b, loom_gradient_context_input(ctx, 1),
                            channel_dims, channel_rank);
  handle_t* tscale = reshape(&b, t[1], channel_dims, channel_rank);
  handle_t* toffset = reshape(&b, t[2], channel_dims, channel_rank);
  handle_t* mu = NULL;
  handle_t* var = NULL;
  handle_t* tmu = NULL;
  handle_t* tvar = NULL;
  handle_t* d = NULL;
  if (training) {
    mu = mean(&b, x, axes, num_axes);
    d = binary(&b, "Sub", x, mu);
    var = mean(&b, unary(&b, "Square", d), axes, num_axes);
    tmu = mean(&b, tx, axes, num_axes);
    handle_t* td = binary(&b, "Sub", tx, tmu);
    tvar = binary(&b, "Mul", mean(&b, binary(&b, "Mul", d, td), axes, num_axes),
                  scalar(&b, u_dtype, 2.0));
  } else {
    mu = reshape(&b, loom_gradient_context_input(ctx, 3), channel_dims,
                 channel_rank);
    var = reshape(&b, loom_gradient_context_input(ctx, 4), channel_dims,
                  channel_rank);
    tmu = reshape(&b, t[3], channel_dims, channel_rank);
    tvar = reshape(&b, t[4], channel_dims, channel_rank);
    d = binary(&b, "Sub", x, mu);
  }
  handle_t* inv = unary(&b, "Rsqrt",
                        binary(&b, "AddV2", var, scalar(&b, u_dtype, epsilon)));
  // The tangent of the normalised x: (tx - tmu) inv + d tinv.
  handle_t* td =
      tmu ? (tx ? binary(&b, "Sub", tx, tmu) : unary(&b, "Neg", tmu)) : tx;
  handle_t* tinv = NULL;
  if (tvar) {
    handle_t* cube = binary(&b, "Mul", binary(&b, "Mul", inv, inv), inv);
    tinv = binary(&b, "Mul", binary(&b, "Mul", cube, tvar),
                  scalar(&b, u_dtype, -0.5));
  }
  handle_t* tnorm = add(&b, td ? binary(&b, "Mul", td, inv) : NULL,
                        tinv ? binary(&b, "Mul", d, tinv) : NULL);
  handle_t* ty = add(
      &b,
      add(&b, tnorm ? binary(&b, "Mul", tnorm, scale) : NULL,
          tscale ? binary(&b, "Mul", binary(&b, "Mul", d, inv), tscale) : NULL),
      toffset);
  if (ty && t_dtype != u_dtype) ty = cast(&b, ty, t_dtype);
  handle_t* stats[4] = {NULL, NULL, NULL, NULL};  // outputs 1 to 4
  handle_t* tmu_vector = reshape(&b, tmu, vector_dims, 1);
  handle_t* tvar_vector = reshape(&b, tvar, vector_dims, 1);
  if (training) {
    handle_t* running_mean = tmu_vector;
    handle_t* running_var =
        tvar_vector
            ? binary(&b, "Mul", tvar_vector,
                     scalar(&b, u_dtype, count > 1 ? count / (count - 1) : 1.0))
            : NULL;
    if (factor != 1.0f) {
      handle_t* f = scalar(&b, u_dtype, factor);
      handle_t* g = scalar(&b, u_dtype, 1.0 - factor);
      running_mean =
          add(&b, running_mean ? binary(&b, "Mul", running_mean, f) : NULL,
              t[3] ? binary(&b, "Mul", t[3], g) : NULL);
      running_var =
          add(&b, running_var ? binary(&b, "Mul", running_var, f) : NULL,
              t[4] ? binary(&b, "Mul", t[4], g) : NULL);
    }
    stats[0] = running_mean;
    stats[1] = running_var;
    stats[2] = tmu_vector;
    stats[3] = tvar_vector;
  } else {
    stats[0] = stats[2] = t[3];
    stats[1] = stats[3] = t[4];
  }
  if (!b.status) {
    if (ty) {
      // Only the offset had a tangent: ty is a channel vector still.
      loom_tensor_handle_retain(ty);
      b.status = loom__jvp_fit_output(ctx, ty, 0, &out[0]);
    }
    for (int32_t k = 0; k < 4 && k + 1 < loom_gradient_context_num_outputs(ctx);
         ++k) {
      if (!stats[k]) continue;
      loom_tensor_handle_retain(stats[k]);
      out[k + 1] = stats[k];
    }
  }
  if (b.status)
    loom__grad_release_all(out, loom_gradient_context_num_outputs(ctx));
  loom__grad_release_all(b.temps, b.count);
  return b.status;
}

loom_status_t loom__register_batch_norm_jvps(void) {
  loom_jvp_def_t def = {
      .struct_size = sizeof(def),
      .op_name = "FusedBatchNormV3",
      .fn = batch_norm_jvp,
      .inputs_used = LOOM_GRADIENT_USES_ALL,
      .outputs_used = LOOM_GRADIENT_USES_ALL,
  };
  return loom_jvp_register(&def);
}
