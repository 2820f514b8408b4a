// The recursive-descent parser's shared state and helpers:
// program_parser.c parses modules and functions, program_parser_ops.c
// operations in the generic form, program_types.c types,
// program_attributes.c attributes, and program_parser_<dialect>.c each
// dialect's custom forms, which the generic parser finds through
// loom__parser_find_custom. Every parse function returns false after
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

struct program_builder_t;

typedef struct parser_t {
  loom_program_t* program;
  struct program_builder_t* builder;  // the functions and regions so far
  loom__arena_t* arena;
  loom_allocator_t allocator;
  program_lexer_t lexer;
  program_token_t tok;
  loom_status_t error;  // the first error, or OK
  program_source_location_t error_location;
  loom__hash_map_t types;  // spelling hash -> program_type_t*
  int32_t type_nesting;    // types being parsed inside one another
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

// Symbol references (or attribute names) collected while parsing one
// operation.
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
// Functions and operations being built
//===----------------------------------------------------------------------===//

typedef struct name_entry_t {
  const char* name;  // without the %
  size_t length;
  int32_t first;  // value id
  int32_t count;
} name_entry_t;

typedef struct function_builder_t {
  program_function_t* function;
  // A region's: the builder of the enclosing function (or region) and of
  // the operation that holds the region. A name the region does not define
  // is looked up there and captured: it becomes an argument of the region
  // (ids in `captures`, in order) and an operand of `owner`.
  struct function_builder_t* parent;
  struct op_builder_t* owner;
  int32_t* captures;
  int32_t num_captures;
  int32_t captures_capacity;
  loom__hash_map_t names;  // name hash (+ probe) -> entry index
  name_entry_t* entries;
  int32_t num_entries;
  int32_t entries_capacity;
  const program_type_t** value_types;
  int32_t num_values;
  int32_t values_capacity;
  program_op_t* ops;
  int32_t num_ops;
  int32_t ops_capacity;
  int32_t num_operand_slots;
  const program_type_t** result_types;
  int32_t num_results;
  int32_t results_capacity;
} function_builder_t;

typedef struct op_builder_t {
  const char* name;
  size_t name_length;
  program_source_location_t location;
  int32_t* operands;
  program_source_location_t* operand_locations;
  int32_t num_operands;
  int32_t operands_capacity;
  const program_type_t** result_types;
  int32_t num_results;
  int32_t results_capacity;
  loom_op_attrs_t attrs;
  bool is_return;
  const char* execute_name;          // set for corert.executeop / .seq
  const char* execute_written_name;  // with its "tf." prefix
  loom_op_attrs_t execute_attrs;
  symbol_refs_t execute_keys;  // the names in execute_attrs, where written
  symbol_refs_t refs;
  // The values its regions capture (ids in the enclosing function), which
  // follow the operands as written, and its regions.
  int32_t* captured;
  int32_t num_captured;
  int32_t captured_capacity;
  const program_function_t** regions;
  int32_t* region_first;  // index into captured where region i's begin
  int32_t num_regions;
  int32_t regions_capacity;
  int32_t region_first_capacity;
} op_builder_t;

// The program's functions so far, and its operations' count (the next
// operation's global index).
typedef struct program_builder_t {
  program_function_t** functions;
  int32_t num_functions;
  int32_t functions_capacity;
  program_function_t** regions;
  int32_t num_regions;
  int32_t regions_capacity;
  int32_t num_ops;
} program_builder_t;

// A call of a function holds one async value per value of the function: a
// bound keeps a short text (`%x:4096 = ... : 4096` over and over) from
// asking each call for gigabytes.
#define PROGRAM_MAX_FUNCTION_VALUES (1 << 20)

// The SSA names of a function (program_parser.c). A name stands for `count`
// values from id `first` (`%x:2`).
const name_entry_t* loom__parser_find_name(const function_builder_t* fb,
                                           const char* name, size_t length);
bool loom__parser_add_name(parser_t* p, function_builder_t* fb,
                           const char* name, size_t length, int32_t first,
                           int32_t count, program_source_location_t at);
// The entry of `name` in fb, or, in a region, in its enclosing functions
// (captured into the region on first use); NULL when no function in scope
// defines it (no error is recorded) and on error (p->error is set).
const name_entry_t* loom__parser_resolve_name(parser_t* p,
                                              function_builder_t* fb,
                                              const char* name, size_t length,
                                              program_source_location_t at);
// Parses a region `{ op... tfrt.return ... }` of the operation being built
// in `b` (the current token is '{'): a function of its own whose results
// are what its return returns and whose arguments are the values it uses
// from the enclosing function.
bool loom__parser_parse_region(parser_t* p, function_builder_t* fb,
                               op_builder_t* b);
// A new value of `type`; *out_id is its id.
bool loom__parser_add_value(parser_t* p, function_builder_t* fb,
                            const program_type_t* type, int32_t* out_id);

// Checks the operands and results of an op whose custom form calls
// @callee (tfrt.call, tfrt.case, ...) against its signature; the first
// `skip` operands are not arguments.
bool loom__parser_check_call_signature(parser_t* p,
                                       const program_function_t* caller,
                                       const program_op_t* op, int32_t skip,
                                       const program_function_t* callee);

//===----------------------------------------------------------------------===//
// Operations (program_parser_ops.c): what generic and custom forms share
//===----------------------------------------------------------------------===//

// Parses one operation (with its result names) into fb.
bool loom__parser_parse_op(parser_t* p, program_builder_t* pb,
                           function_builder_t* fb);

bool loom__parser_add_result(parser_t* p, op_builder_t* b,
                             const program_type_t* type);
// A result of the interned type `spelling` of `kind`.
bool loom__parser_add_result_kind(parser_t* p, op_builder_t* b,
                                  program_type_kind_t kind,
                                  const char* spelling);
// A use: %name or %name#N.
bool loom__parser_parse_operand(parser_t* p, function_builder_t* fb,
                                op_builder_t* b);
// %a, %b, ... (until a token that is not a value; possibly none).
bool loom__parser_parse_operand_list(parser_t* p, function_builder_t* fb,
                                     op_builder_t* b);
// ( %a, %b ) or an empty (); `context` completes "expected '('".
bool loom__parser_parse_paren_operands(parser_t* p, function_builder_t* fb,
                                       op_builder_t* b, const char* context);
// T, T, ... (at least one), in the arena.
bool loom__parser_parse_type_list(parser_t* p, const program_type_t*** types,
                                  int32_t* count);
// `(T...) -> (T...)`: the operands from `first` on have the input types;
// the output types become results, after a !tfrt.chain when
// `chain_result`.
bool loom__parser_parse_signature(parser_t* p, function_builder_t* fb,
                                  op_builder_t* b, int32_t first,
                                  bool chain_result);
// Operand `index` has type `type` (custom forms with fixed types).
bool loom__parser_check_operand_type(parser_t* p, const function_builder_t* fb,
                                     const op_builder_t* b, int32_t index,
                                     const program_type_t* type);
// Operand `index` has the interned type `spelling` of `kind`.
bool loom__parser_check_operand_kind(parser_t* p, const function_builder_t* fb,
                                     const op_builder_t* b, int32_t index,
                                     program_type_kind_t kind,
                                     const char* spelling);
bool loom__parser_check_operand_count(parser_t* p, const op_builder_t* b,
                                      int32_t expected);
// The operands from `first` on have the declared `types` (generic form and
// signatures).
bool loom__parser_check_operand_types(parser_t* p, const function_builder_t* fb,
                                      const op_builder_t* b, int32_t first,
                                      const program_type_t* const* types,
                                      int32_t count);
// An optional trailing attribute dictionary, into b->attrs.
bool loom__parser_parse_optional_attrs(parser_t* p, op_builder_t* b);
// A symbol (@name), into b->refs (the op's callees).
bool loom__parser_parse_callee(parser_t* p, op_builder_t* b);
// `[(] operands [)] [attr-dict]`: `count` operands (-1: one or more; 0:
// none, so that the next operation's `%x =` is not taken for one).
bool loom__parser_parse_simple(parser_t* p, function_builder_t* fb,
                               op_builder_t* b, int32_t count);
// `return %a, ... : T, ...` (func.return, return, tfrt.return).
bool loom__parser_parse_return(parser_t* p, function_builder_t* fb,
                               op_builder_t* b, const char* suffix);

//===----------------------------------------------------------------------===//
// Dialects' custom forms (program_parser_<dialect>.c)
//===----------------------------------------------------------------------===//

// Parses what follows a custom op's name into `b`; `suffix` is the part of
// the name after a family's prefix ("i32" of tfrt.constant.i32), else "".
typedef bool (*program_custom_parse_fn_t)(parser_t* p, function_builder_t* fb,
                                          op_builder_t* b, const char* suffix);

// Checks the signatures of an op's callees once every function is parsed.
typedef bool (*program_check_callees_fn_t)(parser_t* p,
                                           const program_function_t* caller,
                                           const program_op_t* op);

typedef struct program_custom_op_t {
  const char* name;  // the op's full name, or a family's ("tfrt.constant.")
  bool prefix;       // `name` is a family prefix
  bool is_return;    // ends a function, also in the generic form
  bool custom_only;  // the generic form is rejected
  program_custom_parse_fn_t parse;
  // Parses the generic form from its '(' when it needs more than the
  // generic parser does (corert.executeop's op_name and op_attrs); NULL:
  // the generic parser's.
  program_custom_parse_fn_t parse_generic;
  program_check_callees_fn_t check_callees;  // may be NULL
} program_custom_op_t;

// A dialect's custom forms: its ops are named "<name>.<op>".
typedef struct program_dialect_t {
  const char* name;
  const program_custom_op_t* ops;
  size_t num_ops;
} program_dialect_t;

extern const program_dialect_t loom__parser_dialect_func;         // _ops.c
extern const program_dialect_t loom__parser_dialect_tfrt;         // _tfrt.c
extern const program_dialect_t loom__parser_dialect_corert;       // _corert.c
extern const program_dialect_t loom__parser_dialect_ts;           // _ts.c
extern const program_dialect_t loom__parser_dialect_corert_sync;  // _corert.c
extern const program_dialect_t loom__parser_dialect_tfrt_test;  // _tfrt_test.c
extern const program_dialect_t loom__parser_dialect_dht;        // _dht.c
extern const program_dialect_t loom__parser_dialect_dht_sync;   // _dht.c
extern const program_dialect_t loom__parser_dialect_coo;        // _dht.c

// corert's custom forms that corert_sync shares (program_parser_corert.c):
// `executeop(%h) "op"(%args) {attrs} : N`, `const_dense_tensor dense<..>`,
// and `name {attrs}` with a tensor handle result.
bool loom__parser_corert_executeop(parser_t* p, function_builder_t* fb,
                                   op_builder_t* b, const char* suffix);
bool loom__parser_corert_const_dense(parser_t* p, function_builder_t* fb,
                                     op_builder_t* b, const char* suffix);
bool loom__parser_corert_handle_result(parser_t* p, function_builder_t* fb,
                                       op_builder_t* b, const char* suffix);

// The custom form of op `name` (exact names first, then families), or
// NULL; *suffix: what follows a family's prefix, else "". `generic`: the
// name was written in the generic form, which always spells the dialect,
// so an undotted name is not func's (`"return"` is not func.return).
const program_custom_op_t* loom__parser_find_custom(const char* name,
                                                    bool generic,
                                                    const char** suffix);

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
// Attributes (program_attributes.c, program_attr_values.c)
//===----------------------------------------------------------------------===//

// Decodes the string token at the cursor (escapes resolved, in the arena)
// and advances past it.
bool loom__parser_decode_string(parser_t* p, const char** out_data,
                                size_t* out_size);
// Parses one attribute value; symbol references go to `refs` (may be NULL).
bool loom__parser_parse_attr(parser_t* p, symbol_refs_t* refs,
                             program_attr_t* out);
// Parses `{name = value, unit_name, ...}` into `attrs` (may be NULL to
// check and drop); as function attributes (`func`: values become FUNC
// attributes) when `as_functions`. Appends each name with its location to
// `keys` (may be NULL).
bool loom__parser_parse_attr_dict(parser_t* p, loom_op_attrs_t* attrs,
                                  symbol_refs_t* refs, symbol_refs_t* keys,
                                  bool as_functions);
// Appends `name` (in the arena), written at `at`, to `refs` (NULL: none).
bool loom__parser_add_symbol_ref(parser_t* p, symbol_refs_t* refs,
                                 const char* name,
                                 program_source_location_t at);
// Sets attribute `name` of `attrs` from a parsed value, converting it to
// Loom's attribute kinds (the table is in program_attributes.c).
bool loom__parser_set_attr(parser_t* p, loom_op_attrs_t* attrs,
                           const char* name, const program_attr_t* attr);
// Parses an integer or float literal with an optional leading '-'.
bool loom__parser_parse_number(parser_t* p, program_attr_t* out);

#endif  // LOOM_FUNCTION_PROGRAM_PARSER_H_
