// CollectiveReduceV2 (TensorFlow's op definition): every participant of a
// group brings a tensor of the same dtype and shape and gets their
// reduction (merge_op Min, Max, Mul or Add, then final_op Id or Div by the
// group size). The kernel reads its keys and hands the reduction to the
// collective backend (src/collective), which meets the participants: the
// components of a parallel handler, or threads of this process.

#include <stdio.h>
#include <string.h>

#include "collective/collective.h"
#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"

static const char kOp[] = "CollectiveReduceV2";

// A scalar int32 input, named for messages.
static loom_status_t scalar_key(loom_kernel_context_t* ctx, int32_t index,
                                const char* name, int32_t* out) {
  loom_tensor_t* tensor = loom_kernel_context_input(ctx, index);
  if (!tensor || loom_tensor_dtype(tensor) != LOOM_DTYPE_INT32 ||
      loom_tensor_num_elements(tensor) != 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: %s must be a scalar int32", kOp, name);
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

static loom_status_t read_request(loom_kernel_context_t* ctx,
                                  loom__collective_reduce_t* request) {
  const loom_op_attrs_t* attrs = loom_kernel_context_attrs(ctx);
  request->op_name = kOp;
  request->input = loom_kernel_context_input(ctx, 0);
  LOOM_RETURN_IF_ERROR(scalar_key(ctx, 1, "group_size", &request->group_size));
  LOOM_RETURN_IF_ERROR(scalar_key(ctx, 2, "group_key", &request->group_key));
  LOOM_RETURN_IF_ERROR(
      scalar_key(ctx, 3, "instance_key", &request->instance_key));
  if (request->group_size < 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s (group_key %d, instance_key %d): group_size "
                            "must be at least 1, got %d",
                            kOp, (int)request->group_key,
                            (int)request->instance_key,
                            (int)request->group_size);
  }
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
                            kOp);
  }
  if (string_attr(attrs, "final_op", "Div")) {
    request->final_op = LOOM__COLLECTIVE_FINAL_DIV;
  } else if (string_attr(attrs, "final_op", "Id")) {
    request->final_op = LOOM__COLLECTIVE_FINAL_ID;
  } else {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: final_op must be Id or Div", kOp);
  }
  loom_attr_value_t timeout;
  request->timeout_seconds = 0;
  if (loom_op_attrs_get(attrs, "timeout_seconds", &timeout)) {
    request->timeout_seconds = timeout.kind == LOOM_ATTR_KIND_F64
                                   ? timeout.u.f64
                                   : (double)timeout.u.f32;
  }
  return loom_ok_status();
}

static void collective_reduce_compute(void* kernel,
                                      loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__collective_reduce_t request;
  loom_status_t status = read_request(ctx, &request);
  loom_tensor_t* output = NULL;
  if (!status) {
    status = loom_kernel_context_allocate_output(
        ctx, 0, loom_tensor_shape(request.input), &output);
  }
  if (!status) status = loom__collective_all_reduce(&request, output);
  if (status) loom_kernel_context_fail(ctx, status);
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

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "CollectiveReduceV2",
     .compute = collective_reduce_compute,
     .type_attr = "T",
     .types = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT32,
               LOOM_DTYPE_INT64},
     .host_memory = {"group_size", "group_key", "instance_key"}},
};

loom_status_t loom__register_collective_ops(void) {
  LOOM_RETURN_IF_ERROR(loom__register_builtin_ops(kOps, 3));
  return loom__register_builtin_kernels(kKernels, 1);
}
