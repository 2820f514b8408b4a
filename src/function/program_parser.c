// The program parser: `module`, `func.func`, operations in the generic form
// ("dialect.op"(%a) {attrs} : (T) -> T) and the custom forms of the tfrt,
// corert and ts dialects, into the IR of program_internal.h.

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "function/program_parser.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

program_source_location_t loom__parser_location(const parser_t* p) {
  program_source_location_t location = {p->tok.line, p->tok.column};
  return location;
}

static bool verror_at(parser_t* p, program_source_location_t location,
                      const char* format, va_list args) {
  if (p->error) return false;
  char message[768];
  vsnprintf(message, sizeof(message), format, args);
  p->error = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s:%d:%d: error: %s", p->program->file_name,
                              location.line, location.column, message);
  p->error_location = location;
  return false;
}

bool loom__parser_error_at(parser_t* p, program_source_location_t location,
                           const char* format, ...) {
  va_list args;
  va_start(args, format);
  verror_at(p, location, format, args);
  va_end(args);
  return false;
}

void loom__parser_quote(const program_token_t* token, char* out,
                        size_t capacity) {
  size_t n = 0;
  size_t limit = token->length > 40 ? 40 : token->length;
  for (size_t i = 0; i < limit && n + 5 < capacity; ++i) {
    unsigned char c = (unsigned char)token->text[i];
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out[n++] = (char)c;
    } else {
      n += (size_t)snprintf(out + n, capacity - n, "\\x%02x", c);
    }
  }
  if (limit < token->length && n + 4 < capacity) {
    memcpy(out + n, "...", 3);
    n += 3;
  }
  out[n < capacity ? n : capacity - 1] = '\0';
}

bool loom__parser_error_got(parser_t* p, const char* format, ...) {
  if (p->error) return false;
  char what[512];
  va_list args;
  va_start(args, format);
  vsnprintf(what, sizeof(what), format, args);
  va_end(args);
  if (p->tok.kind == TOKEN_EOF) {
    return loom__parser_error_at(p, loom__parser_location(p),
                                 "%s, got end of file", what);
  }
  char quoted[256];
  loom__parser_quote(&p->tok, quoted, sizeof(quoted));
  return loom__parser_error_at(p, loom__parser_location(p), "%s, got '%s'",
                               what, quoted);
}

bool loom__parser_out_of_memory(parser_t* p) {
  if (p->error) return false;
  p->error =
      loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                       "%s:%d:%d: error: out of memory while parsing",
                       p->program->file_name, p->tok.line, p->tok.column);
  p->error_location = loom__parser_location(p);
  return false;
}

void loom__parser_advance(parser_t* p) {
  p->tok = loom__program_lexer_next(&p->lexer);
}

bool loom__parser_is(const parser_t* p, program_token_kind_t kind) {
  return p->tok.kind == kind;
}

bool loom__parser_is_keyword(const parser_t* p, const char* keyword) {
  size_t length = strlen(keyword);
  return p->tok.kind == TOKEN_BARE_ID && p->tok.length == length &&
         memcmp(p->tok.text, keyword, length) == 0;
}

bool loom__parser_accept(parser_t* p, program_token_kind_t kind) {
  if (p->tok.kind != kind) return false;
  loom__parser_advance(p);
  return true;
}

bool loom__parser_expect(parser_t* p, program_token_kind_t kind,
                         const char* context) {
  if (loom__parser_accept(p, kind)) return true;
  return loom__parser_error_got(p, "expected %s %s",
                                loom__program_token_kind_name(kind), context);
}

bool loom__parser_allocate(parser_t* p, size_t size, void** out) {
  loom_status_t status = loom__arena_allocate(p->arena, size, out);
  if (status) {
    loom_status_free(status);
    return loom__parser_out_of_memory(p);
  }
  return true;
}

bool loom__parser_strndup(parser_t* p, const char* data, size_t length,
                          const char** out) {
  loom_status_t status = loom__arena_strndup(p->arena, data, length, out);
  if (status) {
    loom_status_free(status);
    return loom__parser_out_of_memory(p);
  }
  return true;
}

bool loom__parser_reserve(parser_t* p, void** data, int32_t* capacity,
                          int32_t count, size_t element_size) {
  if (count < *capacity) return true;
  if (*capacity >= INT32_MAX / 2) return loom__parser_out_of_memory(p);
  int32_t new_capacity = *capacity ? *capacity * 2 : 8;
  void* grown = NULL;
  if (!loom__parser_allocate(p, element_size * (size_t)new_capacity, &grown)) {
    return false;
  }
  if (count > 0) memcpy(grown, *data, element_size * (size_t)count);
  *data = grown;  // the old array stays in the arena
  *capacity = new_capacity;
  return true;
}

//===----------------------------------------------------------------------===//
// Function and operation builders
//===----------------------------------------------------------------------===//

typedef struct name_entry_t {
  const char* name;  // without the %
  size_t length;
  int32_t first;  // value id
  int32_t count;
} name_entry_t;

typedef struct function_builder_t {
  program_function_t* function;
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
  const char* execute_name;  // set for corert.executeop / .seq
  loom_op_attrs_t execute_attrs;
  symbol_refs_t refs;
} op_builder_t;

// Pending symbol references of the whole program, resolved at the end.
typedef struct program_builder_t {
  program_function_t** functions;
  int32_t num_functions;
  int32_t functions_capacity;
  int32_t num_ops;
} program_builder_t;

static const name_entry_t* find_name(const function_builder_t* fb,
                                     const char* name, size_t length) {
  uint64_t hash = loom__hash_bytes(name, length);
  uint64_t index = 0;
  for (uint64_t probe = 0;
       loom__hash_map_find(&fb->names, hash + probe, &index); ++probe) {
    const name_entry_t* entry = &fb->entries[index];
    if (entry->length == length && memcmp(entry->name, name, length) == 0) {
      return entry;
    }
  }
  return NULL;
}

static bool add_name(parser_t* p, function_builder_t* fb, const char* name,
                     size_t length, int32_t first, int32_t count,
                     program_source_location_t at) {
  if (find_name(fb, name, length)) {
    return loom__parser_error_at(p, at, "redefinition of SSA value '%%%.*s'",
                                 (int)(length > 64 ? 64 : length), name);
  }
  if (!loom__parser_reserve(p, (void**)&fb->entries, &fb->entries_capacity,
                            fb->num_entries, sizeof(name_entry_t))) {
    return false;
  }
  name_entry_t* entry = &fb->entries[fb->num_entries];
  entry->name = name;  // points into the program's source copy
  entry->length = length;
  entry->first = first;
  entry->count = count;
  uint64_t slot = loom__hash_bytes(name, length);
  while (loom__hash_map_find(&fb->names, slot, NULL)) ++slot;
  loom_status_t status =
      loom__hash_map_insert(&fb->names, slot, (uint64_t)fb->num_entries);
  if (status) {
    loom_status_free(status);
    return loom__parser_out_of_memory(p);
  }
  fb->num_entries++;
  return true;
}

static bool add_value(parser_t* p, function_builder_t* fb,
                      const program_type_t* type, int32_t* out_id) {
  if (!loom__parser_reserve(p, (void**)&fb->value_types, &fb->values_capacity,
                            fb->num_values, sizeof(program_type_t*))) {
    return false;
  }
  fb->value_types[fb->num_values] = type;
  *out_id = fb->num_values++;
  return true;
}

static void op_builder_initialize(parser_t* p, op_builder_t* b) {
  // Field by field: the attribute sets' inline storage needs no clearing.
  b->name = NULL;
  b->name_length = 0;
  b->operands = NULL;
  b->operand_locations = NULL;
  b->num_operands = 0;
  b->operands_capacity = 0;
  b->result_types = NULL;
  b->num_results = 0;
  b->results_capacity = 0;
  b->is_return = false;
  b->execute_name = NULL;
  memset(&b->refs, 0, sizeof(b->refs));
  loom_op_attrs_initialize(&b->attrs, p->allocator);
  loom_op_attrs_initialize(&b->execute_attrs, p->allocator);
}

static void op_builder_deinitialize(op_builder_t* b) {
  loom_op_attrs_deinitialize(&b->attrs);
  loom_op_attrs_deinitialize(&b->execute_attrs);
}

static bool add_result(parser_t* p, op_builder_t* b,
                       const program_type_t* type) {
  if (!loom__parser_reserve(p, (void**)&b->result_types, &b->results_capacity,
                            b->num_results, sizeof(program_type_t*))) {
    return false;
  }
  b->result_types[b->num_results++] = type;
  return true;
}

static bool add_result_kind(parser_t* p, op_builder_t* b,
                            program_type_kind_t kind, const char* spelling) {
  const program_type_t* type = NULL;
  return loom__parser_type(p, kind, spelling, &type) && add_result(p, b, type);
}

// Parses a use: %name or %name#N.
static bool parse_operand(parser_t* p, function_builder_t* fb,
                          op_builder_t* b) {
  if (p->tok.kind != TOKEN_VALUE_ID) {
    return loom__parser_error_got(p, "expected an operand (%%name)");
  }
  program_source_location_t at = loom__parser_location(p);
  const char* name = p->tok.text + 1;
  size_t length = p->tok.length - 1;
  const name_entry_t* entry = find_name(fb, name, length);
  if (!entry) {
    return loom__parser_error_at(p, at, "use of undeclared SSA value '%%%.*s'",
                                 (int)(length > 64 ? 64 : length), name);
  }
  int64_t number = 0;
  const char* after = p->tok.text + p->tok.length;
  const char* end = p->lexer.end;
  if (after < end && *after == '#') {
    const char* q = after + 1;
    if (q >= end || *q < '0' || *q > '9') {
      program_source_location_t hash_at = {at.line,
                                           at.column + (int32_t)p->tok.length};
      return loom__parser_error_at(p, hash_at,
                                   "expected a result number "
                                   "after '#'");
    }
    while (q < end && *q >= '0' && *q <= '9') {
      if (number < 1000000000) number = number * 10 + (*q - '0');
      ++q;
    }
    loom__program_lexer_reset(&p->lexer, q);
  }
  if (number >= entry->count) {
    return loom__parser_error_at(p, at,
                                 "result number %lld is out of range "
                                 "for '%%%.*s', which has %d",
                                 (long long)number,
                                 (int)(length > 64 ? 64 : length), name,
                                 entry->count);
  }
  loom__parser_advance(p);
  int32_t capacity = b->operands_capacity;
  if (!loom__parser_reserve(p, (void**)&b->operands, &capacity, b->num_operands,
                            sizeof(int32_t))) {
    return false;
  }
  capacity = b->operands_capacity;
  if (!loom__parser_reserve(p, (void**)&b->operand_locations, &capacity,
                            b->num_operands,
                            sizeof(program_source_location_t))) {
    return false;
  }
  b->operands_capacity = capacity;
  b->operands[b->num_operands] = entry->first + (int32_t)number;
  b->operand_locations[b->num_operands] = at;
  b->num_operands++;
  return true;
}

// %a, %b, ... (until a token that is not a value).
static bool parse_operand_list(parser_t* p, function_builder_t* fb,
                               op_builder_t* b) {
  if (p->tok.kind != TOKEN_VALUE_ID) return true;
  do {
    if (!parse_operand(p, fb, b)) return false;
  } while (loom__parser_accept(p, TOKEN_COMMA));
  return true;
}

// ( %a, %b ) or an empty ().
static bool parse_paren_operands(parser_t* p, function_builder_t* fb,
                                 op_builder_t* b, const char* context) {
  if (!loom__parser_expect(p, TOKEN_LPAREN, context)) return false;
  if (!parse_operand_list(p, fb, b)) return false;
  return loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list");
}

// T, T, ... (at least one).
static bool parse_type_list(parser_t* p, const program_type_t*** types,
                            int32_t* count) {
  int32_t capacity = 0;
  *count = 0;
  *types = NULL;
  do {
    if (!loom__parser_reserve(p, (void**)types, &capacity, *count,
                              sizeof(program_type_t*)) ||
        !loom__parser_parse_type(p, &(*types)[*count])) {
      return false;
    }
    (*count)++;
  } while (loom__parser_accept(p, TOKEN_COMMA));
  return true;
}

// ( T, ... ) possibly empty.
static bool parse_paren_types(parser_t* p, const program_type_t*** types,
                              int32_t* count, const char* context) {
  *count = 0;
  *types = NULL;
  if (!loom__parser_expect(p, TOKEN_LPAREN, context)) return false;
  if (loom__parser_accept(p, TOKEN_RPAREN)) return true;
  if (!parse_type_list(p, types, count)) return false;
  return loom__parser_expect(p, TOKEN_RPAREN, "to close the type list");
}

// (T, T) -> T  or  (T) -> (T, T)
static bool parse_function_type(parser_t* p, const program_type_t*** inputs,
                                int32_t* num_inputs,
                                const program_type_t*** outputs,
                                int32_t* num_outputs) {
  if (!parse_paren_types(p, inputs, num_inputs,
                         "to begin a function type (T, ...) -> (T, ...)")) {
    return false;
  }
  if (!loom__parser_expect(p, TOKEN_ARROW, "in the function type")) {
    return false;
  }
  if (loom__parser_is(p, TOKEN_LPAREN)) {
    return parse_paren_types(p, outputs, num_outputs, "");
  }
  *num_outputs = 1;
  if (!loom__parser_allocate(p, sizeof(program_type_t*), (void**)outputs)) {
    return false;
  }
  return loom__parser_parse_type(p, &(*outputs)[0]);
}

static const char* op_name_text(const op_builder_t* b) {
  return b->name;
}

// Checks operand `index` has type `type` (custom forms with fixed types).
static bool check_operand_type(parser_t* p, const function_builder_t* fb,
                               const op_builder_t* b, int32_t index,
                               const program_type_t* type) {
  const program_type_t* actual = fb->value_types[b->operands[index]];
  if (actual == type) return true;
  return loom__parser_error_at(p, b->operand_locations[index],
                               "'%s' expects operand #%d of type '%s', got a "
                               "value of type '%s'",
                               op_name_text(b), index, type->spelling,
                               actual->spelling);
}

static bool check_operand_kind(parser_t* p, const function_builder_t* fb,
                               const op_builder_t* b, int32_t index,
                               program_type_kind_t kind, const char* spelling) {
  const program_type_t* type = NULL;
  if (!loom__parser_type(p, kind, spelling, &type)) return false;
  return check_operand_type(p, fb, b, index, type);
}

static bool check_operand_count(parser_t* p, const op_builder_t* b,
                                int32_t expected) {
  if (b->num_operands == expected) return true;
  return loom__parser_error_at(
      p, b->location, "'%s' expects %d operand%s, got %d", op_name_text(b),
      expected, expected == 1 ? "" : "s", b->num_operands);
}

// Checks the operands against declared types (generic form and signatures).
static bool check_operand_types(parser_t* p, const function_builder_t* fb,
                                const op_builder_t* b, int32_t first,
                                const program_type_t* const* types,
                                int32_t count) {
  if (b->num_operands - first != count) {
    return loom__parser_error_at(p, b->location,
                                 "'%s' has %d operand%s, but its type lists "
                                 "%d",
                                 op_name_text(b), b->num_operands - first,
                                 b->num_operands - first == 1 ? "" : "s",
                                 count);
  }
  for (int32_t i = 0; i < count; ++i) {
    const program_type_t* actual = fb->value_types[b->operands[first + i]];
    if (actual != types[i]) {
      return loom__parser_error_at(p, b->operand_locations[first + i],
                                   "use of value expects different type than "
                                   "prior uses: '%s' vs '%s'",
                                   types[i]->spelling, actual->spelling);
    }
  }
  return true;
}

static bool add_results(parser_t* p, op_builder_t* b,
                        const program_type_t* const* types, int32_t count) {
  for (int32_t i = 0; i < count; ++i) {
    if (!add_result(p, b, types[i])) return false;
  }
  return true;
}

// An optional trailing attribute dictionary.
static bool parse_optional_attrs(parser_t* p, op_builder_t* b) {
  if (!loom__parser_is(p, TOKEN_LBRACE)) return true;
  return loom__parser_parse_attr_dict(p, &b->attrs, &b->refs, false);
}

// Parses a symbol (@name) into b->refs (its callees).
static bool parse_callee(parser_t* p, op_builder_t* b) {
  if (p->tok.kind != TOKEN_SYMBOL) {
    return loom__parser_error_got(p, "expected a function name (@name)");
  }
  program_attr_t attr;
  return loom__parser_parse_attr(p, &b->refs, &attr);
}

//===----------------------------------------------------------------------===//
// Custom forms
//===----------------------------------------------------------------------===//

typedef bool (*custom_parse_fn_t)(parser_t* p, function_builder_t* fb,
                                  op_builder_t* b, const char* suffix);

// `name [(] operands [)] [attr-dict]`: `count` operands (-1: one or more;
// 0: none, so that the next operation's `%x =` is not taken for one).
static bool parse_simple(parser_t* p, function_builder_t* fb, op_builder_t* b,
                         int32_t count) {
  if (count != 0) {
    bool parenthesized = loom__parser_accept(p, TOKEN_LPAREN);
    if (!parenthesized || !loom__parser_is(p, TOKEN_RPAREN)) {
      do {
        if (!parse_operand(p, fb, b)) return false;
      } while (loom__parser_accept(p, TOKEN_COMMA));
    }
    if (parenthesized &&
        !loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list")) {
      return false;
    }
    if (count > 0 && !check_operand_count(p, b, count)) return false;
  }
  return parse_optional_attrs(p, b);
}

// Optional `: T, ...` after operands (types of the operands), checked.
static bool parse_optional_operand_types(parser_t* p, function_builder_t* fb,
                                         op_builder_t* b) {
  if (!loom__parser_accept(p, TOKEN_COLON)) return true;
  const program_type_t** types = NULL;
  int32_t count = 0;
  if (!parse_type_list(p, &types, &count)) return false;
  return check_operand_types(p, fb, b, 0, types, count);
}

static bool parse_new_chain(parser_t* p, function_builder_t* fb,
                            op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_simple(p, fb, b, 0) &&
         add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain");
}

static bool parse_merge_chains(parser_t* p, function_builder_t* fb,
                               op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_simple(p, fb, b, -1) && parse_optional_operand_types(p, fb, b) &&
         add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain");
}

static bool parse_return(parser_t* p, function_builder_t* fb, op_builder_t* b,
                         const char* suffix) {
  (void)suffix;
  b->is_return = true;
  if (!parse_operand_list(p, fb, b)) return false;
  if (!parse_optional_attrs(p, b)) return false;
  if (b->num_operands > 0 &&
      !loom__parser_expect(p, TOKEN_COLON, "before the returned types")) {
    return false;
  }
  if (b->num_operands == 0) return true;
  const program_type_t** types = NULL;
  int32_t count = 0;
  if (!parse_type_list(p, &types, &count)) return false;
  return check_operand_types(p, fb, b, 0, types, count);
}

// The scalar types of the tfrt.constant / add / print families.
static bool scalar_suffix(parser_t* p, const op_builder_t* b,
                          const char* suffix, const char* const* allowed,
                          const program_type_t** out) {
  for (; *allowed; ++allowed) {
    if (strcmp(suffix, *allowed) != 0) continue;
    program_type_kind_t kind =
        suffix[0] == 'f' ? PROGRAM_TYPE_FLOAT : PROGRAM_TYPE_INTEGER;
    return loom__parser_type(p, kind, suffix, out);
  }
  return loom__parser_error_at(p, b->location, "custom op '%s' is unknown",
                               op_name_text(b));
}

static const char* const kConstantTypes[] = {"i1",  "i32", "i64",
                                             "f32", "f64", NULL};
static const char* const kArithmeticTypes[] = {"i32", "i64", "f32", "f64",
                                               NULL};
static const char* const kIntegerTypes[] = {"i32", "i64", NULL};

static bool parse_constant(parser_t* p, function_builder_t* fb, op_builder_t* b,
                           const char* suffix) {
  (void)fb;
  const program_type_t* type = NULL;
  if (!scalar_suffix(p, b, suffix, kConstantTypes, &type)) return false;
  program_source_location_t at = loom__parser_location(p);
  program_attr_t value;
  if (loom__parser_is_keyword(p, "true") ||
      loom__parser_is_keyword(p, "false")) {
    if (!loom__parser_parse_attr(p, NULL, &value)) return false;
  } else if (!loom__parser_parse_number(p, &value)) {
    return false;
  }
  if (loom__parser_accept(p, TOKEN_COLON)) {
    const program_type_t* written = NULL;
    program_source_location_t type_at = loom__parser_location(p);
    if (!loom__parser_parse_type(p, &written)) return false;
    if (written != type) {
      return loom__parser_error_at(p, type_at,
                                   "'%s' needs a value of type "
                                   "'%s', got '%s'",
                                   op_name_text(b), type->spelling,
                                   written->spelling);
    }
  }
  // Typed as the constant's type (with its range check).
  program_attr_t typed = value;
  if (value.kind == PROGRAM_ATTR_BOOL) {
    if (type->dtype != LOOM_DTYPE_BOOL) {
      return loom__parser_error_at(p, at, "'%s' needs a number",
                                   op_name_text(b));
    }
    typed.kind = PROGRAM_ATTR_INT;
    typed.u.i = value.u.b;
  }
  typed.type = type;
  if (typed.kind == PROGRAM_ATTR_FLOAT && type->kind == PROGRAM_TYPE_INTEGER) {
    return loom__parser_error_at(p, at,
                                 "floating point value not valid for "
                                 "integer type '%s'",
                                 type->spelling);
  }
  if (typed.kind == PROGRAM_ATTR_INT && type->kind == PROGRAM_TYPE_FLOAT) {
    typed.kind = PROGRAM_ATTR_FLOAT;
    typed.u.f = (double)value.u.i;
    if (value.is_hex && type->dtype == LOOM_DTYPE_FLOAT) {
      uint32_t bits = (uint32_t)value.u.i;  // the float's bits
      float f;
      memcpy(&f, &bits, sizeof(f));
      typed.u.f = f;
    } else if (value.is_hex) {
      uint64_t bits = (uint64_t)value.u.i;
      memcpy(&typed.u.f, &bits, sizeof(bits));
    }
  }
  if (typed.kind == PROGRAM_ATTR_INT && type->dtype != LOOM_DTYPE_INT64) {
    int64_t v = typed.u.i;
    bool fits = type->dtype == LOOM_DTYPE_BOOL
                    ? (v == 0 || v == 1 || v == -1)
                    : (v >= INT32_MIN && v <= UINT32_MAX);
    if (!fits) {
      return loom__parser_error_at(p, at,
                                   "integer constant %lld is out of "
                                   "range for type '%s'",
                                   (long long)v, type->spelling);
    }
    if (type->dtype == LOOM_DTYPE_BOOL) typed.u.i = v != 0;
  }
  if (!loom__parser_set_attr(p, &b->attrs, "value", &typed)) return false;
  return parse_optional_attrs(p, b) && add_result(p, b, type);
}

static bool parse_binary(parser_t* p, function_builder_t* fb, op_builder_t* b,
                         const char* suffix) {
  bool is_equal = strncmp(b->name, "tfrt.equal.", 11) == 0;
  bool is_div = strncmp(b->name, "tfrt.div.", 9) == 0;
  const program_type_t* type = NULL;
  if (!scalar_suffix(p, b, suffix,
                     is_equal || is_div ? kIntegerTypes : kArithmeticTypes,
                     &type) ||
      !parse_simple(p, fb, b, 2) || !check_operand_type(p, fb, b, 0, type) ||
      !check_operand_type(p, fb, b, 1, type)) {
    return false;
  }
  if (is_equal) return add_result_kind(p, b, PROGRAM_TYPE_INTEGER, "i1");
  if (is_div) return add_result(p, b, type) && add_result(p, b, type);
  return add_result(p, b, type);
}

static bool parse_print(parser_t* p, function_builder_t* fb, op_builder_t* b,
                        const char* suffix) {
  const program_type_t* type = NULL;
  return scalar_suffix(p, b, suffix, kConstantTypes, &type) &&
         parse_simple(p, fb, b, 2) && check_operand_type(p, fb, b, 0, type) &&
         check_operand_kind(p, fb, b, 1, PROGRAM_TYPE_CHAIN, "!tfrt.chain") &&
         add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain");
}

// `(%args) attr-dict : (T...) -> (T...)` after the callee(s), with
// `skip` leading operands not in the type's inputs.
static bool parse_call_tail(parser_t* p, function_builder_t* fb,
                            op_builder_t* b, int32_t skip) {
  if (!loom__parser_expect(p, TOKEN_LPAREN, "to begin the call's operands")) {
    return false;
  }
  if (!parse_operand_list(p, fb, b)) return false;
  if (!loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list") ||
      !parse_optional_attrs(p, b) ||
      !loom__parser_expect(p, TOKEN_COLON, "before the call's type")) {
    return false;
  }
  const program_type_t** inputs = NULL;
  const program_type_t** outputs = NULL;
  int32_t num_inputs = 0;
  int32_t num_outputs = 0;
  if (!parse_function_type(p, &inputs, &num_inputs, &outputs, &num_outputs)) {
    return false;
  }
  return check_operand_types(p, fb, b, skip, inputs, num_inputs) &&
         add_results(p, b, outputs, num_outputs);
}

static bool parse_call(parser_t* p, function_builder_t* fb, op_builder_t* b,
                       const char* suffix) {
  (void)suffix;
  return parse_callee(p, b) && parse_call_tail(p, fb, b, 0);
}

static bool parse_case(parser_t* p, function_builder_t* fb, op_builder_t* b,
                       const char* suffix) {
  (void)suffix;
  if (!parse_operand(p, fb, b) ||
      !check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_INTEGER, "i32")) {
    return false;
  }
  if (p->tok.kind != TOKEN_LSQUARE) {
    return loom__parser_error_got(p,
                                  "expected '[' to begin the branches of "
                                  "'tfrt.case'");
  }
  program_attr_t branches;
  if (!loom__parser_parse_attr(p, &b->refs, &branches)) return false;
  if (b->refs.count == 0 || b->refs.count != branches.u.array.count) {
    return loom__parser_error_at(p, branches.location,
                                 "'tfrt.case' needs a list of one or more "
                                 "functions [@f, ...]");
  }
  return parse_call_tail(p, fb, b, 1);
}

static bool parse_tfrt_cond(parser_t* p, function_builder_t* fb,
                            op_builder_t* b, const char* suffix) {
  (void)suffix;
  if (!parse_operand(p, fb, b) ||
      !check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_INTEGER, "i1")) {
    return false;
  }
  loom__parser_accept(p, TOKEN_COMMA);
  if (!parse_callee(p, b)) return false;
  loom__parser_accept(p, TOKEN_COMMA);
  if (!parse_callee(p, b)) return false;
  return parse_call_tail(p, fb, b, 1);
}

static bool parse_get_op_handler(parser_t* p, function_builder_t* fb,
                                 op_builder_t* b, const char* suffix) {
  (void)suffix;
  const char* key = "op_handler_name";
  if (!parse_operand(p, fb, b)) return false;
  loom__parser_accept(p, TOKEN_COMMA);
  if (p->tok.kind != TOKEN_STRING) {
    return loom__parser_error_got(p,
                                  "expected the op handler's name (a "
                                  "string)");
  }
  program_attr_t name;
  if (!loom__parser_parse_attr(p, NULL, &name) ||
      !loom__parser_set_attr(p, &b->attrs, key, &name) ||
      !parse_optional_attrs(p, b)) {
    return false;
  }
  bool get = strcmp(b->name, "corert.get_op_handler") == 0;
  if (get) {
    return check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_CHAIN, "!tfrt.chain") &&
           add_result_kind(p, b, PROGRAM_TYPE_OP_HANDLER, "!corert.ophandler");
  }
  return check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_OP_HANDLER,
                            "!corert.ophandler") &&
         add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain");
}

static bool parse_create_handler(parser_t* p, function_builder_t* fb,
                                 op_builder_t* b, const char* suffix) {
  (void)suffix;
  bool is_null = strcmp(b->name, "corert.create_null_op_handler") == 0;
  if (!parse_simple(p, fb, b, is_null ? 0 : 1)) return false;
  if (!is_null && !check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_OP_HANDLER,
                                      "!corert.ophandler")) {
    return false;
  }
  return add_result_kind(p, b, PROGRAM_TYPE_OP_HANDLER, "!corert.ophandler");
}

// corert.executeop(%h) "op"(%args) {attrs} {fn attrs} : N
// corert.executeop.seq(%h, %ch) "op"(%args) {attrs} {fn attrs} : N
static bool parse_executeop(parser_t* p, function_builder_t* fb,
                            op_builder_t* b, const char* suffix) {
  (void)suffix;
  bool seq = strcmp(b->name, "corert.executeop.seq") == 0;
  if (!parse_paren_operands(p, fb, b, "before the op handler") ||
      !check_operand_count(p, b, seq ? 2 : 1) ||
      !check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_OP_HANDLER,
                          "!corert.ophandler") ||
      (seq &&
       !check_operand_kind(p, fb, b, 1, PROGRAM_TYPE_CHAIN, "!tfrt.chain"))) {
    return false;
  }
  if (p->tok.kind != TOKEN_STRING) {
    return loom__parser_error_got(p,
                                  "expected the name of the op to execute "
                                  "(a string)");
  }
  program_source_location_t name_at = loom__parser_location(p);
  program_attr_t name;
  if (!loom__parser_parse_attr(p, NULL, &name)) return false;
  if (name.u.s.size == 0 || strlen(name.u.s.data) != name.u.s.size) {
    return loom__parser_error_at(p, name_at,
                                 "the op name must be a non-empty "
                                 "string without NUL bytes");
  }
  // "tf.X" runs Loom's op X.
  b->execute_name = name.u.s.data;
  if (name.u.s.size > 3 && memcmp(name.u.s.data, "tf.", 3) == 0) {
    b->execute_name = name.u.s.data + 3;
  }
  int32_t first_arg = b->num_operands;
  if (!loom__parser_expect(p, TOKEN_LPAREN, "to begin the op's operands") ||
      !parse_operand_list(p, fb, b) ||
      !loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list")) {
    return false;
  }
  for (int32_t i = first_arg; i < b->num_operands; ++i) {
    if (!check_operand_kind(p, fb, b, i, PROGRAM_TYPE_TENSOR_HANDLE,
                            "!corert.tensorhandle")) {
      return false;
    }
  }
  if (loom__parser_is(p, TOKEN_LBRACE) &&
      !loom__parser_parse_attr_dict(p, &b->execute_attrs, NULL, false)) {
    return false;
  }
  if (loom__parser_is(p, TOKEN_LBRACE) &&
      !loom__parser_parse_attr_dict(p, &b->execute_attrs, NULL, true)) {
    return false;
  }
  if (!loom__parser_expect(p, TOKEN_COLON, "before the number of results")) {
    return false;
  }
  if (p->tok.kind != TOKEN_INTEGER) {
    return loom__parser_error_got(p, "expected the number of results");
  }
  program_attr_t count;
  if (!loom__parser_parse_number(p, &count)) return false;
  if (count.u.i < 0 || count.u.i > 4096) {
    return loom__parser_error_at(p, count.location,
                                 "the number of results "
                                 "must be in [0, 4096]");
  }
  if (seq && !add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain")) {
    return false;
  }
  for (int64_t i = 0; i < count.u.i; ++i) {
    if (!add_result_kind(p, b, PROGRAM_TYPE_TENSOR_HANDLE,
                         "!corert.tensorhandle")) {
      return false;
    }
  }
  return true;
}

static bool parse_const_dense(parser_t* p, function_builder_t* fb,
                              op_builder_t* b, const char* suffix) {
  (void)fb;
  (void)suffix;
  if (!loom__parser_is_keyword(p, "dense")) {
    return loom__parser_error_got(p,
                                  "expected a dense attribute "
                                  "(dense<...> : tensor<...>)");
  }
  program_attr_t value;
  return loom__parser_parse_attr(p, NULL, &value) &&
         loom__parser_set_attr(p, &b->attrs, "value", &value) &&
         parse_optional_attrs(p, b) &&
         add_result_kind(p, b, PROGRAM_TYPE_TENSOR_HANDLE,
                         "!corert.tensorhandle");
}

// Kernels whose custom form is `name [operands] [attr-dict]` with a fixed
// result.
static bool parse_handle_result(parser_t* p, function_builder_t* fb,
                                op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_simple(p, fb, b, 0) &&
         add_result_kind(p, b, PROGRAM_TYPE_TENSOR_HANDLE,
                         "!corert.tensorhandle");
}

static bool parse_chain_result(parser_t* p, function_builder_t* fb,
                               op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_simple(p, fb, b, -1) &&
         add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain");
}

static bool parse_no_result(parser_t* p, function_builder_t* fb,
                            op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_simple(p, fb, b, -1);
}

static bool parse_to_int32(parser_t* p, function_builder_t* fb, op_builder_t* b,
                           const char* suffix) {
  (void)suffix;
  return parse_simple(p, fb, b, 1) &&
         check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_TENSOR_HANDLE,
                            "!corert.tensorhandle") &&
         add_result_kind(p, b, PROGRAM_TYPE_INTEGER, "i32");
}

static bool parse_to_shape(parser_t* p, function_builder_t* fb, op_builder_t* b,
                           const char* suffix) {
  (void)suffix;
  return parse_simple(p, fb, b, -1) &&
         add_result_kind(p, b, PROGRAM_TYPE_SHAPE, "!ts.shape");
}

static bool parse_opattrs_result(parser_t* p, function_builder_t* fb,
                                 op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_simple(p, fb, b, 0) &&
         add_result_kind(p, b, PROGRAM_TYPE_OP_ATTRS, "!corert.opattrs");
}

static bool parse_build_shape(parser_t* p, function_builder_t* fb,
                              op_builder_t* b, const char* suffix) {
  (void)fb;
  (void)suffix;
  if (p->tok.kind != TOKEN_LSQUARE) {
    return loom__parser_error_got(p, "expected '[' to begin the dimensions");
  }
  program_attr_t dims;
  return loom__parser_parse_attr(p, NULL, &dims) &&
         loom__parser_set_attr(p, &b->attrs, "value", &dims) &&
         parse_optional_attrs(p, b) &&
         add_result_kind(p, b, PROGRAM_TYPE_SHAPE, "!ts.shape");
}

// corert.cond %c @t @f (%ch, %args) : (T...) -> (T...)
// corert.while @cond @body (%ch, %args) : (T...) -> (T...)
static bool parse_corert_control(parser_t* p, function_builder_t* fb,
                                 op_builder_t* b, const char* suffix) {
  (void)suffix;
  bool is_cond = strcmp(b->name, "corert.cond") == 0;
  int32_t skip = 0;
  if (is_cond) {
    if (!parse_operand(p, fb, b) ||
        !check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_TENSOR_HANDLE,
                            "!corert.tensorhandle")) {
      return false;
    }
    loom__parser_accept(p, TOKEN_COMMA);
    skip = 1;
  }
  if (!parse_callee(p, b)) return false;
  loom__parser_accept(p, TOKEN_COMMA);
  if (!parse_callee(p, b)) return false;
  if (!loom__parser_expect(p, TOKEN_LPAREN, "to begin the operands")) {
    return false;
  }
  if (!parse_operand_list(p, fb, b) ||
      !loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list")) {
    return false;
  }
  if (b->num_operands < skip + 1) {
    return loom__parser_error_at(p, b->location,
                                 "'%s' needs an input chain "
                                 "as its first operand in ()",
                                 op_name_text(b));
  }
  if (!check_operand_kind(p, fb, b, skip, PROGRAM_TYPE_CHAIN, "!tfrt.chain") ||
      !parse_optional_attrs(p, b) ||
      !loom__parser_expect(p, TOKEN_COLON, "before the operand types")) {
    return false;
  }
  const program_type_t** inputs = NULL;
  const program_type_t** outputs = NULL;
  int32_t num_inputs = 0;
  int32_t num_outputs = 0;
  if (!parse_function_type(p, &inputs, &num_inputs, &outputs, &num_outputs) ||
      !check_operand_types(p, fb, b, skip + 1, inputs, num_inputs) ||
      !add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain")) {
    return false;
  }
  return add_results(p, b, outputs, num_outputs);
}

typedef struct custom_op_t {
  const char* name;
  bool prefix;  // the name is a family prefix ("tfrt.constant.")
  custom_parse_fn_t parse;
} custom_op_t;

static const custom_op_t kCustomOps[] = {
    {"tfrt.new.chain", false, parse_new_chain},
    {"tfrt.merge.chains", false, parse_merge_chains},
    {"tfrt.return", false, parse_return},
    {"func.return", false, parse_return},
    {"return", false, parse_return},
    {"tfrt.constant.", true, parse_constant},
    {"tfrt.add.", true, parse_binary},
    {"tfrt.equal.", true, parse_binary},
    {"tfrt.div.", true, parse_binary},
    {"tfrt.print.", true, parse_print},
    {"tfrt.call", false, parse_call},
    {"tfrt.case", false, parse_case},
    {"tfrt.cond", false, parse_tfrt_cond},
    {"corert.get_op_handler", false, parse_get_op_handler},
    {"corert.register_op_handler", false, parse_get_op_handler},
    {"corert.create_null_op_handler", false, parse_create_handler},
    {"corert.create_cpu_op_handler", false, parse_create_handler},
    {"corert.create_logging_op_handler", false, parse_create_handler},
    {"corert.executeop", false, parse_executeop},
    {"corert.executeop.seq", false, parse_executeop},
    {"corert.const_dense_tensor", false, parse_const_dense},
    {"corert.const_string_tensor", false, parse_handle_result},
    {"corert.create_dense_tensor.", true, parse_handle_result},
    {"corert.print_tensorhandle", false, parse_chain_result},
    {"corert.tensorhandle_to_int32", false, parse_to_int32},
    {"corert.tensorhandle_to_shape", false, parse_to_shape},
    {"corert.cond", false, parse_corert_control},
    {"corert.while", false, parse_corert_control},
    {"corert.create_op_attrs", false, parse_opattrs_result},
    {"corert.op_attrs_set.", true, parse_chain_result},
    {"corert.op_attrs_set_array.", true, parse_chain_result},
    {"ts.build_shape", false, parse_build_shape},
    {"ts.print_shape", false, parse_no_result},
};

static const custom_op_t* find_custom(const char* name, const char** suffix) {
  for (size_t i = 0; i < sizeof(kCustomOps) / sizeof(kCustomOps[0]); ++i) {
    const custom_op_t* op = &kCustomOps[i];
    if (!op->prefix && strcmp(op->name, name) == 0) {
      *suffix = "";
      return op;
    }
  }
  for (size_t i = 0; i < sizeof(kCustomOps) / sizeof(kCustomOps[0]); ++i) {
    const custom_op_t* op = &kCustomOps[i];
    size_t length = strlen(op->name);
    if (op->prefix && strncmp(op->name, name, length) == 0 &&
        name[length] != '\0') {
      *suffix = name + length;
      return op;
    }
  }
  return NULL;
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

typedef struct result_name_t {
  const char* name;
  size_t length;
  int32_t count;
  program_source_location_t location;
} result_name_t;

static bool parse_generic(parser_t* p, function_builder_t* fb,
                          op_builder_t* b) {
  if (!loom__parser_expect(p, TOKEN_LPAREN, "to begin the operand list")) {
    return false;
  }
  if (!parse_operand_list(p, fb, b) ||
      !loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list")) {
    return false;
  }
  if (loom__parser_is(p, TOKEN_LSQUARE)) {
    return loom__parser_error_got(p,
                                  "successors are not supported: a function "
                                  "has one block");
  }
  if (loom__parser_is(p, TOKEN_LPAREN)) {
    return loom__parser_error_got(p,
                                  "regions are not supported: call a "
                                  "function instead");
  }
  if (loom__parser_is(p, TOKEN_LESS)) {
    return loom__parser_error_got(p,
                                  "properties are not supported: use "
                                  "attributes");
  }
  if (!parse_optional_attrs(p, b) ||
      !loom__parser_expect(p, TOKEN_COLON, "before the operation's type")) {
    return false;
  }
  const program_type_t** inputs = NULL;
  const program_type_t** outputs = NULL;
  int32_t num_inputs = 0;
  int32_t num_outputs = 0;
  return parse_function_type(p, &inputs, &num_inputs, &outputs, &num_outputs) &&
         check_operand_types(p, fb, b, 0, inputs, num_inputs) &&
         add_results(p, b, outputs, num_outputs);
}

// Records the program-wide array of frozen sets to release.
static bool keep_frozen(parser_t* p, const loom_op_attrs_t* frozen) {
  loom_program_t* program = p->program;
  if (program->num_frozen == program->frozen_capacity) {
    int32_t capacity =
        program->frozen_capacity ? program->frozen_capacity * 2 : 16;
    const loom_op_attrs_t** grown = NULL;
    loom_status_t status = loom_allocator_malloc(
        p->allocator, sizeof(*grown) * (size_t)capacity, (void**)&grown);
    if (status) {
      loom_status_free(status);
      loom_op_attrs_release(frozen);
      return loom__parser_out_of_memory(p);
    }
    if (program->num_frozen) {
      memcpy(grown, program->frozen,
             sizeof(*grown) * (size_t)program->num_frozen);
    }
    loom_allocator_free(p->allocator, (void*)program->frozen);
    program->frozen = grown;
    program->frozen_capacity = capacity;
  }
  program->frozen[program->num_frozen++] = frozen;
  return true;
}

static bool freeze(parser_t* p, const loom_op_attrs_t* attrs,
                   const loom_op_attrs_t** out) {
  *out = NULL;
  if (loom_op_attrs_count(attrs) == 0) return true;
  loom_status_t status = loom_op_attrs_freeze(attrs, out);
  if (status) {
    loom_status_free(status);
    return loom__parser_out_of_memory(p);
  }
  return keep_frozen(p, *out);
}

// One name and index per distinct op name of corert.executeop: executors
// cache a prepared op per index.
static bool intern_execute_name(parser_t* p, const char* name,
                                const char** out_name, int32_t* out_index) {
  size_t length = strlen(name);
  uint64_t hash = loom__hash_bytes(name, length);
  uint64_t index = 0;
  for (uint64_t probe = 0;
       loom__hash_map_find(&p->execute_index, hash + probe, &index); ++probe) {
    if (strcmp(p->execute_names[index], name) == 0) {
      *out_name = p->execute_names[index];
      *out_index = (int32_t)index;
      return true;
    }
  }
  if (!loom__parser_reserve(p, (void**)&p->execute_names,
                            &p->execute_names_capacity, p->num_execute_names,
                            sizeof(const char*))) {
    return false;
  }
  uint64_t slot = hash;
  while (loom__hash_map_find(&p->execute_index, slot, NULL)) ++slot;
  loom_status_t status = loom__hash_map_insert(&p->execute_index, slot,
                                               (uint64_t)p->num_execute_names);
  if (status) {
    loom_status_free(status);
    return loom__parser_out_of_memory(p);
  }
  p->execute_names[p->num_execute_names] = name;  // in the arena already
  *out_name = name;
  *out_index = p->num_execute_names++;
  return true;
}

static bool finish_op(parser_t* p, program_builder_t* pb,
                      function_builder_t* fb, op_builder_t* b,
                      const result_name_t* names, int32_t num_names,
                      int32_t named_values) {
  if (num_names > 0 && named_values != b->num_results) {
    return loom__parser_error_at(
        p, b->location,
        "'%s' has %d result%s, but %d name%s %s "
        "given",
        b->name, b->num_results, b->num_results == 1 ? "" : "s", named_values,
        named_values == 1 ? "" : "s", named_values == 1 ? "is" : "are");
  }
  if (!loom__parser_reserve(p, (void**)&fb->ops, &fb->ops_capacity, fb->num_ops,
                            sizeof(program_op_t))) {
    return false;
  }
  program_op_t* op = &fb->ops[fb->num_ops];
  memset(op, 0, sizeof(*op));
  op->name = b->name;  // in the arena already
  op->location = b->location;
  op->is_return = b->is_return;
  op->global_index = pb->num_ops;
  op->num_operands = b->num_operands;
  op->operands = b->operands;  // arena
  op->num_results = b->num_results;
  op->first_result = fb->num_values;
  for (int32_t i = 0; i < b->num_results; ++i) {
    int32_t id = 0;
    if (!add_value(p, fb, b->result_types[i], &id)) return false;
  }
  int32_t next = op->first_result;
  for (int32_t i = 0; i < num_names; ++i) {
    if (!add_name(p, fb, names[i].name, names[i].length, next, names[i].count,
                  names[i].location)) {
      return false;
    }
    next += names[i].count;
  }
  if (!freeze(p, &b->attrs, &op->attrs)) return false;
  if (b->execute_name) {
    if (!intern_execute_name(p, b->execute_name, &op->execute_name,
                             &op->execute_index) ||
        !freeze(p, &b->execute_attrs, &op->execute_attrs)) {
      return false;
    }
  }
  // Resolved once every function is known.
  op->num_callees = b->refs.count;
  op->callee_names = b->refs.names;
  fb->num_operand_slots += b->num_operands;
  fb->num_ops++;
  pb->num_ops++;
  return true;
}

static bool parse_op(parser_t* p, program_builder_t* pb,
                     function_builder_t* fb) {
  result_name_t names[16];
  int32_t num_names = 0;
  int32_t named_values = 0;
  if (p->tok.kind == TOKEN_VALUE_ID) {
    do {
      if (p->tok.kind != TOKEN_VALUE_ID) {
        return loom__parser_error_got(p, "expected a result name (%%name)");
      }
      if (num_names == 16) {
        return loom__parser_error_got(p,
                                      "more than 16 result names; use "
                                      "%%name:N");
      }
      result_name_t* name = &names[num_names++];
      name->name = p->tok.text + 1;
      name->length = p->tok.length - 1;
      name->location = loom__parser_location(p);
      name->count = 1;
      loom__parser_advance(p);
      if (loom__parser_accept(p, TOKEN_COLON)) {
        if (p->tok.kind != TOKEN_INTEGER) {
          return loom__parser_error_got(p,
                                        "expected the number of results "
                                        "after ':'");
        }
        program_attr_t count;
        if (!loom__parser_parse_number(p, &count)) return false;
        if (count.u.i < 1 || count.u.i > 4096) {
          return loom__parser_error_at(p, count.location,
                                       "result group size "
                                       "must be in [1, "
                                       "4096]");
        }
        name->count = (int32_t)count.u.i;
      }
      named_values += name->count;
    } while (loom__parser_accept(p, TOKEN_COMMA));
    if (!loom__parser_expect(p, TOKEN_EQUAL, "after the result names")) {
      return false;
    }
  }
  op_builder_t b;
  op_builder_initialize(p, &b);
  b.location = loom__parser_location(p);
  bool ok = false;
  if (p->tok.kind == TOKEN_STRING) {
    const char* name = NULL;
    size_t size = 0;
    program_attr_t attr;
    if (loom__parser_parse_attr(p, NULL, &attr)) {
      name = attr.u.s.data;
      size = attr.u.s.size;
      if (size == 0 || strlen(name) != size) {
        loom__parser_error_at(p, b.location,
                              "an operation name must be a "
                              "non-empty string without NUL "
                              "bytes");
      } else {
        b.name = name;
        b.name_length = size;
        b.is_return = strcmp(name, "tfrt.return") == 0 ||
                      strcmp(name, "func.return") == 0;
        if (strcmp(name, "corert.executeop") == 0 ||
            strcmp(name, "corert.executeop.seq") == 0) {
          loom__parser_error_at(p, b.location,
                                "'%s' must be written in its "
                                "custom form",
                                name);
        } else {
          ok = parse_generic(p, fb, &b);
        }
      }
    }
  } else if (p->tok.kind == TOKEN_BARE_ID) {
    const char* name = NULL;
    const char* suffix = NULL;
    const custom_op_t* custom = NULL;
    bool known = p->custom_name && p->custom_name_length == p->tok.length &&
                 memcmp(p->custom_name, p->tok.text, p->tok.length) == 0;
    if (known) {
      name = p->custom_name;
      custom = p->custom_op;
      suffix = p->custom_suffix;
    } else if (loom__parser_strndup(p, p->tok.text, p->tok.length, &name)) {
      custom = find_custom(name, &suffix);
      if (custom) {
        p->custom_name = name;
        p->custom_name_length = p->tok.length;
        p->custom_op = custom;
        p->custom_suffix = suffix;
      }
    }
    if (name) {
      b.name = name;
      b.name_length = p->tok.length;
      if (!custom) {
        loom__parser_error_at(p, b.location,
                              "custom op '%s' is unknown; write "
                              "it in the generic form \"%s\"(...)"
                              " : (...) -> (...)",
                              name, name);
      } else {
        loom__parser_advance(p);
        ok = custom->parse(p, fb, &b, suffix);
      }
    }
  } else if (p->tok.kind == TOKEN_BLOCK_ID) {
    loom__parser_error_got(p,
                           "blocks are not supported: a function has one "
                           "block");
  } else {
    loom__parser_error_got(p, "expected an operation");
  }
  if (ok && loom__parser_is_keyword(p, "loc")) {
    // A trailing location: loc("file":1:2), loc(unknown), ...: skipped.
    loom__parser_advance(p);
    if (!loom__parser_is(p, TOKEN_LPAREN)) {
      ok = loom__parser_error_got(p, "expected '(' after 'loc'");
    }
    int depth = 0;
    while (ok) {
      if (p->tok.kind == TOKEN_EOF || p->tok.kind == TOKEN_ERROR) {
        ok = loom__parser_error_got(p, "unterminated location");
        break;
      }
      if (p->tok.kind == TOKEN_LPAREN) depth++;
      if (p->tok.kind == TOKEN_RPAREN) depth--;
      loom__parser_advance(p);
      if (depth == 0) break;
    }
  }
  if (ok) ok = finish_op(p, pb, fb, &b, names, num_names, named_values);
  op_builder_deinitialize(&b);
  return ok;
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

static bool parse_symbol_name(parser_t* p, const char** out,
                              program_source_location_t* at) {
  *at = loom__parser_location(p);
  if (p->tok.kind != TOKEN_SYMBOL) {
    return loom__parser_error_got(p, "expected the function's name (@name)");
  }
  program_attr_t attr;
  if (!loom__parser_parse_attr(p, NULL, &attr)) return false;
  if (attr.u.s.size == 0 || strlen(attr.u.s.data) != attr.u.s.size) {
    return loom__parser_error_at(p, *at,
                                 "a function name must be non-empty "
                                 "and free of NUL bytes");
  }
  *out = attr.u.s.data;
  return true;
}

static bool parse_function(parser_t* p, program_builder_t* pb) {
  loom__parser_advance(p);  // func.func
  if (loom__parser_is_keyword(p, "private") ||
      loom__parser_is_keyword(p, "public") ||
      loom__parser_is_keyword(p, "nested")) {
    loom__parser_advance(p);
  }
  program_source_location_t at;
  const char* name = NULL;
  if (!parse_symbol_name(p, &name, &at)) return false;
  if (loom__program_find_function(p->program, name, strlen(name))) {
    return loom__parser_error_at(p, at, "redefinition of symbol named '%s'",
                                 name);
  }
  program_function_t* function = NULL;
  if (!loom__parser_allocate(p, sizeof(*function), (void**)&function)) {
    return false;
  }
  function->program = p->program;
  function->name = name;
  function->location = at;
  function->index = pb->num_functions;
  if (!loom__parser_reserve(p, (void**)&pb->functions, &pb->functions_capacity,
                            pb->num_functions, sizeof(program_function_t*))) {
    return false;
  }
  pb->functions[pb->num_functions++] = function;
  p->program->functions = pb->functions;
  p->program->num_functions = pb->num_functions;
  uint64_t slot = loom__hash_bytes(name, strlen(name));
  while (loom__hash_map_find(&p->program->functions_by_name, slot, NULL))
    ++slot;
  loom_status_t status = loom__hash_map_insert(&p->program->functions_by_name,
                                               slot, (uint64_t)function->index);
  if (status) {
    loom_status_free(status);
    return loom__parser_out_of_memory(p);
  }

  function_builder_t fb;
  memset(&fb, 0, sizeof(fb));
  fb.function = function;
  loom__hash_map_initialize(&fb.names, p->allocator);
  bool ok = loom__parser_expect(p, TOKEN_LPAREN, "to begin the argument list");
  if (ok && !loom__parser_accept(p, TOKEN_RPAREN)) {
    do {
      if (p->tok.kind != TOKEN_VALUE_ID) {
        ok = loom__parser_error_got(p, "expected an argument (%%name: type)");
        break;
      }
      program_source_location_t arg_at = loom__parser_location(p);
      const char* arg = p->tok.text + 1;
      size_t length = p->tok.length - 1;
      loom__parser_advance(p);
      const program_type_t* type = NULL;
      int32_t id = 0;
      ok = loom__parser_expect(p, TOKEN_COLON, "after the argument's name") &&
           loom__parser_parse_type(p, &type) && add_value(p, &fb, type, &id) &&
           add_name(p, &fb, arg, length, id, 1, arg_at);
      if (ok && loom__parser_is(p, TOKEN_LBRACE)) {
        ok = loom__parser_parse_attr_dict(p, NULL, NULL, false);
      }
    } while (ok && loom__parser_accept(p, TOKEN_COMMA));
    ok = ok &&
         loom__parser_expect(p, TOKEN_RPAREN, "to close the argument list");
  }
  function->num_arguments = fb.num_values;
  if (ok && loom__parser_accept(p, TOKEN_ARROW)) {
    bool parenthesized = loom__parser_accept(p, TOKEN_LPAREN);
    if (!parenthesized || !loom__parser_is(p, TOKEN_RPAREN)) {
      do {
        const program_type_t* type = NULL;
        ok = loom__parser_parse_type(p, &type) &&
             loom__parser_reserve(p, (void**)&fb.result_types,
                                  &fb.results_capacity, fb.num_results,
                                  sizeof(program_type_t*));
        if (ok) fb.result_types[fb.num_results++] = type;
        if (ok && parenthesized && loom__parser_is(p, TOKEN_LBRACE)) {
          ok = loom__parser_parse_attr_dict(p, NULL, NULL, false);
        }
      } while (ok && parenthesized && loom__parser_accept(p, TOKEN_COMMA));
    }
    if (ok && parenthesized) {
      ok = loom__parser_expect(p, TOKEN_RPAREN, "to close the result types");
    }
  }
  function->num_results = fb.num_results;
  function->result_types = fb.result_types;
  if (ok && loom__parser_is_keyword(p, "attributes")) {
    loom__parser_advance(p);
    ok = loom__parser_parse_attr_dict(p, NULL, NULL, false);
  }
  if (ok && !loom__parser_is(p, TOKEN_LBRACE)) {
    ok = loom__parser_error_got(p,
                                "expected '{' to begin the body of "
                                "function '%s'",
                                name);
  }
  if (ok) loom__parser_advance(p);
  while (ok && !loom__parser_is(p, TOKEN_RBRACE)) {
    if (fb.num_ops > 0 && fb.ops[fb.num_ops - 1].is_return) {
      ok = loom__parser_error_got(p,
                                  "'%s' must be the last operation of "
                                  "function '%s'",
                                  fb.ops[fb.num_ops - 1].name, name);
      break;
    }
    ok = parse_op(p, pb, &fb);
  }
  if (ok && (fb.num_ops == 0 || !fb.ops[fb.num_ops - 1].is_return)) {
    ok = loom__parser_error_got(p, "function '%s' must end with 'tfrt.return'",
                                name);
  }
  if (ok) {
    program_op_t* ret = &fb.ops[fb.num_ops - 1];
    if (ret->num_operands != function->num_results) {
      ok = loom__parser_error_at(
          p, ret->location,
          "'%s' has %d operand%s, but function '%s' "
          "returns %d value%s",
          ret->name, ret->num_operands, ret->num_operands == 1 ? "" : "s", name,
          function->num_results, function->num_results == 1 ? "" : "s");
    }
    for (int32_t i = 0; ok && i < ret->num_operands; ++i) {
      const program_type_t* actual = fb.value_types[ret->operands[i]];
      if (actual != function->result_types[i]) {
        ok = loom__parser_error_at(
            p, ret->location,
            "type of return operand %d ('%s') doesn't match function result "
            "type ('%s') in function @%s",
            i, actual->spelling, function->result_types[i]->spelling, name);
      }
    }
  }
  if (ok) loom__parser_advance(p);  // }
  function->num_values = fb.num_values;
  function->value_types = fb.value_types;
  function->num_ops = fb.num_ops;
  function->ops = fb.ops;
  function->num_operand_slots = fb.num_operand_slots;
  for (int32_t i = 0; i < fb.num_ops; ++i) fb.ops[i].function = function;
  int32_t* uses = NULL;
  if (ok && fb.num_values > 0 &&
      loom__parser_allocate(p, sizeof(int32_t) * (size_t)fb.num_values,
                            (void**)&uses)) {
    for (int32_t i = 0; i < fb.num_ops; ++i) {
      for (int32_t j = 0; j < fb.ops[i].num_operands; ++j) {
        uses[fb.ops[i].operands[j]]++;
      }
    }
  }
  function->value_uses = uses;
  ok = ok && (uses || fb.num_values == 0);
  loom__hash_map_deinitialize(&fb.names);
  return ok;
}

//===----------------------------------------------------------------------===//
// Symbol resolution
//===----------------------------------------------------------------------===//

static bool check_call_signature(parser_t* p, const program_function_t* caller,
                                 const program_op_t* op, int32_t skip,
                                 const program_function_t* callee) {
  int32_t num_args = op->num_operands - skip;
  if (num_args != callee->num_arguments ||
      op->num_results != callee->num_results) {
    return loom__parser_error_at(
        p, op->location,
        "'%s' passes %d argument%s and expects %d result%s, but @%s takes %d "
        "and returns %d",
        op->name, num_args, num_args == 1 ? "" : "s", op->num_results,
        op->num_results == 1 ? "" : "s", callee->name, callee->num_arguments,
        callee->num_results);
  }
  for (int32_t i = 0; i < num_args; ++i) {
    const program_type_t* actual = caller->value_types[op->operands[skip + i]];
    if (actual != callee->value_types[i]) {
      return loom__parser_error_at(p, op->location,
                                   "'%s' passes a '%s' as argument %d of @%s, "
                                   "which takes a '%s'",
                                   op->name, actual->spelling, i, callee->name,
                                   callee->value_types[i]->spelling);
    }
  }
  for (int32_t i = 0; i < op->num_results; ++i) {
    const program_type_t* actual = caller->value_types[op->first_result + i];
    if (actual != callee->result_types[i]) {
      return loom__parser_error_at(p, op->location,
                                   "'%s' expects a '%s' as result %d of @%s, "
                                   "which returns a '%s'",
                                   op->name, actual->spelling, i, callee->name,
                                   callee->result_types[i]->spelling);
    }
  }
  return true;
}

static bool resolve_symbols(parser_t* p) {
  loom_program_t* program = p->program;
  for (int32_t f = 0; f < program->num_functions; ++f) {
    program_function_t* function = program->functions[f];
    for (int32_t i = 0; i < function->num_ops; ++i) {
      program_op_t* op = &function->ops[i];
      if (op->num_callees == 0) continue;
      const char* const* names = op->callee_names;
      const program_function_t** callees = NULL;
      if (!loom__parser_allocate(p, sizeof(*callees) * (size_t)op->num_callees,
                                 (void**)&callees)) {
        return false;
      }
      for (int32_t c = 0; c < op->num_callees; ++c) {
        callees[c] =
            loom__program_find_function(program, names[c], strlen(names[c]));
        if (!callees[c]) {
          return loom__parser_error_at(p, op->location,
                                       "'%s' refers to an undefined function "
                                       "@%s",
                                       op->name, names[c]);
        }
      }
      op->callees = callees;
      // Signatures of the control-flow forms.
      if (strcmp(op->name, "tfrt.call") == 0) {
        if (!check_call_signature(p, function, op, 0, callees[0])) return false;
      } else if (strcmp(op->name, "tfrt.case") == 0 ||
                 strcmp(op->name, "tfrt.cond") == 0) {
        for (int32_t c = 0; c < op->num_callees; ++c) {
          if (!check_call_signature(p, function, op, 1, callees[c])) {
            return false;
          }
        }
      }
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Entry
//===----------------------------------------------------------------------===//

bool loom__program_parse_text(loom_program_t* program, const char* text,
                              size_t size, loom_status_t* out_error,
                              program_source_location_t* out_location);

bool loom__program_parse_text(loom_program_t* program, const char* text,
                              size_t size, loom_status_t* out_error,
                              program_source_location_t* out_location) {
  parser_t p;
  memset(&p, 0, sizeof(p));
  p.program = program;
  p.arena = &program->arena;
  p.allocator = program->allocator;
  loom__hash_map_initialize(&p.types, program->allocator);
  loom__hash_map_initialize(&p.execute_index, program->allocator);
  loom__program_lexer_initialize(&p.lexer, text, size);
  loom__parser_advance(&p);
  program_builder_t pb;
  memset(&pb, 0, sizeof(pb));

  bool ok = true;
  bool in_module = false;
  if (loom__parser_is_keyword(&p, "module")) {
    loom__parser_advance(&p);
    if (p.tok.kind == TOKEN_SYMBOL) loom__parser_advance(&p);
    if (loom__parser_is_keyword(&p, "attributes")) {
      loom__parser_advance(&p);
      ok = loom__parser_parse_attr_dict(&p, NULL, NULL, false);
    }
    ok = ok && loom__parser_expect(&p, TOKEN_LBRACE, "to begin the module");
    in_module = true;
  }
  while (ok) {
    if (in_module && loom__parser_accept(&p, TOKEN_RBRACE)) {
      in_module = false;
      if (!loom__parser_is(&p, TOKEN_EOF)) {
        ok = loom__parser_error_got(&p,
                                    "expected end of file after the "
                                    "module");
      }
      break;
    }
    if (!in_module && loom__parser_is(&p, TOKEN_EOF)) break;
    if (loom__parser_is_keyword(&p, "func.func") ||
        loom__parser_is_keyword(&p, "func")) {
      ok = parse_function(&p, &pb);
    } else {
      ok = loom__parser_error_got(&p, in_module ? "expected 'func.func' or '}'"
                                                : "expected 'func.func'");
    }
  }
  program->num_ops = pb.num_ops;
  if (ok) ok = resolve_symbols(&p);
  if (ok && pb.num_ops > 0) {
    ok = loom__parser_allocate(&p, sizeof(program_op_t*) * (size_t)pb.num_ops,
                               (void**)&program->ops);
    for (int32_t f = 0; ok && f < program->num_functions; ++f) {
      program_function_t* function = program->functions[f];
      for (int32_t i = 0; i < function->num_ops; ++i) {
        program->ops[function->ops[i].global_index] = &function->ops[i];
      }
    }
  }
  for (int32_t i = 0; i < p.num_tensors; ++i) {
    loom_tensor_release(p.tensors[i]);
  }
  loom__parser_types_deinitialize(&p);
  loom__hash_map_deinitialize(&p.execute_index);
  program->num_execute_names = p.num_execute_names;
  if (!ok) {
    *out_error = p.error ? p.error
                         : loom_make_status(LOOM_STATUS_INTERNAL,
                                            "%s: the parser failed without an "
                                            "error",
                                            program->file_name);
    *out_location = p.error_location;
    return false;
  }
  return true;
}
