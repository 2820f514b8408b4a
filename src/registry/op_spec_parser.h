// Parsers for TensorFlow's op spec mini-language: attribute specs
// ("T: {float, int32} = DT_FLOAT") and argument specs ("x: N * T").
// Syntax only: whether referenced attrs exist is checked at registration.

#ifndef LOOM_REGISTRY_OP_SPEC_PARSER_H_
#define LOOM_REGISTRY_OP_SPEC_PARSER_H_

#include "base/arena.h"
#include "loom/op_attrs.h"
#include "loom/op_def.h"

// Parses an attribute spec into *out_attr (strings and arrays in `arena`,
// `spec` copied). A default value is stored in `defaults` under the attr's
// name. INVALID_ARGUMENT with the column of the problem.
loom_status_t loom__parse_attr_spec(const char* spec, loom__arena_t* arena,
                                    loom_op_attrs_t* defaults,
                                    loom_attr_def_t* out_attr);

// Parses an argument spec. A name that is not a dtype is left in
// type_attr (possibly a list(type) attr: resolved at registration).
loom_status_t loom__parse_arg_spec(const char* spec, loom__arena_t* arena,
                                   loom_arg_def_t* out_arg);

// The dtypes of a group name (numbertype, realnumbertype, quantizedtype,
// and TensorFlow's alternative spellings numerictype, realnumerictype);
// NULL when `name` is not a group.
const loom_dtype_t* loom__dtype_group(const char* name, size_t length,
                                      int32_t* out_count);

#endif  // LOOM_REGISTRY_OP_SPEC_PARSER_H_
