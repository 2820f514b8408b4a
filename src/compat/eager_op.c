// TensorFlow's eager ops over loom/eager.h: a TFE_Op is a loom_eager_op_t.

#include <string.h>

#include "base/small_vector.h"
#include "compat/tf_status_internal.h"
#include "frontend/frontend_internal.h"
#include "loom/eager.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/eager/c_api_experimental.h"

// Where the list attribute setters convert their values: 256 bytes (16
// strings, 64 types or more flags) need no allocation.
LOOM_DEFINE_SMALL_VECTOR(scratch_vector, loom_string_view_t, 16)

static loom_eager_op_t* unwrap(const TFE_Op* op) {
  return (loom_eager_op_t*)op;
}

static loom_status_t null_op(const char* function) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: op is NULL",
                          function);
}

TFE_Op* TFE_NewOp(TFE_Context* ctx, const char* op_or_function_name,
                  TF_Status* status) {
  loom_eager_op_t* op = NULL;
  loom__tf_status_set(status, loom_eager_op_create((loom_context_t*)ctx,
                                                   op_or_function_name, &op));
  return (TFE_Op*)op;
}

void TFE_DeleteOp(TFE_Op* op) {
  loom_eager_op_destroy(unwrap(op));
}

void TFE_OpReset(TFE_Op* op_to_reset, const char* op_or_function_name,
                 const char* raw_device_name, TF_Status* status) {
  loom__tf_status_set(
      status, loom_eager_op_reset_placed(unwrap(op_to_reset),
                                         op_or_function_name, raw_device_name));
}

const char* TFE_OpGetName(const TFE_Op* op, TF_Status* status) {
  loom__tf_status_set(status, op ? loom_ok_status() : null_op("TFE_OpGetName"));
  return loom_eager_op_name(unwrap(op));
}

TFE_Context* TFE_OpGetContext(const TFE_Op* op, TF_Status* status) {
  loom__tf_status_set(status,
                      op ? loom_ok_status() : null_op("TFE_OpGetContext"));
  return (TFE_Context*)loom_eager_op_context(unwrap(op));
}

void TFE_OpSetDevice(TFE_Op* op, const char* device_name, TF_Status* status) {
  loom__tf_status_set(status,
                      loom_eager_op_set_device(unwrap(op), device_name));
}

const char* TFE_OpGetDevice(const TFE_Op* op, TF_Status* status) {
  loom__tf_status_set(status,
                      op ? loom_ok_status() : null_op("TFE_OpGetDevice"));
  return loom_eager_op_device(unwrap(op));
}

void TFE_OpAddInput(TFE_Op* op, TFE_TensorHandle* input, TF_Status* status) {
  loom__tf_status_set(status, loom_eager_op_add_input(
                                  unwrap(op), (loom_tensor_handle_t*)input));
}

void TFE_OpConsumeInput(TFE_Op* op, TFE_TensorHandle* h, TF_Status* status) {
  loom_status_t result =
      loom_eager_op_add_input(unwrap(op), (loom_tensor_handle_t*)h);
  // The op holds its own reference now (or none, on failure): the caller's
  // goes either way, as it was handed over.
  loom_tensor_handle_release((loom_tensor_handle_t*)h);
  loom__tf_status_set(status, result);
}

void TFE_OpAddInputList(TFE_Op* op, TFE_TensorHandle** inputs, int num_inputs,
                        TF_Status* status) {
  loom__tf_status_set(
      status, loom_eager_op_add_input_list(
                  unwrap(op), (loom_tensor_handle_t**)inputs, num_inputs));
}

int TFE_OpGetFlatInputCount(const TFE_Op* op, TF_Status* status) {
  loom__tf_status_set(
      status, op ? loom_ok_status() : null_op("TFE_OpGetFlatInputCount"));
  return op ? loom_eager_op_num_inputs(unwrap(op)) : -1;
}

TFE_TensorHandle* TFE_OpGetFlatInput(const TFE_Op* op, int index,
                                     TF_Status* status) {
  loom_tensor_handle_t* input = loom_eager_op_input(unwrap(op), index);
  loom_status_t result = loom_ok_status();
  if (!op) {
    result = null_op("TFE_OpGetFlatInput");
  } else if (!input) {
    result = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        index < 0 || index >= loom_eager_op_num_inputs(unwrap(op))
            ? "TFE_OpGetFlatInput: index %d is out of range [0, %d)"
            : "TFE_OpGetFlatInput: input %d (of %d) was handed to a previous "
              "execution",
        index, loom_eager_op_num_inputs(unwrap(op)));
  }
  loom__tf_status_set(status, result);
  return (TFE_TensorHandle*)input;
}

//===----------------------------------------------------------------------===//
// Attribute types
//===----------------------------------------------------------------------===//

static TF_AttrType tf_attr_type(loom_attr_kind_t kind) {
  switch (kind) {
    case LOOM_ATTR_KIND_STRING:
      return TF_ATTR_STRING;
    case LOOM_ATTR_KIND_I32:
    case LOOM_ATTR_KIND_I64:
      return TF_ATTR_INT;
    case LOOM_ATTR_KIND_F32:
    case LOOM_ATTR_KIND_F64:
      return TF_ATTR_FLOAT;
    case LOOM_ATTR_KIND_BOOL:
      return TF_ATTR_BOOL;
    case LOOM_ATTR_KIND_DTYPE:
      return TF_ATTR_TYPE;
    case LOOM_ATTR_KIND_SHAPE:
      return TF_ATTR_SHAPE;
    case LOOM_ATTR_KIND_TENSOR:
      return TF_ATTR_TENSOR;
    case LOOM_ATTR_KIND_FUNC:
      return TF_ATTR_FUNC;
    default:
      return TF_ATTR_PLACEHOLDER;
  }
}

TF_AttrType TFE_OpNameGetAttrType(TFE_Context* ctx,
                                  const char* op_or_function_name,
                                  const char* attr_name, unsigned char* is_list,
                                  TF_Status* status) {
  loom_attr_kind_t kind = LOOM_ATTR_KIND_INVALID;
  bool list = false;
  loom_status_t result = loom_context_attr_kind(
      (loom_context_t*)ctx, op_or_function_name, attr_name, &kind, &list);
  if (is_list) *is_list = list;
  loom__tf_status_set(status, result);
  return result ? TF_ATTR_INT : tf_attr_type(kind);
}

TF_AttrType TFE_OpGetAttrType(TFE_Op* op, const char* attr_name,
                              unsigned char* is_list, TF_Status* status) {
  if (!op) {
    loom__tf_status_set(status, null_op("TFE_OpGetAttrType"));
    return TF_ATTR_INT;
  }
  return TFE_OpNameGetAttrType((TFE_Context*)loom_eager_op_context(unwrap(op)),
                               loom_eager_op_name(unwrap(op)), attr_name,
                               is_list, status);
}

//===----------------------------------------------------------------------===//
// Attribute setters
//===----------------------------------------------------------------------===//

// Setters without a status leave their failure in the op for TFE_Execute.
static void record(TFE_Op* op, loom_status_t status) {
  if (status) loom_eager_op_fail(unwrap(op), status);
}

static loom_op_attrs_t* attrs_of(TFE_Op* op) {
  return loom_eager_op_attrs(unwrap(op));
}

void TFE_OpSetAttrString(TFE_Op* op, const char* attr_name, const void* value,
                         size_t length) {
  if (!op) return;
  record(op, loom_op_attrs_set_string(attrs_of(op), attr_name,
                                      value ? (const char*)value : "",
                                      value ? length : 0));
}

void TFE_OpSetAttrInt(TFE_Op* op, const char* attr_name, int64_t value) {
  if (op) record(op, loom_op_attrs_set_i64(attrs_of(op), attr_name, value));
}

void TFE_OpSetAttrFloat(TFE_Op* op, const char* attr_name, float value) {
  if (op) record(op, loom_op_attrs_set_f32(attrs_of(op), attr_name, value));
}

void TFE_OpSetAttrBool(TFE_Op* op, const char* attr_name, unsigned char value) {
  if (op) record(op, loom_op_attrs_set_bool(attrs_of(op), attr_name, value));
}

void TFE_OpSetAttrType(TFE_Op* op, const char* attr_name, TF_DataType value) {
  if (op) {
    record(op, loom_op_attrs_set_dtype(attrs_of(op), attr_name,
                                       (loom_dtype_t)value));
  }
}

void TFE_OpSetAttrShape(TFE_Op* op, const char* attr_name, const int64_t* dims,
                        const int num_dims, TF_Status* out_status) {
  if (!op) {
    loom__tf_status_set(out_status, null_op("TFE_OpSetAttrShape"));
    return;
  }
  loom_status_t result = loom_ok_status();
  if (num_dims > LOOM_MAX_SHAPE_RANK) {
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Value specified for `%s` has %d dimensions "
                              "which is over the limit of %d.",
                              attr_name ? attr_name : "(null)", num_dims,
                              LOOM_MAX_SHAPE_RANK);
  } else if (num_dims > 0 && !dims) {
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TFE_OpSetAttrShape: dims is NULL");
  } else {
    result =
        loom_op_attrs_set_shape(attrs_of(op), attr_name, dims,
                                num_dims < 0 ? LOOM_UNKNOWN_RANK : num_dims);
  }
  loom__tf_status_set(out_status, result);
}

void TFE_OpSetAttrFunction(TFE_Op* op, const char* attr_name,
                           const TFE_Op* value) {
  if (!op) return;
  if (!value) {
    record(op, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "TFE_OpSetAttrFunction: the function is NULL"));
    return;
  }
  const char* name = loom_eager_op_name(unwrap(value));
  record(op,
         loom_op_attrs_set_func(attrs_of(op), attr_name, name, strlen(name)));
}

void TFE_OpSetAttrFunctionName(TFE_Op* op, const char* attr_name,
                               const char* data, size_t length) {
  if (!op) return;
  record(op, loom_op_attrs_set_func(attrs_of(op), attr_name, data ? data : "",
                                    data ? length : 0));
}

void TFE_OpSetAttrTensor(TFE_Op* op, const char* attr_name, TF_Tensor* tensor,
                         TF_Status* status) {
  loom__tf_status_set(status,
                      !op ? null_op("TFE_OpSetAttrTensor")
                          : loom_op_attrs_set_tensor(attrs_of(op), attr_name,
                                                     (loom_tensor_t*)tensor));
}

// A list of `num_values` elements (negative counts and NULL arrays with a
// positive count are errors).
static bool check_list(TFE_Op* op, const char* attr_name, const void* values,
                       int num_values) {
  if (!op) return false;
  if (num_values < 0 || (num_values > 0 && !values)) {
    record(op, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "attr '%s': invalid list of %d values",
                                attr_name ? attr_name : "(null)", num_values));
    return false;
  }
  return true;
}

// Room for `count` elements of `size` bytes (at most a string view's
// alignment) in `scratch`, which the caller deinitializes; NULL after
// recording the failure on `op`.
static void* list_scratch(TFE_Op* op, scratch_vector_t* scratch, int count,
                          size_t size) {
  scratch_vector_initialize(scratch);
  size_t bytes = (size_t)count * size;
  loom_status_t status = scratch_vector_resize_uninitialized(
      scratch, loom_allocator_default(),
      (bytes + sizeof(loom_string_view_t) - 1) / sizeof(loom_string_view_t));
  if (status) {
    record(op, status);
    return NULL;
  }
  return scratch_vector_data(scratch);
}

void TFE_OpSetAttrStringList(TFE_Op* op, const char* attr_name,
                             const void* const* values, const size_t* lengths,
                             int num_values) {
  if (!check_list(op, attr_name, values, num_values)) return;
  if (num_values > 0 && !lengths) {
    record(op, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "attr '%s': the lengths are NULL",
                                attr_name ? attr_name : "(null)"));
    return;
  }
  scratch_vector_t scratch;
  loom_string_view_t* views =
      list_scratch(op, &scratch, num_values, sizeof(loom_string_view_t));
  if (!views) return;
  for (int i = 0; i < num_values; ++i) {
    views[i].data = values[i] ? (const char*)values[i] : "";
    views[i].size = values[i] ? lengths[i] : 0;
  }
  record(op, loom_op_attrs_set_string_list(attrs_of(op), attr_name, views,
                                           num_values));
  scratch_vector_deinitialize(&scratch, loom_allocator_default());
}

void TFE_OpSetAttrIntList(TFE_Op* op, const char* attr_name,
                          const int64_t* values, int num_values) {
  if (!check_list(op, attr_name, values, num_values)) return;
  record(op, loom_op_attrs_set_list(attrs_of(op), attr_name, LOOM_ATTR_KIND_I64,
                                    values, num_values));
}

void TFE_OpSetAttrFloatList(TFE_Op* op, const char* attr_name,
                            const float* values, int num_values) {
  if (!check_list(op, attr_name, values, num_values)) return;
  record(op, loom_op_attrs_set_list(attrs_of(op), attr_name, LOOM_ATTR_KIND_F32,
                                    values, num_values));
}

void TFE_OpSetAttrBoolList(TFE_Op* op, const char* attr_name,
                           const unsigned char* values, int num_values) {
  if (!check_list(op, attr_name, values, num_values)) return;
  scratch_vector_t scratch;
  bool* flags = list_scratch(op, &scratch, num_values, sizeof(bool));
  if (!flags) return;
  for (int i = 0; i < num_values; ++i) flags[i] = values[i] != 0;
  record(op, loom_op_attrs_set_list(attrs_of(op), attr_name,
                                    LOOM_ATTR_KIND_BOOL, flags, num_values));
  scratch_vector_deinitialize(&scratch, loom_allocator_default());
}

void TFE_OpSetAttrTypeList(TFE_Op* op, const char* attr_name,
                           const TF_DataType* values, int num_values) {
  if (!check_list(op, attr_name, values, num_values)) return;
  scratch_vector_t scratch;
  loom_dtype_t* dtypes =
      list_scratch(op, &scratch, num_values, sizeof(loom_dtype_t));
  if (!dtypes) return;
  for (int i = 0; i < num_values; ++i) dtypes[i] = (loom_dtype_t)values[i];
  record(op, loom_op_attrs_set_list(attrs_of(op), attr_name,
                                    LOOM_ATTR_KIND_DTYPE, dtypes, num_values));
  scratch_vector_deinitialize(&scratch, loom_allocator_default());
}

void TFE_OpSetAttrShapeList(TFE_Op* op, const char* attr_name,
                            const int64_t** dims, const int* num_dims,
                            int num_values, TF_Status* out_status) {
  if (!op) {
    loom__tf_status_set(out_status, null_op("TFE_OpSetAttrShapeList"));
    return;
  }
  if (num_values < 0 || (num_values > 0 && (!dims || !num_dims))) {
    loom__tf_status_set(out_status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TFE_OpSetAttrShapeList: invalid "
                                         "list of %d shapes",
                                         num_values));
    return;
  }
  loom_allocator_t allocator = loom_allocator_default();
  loom_shape_t* shapes = NULL;
  loom_status_t result = loom_ok_status();
  if (num_values > 0) {
    result = loom_allocator_malloc(
        allocator, sizeof(*shapes) * (size_t)num_values, (void**)&shapes);
  }
  for (int i = 0; !result && i < num_values; ++i) {
    if (num_dims[i] > LOOM_MAX_SHAPE_RANK) {
      result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "Value specified for `%s` has %d dimensions "
                                "which is over the limit of %d.",
                                attr_name ? attr_name : "(null)", num_dims[i],
                                LOOM_MAX_SHAPE_RANK);
    } else if (num_dims[i] < 0) {
      shapes[i] = loom_shape_unknown();
    } else if (num_dims[i] > 0 && !dims[i]) {
      result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "TFE_OpSetAttrShapeList: dims[%d] is NULL", i);
    } else {
      result = loom_shape_initialize_large(&shapes[i], dims[i], num_dims[i]);
    }
  }
  if (!result) {
    result = loom_op_attrs_set_shape_list(attrs_of(op), attr_name, shapes,
                                          num_values);
  }
  loom_allocator_free(allocator, shapes);
  loom__tf_status_set(out_status, result);
}

void TFE_OpSetAttrFunctionList(TFE_Op* op, const char* attr_name,
                               const TFE_Op** value, int num_values) {
  if (!check_list(op, attr_name, value, num_values)) return;
  loom_allocator_t allocator = loom_allocator_default();
  loom_string_view_t* names = NULL;
  loom_status_t status = loom_ok_status();
  if (num_values > 0) {
    status = loom_allocator_malloc(
        allocator, sizeof(*names) * (size_t)num_values, (void**)&names);
  }
  for (int i = 0; !status && i < num_values; ++i) {
    if (!value[i]) {
      status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "TFE_OpSetAttrFunctionList: function %d is "
                                "NULL",
                                i);
      break;
    }
    names[i].data = loom_eager_op_name(unwrap(value[i]));
    names[i].size = strlen(names[i].data);
  }
  if (!status) {
    loom_attr_value_t list;
    memset(&list, 0, sizeof(list));
    list.kind = LOOM_ATTR_KIND_FUNC;
    list.is_list = true;
    list.count = num_values;
    list.u.list = names;
    status = loom_op_attrs_set_value(attrs_of(op), attr_name, &list);
  }
  loom_allocator_free(allocator, names);
  record(op, status);
}

//===----------------------------------------------------------------------===//
// Lengths, attributes, execution
//===----------------------------------------------------------------------===//

static int arg_length(TFE_Op* op, bool outputs, const char* name,
                      TF_Status* status) {
  int32_t length = -1;
  loom__tf_status_set(
      status, loom_eager_op_arg_length(unwrap(op), outputs, name, &length));
  return length;
}

int TFE_OpGetInputLength(TFE_Op* op, const char* input_name,
                         TF_Status* status) {
  return arg_length(op, false, input_name, status);
}

int TFE_OpGetOutputLength(TFE_Op* op, const char* output_name,
                          TF_Status* status) {
  return arg_length(op, true, output_name, status);
}

const TFE_OpAttrs* TFE_OpGetAttrs(const TFE_Op* op) {
  return (const TFE_OpAttrs*)loom_eager_op_attrs(unwrap(op));
}

void TFE_OpAddAttrs(TFE_Op* op, const TFE_OpAttrs* attrs) {
  if (op) {
    record(op,
           loom_eager_op_add_attrs(unwrap(op), (const loom_op_attrs_t*)attrs));
  }
}

void TFE_Execute(TFE_Op* op, TFE_TensorHandle** retvals, int* num_retvals,
                 TF_Status* status) {
  if (LOOM_UNLIKELY(!op || !num_retvals)) {
    if (num_retvals) *num_retvals = 0;
    loom__tf_status_set(status,
                        !op ? null_op("TFE_Execute")
                            : loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                               "TFE_Execute: num_retvals is "
                                               "NULL"));
    return;
  }
  int32_t count = 0;
  int32_t known = -1;
  loom_status_t result = loom__eager_op_execute_counted(
      unwrap(op), (loom_tensor_handle_t**)retvals, *num_retvals, &count,
      &known);
  if (LOOM_LIKELY(result == NULL)) {
    *num_retvals = count;
  } else if (known >= 0) {
    // As TensorFlow: a failure once the kernel was found (inputs against
    // it, or running it synchronously) leaves the output count and no
    // handles; an earlier one leaves *num_retvals as it was.
    *num_retvals = known;
    for (int32_t i = 0; i < known; ++i) retvals[i] = NULL;
  }
  loom__tf_status_set(status, result);
}
