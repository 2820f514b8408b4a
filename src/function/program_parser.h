// The recursive-descent parser's shared state and helpers: program_parser.c
// parses functions and operations, program_types.c types,
// program_attributes.c attributes. Every parse function returns false after
// recording the first error (with its location); nothing is parsed after it.

#ifndef LOOM_FUNCTION_PROGRAM_PARSER_H_
#define LOOM_FUNCTION_PROGRAM_PARSER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/hash_map.h"
#include "function/program_internal.h"
#include "function/program_lexer.h"
#include "loom/attr_value.h"
#include "loom/op_attrs.h"
#include "loom/status.h"
#include "loom/tensor.h"

typedef struct parser_t {
  loom_program_t* program;
  loom__arena_t* arena;
  loom_allocator_t allocator;
  program_lexer_t lexer;
  program_token_t tok;
  loom_status_t error;  // the first error, or OK
  program_source_location_t error_location;
  loom__hash_map_t types;  // spelling hash -> program_type_t*
  // Recent type lookups by spelling (the parser asks for the same few
  // types over and over).
  struct {
    const char* text;
    const program_type_t* type;
  } type_cache[8];
  // The last custom operation looked up, by name.
  const char* custom_name;
  size_t custom_name_length;
  const void* custom_op;
  const char* custom_suffix;
  // The distinct op names of corert.executeop: hash (+ probe) -> index
  // into execute_names.
  loom__hash_map_t execute_index;
  const char** execute_names;
  int32_t num_execute_names;
  int32_t execute_names_capacity;
  // Dense attribute tensors made while parsing: released at the end (the
  // frozen attribute sets that use them hold their own references).
  loom_tensor_t** tensors;
  int32_t num_tensors;
  int32_t tensors_capacity;
} parser_t;

//===----------------------------------------------------------------------===//
// Attributes as parsed, before they become a loom_op_attrs_t
//===----------------------------------------------------------------------===//

typedef enum program_attr_kind_t {
  PROGRAM_ATTR_UNIT = 0,
  PROGRAM_ATTR_BOOL,
  PROGRAM_ATTR_INT,     // u.i; type: NULL (untyped: i64) or an integer type
  PROGRAM_ATTR_FLOAT,   // u.f; type: NULL (untyped: f64) or a float type
  PROGRAM_ATTR_STRING,  // u.s
  PROGRAM_ATTR_ARRAY,   // u.array
  PROGRAM_ATTR_DENSE,   // u.tensor
  PROGRAM_ATTR_TYPE,    // type
  PROGRAM_ATTR_SHAPE,   // u.shape
  PROGRAM_ATTR_SYMBOL,  // u.s (without the @)
} program_attr_kind_t;

typedef struct program_attr_t {
  program_attr_kind_t kind;
  const program_type_t* type;
  program_source_location_t location;
  bool is_hex;  // an INT written in hex (a float's bits when typed float)
  union {
    bool b;
    int64_t i;
    double f;
    struct {
      const char* data;
      size_t size;
    } s;
    struct {
      struct program_attr_t* items;
      int32_t count;
    } array;
    loom_tensor_t* tensor;  // borrowed from the parser's list
    struct {
      const int64_t* dims;
      int32_t rank;  // LOOM_UNKNOWN_RANK for `*`
    } shape;
  } u;
} program_attr_t;

// Symbol references collected while parsing one operation.
typedef struct symbol_refs_t {
  int32_t count;
  int32_t capacity;
  const char** names;
  program_source_location_t* locations;
} symbol_refs_t;

//===----------------------------------------------------------------------===//
// Helpers (program_parser.c)
//===----------------------------------------------------------------------===//

// Records an error at `location` (the first one wins); returns false.
bool loom__parser_error_at(parser_t* p, program_source_location_t location,
                           const char* format, ...) LOOM_PRINTF_FORMAT(3, 4);
// An error at the current token, ending with ", got 'TOKEN'".
bool loom__parser_error_got(parser_t* p, const char* format, ...)
    LOOM_PRINTF_FORMAT(2, 3);
bool loom__parser_out_of_memory(parser_t* p);
program_source_location_t loom__parser_location(const parser_t* p);
void loom__parser_advance(parser_t* p);
bool loom__parser_is(const parser_t* p, program_token_kind_t kind);
bool loom__parser_is_keyword(const parser_t* p, const char* keyword);
// Consumes a token of `kind` if present.
bool loom__parser_accept(parser_t* p, program_token_kind_t kind);
// Consumes a token of `kind` or fails with "expected KIND CONTEXT, got ...".
bool loom__parser_expect(parser_t* p, program_token_kind_t kind,
                         const char* context);
// Arena helpers.
bool loom__parser_allocate(parser_t* p, size_t size, void** out);
bool loom__parser_strndup(parser_t* p, const char* data, size_t length,
                          const char** out);
// Grows an arena array of `element_size` elements to hold count + 1.
bool loom__parser_reserve(parser_t* p, void** data, int32_t* capacity,
                          int32_t count, size_t element_size);
// Copies a token's text for messages: at most 40 characters, escaped.
void loom__parser_quote(const program_token_t* token, char* out,
                        size_t capacity);

//===----------------------------------------------------------------------===//
// Types (program_types.c)
//===----------------------------------------------------------------------===//

// Parses a type: builtin (i32, f32, index, tensor<2x?xf32>, complex<f32>)
// or a dialect type (!tfrt.chain, !t.tensor<...>).
bool loom__parser_parse_type(parser_t* p, const program_type_t** out);
// Whether the current token starts a type.
bool loom__parser_at_type(const parser_t* p);
// The interned type of a given kind / spelling.
bool loom__parser_type(parser_t* p, program_type_kind_t kind, const char* text,
                       const program_type_t** out);
// Parses `NxMx` dimension prefixes from the current raw position (after a
// '<'): dims and rank (LOOM_UNKNOWN_RANK for `*x`); `trailing_x` tells
// whether the last dimension is followed by 'x' (tensor types) or not
// (shape attributes). Leaves the lexer at the next token.
bool loom__parser_parse_dims(parser_t* p, bool trailing_x, int64_t* dims,
                             int32_t* rank);
void loom__parser_types_deinitialize(parser_t* p);

//===----------------------------------------------------------------------===//
// Attributes (program_attributes.c)
//===----------------------------------------------------------------------===//

// Parses one attribute value; symbol references go to `refs` (may be NULL).
bool loom__parser_parse_attr(parser_t* p, symbol_refs_t* refs,
                             program_attr_t* out);
// Parses `{name = value, unit_name, ...}` into `attrs` (may be NULL to
// check and drop); as function attributes (`func`: values become FUNC
// attributes) when `as_functions`.
bool loom__parser_parse_attr_dict(parser_t* p, loom_op_attrs_t* attrs,
                                  symbol_refs_t* refs, bool as_functions);
// Sets attribute `name` of `attrs` from a parsed value, converting it to
// Loom's attribute kinds (see program_attributes.c).
bool loom__parser_set_attr(parser_t* p, loom_op_attrs_t* attrs,
                           const char* name, const program_attr_t* attr);
// Parses an integer or float literal with an optional leading '-'.
bool loom__parser_parse_number(parser_t* p, program_attr_t* out);

#endif  // LOOM_FUNCTION_PROGRAM_PARSER_H_
