// Attribute values: turning parsed MLIR attributes into Loom's op
// attribute kinds (the table is in program_attributes.c), and attribute
// dictionaries `{name = value, ...}`.

#include <string.h>

#include "function/program_parser.h"

//===----------------------------------------------------------------------===//
// Conversion to Loom attribute values
//===----------------------------------------------------------------------===//

static bool to_value(parser_t* p, const program_attr_t* attr,
                     loom_attr_value_t* out, int depth);

static loom_attr_kind_t int_kind(const program_type_t* type) {
  if (!type || type->kind == PROGRAM_TYPE_INDEX) return LOOM_ATTR_KIND_I64;
  switch (type->dtype) {
    case LOOM_DTYPE_BOOL:
      return LOOM_ATTR_KIND_BOOL;
    case LOOM_DTYPE_INT8:
    case LOOM_DTYPE_INT16:
    case LOOM_DTYPE_INT32:
    case LOOM_DTYPE_UINT8:
    case LOOM_DTYPE_UINT16:
      return LOOM_ATTR_KIND_I32;
    default:
      return LOOM_ATTR_KIND_I64;
  }
}

// Element size of the C array a typed list of `kind` uses.
static size_t list_element_size(loom_attr_kind_t kind) {
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
    case LOOM_ATTR_KIND_SHAPE:
      return sizeof(loom_shape_t);
    case LOOM_ATTR_KIND_STRING:
    case LOOM_ATTR_KIND_FUNC:
      return sizeof(loom_string_view_t);
    default:
      return sizeof(loom_attr_value_t);
  }
}

static void store_list_element(loom_attr_kind_t kind, void* array,
                               int32_t index, const loom_attr_value_t* v) {
  switch (kind) {
    case LOOM_ATTR_KIND_BOOL:
      ((bool*)array)[index] = v->u.b;
      break;
    case LOOM_ATTR_KIND_I32:
      ((int32_t*)array)[index] = v->u.i32;
      break;
    case LOOM_ATTR_KIND_I64:
      ((int64_t*)array)[index] = v->u.i64;
      break;
    case LOOM_ATTR_KIND_F32:
      ((float*)array)[index] = v->u.f32;
      break;
    case LOOM_ATTR_KIND_F64:
      ((double*)array)[index] = v->u.f64;
      break;
    case LOOM_ATTR_KIND_DTYPE:
      ((loom_dtype_t*)array)[index] = v->u.dtype;
      break;
    case LOOM_ATTR_KIND_TENSOR:
      ((loom_tensor_t**)array)[index] = v->u.tensor;
      break;
    case LOOM_ATTR_KIND_SHAPE: {
      loom_shape_t* shape = &((loom_shape_t*)array)[index];
      memset(shape, 0, sizeof(*shape));
      shape->rank = v->u.shape.rank;
      for (int32_t i = 0; i < v->u.shape.rank; ++i) {
        shape->dims[i] = v->u.shape.dims[i];
      }
      break;
    }
    case LOOM_ATTR_KIND_STRING:
    case LOOM_ATTR_KIND_FUNC:
      ((loom_string_view_t*)array)[index] = v->u.string;
      break;
    default:
      ((loom_attr_value_t*)array)[index] = *v;
      break;
  }
}

static bool array_to_value(parser_t* p, const program_attr_t* attr,
                           loom_attr_value_t* out, int depth) {
  int32_t count = attr->u.array.count;
  loom_attr_value_t* items = NULL;
  if (count > 0 && !loom__parser_allocate(p, sizeof(*items) * (size_t)count,
                                          (void**)&items)) {
    return false;
  }
  bool uniform = true;
  for (int32_t i = 0; i < count; ++i) {
    if (!to_value(p, &attr->u.array.items[i], &items[i], depth + 1)) {
      return false;
    }
    uniform = uniform && !items[i].is_list && items[i].kind == items[0].kind;
  }
  memset(out, 0, sizeof(*out));
  out->is_list = true;
  out->count = count;
  if (count == 0) {
    out->kind = LOOM_ATTR_KIND_I64;
    return true;
  }
  loom_attr_kind_t kind = uniform ? items[0].kind : LOOM_ATTR_KIND_AGGREGATE;
  void* array = NULL;
  if (!loom__parser_allocate(p, list_element_size(kind) * (size_t)count,
                             &array)) {
    return false;
  }
  for (int32_t i = 0; i < count; ++i) {
    store_list_element(kind, array, i, &items[i]);
  }
  out->kind = kind;
  out->u.list = array;
  return true;
}

static bool to_value(parser_t* p, const program_attr_t* attr,
                     loom_attr_value_t* out, int depth) {
  memset(out, 0, sizeof(*out));
  switch (attr->kind) {
    case PROGRAM_ATTR_UNIT:
      out->kind = LOOM_ATTR_KIND_BOOL;
      out->u.b = true;
      return true;
    case PROGRAM_ATTR_BOOL:
      out->kind = LOOM_ATTR_KIND_BOOL;
      out->u.b = attr->u.b;
      return true;
    case PROGRAM_ATTR_INT:
      out->kind = int_kind(attr->type);
      if (out->kind == LOOM_ATTR_KIND_BOOL) {
        out->u.b = attr->u.i != 0;
      } else if (out->kind == LOOM_ATTR_KIND_I32) {
        out->u.i32 = (int32_t)attr->u.i;
      } else {
        out->u.i64 = attr->u.i;
      }
      return true;
    case PROGRAM_ATTR_FLOAT:
      if (attr->type && attr->type->dtype != LOOM_DTYPE_DOUBLE) {
        out->kind = LOOM_ATTR_KIND_F32;
        out->u.f32 = (float)attr->u.f;
      } else {
        out->kind = LOOM_ATTR_KIND_F64;
        out->u.f64 = attr->u.f;
      }
      return true;
    case PROGRAM_ATTR_STRING:
    case PROGRAM_ATTR_SYMBOL:
      out->kind = attr->kind == PROGRAM_ATTR_STRING ? LOOM_ATTR_KIND_STRING
                                                    : LOOM_ATTR_KIND_FUNC;
      out->u.string.data = attr->u.s.data;
      out->u.string.size = attr->u.s.size;
      return true;
    case PROGRAM_ATTR_TYPE:
      if (!attr->type->dtype) {
        return loom__parser_error_at(p, attr->location,
                                     "type '%s' is not a tensor element type "
                                     "and cannot be an op attribute",
                                     attr->type->spelling);
      }
      out->kind = LOOM_ATTR_KIND_DTYPE;
      out->u.dtype = attr->type->dtype;
      return true;
    case PROGRAM_ATTR_SHAPE:
      out->kind = LOOM_ATTR_KIND_SHAPE;
      out->u.shape.rank = attr->u.shape.rank;
      out->u.shape.dims = attr->u.shape.dims;
      return true;
    case PROGRAM_ATTR_DENSE:
      out->kind = LOOM_ATTR_KIND_TENSOR;
      out->u.tensor = attr->u.tensor;
      return true;
    case PROGRAM_ATTR_ARRAY:
      return array_to_value(p, attr, out, depth);
  }
  return loom__parser_error_at(p, attr->location, "unsupported attribute");
}

bool loom__parser_set_attr(parser_t* p, loom_op_attrs_t* attrs,
                           const char* name, const program_attr_t* attr) {
  loom_attr_value_t value;
  if (!to_value(p, attr, &value, 0)) return false;
  loom_status_t status = loom_op_attrs_set_value(attrs, name, &value);
  if (status) {
    bool exhausted = loom_status_code(status) == LOOM_STATUS_RESOURCE_EXHAUSTED;
    bool result = exhausted ? loom__parser_out_of_memory(p)
                            : loom__parser_error_at(
                                  p, attr->location, "attribute '%s': %s", name,
                                  loom_status_message(status));
    loom_status_free(status);
    return result;
  }
  return true;
}

bool loom__parser_parse_attr_dict(parser_t* p, loom_op_attrs_t* attrs,
                                  symbol_refs_t* refs, symbol_refs_t* keys,
                                  bool as_functions) {
  if (!loom__parser_expect(p, TOKEN_LBRACE,
                           "to begin an attribute "
                           "dictionary")) {
    return false;
  }
  if (loom__parser_accept(p, TOKEN_RBRACE)) return true;
  do {
    program_source_location_t at = loom__parser_location(p);
    const char* name = NULL;
    if (p->tok.kind == TOKEN_BARE_ID) {
      if (!loom__parser_strndup(p, p->tok.text, p->tok.length, &name)) {
        return false;
      }
      loom__parser_advance(p);
    } else if (p->tok.kind == TOKEN_STRING) {
      size_t size = 0;
      if (!loom__parser_decode_string(p, &name, &size)) return false;
      if (size == 0 || strlen(name) != size) {
        return loom__parser_error_at(p, at,
                                     "attribute names must be "
                                     "non-empty and free of NUL "
                                     "bytes");
      }
    } else {
      return loom__parser_error_got(p, "expected an attribute name");
    }
    if (keys && !loom__parser_add_symbol_ref(p, keys, name, at)) return false;
    program_attr_t value;
    memset(&value, 0, sizeof(value));
    value.kind = PROGRAM_ATTR_UNIT;
    value.location = at;
    if (loom__parser_accept(p, TOKEN_EQUAL)) {
      if (!loom__parser_parse_attr(p, refs, &value)) return false;
    }
    if (attrs) {
      loom_attr_value_t existing;
      if (loom_op_attrs_get(attrs, name, &existing)) {
        return loom__parser_error_at(p, at,
                                     "duplicate key '%s' in the "
                                     "attribute dictionary",
                                     name);
      }
      if (as_functions) {
        if (value.kind != PROGRAM_ATTR_STRING &&
            value.kind != PROGRAM_ATTR_SYMBOL) {
          return loom__parser_error_at(p, value.location,
                                       "function attribute '%s' must name a "
                                       "function (\"name\" or @name)",
                                       name);
        }
        loom_status_t status =
            loom_op_attrs_set_func(attrs, name, value.u.s.data, value.u.s.size);
        if (status) {
          loom_status_free(status);
          return loom__parser_out_of_memory(p);
        }
      } else if (!loom__parser_set_attr(p, attrs, name, &value)) {
        return false;
      }
    }
  } while (loom__parser_accept(p, TOKEN_COMMA));
  return loom__parser_expect(p, TOKEN_RBRACE,
                             "to close the attribute "
                             "dictionary");
}
