// Attributes: parsing MLIR's attribute syntax (program_attr_values.c turns
// the values into Loom's op attribute kinds the way TFRT turns BEF
// attributes into OpAttrs):
//
//   true / false, unit         BOOL
//   1, 1 : i64, 1 : index      I64        (untyped integers are i64)
//   1 : i32 (also i8, i16, ui8, ui16)     I32
//   1 : i1                     BOOL
//   1.0 : f32 (also bf16, f16) F32        (bf16 and f16 values become f32)
//   1.0, 1.0 : f64             F64        (untyped floats are f64)
//   "s"                        STRING
//   f32, i32, !corert.string   DTYPE
//   #corert.shape<2x?x3>       SHAPE
//   dense<...> : tensor<...>   TENSOR     (a host tensor)
//   @f                         FUNC
//   [x, y, ...]                a list of x's kind when every element has
//                              one (scalar kinds, strings, shapes, tensors,
//                              functions; [] is an empty I64 list), else an
//                              AGGREGATE of the elements

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "function/program_parser.h"
#include "loom/shape.h"

// At most this many elements in a dense attribute (a bigger constant does
// not belong in program text, and a typo must not allocate gigabytes).
enum { kMaxDenseElements = 1 << 22 };

static bool keyword(const parser_t* p, const char* word) {
  return loom__parser_is_keyword(p, word);
}

//===----------------------------------------------------------------------===//
// Numbers
//===----------------------------------------------------------------------===//

bool loom__parser_parse_number(parser_t* p, program_attr_t* out) {
  memset(out, 0, sizeof(*out));
  out->location = loom__parser_location(p);
  bool negative = loom__parser_accept(p, TOKEN_MINUS);
  if (p->tok.kind == TOKEN_INTEGER) {
    const char* text = p->tok.text;
    size_t length = p->tok.length;
    uint64_t value = 0;
    bool hex =
        length > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    for (size_t i = hex ? 2 : 0; i < length; ++i) {
      char c = text[i];
      uint64_t digit = (uint64_t)(c >= '0' && c <= '9'   ? c - '0'
                                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                                         : c - 'A' + 10);
      uint64_t base = hex ? 16 : 10;
      if (value > (UINT64_MAX - digit) / base) {
        return loom__parser_error_got(p, "integer literal is out of range");
      }
      value = value * base + digit;
    }
    if (negative ? value > (uint64_t)INT64_MAX + 1 : false) {
      return loom__parser_error_got(p, "integer literal is out of range");
    }
    out->kind = PROGRAM_ATTR_INT;
    out->is_hex = hex;
    out->u.i = negative ? (int64_t)(0 - value) : (int64_t)value;
    loom__parser_advance(p);
    return true;
  }
  if (p->tok.kind == TOKEN_FLOAT) {
    char buffer[128];
    if (p->tok.length >= sizeof(buffer)) {
      return loom__parser_error_got(p, "float literal is too long");
    }
    memcpy(buffer, p->tok.text, p->tok.length);
    buffer[p->tok.length] = '\0';
    errno = 0;
    double value = strtod(buffer, NULL);
    out->kind = PROGRAM_ATTR_FLOAT;
    out->u.f = negative ? -value : value;
    loom__parser_advance(p);
    return true;
  }
  return loom__parser_error_got(
      p, negative ? "expected a number after '-'" : "expected a number");
}

// The bit width and signedness of an integer type's spelling.
static void integer_width(const program_type_t* type, int* width,
                          int* signedness) {
  const char* s = type->spelling;
  *signedness = 0;  // signless
  if (s[0] == 's') {
    *signedness = 1;
    s += 2;
  } else if (s[0] == 'u') {
    *signedness = -1;
    s += 2;
  } else {
    s += 1;
  }
  *width = atoi(s);
}

// Applies a `: type` suffix to a number.
static bool type_number(parser_t* p, program_attr_t* attr,
                        const program_type_t* type,
                        program_source_location_t at) {
  attr->type = type;
  if (type->kind == PROGRAM_TYPE_FLOAT) {
    if (attr->kind == PROGRAM_ATTR_INT) {
      if (attr->is_hex) {
        // The bits of the float.
        if (type->dtype == LOOM_DTYPE_DOUBLE) {
          uint64_t bits = (uint64_t)attr->u.i;
          double value;
          memcpy(&value, &bits, sizeof(value));
          attr->u.f = value;
        } else {
          uint32_t bits = (uint32_t)attr->u.i;
          float value;
          memcpy(&value, &bits, sizeof(value));
          attr->u.f = value;
        }
      } else {
        attr->u.f = (double)attr->u.i;
      }
      attr->kind = PROGRAM_ATTR_FLOAT;
    }
    return true;
  }
  if (type->kind == PROGRAM_TYPE_INTEGER || type->kind == PROGRAM_TYPE_INDEX) {
    if (attr->kind == PROGRAM_ATTR_FLOAT) {
      return loom__parser_error_at(p, at,
                                   "floating point value not valid for "
                                   "integer type '%s'",
                                   type->spelling);
    }
    if (type->kind == PROGRAM_TYPE_INTEGER) {
      int width = 0;
      int signedness = 0;
      integer_width(type, &width, &signedness);
      if (width < 64) {
        int64_t v = attr->u.i;
        int64_t low = signedness < 0 ? 0 : -((int64_t)1 << (width - 1));
        int64_t high = signedness > 0 ? ((int64_t)1 << (width - 1)) - 1
                                      : (int64_t)(((uint64_t)1 << width) - 1);
        if (v < low || v > high) {
          return loom__parser_error_at(p, at,
                                       "integer constant %lld is out "
                                       "of range for type '%s'",
                                       (long long)v, type->spelling);
        }
      }
    }
    return true;
  }
  return loom__parser_error_at(p, at, "a number cannot have type '%s'",
                               type->spelling);
}

//===----------------------------------------------------------------------===//
// Dense attributes
//===----------------------------------------------------------------------===//

typedef struct dense_values_t {
  int32_t count;
  int32_t capacity;
  program_attr_t* items;  // INT, FLOAT or BOOL
} dense_values_t;

static bool parse_dense_element(parser_t* p, dense_values_t* values,
                                int depth) {
  if (depth > 32) {
    return loom__parser_error_got(p, "dense attribute nests too deeply");
  }
  if (loom__parser_accept(p, TOKEN_LSQUARE)) {
    if (loom__parser_accept(p, TOKEN_RSQUARE)) return true;
    do {
      if (!parse_dense_element(p, values, depth + 1)) return false;
    } while (loom__parser_accept(p, TOKEN_COMMA));
    return loom__parser_expect(p, TOKEN_RSQUARE, "to close the dense list");
  }
  if (values->count >= kMaxDenseElements) {
    return loom__parser_error_got(p,
                                  "dense attribute has more than %d "
                                  "elements",
                                  kMaxDenseElements);
  }
  if (!loom__parser_reserve(p, (void**)&values->items, &values->capacity,
                            values->count, sizeof(program_attr_t))) {
    return false;
  }
  program_attr_t* item = &values->items[values->count];
  if (keyword(p, "true") || keyword(p, "false")) {
    memset(item, 0, sizeof(*item));
    item->kind = PROGRAM_ATTR_BOOL;
    item->u.b = keyword(p, "true");
    item->location = loom__parser_location(p);
    loom__parser_advance(p);
  } else if (p->tok.kind == TOKEN_STRING) {
    return loom__parser_error_got(p,
                                  "string dense attributes are not "
                                  "supported");
  } else if (p->tok.kind == TOKEN_LPAREN) {
    return loom__parser_error_got(p,
                                  "complex dense attributes are not "
                                  "supported");
  } else if (!loom__parser_parse_number(p, item)) {
    return false;
  }
  values->count++;
  return true;
}

// Stores `item` as element `index` of a dense tensor of `dtype`.
static bool store_element(parser_t* p, const program_attr_t* item,
                          loom_dtype_t dtype, void* data, int64_t index) {
  bool is_float = item->kind == PROGRAM_ATTR_FLOAT;
  int64_t i = item->kind == PROGRAM_ATTR_BOOL ? (int64_t)item->u.b : item->u.i;
  double f = is_float ? item->u.f : (double)i;
  if (is_float && !loom_dtype_is_floating(dtype)) {
    return loom__parser_error_at(p, item->location,
                                 "floating point value not valid for a "
                                 "tensor of %s",
                                 loom_dtype_short_name(dtype));
  }
  switch (dtype) {
    case LOOM_DTYPE_BOOL:
      ((uint8_t*)data)[index] = i != 0;
      return true;
    case LOOM_DTYPE_INT8:
    case LOOM_DTYPE_UINT8:
      ((uint8_t*)data)[index] = (uint8_t)i;
      return true;
    case LOOM_DTYPE_INT16:
    case LOOM_DTYPE_UINT16:
      ((uint16_t*)data)[index] = (uint16_t)i;
      return true;
    case LOOM_DTYPE_INT32:
    case LOOM_DTYPE_UINT32:
      ((uint32_t*)data)[index] = (uint32_t)i;
      return true;
    case LOOM_DTYPE_INT64:
    case LOOM_DTYPE_UINT64:
      ((uint64_t*)data)[index] = (uint64_t)i;
      return true;
    case LOOM_DTYPE_HALF:
      ((uint16_t*)data)[index] = loom__float_to_half((float)f);
      return true;
    case LOOM_DTYPE_BFLOAT16:
      ((uint16_t*)data)[index] = loom__float_to_bfloat16((float)f);
      return true;
    case LOOM_DTYPE_FLOAT:
      ((float*)data)[index] = (float)f;
      return true;
    case LOOM_DTYPE_DOUBLE:
      ((double*)data)[index] = f;
      return true;
    default:
      return loom__parser_error_at(p, item->location,
                                   "dense attributes of %s are not supported",
                                   loom_dtype_short_name(dtype));
  }
}

static bool keep_tensor(parser_t* p, loom_tensor_t* tensor) {
  if (!loom__parser_reserve(p, (void**)&p->tensors, &p->tensors_capacity,
                            p->num_tensors, sizeof(loom_tensor_t*))) {
    loom_tensor_release(tensor);
    return false;
  }
  p->tensors[p->num_tensors++] = tensor;
  return true;
}

static bool parse_dense(parser_t* p, program_attr_t* out) {
  program_source_location_t at = loom__parser_location(p);
  loom__parser_advance(p);  // dense
  if (!loom__parser_expect(p, TOKEN_LESS, "after 'dense'")) return false;
  dense_values_t values = {0};
  if (!loom__parser_is(p, TOKEN_GREATER)) {
    if (p->tok.kind == TOKEN_STRING) {
      return loom__parser_error_got(p,
                                    "hex and string dense attributes are "
                                    "not supported");
    }
    if (!parse_dense_element(p, &values, 0)) return false;
  }
  if (!loom__parser_expect(p, TOKEN_GREATER, "to close the dense attribute") ||
      !loom__parser_expect(p, TOKEN_COLON,
                           "before the dense attribute's "
                           "type")) {
    return false;
  }
  program_source_location_t type_at = loom__parser_location(p);
  const program_type_t* type = NULL;
  if (!loom__parser_parse_type(p, &type)) return false;
  if (type->kind != PROGRAM_TYPE_TENSOR) {
    return loom__parser_error_at(p, type_at,
                                 "a dense attribute needs a tensor "
                                 "type, got '%s'",
                                 type->spelling);
  }
  // Re-read the shape from the canonical spelling: tensor<2x3xf32>.
  int64_t dims[LOOM_MAX_RANK];
  int32_t rank = 0;
  const char* s = type->spelling + 7;
  if (*s == '*') {
    return loom__parser_error_at(p, type_at,
                                 "a dense attribute needs a "
                                 "ranked tensor type, got '%s'",
                                 type->spelling);
  }
  while (*s == '?' || (*s >= '0' && *s <= '9')) {
    if (*s == '?') {
      return loom__parser_error_at(p, type_at,
                                   "a dense attribute needs a "
                                   "static shape, got '%s'",
                                   type->spelling);
    }
    char* next = NULL;
    dims[rank++] = strtoll(s, &next, 10);
    s = next + 1;  // 'x'
  }
  loom_shape_t shape;
  loom_status_t status = loom_shape_initialize(&shape, dims, rank);
  if (status) {
    loom_status_free(status);
    return loom__parser_error_at(p, type_at, "invalid shape in '%s'",
                                 type->spelling);
  }
  int64_t count = loom_shape_num_elements(&shape);
  if (count < 0 || count > kMaxDenseElements) {
    return loom__parser_error_at(p, type_at, "'%s' has more than %d elements",
                                 type->spelling, kMaxDenseElements);
  }
  if (values.count != 1 && values.count != count) {
    return loom__parser_error_at(p, at,
                                 "dense attribute has %d elements, but "
                                 "its type '%s' needs %lld",
                                 values.count, type->spelling,
                                 (long long)count);
  }
  loom_dtype_t dtype = type->dtype;
  if (!dtype || loom_dtype_size(dtype) == 0 || loom_dtype_is_complex(dtype) ||
      loom_dtype_is_quantized(dtype)) {
    return loom__parser_error_at(p, type_at,
                                 "dense attributes of '%s' are "
                                 "not supported",
                                 type->spelling);
  }
  loom_tensor_t* tensor = NULL;
  status = loom_tensor_create_dense(p->allocator, dtype, &shape, &tensor);
  if (status) {
    loom_status_free(status);
    return loom__parser_out_of_memory(p);
  }
  if (!keep_tensor(p, tensor)) return false;
  void* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < count; ++i) {
    const program_attr_t* item = &values.items[values.count == 1 ? 0 : i];
    if (!store_element(p, item, dtype, data, i)) return false;
  }
  memset(out, 0, sizeof(*out));
  out->kind = PROGRAM_ATTR_DENSE;
  out->type = type;
  out->location = at;
  out->u.tensor = tensor;
  return true;
}

//===----------------------------------------------------------------------===//
// Attribute values
//===----------------------------------------------------------------------===//

bool loom__parser_decode_string(parser_t* p, const char** out_data,
                                size_t* out_size) {
  char* buffer = NULL;
  if (!loom__parser_allocate(p, p->tok.length + 1, (void**)&buffer)) {
    return false;
  }
  int64_t length = loom__program_string_decode(&p->tok, buffer);
  if (length < 0) return loom__parser_error_got(p, "invalid escape in string");
  buffer[length] = '\0';
  *out_data = buffer;
  *out_size = (size_t)length;
  loom__parser_advance(p);
  return true;
}

static bool parse_shape_attr(parser_t* p, program_attr_t* out) {
  program_source_location_t at = loom__parser_location(p);
  const char* name = p->tok.text;
  size_t length = p->tok.length;
  if (length < 7 || memcmp(name + length - 6, ".shape", 6) != 0) {
    return loom__parser_error_got(p,
                                  "unknown attribute: only #<dialect>.shape"
                                  "<...> attributes are supported");
  }
  loom__parser_advance(p);
  if (!loom__parser_is(p, TOKEN_LESS)) {
    return loom__parser_error_got(p,
                                  "expected '<' after the shape "
                                  "attribute's name");
  }
  loom__parser_advance(p);
  int64_t dims[LOOM_MAX_RANK];
  int32_t rank = 0;
  if (!loom__parser_parse_dims(p, false, dims, &rank)) return false;
  if (!loom__parser_expect(p, TOKEN_GREATER, "to close the shape attribute")) {
    return false;
  }
  int64_t* copy = NULL;
  if (rank > 0 && !loom__parser_allocate(p, sizeof(int64_t) * (size_t)rank,
                                         (void**)&copy)) {
    return false;
  }
  if (rank > 0) memcpy(copy, dims, sizeof(int64_t) * (size_t)rank);
  memset(out, 0, sizeof(*out));
  out->kind = PROGRAM_ATTR_SHAPE;
  out->location = at;
  out->u.shape.dims = copy;
  out->u.shape.rank = rank;
  return true;
}

bool loom__parser_add_symbol_ref(parser_t* p, symbol_refs_t* refs,
                                 const char* name,
                                 program_source_location_t at) {
  if (!refs) return true;
  int32_t capacity = refs->capacity;
  if (!loom__parser_reserve(p, (void**)&refs->names, &capacity, refs->count,
                            sizeof(const char*))) {
    return false;
  }
  capacity = refs->capacity;
  if (!loom__parser_reserve(p, (void**)&refs->locations, &capacity, refs->count,
                            sizeof(program_source_location_t))) {
    return false;
  }
  refs->capacity = capacity;
  refs->names[refs->count] = name;
  refs->locations[refs->count] = at;
  refs->count++;
  return true;
}

static bool parse_attr_depth(parser_t* p, symbol_refs_t* refs,
                             program_attr_t* out, int depth);

static bool parse_array(parser_t* p, symbol_refs_t* refs, program_attr_t* out,
                        int depth) {
  program_source_location_t at = loom__parser_location(p);
  loom__parser_advance(p);  // [
  program_attr_t* items = NULL;
  int32_t count = 0;
  int32_t capacity = 0;
  if (!loom__parser_is(p, TOKEN_RSQUARE)) {
    do {
      if (!loom__parser_reserve(p, (void**)&items, &capacity, count,
                                sizeof(program_attr_t)) ||
          !parse_attr_depth(p, refs, &items[count], depth + 1)) {
        return false;
      }
      count++;
    } while (loom__parser_accept(p, TOKEN_COMMA));
  }
  if (!loom__parser_expect(p, TOKEN_RSQUARE, "to close the array attribute")) {
    return false;
  }
  memset(out, 0, sizeof(*out));
  out->kind = PROGRAM_ATTR_ARRAY;
  out->location = at;
  out->u.array.items = items;
  out->u.array.count = count;
  return true;
}

static bool parse_attr_depth(parser_t* p, symbol_refs_t* refs,
                             program_attr_t* out, int depth) {
  if (depth > 64)
    return loom__parser_error_got(p, "attribute nests too deeply");
  memset(out, 0, sizeof(*out));
  out->location = loom__parser_location(p);
  switch (p->tok.kind) {
    case TOKEN_INTEGER:
    case TOKEN_FLOAT:
    case TOKEN_MINUS: {
      if (!loom__parser_parse_number(p, out)) return false;
      if (loom__parser_accept(p, TOKEN_COLON)) {
        const program_type_t* type = NULL;
        if (!loom__parser_parse_type(p, &type)) return false;
        return type_number(p, out, type, out->location);
      }
      return true;
    }
    case TOKEN_STRING:
      out->kind = PROGRAM_ATTR_STRING;
      if (!loom__parser_decode_string(p, &out->u.s.data, &out->u.s.size))
        return false;
      if (loom__parser_accept(p, TOKEN_COLON)) {
        const program_type_t* type = NULL;
        if (!loom__parser_parse_type(p, &type)) return false;
        out->type = type;
      }
      return true;
    case TOKEN_LSQUARE:
      return parse_array(p, refs, out, depth);
    case TOKEN_SYMBOL: {
      out->kind = PROGRAM_ATTR_SYMBOL;
      if (p->tok.length > 1 && p->tok.text[1] == '"') {
        if (!loom__parser_decode_string(p, &out->u.s.data, &out->u.s.size))
          return false;
      } else {
        if (!loom__parser_strndup(p, p->tok.text + 1, p->tok.length - 1,
                                  &out->u.s.data)) {
          return false;
        }
        out->u.s.size = p->tok.length - 1;
        loom__parser_advance(p);
      }
      return loom__parser_add_symbol_ref(p, refs, out->u.s.data, out->location);
    }
    case TOKEN_ATTR_ID:
      return parse_shape_attr(p, out);
    case TOKEN_TYPE_ID: {
      out->kind = PROGRAM_ATTR_TYPE;
      return loom__parser_parse_type(p, &out->type);
    }
    case TOKEN_LBRACE:
      return loom__parser_error_got(p,
                                    "dictionary attributes are not "
                                    "supported as values");
    case TOKEN_BARE_ID:
      if (keyword(p, "true") || keyword(p, "false")) {
        out->kind = PROGRAM_ATTR_BOOL;
        out->u.b = keyword(p, "true");
        loom__parser_advance(p);
        return true;
      }
      if (keyword(p, "unit")) {
        out->kind = PROGRAM_ATTR_UNIT;
        loom__parser_advance(p);
        return true;
      }
      if (keyword(p, "dense")) return parse_dense(p, out);
      if (loom__parser_at_type(p)) {
        out->kind = PROGRAM_ATTR_TYPE;
        return loom__parser_parse_type(p, &out->type);
      }
      return loom__parser_error_got(p, "expected an attribute value");
    default:
      return loom__parser_error_got(p, "expected an attribute value");
  }
}

bool loom__parser_parse_attr(parser_t* p, symbol_refs_t* refs,
                             program_attr_t* out) {
  return parse_attr_depth(p, refs, out, 0);
}
