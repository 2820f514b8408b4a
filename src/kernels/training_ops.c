// TensorFlow's fused optimizer updates of resource variables:
// ResourceApplyGradientDescent, ResourceApplyMomentum,
// ResourceApplyKerasMomentum and ResourceApplyAdam (use_nesterov where TF
// has it), for float, double, half and bfloat16 variables.
//
// Each op locks its variables (all of them, in one global order, whatever
// use_locking says: an uncontended lock costs nanoseconds and makes every
// update atomic), checks them and its inputs as TensorFlow does, with its
// messages, and updates the variable and its slots in place in one pass
// over memory, split over the thread pool when large. A variable's value
// that someone still holds (a ReadVariableOp result) is copied first, so
// that tensors read earlier never change (resource.c's copy-on-write).

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/half.h"
#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/resource.h"
#include "kernels/shape_fns.h"
#include "kernels/training_ops.h"
#include "loom/thread_pool.h"

static const loom__train_table_t* train_loops(void) {
  static const loom__train_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__train_loops_baseline, &loom__train_loops_avx2,
      &loom__train_loops_avx512};
  return kTables[loom__isa_level()];
}

//===----------------------------------------------------------------------===//
// The ops' arguments
//===----------------------------------------------------------------------===//

enum { kMaxTrainVars = 3, kMaxTrainScalars = 6 };

typedef struct train_spec_t {
  // Resource inputs 0 .. num_vars - 1, by name.
  int32_t num_vars;
  const char* vars[kMaxTrainVars];
  // Scalar T inputs, by index and name.
  int32_t num_scalars;
  int32_t scalar_index[kMaxTrainScalars];
  const char* scalars[kMaxTrainScalars];
  int32_t grad_index;
  const char* grad;
  loom__train_op_t op, nesterov_op;
  // Work per element for the thread pool, on the element-wise ops' scale
  // (AddV2: 1): the streams it reads and writes, and Adam's sqrt and
  // division.
  int64_t cost;
} train_spec_t;

static const train_spec_t kGradientDescent = {
    .num_vars = 1,
    .vars = {"var"},
    .num_scalars = 1,
    .scalar_index = {1},
    .scalars = {"alpha"},
    .grad_index = 2,
    .grad = "delta",
    .op = LOOM_TRAIN_GRADIENT_DESCENT,
    .nesterov_op = LOOM_TRAIN_GRADIENT_DESCENT,
    .cost = 1,
};

static const train_spec_t kMomentum = {
    .num_vars = 2,
    .vars = {"var", "accum"},
    .num_scalars = 2,
    .scalar_index = {2, 4},
    .scalars = {"lr", "momentum"},
    .grad_index = 3,
    .grad = "grad",
    .op = LOOM_TRAIN_MOMENTUM,
    .nesterov_op = LOOM_TRAIN_MOMENTUM_NESTEROV,
    .cost = 2,
};

static const train_spec_t kKerasMomentum = {
    .num_vars = 2,
    .vars = {"var", "accum"},
    .num_scalars = 2,
    .scalar_index = {2, 4},
    .scalars = {"lr", "momentum"},
    .grad_index = 3,
    .grad = "grad",
    .op = LOOM_TRAIN_KERAS_MOMENTUM,
    .nesterov_op = LOOM_TRAIN_KERAS_MOMENTUM_NESTEROV,
    .cost = 2,
};

static const train_spec_t kAdam = {
    .num_vars = 3,
    .vars = {"var", "m", "v"},
    .num_scalars = 6,
    .scalar_index = {3, 4, 5, 6, 7, 8},
    .scalars = {"beta1_power", "beta2_power", "lr", "beta1", "beta2",
                "epsilon"},
    .grad_index = 9,
    .grad = "grad",
    .op = LOOM_TRAIN_ADAM,
    .nesterov_op = LOOM_TRAIN_ADAM_NESTEROV,
    .cost = 8,
};

// TensorShape::DebugString's form: "[2,3]", "[]"; "?" for unknown dims.
static loom_status_t not_scalar_error(const char* name,
                                      const loom_shape_t* shape) {
  char dims[LOOM_SHAPE_FORMAT_MAX];
  loom__shape_debug_string(shape, dims, sizeof(dims));
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "%s is not a scalar: %s", name, dims);
}

// TensorFlow's "var and grad do not have the same shape[2,3] [3]".
static loom_status_t shape_mismatch_error(const char* a,
                                          const loom_shape_t* a_shape,
                                          const char* b,
                                          const loom_shape_t* b_shape) {
  char a_dims[LOOM_SHAPE_FORMAT_MAX];
  char b_dims[LOOM_SHAPE_FORMAT_MAX];
  loom__shape_debug_string(a_shape, a_dims, sizeof(a_dims));
  loom__shape_debug_string(b_shape, b_dims, sizeof(b_dims));
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "%s and %s do not have the same shape%s %s", a, b,
                          a_dims, b_dims);
}

static int train_type(loom_dtype_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      return LOOM_TRAIN_F32;
    case LOOM_DTYPE_DOUBLE:
      return LOOM_TRAIN_F64;
    case LOOM_DTYPE_HALF:
      return LOOM_TRAIN_F16;
    case LOOM_DTYPE_BFLOAT16:
      return LOOM_TRAIN_BF16;
    default:
      return -1;
  }
}

// A scalar input's value, widened to double (exact for every T here).
static double scalar_value(const loom_tensor_t* tensor) {
  const void* data = loom_tensor_data(tensor);
  switch (loom_tensor_dtype(tensor)) {
    case LOOM_DTYPE_FLOAT:
      return *(const float*)data;
    case LOOM_DTYPE_DOUBLE:
      return *(const double*)data;
    case LOOM_DTYPE_HALF:
      return loom__half_to_float(*(const uint16_t*)data);
    case LOOM_DTYPE_BFLOAT16:
      return loom__bfloat16_to_float(*(const uint16_t*)data);
    default:
      return 0;
  }
}

// The loop's scalars from the inputs' values, computed in the compute type
// (float for float and the 16-bit types, double for double) as TensorFlow
// computes them in T.
static void set_scalars(const train_spec_t* spec, const double* in, bool f64,
                        loom__train_args_t* args) {
  if (spec->op == LOOM_TRAIN_ADAM) {
    // in: beta1_power, beta2_power, lr, beta1, beta2, epsilon.
    if (f64) {
      args->f64[0] = in[2] * sqrt(1.0 - in[1]) / (1.0 - in[0]);
      args->f64[1] = in[3];
      args->f64[2] = 1.0 - in[3];
      args->f64[3] = 1.0 - in[4];
      args->f64[4] = in[5];
    } else {
      float b1p = (float)in[0], b2p = (float)in[1], lr = (float)in[2];
      float b1 = (float)in[3], b2 = (float)in[4];
      args->f32[0] = lr * sqrtf(1.0f - b2p) / (1.0f - b1p);
      args->f32[1] = b1;
      args->f32[2] = 1.0f - b1;
      args->f32[3] = 1.0f - b2;
      args->f32[4] = (float)in[5];
    }
    return;
  }
  for (int32_t k = 0; k < spec->num_scalars; ++k) {
    args->f64[k] = in[k];
    args->f32[k] = (float)in[k];
  }
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

// Elements per unit of parallel work: a multiple of every vector width
// and of the 16-bit block.
enum { kTrainBlock = 4096 };

// Below this much work (elements x cost), the update runs inline: the
// element-wise ops' threshold.
enum { kTrainMinParallelWork = 32768 };

typedef struct train_job_t {
  loom__train_loop_fn_t loop;
  loom__train_args_t args;
  int64_t n;
} train_job_t;

static void run_units(void* arg, int64_t begin, int64_t end) {
  const train_job_t* job = arg;
  int64_t first = begin * kTrainBlock;
  int64_t last = end * kTrainBlock;
  if (last > job->n) last = job->n;
  job->loop(&job->args, first, last);
}

// The kernel state: use_nesterov, as a pointer to one of these (never
// NULL, nothing to free).
static const bool kNesterov = true;
static const bool kPlain = false;

static void* train_create(loom_kernel_construction_t* ctx) {
  loom_attr_value_t value;
  if (loom_op_attrs_get(loom_kernel_construction_attrs(ctx), "use_nesterov",
                        &value) &&
      value.kind == LOOM_ATTR_KIND_BOOL && !value.is_list && value.u.b) {
    return (void*)&kNesterov;
  }
  return (void*)&kPlain;
}

// Validates the inputs and the variables (locked), in TensorFlow's order.
static loom_status_t validate(const train_spec_t* spec,
                              loom_kernel_context_t* ctx, loom_dtype_t dtype,
                              loom__resource_var_t* const* vars) {
  const loom_tensor_t* values[kMaxTrainVars];
  for (int32_t k = 0; k < spec->num_vars; ++k) {
    LOOM_RETURN_IF_ERROR(
        loom__resource_value(vars[k], dtype, spec->vars[k], &values[k]));
  }
  for (int32_t k = 0; k < spec->num_scalars; ++k) {
    const loom_tensor_t* t =
        loom_kernel_context_input(ctx, spec->scalar_index[k]);
    if (loom_tensor_shape(t)->rank != 0) {
      return not_scalar_error(spec->scalars[k], loom_tensor_shape(t));
    }
  }
  const loom_shape_t* var_shape = loom_tensor_shape(values[0]);
  for (int32_t k = 1; k < spec->num_vars; ++k) {
    if (!loom_shape_equal(var_shape, loom_tensor_shape(values[k]))) {
      return shape_mismatch_error(spec->vars[0], var_shape, spec->vars[k],
                                  loom_tensor_shape(values[k]));
    }
  }
  const loom_tensor_t* grad = loom_kernel_context_input(ctx, spec->grad_index);
  if (!loom_shape_equal(var_shape, loom_tensor_shape(grad))) {
    return shape_mismatch_error(spec->vars[0], var_shape, spec->grad,
                                loom_tensor_shape(grad));
  }
  return loom_ok_status();
}

static loom_status_t update(const train_spec_t* spec, bool nesterov,
                            loom_kernel_context_t* ctx,
                            loom__resource_var_t* const* vars,
                            loom_tensor_t** dense_grad) {
  loom_tensor_t* grad = loom_kernel_context_input(ctx, spec->grad_index);
  loom_dtype_t dtype = loom_tensor_dtype(grad);
  int type = train_type(dtype);
  if (type < 0) {
    // The kernel's type constraint admits only the types above.
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED, "%s: no kernel for %s",
                            loom_kernel_context_op(ctx)->name,
                            loom_dtype_name(dtype));
  }
  LOOM_RETURN_IF_ERROR(validate(spec, ctx, dtype, vars));
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  train_job_t job;
  memset(&job, 0, sizeof(job));
  loom_tensor_t* values[kMaxTrainVars] = {NULL};
  for (int32_t k = 0; k < spec->num_vars; ++k) {
    LOOM_RETURN_IF_ERROR(
        loom__resource_writable_value(vars[k], allocator, &values[k]));
  }
  if (loom_tensor_kind(grad) != LOOM_TENSOR_DENSE) {
    // One value standing for all (a broadcast gradient): expand it.
    LOOM_RETURN_IF_ERROR(
        loom_tensor_convert_to_dense(allocator, grad, dense_grad));
    grad = *dense_grad;
  }
  double scalars[kMaxTrainScalars];
  for (int32_t k = 0; k < spec->num_scalars; ++k) {
    scalars[k] =
        scalar_value(loom_kernel_context_input(ctx, spec->scalar_index[k]));
  }
  set_scalars(spec, scalars, dtype == LOOM_DTYPE_DOUBLE, &job.args);
  job.args.var = loom_tensor_data(values[0]);
  job.args.slot1 = spec->num_vars > 1 ? loom_tensor_data(values[1]) : NULL;
  job.args.slot2 = spec->num_vars > 2 ? loom_tensor_data(values[2]) : NULL;
  job.args.grad = loom_tensor_data(grad);
  job.n = loom_tensor_num_elements(values[0]);
  job.loop = (*train_loops())[nesterov ? spec->nesterov_op : spec->op][type];
  if (job.n == 0) return loom_ok_status();
  int64_t units = (job.n + kTrainBlock - 1) / kTrainBlock;
  // n * cost < kTrainMinParallelWork, without the product.
  if (units == 1 || job.n < kTrainMinParallelWork / spec->cost) {
    job.loop(&job.args, 0, job.n);
    return loom_ok_status();
  }
  loom_thread_pool_t* pool =
      loom_host_context_thread_pool(loom_kernel_context_host(ctx));
  return loom_thread_pool_parallel_for(pool, units, kTrainBlock * spec->cost,
                                       run_units, &job);
}

static void train_compute(const train_spec_t* spec, const void* kernel,
                          loom_kernel_context_t* ctx) {
  loom__resource_var_t* vars[kMaxTrainVars];
  for (int32_t k = 0; k < spec->num_vars; ++k) {
    loom_status_t status = loom__resource_input(ctx, k, &vars[k]);
    if (status) {
      loom_kernel_context_fail(ctx, status);
      return;
    }
  }
  loom_tensor_t* dense_grad = NULL;
  loom__resource_lock_all(vars, spec->num_vars);
  loom_status_t status =
      update(spec, kernel && *(const bool*)kernel, ctx, vars, &dense_grad);
  loom__resource_unlock_all(vars, spec->num_vars);
  loom_tensor_release(dense_grad);
  if (status) loom_kernel_context_fail(ctx, status);
}

static void gradient_descent_compute(void* kernel, loom_kernel_context_t* ctx) {
  train_compute(&kGradientDescent, kernel, ctx);
}

static void momentum_compute(void* kernel, loom_kernel_context_t* ctx) {
  train_compute(&kMomentum, kernel, ctx);
}

static void keras_momentum_compute(void* kernel, loom_kernel_context_t* ctx) {
  train_compute(&kKerasMomentum, kernel, ctx);
}

static void adam_compute(void* kernel, loom_kernel_context_t* ctx) {
  train_compute(&kAdam, kernel, ctx);
}

//===----------------------------------------------------------------------===//
// Shape functions and registration
//===----------------------------------------------------------------------===//

// The ops have no outputs; their scalar inputs must be scalars (the
// variables' shapes are known only when the op runs).
static loom_status_t check_scalars(const train_spec_t* spec,
                                   loom_shape_inference_context_t* context) {
  for (int32_t k = 0; k < spec->num_scalars; ++k) {
    loom_shape_t shape;
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(
        context, spec->scalar_index[k], &shape));
    if (shape.rank > 0) return not_scalar_error(spec->scalars[k], &shape);
  }
  return loom_ok_status();
}

static loom_status_t gradient_descent_shape_fn(
    loom_shape_inference_context_t* context, void* user_data) {
  (void)user_data;
  return check_scalars(&kGradientDescent, context);
}

// Momentum and Keras momentum take the same inputs.
static loom_status_t momentum_shape_fn(loom_shape_inference_context_t* context,
                                       void* user_data) {
  (void)user_data;
  return check_scalars(&kMomentum, context);
}

static loom_status_t adam_shape_fn(loom_shape_inference_context_t* context,
                                   void* user_data) {
  (void)user_data;
  return check_scalars(&kAdam, context);
}

#define TRAIN_ATTRS "T: numbertype", "use_locking: bool = false"

static const loom__builtin_op_t kOps[] = {
    {.name = "ResourceApplyGradientDescent",
     .inputs = {"var: resource", "alpha: T", "delta: T"},
     .attrs = {TRAIN_ATTRS},
     .shape_fn = gradient_descent_shape_fn,
     .is_stateful = true},
    {.name = "ResourceApplyMomentum",
     .inputs = {"var: resource", "accum: resource", "lr: T", "grad: T",
                "momentum: T"},
     .attrs = {TRAIN_ATTRS, "use_nesterov: bool = false"},
     .shape_fn = momentum_shape_fn,
     .is_stateful = true},
    {.name = "ResourceApplyKerasMomentum",
     .inputs = {"var: resource", "accum: resource", "lr: T", "grad: T",
                "momentum: T"},
     .attrs = {TRAIN_ATTRS, "use_nesterov: bool = false"},
     .shape_fn = momentum_shape_fn,
     .is_stateful = true},
    {.name = "ResourceApplyAdam",
     .inputs = {"var: resource", "m: resource", "v: resource", "beta1_power: T",
                "beta2_power: T", "lr: T", "beta1: T", "beta2: T", "epsilon: T",
                "grad: T"},
     .attrs = {TRAIN_ATTRS, "use_nesterov: bool = false"},
     .shape_fn = adam_shape_fn,
     .is_stateful = true},
};

#define TRAIN_TYPES \
  { LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16 }

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "ResourceApplyGradientDescent",
     .compute = gradient_descent_compute,
     .type_attr = "T",
     .types = TRAIN_TYPES,
     .any_rank = true},
    {.op_name = "ResourceApplyMomentum",
     .compute = momentum_compute,
     .create = train_create,
     .type_attr = "T",
     .types = TRAIN_TYPES,
     .any_rank = true},
    {.op_name = "ResourceApplyKerasMomentum",
     .compute = keras_momentum_compute,
     .create = train_create,
     .type_attr = "T",
     .types = TRAIN_TYPES,
     .any_rank = true},
    {.op_name = "ResourceApplyAdam",
     .compute = adam_compute,
     .create = train_create,
     .type_attr = "T",
     .types = TRAIN_TYPES,
     .any_rank = true},
};

loom_status_t loom__register_training_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
