// Native ops every cpu handler has: printing (a side effect, ordered by
// chains) and conversions between dense and scalar host tensors.

#include <stdio.h>
#include <string.h>

#include "loom/cpu_op_handler.h"

// loom.print(x): writes x as TFRT prints host tensors, one line on stdout.
static loom_status_t print_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  if (ctx->num_inputs != 1 || ctx->num_results != 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom.print takes 1 argument and has no results, "
                            "got %d and %d",
                            ctx->num_inputs, ctx->num_results);
  }
  char text[4096];
  loom_tensor_format(ctx->inputs[0], text, sizeof(text));
  printf("%s\n", text);
  fflush(stdout);
  return loom_ok_status();
}

static loom_status_t check_one_to_one(const loom_cpu_dispatch_context_t* ctx,
                                      const char* name) {
  if (ctx->num_inputs != 1 || ctx->num_results != 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s takes 1 argument and has 1 result, got %d and "
                            "%d",
                            name, ctx->num_inputs, ctx->num_results);
  }
  return loom_ok_status();
}

static loom_status_t same_metadata(const loom_tensor_metadata_t* inputs,
                                   int32_t num_inputs,
                                   const loom_op_attrs_t* attrs,
                                   loom_tensor_metadata_t* results,
                                   int32_t num_results) {
  (void)attrs;
  if (num_inputs != 1 || num_results != 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "the conversion ops take 1 argument and have 1 "
                            "result, got %d and %d",
                            num_inputs, num_results);
  }
  results[0] = inputs[0];
  return loom_ok_status();
}

// loom.to_dense(x): a dense host tensor with x's values.
static loom_status_t to_dense_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  LOOM_RETURN_IF_ERROR(check_one_to_one(ctx, "loom.to_dense"));
  loom_tensor_t* dense = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_tensor_convert_to_dense(ctx->allocator, ctx->inputs[0], &dense));
  return loom_cpu_set_result(ctx->results[0], dense);
}

// loom.to_scalar(x): a scalar host tensor, when every element of x is equal.
static loom_status_t to_scalar_dispatch(
    const loom_cpu_dispatch_context_t* ctx) {
  LOOM_RETURN_IF_ERROR(check_one_to_one(ctx, "loom.to_scalar"));
  loom_tensor_t* input = ctx->inputs[0];
  if (loom_tensor_kind(input) == LOOM_TENSOR_SCALAR) {
    loom_tensor_retain(input);
    return loom_cpu_set_result(ctx->results[0], input);
  }
  loom_dtype_t dtype = loom_tensor_dtype(input);
  size_t size = loom_dtype_size(dtype);
  int64_t count = loom_tensor_num_elements(input);
  if (loom_tensor_kind(input) != LOOM_TENSOR_DENSE || size == 0 || count < 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom.to_scalar needs a non-empty dense tensor of "
                            "a fixed-size dtype");
  }
  const unsigned char* data = loom_tensor_data(input);
  for (int64_t i = 1; i < count; ++i) {
    if (memcmp(data, data + (size_t)i * size, size) != 0) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "loom.to_scalar: element %lld differs from "
                              "element 0",
                              (long long)i);
    }
  }
  loom_tensor_t* scalar = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_scalar(
      ctx->allocator, dtype, loom_tensor_shape(input), data, &scalar));
  return loom_cpu_set_result(ctx->results[0], scalar);
}

loom_status_t loom__cpu_register_builtin_ops(loom_op_handler_t* cpu);

loom_status_t loom__cpu_register_builtin_ops(loom_op_handler_t* cpu) {
  LOOM_RETURN_IF_ERROR(loom_cpu_op_handler_add_op(
      cpu, "loom.print", print_dispatch,
      LOOM_CPU_OP_SIDE_EFFECTING | LOOM_CPU_OP_ALLOWS_SCALAR));
  LOOM_RETURN_IF_ERROR(loom_cpu_op_handler_add_op(
      cpu, "loom.to_dense", to_dense_dispatch, LOOM_CPU_OP_ALLOWS_SCALAR));
  LOOM_RETURN_IF_ERROR(
      loom_cpu_op_handler_add_metadata_fn(cpu, "loom.to_dense", same_metadata));
  LOOM_RETURN_IF_ERROR(loom_cpu_op_handler_add_op(
      cpu, "loom.to_scalar", to_scalar_dispatch, LOOM_CPU_OP_ALLOWS_SCALAR));
  return loom_cpu_op_handler_add_metadata_fn(cpu, "loom.to_scalar",
                                             same_metadata);
}
