// RandomUniform, RandomStandardNormal, TruncatedNormal: TensorFlow's
// stateful random ops with its seed / seed2 attributes.
//
// Numbers come from Philox4x32-10 (Salmon et al., "Parallel random numbers:
// as easy as 1, 2, 3"), a counter-based generator: element block b of a call
// uses counter (base + b), so any split of the work over the thread pool
// gives the same tensor. Each kernel instance owns a key (from the seeds)
// and a counter base that every call advances, so two calls give different
// numbers and a program with the same seeds gives the same sequence, as in
// TensorFlow. Seeds 0 and 0 mean "random": the key comes from the system.

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/half.h"
#include "kernels/array_internal.h"
#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "loom/thread_pool.h"
#include "tensor/checked_size.h"

//===----------------------------------------------------------------------===//
// Philox4x32-10
//===----------------------------------------------------------------------===//

typedef struct philox_block_t {
  uint32_t v[4];
} philox_block_t;

static philox_block_t philox(uint64_t counter_low, uint64_t counter_high,
                             uint64_t key) {
  uint32_t c0 = (uint32_t)counter_low, c1 = (uint32_t)(counter_low >> 32);
  uint32_t c2 = (uint32_t)counter_high, c3 = (uint32_t)(counter_high >> 32);
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0;
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
    uint32_t n1 = (uint32_t)p1;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    uint32_t n3 = (uint32_t)p0;
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  philox_block_t block = {{c0, c1, c2, c3}};
  return block;
}

// Uniform in [0, 1) from 23 random bits (float) or 52 (double).
static float uniform_float(uint32_t bits) {
  uint32_t word = 0x3f800000u | (bits >> 9);
  float value;
  memcpy(&value, &word, sizeof(value));
  return value - 1.0f;
}

static double uniform_double(uint32_t high, uint32_t low) {
  uint64_t word = 0x3ff0000000000000ull | (((uint64_t)high << 32 | low) >> 12);
  double value;
  memcpy(&value, &word, sizeof(value));
  return value - 1.0;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

typedef enum distribution_t {
  kUniform = 0,
  kNormal = 1,
  kTruncatedNormal = 2,
} distribution_t;

typedef struct random_kernel_t {
  distribution_t distribution;
  uint64_t key;
  _Atomic uint64_t next_counter;  // blocks used by earlier calls
} random_kernel_t;

static void* create(loom_kernel_construction_t* ctx, distribution_t kind) {
  const loom_op_attrs_t* attrs = loom_kernel_construction_attrs(ctx);
  int64_t seed = 0, seed2 = 0;
  loom_status_t status = loom_op_attrs_get_i64(attrs, "seed", &seed);
  if (!status) status = loom_op_attrs_get_i64(attrs, "seed2", &seed2);
  random_kernel_t* kernel = status ? NULL : calloc(1, sizeof(*kernel));
  if (!kernel) {
    loom_kernel_construction_fail(
        ctx, status ? status
                    : loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                       "out of memory creating a random "
                                       "kernel"));
    return NULL;
  }
  kernel->distribution = kind;
  if (seed == 0 && seed2 == 0) {
    uint64_t random_key = 0;
    if (getrandom(&random_key, sizeof(random_key), 0) !=
        (ssize_t)sizeof(random_key)) {
      random_key = (uint64_t)(uintptr_t)kernel ^ 0x9E3779B97F4A7C15ull;
    }
    kernel->key = random_key;
  } else {
    kernel->key = (uint64_t)seed ^ ((uint64_t)seed2 * 0x9E3779B97F4A7C15ull);
  }
  atomic_init(&kernel->next_counter, 0);
  return kernel;
}

static void* create_uniform(loom_kernel_construction_t* ctx) {
  return create(ctx, kUniform);
}
static void* create_normal(loom_kernel_construction_t* ctx) {
  return create(ctx, kNormal);
}
static void* create_truncated(loom_kernel_construction_t* ctx) {
  return create(ctx, kTruncatedNormal);
}

static void destroy(void* kernel) {
  free(kernel);
}

// Elements are made in groups of kGroup from kGroup / 4 Philox blocks;
// truncated normals draw from a stream of their own per group (counter
// high word) so rejections never shift other groups.
enum { kGroup = 256 };

typedef struct random_job_t {
  const random_kernel_t* kernel;
  uint64_t base;  // the call's first counter
  loom_dtype_t dtype;
  void* out;
  int64_t count;
} random_job_t;

// One standard normal from two uniforms in (0, 1] and [0, 1) (Box-Muller).
static double box_muller(double u1, double u2, double* second) {
  double radius = sqrt(-2.0 * log(u1));
  double angle = 6.283185307179586 * u2;
  *second = radius * sin(angle);
  return radius * cos(angle);
}

static void store(loom_dtype_t dtype, void* out, int64_t i, double value) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      ((float*)out)[i] = (float)value;
      break;
    case LOOM_DTYPE_DOUBLE:
      ((double*)out)[i] = value;
      break;
    case LOOM_DTYPE_HALF:
      ((uint16_t*)out)[i] = loom__float_to_half((float)value);
      break;
    default:  // bfloat16
      ((uint16_t*)out)[i] = loom__float_to_bfloat16((float)value);
      break;
  }
}

// A group's own stream of 32-bit words: counter (draw, group counter).
typedef struct stream_t {
  uint64_t key;
  uint64_t counter;
  uint64_t draw;
  uint32_t words[4];
  int used;
} stream_t;

static uint32_t next_word(stream_t* stream) {
  if (stream->used == 4) {
    philox_block_t block = philox(stream->draw++, stream->counter, stream->key);
    memcpy(stream->words, block.v, sizeof(stream->words));
    stream->used = 0;
  }
  return stream->words[stream->used++];
}

static double next_double(stream_t* stream) {
  uint32_t high = next_word(stream);
  uint32_t low = next_word(stream);
  return uniform_double(high, low);
}

// A uniform in [0, 1) of `dtype` (float, half or bfloat16) from 32 random
// bits: as many bits as the type's significand holds, so that the value
// is exact in it. Rounding a float draw to half or bfloat16 could give 1.
static double uniform_narrow(loom_dtype_t dtype, uint32_t bits) {
  switch (dtype) {
    case LOOM_DTYPE_HALF:
      return (double)(bits & 0x3ffu) * 0x1p-10;
    case LOOM_DTYPE_BFLOAT16:
      return (double)(bits & 0x7fu) * 0x1p-7;
    default:
      return uniform_float(bits);
  }
}

static void fill_groups(void* arg, int64_t begin, int64_t end) {
  const random_job_t* job = arg;
  const random_kernel_t* kernel = job->kernel;
  bool wide = job->dtype == LOOM_DTYPE_DOUBLE;
  for (int64_t group = begin; group < end; ++group) {
    int64_t first = group * kGroup;
    int64_t last = first + kGroup < job->count ? first + kGroup : job->count;
    stream_t stream = {.key = kernel->key,
                       .counter = job->base + (uint64_t)group,
                       .draw = 0,
                       .used = 4};
    for (int64_t i = first; i < last;) {
      if (kernel->distribution == kUniform) {
        double value = wide ? next_double(&stream)
                            : uniform_narrow(job->dtype, next_word(&stream));
        store(job->dtype, job->out, i++, value);
        continue;
      }
      double u1 = 1.0 - next_double(&stream);  // (0, 1]: log is finite
      double u2 = next_double(&stream);
      double pair[2];
      pair[0] = box_muller(u1, u2, &pair[1]);
      for (int k = 0; k < 2 && i < last; ++k) {
        if (kernel->distribution == kTruncatedNormal && fabs(pair[k]) > 2.0) {
          continue;  // resampled: beyond two standard deviations
        }
        store(job->dtype, job->out, i++, pair[k]);
      }
    }
  }
}

// The shape input's value; its element count (and with `element_size` > 0,
// its byte count) must fit int64: [2^40, 2^40] is an error naming the op
// and the dims, not a wrapped size.
static loom_status_t shape_from_input(const loom_tensor_t* input,
                                      const char* op_name, size_t element_size,
                                      loom_shape_t* out_shape) {
  if (loom_tensor_shape(input)->rank != 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: shape must be a vector, got rank %d", op_name,
                            loom_tensor_shape(input)->rank);
  }
  int64_t rank = loom_tensor_num_elements(input);
  if (rank > LOOM_MAX_SHAPE_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: shape has %lld dimensions, more than %d",
                            op_name, (long long)rank, LOOM_MAX_SHAPE_RANK);
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int64_t i = 0; i < rank; ++i) {
    dims[i] = loom_tensor_dtype(input) == LOOM_DTYPE_INT32
                  ? ((const int32_t*)loom_tensor_data(input))[i]
                  : ((const int64_t*)loom_tensor_data(input))[i];
    if (dims[i] < 0) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: dimension %lld of shape is %lld; dimensions "
                              "must be >= 0",
                              op_name, (long long)i, (long long)dims[i]);
    }
  }
  int64_t count;
  size_t bytes;
  if (!loom__size_product(dims, (int)rank, &count) ||
      (element_size && !loom__size_bytes(count, element_size, &bytes))) {
    char text[LOOM_SHAPE_FORMAT_MAX];
    loom__format_int64s(dims, (int)rank, text, sizeof(text));
    if (!element_size) {
      return loom__size_overflow_error(op_name, "shape", "%s (elements)", text);
    }
    return loom__size_overflow_error(op_name, "shape",
                                     "%s (bytes, of %zu-byte elements)", text,
                                     element_size);
  }
  return loom_shape_initialize_large(out_shape, dims, (int)rank);
}

static void random_compute(void* opaque, loom_kernel_context_t* ctx) {
  random_kernel_t* kernel = opaque;
  const char* op_name = loom_kernel_context_op(ctx)->name;
  loom_shape_t shape;
  loom_status_t status = shape_from_input(
      loom_kernel_context_input(ctx, 0), op_name,
      loom_dtype_size(loom_kernel_context_output_dtype(ctx, 0)), &shape);
  loom_tensor_t* out = NULL;
  if (!status) {
    status = loom_kernel_context_allocate_output(ctx, 0, &shape, &out);
  }
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  random_job_t job = {.kernel = kernel,
                      .dtype = loom_tensor_dtype(out),
                      .out = loom_tensor_data(out),
                      .count = loom_tensor_num_elements(out)};
  int64_t groups = (job.count + kGroup - 1) / kGroup;
  // Reserve this call's streams: later calls give other numbers.
  job.base = atomic_fetch_add(&kernel->next_counter, (uint64_t)groups);
  if (groups <= 1) {
    fill_groups(&job, 0, groups);
    return;
  }
  status = loom_thread_pool_parallel_for(
      loom_host_context_thread_pool(loom_kernel_context_host(ctx)), groups,
      kGroup * 20, fill_groups, &job);
  if (status) loom_kernel_context_fail(ctx, status);
}

// The output's shape is the value of input 0 when it is known now.
static loom_status_t random_shape_fn(loom_shape_inference_context_t* context,
                                     void* user_data) {
  (void)user_data;
  const loom_tensor_t* input =
      loom_shape_inference_context_input_tensor(context, 0);
  loom_shape_t shape = loom_shape_unknown();
  if (input) {
    LOOM_RETURN_IF_ERROR(shape_from_input(
        input, loom_shape_inference_context_op(context)->name, 0, &shape));
  } else {
    loom_shape_t vector;
    LOOM_RETURN_IF_ERROR(
        loom_shape_inference_context_input(context, 0, &vector));
    if (vector.rank == 1 && vector.dims[0] >= 0 &&
        vector.dims[0] <= LOOM_MAX_SHAPE_RANK) {
      LOOM_RETURN_IF_ERROR(loom__array_unknown_dims(vector.dims[0], &shape));
    }
  }
  return loom_shape_inference_context_set_output(context, 0, &shape);
}

#define RANDOM_OP(name_)                                                      \
  {                                                                           \
    .name = name_, .inputs = {"shape: T"}, .outputs = {"output: dtype"},      \
    .attrs = {"seed: int = 0", "seed2: int = 0",                              \
              "dtype: {half, bfloat16, float, double}", "T: {int32, int64}"}, \
    .shape_fn = random_shape_fn, .is_stateful = true                          \
  }

static const loom__builtin_op_t kOps[] = {
    RANDOM_OP("RandomUniform"),
    RANDOM_OP("RandomStandardNormal"),
    RANDOM_OP("TruncatedNormal"),
};

#define RANDOM_KERNEL(name_, create_fn)                               \
  {                                                                   \
    .op_name = name_, .compute = random_compute, .create = create_fn, \
    .destroy = destroy, .type_attr = "dtype",                         \
    .types = {LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT, \
              LOOM_DTYPE_DOUBLE},                                     \
    .host_memory = {"shape"}, .any_rank = true                        \
  }

static const loom__builtin_kernel_t kKernels[] = {
    RANDOM_KERNEL("RandomUniform", create_uniform),
    RANDOM_KERNEL("RandomStandardNormal", create_normal),
    RANDOM_KERNEL("TruncatedNormal", create_truncated),
};

loom_status_t loom__register_random_ops(void) {
  LOOM_RETURN_IF_ERROR(loom__register_builtin_ops(kOps, 3));
  return loom__register_builtin_kernels(kKernels, 3);
}
