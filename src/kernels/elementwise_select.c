// Select, SelectV2, AddN, ClipByValue, BiasAdd, BiasAddV1, BiasAddGrad, with
// TensorFlow's signatures, shape rules and messages. Shape functions and
// kernels share one validation per op, so a bad call fails with the same
// message whether shapes are checked at Execute or in the kernel (the
// runtime puts the op name in front).

#include <string.h>

#include "base/small_vector.h"
#include "kernels/broadcast.h"
#include "kernels/builtin_families.h"
#include "kernels/elementwise.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"
#include "loom/thread_pool.h"
#include "tensor/checked_size.h"

static void fail(loom_kernel_context_t* ctx, loom_status_t status) {
  loom_kernel_context_fail(ctx, status);
}

static bool all_defined(const loom_shape_t* const* shapes, int n) {
  for (int i = 0; i < n; ++i) {
    if (!loom_shape_is_fully_defined(shapes[i])) return false;
  }
  return true;
}

// The index of the log2 of an element size 1, 2, 4 or 8; -1 otherwise.
static int size_index(size_t size) {
  switch (size) {
    case 1:
      return 0;
    case 2:
      return 1;
    case 4:
      return 2;
    case 8:
      return 3;
    default:
      return -1;
  }
}

static void no_loop(loom_kernel_context_t* ctx, loom_dtype_t dtype) {
  fail(ctx, loom_make_status(
                LOOM_STATUS_UNIMPLEMENTED, "%s: no CPU loop for dtype %s",
                loom_kernel_context_op(ctx)->name, loom_dtype_name(dtype)));
}

//===----------------------------------------------------------------------===//
// Select
//===----------------------------------------------------------------------===//

// TensorFlow's Select: condition a scalar (picks t or e whole), a vector
// matching t's first dimension (picks rows), or t's shape.
static loom_status_t select_validate(const loom_shape_t* cond,
                                     const loom_shape_t* t,
                                     const loom_shape_t* e) {
  char a[LOOM_SHAPE_TEXT_SIZE], b[LOOM_SHAPE_TEXT_SIZE];
  if (!loom_shape_equal(t, e)) {
    loom__format_dims(t, a);
    loom__format_dims(e, b);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "'then' and 'else' must have the same "
                            "size.  but received: %s vs. %s",
                            a, b);
  }
  if (cond->rank == 0) return loom_ok_status();
  if (cond->rank == 1 && t->rank > 1) {
    int64_t rows = loom_shape_dims(t)[0];
    if (rows != cond->dims[0]) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "Number of batches of 'then' must match size of 'cond', "
          "but saw: %lld vs. %lld",
          (long long)rows, (long long)cond->dims[0]);
    }
    return loom_ok_status();
  }
  if (!loom_shape_equal(cond, t)) {
    loom__format_dims(cond, a);
    loom__format_dims(t, b);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Inputs to operation Select of type Select "
                            "must have the same size and shape.  Input 0: %s "
                            "!= input 1: %s",
                            a, b);
  }
  return loom_ok_status();
}

static loom_status_t read_inputs(loom_shape_inference_context_t* context,
                                 loom_shape_t* shapes, int n) {
  for (int i = 0; i < n; ++i) {
    LOOM_RETURN_IF_ERROR(
        loom_shape_inference_context_input(context, i, &shapes[i]));
  }
  return loom_ok_status();
}

static loom_status_t select_shape_fn(loom_shape_inference_context_t* context,
                                     void* user_data) {
  (void)user_data;
  loom_shape_t s[3];
  LOOM_RETURN_IF_ERROR(read_inputs(context, s, 3));
  const loom_shape_t* all[3] = {&s[0], &s[1], &s[2]};
  if (all_defined(all, 3))
    LOOM_RETURN_IF_ERROR(select_validate(&s[0], &s[1], &s[2]));
  return loom_shape_inference_context_set_output(
      context, 0, loom_shape_is_fully_defined(&s[1]) ? &s[1] : &s[2]);
}

static void select_run(loom_kernel_context_t* ctx,
                       const loom_shape_t* cond_shape) {
  loom_tensor_t* t = loom_kernel_context_input(ctx, 1);
  loom_dtype_t dtype = loom_tensor_dtype(t);
  int index = size_index(loom_dtype_size(dtype));
  if (index < 0) {
    no_loop(ctx, dtype);
    return;
  }
  loom__elementwise_call_t call = {
      .num_operands = 3,
      .shapes = {cond_shape, NULL, NULL},
      .ternary = loom__select_loops()->select[index],
      .cost_per_element = 1,
      .forwardable = (1u << 1) | (1u << 2)};
  loom__elementwise_compute(ctx, &call);
}

static void select_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_tensor_t* cond = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* t = loom_kernel_context_input(ctx, 1);
  loom_tensor_t* e = loom_kernel_context_input(ctx, 2);
  const loom_shape_t* cs = loom_tensor_shape(cond);
  const loom_shape_t* ts = loom_tensor_shape(t);
  loom_status_t status = select_validate(cs, ts, loom_tensor_shape(e));
  if (status) {
    fail(ctx, status);
    return;
  }
  if (cs->rank == 0) {  // the output is t or e as it is
    status = loom_kernel_context_set_output(
        ctx, 0, *(const bool*)loom_tensor_data(cond) ? t : e);
    if (status) fail(ctx, status);
    return;
  }
  if (cs->rank == 1 && ts->rank > 1) {  // a condition per row of t
    loom_shape_t rows = *ts;
    if (LOOM_UNLIKELY(ts->rank > LOOM_MAX_RANK)) {
      int64_t dims[LOOM_MAX_SHAPE_RANK];
      dims[0] = loom_shape_dims(ts)[0];
      for (int32_t i = 1; i < ts->rank; ++i) dims[i] = 1;
      status = loom_shape_initialize_large(&rows, dims, ts->rank);
      if (status) {
        fail(ctx, status);
        return;
      }
    } else {
      for (int32_t i = 1; i < rows.rank; ++i) rows.dims[i] = 1;
    }
    select_run(ctx, &rows);
    return;
  }
  select_run(ctx, NULL);
}

//===----------------------------------------------------------------------===//
// SelectV2: NumPy broadcasting of all three
//===----------------------------------------------------------------------===//

static loom_status_t select_v2_broadcast(const loom_shape_t* cond,
                                         const loom_shape_t* t,
                                         const loom_shape_t* e,
                                         loom_shape_t* out) {
  loom_shape_t pair;
  loom_status_t status = loom__broadcast_shapes("SelectV2", cond, t, &pair);
  if (!status) status = loom__broadcast_shapes("SelectV2", &pair, e, out);
  if (!status) return loom_ok_status();
  // Shapes that broadcast (pairwise, then all three do) but whose result
  // has more elements than int64 counts keep that message.
  if (loom__broadcast_compatible(cond, t) &&
      loom__broadcast_compatible(cond, e) && loom__broadcast_compatible(t, e)) {
    return status;
  }
  loom_status_free(status);
  char a[LOOM_SHAPE_TEXT_SIZE], b[LOOM_SHAPE_TEXT_SIZE],
      c[LOOM_SHAPE_TEXT_SIZE];
  loom__format_dims(cond, a);
  loom__format_dims(t, b);
  loom__format_dims(e, c);
  return loom_make_status(
      LOOM_STATUS_INVALID_ARGUMENT,
      "condition %s, then %s, and else %s must be broadcastable", a, b, c);
}

static loom_status_t select_v2_shape_fn(loom_shape_inference_context_t* context,
                                        void* user_data) {
  (void)user_data;
  loom_shape_t s[3];
  LOOM_RETURN_IF_ERROR(read_inputs(context, s, 3));
  const loom_shape_t* all[3] = {&s[0], &s[1], &s[2]};
  loom_shape_t out = loom_shape_unknown();
  if (all_defined(all, 3)) {
    LOOM_RETURN_IF_ERROR(select_v2_broadcast(&s[0], &s[1], &s[2], &out));
  }
  return loom_shape_inference_context_set_output(context, 0, &out);
}

static void select_v2_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_tensor_t* cond = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* t = loom_kernel_context_input(ctx, 1);
  loom_tensor_t* e = loom_kernel_context_input(ctx, 2);
  loom_shape_t out;
  loom_status_t status =
      select_v2_broadcast(loom_tensor_shape(cond), loom_tensor_shape(t),
                          loom_tensor_shape(e), &out);
  if (status) {
    fail(ctx, status);
    return;
  }
  // One condition and nothing to broadcast: the output is t or e as is.
  if (loom_tensor_num_elements(cond) == 1 &&
      loom_shape_equal(loom_tensor_shape(t), &out) &&
      loom_shape_equal(loom_tensor_shape(e), &out)) {
    status = loom_kernel_context_set_output(
        ctx, 0, *(const bool*)loom_tensor_data(cond) ? t : e);
    if (status) fail(ctx, status);
    return;
  }
  select_run(ctx, NULL);
}

//===----------------------------------------------------------------------===//
// ClipByValue
//===----------------------------------------------------------------------===//

static loom_status_t clip_validate(const loom_shape_t* t,
                                   const loom_shape_t* lo,
                                   const loom_shape_t* hi) {
  if ((lo->rank == 0 || loom_shape_equal(lo, t)) &&
      (hi->rank == 0 || loom_shape_equal(hi, t))) {
    return loom_ok_status();
  }
  char a[LOOM_SHAPE_TEXT_SIZE], b[LOOM_SHAPE_TEXT_SIZE],
      c[LOOM_SHAPE_TEXT_SIZE];
  loom__format_dims(t, a);
  loom__format_dims(lo, b);
  loom__format_dims(hi, c);
  return loom_make_status(
      LOOM_STATUS_INVALID_ARGUMENT,
      "clip_value_min and clip_value_max must be either of the "
      "same shape as input, or a scalar. input shape: %s clip_value_min "
      "shape: %s clip_value_max shape: %s",
      a, b, c);
}

static loom_status_t clip_shape_fn(loom_shape_inference_context_t* context,
                                   void* user_data) {
  loom_shape_t s[3];
  LOOM_RETURN_IF_ERROR(read_inputs(context, s, 3));
  const loom_shape_t* all[3] = {&s[0], &s[1], &s[2]};
  if (all_defined(all, 3))
    LOOM_RETURN_IF_ERROR(clip_validate(&s[0], &s[1], &s[2]));
  return loom__shape_fn_unchanged(context, user_data);
}

static void clip_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_tensor_t* t = loom_kernel_context_input(ctx, 0);
  loom_status_t status =
      clip_validate(loom_tensor_shape(t),
                    loom_tensor_shape(loom_kernel_context_input(ctx, 1)),
                    loom_tensor_shape(loom_kernel_context_input(ctx, 2)));
  if (status) {
    fail(ctx, status);
    return;
  }
  loom_dtype_t dtype = loom_tensor_dtype(t);
  int slot = loom__elem_slot(dtype);
  loom__ternary_loop_fn_t loop =
      slot >= 0 ? loom__select_loops()->clip[slot] : NULL;
  if (!loop) {
    no_loop(ctx, dtype);
    return;
  }
  loom__elementwise_call_t call = {.num_operands = 3,
                                   .ternary = loop,
                                   .cost_per_element = 1,
                                   .forwardable = 1u};
  loom__elementwise_compute(ctx, &call);
}

//===----------------------------------------------------------------------===//
// AddN
//===----------------------------------------------------------------------===//

static loom_status_t add_n_validate(const loom_shape_t* const* shapes, int n) {
  for (int i = 1; i < n; ++i) {
    if (loom_shape_equal(shapes[i], shapes[0])) continue;
    char a[LOOM_SHAPE_TEXT_SIZE], b[LOOM_SHAPE_TEXT_SIZE];
    loom__format_dims(shapes[0], a);
    loom__format_dims(shapes[i], b);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Inputs to operation AddN of type AddN must "
                            "have the same size and shape.  Input 0: %s != "
                            "input %d: %s",
                            a, i, b);
  }
  return loom_ok_status();
}

// TensorFlow merges the input shapes: known ranks and dims must agree.
static loom_status_t add_n_shape_fn(loom_shape_inference_context_t* context,
                                    void* user_data) {
  (void)user_data;
  int n = loom_shape_inference_context_num_inputs(context);
  loom_shape_t merged = loom_shape_unknown();
  for (int i = 0; i < n; ++i) {
    loom_shape_t s;
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, i, &s));
    if (s.rank < 0) continue;
    if (merged.rank < 0) {
      merged = s;
      continue;
    }
    bool compatible = false;
    loom_shape_t both;
    LOOM_RETURN_IF_ERROR(loom__shape_merge(&merged, &s, &both, &compatible));
    if (compatible) merged = both;
    if (!compatible) {
      char a[LOOM_SHAPE_TEXT_SIZE], b[LOOM_SHAPE_TEXT_SIZE];
      loom_shape_t first;
      LOOM_RETURN_IF_ERROR(
          loom_shape_inference_context_input(context, 0, &first));
      if (loom_shape_is_fully_defined(&first) &&
          loom_shape_is_fully_defined(&s)) {
        const loom_shape_t* pair[2] = {&first, &s};
        loom_status_t status = add_n_validate(pair, 2);
        if (status) return status;
      }
      loom__format_dims(&merged, a);
      loom__format_dims(&s, b);
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "the shape of input %d is incompatible "
                              "with the others: %s vs. %s",
                              i, b, a);
    }
  }
  return loom_shape_inference_context_set_output(context, 0, &merged);
}

typedef struct add_n_job_t {
  const char** in;
  int n;
  char* out;
  size_t size;  // bytes per element
  int64_t total;
  int64_t block;  // elements per unit
  loom__binary_loop_fn_t add;
} add_n_job_t;

// Sums a unit a cache-sized piece at a time: out = in0 + in1, then
// out += in_k, while the piece of out stays in L1.
static void add_n_blocks(void* arg, int64_t begin, int64_t end) {
  const add_n_job_t* job = arg;
  enum { kPiece = 2048 };
  for (int64_t unit = begin; unit < end; ++unit) {
    int64_t first = unit * job->block;
    int64_t last =
        first + job->block < job->total ? first + job->block : job->total;
    for (int64_t i = first; i < last; i += kPiece) {
      int64_t m = last - i < kPiece ? last - i : kPiece;
      size_t offset = (size_t)i * job->size;
      char* out = job->out + offset;
      job->add(job->in[0] + offset, 1, job->in[1] + offset, 1, out, m);
      for (int k = 2; k < job->n; ++k) {
        job->add(out, 1, job->in[k] + offset, 1, out, m);
      }
    }
  }
}

static void add_n_run(loom_kernel_context_t* ctx, add_n_job_t* job,
                      const loom_shape_t* shape, loom_dtype_t dtype);

// AddN's input shapes and data: up to 8 inputs without allocating.
LOOM_DEFINE_SMALL_VECTOR(shape_pointer_vector, const loom_shape_t*, 8)
LOOM_DEFINE_SMALL_VECTOR(data_pointer_vector, const char*, 8)

static void add_n_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  int n = loom_kernel_context_num_inputs(ctx);
  loom_tensor_t* first = loom_kernel_context_input(ctx, 0);
  if (n < 1 || !first) {  // the op def asks for N >= 1
    fail(ctx, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                               "AddN: needs at least one input"));
    return;
  }
  loom_dtype_t dtype = loom_tensor_dtype(first);
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  shape_pointer_vector_t shape_storage;
  data_pointer_vector_t data_storage;
  shape_pointer_vector_initialize(&shape_storage);
  data_pointer_vector_initialize(&data_storage);
  loom_status_t status = shape_pointer_vector_resize_uninitialized(
      &shape_storage, allocator, (size_t)n);
  if (!status) {
    status = data_pointer_vector_resize_uninitialized(&data_storage, allocator,
                                                      (size_t)n);
  }
  if (status) {
    shape_pointer_vector_deinitialize(&shape_storage, allocator);
    fail(ctx, status);
    return;
  }
  const loom_shape_t** shapes = shape_pointer_vector_data(&shape_storage);
  const char** data = data_pointer_vector_data(&data_storage);
  for (int i = 0; i < n; ++i) {
    shapes[i] = loom_tensor_shape(loom_kernel_context_input(ctx, i));
  }
  status = add_n_validate(shapes, n);
  if (status) {
    fail(ctx, status);
  } else if (n == 1) {
    status = loom_kernel_context_set_output(ctx, 0, first);
    if (status) fail(ctx, status);
  } else {
    add_n_job_t job;
    job.in = data;
    job.n = n;
    add_n_run(ctx, &job, shapes[0], dtype);
  }
  shape_pointer_vector_deinitialize(&shape_storage, allocator);
  data_pointer_vector_deinitialize(&data_storage, allocator);
}

static void add_n_run(loom_kernel_context_t* ctx, add_n_job_t* job,
                      const loom_shape_t* shape, loom_dtype_t dtype) {
  int n = job->n;
  job->add = loom__binary_loop(LOOM_BINARY_ADD, dtype);
  if (!job->add) {
    no_loop(ctx, dtype);
    return;
  }
  // Any input may become the output; the runtime picks the first it can.
  int32_t candidates[8];
  int32_t num_candidates = n < 8 ? n : 8;
  for (int32_t i = 0; i < num_candidates; ++i) candidates[i] = i;
  int32_t forwarded = -1;
  loom_tensor_t* z = NULL;
  loom_status_t status = loom_kernel_context_forward_or_allocate(
      ctx, candidates, num_candidates, 0, shape, &forwarded, &z);
  if (status) {
    fail(ctx, status);
    return;
  }
  // A forwarded input goes first: each piece of it is read before the
  // piece is written.
  int k = 0;
  if (forwarded >= 0) {
    job->in[k++] = loom_tensor_data(loom_kernel_context_input(ctx, forwarded));
  }
  for (int i = 0; i < n; ++i) {
    if (i != forwarded) {
      job->in[k++] = loom_tensor_data(loom_kernel_context_input(ctx, i));
    }
  }
  job->out = loom_tensor_data(z);
  job->size = loom_dtype_size(dtype);
  job->total = loom_tensor_num_elements(z);
  if (job->total == 0) return;
  int64_t cost = n;  // one add per input and element
  job->block = kElementwiseMinParallelWork / 2 / cost;
  if (job->block < 4096) job->block = 4096;
  int64_t units = (job->total + job->block - 1) / job->block;
  if (units == 1) {
    add_n_blocks(job, 0, 1);
    return;
  }
  status = loom_thread_pool_parallel_for(
      loom_host_context_thread_pool(loom_kernel_context_host(ctx)), units,
      job->block * cost, add_n_blocks, job);
  if (status) fail(ctx, status);
}

//===----------------------------------------------------------------------===//
// BiasAdd and BiasAddGrad
//===----------------------------------------------------------------------===//

// Whether data_format is NCHW (the op def allows only NHWC and NCHW).
static bool is_nchw(const loom_op_attrs_t* attrs) {
  loom_attr_value_t value;
  return loom_op_attrs_get(attrs, "data_format", &value) &&
         value.kind == LOOM_ATTR_KIND_STRING && value.u.string.size == 4 &&
         memcmp(value.u.string.data, "NCHW", 4) == 0;
}

// The kernels read data_format once, when constructed: the instance is
// one of these two addresses.
static const bool kNchw[2] = {false, true};

static void* bias_add_create(loom_kernel_construction_t* ctx) {
  return (void*)&kNchw[is_nchw(loom_kernel_construction_attrs(ctx))];
}

static bool kernel_nchw(const void* kernel) {
  return *(const bool*)kernel;
}

static loom_status_t rank_at_least_2(const loom_shape_t* s) {
  if (s->rank >= 2) return loom_ok_status();
  char a[LOOM_SHAPE_TEXT_SIZE];
  loom__format_dims(s, a);
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Input tensor must be at least 2D: %s", a);
}

static loom_status_t bias_add_validate(const loom_shape_t* value,
                                       const loom_shape_t* bias, bool nchw) {
  LOOM_RETURN_IF_ERROR(rank_at_least_2(value));
  int32_t channel = nchw ? 1 : value->rank - 1;
  if (LOOM_LIKELY(bias->rank == 1 && bias->dims[0] == value->dims[channel])) {
    return loom_ok_status();  // the shapes are formatted for errors only
  }
  char a[LOOM_SHAPE_TEXT_SIZE], b[LOOM_SHAPE_TEXT_SIZE];
  loom__format_dims(bias, a);
  loom__format_dims(value, b);
  if (bias->rank != 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Biases must be 1D: %s", a);
  }
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Must provide as many biases as the %s dimension "
                          "of the input tensor: %s vs. %s",
                          nchw ? "channel" : "last", a, b);
}

static loom_status_t bias_add_shape_fn(loom_shape_inference_context_t* context,
                                       void* user_data) {
  loom_shape_t s[2];
  LOOM_RETURN_IF_ERROR(read_inputs(context, s, 2));
  const loom_shape_t* all[2] = {&s[0], &s[1]};
  if (all_defined(all, 2)) {
    LOOM_RETURN_IF_ERROR(bias_add_validate(
        &s[0], &s[1], is_nchw(loom_shape_inference_context_attrs(context))));
  }
  return loom__shape_fn_unchanged(context, user_data);
}

static void bias_add_compute(void* kernel, loom_kernel_context_t* ctx) {
  loom_tensor_t* value = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* bias = loom_kernel_context_input(ctx, 1);
  const loom_shape_t* vs = loom_tensor_shape(value);
  bool nchw = kernel_nchw(kernel);
  loom_status_t status = bias_add_validate(vs, loom_tensor_shape(bias), nchw);
  if (status) {
    fail(ctx, status);
    return;
  }
  loom_dtype_t dtype = loom_tensor_dtype(value);
  loom__binary_loop_fn_t add = loom__binary_loop(LOOM_BINARY_ADD, dtype);
  if (!add) {
    no_loop(ctx, dtype);
    return;
  }
  // NCHW reads the bias [C] as [C, 1, ..., 1]: broadcast over the spatial
  // dims, never copied.
  loom_shape_t bias_shape = *loom_tensor_shape(bias);
  if (nchw) {
    bias_shape.rank = vs->rank - 1;
    for (int32_t i = 1; i < bias_shape.rank; ++i) bias_shape.dims[i] = 1;
  }
  loom__elementwise_call_t call = {
      .num_operands = 2,
      .shapes = {NULL, &bias_shape},
      .binary = add,
      .binary_streaming = loom__binary_stream_loop(LOOM_BINARY_ADD, dtype),
      .cost_per_element = 1,
      .forwardable = 1u};
  loom__elementwise_compute(ctx, &call);
}

static loom_status_t bias_add_grad_shape_fn(
    loom_shape_inference_context_t* context, void* user_data) {
  (void)user_data;
  loom_shape_t s;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &s));
  loom_shape_t out = loom_shape_unknown();
  if (s.rank >= 0) {
    LOOM_RETURN_IF_ERROR(rank_at_least_2(&s));
    bool nchw = is_nchw(loom_shape_inference_context_attrs(context));
    out.rank = 1;
    out.dims[0] = s.dims[nchw ? 1 : s.rank - 1];
  }
  return loom_shape_inference_context_set_output(context, 0, &out);
}

// The input viewed as [outer, channels, inner]: NHWC has inner == 1, NCHW
// outer == the batch. Each worker sums into its own accumulator row.
//
// With inner == 1 the rows are short when there are few channels, so they
// are summed `tile` rows at a time as one long row (a worker's accumulator
// holds tile * channels sums, folded at the end).
enum { kBiasGradUnit = 16384 };  // elements per unit of parallel work

typedef struct bias_grad_job_t {
  const char* in;
  size_t size;      // bytes per input element
  size_t acc_size;  // bytes per accumulator
  int64_t outer, channels, inner;
  int64_t tile;            // inner == 1: rows summed as one
  int64_t tiles_per_unit;  // inner == 1
  int64_t chunks, chunk;   // inner > 1: pieces per (outer, channel) run
  size_t row_bytes;        // one worker's accumulators
  char* scratch;
  const loom__select_loops_t* loops;
  int slot;
} bias_grad_job_t;

static void bias_grad_blocks(void* arg, int64_t begin, int64_t end,
                             int worker) {
  const bias_grad_job_t* job = arg;
  char* acc = job->scratch + (size_t)worker * job->row_bytes;
  if (job->inner == 1) {
    int64_t width = job->tile * job->channels;
    int64_t tiles = job->outer / job->tile;
    for (int64_t unit = begin; unit < end; ++unit) {
      int64_t first = unit * job->tiles_per_unit;
      int64_t last = first + job->tiles_per_unit;
      if (last > tiles) last = tiles;
      for (int64_t t = first; t < last; ++t) {
        job->loops->accumulate[job->slot](
            acc, job->in + (size_t)(t * width) * job->size, width);
      }
      // The rows after the last whole tile go with the last unit.
      if (last == tiles) {
        for (int64_t r = tiles * job->tile; r < job->outer; ++r) {
          job->loops->accumulate[job->slot](
              acc, job->in + (size_t)(r * job->channels) * job->size,
              job->channels);
        }
      }
    }
    return;
  }
  for (int64_t unit = begin; unit < end; ++unit) {
    int64_t run = unit / job->chunks;  // (outer, channel) index
    int64_t start = (unit % job->chunks) * job->chunk;
    int64_t m =
        job->inner - start < job->chunk ? job->inner - start : job->chunk;
    int64_t channel = run % job->channels;
    job->loops->sum[job->slot](
        job->in + (size_t)(run * job->inner + start) * job->size, m,
        acc + (size_t)channel * job->acc_size);
  }
}

static void bias_add_grad_compute(void* kernel, loom_kernel_context_t* ctx) {
  loom_tensor_t* in = loom_kernel_context_input(ctx, 0);
  const loom_shape_t* s = loom_tensor_shape(in);
  loom_status_t status = rank_at_least_2(s);
  if (status) {
    fail(ctx, status);
    return;
  }
  bool nchw = kernel_nchw(kernel);
  loom_dtype_t dtype = loom_tensor_dtype(in);
  bias_grad_job_t job;
  job.slot = loom__elem_slot(dtype);
  job.loops = loom__select_loops();
  if (job.slot < 0 || !job.loops->accumulate[job.slot]) {
    no_loop(ctx, dtype);
    return;
  }
  int32_t channel_dim = nchw ? 1 : s->rank - 1;
  job.channels = s->dims[channel_dim];
  // An empty input sums to zeros, planned as [0, channels]: the other dims
  // of an empty tensor need not multiply within int64. A tensor holding
  // elements has products of dims that fit.
  job.outer = 0;
  job.inner = 1;
  if (loom_tensor_num_elements(in) > 0 &&
      (!loom__size_product(s->dims, channel_dim, &job.outer) ||
       !loom__size_product(s->dims + channel_dim + 1, s->rank - channel_dim - 1,
                           &job.inner))) {
    job.outer = 0;
    job.inner = 1;
  }
  loom_shape_t out_shape = loom_shape_scalar();
  out_shape.rank = 1;
  out_shape.dims[0] = job.channels;
  loom_tensor_t* z = NULL;
  status = loom_kernel_context_allocate_output(ctx, 0, &out_shape, &z);
  if (status) {
    fail(ctx, status);
    return;
  }
  if (job.channels == 0) return;
  job.in = loom_tensor_data(in);
  job.size = loom_dtype_size(dtype);
  job.acc_size = loom__accumulator_size(dtype);
  int64_t total = job.outer * job.channels * job.inner;
  int64_t units;
  if (job.inner == 1) {
    job.tile = job.channels >= 1024 ? 1 : 1024 / job.channels;
    if (job.tile > job.outer) job.tile = job.outer > 0 ? job.outer : 1;
    int64_t tiles = job.outer / job.tile;
    job.tiles_per_unit = kBiasGradUnit / (job.tile * job.channels) + 1;
    units = (tiles + job.tiles_per_unit - 1) / job.tiles_per_unit;
    job.chunks = job.chunk = 1;
  } else {
    job.tile = 1;
    job.chunks = (job.inner + kBiasGradUnit - 1) / kBiasGradUnit;
    job.chunk = (job.inner + job.chunks - 1) / job.chunks;
    units = job.outer * job.channels * job.chunks;
  }
  loom_thread_pool_t* pool =
      loom_host_context_thread_pool(loom_kernel_context_host(ctx));
  job.row_bytes = (size_t)(job.tile * job.channels) * job.acc_size;
  // Small work (a bias over a small batch) runs here, its accumulators on
  // the stack: no scratch allocation, no pool round trip.
  _Alignas(64) char stack_scratch[8192];
  bool serial = (units <= 1 || total <= kBiasGradUnit) &&
                job.row_bytes <= sizeof(stack_scratch);
  int workers = serial ? 1 : loom_thread_pool_num_threads(pool) + 1;
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  if (serial) {
    job.scratch = stack_scratch;
    memset(job.scratch, 0, job.row_bytes);
  } else {
    status = loom_allocator_calloc(allocator, job.row_bytes * (size_t)workers,
                                   (void**)&job.scratch);
    if (status) {
      fail(ctx, status);
      return;
    }
  }
  if (total > 0 && units > 0) {
    if (serial) {
      bias_grad_blocks(&job, 0, units, 0);
    } else {
      status = loom_thread_pool_parallel_for_with_worker_id(
          pool, units, total / units, bias_grad_blocks, &job);
    }
  }
  if (!status) {
    // Fold every worker's tile rows into the first row, then narrow it.
    int combine = (dtype == LOOM_DTYPE_HALF || dtype == LOOM_DTYPE_BFLOAT16)
                      ? LOOM_ELEM_F32
                      : job.slot;
    // Pairwise: the back half of the rows onto the front half, halving
    // (a few long loops instead of one short loop per row).
    size_t segment = (size_t)job.channels * job.acc_size;
    int64_t count = (int64_t)workers * job.tile;
    while (count > 1) {
      int64_t half = count / 2, keep = count - half;
      job.loops->accumulate[combine](job.scratch,
                                     job.scratch + (size_t)keep * segment,
                                     half * job.channels);
      count = keep;
    }
    job.loops->narrow[job.slot](job.scratch, loom_tensor_data(z), job.channels);
  }
  if (!serial) loom_allocator_free(allocator, job.scratch);
  if (status) fail(ctx, status);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

#define DATA_FORMAT "data_format: {'NHWC', 'NCHW'} = 'NHWC'"

static const loom__builtin_op_t kOps[] = {
    {.name = "Select",
     .inputs = {"condition: bool", "t: T", "e: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type"},
     .shape_fn = select_shape_fn},
    {.name = "SelectV2",
     .inputs = {"condition: bool", "t: T", "e: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type"},
     .shape_fn = select_v2_shape_fn},
    {.name = "AddN",
     .inputs = {"inputs: N * T"},
     .outputs = {"sum: T"},
     .attrs = {"N: int >= 1", "T: numbertype"},
     .shape_fn = add_n_shape_fn,
     .is_commutative = true},
    {.name = "ClipByValue",
     .inputs = {"t: T", "clip_value_min: T", "clip_value_max: T"},
     .outputs = {"output: T"},
     .attrs = {"T: numbertype"},
     .shape_fn = clip_shape_fn},
    {.name = "BiasAdd",
     .inputs = {"value: T", "bias: T"},
     .outputs = {"output: T"},
     .attrs = {"T: numbertype", DATA_FORMAT},
     .shape_fn = bias_add_shape_fn},
    {.name = "BiasAddV1",  // the first version: NHWC only
     .inputs = {"value: T", "bias: T"},
     .outputs = {"output: T"},
     .attrs = {"T: numbertype"},
     .shape_fn = bias_add_shape_fn},
    {.name = "BiasAddGrad",
     .inputs = {"out_backprop: T"},
     .outputs = {"output: T"},
     .attrs = {"T: numbertype", DATA_FORMAT},
     .shape_fn = bias_add_grad_shape_fn},
};

#define REAL_TYPES                                                           \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16, \
      LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, LOOM_DTYPE_UINT8, LOOM_DTYPE_INT8, \
      LOOM_DTYPE_INT16, LOOM_DTYPE_UINT16, LOOM_DTYPE_UINT32,                \
      LOOM_DTYPE_UINT64

// Element-wise kernels: their shapes are read through loom_shape_dims and
// their broadcasts folded (kernels/broadcast.h), so they take any rank.
#define ANY_RANK_KERNEL(op, fn, ...)                          \
  {                                                           \
    .op_name = op, .compute = fn##_compute, .any_rank = true, \
    .type_attr = "T", .types = {                              \
      __VA_ARGS__                                             \
    }                                                         \
  }
// Kernels constructed with their data_format.
#define FORMAT_KERNEL(op, fn, ...)                                     \
  {                                                                    \
    .op_name = op, .compute = fn##_compute, .create = bias_add_create, \
    .type_attr = "T", .types = {                                       \
      __VA_ARGS__                                                      \
    }                                                                  \
  }

static const loom__builtin_kernel_t kKernels[] = {
    ANY_RANK_KERNEL("Select", select, REAL_TYPES, LOOM_DTYPE_BOOL),
    ANY_RANK_KERNEL("SelectV2", select_v2, REAL_TYPES, LOOM_DTYPE_BOOL),
    ANY_RANK_KERNEL("AddN", add_n, REAL_TYPES),
    ANY_RANK_KERNEL("ClipByValue", clip, REAL_TYPES),
    FORMAT_KERNEL("BiasAdd", bias_add, REAL_TYPES),
    FORMAT_KERNEL("BiasAddV1", bias_add, REAL_TYPES),
    FORMAT_KERNEL("BiasAddGrad", bias_add_grad, REAL_TYPES),
};

loom_status_t loom__register_select_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
