// The cpu handler's memo of an eager op (corert_internal.h): what an inline
// run of a kernel's direct entry found, and the run that starts from it.

#include "corert/cpu_op_handler_internal.h"
#include "host/async_value_internal.h"
#include "loom/host_context.h"

void loom__cpu_memo_fill(loom__cpu_memo_t* memo,
                         const loom_prepared_op_t* prepared,
                         const cpu_kernel_spec_t* spec,
                         const loom_tensor_metadata_t* inputs,
                         int32_t num_inputs, int64_t elements,
                         const loom_tensor_metadata_t* result) {
  memo->prepared = prepared;
  memo->spec = spec;
  memo->num_inputs = num_inputs;
  memo->elements = elements;
  for (int32_t i = 0; i < num_inputs; ++i) memo->inputs[i] = inputs[i];
  memo->result = *result;
  memo->result_elements = loom_shape_num_elements(&result->shape);
}

static inline bool same_metadata(const loom_tensor_metadata_t* a,
                                 const loom_tensor_metadata_t* b) {
  if (a->dtype != b->dtype || a->shape.rank != b->shape.rank) return false;
  // Spilled dims are interned: equal dims are the same pool entry.
  if (a->shape.rank > LOOM_MAX_RANK)
    return a->shape.spilled == b->shape.spilled;
  for (int32_t i = 0; i < a->shape.rank; ++i) {
    if (a->shape.dims[i] != b->shape.dims[i]) return false;
  }
  return true;
}

bool loom__cpu_execute_memo(const loom__cpu_memo_t* memo,
                            loom_tensor_handle_t* const* inputs,
                            const loom_op_attrs_t* attrs,
                            loom_tensor_handle_t** out_result) {
  loom_op_handler_t* handler = memo->prepared->handler;
  loom_runtime_t* runtime = handler->runtime;
  const cpu_kernel_spec_t* spec = memo->spec;
  int32_t n = memo->num_inputs;
  int64_t limit = runtime->inline_element_limit;
  if ((!runtime->synchronous && (limit < 0 || memo->elements > limit)) ||
      loom_host_context_is_cancelled(runtime->host)) {
    return false;
  }
  // The spec matched the remembered inputs' dtypes, which the inputs are
  // checked against below: only the attributes are left to match.
  if (spec->caller_attrs ? !loom_op_attrs_equal(spec->caller_attrs, attrs)
                         : loom_op_attrs_count(attrs) != 0) {
    return false;
  }
  loom_tensor_t* tensors[kCpuMemoMaxInputs];
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_t* handle = inputs[i];
    loom_async_value_t* value = handle->value;
    // A handle only the op holds is not lent: Execute moves it, so that
    // the kernel may reuse its buffer.
    if (handle->handler != handler || !value ||
        loom__ref_count_is_one(&handle->ref_count) ||
        loom_async_value_state(value) != LOOM_ASYNC_VALUE_AVAILABLE) {
      return false;
    }
    loom_tensor_t* tensor = loom__tensor_of_value(value);
    if (loom_tensor_kind(tensor) != LOOM_TENSOR_DENSE ||
        !same_metadata(loom_tensor_metadata(tensor), &memo->inputs[i])) {
      return false;
    }
    tensors[i] = tensor;
  }
  loom_async_value_t* result = NULL;
  loom_status_t status = loom__tensor_handle_create_pending(
      handler, &memo->result, out_result, &result);
  if (LOOM_UNLIKELY(status != NULL)) {
    loom_status_free(status);
    return false;
  }
  loom__kernel_direct_call_t call = {
      .instance = spec->instance,
      .host = runtime->host,
      .allocator = runtime->allocator,
      .inputs = tensors,
      .num_inputs = n,
      .owned_inputs = 0,
      .output = &memo->result,
      .output_elements = memo->result_elements,
  };
  loom_tensor_t* output = NULL;
  if (LOOM_UNLIKELY(!spec->direct(&call, &output, &status) || status)) {
    // The usual path runs it again and reports what happens there.
    loom_status_free(status);
    loom_tensor_handle_release(*out_result);
    *out_result = NULL;
    return false;
  }
  *(loom_tensor_t**)loom_async_value_payload(result) = output;
  loom__async_value_set_available_unshared(result);
  loom__runtime_count_dispatch(runtime, true);
  return true;
}
