/* A plugin that shows the rest of TensorFlow's kernel and op C API: list
 * arguments, attrs of every kind, an asynchronous kernel and the kernel
 * thread pool. Four deterministic ops:
 *
 *   ShowcaseCombine(values: N * T) -> (result: T, num_positive: int64)
 *     Folds N same-shaped tensors element by element, left to right:
 *       acc = weights[0] * values[0]
 *       acc = ops[k - 1](acc, weights[k] * values[k])   for k = 1 .. N-1
 *       result = relu ? max(scale * acc, 0) : scale * acc
 *     and counts the result's positive elements. ops are 'add', 'sub',
 *     'mul', 'max' or 'min' (none: all 'add'); weights are ints (none: all
 *     1). float and double are computed in double and rounded once; int32
 *     and int64 in 64-bit two's complement, then scaled in double (toward
 *     zero) unless scale is 1, and saturated to T. When input_shape has a
 *     known rank, every input must have that rank (the C API exposes only
 *     the rank of a shape attr). Runs on the pool with
 *     TF_ThreadPool_ParallelFor and counts with per-worker counters through
 *     TF_ThreadPool_ParallelForWithWorkerId.
 *
 *   ShowcaseCastAsync(values: in_types) -> (cast: out_types)
 *     Converts tensor i to out_types[i]; floats become integers rounding
 *     'truncate' (toward zero) or 'round' (half away from zero), saturating;
 *     NaN becomes 0. An asynchronous kernel: compute schedules the work with
 *     TF_ThreadPool_Schedule and the work calls
 *     TF_RunAsyncOpKernelDoneCallback.
 *
 *   ShowcaseFill() -> (output: dtype)
 *     A tensor of shape `dims` holding `value` (one element, broadcast, or
 *     one per output element), converted to dtype as ShowcaseCastAsync
 *     truncates.
 *
 *   ShowcaseDescribeAttrs() -> (description: string)
 *     A text that describes, one line each, the attrs of the kinds the
 *     other ops do not use, as kernel construction reads them: `callback`
 *     (a func, read as the serialized NameAttrList TensorFlow hands out),
 *     `thresholds` (list(float)), `flags` (list(bool)), `shapes`
 *     (list(shape): the C API exposes their number and total rank) and
 *     `tensors` (list(tensor)). For example:
 *       callback: Identity
 *       thresholds: [0.25, 0.75]
 *       flags: [true, false]
 *       shapes: 2 (3 dims in all)
 *       tensors: [float[2] {1.5, -2}, int64[] {7}]
 *
 * Uses only the tensorflow/c headers (ops.h, kernels.h, tf_tstring.h);
 * valid C11 and C++. */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_tstring.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Registers the four ops and their kernels. */
TF_CAPI_EXPORT void TF_InitPlugin(void);
#ifdef __cplusplus
}
#endif

#define SHOWCASE_TYPES "{float, double, int32, int64}"

/*===----------------------------------------------------------------------===
 * Elements
 *===----------------------------------------------------------------------===*/

/* One element of any supported type: integers stay exact in `integer`. */
typedef struct showcase_scalar_t {
  int is_real;
  double real;
  int64_t integer;
} showcase_scalar_t;

typedef enum showcase_rounding_t {
  SHOWCASE_TRUNCATE = 0,
  SHOWCASE_ROUND = 1,
} showcase_rounding_t;

static int showcase_supported(TF_DataType type) {
  return type == TF_FLOAT || type == TF_DOUBLE || type == TF_INT32 ||
         type == TF_INT64;
}

static showcase_scalar_t showcase_load(const void* data, TF_DataType type,
                                       int64_t index) {
  showcase_scalar_t value;
  value.is_real = type == TF_FLOAT || type == TF_DOUBLE;
  value.real = 0;
  value.integer = 0;
  switch (type) {
    case TF_FLOAT:
      value.real = ((const float*)data)[index];
      break;
    case TF_DOUBLE:
      value.real = ((const double*)data)[index];
      break;
    case TF_INT32:
      value.integer = ((const int32_t*)data)[index];
      break;
    case TF_INT64:
      value.integer = ((const int64_t*)data)[index];
      break;
    default:
      break;
  }
  return value;
}

/* Half away from zero, without libm. */
static double showcase_round_half_away(double x) {
  /* 2^52: from there on every double is an integer (NaN fails both). */
  if (!(x > -4503599627370496.0 && x < 4503599627370496.0)) return x;
  double whole = (double)(int64_t)x;
  double fraction = x - whole;
  if (fraction >= 0.5) return whole + 1;
  if (fraction <= -0.5) return whole - 1;
  return whole;
}

/* A double as an integer of `type`: saturated, NaN as 0. */
static int64_t showcase_saturate_real(double x, TF_DataType type) {
  int64_t low = type == TF_INT32 ? INT32_MIN : INT64_MIN;
  int64_t high = type == TF_INT32 ? INT32_MAX : INT64_MAX;
  if (x != x) return 0;
  if (x <= (double)low) return low;
  if (x >= (double)high) return high; /* (double)INT64_MAX is 2^63 */
  return (int64_t)x;
}

static void showcase_store(void* data, TF_DataType type, int64_t index,
                           showcase_scalar_t value,
                           showcase_rounding_t rounding) {
  double real = value.is_real ? value.real : (double)value.integer;
  int64_t integer = value.integer;
  if (value.is_real && (type == TF_INT32 || type == TF_INT64)) {
    if (rounding == SHOWCASE_ROUND) real = showcase_round_half_away(real);
    integer = showcase_saturate_real(real, type);
  }
  switch (type) {
    case TF_FLOAT:
      ((float*)data)[index] = (float)real;
      break;
    case TF_DOUBLE:
      ((double*)data)[index] = real;
      break;
    case TF_INT32:
      ((int32_t*)data)[index] = (int32_t)(integer < INT32_MIN   ? INT32_MIN
                                          : integer > INT32_MAX ? INT32_MAX
                                                                : integer);
      break;
    case TF_INT64:
      ((int64_t*)data)[index] = integer;
      break;
    default:
      break;
  }
}

/* Whether `tensor` holds one element per entry of its shape: a kernel may
 * only index its data then. */
static int showcase_is_dense(const TF_Tensor* tensor) {
  return TF_TensorByteSize(tensor) ==
         (size_t)TF_TensorElementCount(tensor) *
             TF_DataTypeSize(TF_TensorType(tensor));
}

#if defined(__GNUC__)
#define SHOWCASE_PRINTF_LIKE(format_index, first_arg) \
  __attribute__((format(printf, format_index, first_arg)))
#else
#define SHOWCASE_PRINTF_LIKE(format_index, first_arg)
#endif

/* Sets `status` to INVALID_ARGUMENT with a printf-formatted message. */
static void showcase_error(TF_Status* status, const char* format, ...)
    SHOWCASE_PRINTF_LIKE(2, 3);

static void showcase_error(TF_Status* status, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  TF_SetStatus(status, TF_INVALID_ARGUMENT, message);
}

/* Reads a string attr into a NUL-terminated buffer (truncated to fit). */
static void showcase_get_string_attr(TF_OpKernelConstruction* ctx,
                                     const char* name, char* buffer,
                                     size_t capacity, TF_Status* status) {
  int32_t list_size = 0;
  int32_t total_size = 0;
  TF_OpKernelConstruction_GetAttrSize(ctx, name, &list_size, &total_size,
                                      status);
  if (TF_GetCode(status) != TF_OK) return;
  size_t length = total_size < 0 ? 0 : (size_t)total_size;
  if (length >= capacity) length = capacity - 1;
  TF_OpKernelConstruction_GetAttrString(ctx, name, buffer, length, status);
  buffer[TF_GetCode(status) == TF_OK ? length : 0] = '\0';
}

/*===----------------------------------------------------------------------===
 * ShowcaseCombine
 *===----------------------------------------------------------------------===*/

typedef enum showcase_op_t {
  SHOWCASE_ADD = 0,
  SHOWCASE_SUB,
  SHOWCASE_MUL,
  SHOWCASE_MAX,
  SHOWCASE_MIN,
} showcase_op_t;

static const char* const kShowcaseOpNames[] = {"add", "sub", "mul", "max",
                                               "min"};

typedef struct showcase_combine_kernel_t {
  int32_t n;
  TF_DataType type;
  showcase_op_t* ops; /* n - 1 */
  int64_t* weights;   /* n */
  float scale;
  TF_Bool relu;
  int32_t required_rank; /* -1: any */
} showcase_combine_kernel_t;

static void showcase_combine_delete(void* state) {
  showcase_combine_kernel_t* kernel = (showcase_combine_kernel_t*)state;
  if (!kernel) return;
  free(kernel->ops);
  free(kernel->weights);
  free(kernel);
}

/* Reads `ops` (a list of strings) into kernel->ops. */
static void showcase_combine_read_ops(TF_OpKernelConstruction* ctx,
                                      showcase_combine_kernel_t* kernel,
                                      TF_Status* status) {
  int32_t count = 0;
  int32_t total = 0;
  TF_OpKernelConstruction_GetAttrSize(ctx, "ops", &count, &total, status);
  if (TF_GetCode(status) != TF_OK) return;
  if (count != 0 && count != kernel->n - 1) {
    showcase_error(status,
                   "ShowcaseCombine: attr 'ops' has %d entries; expected "
                   "N - 1 = %d (one per input after the first) or none",
                   (int)count, (int)(kernel->n - 1));
    return;
  }
  char** names = (char**)calloc((size_t)(count ? count : 1), sizeof(char*));
  size_t* lengths =
      (size_t*)calloc((size_t)(count ? count : 1), sizeof(size_t));
  char* storage = (char*)malloc((size_t)(total > 0 ? total : 1));
  if (!names || !lengths || !storage) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseCombine: out of memory");
  } else if (count) {
    TF_OpKernelConstruction_GetAttrStringList(ctx, "ops", names, lengths, count,
                                              storage, (size_t)total, status);
  }
  for (int32_t i = 0; TF_GetCode(status) == TF_OK && i < kernel->n - 1; ++i) {
    kernel->ops[i] = SHOWCASE_ADD;
    if (!count) continue;
    int found = 0;
    for (int op = 0; op < 5 && !found; ++op) {
      if (strlen(kShowcaseOpNames[op]) == lengths[i] &&
          memcmp(kShowcaseOpNames[op], names[i], lengths[i]) == 0) {
        kernel->ops[i] = (showcase_op_t)op;
        found = 1;
      }
    }
    if (!found) {
      /* The op definition's allowed values make this unreachable. */
      showcase_error(status,
                     "ShowcaseCombine: ops[%d] is not one of add, sub, mul, "
                     "max, min",
                     (int)i);
    }
  }
  free(names);
  free(lengths);
  free(storage);
}

static void* showcase_combine_create(TF_OpKernelConstruction* ctx) {
  TF_Status* status = TF_NewStatus();
  showcase_combine_kernel_t* kernel =
      (showcase_combine_kernel_t*)calloc(1, sizeof(showcase_combine_kernel_t));
  if (!status || !kernel) {
    TF_DeleteStatus(status);
    free(kernel);
    return NULL; /* compute reports it */
  }
  int32_t count = 0;
  int32_t total = 0;
  TF_OpKernelConstruction_GetAttrInt32(ctx, "N", &kernel->n, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_OpKernelConstruction_GetAttrType(ctx, "T", &kernel->type, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    kernel->ops =
        (showcase_op_t*)calloc((size_t)kernel->n, sizeof(showcase_op_t));
    kernel->weights = (int64_t*)calloc((size_t)kernel->n, sizeof(int64_t));
    if (!kernel->ops || !kernel->weights) {
      TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                   "ShowcaseCombine: out of memory");
    }
  }
  if (TF_GetCode(status) == TF_OK) {
    showcase_combine_read_ops(ctx, kernel, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    TF_OpKernelConstruction_GetAttrSize(ctx, "weights", &count, &total, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    if (count == 0) {
      for (int32_t i = 0; i < kernel->n; ++i) kernel->weights[i] = 1;
    } else if (count != kernel->n) {
      showcase_error(status,
                     "ShowcaseCombine: attr 'weights' has %d entries; "
                     "expected N = %d (one per input) or none",
                     (int)count, (int)kernel->n);
    } else {
      TF_OpKernelConstruction_GetAttrInt64List(ctx, "weights", kernel->weights,
                                               kernel->n, status);
    }
  }
  if (TF_GetCode(status) == TF_OK) {
    TF_OpKernelConstruction_GetAttrFloat(ctx, "scale", &kernel->scale, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    TF_OpKernelConstruction_GetAttrBool(ctx, "relu", &kernel->relu, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    /* For a shape attr, total_size is its rank (-1 when unknown). */
    TF_OpKernelConstruction_GetAttrSize(ctx, "input_shape", &count, &total,
                                        status);
    kernel->required_rank = total;
  }
  if (TF_GetCode(status) != TF_OK) TF_OpKernelConstruction_Failure(ctx, status);
  TF_DeleteStatus(status);
  return kernel;
}

typedef struct showcase_combine_job_t {
  const showcase_combine_kernel_t* kernel;
  const void** inputs; /* n data pointers */
  void* output;
  int64_t* positive_per_worker; /* TF_ThreadPool_NumThreads + 1 */
} showcase_combine_job_t;

static double showcase_apply_real(showcase_op_t op, double a, double b) {
  switch (op) {
    case SHOWCASE_SUB:
      return a - b;
    case SHOWCASE_MUL:
      return a * b;
    case SHOWCASE_MAX:
      return a < b ? b : a;
    case SHOWCASE_MIN:
      return b < a ? b : a;
    default:
      return a + b;
  }
}

/* Two's complement arithmetic: overflow wraps instead of being undefined. */
static int64_t showcase_apply_int(showcase_op_t op, int64_t a, int64_t b) {
  uint64_t ua = (uint64_t)a;
  uint64_t ub = (uint64_t)b;
  switch (op) {
    case SHOWCASE_SUB:
      return (int64_t)(ua - ub);
    case SHOWCASE_MUL:
      return (int64_t)(ua * ub);
    case SHOWCASE_MAX:
      return a < b ? b : a;
    case SHOWCASE_MIN:
      return b < a ? b : a;
    default:
      return (int64_t)(ua + ub);
  }
}

static void showcase_combine_block(void* arg, int64_t begin, int64_t end) {
  const showcase_combine_job_t* job = (const showcase_combine_job_t*)arg;
  const showcase_combine_kernel_t* kernel = job->kernel;
  TF_DataType type = kernel->type;
  for (int64_t i = begin; i < end; ++i) {
    showcase_scalar_t acc = showcase_load(job->inputs[0], type, i);
    if (acc.is_real) {
      acc.real *= (double)kernel->weights[0];
      for (int32_t k = 1; k < kernel->n; ++k) {
        double term = (double)kernel->weights[k] *
                      showcase_load(job->inputs[k], type, i).real;
        acc.real = showcase_apply_real(kernel->ops[k - 1], acc.real, term);
      }
      acc.real *= (double)kernel->scale;
      if (kernel->relu && acc.real < 0) acc.real = 0;
    } else {
      acc.integer =
          showcase_apply_int(SHOWCASE_MUL, kernel->weights[0], acc.integer);
      for (int32_t k = 1; k < kernel->n; ++k) {
        int64_t term =
            showcase_apply_int(SHOWCASE_MUL, kernel->weights[k],
                               showcase_load(job->inputs[k], type, i).integer);
        acc.integer = showcase_apply_int(kernel->ops[k - 1], acc.integer, term);
      }
      if (kernel->scale != 1.0f) {
        acc.integer = showcase_saturate_real(
            (double)acc.integer * (double)kernel->scale, TF_INT64);
      }
      if (kernel->relu && acc.integer < 0) acc.integer = 0;
    }
    showcase_store(job->output, type, i, acc, SHOWCASE_TRUNCATE);
  }
}

/* Each block adds to its worker's counter: no two blocks running at once
 * share a worker id, so no atomics are needed. */
static void showcase_count_block(void* arg, int64_t begin, int64_t end,
                                 int worker_id) {
  const showcase_combine_job_t* job = (const showcase_combine_job_t*)arg;
  int64_t positive = 0;
  for (int64_t i = begin; i < end; ++i) {
    showcase_scalar_t value = showcase_load(job->output, job->kernel->type, i);
    positive += value.is_real ? value.real > 0 : value.integer > 0;
  }
  job->positive_per_worker[worker_id] += positive;
}

/* Checks input `index` against input 0 (and the required rank). */
static int showcase_combine_check_input(const showcase_combine_kernel_t* kernel,
                                        TF_Tensor* const* inputs, int index,
                                        TF_Status* status) {
  const TF_Tensor* input = inputs[index];
  const TF_Tensor* first = inputs[0];
  if (!showcase_is_dense(input)) {
    showcase_error(status, "ShowcaseCombine: input %d is not a dense tensor",
                   index);
    return 0;
  }
  if (kernel->required_rank >= 0 &&
      TF_NumDims(input) != kernel->required_rank) {
    showcase_error(status,
                   "ShowcaseCombine: input %d has rank %d but attr "
                   "'input_shape' requires rank %d",
                   index, TF_NumDims(input), (int)kernel->required_rank);
    return 0;
  }
  if (TF_NumDims(input) != TF_NumDims(first)) {
    showcase_error(status,
                   "ShowcaseCombine: input %d has rank %d but input 0 has "
                   "rank %d; all inputs must have the same shape",
                   index, TF_NumDims(input), TF_NumDims(first));
    return 0;
  }
  for (int d = 0; d < TF_NumDims(input); ++d) {
    if (TF_Dim(input, d) != TF_Dim(first, d)) {
      showcase_error(status,
                     "ShowcaseCombine: dimension %d of input %d is %lld but "
                     "%lld in input 0; all inputs must have the same shape",
                     d, index, (long long)TF_Dim(input, d),
                     (long long)TF_Dim(first, d));
      return 0;
    }
  }
  return 1;
}

static void showcase_combine_compute(void* state, TF_OpKernelContext* ctx) {
  const showcase_combine_kernel_t* kernel =
      (const showcase_combine_kernel_t*)state;
  TF_Status* status = TF_NewStatus();
  if (!status) return; /* the runtime reports the unset outputs */
  TF_Tensor** inputs = NULL;
  TF_Tensor* result = NULL;
  TF_Tensor* positive = NULL;
  int64_t* dims = NULL;
  int rank = 0;
  int num_workers = 0;
  showcase_combine_job_t job;
  memset(&job, 0, sizeof(job));
  TF_InputRange_Args range;
  memset(&range, 0, sizeof(range));
  range.struct_size = TF_InputRange_Args_STRUCT_SIZE;
  range.status = status;
  if (!kernel) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseCombine: out of memory creating the kernel");
    goto done;
  }
  /* "values" is the only input, so its range is [0, N). */
  TF_InputRange(ctx, "values", &range);
  if (TF_GetCode(status) != TF_OK) goto done;
  inputs = (TF_Tensor**)calloc((size_t)kernel->n, sizeof(TF_Tensor*));
  job.inputs = (const void**)calloc((size_t)kernel->n, sizeof(void*));
  if (!inputs || !job.inputs) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseCombine: out of memory");
    goto done;
  }
  for (int i = 0; i < kernel->n; ++i) {
    TF_GetInput(ctx, range.start + i, &inputs[i], status);
    if (TF_GetCode(status) != TF_OK) goto done;
    if (!showcase_combine_check_input(kernel, inputs, i, status)) goto done;
    job.inputs[i] = TF_TensorData(inputs[i]);
  }

  rank = TF_NumDims(inputs[0]);
  dims = (int64_t*)malloc(sizeof(int64_t) * (size_t)(rank ? rank : 1));
  if (!dims) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseCombine: out of memory");
    goto done;
  }
  for (int d = 0; d < rank; ++d) dims[d] = TF_Dim(inputs[0], d);
  result = TF_AllocateOutput(ctx, 0, kernel->type, dims, rank,
                             TF_TensorByteSize(inputs[0]), status);
  if (TF_GetCode(status) != TF_OK) goto done;
  positive =
      TF_AllocateOutput(ctx, 1, TF_INT64, NULL, 0, sizeof(int64_t), status);
  if (TF_GetCode(status) != TF_OK) goto done;

  num_workers = TF_ThreadPool_NumThreads(ctx) + 1;
  job.kernel = kernel;
  job.output = TF_TensorData(result);
  job.positive_per_worker =
      (int64_t*)calloc((size_t)num_workers, sizeof(int64_t));
  if (!job.positive_per_worker) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseCombine: out of memory");
    goto done;
  }
  {
    int64_t count = TF_TensorElementCount(result);
    /* A rough cycle count per element: blocks are split accordingly. */
    int64_t cost = 4 * (int64_t)kernel->n;
    TF_ThreadPool_ParallelFor(ctx, count, cost, &showcase_combine_block, &job);
    TF_ThreadPool_ParallelForWithWorkerId(ctx, count, 2, &showcase_count_block,
                                          &job);
    int64_t total = 0;
    for (int w = 0; w < num_workers; ++w) total += job.positive_per_worker[w];
    *(int64_t*)TF_TensorData(positive) = total;
  }

done:
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  for (int i = 0; inputs && i < kernel->n; ++i) TF_DeleteTensor(inputs[i]);
  free(inputs);
  free((void*)job.inputs);
  free(job.positive_per_worker);
  free(dims);
  TF_DeleteTensor(result);
  TF_DeleteTensor(positive);
  TF_DeleteStatus(status);
}

/* Output 0 has the inputs' common shape, merged dimension by dimension
 * from whichever inputs know it; output 1 is a scalar. */
static void showcase_combine_shape(TF_ShapeInferenceContext* ctx,
                                   TF_Status* status) {
  int64_t n = TF_ShapeInferenceContextNumInputs(ctx);
  TF_ShapeHandle* input = TF_NewShapeHandle();
  TF_ShapeHandle* piece = TF_NewShapeHandle();
  TF_ShapeHandle* merged = TF_ShapeInferenceContextScalar(ctx);
  TF_ShapeHandle* next = TF_NewShapeHandle();
  TF_ShapeHandle* scalar = TF_ShapeInferenceContextScalar(ctx);
  TF_DimensionHandle* dim = TF_NewDimensionHandle();
  int64_t rank = -1;
  int64_t rank_source = -1;
  char message[256];
  if (!input || !piece || !merged || !next || !scalar || !dim) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseCombine shape inference: out of memory");
    goto done;
  }
  for (int64_t i = 0; i < n; ++i) {
    TF_ShapeInferenceContextGetInput(ctx, (int)i, input, status);
    if (TF_GetCode(status) != TF_OK) goto done;
    int64_t input_rank = TF_ShapeInferenceContextRank(ctx, input);
    if (input_rank < 0) continue;
    if (rank < 0) {
      rank = input_rank;
      rank_source = i;
    } else if (input_rank != rank) {
      snprintf(message, sizeof(message),
               "ShowcaseCombine: input %lld has rank %lld but input %lld has "
               "rank %lld; all inputs must have the same shape",
               (long long)i, (long long)input_rank, (long long)rank_source,
               (long long)rank);
      TF_SetStatus(status, TF_INVALID_ARGUMENT, message);
      goto done;
    }
  }
  if (rank < 0) {
    TF_ShapeInferenceContextSetUnknownShape(ctx, status);
  } else {
    for (int64_t d = 0; d < rank; ++d) {
      int64_t value = -1;
      int64_t source = rank_source;
      for (int64_t i = 0; i < n; ++i) {
        TF_ShapeInferenceContextGetInput(ctx, (int)i, input, status);
        if (TF_GetCode(status) != TF_OK) goto done;
        if (!TF_ShapeInferenceContextRankKnown(ctx, input)) continue;
        TF_ShapeInferenceContextDim(ctx, input, d, dim);
        if (!TF_DimensionHandleValueKnown(dim)) continue;
        if (value < 0) {
          value = TF_DimensionHandleValue(dim);
          source = i;
        } else if (TF_DimensionHandleValue(dim) != value) {
          snprintf(message, sizeof(message),
                   "ShowcaseCombine: dimension %lld of input %lld is %lld but "
                   "%lld in input %lld; all inputs must have the same shape",
                   (long long)d, (long long)i,
                   (long long)TF_DimensionHandleValue(dim), (long long)value,
                   (long long)source);
          TF_SetStatus(status, TF_INVALID_ARGUMENT, message);
          goto done;
        }
      }
      /* Append dimension d of the input that knows it (the C API builds
       * shapes only from other shapes). */
      TF_ShapeInferenceContextGetInput(ctx, (int)source, input, status);
      if (TF_GetCode(status) != TF_OK) goto done;
      TF_ShapeInferenceContextSubshape(ctx, input, d, d + 1, piece, status);
      if (TF_GetCode(status) != TF_OK) goto done;
      TF_ShapeInferenceContextConcatenateShapes(ctx, merged, piece, next,
                                                status);
      if (TF_GetCode(status) != TF_OK) goto done;
      TF_ShapeHandle* swap = merged;
      merged = next;
      next = swap;
    }
    TF_ShapeInferenceContextSetOutput(ctx, 0, merged, status);
  }
  if (TF_GetCode(status) != TF_OK) goto done;
  TF_ShapeInferenceContextSetOutput(ctx, 1, scalar, status);

done:
  TF_DeleteShapeHandle(input);
  TF_DeleteShapeHandle(piece);
  TF_DeleteShapeHandle(merged);
  TF_DeleteShapeHandle(next);
  TF_DeleteShapeHandle(scalar);
  TF_DeleteDimensionHandle(dim);
}

/*===----------------------------------------------------------------------===
 * ShowcaseCastAsync
 *===----------------------------------------------------------------------===*/

typedef struct showcase_cast_kernel_t {
  int32_t n;
  TF_DataType* in_types;
  TF_DataType* out_types;
  showcase_rounding_t rounding;
} showcase_cast_kernel_t;

static void showcase_cast_delete(void* state) {
  showcase_cast_kernel_t* kernel = (showcase_cast_kernel_t*)state;
  if (!kernel) return;
  free(kernel->in_types);
  free(kernel->out_types);
  free(kernel);
}

static void* showcase_cast_create(TF_OpKernelConstruction* ctx) {
  TF_Status* status = TF_NewStatus();
  showcase_cast_kernel_t* kernel =
      (showcase_cast_kernel_t*)calloc(1, sizeof(showcase_cast_kernel_t));
  if (!status || !kernel) {
    TF_DeleteStatus(status);
    free(kernel);
    return NULL;
  }
  int32_t num_in = 0;
  int32_t num_out = 0;
  int32_t total = 0;
  char rounding[16];
  TF_OpKernelConstruction_GetAttrSize(ctx, "in_types", &num_in, &total, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_OpKernelConstruction_GetAttrSize(ctx, "out_types", &num_out, &total,
                                        status);
  }
  if (TF_GetCode(status) == TF_OK && num_in != num_out) {
    showcase_error(status,
                   "ShowcaseCastAsync: %d inputs (in_types) but %d outputs "
                   "(out_types); give one output type per input",
                   (int)num_in, (int)num_out);
  }
  if (TF_GetCode(status) == TF_OK) {
    kernel->n = num_in;
    kernel->in_types =
        (TF_DataType*)calloc((size_t)num_in + 1, sizeof(TF_DataType));
    kernel->out_types =
        (TF_DataType*)calloc((size_t)num_in + 1, sizeof(TF_DataType));
    if (!kernel->in_types || !kernel->out_types) {
      TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                   "ShowcaseCastAsync: out of memory");
    }
  }
  if (TF_GetCode(status) == TF_OK) {
    TF_OpKernelConstruction_GetAttrTypeList(ctx, "in_types", kernel->in_types,
                                            num_in, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    TF_OpKernelConstruction_GetAttrTypeList(ctx, "out_types", kernel->out_types,
                                            num_in, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    showcase_get_string_attr(ctx, "rounding", rounding, sizeof(rounding),
                             status);
    kernel->rounding =
        strcmp(rounding, "round") == 0 ? SHOWCASE_ROUND : SHOWCASE_TRUNCATE;
  }
  if (TF_GetCode(status) != TF_OK) TF_OpKernelConstruction_Failure(ctx, status);
  TF_DeleteStatus(status);
  return kernel;
}

/* The work compute_async hands to the pool. */
typedef struct showcase_cast_job_t {
  const showcase_cast_kernel_t* kernel;
  TF_OpKernelContext* ctx;
  TF_AsyncOpKernelDoneCallback* done;
} showcase_cast_job_t;

/* Converts input i into output i; false with `status` set on failure. */
static int showcase_cast_one(const showcase_cast_kernel_t* kernel,
                             TF_OpKernelContext* ctx, int i,
                             TF_Status* status) {
  TF_Tensor* input = NULL;
  TF_Tensor* output = NULL;
  int64_t* dims = NULL;
  int ok = 0;
  int rank = 0;
  TF_DataType to = kernel->out_types[i];
  TF_GetInput(ctx, i, &input, status);
  if (TF_GetCode(status) != TF_OK) goto done;
  if (!showcase_is_dense(input)) {
    showcase_error(status, "ShowcaseCastAsync: input %d is not a dense tensor",
                   i);
    goto done;
  }
  rank = TF_NumDims(input);
  dims = (int64_t*)malloc(sizeof(int64_t) * (size_t)(rank ? rank : 1));
  if (!dims) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseCastAsync: out of memory");
    goto done;
  }
  for (int d = 0; d < rank; ++d) dims[d] = TF_Dim(input, d);
  output = TF_AllocateOutput(
      ctx, i, to, dims, rank,
      (size_t)TF_TensorElementCount(input) * TF_DataTypeSize(to), status);
  if (TF_GetCode(status) != TF_OK) goto done;
  {
    const void* in = TF_TensorData(input);
    void* out = TF_TensorData(output);
    TF_DataType from = TF_TensorType(input);
    for (int64_t e = 0; e < TF_TensorElementCount(input); ++e) {
      showcase_store(out, to, e, showcase_load(in, from, e), kernel->rounding);
    }
  }
  ok = 1;

done:
  free(dims);
  TF_DeleteTensor(input);
  TF_DeleteTensor(output);
  return ok;
}

static void showcase_cast_run(void* arg) {
  showcase_cast_job_t* job = (showcase_cast_job_t*)arg;
  TF_AsyncOpKernelDoneCallback* done = job->done;
  TF_Status* status = TF_NewStatus();
  if (status) {
    for (int i = 0; i < job->kernel->n; ++i) {
      if (!showcase_cast_one(job->kernel, job->ctx, i, status)) {
        TF_OpKernelContext_Failure(job->ctx, status);
        break;
      }
    }
  }
  TF_DeleteStatus(status);
  free(job);
  /* Last: the context and the kernel may be gone once done has run. */
  TF_RunAsyncOpKernelDoneCallback(done);
}

static void showcase_cast_compute_async(void* state, TF_OpKernelContext* ctx,
                                        TF_AsyncOpKernelDoneCallback* done) {
  const showcase_cast_kernel_t* kernel = (const showcase_cast_kernel_t*)state;
  showcase_cast_job_t* job =
      kernel ? (showcase_cast_job_t*)malloc(sizeof(showcase_cast_job_t)) : NULL;
  if (!job) {
    TF_Status* status = TF_NewStatus();
    if (status) {
      TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                   "ShowcaseCastAsync: out of memory");
      TF_OpKernelContext_Failure(ctx, status);
      TF_DeleteStatus(status);
    }
    TF_RunAsyncOpKernelDoneCallback(done);
    return;
  }
  job->kernel = kernel;
  job->ctx = ctx;
  job->done = done;
  TF_ThreadPool_Schedule(ctx, &showcase_cast_run, job);
}

/* Output i has input i's shape. */
static void showcase_cast_shape(TF_ShapeInferenceContext* ctx,
                                TF_Status* status) {
  TF_ShapeHandle* shape = TF_NewShapeHandle();
  if (!shape) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseCastAsync shape inference: out of memory");
    return;
  }
  int64_t n = TF_ShapeInferenceContextNumInputs(ctx);
  for (int64_t i = 0; i < n && TF_GetCode(status) == TF_OK; ++i) {
    TF_ShapeInferenceContextGetInput(ctx, (int)i, shape, status);
    if (TF_GetCode(status) == TF_OK) {
      TF_ShapeInferenceContextSetOutput(ctx, (int)i, shape, status);
    }
  }
  TF_DeleteShapeHandle(shape);
}

/*===----------------------------------------------------------------------===
 * ShowcaseFill
 *===----------------------------------------------------------------------===*/

typedef struct showcase_fill_kernel_t {
  TF_DataType type;
  int32_t rank;
  int64_t* dims;
  int64_t count;
  TF_Tensor* value;
} showcase_fill_kernel_t;

static void showcase_fill_delete(void* state) {
  showcase_fill_kernel_t* kernel = (showcase_fill_kernel_t*)state;
  if (!kernel) return;
  free(kernel->dims);
  TF_DeleteTensor(kernel->value);
  free(kernel);
}

/* Checks the dims and the value; sets kernel->count. */
static void showcase_fill_validate(showcase_fill_kernel_t* kernel,
                                   TF_Status* status) {
  kernel->count = 1;
  for (int32_t d = 0; d < kernel->rank; ++d) {
    if (kernel->dims[d] < 0) {
      showcase_error(status,
                     "ShowcaseFill: dims[%d] is %lld; dimensions must be >= 0",
                     (int)d, (long long)kernel->dims[d]);
      return;
    }
    if (kernel->dims[d] && kernel->count > INT64_MAX / kernel->dims[d]) {
      showcase_error(status, "ShowcaseFill: dims has more than %lld elements",
                     (long long)INT64_MAX);
      return;
    }
    kernel->count *= kernel->dims[d];
  }
  TF_DataType value_type = TF_TensorType(kernel->value);
  if (!showcase_supported(value_type) || !showcase_is_dense(kernel->value)) {
    showcase_error(status,
                   "ShowcaseFill: attr 'value' must be a dense float, double, "
                   "int32 or int64 tensor");
    return;
  }
  int64_t values = TF_TensorElementCount(kernel->value);
  if (values != 1 && values != kernel->count) {
    showcase_error(status,
                   "ShowcaseFill: attr 'value' has %lld elements; expected 1 "
                   "(broadcast) or %lld (one per element of dims)",
                   (long long)values, (long long)kernel->count);
  }
}

static void* showcase_fill_create(TF_OpKernelConstruction* ctx) {
  TF_Status* status = TF_NewStatus();
  showcase_fill_kernel_t* kernel =
      (showcase_fill_kernel_t*)calloc(1, sizeof(showcase_fill_kernel_t));
  if (!status || !kernel) {
    TF_DeleteStatus(status);
    free(kernel);
    return NULL;
  }
  int32_t total = 0;
  TF_OpKernelConstruction_GetAttrType(ctx, "dtype", &kernel->type, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_OpKernelConstruction_GetAttrSize(ctx, "dims", &kernel->rank, &total,
                                        status);
  }
  if (TF_GetCode(status) == TF_OK) {
    kernel->dims = (int64_t*)calloc((size_t)kernel->rank + 1, sizeof(int64_t));
    if (!kernel->dims) {
      TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                   "ShowcaseFill: out of memory");
    }
  }
  if (TF_GetCode(status) == TF_OK) {
    TF_OpKernelConstruction_GetAttrInt64List(ctx, "dims", kernel->dims,
                                             kernel->rank, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    TF_OpKernelConstruction_GetAttrTensor(ctx, "value", &kernel->value, status);
  }
  if (TF_GetCode(status) == TF_OK) showcase_fill_validate(kernel, status);
  if (TF_GetCode(status) != TF_OK) TF_OpKernelConstruction_Failure(ctx, status);
  TF_DeleteStatus(status);
  return kernel;
}

static void showcase_fill_compute(void* state, TF_OpKernelContext* ctx) {
  const showcase_fill_kernel_t* kernel = (const showcase_fill_kernel_t*)state;
  TF_Status* status = TF_NewStatus();
  if (!status) return;
  if (!kernel) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseFill: out of memory creating the kernel");
  } else {
    TF_Tensor* output = TF_AllocateOutput(
        ctx, 0, kernel->type, kernel->dims, kernel->rank,
        (size_t)kernel->count * TF_DataTypeSize(kernel->type), status);
    if (TF_GetCode(status) == TF_OK) {
      const void* values = TF_TensorData(kernel->value);
      TF_DataType value_type = TF_TensorType(kernel->value);
      int broadcast = TF_TensorElementCount(kernel->value) == 1;
      void* out = TF_TensorData(output);
      for (int64_t i = 0; i < kernel->count; ++i) {
        showcase_store(out, kernel->type, i,
                       showcase_load(values, value_type, broadcast ? 0 : i),
                       SHOWCASE_TRUNCATE);
      }
    }
    TF_DeleteTensor(output);
  }
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteStatus(status);
}

/*===----------------------------------------------------------------------===
 * ShowcaseDescribeAttrs
 *===----------------------------------------------------------------------===*/

/* A growing NUL-terminated text; `failed` once memory ran out. */
typedef struct showcase_text_t {
  char* data;
  size_t size;
  size_t capacity;
  int failed;
} showcase_text_t;

static void showcase_append(showcase_text_t* text, const char* format, ...)
    SHOWCASE_PRINTF_LIKE(2, 3);

static void showcase_append(showcase_text_t* text, const char* format, ...) {
  va_list args;
  int needed = 0;
  if (text->failed) return;
  va_start(args, format);
  needed = vsnprintf(NULL, 0, format, args);
  va_end(args);
  if (needed < 0) {
    text->failed = 1;
    return;
  }
  if (text->size + (size_t)needed + 1 > text->capacity) {
    size_t capacity = 2 * (text->size + (size_t)needed + 1);
    char* grown = (char*)realloc(text->data, capacity);
    if (!grown) {
      text->failed = 1;
      return;
    }
    text->data = grown;
    text->capacity = capacity;
  }
  va_start(args, format);
  vsnprintf(text->data + text->size, text->capacity - text->size, format, args);
  va_end(args);
  text->size += (size_t)needed;
}

static const char* showcase_type_name(TF_DataType type) {
  switch (type) {
    case TF_FLOAT:
      return "float";
    case TF_DOUBLE:
      return "double";
    case TF_INT32:
      return "int32";
    case TF_INT64:
      return "int64";
    default:
      return NULL;
  }
}

/* Reads a base-128 varint at *at (before end); 0 when it is cut short. */
static int showcase_read_varint(const unsigned char** at,
                                const unsigned char* end, uint64_t* out) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64 && *at < end; shift += 7) {
    unsigned char byte = *(*at)++;
    value |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *out = value;
      return 1;
    }
  }
  return 0;
}

/* "<attr>: <function name>" from the serialized NameAttrList
 * TF_OpKernelConstruction_GetAttrFunction returns (its field 1). */
static void showcase_describe_func(TF_OpKernelConstruction* ctx,
                                   const char* attr, showcase_text_t* text,
                                   TF_Status* status) {
  TF_Buffer* buffer =
      TF_OpKernelConstruction_GetAttrFunction(ctx, attr, status);
  if (TF_GetCode(status) != TF_OK) return;
  if (!buffer) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseDescribeAttrs: out of memory");
    return;
  }
  const unsigned char* at = (const unsigned char*)buffer->data;
  const unsigned char* end = at + buffer->length;
  const unsigned char* name = at;
  size_t name_size = 0;
  while (at < end) {
    uint64_t key = 0;
    uint64_t value = 0;
    if (!showcase_read_varint(&at, end, &key) ||
        ((key & 7) != 0 && (key & 7) != 2) ||
        !showcase_read_varint(&at, end, &value) ||
        ((key & 7) == 2 && value > (uint64_t)(end - at))) {
      showcase_error(status,
                     "ShowcaseDescribeAttrs: attr '%s' is not a serialized "
                     "NameAttrList",
                     attr);
      break;
    }
    if ((key & 7) != 2) continue; /* a varint field: skipped */
    if ((key >> 3) == 1) {
      name = at;
      name_size = (size_t)value;
    }
    at += value;
  }
  if (TF_GetCode(status) == TF_OK) {
    showcase_append(text, "%s: %.*s\n", attr, (int)name_size,
                    (const char*)name);
  }
  TF_DeleteBuffer(buffer);
}

/* The length of list attr `attr`, or -1 with `status` set. */
static int32_t showcase_list_size(TF_OpKernelConstruction* ctx,
                                  const char* attr, int32_t* total_size,
                                  TF_Status* status) {
  int32_t list_size = 0;
  int32_t total = 0;
  TF_OpKernelConstruction_GetAttrSize(ctx, attr, &list_size, &total, status);
  if (total_size) *total_size = total;
  return TF_GetCode(status) == TF_OK ? list_size : -1;
}

static void showcase_describe_floats(TF_OpKernelConstruction* ctx,
                                     const char* attr, showcase_text_t* text,
                                     TF_Status* status) {
  int32_t count = showcase_list_size(ctx, attr, NULL, status);
  if (count < 0) return;
  float* values = (float*)malloc(sizeof(float) * (size_t)(count ? count : 1));
  if (!values) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseDescribeAttrs: out of memory");
    return;
  }
  TF_OpKernelConstruction_GetAttrFloatList(ctx, attr, values, count, status);
  if (TF_GetCode(status) == TF_OK) {
    showcase_append(text, "%s: [", attr);
    for (int32_t i = 0; i < count; ++i) {
      showcase_append(text, "%s%g", i ? ", " : "", (double)values[i]);
    }
    showcase_append(text, "]\n");
  }
  free(values);
}

static void showcase_describe_bools(TF_OpKernelConstruction* ctx,
                                    const char* attr, showcase_text_t* text,
                                    TF_Status* status) {
  int32_t count = showcase_list_size(ctx, attr, NULL, status);
  if (count < 0) return;
  TF_Bool* values =
      (TF_Bool*)malloc(sizeof(TF_Bool) * (size_t)(count ? count : 1));
  if (!values) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseDescribeAttrs: out of memory");
    return;
  }
  TF_OpKernelConstruction_GetAttrBoolList(ctx, attr, values, count, status);
  if (TF_GetCode(status) == TF_OK) {
    showcase_append(text, "%s: [", attr);
    for (int32_t i = 0; i < count; ++i) {
      showcase_append(text, "%s%s", i ? ", " : "",
                      values[i] ? "true" : "false");
    }
    showcase_append(text, "]\n");
  }
  free(values);
}

/* For a list(shape) the C API gives the number of shapes and the sum of
 * their ranks (unknown ranks count 0). */
static void showcase_describe_shapes(TF_OpKernelConstruction* ctx,
                                     const char* attr, showcase_text_t* text,
                                     TF_Status* status) {
  int32_t total_rank = 0;
  int32_t count = showcase_list_size(ctx, attr, &total_rank, status);
  if (count < 0) return;
  showcase_append(text, "%s: %d (%d dims in all)\n", attr, (int)count,
                  (int)total_rank);
}

/* "float[2] {1.5, -2}": dtype, shape and (for the four supported dtypes)
 * values. */
static void showcase_describe_tensor(const TF_Tensor* tensor,
                                     showcase_text_t* text) {
  TF_DataType type = TF_TensorType(tensor);
  const char* name = showcase_type_name(type);
  if (name) {
    showcase_append(text, "%s[", name);
  } else {
    showcase_append(text, "dtype %d[", (int)type);
  }
  for (int d = 0; d < TF_NumDims(tensor); ++d) {
    showcase_append(text, "%s%lld", d ? "," : "", (long long)TF_Dim(tensor, d));
  }
  showcase_append(text, "]");
  if (!name || !showcase_is_dense(tensor)) return;
  showcase_append(text, " {");
  for (int64_t i = 0; i < TF_TensorElementCount(tensor); ++i) {
    showcase_scalar_t value = showcase_load(TF_TensorData(tensor), type, i);
    if (value.is_real) {
      showcase_append(text, "%s%g", i ? ", " : "", value.real);
    } else {
      showcase_append(text, "%s%lld", i ? ", " : "", (long long)value.integer);
    }
  }
  showcase_append(text, "}");
}

static void showcase_describe_tensors(TF_OpKernelConstruction* ctx,
                                      const char* attr, showcase_text_t* text,
                                      TF_Status* status) {
  int32_t count = showcase_list_size(ctx, attr, NULL, status);
  if (count < 0) return;
  TF_Tensor** tensors =
      (TF_Tensor**)calloc((size_t)(count ? count : 1), sizeof(TF_Tensor*));
  if (!tensors) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseDescribeAttrs: out of memory");
    return;
  }
  TF_OpKernelConstruction_GetAttrTensorList(ctx, attr, tensors, count, status);
  if (TF_GetCode(status) == TF_OK) {
    showcase_append(text, "%s: [", attr);
    for (int32_t i = 0; i < count; ++i) {
      if (i) showcase_append(text, ", ");
      showcase_describe_tensor(tensors[i], text);
    }
    showcase_append(text, "]\n");
  }
  for (int32_t i = 0; i < count; ++i) TF_DeleteTensor(tensors[i]);
  free(tensors);
}

/* The kernel is the description, built once at construction. */
static void* showcase_describe_create(TF_OpKernelConstruction* ctx) {
  TF_Status* status = TF_NewStatus();
  showcase_text_t* text = (showcase_text_t*)calloc(1, sizeof(showcase_text_t));
  if (!status || !text) {
    TF_DeleteStatus(status);
    free(text);
    return NULL;
  }
  showcase_describe_func(ctx, "callback", text, status);
  if (TF_GetCode(status) == TF_OK) {
    showcase_describe_floats(ctx, "thresholds", text, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    showcase_describe_bools(ctx, "flags", text, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    showcase_describe_shapes(ctx, "shapes", text, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    showcase_describe_tensors(ctx, "tensors", text, status);
  }
  if (TF_GetCode(status) == TF_OK && text->failed) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseDescribeAttrs: out of memory");
  }
  if (TF_GetCode(status) != TF_OK) TF_OpKernelConstruction_Failure(ctx, status);
  TF_DeleteStatus(status);
  return text;
}

static void showcase_describe_delete(void* state) {
  showcase_text_t* text = (showcase_text_t*)state;
  if (!text) return;
  free(text->data);
  free(text);
}

static void showcase_describe_compute(void* state, TF_OpKernelContext* ctx) {
  const showcase_text_t* text = (const showcase_text_t*)state;
  TF_Status* status = TF_NewStatus();
  TF_Tensor* output = NULL;
  if (!status) return;
  if (!text) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseDescribeAttrs: out of memory creating the kernel");
  } else {
    output = TF_AllocateOutput(ctx, 0, TF_STRING, NULL, 0, sizeof(TF_TString),
                               status);
  }
  if (TF_GetCode(status) == TF_OK) {
    /* A string output starts as empty strings; this copies into one. */
    TF_StringCopy((TF_TString*)TF_TensorData(output),
                  text->data ? text->data : "", text->size);
  }
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteTensor(output);
  TF_DeleteStatus(status);
}

static void showcase_describe_shape(TF_ShapeInferenceContext* ctx,
                                    TF_Status* status) {
  TF_ShapeHandle* scalar = TF_ShapeInferenceContextScalar(ctx);
  if (!scalar) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "ShowcaseDescribeAttrs shape inference: out of memory");
    return;
  }
  TF_ShapeInferenceContextSetOutput(ctx, 0, scalar, status);
  TF_DeleteShapeHandle(scalar);
}

/*===----------------------------------------------------------------------===
 * Registration
 *===----------------------------------------------------------------------===*/

/* Registers `builder` unless an earlier step failed. */
static void showcase_register_op(TF_OpDefinitionBuilder* builder,
                                 TF_Status* status) {
  if (TF_GetCode(status) == TF_OK) {
    TF_RegisterOpDefinition(builder, status);
  } else {
    TF_DeleteOpDefinitionBuilder(builder);
  }
}

static void showcase_register_kernel(const char* name,
                                     TF_KernelBuilder* builder,
                                     TF_Status* status) {
  if (TF_GetCode(status) == TF_OK) {
    TF_RegisterKernelBuilder(name, builder, status);
  } else {
    TF_DeleteKernelBuilder(builder);
  }
}

void TF_InitPlugin(void) {
  TF_Status* status = TF_NewStatus();
  if (!status) return;

  TF_OpDefinitionBuilder* combine =
      TF_NewOpDefinitionBuilder("ShowcaseCombine");
  TF_OpDefinitionBuilderAddInput(combine, "values: N * T");
  TF_OpDefinitionBuilderAddOutput(combine, "result: T");
  TF_OpDefinitionBuilderAddOutput(combine, "num_positive: int64");
  TF_OpDefinitionBuilderAddAttr(combine, "N: int >= 2");
  TF_OpDefinitionBuilderAddAttr(combine, "T: " SHOWCASE_TYPES);
  TF_OpDefinitionBuilderAddAttr(
      combine, "ops: list({'add', 'sub', 'mul', 'max', 'min'}) = []");
  TF_OpDefinitionBuilderAddAttr(combine, "weights: list(int) = []");
  TF_OpDefinitionBuilderAddAttr(combine, "scale: float = 1.0");
  TF_OpDefinitionBuilderAddAttr(combine, "relu: bool = false");
  TF_OpDefinitionBuilderAddAttr(combine,
                                "input_shape: shape = { unknown_rank: true }");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(combine,
                                                  &showcase_combine_shape);
  showcase_register_op(combine, status);

  TF_OpDefinitionBuilder* cast = TF_NewOpDefinitionBuilder("ShowcaseCastAsync");
  TF_OpDefinitionBuilderAddInput(cast, "values: in_types");
  TF_OpDefinitionBuilderAddOutput(cast, "cast: out_types");
  TF_OpDefinitionBuilderAddAttr(cast, "in_types: list(" SHOWCASE_TYPES ")");
  TF_OpDefinitionBuilderAddAttr(cast, "out_types: list(" SHOWCASE_TYPES ")");
  TF_OpDefinitionBuilderAddAttr(cast,
                                "rounding: {'truncate', 'round'} = 'truncate'");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(cast, &showcase_cast_shape);
  showcase_register_op(cast, status);

  /* No shape function: shape functions can read only type attrs through
   * the C API, so the output shape (from `dims`) is unknown until run. */
  TF_OpDefinitionBuilder* fill = TF_NewOpDefinitionBuilder("ShowcaseFill");
  TF_OpDefinitionBuilderAddOutput(fill, "output: dtype");
  TF_OpDefinitionBuilderAddAttr(fill, "dtype: " SHOWCASE_TYPES " = DT_FLOAT");
  TF_OpDefinitionBuilderAddAttr(fill, "dims: list(int) = []");
  TF_OpDefinitionBuilderAddAttr(fill,
                                "value: tensor = { dtype: DT_FLOAT "
                                "float_val: 0 }");
  showcase_register_op(fill, status);

  /* `callback` has no default: a caller names the function. */
  TF_OpDefinitionBuilder* describe =
      TF_NewOpDefinitionBuilder("ShowcaseDescribeAttrs");
  TF_OpDefinitionBuilderAddOutput(describe, "description: string");
  TF_OpDefinitionBuilderAddAttr(describe, "callback: func");
  TF_OpDefinitionBuilderAddAttr(describe,
                                "thresholds: list(float) = [0.25, 0.75]");
  TF_OpDefinitionBuilderAddAttr(describe, "flags: list(bool) = [true, false]");
  TF_OpDefinitionBuilderAddAttr(describe,
                                "shapes: list(shape) = [[2, 3], "
                                "{ unknown_rank: true }, [?]]");
  TF_OpDefinitionBuilderAddAttr(describe, "tensors: list(tensor) = []");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(describe,
                                                  &showcase_describe_shape);
  showcase_register_op(describe, status);

  showcase_register_kernel(
      "ShowcaseCombineOp",
      TF_NewKernelBuilder("ShowcaseCombine", "CPU", &showcase_combine_create,
                          &showcase_combine_compute, &showcase_combine_delete),
      status);
  showcase_register_kernel(
      "ShowcaseCastAsyncOp",
      TF_NewAsyncKernelBuilder(
          "ShowcaseCastAsync", "CPU", &showcase_cast_create,
          &showcase_cast_compute_async, &showcase_cast_delete),
      status);
  showcase_register_kernel(
      "ShowcaseFillOp",
      TF_NewKernelBuilder("ShowcaseFill", "CPU", &showcase_fill_create,
                          &showcase_fill_compute, &showcase_fill_delete),
      status);
  showcase_register_kernel(
      "ShowcaseDescribeAttrsOp",
      TF_NewKernelBuilder("ShowcaseDescribeAttrs", "CPU",
                          &showcase_describe_create, &showcase_describe_compute,
                          &showcase_describe_delete),
      status);
  TF_DeleteStatus(status);
}
