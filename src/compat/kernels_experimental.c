// TensorFlow's experimental kernel C API over Loom's resource variables
// (kernels/resource.h). A TF_OpKernelContext* is a loom_kernel_context_t*,
// a TF_Tensor* a loom_tensor_t* (as in kernels.c). What concerns reference
// variables and DT_VARIANT tensors, which Loom does not have, reports
// UNIMPLEMENTED.
//
// Errors go to `status` and also fail the kernel context, because
// TensorFlow reports most of them with OP_REQUIRES (on the context only):
// a kernel written against either finds the failure where it looks.

#include "tensorflow/c/kernels_experimental.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compat/tf_status_internal.h"
#include "kernels/resource.h"
#include "loom/attr_value.h"
#include "loom/op_signature.h"
#include "loom/tensor.h"
#include "registry/kernel_context.h"
#include "tensor/checked_size.h"

struct TF_VariableInputLockHolder {
  int32_t count;
  // Distinct, by increasing address; each locked and retained.
  loom__resource_var_t* vars[];
};

static loom_kernel_context_t* context_of(TF_OpKernelContext* ctx) {
  return (loom_kernel_context_t*)ctx;
}

static TF_Tensor* tf_tensor_of(loom_tensor_t* tensor) {
  return (TF_Tensor*)tensor;
}

// Sets `status` to `result` (consumed) and, for an error, fails the
// kernel context with a copy of it.
static void report(TF_OpKernelContext* ctx, TF_Status* status,
                   loom_status_t result) {
  if (result && ctx) {
    loom__kernel_context_fail(context_of(ctx), loom_status_clone(result));
  }
  loom__tf_status_set(status, result);
}

static loom_status_t null_argument(const char* function, const char* argument) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                          function, argument);
}

static loom_status_t check_input(const char* function,
                                 const loom_kernel_context_t* context,
                                 const char* argument, int index) {
  if (index < 0 || index >= context->num_inputs) {
    return loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                            "%s: %s %d of op '%s' is outside its inputs [0, "
                            "%d)",
                            function, argument, index, context->op->name,
                            (int)context->num_inputs);
  }
  return loom_ok_status();
}

// The variable of resource input `index`.
static loom_status_t variable_of(const char* function, TF_OpKernelContext* ctx,
                                 const char* argument, int index,
                                 loom__resource_var_t** out_var) {
  loom_kernel_context_t* context = context_of(ctx);
  LOOM_RETURN_IF_ERROR(check_input(function, context, argument, index));
  loom_status_t result = loom__resource_input(context, index, out_var);
  return result ? loom_status_annotate(result, "%s: %s", function, argument)
                : result;
}

static bool is_resource_input(const loom_kernel_context_t* context, int index) {
  return loom_tensor_dtype(context->inputs[index]) == LOOM_DTYPE_RESOURCE;
}

// With `var` locked and its value checked: a value nobody else holds that
// the kernel may write in place. A shared one (a read holds it) is copied
// first, with the plugin's copyFunc as TensorFlow does, or memcpy without
// one, and the copy becomes the variable's value.
static loom_status_t writable_value(TF_OpKernelContext* ctx,
                                    loom__resource_var_t* var,
                                    const loom_tensor_t* value,
                                    void (*copyFunc)(TF_OpKernelContext*,
                                                     TF_Tensor*, TF_Tensor*),
                                    loom_tensor_t** out_value) {
  loom_kernel_context_t* context = context_of(ctx);
  if (!copyFunc || loom_tensor_kind(value) != LOOM_TENSOR_DENSE ||
      loom_tensor_is_forwardable(value)) {
    return loom__resource_writable_value(var, context->allocator, out_value);
  }
  loom_tensor_t* copy = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_tensor_create_dense(context->allocator, loom_tensor_dtype(value),
                               loom_tensor_shape(value), &copy));
  // The callback owns both tensors, as in TensorFlow.
  loom_tensor_retain((loom_tensor_t*)value);
  loom_tensor_retain(copy);
  copyFunc(ctx, tf_tensor_of((loom_tensor_t*)value), tf_tensor_of(copy));
  loom__resource_replace_value(var, copy);
  loom_tensor_release(copy);
  *out_value = copy;
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Resource variables
//===----------------------------------------------------------------------===//

void TF_AssignVariable(TF_OpKernelContext* ctx, int input_index,
                       int value_index, bool validate_shape,
                       void (*copyFunc)(TF_OpKernelContext* ctx,
                                        TF_Tensor* source, TF_Tensor* dest),
                       TF_Status* status) {
  static const char kFunction[] = "TF_AssignVariable";
  (void)copyFunc;  // Loom has no copy-on-read mode: the value is shared
  if (!ctx) {
    report(ctx, status, null_argument(kFunction, "ctx"));
    return;
  }
  loom__resource_var_t* var = NULL;
  loom_status_t result =
      variable_of(kFunction, ctx, "input_index", input_index, &var);
  if (!result) {
    result =
        check_input(kFunction, context_of(ctx), "value_index", value_index);
  }
  if (!result) {
    loom_tensor_t* value = context_of(ctx)->inputs[value_index];
    loom__resource_lock(var);
    result = loom__resource_assign(var, value, validate_shape);
    loom__resource_unlock(var);
  }
  report(ctx, status, result);
}

void TF_AssignUpdateVariable(TF_OpKernelContext* ctx, int input_index,
                             int value_index, int Op, int isVariantType,
                             void (*copyFunc)(TF_OpKernelContext* ctx,
                                              TF_Tensor* source,
                                              TF_Tensor* dest),
                             void (*updateFunc)(TF_OpKernelContext* ctx,
                                                TF_Tensor* tensor,
                                                TF_Tensor* value, int Op),
                             TF_Status* status) {
  static const char kFunction[] = "TF_AssignUpdateVariable";
  if (!ctx || !updateFunc) {
    report(ctx, status, null_argument(kFunction, ctx ? "updateFunc" : "ctx"));
    return;
  }
  if (isVariantType) {
    report(ctx, status,
           loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "%s: isVariantType is %d: Loom has no DT_VARIANT "
                            "tensors",
                            kFunction, isVariantType));
    return;
  }
  loom__resource_var_t* var = NULL;
  loom_status_t result =
      variable_of(kFunction, ctx, "input_index", input_index, &var);
  if (!result) {
    result =
        check_input(kFunction, context_of(ctx), "value_index", value_index);
  }
  if (result) {
    report(ctx, status, result);
    return;
  }
  loom_tensor_t* value = context_of(ctx)->inputs[value_index];
  loom__resource_lock(var);
  const loom_tensor_t* current = NULL;
  loom_tensor_t* target = NULL;
  result = loom__resource_value(var, loom_tensor_dtype(value), "input_index",
                                &current);
  if (!result &&
      !loom_shape_equal(loom_tensor_shape(current), loom_tensor_shape(value))) {
    char have[96];
    char got[96];
    loom_shape_format(loom_tensor_shape(current), have, sizeof(have));
    loom_shape_format(loom_tensor_shape(value), got, sizeof(got));
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Cannot update variable with shape %s using a "
                              "Tensor with shape %s, shapes must be equal.",
                              have, got);
  }
  if (!result) result = writable_value(ctx, var, current, copyFunc, &target);
  if (!result) {
    // updateFunc owns both tensors, as in TensorFlow.
    loom_tensor_retain(target);
    loom_tensor_retain(value);
    updateFunc(ctx, tf_tensor_of(target), tf_tensor_of(value), Op);
  }
  loom__resource_unlock(var);
  report(ctx, status, result);
}

void TF_MaybeLockVariableInputMutexesInOrder(
    TF_OpKernelContext* ctx, bool do_lock, bool sparse, const int* const inputs,
    size_t len,
    void (*copyFunc)(TF_OpKernelContext* ctx, TF_Tensor* source,
                     TF_Tensor* dest),
    TF_VariableInputLockHolder** lockHolder, TF_Status* status) {
  static const char kFunction[] = "TF_MaybeLockVariableInputMutexesInOrder";
  // Loom's variable lock is exclusive and it has no copy-on-read mode.
  (void)do_lock;
  (void)sparse;
  (void)copyFunc;
  if (!ctx || !lockHolder || (!inputs && len)) {
    report(ctx, status,
           null_argument(kFunction, !ctx          ? "ctx"
                                    : !lockHolder ? "lockHolder"
                                                  : "inputs"));
    return;
  }
  *lockHolder = NULL;
  loom_kernel_context_t* context = context_of(ctx);
  // At most one entry per input of the kernel: the variables are distinct.
  size_t capacity =
      len < (size_t)context->num_inputs ? len : (size_t)context->num_inputs;
  size_t bytes = 0;
  TF_VariableInputLockHolder* holder = NULL;
  loom_status_t result = loom_ok_status();
  if (!loom__size_bytes((int64_t)capacity, sizeof(holder->vars[0]), &bytes)) {
    result = loom__size_overflow_error(kFunction, "len", "%zu", len);
  }
  if (!result) {
    result = loom_allocator_malloc(loom_allocator_system(),
                                   sizeof(*holder) + bytes, (void**)&holder);
  }
  if (result) {
    report(ctx, status, result);
    return;
  }
  holder->count = 0;
  for (size_t i = 0; i < len && !result; ++i) {
    result = check_input(kFunction, context, "input", inputs[i]);
    if (result || !is_resource_input(context, inputs[i])) continue;
    loom__resource_var_t* var = NULL;
    result = variable_of(kFunction, ctx, "input", inputs[i], &var);
    if (result) break;
    // Insert by address, once.
    int32_t at = 0;
    while (at < holder->count && (uintptr_t)holder->vars[at] < (uintptr_t)var) {
      at++;
    }
    if (at < holder->count && holder->vars[at] == var) continue;
    memmove(holder->vars + at + 1, holder->vars + at,
            sizeof(holder->vars[0]) * (size_t)(holder->count - at));
    holder->vars[at] = var;
    holder->count++;
  }
  if (result) {
    loom_allocator_free(loom_allocator_system(), holder);
    report(ctx, status, result);
    return;
  }
  for (int32_t i = 0; i < holder->count; ++i) {
    loom__resource_retain(holder->vars[i]);
    loom__resource_lock(holder->vars[i]);
  }
  *lockHolder = holder;
  report(ctx, status, loom_ok_status());
}

void TF_ReleaseVariableInputLockHolder(TF_VariableInputLockHolder* lockHolder) {
  if (!lockHolder) return;
  for (int32_t i = lockHolder->count - 1; i >= 0; --i) {
    loom__resource_unlock(lockHolder->vars[i]);
    loom__resource_release(lockHolder->vars[i]);
  }
  loom_allocator_free(loom_allocator_system(), lockHolder);
}

void TF_GetInputTensorFromVariable(TF_OpKernelContext* ctx, int input,
                                   bool lock_held, bool isVariantType,
                                   bool sparse,
                                   void (*copyFunc)(TF_OpKernelContext* ctx,
                                                    TF_Tensor* source,
                                                    TF_Tensor* dest),
                                   TF_Tensor** out, TF_Status* status) {
  static const char kFunction[] = "TF_GetInputTensorFromVariable";
  (void)sparse;  // no copy-on-read mode: reads share, updates copy
  if (!ctx || !out) {
    report(ctx, status, null_argument(kFunction, ctx ? "out" : "ctx"));
    return;
  }
  *out = NULL;
  loom_kernel_context_t* context = context_of(ctx);
  loom_status_t result = check_input(kFunction, context, "input", input);
  if (!result && isVariantType) {
    result = loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                              "%s: isVariantType is true: Loom has no "
                              "DT_VARIANT tensors",
                              kFunction);
  }
  if (result) {
    report(ctx, status, result);
    return;
  }
  if (!is_resource_input(context, input)) {
    loom_tensor_retain(context->inputs[input]);
    *out = tf_tensor_of(context->inputs[input]);
    report(ctx, status, loom_ok_status());
    return;
  }
  loom__resource_var_t* var = NULL;
  result = variable_of(kFunction, ctx, "input", input, &var);
  if (result) {
    report(ctx, status, result);
    return;
  }
  if (!lock_held) loom__resource_lock(var);
  const loom_tensor_t* value = NULL;
  loom_tensor_t* target = NULL;
  result =
      loom__resource_value(var, loom__resource_dtype(var), "input", &value);
  if (!result) result = writable_value(ctx, var, value, copyFunc, &target);
  if (!result) {
    loom_tensor_retain(target);
    *out = tf_tensor_of(target);
  }
  if (!lock_held) loom__resource_unlock(var);
  report(ctx, status, result);
}

//===----------------------------------------------------------------------===//
// Inputs and attributes
//===----------------------------------------------------------------------===//

void TF_GetInputByName(TF_OpKernelContext* ctx, const char* inputName,
                       TF_Tensor** tensor, TF_Status* status) {
  static const char kFunction[] = "TF_GetInputByName";
  if (!ctx || !inputName || !tensor) {
    loom__tf_status_set(status,
                        null_argument(kFunction, !ctx         ? "ctx"
                                                 : !inputName ? "inputName"
                                                              : "tensor"));
    return;
  }
  loom_kernel_context_t* context = context_of(ctx);
  int32_t start = -1;
  int32_t stop = -1;
  loom_status_t result = loom_op_def_arg_range(context->op, context->attrs,
                                               false, inputName, &start, &stop);
  if (result && loom_status_code(result) == LOOM_STATUS_NOT_FOUND) {
    // TensorFlow's message (OpKernel::InputRange).
    loom_status_free(result);
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Unknown input name: %s", inputName);
  } else if (!result && stop != start + 1) {
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "OpKernel used list-valued input name '%s' when "
                              "single-valued input was expected",
                              inputName);
  }
  if (!result) {
    loom_tensor_retain(context->inputs[start]);
    *tensor = tf_tensor_of(context->inputs[start]);
  }
  loom__tf_status_set(status, result);
}

void TF_OpKernelConstruction_GetAttrTensorShape(TF_OpKernelConstruction* ctx,
                                                const char* attr_name,
                                                int64_t* dims, size_t num_dims,
                                                TF_Status* status) {
  static const char kFunction[] = "TF_OpKernelConstruction_GetAttrTensorShape";
  if (!ctx || !attr_name || (!dims && num_dims)) {
    loom__tf_status_set(status,
                        null_argument(kFunction, !ctx         ? "ctx"
                                                 : !attr_name ? "attr_name"
                                                              : "dims"));
    return;
  }
  loom_kernel_construction_t* construction = (loom_kernel_construction_t*)ctx;
  const char* op = construction->op->name;
  loom_attr_value_t value;
  loom_shape_t shape;
  loom_status_t result = loom_ok_status();
  if (!loom_op_attrs_get(construction->attrs, attr_name, &value)) {
    result = loom_make_status(LOOM_STATUS_NOT_FOUND,
                              "Op '%s' has no attr named '%s'", op, attr_name);
  } else if (value.is_list || value.kind != LOOM_ATTR_KIND_SHAPE) {
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Attr '%s' of op '%s' has type %s%s%s, "
                              "not shape",
                              attr_name, op, value.is_list ? "list(" : "",
                              loom_attr_kind_name(value.kind),
                              value.is_list ? ")" : "");
  } else {
    result = loom_attr_value_to_shape(&value, &shape);
  }
  if (!result && !loom_shape_is_fully_defined(&shape)) {
    char text[96];
    loom_shape_format(&shape, text, sizeof(text));
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: attr '%s' of op '%s' is %s, not a fully "
                              "defined shape",
                              kFunction, attr_name, op, text);
  }
  if (!result && (size_t)shape.rank != num_dims) {
    // TensorFlow's message.
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Expected rank is %zu but actual rank is %d",
                              num_dims, (int)shape.rank);
  }
  for (int32_t i = 0; !result && i < shape.rank; ++i) {
    dims[i] = loom_shape_dims(&shape)[i];
  }
  loom__tf_status_set(status, result);
}

bool TF_IsRefInput(TF_OpKernelContext* ctx, int i, TF_Status* status) {
  if (!ctx) {
    loom__tf_status_set(status, null_argument("TF_IsRefInput", "ctx"));
    return false;
  }
  loom_kernel_context_t* context = context_of(ctx);
  if (i < 0 || i >= context->num_inputs) {
    // TensorFlow's message, with the values.
    loom__tf_status_set(
        status,
        loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                         "input index out of range: TF_IsRefInput: "
                         "input %d of op '%s', which has %d",
                         i, context->op->name, (int)context->num_inputs));
    return false;
  }
  loom__tf_status_set(status, loom_ok_status());
  return false;  // Loom has no reference inputs
}

//===----------------------------------------------------------------------===//
// What Loom does not have: reference variables, DT_VARIANT tensors
//===----------------------------------------------------------------------===//

static loom_status_t no_ref_variables(const char* function) {
  return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                          "%s: Loom has no reference variables (TF1 "
                          "'Variable' ops); use resource variables "
                          "(VarHandleOp) and TF_AssignVariable",
                          function);
}

void TF_AssignRefVariable(TF_OpKernelContext* ctx, int input_ref_index,
                          int output_ref_index, int value_index,
                          bool use_locking, bool validate_shape,
                          void (*copyFunc)(TF_OpKernelContext* ctx,
                                           TF_Tensor* source, TF_Tensor* dest),
                          TF_Status* status) {
  (void)input_ref_index;
  (void)output_ref_index;
  (void)value_index;
  (void)use_locking;
  (void)validate_shape;
  (void)copyFunc;
  report(ctx, status, no_ref_variables("TF_AssignRefVariable"));
}

void TF_OpKernelContext_ForwardRefInputToRefOutput(TF_OpKernelContext* ctx,
                                                   int32_t input_index,
                                                   int32_t output_index) {
  static const char kFunction[] =
      "TF_OpKernelContext_ForwardRefInputToRefOutput";
  if (!ctx) return;
  loom_kernel_context_t* context = context_of(ctx);
  loom_status_t result =
      check_input(kFunction, context, "input_index", (int)input_index);
  if (!result && (output_index < 0 || output_index >= context->num_outputs)) {
    result = loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                              "%s: output_index %d of op '%s' is outside its "
                              "outputs [0, %d)",
                              kFunction, (int)output_index, context->op->name,
                              (int)context->num_outputs);
  }
  // As in TensorFlow, a resource input has nothing to forward.
  if (!result && is_resource_input(context, input_index)) return;
  if (!result) result = no_ref_variables(kFunction);
  loom__kernel_context_fail(context, result);
}

static loom_status_t no_variants(const char* function) {
  return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                          "%s: Loom has no DT_VARIANT tensors", function);
}

void TF_AddNVariant(TF_OpKernelContext* ctx,
                    void (*binary_add_func)(TF_OpKernelContext* ctx,
                                            TF_Tensor* a, TF_Tensor* b,
                                            TF_Tensor* out),
                    TF_Status* status) {
  (void)binary_add_func;
  report(ctx, status, no_variants("TF_AddNVariant"));
}

void TF_ZerosLikeVariant(TF_OpKernelContext* ctx,
                         void (*zeros_like_func)(TF_OpKernelContext* ctx,
                                                 TF_Tensor* input,
                                                 TF_Tensor* out),
                         TF_Status* status) {
  (void)zeros_like_func;
  report(ctx, status, no_variants("TF_ZerosLikeVariant"));
}
