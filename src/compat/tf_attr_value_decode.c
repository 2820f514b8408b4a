// Decoding TensorFlow's AttrValue and TensorProto (attr_value.proto,
// tensor.proto) into Loom's attribute values: what a FunctionDef's nodes
// carry.

#include "compat/tf_attr_value_decode.h"

#include <string.h>

#include "loom/tensor.h"
#include "tensor/checked_size.h"

static loom_status_t decode_shape(const Tensorflow__TensorShapeProto* proto,
                                  const char* attr_name, loom_shape_t* out) {
  if (!proto || proto->unknown_rank) {
    *out = loom_shape_unknown();
    return loom_ok_status();
  }
  if (proto->n_dim > LOOM_MAX_SHAPE_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "attr '%s': a shape of rank %zu (at most %d)",
                            attr_name, proto->n_dim, LOOM_MAX_SHAPE_RANK);
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (size_t i = 0; i < proto->n_dim; ++i) {
    int64_t size = proto->dim[i]->size;
    dims[i] = size < 0 ? LOOM_UNKNOWN_DIM : size;
  }
  return loom_shape_initialize_large(out, dims, (int32_t)proto->n_dim);
}

// Element i of a typed value array that TensorFlow may shorten: the last
// value repeats.
#define TYPED_FILL(type, array, count)                           \
  do {                                                           \
    type* data = loom_tensor_data(tensor);                       \
    for (int64_t e = 0; e < n; ++e) {                            \
      size_t from = (size_t)e < (count) ? (size_t)e : (count)-1; \
      data[e] = (type)(array)[from];                             \
    }                                                            \
  } while (0)

loom_status_t loom__tf_decode_tensor(const Tensorflow__TensorProto* proto,
                                     const char* attr_name,
                                     loom_tensor_t** out_tensor) {
  *out_tensor = NULL;
  loom_dtype_t dtype = (loom_dtype_t)proto->dtype;
  if (!loom_dtype_is_valid(dtype) || dtype == LOOM_DTYPE_INVALID ||
      dtype == LOOM_DTYPE_STRING || loom_dtype_size(dtype) == 0) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "attr '%s': tensors of dtype %d are not decoded "
                            "yet",
                            attr_name, (int)proto->dtype);
  }
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(decode_shape(proto->tensor_shape, attr_name, &shape));
  if (!loom_shape_is_fully_defined(&shape)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "attr '%s': a tensor's shape must be known",
                            attr_name);
  }
  int64_t n = 0;
  LOOM_RETURN_IF_ERROR(loom__size_product_checked("TensorProto", attr_name,
                                                  shape.dims, shape.rank, &n));
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(loom_allocator_system(), dtype,
                                                &shape, &tensor));
  size_t bytes = loom_tensor_byte_size(tensor);
  loom_status_t status = loom_ok_status();
  if (proto->tensor_content.len > 0) {
    if (proto->tensor_content.len != bytes) {
      status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "attr '%s': tensor_content has %zu bytes, "
                                "the shape needs %zu",
                                attr_name, proto->tensor_content.len, bytes);
    } else {
      memcpy(loom_tensor_data(tensor), proto->tensor_content.data, bytes);
    }
  } else if (n > 0) {
    size_t count = 0;
    switch (dtype) {
      case LOOM_DTYPE_FLOAT:
        if ((count = proto->n_float_val)) {
          TYPED_FILL(float, proto->float_val, count);
        }
        break;
      case LOOM_DTYPE_DOUBLE:
        if ((count = proto->n_double_val)) {
          TYPED_FILL(double, proto->double_val, count);
        }
        break;
      case LOOM_DTYPE_INT32:
        if ((count = proto->n_int_val))
          TYPED_FILL(int32_t, proto->int_val, count);
        break;
      case LOOM_DTYPE_INT64:
        if ((count = proto->n_int64_val)) {
          TYPED_FILL(int64_t, proto->int64_val, count);
        }
        break;
      case LOOM_DTYPE_BOOL:
        if ((count = proto->n_bool_val))
          TYPED_FILL(bool, proto->bool_val, count);
        break;
      default:
        status = loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                                  "attr '%s': %s tensors are decoded from "
                                  "tensor_content only so far",
                                  attr_name, loom_dtype_name(dtype));
        break;
    }
    if (!status && count == 0) {
      memset(loom_tensor_data(tensor), 0, bytes);  // TensorFlow's zeros
    }
  }
  if (status) {
    loom_tensor_release(tensor);
    return status;
  }
  *out_tensor = tensor;
  return loom_ok_status();
}

static loom_status_t set_list(loom_op_attrs_t* attrs, const char* name,
                              const Tensorflow__AttrValue__ListValue* list) {
  if (list->n_s) {
    loom_string_view_t stack[16];
    loom_string_view_t* views = stack;
    if (list->n_s > 16) {
      LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
          loom_allocator_system(), sizeof(*views) * list->n_s, (void**)&views));
    }
    for (size_t i = 0; i < list->n_s; ++i) {
      views[i].data = (const char*)list->s[i].data;
      views[i].size = list->s[i].len;
    }
    loom_status_t status =
        loom_op_attrs_set_string_list(attrs, name, views, (int64_t)list->n_s);
    if (views != stack) loom_allocator_free(loom_allocator_system(), views);
    return status;
  }
  if (list->n_i) {
    return loom_op_attrs_set_list(attrs, name, LOOM_ATTR_KIND_I64, list->i,
                                  (int64_t)list->n_i);
  }
  if (list->n_f) {
    return loom_op_attrs_set_list(attrs, name, LOOM_ATTR_KIND_F32, list->f,
                                  (int64_t)list->n_f);
  }
  if (list->n_b) {
    bool stack[64];
    if (list->n_b > 64) {
      return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                              "attr '%s': bool lists of more than 64", name);
    }
    for (size_t i = 0; i < list->n_b; ++i) stack[i] = list->b[i] != 0;
    return loom_op_attrs_set_list(attrs, name, LOOM_ATTR_KIND_BOOL, stack,
                                  (int64_t)list->n_b);
  }
  if (list->n_type) {
    // DataType numbers equal loom_dtype_t's.
    loom_dtype_t stack[64];
    if (list->n_type > 64) {
      return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                              "attr '%s': type lists of more than 64", name);
    }
    for (size_t i = 0; i < list->n_type; ++i) {
      stack[i] = (loom_dtype_t)list->type[i];
    }
    return loom_op_attrs_set_list(attrs, name, LOOM_ATTR_KIND_DTYPE, stack,
                                  (int64_t)list->n_type);
  }
  if (list->n_shape) {
    loom_shape_t stack[16];
    if (list->n_shape > 16) {
      return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                              "attr '%s': shape lists of more than 16", name);
    }
    for (size_t i = 0; i < list->n_shape; ++i) {
      LOOM_RETURN_IF_ERROR(decode_shape(list->shape[i], name, &stack[i]));
    }
    return loom_op_attrs_set_shape_list(attrs, name, stack,
                                        (int64_t)list->n_shape);
  }
  if (list->n_tensor || list->n_func) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "attr '%s': lists of tensors or functions are not "
                            "decoded yet",
                            name);
  }
  return loom_ok_status();  // empty: the kind is unknown; left unset
}

loom_status_t loom__tf_decode_attr_value(const Tensorflow__AttrValue* value,
                                         const char* name,
                                         loom_op_attrs_t* attrs) {
  switch (value->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_S:
      return loom_op_attrs_set_string(attrs, name, (const char*)value->s.data,
                                      value->s.len);
    case TENSORFLOW__ATTR_VALUE__VALUE_I:
      return loom_op_attrs_set_i64(attrs, name, value->i);
    case TENSORFLOW__ATTR_VALUE__VALUE_F:
      return loom_op_attrs_set_f32(attrs, name, value->f);
    case TENSORFLOW__ATTR_VALUE__VALUE_B:
      return loom_op_attrs_set_bool(attrs, name, value->b != 0);
    case TENSORFLOW__ATTR_VALUE__VALUE_TYPE:
      return loom_op_attrs_set_dtype(attrs, name, (loom_dtype_t)value->type);
    case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE: {
      loom_shape_t shape;
      LOOM_RETURN_IF_ERROR(decode_shape(value->shape, name, &shape));
      return loom_op_attrs_set_shape(attrs, name, shape.dims, shape.rank);
    }
    case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR: {
      loom_tensor_t* tensor = NULL;
      LOOM_RETURN_IF_ERROR(
          loom__tf_decode_tensor(value->tensor, name, &tensor));
      loom_status_t status = loom_op_attrs_set_tensor(attrs, name, tensor);
      loom_tensor_release(tensor);
      return status;
    }
    case TENSORFLOW__ATTR_VALUE__VALUE_LIST:
      return set_list(attrs, name, value->list);
    case TENSORFLOW__ATTR_VALUE__VALUE_FUNC: {
      const char* function = value->func ? value->func->name : "";
      return loom_op_attrs_set_func(attrs, name, function, strlen(function));
    }
    case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER:
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "attr '%s': a placeholder ('$%s') outside a "
                              "function body",
                              name, value->placeholder);
    default:
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "attr '%s' has no value", name);
  }
}
