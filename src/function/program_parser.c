// The program parser's generic part: `module`, `func.func` and its SSA
// names, symbol resolution, and the helpers every part shares. Operations
// are in program_parser_ops.c, each dialect's custom forms in
// program_parser_<dialect>.c.

#include <stdarg.h>
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
// Function builders
//===----------------------------------------------------------------------===//

const name_entry_t* loom__parser_find_name(const function_builder_t* fb,
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

bool loom__parser_add_name(parser_t* p, function_builder_t* fb,
                           const char* name, size_t length, int32_t first,
                           int32_t count, program_source_location_t at) {
  if (loom__parser_find_name(fb, name, length)) {
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

bool loom__parser_add_value(parser_t* p, function_builder_t* fb,
                            const program_type_t* type, int32_t* out_id) {
  if (fb->num_values >= PROGRAM_MAX_FUNCTION_VALUES) {
    return loom__parser_error_at(
        p, loom__parser_location(p), "function @%s has more than %d values",
        fb->function->name, PROGRAM_MAX_FUNCTION_VALUES);
  }
  if (!loom__parser_reserve(p, (void**)&fb->value_types, &fb->values_capacity,
                            fb->num_values, sizeof(program_type_t*))) {
    return false;
  }
  fb->value_types[fb->num_values] = type;
  *out_id = fb->num_values++;
  return true;
}

// Parses the operations of a body from its '{' up to (not past) its '}':
// they end with a return. `what` names the body for messages.
static bool parse_block(parser_t* p, program_builder_t* pb,
                        function_builder_t* fb, const char* what) {
  loom__parser_advance(p);  // {
  while (!loom__parser_is(p, TOKEN_RBRACE)) {
    if (fb->num_ops > 0 && fb->ops[fb->num_ops - 1].is_return) {
      return loom__parser_error_got(p, "'%s' must be the last operation of %s",
                                    fb->ops[fb->num_ops - 1].name, what);
    }
    if (!loom__parser_parse_op(p, pb, fb)) return false;
  }
  if (fb->num_ops == 0 || !fb->ops[fb->num_ops - 1].is_return) {
    return loom__parser_error_got(p, "%s must end with 'tfrt.return'", what);
  }
  return true;
}

// Moves what the builder holds into its function and counts each value's
// uses; passes `ok` through (false on error).
static bool finish_function(parser_t* p, function_builder_t* fb, bool ok) {
  program_function_t* function = fb->function;
  function->num_values = fb->num_values;
  function->value_types = fb->value_types;
  function->num_ops = fb->num_ops;
  function->ops = fb->ops;
  function->num_operand_slots = fb->num_operand_slots;
  for (int32_t i = 0; i < fb->num_ops; ++i) fb->ops[i].function = function;
  int32_t* uses = NULL;
  if (ok && fb->num_values > 0 &&
      loom__parser_allocate(p, sizeof(int32_t) * (size_t)fb->num_values,
                            (void**)&uses)) {
    for (int32_t i = 0; i < fb->num_ops; ++i) {
      for (int32_t j = 0; j < fb->ops[i].num_operands; ++j) {
        uses[fb->ops[i].operands[j]]++;
      }
    }
  }
  function->value_uses = uses;
  return ok && (uses || fb->num_values == 0);
}

//===----------------------------------------------------------------------===//
// Regions
//===----------------------------------------------------------------------===//

const name_entry_t* loom__parser_resolve_name(parser_t* p,
                                              function_builder_t* fb,
                                              const char* name, size_t length,
                                              program_source_location_t at) {
  const name_entry_t* entry = loom__parser_find_name(fb, name, length);
  if (entry || !fb->parent) return entry;
  const name_entry_t* outer =
      loom__parser_resolve_name(p, fb->parent, name, length, at);
  if (!outer) return NULL;
  // Captured: `count` new arguments of the region, and as many operands of
  // the operation that holds it.
  int32_t first = fb->num_values;
  op_builder_t* owner = fb->owner;
  for (int32_t i = 0; i < outer->count; ++i) {
    int32_t id = 0;
    if (!loom__parser_add_value(
            p, fb, fb->parent->value_types[outer->first + i], &id) ||
        !loom__parser_reserve(p, (void**)&fb->captures, &fb->captures_capacity,
                              fb->num_captures, sizeof(int32_t)) ||
        !loom__parser_reserve(p, (void**)&owner->captured,
                              &owner->captured_capacity, owner->num_captured,
                              sizeof(int32_t))) {
      return NULL;
    }
    fb->captures[fb->num_captures++] = id;
    owner->captured[owner->num_captured++] = outer->first + i;
  }
  if (!loom__parser_add_name(p, fb, name, length, first, outer->count, at)) {
    return NULL;
  }
  return loom__parser_find_name(fb, name, length);
}

// Renumbers a region's values so that its captures, its arguments, come
// first (in the order they were captured), the others after them in their
// order (which keeps an operation's results consecutive).
static bool number_captures_first(parser_t* p, function_builder_t* fb) {
  if (fb->num_captures == 0) return true;
  int32_t n = fb->num_values;
  int32_t* new_id = NULL;
  const program_type_t** types = NULL;
  if (!loom__parser_allocate(p, sizeof(int32_t) * (size_t)n, (void**)&new_id) ||
      !loom__parser_allocate(p, sizeof(*types) * (size_t)n, (void**)&types)) {
    return false;
  }
  for (int32_t i = 0; i < n; ++i) new_id[i] = -1;
  for (int32_t i = 0; i < fb->num_captures; ++i) new_id[fb->captures[i]] = i;
  int32_t next = fb->num_captures;
  for (int32_t i = 0; i < n; ++i) {
    if (new_id[i] < 0) new_id[i] = next++;
  }
  for (int32_t i = 0; i < n; ++i) types[new_id[i]] = fb->value_types[i];
  fb->value_types = types;
  for (int32_t i = 0; i < fb->num_ops; ++i) {
    program_op_t* op = &fb->ops[i];
    int32_t* operands = (int32_t*)op->operands;  // in the arena
    for (int32_t j = 0; j < op->num_operands; ++j) {
      operands[j] = new_id[operands[j]];
    }
    if (op->num_results > 0) op->first_result = new_id[op->first_result];
  }
  return true;
}

bool loom__parser_parse_region(parser_t* p, function_builder_t* fb,
                               op_builder_t* b) {
  program_builder_t* pb = p->builder;
  program_function_t* region = NULL;
  if (!loom__parser_allocate(p, sizeof(*region), (void**)&region) ||
      !loom__parser_reserve(p, (void**)&pb->regions, &pb->regions_capacity,
                            pb->num_regions, sizeof(program_function_t*)) ||
      !loom__parser_reserve(p, (void**)&b->regions, &b->regions_capacity,
                            b->num_regions, sizeof(program_function_t*))) {
    return false;
  }
  if (!loom__parser_reserve(p, (void**)&b->region_first,
                            &b->region_first_capacity, b->num_regions,
                            sizeof(int32_t))) {
    return false;
  }
  // Named after its function and operation, for call stacks.
  char name[256];
  snprintf(name, sizeof(name), "%s/%s", fb->function->name, b->name);
  region->program = p->program;
  region->location = loom__parser_location(p);
  region->index = -1;
  region->parent = fb->function;
  if (!loom__parser_strndup(p, name, strlen(name), &region->name)) return false;
  pb->regions[pb->num_regions++] = region;
  b->region_first[b->num_regions] = b->num_captured;
  b->regions[b->num_regions++] = region;
  function_builder_t rb;
  memset(&rb, 0, sizeof(rb));
  rb.function = region;
  rb.parent = fb;
  rb.owner = b;
  loom__hash_map_initialize(&rb.names, p->allocator);
  char what[320];
  snprintf(what, sizeof(what), "the region of '%s'", b->name);
  bool ok = parse_block(p, pb, &rb, what);
  if (ok) loom__parser_advance(p);  // }
  if (ok) {
    // Its results are what it returns.
    const program_op_t* ret = &rb.ops[rb.num_ops - 1];
    const program_type_t** types = NULL;
    ok = ret->num_operands == 0 ||
         loom__parser_allocate(p, sizeof(*types) * (size_t)ret->num_operands,
                               (void**)&types);
    for (int32_t i = 0; ok && i < ret->num_operands; ++i) {
      types[i] = rb.value_types[ret->operands[i]];
    }
    region->num_results = ret->num_operands;
    region->result_types = types;
    region->num_arguments = rb.num_captures;
  }
  ok = ok && number_captures_first(p, &rb);
  ok = finish_function(p, &rb, ok);
  loom__hash_map_deinitialize(&rb.names);
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
           loom__parser_parse_type(p, &type) &&
           loom__parser_add_value(p, &fb, type, &id) &&
           loom__parser_add_name(p, &fb, arg, length, id, 1, arg_at);
      if (ok && loom__parser_is(p, TOKEN_LBRACE)) {
        ok = loom__parser_parse_attr_dict(p, NULL, NULL, NULL, false);
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
          ok = loom__parser_parse_attr_dict(p, NULL, NULL, NULL, false);
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
    ok = loom__parser_parse_attr_dict(p, NULL, NULL, NULL, false);
  }
  if (ok && !loom__parser_is(p, TOKEN_LBRACE)) {
    ok = loom__parser_error_got(p,
                                "expected '{' to begin the body of "
                                "function '%s'",
                                name);
  }
  char what[160];
  snprintf(what, sizeof(what), "function '%s'", name);
  ok = ok && parse_block(p, pb, &fb, what);
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
  ok = finish_function(p, &fb, ok);
  loom__hash_map_deinitialize(&fb.names);
  return ok;
}

//===----------------------------------------------------------------------===//
// Symbol resolution
//===----------------------------------------------------------------------===//

bool loom__parser_check_call_signature(parser_t* p,
                                       const program_function_t* caller,
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
  int32_t count = program->num_functions + program->num_regions;
  for (int32_t f = 0; f < count; ++f) {
    program_function_t* function =
        f < program->num_functions
            ? program->functions[f]
            : program->regions[f - program->num_functions];
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
      // The dialect checks its control-flow forms' signatures.
      const char* suffix = NULL;
      const program_custom_op_t* custom =
          loom__parser_find_custom(op->name, true, &suffix);
      if (custom && custom->check_callees &&
          !custom->check_callees(p, function, op)) {
        return false;
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
  p.builder = &pb;

  bool ok = true;
  bool in_module = false;
  if (loom__parser_is_keyword(&p, "module")) {
    loom__parser_advance(&p);
    if (p.tok.kind == TOKEN_SYMBOL) loom__parser_advance(&p);
    if (loom__parser_is_keyword(&p, "attributes")) {
      loom__parser_advance(&p);
      ok = loom__parser_parse_attr_dict(&p, NULL, NULL, NULL, false);
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
  program->num_regions = pb.num_regions;
  program->regions = pb.regions;
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
    for (int32_t r = 0; ok && r < program->num_regions; ++r) {
      program_function_t* region = program->regions[r];
      for (int32_t i = 0; i < region->num_ops; ++i) {
        program->ops[region->ops[i].global_index] = &region->ops[i];
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
