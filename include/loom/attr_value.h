// loom_attr_value_t: a read-only view of one op attribute value.
//
// Attribute values live in an owner (a loom_op_attrs_t, an op definition's
// defaults); a view borrows from it and is valid while the owner lives and
// is not modified. The kinds cover what TensorFlow ops declare (int, float,
// bool, type, shape, string, tensor, func and lists of them) and what TFRT
// programs pass (i32, f64, nested aggregates).

#ifndef LOOM_ATTR_VALUE_H_
#define LOOM_ATTR_VALUE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/dtype.h"
#include "loom/macros.h"
#include "loom/shape.h"
#include "loom/status.h"
#include "loom/tensor.h"

LOOM_EXTERN_C_BEGIN

typedef enum loom_attr_kind_t {
  LOOM_ATTR_KIND_INVALID = 0,
  LOOM_ATTR_KIND_BOOL = 1,
  LOOM_ATTR_KIND_I32 = 2,
  LOOM_ATTR_KIND_I64 = 3,  // TensorFlow's "int"
  LOOM_ATTR_KIND_F32 = 4,  // TensorFlow's "float"
  LOOM_ATTR_KIND_F64 = 5,
  LOOM_ATTR_KIND_DTYPE = 6,       // TensorFlow's "type"
  LOOM_ATTR_KIND_SHAPE = 7,       // may be partially known
  LOOM_ATTR_KIND_STRING = 8,      // bytes (may hold NULs), NUL-terminated
  LOOM_ATTR_KIND_TENSOR = 9,      // a host tensor
  LOOM_ATTR_KIND_FUNC = 10,       // a function name
  LOOM_ATTR_KIND_AGGREGATE = 11,  // a list of values of any kinds
} loom_attr_kind_t;

#define LOOM_ATTR_KIND_COUNT 12

typedef struct loom_string_view_t {
  const char* data;
  size_t size;
} loom_string_view_t;

typedef struct loom_attr_value_t {
  loom_attr_kind_t kind;
  // A list of `count` elements of `kind`. AGGREGATE values are always lists.
  bool is_list;
  // How a list of SHAPE, STRING, FUNC or AGGREGATE elements is laid out:
  // false (what callers build) for a C array of loom_shape_t,
  // loom_string_view_t or loom_attr_value_t; true for a view into an
  // attribute set's own encoding. loom_attr_value_list_element reads both.
  bool encoded;
  int64_t count;
  union {
    bool b;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    loom_dtype_t dtype;
    struct {
      int32_t rank;  // LOOM_UNKNOWN_RANK when unknown
      const int64_t* dims;
    } shape;
    loom_string_view_t string;  // STRING and FUNC
    loom_tensor_t* tensor;      // borrowed
    // Lists of BOOL, I32, I64, F32, F64, DTYPE and TENSOR are always plain
    // arrays (bool[], int32_t[], int64_t[], float[], double[],
    // loom_dtype_t[], loom_tensor_t*[]); for the other kinds see `encoded`.
    const void* list;
  } u;
} loom_attr_value_t;

// TFRT's names: "BOOL", "I32", "I64", "F32", "F64", "DTYPE", "SHAPE",
// "CHAR" (strings), "DENSE" (tensors), "FUNC", "AGGREGATE".
LOOM_API const char* loom_attr_kind_name(loom_attr_kind_t kind);

// Element `index` of a list value as a scalar value of the list's kind (an
// AGGREGATE's elements have their own kinds). OUT_OF_RANGE for a bad
// index, INVALID_ARGUMENT when `list` is not a list.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_attr_value_list_element(const loom_attr_value_t* list, int64_t index,
                             loom_attr_value_t* out_element);

// A shape attribute value as a loom_shape_t, of any rank up to
// LOOM_MAX_SHAPE_RANK (INVALID_ARGUMENT for other kinds; see
// loom_shape_initialize_large for ranks above LOOM_MAX_RANK).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_attr_value_to_shape(const loom_attr_value_t* value, loom_shape_t* out);

// Equal kind, listness, count and contents (tensors compare by dtype, shape
// and bytes).
LOOM_API bool loom_attr_value_equal(const loom_attr_value_t* a,
                                    const loom_attr_value_t* b);

// Writes the value as TensorFlow's text form would show it: 3, 1.5, true,
// DT_FLOAT, "abc", [2,3] (a shape), [1, 2] (a list), like snprintf; returns
// the full length.
LOOM_API size_t loom_attr_value_format(const loom_attr_value_t* value,
                                       char* buffer, size_t capacity);

LOOM_EXTERN_C_END

#endif  // LOOM_ATTR_VALUE_H_
