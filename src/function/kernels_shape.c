// The ts (tensor shape) dialect's kernels: ts.build_shape, ts.print_shape.

#include <string.h>

#include "function/program_executor.h"

static void build_shape_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  loom_attr_value_t value;
  loom_status_t status = loom_ok_status();
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value", &value) ||
      !value.is_list ||
      (value.kind != LOOM_ATTR_KIND_I64 && value.kind != LOOM_ATTR_KIND_I32)) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "'ts.build_shape' needs a list of integers");
  } else if (value.count > LOOM_MAX_RANK) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "'ts.build_shape': rank %lld exceeds %d",
                              (long long)value.count, LOOM_MAX_RANK);
  }
  loom_shape_t shape;
  if (!status) {
    int64_t dims[LOOM_MAX_RANK];
    for (int64_t i = 0; i < value.count; ++i) {
      dims[i] = value.kind == LOOM_ATTR_KIND_I64
                    ? ((const int64_t*)value.u.list)[i]
                    : ((const int32_t*)value.u.list)[i];
    }
    status = loom_shape_initialize(&shape, dims, (int)value.count);
    if (status) status = loom_status_annotate(status, "'ts.build_shape'");
  }
  if (!status) {
    status = loom_program_value_set_shape(loom_program_frame_result(frame, 0),
                                          &shape);
  }
  if (status) loom_program_frame_fail(frame, status);
}

// Prints `shape = [1, 2]`; takes the shape and, optionally, a chain.
static void print_shape_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  loom_status_t status =
      loom_program_frame_check_kind(frame, 0, LOOM_PROGRAM_VALUE_SHAPE);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  char text[256];
  loom_shape_format(&loom_program_frame_value(frame, 0)->u.shape, text,
                    sizeof(text));
  FILE* out = loom_program_frame_output(frame);
  fprintf(out, "shape = %s\n", text);
  fflush(out);
  for (int32_t i = 0; i < loom_program_frame_num_results(frame); ++i) {
    status = loom_program_value_set_chain(loom_program_frame_result(frame, i));
    if (status) loom_program_frame_fail(frame, status);
  }
}

loom_status_t loom__program_register_shape_kernels(
    loom_program_executor_t* executor) {
  loom_program_kernel_def_t build = {.struct_size = sizeof(build),
                                     .name = "ts.build_shape",
                                     .fn = build_shape_kernel,
                                     .num_arguments = 0,
                                     .num_results = 1};
  LOOM_RETURN_IF_ERROR(loom_program_executor_add_kernel(executor, &build));
  loom_program_kernel_def_t print = {.struct_size = sizeof(print),
                                     .name = "ts.print_shape",
                                     .fn = print_shape_kernel,
                                     .num_arguments = -1,
                                     .num_results = -1};
  return loom_program_executor_add_kernel(executor, &print);
}
