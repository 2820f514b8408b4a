// CollectiveReduceV2, CollectiveGatherV2, CollectiveReduceScatterV2,
// CollectiveAllToAllV2 and CollectiveBcastSendV2 / RecvV2 (TensorFlow's op
// definitions): every participant of a group brings a tensor of the same
// dtype and shape and gets their reduction (merge_op Min, Max, Mul or Add,
// then final_op Id or Div by the group size), their concatenation along
// dim 0 in rank order, its part of the reduction (dim 0 cut into
// group_size parts, part `rank`), part `rank` of every participant's input
// in rank order, or the one sender's tensor. The kernel reads its keys and
// hands the work to the collective backend (src/collective), which meets the
// participants: the components of a parallel handler, threads of this process,
// or MPI ranks.

#include <stdio.h>
#include <string.h>

#include "collective/collective.h"
#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"
#include "tensor/checked_size.h"

static const char kOp[] = "CollectiveReduceV2";
static const char kGatherOp[] = "CollectiveGatherV2";

// A scalar int32 input, named for messages.
static loom_status_t scalar_key(loom_kernel_context_t* ctx, const char* op,
                                int32_t index, const char* name, int32_t* out) {
  loom_tensor_t* tensor = loom_kernel_context_input(ctx, index);
  if (!tensor || loom_tensor_dtype(tensor) != LOOM_DTYPE_INT32 ||
      loom_tensor_num_elements(tensor) != 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: %s must be a scalar int32", op, name);
  }
  *out = *(const int32_t*)loom_tensor_data(tensor);
  return loom_ok_status();
}

static bool string_attr(const loom_op_attrs_t* attrs, const char* name,
                        const char* expected) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(attrs, name, &value) ||
      value.kind != LOOM_ATTR_KIND_STRING) {
    return false;
  }
  return value.u.string.size == strlen(expected) &&
         memcmp(value.u.string.data, expected, value.u.string.size) == 0;
}

// The keys, group size and timeout every collective op has.
// `first` is the index of group_size (group_key, instance_key follow).
static loom_status_t read_common(loom_kernel_context_t* ctx, const char* op,
                                 int32_t first,
                                 loom__collective_reduce_t* request) {
  const loom_op_attrs_t* attrs = loom_kernel_context_attrs(ctx);
  *request = (loom__collective_reduce_t){
      .op_name = op, .device = loom_kernel_context_device(ctx)};
  if (first > 0) request->input = loom_kernel_context_input(ctx, 0);
  LOOM_RETURN_IF_ERROR(
      scalar_key(ctx, op, first, "group_size", &request->group_size));
  LOOM_RETURN_IF_ERROR(
      scalar_key(ctx, op, first + 1, "group_key", &request->group_key));
  LOOM_RETURN_IF_ERROR(
      scalar_key(ctx, op, first + 2, "instance_key", &request->instance_key));
  if (request->group_size < 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s (group_key %d, instance_key %d): group_size "
                            "must be at least 1, got %d",
                            op, (int)request->group_key,
                            (int)request->instance_key,
                            (int)request->group_size);
  }
  loom_attr_value_t timeout;
  if (loom_op_attrs_get(attrs, "timeout_seconds", &timeout)) {
    request->timeout_seconds = timeout.kind == LOOM_ATTR_KIND_F64
                                   ? timeout.u.f64
                                   : (double)timeout.u.f32;
  }
  return loom_ok_status();
}

static loom_status_t read_request(loom_kernel_context_t* ctx, const char* op,
                                  loom__collective_reduce_t* request) {
  const loom_op_attrs_t* attrs = loom_kernel_context_attrs(ctx);
  LOOM_RETURN_IF_ERROR(read_common(ctx, op, 1, request));
  static const char* const kMerges[] = {"Min", "Max", "Mul", "Add"};
  bool found = false;
  for (int i = 0; i < 4 && !found; ++i) {
    if (string_attr(attrs, "merge_op", kMerges[i])) {
      request->merge = (loom__collective_merge_t)i;
      found = true;
    }
  }
  if (!found) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: merge_op must be one of Min, Max, Mul, Add",
                            op);
  }
  if (string_attr(attrs, "final_op", "Div")) {
    request->final_op = LOOM__COLLECTIVE_FINAL_DIV;
  } else if (string_attr(attrs, "final_op", "Id")) {
    request->final_op = LOOM__COLLECTIVE_FINAL_ID;
  } else {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: final_op must be Id or Div", op);
  }
  return loom_ok_status();
}

// What one collective kernel does beyond the common steps (read the keys,
// allocate the output, run on the backend, fail on error): its op name,
// whether it reads merge_op and final_op, where its keys start, its
// output's shape, and the backend call.
typedef struct collective_kernel_t {
  const char* op;
  bool reduces;       // reads merge_op and final_op
  int32_t first_key;  // input index of group_size
  loom_status_t (*output_shape)(loom_kernel_context_t* ctx,
                                const loom__collective_reduce_t* request,
                                loom_shape_t* shape);
  loom_status_t (*run)(const loom__collective_reduce_t* request,
                       loom_tensor_t* output);
} collective_kernel_t;

static void compute_collective(loom_kernel_context_t* ctx,
                               const collective_kernel_t* kernel) {
  loom__collective_reduce_t request;
  loom_status_t status =
      kernel->reduces
          ? read_request(ctx, kernel->op, &request)
          : read_common(ctx, kernel->op, kernel->first_key, &request);
  loom_shape_t shape;
  loom_tensor_t* output = NULL;
  if (!status) status = kernel->output_shape(ctx, &request, &shape);
  if (!status) {
    status = loom_kernel_context_allocate_output(ctx, 0, &shape, &output);
  }
  if (!status) status = kernel->run(&request, output);
  if (status) loom_kernel_context_fail(ctx, status);
}

// The output has the input's shape.
static loom_status_t input_shape(loom_kernel_context_t* ctx,
                                 const loom__collective_reduce_t* request,
                                 loom_shape_t* shape) {
  (void)ctx;
  *shape = *loom_tensor_shape(request->input);
  return loom_ok_status();
}

static void collective_reduce_compute(void* kernel,
                                      loom_kernel_context_t* ctx) {
  (void)kernel;
  static const collective_kernel_t kReduce = {
      .op = kOp,
      .reduces = true,
      .first_key = 1,
      .output_shape = input_shape,
      .run = loom__collective_all_reduce};
  compute_collective(ctx, &kReduce);
}

// The output: the input's shape with dim 0 group_size times as long.
static loom_status_t gather_shape(loom_kernel_context_t* ctx,
                                  const loom__collective_reduce_t* request,
                                  loom_shape_t* shape) {
  (void)ctx;
  const loom_shape_t* in = loom_tensor_shape(request->input);
  if (in->rank < 1 || in->rank > LOOM_MAX_RANK) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s (group_key %d, instance_key %d): input must have rank 1 to %d "
        "(it is concatenated along dim 0), got rank %d",
        kGatherOp, (int)request->group_key, (int)request->instance_key,
        LOOM_MAX_RANK, (int)in->rank);
  }
  *shape = *in;
  if (!loom__size_mul(in->dims[0], request->group_size, &shape->dims[0])) {
    return loom__size_overflow_error(
        kGatherOp, "output dim 0", "(input dim 0 %lld times group_size %d)",
        (long long)in->dims[0], (int)request->group_size);
  }
  return loom_ok_status();
}

static void collective_gather_compute(void* kernel,
                                      loom_kernel_context_t* ctx) {
  (void)kernel;
  static const collective_kernel_t kGather = {
      .op = kGatherOp,
      .first_key = 1,
      .output_shape = gather_shape,
      .run = loom__collective_all_gather};
  compute_collective(ctx, &kGather);
}

static const char kReduceScatterOp[] = "CollectiveReduceScatterV2";
static const char kAllToAllOp[] = "CollectiveAllToAllV2";

// The input of a reduce-scatter or all-to-all: rank >= 1, dim 0 a
// multiple of group_size (its parts go to the participants).
static loom_status_t check_parts(const loom__collective_reduce_t* request) {
  const loom_shape_t* in = loom_tensor_shape(request->input);
  if (in->rank < 1 || in->dims[0] % request->group_size != 0) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s (group_key %d, instance_key %d): input must have rank >= 1 and "
        "dim 0 a multiple of group_size %d (it is cut into that many parts), "
        "got rank %d, dim 0 %lld",
        request->op_name, (int)request->group_key, (int)request->instance_key,
        (int)request->group_size, (int)in->rank,
        in->rank ? (long long)in->dims[0] : 0LL);
  }
  return loom_ok_status();
}

// The output: the input's shape with dim 0 divided by group_size.
static loom_status_t scatter_shape(loom_kernel_context_t* ctx,
                                   const loom__collective_reduce_t* request,
                                   loom_shape_t* shape) {
  (void)ctx;
  LOOM_RETURN_IF_ERROR(check_parts(request));
  *shape = *loom_tensor_shape(request->input);
  shape->dims[0] /= request->group_size;
  return loom_ok_status();
}

static void collective_reduce_scatter_compute(void* kernel,
                                              loom_kernel_context_t* ctx) {
  (void)kernel;
  static const collective_kernel_t kReduceScatter = {
      .op = kReduceScatterOp,
      .reduces = true,
      .first_key = 1,
      .output_shape = scatter_shape,
      .run = loom__collective_reduce_scatter};
  compute_collective(ctx, &kReduceScatter);
}

// The output has the input's shape.
static loom_status_t all_to_all_shape(loom_kernel_context_t* ctx,
                                      const loom__collective_reduce_t* request,
                                      loom_shape_t* shape) {
  LOOM_RETURN_IF_ERROR(check_parts(request));
  return input_shape(ctx, request, shape);
}

static void collective_all_to_all_compute(void* kernel,
                                          loom_kernel_context_t* ctx) {
  (void)kernel;
  static const collective_kernel_t kAllToAll = {
      .op = kAllToAllOp,
      .first_key = 1,
      .output_shape = all_to_all_shape,
      .run = loom__collective_all_to_all};
  compute_collective(ctx, &kAllToAll);
}

static const char kSendOp[] = "CollectiveBcastSendV2";
static const char kRecvOp[] = "CollectiveBcastRecvV2";

// The sender's output is its input, sent to the others.
static loom_status_t run_send(const loom__collective_reduce_t* request,
                              loom_tensor_t* output) {
  memcpy(loom_tensor_data(output), loom_tensor_data(request->input),
         loom_tensor_byte_size(output));
  return loom__collective_broadcast(request, true, output);
}

static void collective_bcast_send_compute(void* kernel,
                                          loom_kernel_context_t* ctx) {
  (void)kernel;
  static const collective_kernel_t kSend = {.op = kSendOp,
                                            .first_key = 1,
                                            .output_shape = input_shape,
                                            .run = run_send};
  compute_collective(ctx, &kSend);
}

// A receiver's output has the shape its `shape` input names.
static loom_status_t recv_shape(loom_kernel_context_t* ctx,
                                const loom__collective_reduce_t* request,
                                loom_shape_t* shape) {
  (void)request;
  loom_tensor_t* dims = loom_kernel_context_input(ctx, 3);
  int64_t rank = dims ? loom_tensor_num_elements(dims) : -1;
  loom_dtype_t dtype = dims ? loom_tensor_dtype(dims) : LOOM_DTYPE_INVALID;
  if (!dims || loom_tensor_shape(dims)->rank != 1 || rank > LOOM_MAX_RANK ||
      (dtype != LOOM_DTYPE_INT32 && dtype != LOOM_DTYPE_INT64)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: shape must be a vector of at most %d "
                            "int32 or int64 dims",
                            kRecvOp, LOOM_MAX_RANK);
  }
  int64_t values[LOOM_MAX_RANK];
  for (int64_t i = 0; i < rank; ++i) {
    values[i] = dtype == LOOM_DTYPE_INT32
                    ? ((const int32_t*)loom_tensor_data(dims))[i]
                    : ((const int64_t*)loom_tensor_data(dims))[i];
    if (values[i] < 0) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: shape[%lld] is %lld: dims must be >= 0",
                              kRecvOp, (long long)i, (long long)values[i]);
    }
  }
  return loom_shape_initialize(shape, values, (int)rank);
}

static loom_status_t run_recv(const loom__collective_reduce_t* request,
                              loom_tensor_t* output) {
  loom__collective_reduce_t received = *request;
  received.input = output;  // its dtype and shape, for the header check
  return loom__collective_broadcast(&received, false, output);
}

static void collective_bcast_recv_compute(void* kernel,
                                          loom_kernel_context_t* ctx) {
  (void)kernel;
  static const collective_kernel_t kRecv = {.op = kRecvOp,
                                            .first_key = 0,
                                            .output_shape = recv_shape,
                                            .run = run_recv};
  compute_collective(ctx, &kRecv);
}

static const loom__builtin_op_t kOps[] = {
    {.name = "CollectiveReduceV2",
     .inputs = {"input: T", "group_size: int32", "group_key: int32",
                "instance_key: int32",
                "ordering_token: Nordering_token * "
                "resource"},
     .outputs = {"data: T"},
     .attrs = {"T: {bfloat16, float, half, double, int32, int64}",
               "merge_op: {'Min', 'Max', 'Mul', 'Add'}",
               "final_op: {'Id', 'Div'}", "communication_hint: string = 'auto'",
               "timeout_seconds: float = 0", "is_stateless: bool = false",
               "Nordering_token: int >= 0 = 0",
               "max_subdivs_per_device: int = -1"},
     .shape_fn = loom__shape_fn_unchanged,
     .is_stateful = true},
    // Its output's dim 0 depends on group_size, a tensor: no shape
    // function.
    {.name = "CollectiveGatherV2",
     .inputs = {"input: T", "group_size: int32", "group_key: int32",
                "instance_key: int32",
                "ordering_token: Nordering_token * resource"},
     .outputs = {"data: T"},
     .attrs = {"T: {float, half, double, int32, int64}",
               "communication_hint: string = 'auto'",
               "timeout_seconds: float = 0", "is_stateless: bool = false",
               "Nordering_token: int >= 0 = 0"},
     .is_stateful = true},
    {.name = "CollectiveBcastSendV2",
     .inputs = {"input: T", "group_size: int32", "group_key: int32",
                "instance_key: int32"},
     .outputs = {"data: T"},
     .attrs = {"T: {bool, float, half, double, int32, int64}",
               "communication_hint: string = 'auto'",
               "timeout_seconds: float = 0"},
     .shape_fn = loom__shape_fn_unchanged,
     .is_stateful = true},
    {.name = "CollectiveBcastRecvV2",
     .inputs = {"group_size: int32", "group_key: int32", "instance_key: int32",
                "shape: Tshape"},
     .outputs = {"data: T"},
     .attrs = {"T: {bool, float, half, double, int32, int64}",
               "Tshape: {int32, int64} = DT_INT32",
               "communication_hint: string = 'auto'",
               "timeout_seconds: float = 0"},
     .is_stateful = true},
    // Its output's dim 0 depends on group_size: no shape function.
    {.name = "CollectiveReduceScatterV2",
     .inputs = {"input: T", "group_size: int32", "group_key: int32",
                "instance_key: int32",
                "ordering_token: Nordering_token * resource"},
     .outputs = {"data: T"},
     .attrs = {"T: {bfloat16, float, half, double, int32, int64}",
               "merge_op: {'Min', 'Max', 'Mul', 'Add'}",
               "final_op: {'Id', 'Div'}", "communication_hint: string = 'auto'",
               "timeout_seconds: float = 0", "is_stateless: bool = false",
               "Nordering_token: int >= 0 = 0",
               "max_subdivs_per_device: int = -1"},
     .is_stateful = true},
    {.name = "CollectiveAllToAllV2",
     .inputs = {"input: T", "group_size: int32", "group_key: int32",
                "instance_key: int32",
                "ordering_token: Nordering_token * resource"},
     .outputs = {"data: T"},
     .attrs = {"T: {bfloat16, float, half, double, int32, int64}",
               "communication_hint: string = 'auto'",
               "timeout_seconds: float = 0", "is_stateless: bool = false",
               "Nordering_token: int >= 0 = 0"},
     .shape_fn = loom__shape_fn_unchanged,
     .is_stateful = true},
    // The parallel handler's own ops: only that handler runs them.
    {.name = "ParallelPack",
     .inputs = {"values: N * T"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "N: int >= 1"},
     .shape_fn = loom__shape_fn_unchanged},
    {.name = "ParallelUnpack",
     .inputs = {"input: T"},
     .outputs = {"output: num_components * T"},
     .attrs = {"T: type", "num_components: int >= 1"}},
};

// Every collective takes the same dtypes and keeps its group and instance
// keys in host memory.
// clang-format off
#define COLLECTIVE_KERNEL(op, compute_fn, extra_host_input)               \
  {.op_name = op,                                                         \
   .compute = compute_fn,                                                 \
   .type_attr = "T",                                                      \
   .types = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT32,        \
             LOOM_DTYPE_INT64},                                           \
   .host_memory = {"group_size", "group_key", "instance_key",             \
                   extra_host_input}}
// clang-format on

static const loom__builtin_kernel_t kKernels[] = {
    COLLECTIVE_KERNEL("CollectiveReduceV2", collective_reduce_compute, NULL),
    COLLECTIVE_KERNEL("CollectiveGatherV2", collective_gather_compute, NULL),
    COLLECTIVE_KERNEL("CollectiveReduceScatterV2",
                      collective_reduce_scatter_compute, NULL),
    COLLECTIVE_KERNEL("CollectiveAllToAllV2", collective_all_to_all_compute,
                      NULL),
    COLLECTIVE_KERNEL("CollectiveBcastSendV2", collective_bcast_send_compute,
                      NULL),
    COLLECTIVE_KERNEL("CollectiveBcastRecvV2", collective_bcast_recv_compute,
                      "shape"),
};

loom_status_t loom__register_collective_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
