// The corert dialect's tensor kernels: constants (const_dense_tensor,
// const_string_tensor, create_dense_tensor.<dtype>), printing, and
// reading a tensor handle as an i32 or a shape.

#include <string.h>

#include "function/kernels_common.h"
#include "function/program_dtype.h"
#include "loom/op_handler.h"
#include "loom/tensor_handle.h"

static void set_tensor(loom_program_frame_t* frame, loom_tensor_t* tensor) {
  loom_op_handler_t* cpu =
      loom_runtime_get_op_handler(frame->executor->runtime, "cpu");
  loom_tensor_handle_t* handle = NULL;
  loom_status_t status =
      cpu ? loom_tensor_handle_create(cpu, tensor, &handle)
          : loom_make_status(LOOM_STATUS_NOT_FOUND, "no cpu op handler");
  loom_tensor_release(tensor);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  loom__kernel_set_or_fail(frame,
                           loom_program_value_set_tensor_handle(
                               loom_program_frame_result(frame, 0), handle));
}

static void const_dense_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value", &value) ||
      value.is_list || value.kind != LOOM_ATTR_KIND_TENSOR) {
    loom_program_frame_fail(
        frame,
        loom__kernel_missing_attr(frame, "value", "dense<...> : tensor<...>"));
    return;
  }
  // Constants are immutable: the handle shares the program's tensor.
  loom_tensor_retain(value.u.tensor);
  set_tensor(frame, value.u.tensor);
}

static void const_string_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  loom_shape_t shape;
  loom_status_t status = loom__kernel_shape_attr(frame, "shape", &shape);
  loom_attr_value_t value;
  if (!status &&
      (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value", &value) ||
       value.kind != LOOM_ATTR_KIND_STRING)) {
    status = loom__kernel_missing_attr(frame, "value", "a list of strings");
  }
  int64_t count = status ? 0 : loom_shape_num_elements(&shape);
  int64_t given = status ? 0 : (value.is_list ? value.count : 1);
  if (!status && given != count && given != 1) {
    status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "'%s': %lld strings for %lld elements",
        loom_program_frame_op_name(frame), (long long)given, (long long)count);
  }
  loom_tensor_t* tensor = NULL;
  if (!status) {
    status =
        loom_tensor_create_string(frame->executor->allocator, &shape, &tensor);
  }
  for (int64_t i = 0; !status && i < count; ++i) {
    loom_attr_value_t element = value;
    if (value.is_list) {
      status =
          loom_attr_value_list_element(&value, given == 1 ? 0 : i, &element);
    }
    if (!status) {
      status = loom_tstring_copy(loom_tensor_string_at(tensor, i),
                                 element.u.string.data, element.u.string.size);
    }
  }
  if (status) {
    loom_tensor_release(tensor);
    loom_program_frame_fail(frame, status);
    return;
  }
  set_tensor(frame, tensor);
}

// corert.create_dense_tensor.<dtype> {shape = [...], value = [...]}
static void create_dense_kernel(loom_program_frame_t* frame, void* user_data) {
  loom_dtype_t dtype = (loom_dtype_t)(intptr_t)user_data;
  loom_shape_t shape;
  loom_status_t status = loom__kernel_shape_attr(frame, "shape", &shape);
  loom_attr_value_t value;
  if (!status &&
      (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value", &value) ||
       !value.is_list ||
       (value.kind != LOOM_ATTR_KIND_BOOL && value.kind != LOOM_ATTR_KIND_I32 &&
        value.kind != LOOM_ATTR_KIND_I64 && value.kind != LOOM_ATTR_KIND_F32 &&
        value.kind != LOOM_ATTR_KIND_F64))) {
    status = loom__kernel_missing_attr(frame, "value", "a list of numbers");
  }
  int64_t count = status ? 0 : loom_shape_num_elements(&shape);
  if (!status && value.count != count && value.count != 1) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "'%s': %lld values for %lld elements",
                              loom_program_frame_op_name(frame),
                              (long long)value.count, (long long)count);
  }
  loom_tensor_t* tensor = NULL;
  if (!status) {
    status = loom_tensor_create_dense(frame->executor->allocator, dtype, &shape,
                                      &tensor);
  }
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  void* data = loom_tensor_data(tensor);
  for (int64_t k = 0; k < count; ++k) {
    double f = 0;
    int64_t i = 0;
    loom__kernel_attr_number(&value, value.count == 1 ? 0 : k, &f, &i);
    loom__kernel_store_number(dtype, data, k, f, i);
  }
  set_tensor(frame, tensor);
}

// The host tensor of an available handle (borrowed), or NULL.
static const loom_tensor_t* handle_tensor(loom_tensor_handle_t* handle) {
  loom_async_value_t* value = loom_tensor_handle_value(handle);
  if (!value || loom_async_value_type(value) != &loom_async_value_type_tensor ||
      !loom_async_value_is_available(value)) {
    return NULL;
  }
  return *(loom_tensor_t**)loom_async_value_payload(value);
}

static void print_tensorhandle_kernel(loom_program_frame_t* frame,
                                      void* user_data) {
  (void)user_data;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_TENSOR_HANDLE)) return;
  loom_tensor_handle_t* handle =
      loom_program_frame_value(frame, 0)->u.tensor_handle;
  const loom_tensor_t* tensor = handle_tensor(handle);
  FILE* out = loom_program_frame_output(frame);
  if (!tensor) {
    fprintf(out, "TensorHandle on op handler '%s'\n",
            loom_op_handler_type_name(loom_tensor_handle_handler(handle)));
  } else {
    loom__kernel_print_tensor(frame, tensor);
  }
  fflush(out);
  loom__kernel_set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 0)));
}

static void to_int32_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_TENSOR_HANDLE)) return;
  const loom_tensor_t* tensor =
      handle_tensor(loom_program_frame_value(frame, 0)->u.tensor_handle);
  if (!tensor || loom_tensor_dtype(tensor) != LOOM_DTYPE_INT32 ||
      loom_tensor_num_elements(tensor) != 1 ||
      loom_tensor_kind(tensor) == LOOM_TENSOR_STRING) {
    char what[160] = "not a host tensor";
    if (tensor) {
      loom_tensor_metadata_format(loom_tensor_metadata(tensor), what,
                                  sizeof(what));
    }
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s' needs an i32 tensor of one element, got "
                                "%s",
                                loom_program_frame_op_name(frame), what));
    return;
  }
  loom__kernel_set_or_fail(
      frame,
      loom_program_value_set_i32(loom_program_frame_result(frame, 0),
                                 *(const int32_t*)loom_tensor_data(tensor)));
}

static void to_shape_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_TENSOR_HANDLE)) return;
  loom_tensor_metadata_t metadata;
  loom_status_t status = loom_tensor_handle_metadata(
      loom_program_frame_value(frame, 0)->u.tensor_handle, &metadata);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  loom__kernel_set_or_fail(
      frame, loom_program_value_set_shape(loom_program_frame_result(frame, 0),
                                          &metadata.shape));
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

// Of the dtypes programs spell, those create_dense_kernel makes (each
// under every spelling): the numbers and bool, not strings, complex or
// quantized types.
static bool is_dense_number(loom_dtype_t dtype) {
  return loom_dtype_size(dtype) > 0 && !loom_dtype_is_complex(dtype) &&
         !loom_dtype_is_quantized(dtype);
}

loom_status_t loom__program_register_corert_tensor_kernels(
    loom_program_executor_t* executor) {
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "corert.const_dense_tensor",
                                        const_dense_kernel, NULL, 0, 1));
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "corert.const_string_tensor",
                                        const_string_kernel, NULL, 0, 1));
  char name[64];
  size_t num_spellings = 0;
  const program_dtype_spelling_t* spellings =
      loom__program_dtype_spellings(&num_spellings);
  for (size_t i = 0; i < num_spellings; ++i) {
    if (!is_dense_number(spellings[i].dtype)) continue;
    snprintf(name, sizeof(name), "corert.create_dense_tensor.%s",
             spellings[i].name);
    LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, name, create_dense_kernel,
                                          (void*)(intptr_t)spellings[i].dtype,
                                          0, 1));
  }
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "corert.print_tensorhandle",
                                        print_tensorhandle_kernel, NULL, 2, 1));
  LOOM_RETURN_IF_ERROR(loom__kernel_add(
      executor, "corert.tensorhandle_to_int32", to_int32_kernel, NULL, 1, 1));
  // TFRT's older form also takes a chain: (handle) or (handle, chain).
  LOOM_RETURN_IF_ERROR(loom__kernel_add(
      executor, "corert.tensorhandle_to_shape", to_shape_kernel, NULL, -1, 1));
  return loom_ok_status();
}
