// Attribute value views and their byte encoding (see attr_encoding.h).

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "registry/attr_encoding.h"
#include "tensor/checked_size.h"

const char* loom_attr_kind_name(loom_attr_kind_t kind) {
  static const char* const kNames[LOOM_ATTR_KIND_COUNT] = {
      "INVALID", "BOOL",  "I32",  "I64",   "F32",  "F64",
      "DTYPE",   "SHAPE", "CHAR", "DENSE", "FUNC", "AGGREGATE",
  };
  if ((int)kind < 0 || (int)kind >= LOOM_ATTR_KIND_COUNT) return "INVALID";
  return kNames[kind];
}

size_t loom__attr_array_element_size(loom_attr_kind_t kind) {
  switch (kind) {
    case LOOM_ATTR_KIND_BOOL:
      return sizeof(bool);
    case LOOM_ATTR_KIND_I32:
      return sizeof(int32_t);
    case LOOM_ATTR_KIND_I64:
      return sizeof(int64_t);
    case LOOM_ATTR_KIND_F32:
      return sizeof(float);
    case LOOM_ATTR_KIND_F64:
      return sizeof(double);
    case LOOM_ATTR_KIND_DTYPE:
      return sizeof(loom_dtype_t);
    case LOOM_ATTR_KIND_TENSOR:
      return sizeof(loom_tensor_t*);
    default:
      return 0;
  }
}

static size_t shape_size(int64_t rank) {
  return sizeof(int64_t) * (1 + (size_t)(rank > 0 ? rank : 0));
}

// The view of element `index` of a scalar-kind list of shapes, strings or
// aggregates, and the pointer to the bytes after it.
static const unsigned char* walk_shape(const unsigned char* at,
                                       loom_attr_value_t* out) {
  int64_t rank;
  memcpy(&rank, at, sizeof(rank));
  out->kind = LOOM_ATTR_KIND_SHAPE;
  out->is_list = false;
  out->count = 1;
  out->u.shape.rank = (int32_t)rank;
  out->u.shape.dims = (const int64_t*)(at + sizeof(int64_t));
  return at + shape_size(rank);
}

static const unsigned char* walk_aggregate_element(const unsigned char* at,
                                                   loom_attr_value_t* out) {
  uint8_t kind = at[0];
  uint8_t is_list = at[1];
  int64_t count;
  uint64_t size;
  memcpy(&count, at + 8, sizeof(count));
  memcpy(&size, at + 16, sizeof(size));
  const unsigned char* payload = at + LOOM_ATTR_ELEMENT_HEADER_SIZE;
  loom__attr_decode((loom_attr_kind_t)kind, is_list, count, payload,
                    (size_t)size, out);
  return payload + loom__align8((size_t)size);
}

void loom__attr_decode(loom_attr_kind_t kind, bool is_list, int64_t count,
                       const unsigned char* bytes, size_t size,
                       loom_attr_value_t* out) {
  memset(out, 0, sizeof(*out));
  out->kind = kind;
  out->is_list = is_list;
  out->count = is_list ? count : 1;
  if (is_list) {
    out->encoded = true;
    out->u.list = bytes;
    return;
  }
  switch (kind) {
    case LOOM_ATTR_KIND_BOOL:
      memcpy(&out->u.b, bytes, sizeof(bool));
      break;
    case LOOM_ATTR_KIND_I32:
      memcpy(&out->u.i32, bytes, sizeof(int32_t));
      break;
    case LOOM_ATTR_KIND_I64:
      memcpy(&out->u.i64, bytes, sizeof(int64_t));
      break;
    case LOOM_ATTR_KIND_F32:
      memcpy(&out->u.f32, bytes, sizeof(float));
      break;
    case LOOM_ATTR_KIND_F64:
      memcpy(&out->u.f64, bytes, sizeof(double));
      break;
    case LOOM_ATTR_KIND_DTYPE:
      memcpy(&out->u.dtype, bytes, sizeof(loom_dtype_t));
      break;
    case LOOM_ATTR_KIND_SHAPE:
      walk_shape(bytes, out);
      break;
    case LOOM_ATTR_KIND_STRING:
    case LOOM_ATTR_KIND_FUNC:
      out->u.string.data = (const char*)bytes;
      out->u.string.size = size ? size - 1 : 0;
      break;
    case LOOM_ATTR_KIND_TENSOR:
      memcpy(&out->u.tensor, bytes, sizeof(loom_tensor_t*));
      break;
    default:
      break;
  }
}

// Element `index` of a caller-built list (C arrays of the element type).
static loom_status_t array_element(const loom_attr_value_t* list, int64_t index,
                                   loom_attr_value_t* out) {
  memset(out, 0, sizeof(*out));
  out->kind = list->kind;
  out->count = 1;
  switch (list->kind) {
    case LOOM_ATTR_KIND_SHAPE: {
      const loom_shape_t* shape = (const loom_shape_t*)list->u.list + index;
      out->u.shape.rank = shape->rank;
      out->u.shape.dims = loom_shape_dims(shape);
      return loom_ok_status();
    }
    case LOOM_ATTR_KIND_STRING:
    case LOOM_ATTR_KIND_FUNC:
      out->u.string = ((const loom_string_view_t*)list->u.list)[index];
      return loom_ok_status();
    case LOOM_ATTR_KIND_AGGREGATE:
      *out = ((const loom_attr_value_t*)list->u.list)[index];
      return loom_ok_status();
    default:
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "attribute list of invalid kind %d",
                              (int)list->kind);
  }
}

loom_status_t loom_attr_value_list_element(const loom_attr_value_t* list,
                                           int64_t index,
                                           loom_attr_value_t* out) {
  if (!list || !out) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_attr_value_list_element: %s is NULL",
                            !list ? "list" : "out_element");
  }
  if (!list->is_list) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "attribute value of kind %s is not a list",
                            loom_attr_kind_name(list->kind));
  }
  if (index < 0 || index >= list->count) {
    return loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                            "index %" PRId64 " is outside a list of %" PRId64
                            " elements",
                            index, list->count);
  }
  const unsigned char* base = list->u.list;
  size_t element_size = loom__attr_array_element_size(list->kind);
  if (element_size) {
    loom__attr_decode(list->kind, false, 1, base + (size_t)index * element_size,
                      element_size, out);
    return loom_ok_status();
  }
  if (!list->encoded) return array_element(list, index, out);
  switch (list->kind) {
    case LOOM_ATTR_KIND_SHAPE: {
      const unsigned char* at = base;
      for (int64_t i = 0; i < index; ++i) at = walk_shape(at, out);
      walk_shape(at, out);
      return loom_ok_status();
    }
    case LOOM_ATTR_KIND_STRING:
    case LOOM_ATTR_KIND_FUNC: {
      uint64_t begin, end;
      memcpy(&begin, base + (size_t)index * 8, 8);
      memcpy(&end, base + (size_t)(index + 1) * 8, 8);
      loom__attr_decode(list->kind, false, 1, base + begin,
                        (size_t)(end - begin), out);
      return loom_ok_status();
    }
    case LOOM_ATTR_KIND_AGGREGATE: {
      const unsigned char* at = base;
      for (int64_t i = 0; i < index; ++i) at = walk_aggregate_element(at, out);
      walk_aggregate_element(at, out);
      return loom_ok_status();
    }
    default:
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "attribute list of invalid kind %d",
                              (int)list->kind);
  }
}

loom_status_t loom_attr_value_to_shape(const loom_attr_value_t* value,
                                       loom_shape_t* out) {
  if (!value || !out) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_attr_value_to_shape: %s is NULL",
                            !value ? "value" : "out");
  }
  if (value->kind != LOOM_ATTR_KIND_SHAPE || value->is_list) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "attribute value of kind %s%s is not a shape",
                            value->is_list ? "list of " : "",
                            loom_attr_kind_name(value->kind));
  }
  if (value->u.shape.rank < 0) {
    *out = loom_shape_unknown();
    return loom_ok_status();
  }
  return loom_shape_initialize_large(out, value->u.shape.dims,
                                     value->u.shape.rank);
}

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

static loom_status_t invalid(const char* what) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "invalid attribute value: %s", what);
}

static loom_status_t scalar_encoded_size(const loom_attr_value_t* value,
                                         size_t* out_size) {
  size_t element_size = loom__attr_array_element_size(value->kind);
  if (element_size) {
    if (value->kind == LOOM_ATTR_KIND_TENSOR && !value->u.tensor) {
      return invalid("NULL tensor");
    }
    *out_size = element_size;
    return loom_ok_status();
  }
  switch (value->kind) {
    case LOOM_ATTR_KIND_SHAPE:
      if (value->u.shape.rank < LOOM_UNKNOWN_RANK) {
        return invalid("shape rank below -1");
      }
      if (value->u.shape.rank > 0 && !value->u.shape.dims) {
        return invalid("shape dims are NULL");
      }
      *out_size = shape_size(value->u.shape.rank);
      return loom_ok_status();
    case LOOM_ATTR_KIND_STRING:
    case LOOM_ATTR_KIND_FUNC:
      if (!value->u.string.data && value->u.string.size) {
        return invalid("string data is NULL");
      }
      *out_size = value->u.string.size + 1;
      return loom_ok_status();
    default:
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "invalid attribute value: kind %d",
                              (int)value->kind);
  }
}

loom_status_t loom__attr_encoded_size(const loom_attr_value_t* value,
                                      size_t* out_size) {
  if (!value->is_list) {
    if (value->kind == LOOM_ATTR_KIND_AGGREGATE) {
      return invalid("an aggregate must be a list");
    }
    return scalar_encoded_size(value, out_size);
  }
  if (value->count < 0) return invalid("negative list length");
  if (value->count > 0 && !value->u.list) return invalid("list data is NULL");
  size_t element_size = loom__attr_array_element_size(value->kind);
  if (element_size) {
    if (value->kind == LOOM_ATTR_KIND_TENSOR) {
      loom_tensor_t* const* tensors = value->u.list;
      for (int64_t i = 0; i < value->count; ++i) {
        if (!tensors[i]) return invalid("NULL tensor in a list");
      }
    }
    if (!loom__size_bytes(value->count, element_size, out_size)) {
      return loom__size_overflow_error("attribute value", "list of",
                                       "%" PRId64 " elements of %zu bytes",
                                       value->count, element_size);
    }
    return loom_ok_status();
  }
  if (value->kind != LOOM_ATTR_KIND_SHAPE &&
      value->kind != LOOM_ATTR_KIND_STRING &&
      value->kind != LOOM_ATTR_KIND_FUNC &&
      value->kind != LOOM_ATTR_KIND_AGGREGATE) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "invalid attribute value: kind %d",
                            (int)value->kind);
  }
  // An offset per element and one past the end (strings and funcs).
  size_t total = 0;
  if (value->kind != LOOM_ATTR_KIND_AGGREGATE &&
      value->kind != LOOM_ATTR_KIND_SHAPE &&
      (value->count == INT64_MAX ||
       !loom__size_bytes(value->count + 1, 8, &total))) {
    return loom__size_overflow_error("attribute value", "list of",
                                     "%" PRId64 " strings", value->count);
  }
  for (int64_t i = 0; i < value->count; ++i) {
    loom_attr_value_t element;
    LOOM_RETURN_IF_ERROR(loom_attr_value_list_element(value, i, &element));
    if (value->kind == LOOM_ATTR_KIND_SHAPE &&
        element.u.shape.rank > LOOM_MAX_SHAPE_RANK) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "invalid attribute value: shape rank %d in a "
                              "list is above the maximum rank %d",
                              (int)element.u.shape.rank, LOOM_MAX_SHAPE_RANK);
    }
    size_t size = 0;
    LOOM_RETURN_IF_ERROR(loom__attr_encoded_size(&element, &size));
    if (value->kind == LOOM_ATTR_KIND_AGGREGATE) {
      total += LOOM_ATTR_ELEMENT_HEADER_SIZE + loom__align8(size);
    } else {
      total += size;
    }
  }
  *out_size = total;
  return loom_ok_status();
}

static void encode_shape(int32_t rank, const int64_t* dims,
                         unsigned char* out) {
  int64_t wide_rank = rank;
  memcpy(out, &wide_rank, sizeof(wide_rank));
  if (rank > 0) memcpy(out + 8, dims, sizeof(int64_t) * (size_t)rank);
}

void loom__attr_encode(const loom_attr_value_t* value, unsigned char* out) {
  if (!value->is_list) {
    switch (value->kind) {
      case LOOM_ATTR_KIND_BOOL:
        memcpy(out, &value->u.b, sizeof(bool));
        break;
      case LOOM_ATTR_KIND_I32:
        memcpy(out, &value->u.i32, sizeof(int32_t));
        break;
      case LOOM_ATTR_KIND_I64:
        memcpy(out, &value->u.i64, sizeof(int64_t));
        break;
      case LOOM_ATTR_KIND_F32:
        memcpy(out, &value->u.f32, sizeof(float));
        break;
      case LOOM_ATTR_KIND_F64:
        memcpy(out, &value->u.f64, sizeof(double));
        break;
      case LOOM_ATTR_KIND_DTYPE:
        memcpy(out, &value->u.dtype, sizeof(loom_dtype_t));
        break;
      case LOOM_ATTR_KIND_SHAPE:
        encode_shape(value->u.shape.rank, value->u.shape.dims, out);
        break;
      case LOOM_ATTR_KIND_STRING:
      case LOOM_ATTR_KIND_FUNC:
        if (value->u.string.size) {
          memcpy(out, value->u.string.data, value->u.string.size);
        }
        out[value->u.string.size] = '\0';
        break;
      case LOOM_ATTR_KIND_TENSOR:
        loom_tensor_retain(value->u.tensor);
        memcpy(out, &value->u.tensor, sizeof(loom_tensor_t*));
        break;
      default:
        break;
    }
    return;
  }
  size_t element_size = loom__attr_array_element_size(value->kind);
  if (element_size) {
    if (value->count) {
      memcpy(out, value->u.list, (size_t)value->count * element_size);
    }
    if (value->kind == LOOM_ATTR_KIND_TENSOR) {
      loom_tensor_t* const* tensors = value->u.list;
      for (int64_t i = 0; i < value->count; ++i) loom_tensor_retain(tensors[i]);
    }
    return;
  }
  // SHAPE, STRING, FUNC and AGGREGATE lists, from either layout.
  uint64_t offset = 8 * ((uint64_t)value->count + 1);
  for (int64_t i = 0; i < value->count; ++i) {
    loom_attr_value_t element;
    loom_status_ignore(loom_attr_value_list_element(value, i, &element));
    size_t size = 0;
    loom_status_ignore(loom__attr_encoded_size(&element, &size));
    switch (value->kind) {
      case LOOM_ATTR_KIND_SHAPE:
        encode_shape(element.u.shape.rank, element.u.shape.dims, out);
        out += size;
        break;
      case LOOM_ATTR_KIND_STRING:
      case LOOM_ATTR_KIND_FUNC:
        memcpy(out + (size_t)i * 8, &offset, 8);
        loom__attr_encode(&element, out + offset);
        offset += size;
        break;
      default: {  // AGGREGATE
        memset(out, 0, LOOM_ATTR_ELEMENT_HEADER_SIZE);
        out[0] = (unsigned char)element.kind;
        out[1] = element.is_list ? 1 : 0;
        int64_t count = element.is_list ? element.count : 1;
        uint64_t wide_size = size;
        memcpy(out + 8, &count, 8);
        memcpy(out + 16, &wide_size, 8);
        out += LOOM_ATTR_ELEMENT_HEADER_SIZE;
        memset(out, 0, loom__align8(size));
        loom__attr_encode(&element, out);
        out += loom__align8(size);
        break;
      }
    }
  }
  if (value->kind == LOOM_ATTR_KIND_STRING ||
      value->kind == LOOM_ATTR_KIND_FUNC) {
    memcpy(out + (size_t)value->count * 8, &offset, 8);
  }
}

void loom__attr_for_each_tensor(loom_attr_kind_t kind, bool is_list,
                                int64_t count, const unsigned char* bytes,
                                void (*fn)(loom_tensor_t* tensor)) {
  if (kind == LOOM_ATTR_KIND_TENSOR) {
    int64_t n = is_list ? count : 1;
    for (int64_t i = 0; i < n; ++i) {
      loom_tensor_t* tensor;
      memcpy(&tensor, bytes + (size_t)i * sizeof(tensor), sizeof(tensor));
      fn(tensor);
    }
    return;
  }
  if (kind != LOOM_ATTR_KIND_AGGREGATE) return;
  const unsigned char* at = bytes;
  for (int64_t i = 0; i < count; ++i) {
    int64_t element_count;
    uint64_t size;
    memcpy(&element_count, at + 8, 8);
    memcpy(&size, at + 16, 8);
    loom__attr_for_each_tensor((loom_attr_kind_t)at[0], at[1] != 0,
                               element_count,
                               at + LOOM_ATTR_ELEMENT_HEADER_SIZE, fn);
    at += LOOM_ATTR_ELEMENT_HEADER_SIZE + loom__align8((size_t)size);
  }
}

//===----------------------------------------------------------------------===//
// Comparison and printing
//===----------------------------------------------------------------------===//

static bool tensors_equal(loom_tensor_t* a, loom_tensor_t* b) {
  if (a == b) return true;
  if (!loom_tensor_metadata_equal(loom_tensor_metadata(a),
                                  loom_tensor_metadata(b))) {
    return false;
  }
  if (loom_tensor_byte_size(a) != loom_tensor_byte_size(b)) return false;
  return memcmp(loom_tensor_data(a), loom_tensor_data(b),
                loom_tensor_byte_size(a)) == 0;
}

static bool scalars_equal(const loom_attr_value_t* a,
                          const loom_attr_value_t* b) {
  switch (a->kind) {
    case LOOM_ATTR_KIND_BOOL:
      return a->u.b == b->u.b;
    case LOOM_ATTR_KIND_I32:
      return a->u.i32 == b->u.i32;
    case LOOM_ATTR_KIND_I64:
      return a->u.i64 == b->u.i64;
    case LOOM_ATTR_KIND_F32:
      return memcmp(&a->u.f32, &b->u.f32, sizeof(float)) == 0;
    case LOOM_ATTR_KIND_F64:
      return memcmp(&a->u.f64, &b->u.f64, sizeof(double)) == 0;
    case LOOM_ATTR_KIND_DTYPE:
      return a->u.dtype == b->u.dtype;
    case LOOM_ATTR_KIND_SHAPE:
      return a->u.shape.rank == b->u.shape.rank &&
             (a->u.shape.rank <= 0 ||
              memcmp(a->u.shape.dims, b->u.shape.dims,
                     sizeof(int64_t) * (size_t)a->u.shape.rank) == 0);
    case LOOM_ATTR_KIND_STRING:
    case LOOM_ATTR_KIND_FUNC:
      return a->u.string.size == b->u.string.size &&
             (a->u.string.size == 0 ||
              memcmp(a->u.string.data, b->u.string.data, a->u.string.size) ==
                  0);
    case LOOM_ATTR_KIND_TENSOR:
      return tensors_equal(a->u.tensor, b->u.tensor);
    default:
      return false;
  }
}

bool loom_attr_value_equal(const loom_attr_value_t* a,
                           const loom_attr_value_t* b) {
  if (a->kind != b->kind || a->is_list != b->is_list) return false;
  if (!a->is_list) return scalars_equal(a, b);
  if (a->count != b->count) return false;
  for (int64_t i = 0; i < a->count; ++i) {
    loom_attr_value_t x, y;
    // Both lists are well formed, so reading their elements cannot fail.
    loom_status_ignore(loom_attr_value_list_element(a, i, &x));
    loom_status_ignore(loom_attr_value_list_element(b, i, &y));
    if (!loom_attr_value_equal(&x, &y)) return false;
  }
  return true;
}

static void format_value(loom__text_t* text, const loom_attr_value_t* value);

static void format_scalar(loom__text_t* text, const loom_attr_value_t* value) {
  switch (value->kind) {
    case LOOM_ATTR_KIND_BOOL:
      loom__text_append(text, "%s", value->u.b ? "true" : "false");
      break;
    case LOOM_ATTR_KIND_I32:
      loom__text_append(text, "%" PRId32, value->u.i32);
      break;
    case LOOM_ATTR_KIND_I64:
      loom__text_append(text, "%" PRId64, value->u.i64);
      break;
    case LOOM_ATTR_KIND_F32:
      loom__text_append(text, "%g", (double)value->u.f32);
      break;
    case LOOM_ATTR_KIND_F64:
      loom__text_append(text, "%g", value->u.f64);
      break;
    case LOOM_ATTR_KIND_DTYPE: {
      char upper[32];
      const char* name = loom_dtype_name(value->u.dtype);
      size_t i = 0;
      for (; name[i] && i + 1 < sizeof(upper); ++i) {
        upper[i] =
            (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
      }
      upper[i] = '\0';
      loom__text_append(text, "DT_%s", upper);
      break;
    }
    case LOOM_ATTR_KIND_SHAPE:
      if (value->u.shape.rank < 0) {
        loom__text_append(text, "<unknown>");
        break;
      }
      loom__text_append(text, "[");
      for (int32_t i = 0; i < value->u.shape.rank; ++i) {
        int64_t dim = value->u.shape.dims[i];
        if (dim < 0) {
          loom__text_append(text, "%s?", i ? "," : "");
        } else {
          loom__text_append(text, "%s%" PRId64, i ? "," : "", dim);
        }
      }
      loom__text_append(text, "]");
      break;
    case LOOM_ATTR_KIND_STRING:
    case LOOM_ATTR_KIND_FUNC:
      loom__text_append(text, "\"%.*s\"", (int)value->u.string.size,
                        value->u.string.data ? value->u.string.data : "");
      break;
    case LOOM_ATTR_KIND_TENSOR: {
      char metadata[256];
      loom_tensor_metadata_format(loom_tensor_metadata(value->u.tensor),
                                  metadata, sizeof(metadata));
      loom__text_append(text, "<tensor %s>", metadata);
      break;
    }
    default:
      loom__text_append(text, "<invalid>");
      break;
  }
}

static void format_value(loom__text_t* text, const loom_attr_value_t* value) {
  if (!value->is_list) {
    format_scalar(text, value);
    return;
  }
  loom__text_append(text, "[");
  for (int64_t i = 0; i < value->count; ++i) {
    loom_attr_value_t element;
    loom_status_ignore(loom_attr_value_list_element(value, i, &element));
    if (i) loom__text_append(text, ", ");
    format_value(text, &element);
  }
  loom__text_append(text, "]");
}

size_t loom_attr_value_format(const loom_attr_value_t* value, char* buffer,
                              size_t capacity) {
  loom__text_t text = {
      .buffer = buffer, .capacity = buffer ? capacity : 0, .length = 0};
  if (text.capacity) buffer[0] = '\0';
  format_value(&text, value);
  return text.length;
}
