// Operations: result names, the generic form ("dialect.op"(%a) {attrs} :
// (T) -> T), the pieces the dialects' custom forms are made of, and the
// lookup of a custom form by op name.

#include <string.h>

#include "function/program_parser.h"

//===----------------------------------------------------------------------===//
// Operations being built
//===----------------------------------------------------------------------===//

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
  b->execute_written_name = NULL;
  memset(&b->refs, 0, sizeof(b->refs));
  memset(&b->execute_keys, 0, sizeof(b->execute_keys));
  b->captured = NULL;
  b->num_captured = 0;
  b->captured_capacity = 0;
  b->regions = NULL;
  b->region_first = NULL;
  b->num_regions = 0;
  b->regions_capacity = 0;
  b->region_first_capacity = 0;
  loom_op_attrs_initialize(&b->attrs, p->allocator);
  loom_op_attrs_initialize(&b->execute_attrs, p->allocator);
}

static void op_builder_deinitialize(op_builder_t* b) {
  loom_op_attrs_deinitialize(&b->attrs);
  loom_op_attrs_deinitialize(&b->execute_attrs);
}

bool loom__parser_add_result(parser_t* p, op_builder_t* b,
                             const program_type_t* type) {
  if (!loom__parser_reserve(p, (void**)&b->result_types, &b->results_capacity,
                            b->num_results, sizeof(program_type_t*))) {
    return false;
  }
  b->result_types[b->num_results++] = type;
  return true;
}

bool loom__parser_add_result_kind(parser_t* p, op_builder_t* b,
                                  program_type_kind_t kind,
                                  const char* spelling) {
  const program_type_t* type = NULL;
  return loom__parser_type(p, kind, spelling, &type) &&
         loom__parser_add_result(p, b, type);
}

// Parses a use: %name or %name#N.
bool loom__parser_parse_operand(parser_t* p, function_builder_t* fb,
                                op_builder_t* b) {
  if (p->tok.kind != TOKEN_VALUE_ID) {
    return loom__parser_error_got(p, "expected an operand (%%name)");
  }
  program_source_location_t at = loom__parser_location(p);
  const char* name = p->tok.text + 1;
  size_t length = p->tok.length - 1;
  const name_entry_t* entry =
      loom__parser_resolve_name(p, fb, name, length, at);
  if (p->error) return false;
  if (!entry) {
    return loom__parser_error_at(p, at, "use of undeclared SSA value '%%%.*s'",
                                 (int)(length > 64 ? 64 : length), name);
  }
  int64_t number = 0;
  const char* after = p->tok.text + p->tok.length;
  const char* end = p->lexer.end;
  const char* digits = "0";
  int digits_length = 1;
  bool truncated = false;
  if (after < end && *after == '#') {
    const char* q = after + 1;
    if (q >= end || *q < '0' || *q > '9') {
      program_source_location_t hash_at = {at.line,
                                           at.column + (int32_t)p->tok.length};
      return loom__parser_error_at(p, hash_at,
                                   "expected a result number "
                                   "after '#'");
    }
    digits = q;
    // Saturates: any number past the largest group is out of range.
    while (q < end && *q >= '0' && *q <= '9') {
      if (number < 1000000000) number = number * 10 + (*q - '0');
      ++q;
    }
    truncated = q - digits > 24;
    digits_length = truncated ? 24 : (int)(q - digits);
    loom__program_lexer_reset(&p->lexer, q);
  }
  if (number >= entry->count) {
    return loom__parser_error_at(p, at,
                                 "result number %.*s%s is out of range "
                                 "for '%%%.*s', which has %d",
                                 digits_length, digits, truncated ? "..." : "",
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
bool loom__parser_parse_operand_list(parser_t* p, function_builder_t* fb,
                                     op_builder_t* b) {
  if (p->tok.kind != TOKEN_VALUE_ID) return true;
  do {
    if (!loom__parser_parse_operand(p, fb, b)) return false;
  } while (loom__parser_accept(p, TOKEN_COMMA));
  return true;
}

// ( %a, %b ) or an empty ().
bool loom__parser_parse_paren_operands(parser_t* p, function_builder_t* fb,
                                       op_builder_t* b, const char* context) {
  if (!loom__parser_expect(p, TOKEN_LPAREN, context)) return false;
  if (!loom__parser_parse_operand_list(p, fb, b)) return false;
  return loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list");
}

// T, T, ... (at least one).
bool loom__parser_parse_type_list(parser_t* p, const program_type_t*** types,
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
  if (!loom__parser_parse_type_list(p, types, count)) return false;
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

// Checks operand `index` has type `type` (custom forms with fixed types).
bool loom__parser_check_operand_type(parser_t* p, const function_builder_t* fb,
                                     const op_builder_t* b, int32_t index,
                                     const program_type_t* type) {
  const program_type_t* actual = fb->value_types[b->operands[index]];
  if (actual == type) return true;
  return loom__parser_error_at(p, b->operand_locations[index],
                               "'%s' expects operand #%d of type '%s', got a "
                               "value of type '%s'",
                               b->name, index, type->spelling,
                               actual->spelling);
}

bool loom__parser_check_operand_kind(parser_t* p, const function_builder_t* fb,
                                     const op_builder_t* b, int32_t index,
                                     program_type_kind_t kind,
                                     const char* spelling) {
  const program_type_t* type = NULL;
  if (!loom__parser_type(p, kind, spelling, &type)) return false;
  return loom__parser_check_operand_type(p, fb, b, index, type);
}

bool loom__parser_check_operand_count(parser_t* p, const op_builder_t* b,
                                      int32_t expected) {
  if (b->num_operands == expected) return true;
  return loom__parser_error_at(
      p, b->location, "'%s' expects %d operand%s, got %d", b->name, expected,
      expected == 1 ? "" : "s", b->num_operands);
}

// Checks the operands against declared types (generic form and signatures).
bool loom__parser_check_operand_types(parser_t* p, const function_builder_t* fb,
                                      const op_builder_t* b, int32_t first,
                                      const program_type_t* const* types,
                                      int32_t count) {
  if (b->num_operands - first != count) {
    return loom__parser_error_at(p, b->location,
                                 "'%s' has %d operand%s, but its type lists "
                                 "%d",
                                 b->name, b->num_operands - first,
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
    if (!loom__parser_add_result(p, b, types[i])) return false;
  }
  return true;
}

bool loom__parser_parse_signature(parser_t* p, function_builder_t* fb,
                                  op_builder_t* b, int32_t first,
                                  bool chain_result) {
  const program_type_t** inputs = NULL;
  const program_type_t** outputs = NULL;
  int32_t num_inputs = 0;
  int32_t num_outputs = 0;
  return parse_function_type(p, &inputs, &num_inputs, &outputs, &num_outputs) &&
         loom__parser_check_operand_types(p, fb, b, first, inputs,
                                          num_inputs) &&
         (!chain_result || loom__parser_add_result_kind(
                               p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain")) &&
         add_results(p, b, outputs, num_outputs);
}

// An optional trailing attribute dictionary.
bool loom__parser_parse_optional_attrs(parser_t* p, op_builder_t* b) {
  if (!loom__parser_is(p, TOKEN_LBRACE)) return true;
  return loom__parser_parse_attr_dict(p, &b->attrs, &b->refs, NULL, false);
}

// Parses a symbol (@name) into b->refs (its callees).
bool loom__parser_parse_callee(parser_t* p, op_builder_t* b) {
  if (p->tok.kind != TOKEN_SYMBOL) {
    return loom__parser_error_got(p, "expected a function name (@name)");
  }
  program_attr_t attr;
  return loom__parser_parse_attr(p, &b->refs, &attr);
}

//===----------------------------------------------------------------------===//
// Custom forms
//===----------------------------------------------------------------------===//

// `name [(] operands [)] [attr-dict]`: `count` operands (-1: one or more;
// 0: none, so that the next operation's `%x =` is not taken for one).
bool loom__parser_parse_simple(parser_t* p, function_builder_t* fb,
                               op_builder_t* b, int32_t count) {
  if (count != 0) {
    bool parenthesized = loom__parser_accept(p, TOKEN_LPAREN);
    if (!parenthesized || !loom__parser_is(p, TOKEN_RPAREN)) {
      do {
        if (!loom__parser_parse_operand(p, fb, b)) return false;
      } while (loom__parser_accept(p, TOKEN_COMMA));
    }
    if (parenthesized &&
        !loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list")) {
      return false;
    }
    if (count > 0 && !loom__parser_check_operand_count(p, b, count))
      return false;
  }
  return loom__parser_parse_optional_attrs(p, b);
}

bool loom__parser_parse_return(parser_t* p, function_builder_t* fb,
                               op_builder_t* b, const char* suffix) {
  (void)suffix;
  b->is_return = true;
  if (!loom__parser_parse_operand_list(p, fb, b)) return false;
  if (!loom__parser_parse_optional_attrs(p, b)) return false;
  if (b->num_operands > 0 &&
      !loom__parser_expect(p, TOKEN_COLON, "before the returned types")) {
    return false;
  }
  if (b->num_operands == 0) return true;
  const program_type_t** types = NULL;
  int32_t count = 0;
  if (!loom__parser_parse_type_list(p, &types, &count)) return false;
  return loom__parser_check_operand_types(p, fb, b, 0, types, count);
}

// func, the default dialect of a function's body: its terminator, also
// written without the dialect.
static const program_custom_op_t kFuncOps[] = {
    {.name = "func.return",
     .is_return = true,
     .parse = loom__parser_parse_return},
    {.name = "return", .parse = loom__parser_parse_return},
};

const program_dialect_t loom__parser_dialect_func = {
    .name = "func",
    .ops = kFuncOps,
    .num_ops = sizeof(kFuncOps) / sizeof(kFuncOps[0]),
};

static const program_dialect_t* const kDialects[] = {
    &loom__parser_dialect_func,         // func.func, return
    &loom__parser_dialect_tfrt,         // tfrt.*
    &loom__parser_dialect_corert,       // corert.*
    &loom__parser_dialect_corert_sync,  // corert_sync.*
    &loom__parser_dialect_ts,           // ts.*
    &loom__parser_dialect_tfrt_test,    // tfrt_test.benchmark
    &loom__parser_dialect_dht,          // tfrt_dht.*
    &loom__parser_dialect_dht_sync,     // tfrt_dht_sync.*
    &loom__parser_dialect_coo,          // coo.*
};

static const program_dialect_t* find_dialect(const char* name, bool generic) {
  const char* dot = strchr(name, '.');
  if (!dot) return generic ? NULL : &loom__parser_dialect_func;
  size_t length = (size_t)(dot - name);
  for (size_t i = 0; i < sizeof(kDialects) / sizeof(kDialects[0]); ++i) {
    const char* dialect = kDialects[i]->name;
    if (strlen(dialect) == length && memcmp(dialect, name, length) == 0) {
      return kDialects[i];
    }
  }
  return NULL;
}

const program_custom_op_t* loom__parser_find_custom(const char* name,
                                                    bool generic,
                                                    const char** suffix) {
  const program_dialect_t* dialect = find_dialect(name, generic);
  if (!dialect) return NULL;
  for (size_t i = 0; i < dialect->num_ops; ++i) {
    const program_custom_op_t* op = &dialect->ops[i];
    if (!op->prefix && strcmp(op->name, name) == 0) {
      *suffix = "";
      return op;
    }
  }
  for (size_t i = 0; i < dialect->num_ops; ++i) {
    const program_custom_op_t* op = &dialect->ops[i];
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
  if (!loom__parser_parse_operand_list(p, fb, b) ||
      !loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list")) {
    return false;
  }
  if (loom__parser_is(p, TOKEN_LSQUARE)) {
    return loom__parser_error_got(p,
                                  "successors are not supported: a function "
                                  "has one block");
  }
  if (loom__parser_accept(p, TOKEN_LPAREN)) {
    do {
      if (!loom__parser_is(p, TOKEN_LBRACE)) {
        return loom__parser_error_got(p, "expected '{' to begin a region");
      }
      if (!loom__parser_parse_region(p, fb, b)) return false;
    } while (loom__parser_accept(p, TOKEN_COMMA));
    if (!loom__parser_expect(p, TOKEN_RPAREN, "to close the regions")) {
      return false;
    }
  }
  if (loom__parser_is(p, TOKEN_LESS)) {
    return loom__parser_error_got(p,
                                  "properties are not supported: use "
                                  "attributes");
  }
  if (!loom__parser_parse_optional_attrs(p, b) ||
      !loom__parser_expect(p, TOKEN_COLON, "before the operation's type")) {
    return false;
  }
  return loom__parser_parse_signature(p, fb, b, 0, false);
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
  if (b->num_results > PROGRAM_MAX_FUNCTION_VALUES - fb->num_values) {
    return loom__parser_error_at(
        p, b->location, "function @%s has more than %d values",
        fb->function->name, PROGRAM_MAX_FUNCTION_VALUES);
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
  if (b->num_captured > 0) {
    // The captured values follow the operands as written.
    int32_t* operands = NULL;
    if (!loom__parser_allocate(
            p, sizeof(int32_t) * ((size_t)b->num_operands + b->num_captured),
            (void**)&operands)) {
      return false;
    }
    if (b->num_operands > 0) {
      memcpy(operands, b->operands, sizeof(int32_t) * (size_t)b->num_operands);
    }
    memcpy(operands + b->num_operands, b->captured,
           sizeof(int32_t) * (size_t)b->num_captured);
    op->operands = operands;
    op->num_operands = b->num_operands + b->num_captured;
  }
  if (b->num_regions > 0) {
    for (int32_t i = 0; i < b->num_regions; ++i) {
      b->region_first[i] += b->num_operands;
    }
    op->num_regions = b->num_regions;
    op->regions = b->regions;  // arena
    op->region_first = b->region_first;
  }
  op->num_results = b->num_results;
  op->first_result = fb->num_values;
  for (int32_t i = 0; i < b->num_results; ++i) {
    int32_t id = 0;
    if (!loom__parser_add_value(p, fb, b->result_types[i], &id)) return false;
  }
  int32_t next = op->first_result;
  for (int32_t i = 0; i < num_names; ++i) {
    if (!loom__parser_add_name(p, fb, names[i].name, names[i].length, next,
                               names[i].count, names[i].location)) {
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
    op->execute_written_name = b->execute_written_name;  // arena
    op->num_execute_keys = b->execute_keys.count;
    op->execute_keys = b->execute_keys.names;  // arena
    op->execute_key_locations = b->execute_keys.locations;
  }
  // Resolved once every function is known.
  op->num_callees = b->refs.count;
  op->callee_names = b->refs.names;
  fb->num_operand_slots += op->num_operands;
  fb->num_ops++;
  pb->num_ops++;
  return true;
}

bool loom__parser_parse_op(parser_t* p, program_builder_t* pb,
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
        const char* suffix = NULL;
        const program_custom_op_t* custom =
            loom__parser_find_custom(name, true, &suffix);
        b.is_return = custom && custom->is_return;
        if (custom && custom->parse_generic) {
          ok = custom->parse_generic(p, fb, &b, suffix);
        } else if (custom && custom->custom_only) {
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
    const program_custom_op_t* custom = NULL;
    bool known = p->custom_name && p->custom_name_length == p->tok.length &&
                 memcmp(p->custom_name, p->tok.text, p->tok.length) == 0;
    if (known) {
      name = p->custom_name;
      custom = p->custom_op;
      suffix = p->custom_suffix;
    } else if (loom__parser_strndup(p, p->tok.text, p->tok.length, &name)) {
      custom = loom__parser_find_custom(name, false, &suffix);
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
