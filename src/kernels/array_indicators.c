// The indicator ops of functions and control flow (TensorFlow's op-handler
// design): FunctionInput / FunctionOutput mark a value entering or leaving
// a function call, IfInput / IfOutput, CaseInput / CaseOutput and
// WhileInput / WhileOutput the same for the functions of If, Case and
// While. A call or control-flow op that runs op by op under handlers
// executes them (src/function), so that the handlers see where the body
// reads an outside value and where it returns one, and may intercept them.
// On the CPU each is an identity: every output is input 0 (no copy).

#include "kernels/array_internal.h"

// Every output has input 0's shape (an input fanned out to its branches).
static loom_status_t fan_out_shape_fn(loom_shape_inference_context_t* c,
                                      void* user_data) {
  (void)user_data;
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &shape));
  int32_t n = loom_shape_inference_context_num_outputs(c);
  for (int32_t i = 0; i < n; ++i) {
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_set_output(c, i, &shape));
  }
  return loom_ok_status();
}

static void fan_out_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  int32_t n = loom_kernel_context_num_outputs(ctx);
  for (int32_t i = 0; i < n; ++i) {
    loom_status_t status = loom_kernel_context_set_output(
        ctx, i, loom_kernel_context_input(ctx, 0));
    if (status) {
      loom_kernel_context_fail(ctx, status);
      return;
    }
  }
}

// `index`: which input or output of the call (or the control-flow op) the
// value is, for the handlers that show or key on it.
static const loom__builtin_op_t kOps[] = {
    {.name = "FunctionInput",
     .inputs = {"exterior: T"},
     .outputs = {"interior: T"},
     .attrs = {"T: type", "index: int = 0"},
     .shape_fn = fan_out_shape_fn},
    {.name = "FunctionOutput",
     .inputs = {"interior: T"},
     .outputs = {"exterior: T"},
     .attrs = {"T: type", "index: int = 0"},
     .shape_fn = fan_out_shape_fn},
    {.name = "IfInput",
     .inputs = {"exterior: T"},
     .outputs = {"then_interior: T", "else_interior: T"},
     .attrs = {"T: type", "index: int = 0"},
     .shape_fn = fan_out_shape_fn},
    // Eagerly one branch runs: `interior` is its value, `branch` says
    // which (0: then, 1: else).
    {.name = "IfOutput",
     .inputs = {"interior: T"},
     .outputs = {"exterior: T"},
     .attrs = {"T: type", "index: int = 0", "branch: int = 0"},
     .shape_fn = fan_out_shape_fn},
    {.name = "CaseInput",
     .inputs = {"exterior: T"},
     .outputs = {"branch_interior: num_branches * T"},
     .attrs = {"T: type", "num_branches: int >= 1", "index: int = 0"},
     .shape_fn = fan_out_shape_fn},
    {.name = "CaseOutput",
     .inputs = {"interior: T"},
     .outputs = {"exterior: T"},
     .attrs = {"T: type", "index: int = 0", "branch: int = 0"},
     .shape_fn = fan_out_shape_fn},
    {.name = "WhileInput",
     .inputs = {"exterior: T"},
     .outputs = {"cond_interior: T", "body_interior: T"},
     .attrs = {"T: type", "index: int = 0"},
     .shape_fn = fan_out_shape_fn},
    {.name = "WhileOutput",
     .inputs = {"body: T"},
     .outputs = {"exterior: T"},
     .attrs = {"T: type", "index: int = 0"},
     .shape_fn = fan_out_shape_fn},
};

// Any tensor passes, resources and variants included (as Identity).
static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "FunctionInput", .compute = fan_out_compute, .any_rank = true},
    {.op_name = "FunctionOutput", .compute = fan_out_compute, .any_rank = true},
    {.op_name = "IfInput", .compute = fan_out_compute, .any_rank = true},
    {.op_name = "IfOutput", .compute = fan_out_compute, .any_rank = true},
    {.op_name = "CaseInput", .compute = fan_out_compute, .any_rank = true},
    {.op_name = "CaseOutput", .compute = fan_out_compute, .any_rank = true},
    {.op_name = "WhileInput", .compute = fan_out_compute, .any_rank = true},
    {.op_name = "WhileOutput", .compute = fan_out_compute, .any_rank = true},
};

loom_status_t loom__register_array_indicator_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
