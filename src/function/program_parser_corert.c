// The corert dialect's custom forms: op handlers, corert.executeop, tensor
// handles from constants, attribute sets, and corert.cond / corert.while.

#include <string.h>

#include "function/program_parser.h"

static bool parse_get_op_handler(parser_t* p, function_builder_t* fb,
                                 op_builder_t* b, const char* suffix) {
  (void)suffix;
  const char* key = "op_handler_name";
  if (!loom__parser_parse_operand(p, fb, b)) return false;
  loom__parser_accept(p, TOKEN_COMMA);
  if (p->tok.kind != TOKEN_STRING) {
    return loom__parser_error_got(p,
                                  "expected the op handler's name (a "
                                  "string)");
  }
  program_attr_t name;
  if (!loom__parser_parse_attr(p, NULL, &name) ||
      !loom__parser_set_attr(p, &b->attrs, key, &name) ||
      !loom__parser_parse_optional_attrs(p, b)) {
    return false;
  }
  bool get = strcmp(b->name, "corert.get_op_handler") == 0;
  if (get) {
    return loom__parser_check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_CHAIN,
                                           "!tfrt.chain") &&
           loom__parser_add_result_kind(p, b, PROGRAM_TYPE_OP_HANDLER,
                                        "!corert.ophandler");
  }
  return loom__parser_check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_OP_HANDLER,
                                         "!corert.ophandler") &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain");
}

static bool parse_create_handler(parser_t* p, function_builder_t* fb,
                                 op_builder_t* b, const char* suffix) {
  (void)suffix;
  bool is_null = strcmp(b->name, "corert.create_null_op_handler") == 0;
  if (!loom__parser_parse_simple(p, fb, b, is_null ? 0 : 1)) return false;
  if (!is_null &&
      !loom__parser_check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_OP_HANDLER,
                                       "!corert.ophandler")) {
    return false;
  }
  return loom__parser_add_result_kind(p, b, PROGRAM_TYPE_OP_HANDLER,
                                      "!corert.ophandler");
}

// corert.executeop(%h) "op"(%args) {attrs} {fn attrs} [: N]
// corert.executeop.seq(%h, %ch) "op"(%args) {attrs} {fn attrs} [: N]
bool loom__parser_corert_executeop(parser_t* p, function_builder_t* fb,
                                   op_builder_t* b, const char* suffix) {
  (void)suffix;
  bool seq = strcmp(b->name, "corert.executeop.seq") == 0;
  if (!loom__parser_parse_paren_operands(p, fb, b, "before the op handler") ||
      !loom__parser_check_operand_count(p, b, seq ? 2 : 1) ||
      !loom__parser_check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_OP_HANDLER,
                                       "!corert.ophandler") ||
      (seq && !loom__parser_check_operand_kind(p, fb, b, 1, PROGRAM_TYPE_CHAIN,
                                               "!tfrt.chain"))) {
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
  b->execute_written_name = name.u.s.data;
  if (name.u.s.size > 3 && memcmp(name.u.s.data, "tf.", 3) == 0) {
    b->execute_name = name.u.s.data + 3;
  }
  int32_t first_arg = b->num_operands;
  if (!loom__parser_expect(p, TOKEN_LPAREN, "to begin the op's operands") ||
      !loom__parser_parse_operand_list(p, fb, b) ||
      !loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list")) {
    return false;
  }
  for (int32_t i = first_arg; i < b->num_operands; ++i) {
    if (!loom__parser_check_operand_kind(
            p, fb, b, i, PROGRAM_TYPE_TENSOR_HANDLE, "!corert.tensorhandle")) {
      return false;
    }
  }
  if (loom__parser_is(p, TOKEN_LBRACE) &&
      !loom__parser_parse_attr_dict(p, &b->execute_attrs, NULL,
                                    &b->execute_keys, false)) {
    return false;
  }
  if (loom__parser_is(p, TOKEN_LBRACE) &&
      !loom__parser_parse_attr_dict(p, &b->execute_attrs, NULL,
                                    &b->execute_keys, true)) {
    return false;
  }
  // `: N` may be left out for no results, as TFRT allows.
  program_attr_t count;
  memset(&count, 0, sizeof(count));
  if (loom__parser_accept(p, TOKEN_COLON)) {
    if (p->tok.kind != TOKEN_INTEGER) {
      return loom__parser_error_got(p, "expected the number of results");
    }
    if (!loom__parser_parse_number(p, &count)) return false;
  }
  if (count.u.i < 0 || count.u.i > 4096) {
    return loom__parser_error_at(p, count.location,
                                 "the number of results "
                                 "must be in [0, 4096]");
  }
  if (seq &&
      !loom__parser_add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain")) {
    return false;
  }
  for (int64_t i = 0; i < count.u.i; ++i) {
    if (!loom__parser_add_result_kind(p, b, PROGRAM_TYPE_TENSOR_HANDLE,
                                      "!corert.tensorhandle")) {
      return false;
    }
  }
  return true;
}

// The generic form of corert.executeop, .seq and corert_sync.executeop, as
// TFRT prints them:
//   "corert.executeop"(%h, %args) {op_attrs = [["key", value], ...],
//       op_func_attrs = [["key", "f"], ...], op_name = "op"}
//       : (!corert.ophandler, !corert.tensorhandle...) -> (...)
// (.seq: a chain after the handler, and first among the results).
static bool parse_execute_pairs(parser_t* p, op_builder_t* b,
                                const program_attr_t* list, bool functions) {
  const char* what = functions ? "op_func_attrs" : "op_attrs";
  if (list->kind != PROGRAM_ATTR_ARRAY) {
    return loom__parser_error_at(p, list->location,
                                 "'%s' must be an array of [\"key\", value] "
                                 "pairs",
                                 what);
  }
  for (int32_t i = 0; i < list->u.array.count; ++i) {
    const program_attr_t* pair = &list->u.array.items[i];
    if (pair->kind != PROGRAM_ATTR_ARRAY || pair->u.array.count != 2 ||
        pair->u.array.items[0].kind != PROGRAM_ATTR_STRING ||
        pair->u.array.items[0].u.s.size == 0 ||
        strlen(pair->u.array.items[0].u.s.data) !=
            pair->u.array.items[0].u.s.size) {
      return loom__parser_error_at(p, pair->location,
                                   "'%s' item %d must be a [\"key\", value] "
                                   "pair with a non-empty key",
                                   what, i);
    }
    const char* key = pair->u.array.items[0].u.s.data;
    const program_attr_t* value = &pair->u.array.items[1];
    loom_attr_value_t existing;
    if (loom_op_attrs_get(&b->execute_attrs, key, &existing)) {
      return loom__parser_error_at(p, pair->location,
                                   "duplicate key '%s' in '%s'", key, what);
    }
    if (!loom__parser_add_symbol_ref(p, &b->execute_keys, key,
                                     pair->location)) {
      return false;
    }
    if (!functions) {
      if (!loom__parser_set_attr(p, &b->execute_attrs, key, value)) {
        return false;
      }
      continue;
    }
    if (value->kind != PROGRAM_ATTR_STRING &&
        value->kind != PROGRAM_ATTR_SYMBOL) {
      return loom__parser_error_at(p, value->location,
                                   "function attribute '%s' must name a "
                                   "function (\"name\" or @name)",
                                   key);
    }
    loom_status_t status = loom_op_attrs_set_func(
        &b->execute_attrs, key, value->u.s.data, value->u.s.size);
    if (status) {
      loom_status_free(status);
      return loom__parser_out_of_memory(p);
    }
  }
  return true;
}

static bool parse_executeop_generic(parser_t* p, function_builder_t* fb,
                                    op_builder_t* b, const char* suffix) {
  (void)suffix;
  bool seq = strcmp(b->name, "corert.executeop.seq") == 0;
  int32_t first = seq ? 2 : 1;
  if (!loom__parser_parse_paren_operands(p, fb, b, "to begin the operands") ||
      !loom__parser_expect(p, TOKEN_LBRACE,
                           "to begin the attributes (op_name, op_attrs)")) {
    return false;
  }
  bool named = false;
  if (!loom__parser_is(p, TOKEN_RBRACE)) {
    do {
      const char* key = NULL;
      if (p->tok.kind == TOKEN_BARE_ID) {
        if (!loom__parser_strndup(p, p->tok.text, p->tok.length, &key)) {
          return false;
        }
        loom__parser_advance(p);
      } else if (p->tok.kind == TOKEN_STRING) {
        program_attr_t name;
        if (!loom__parser_parse_attr(p, NULL, &name)) return false;
        key = name.u.s.data;
      } else {
        return loom__parser_error_got(p, "expected an attribute name");
      }
      if (!loom__parser_expect(p, TOKEN_EQUAL, "after the attribute name")) {
        return false;
      }
      program_attr_t value;
      if (!loom__parser_parse_attr(p, NULL, &value)) return false;
      if (strcmp(key, "op_name") == 0) {
        if (value.kind != PROGRAM_ATTR_STRING || value.u.s.size == 0 ||
            strlen(value.u.s.data) != value.u.s.size) {
          return loom__parser_error_at(p, value.location,
                                       "'op_name' must be a non-empty "
                                       "string without NUL bytes");
        }
        named = true;
        b->execute_name = value.u.s.data;
        b->execute_written_name = value.u.s.data;
        if (value.u.s.size > 3 && memcmp(value.u.s.data, "tf.", 3) == 0) {
          b->execute_name = value.u.s.data + 3;
        }
      } else if (strcmp(key, "op_attrs") == 0 ||
                 strcmp(key, "op_func_attrs") == 0) {
        if (!parse_execute_pairs(p, b, &value, key[3] == 'f')) return false;
      } else if (!loom__parser_set_attr(p, &b->attrs, key, &value)) {
        return false;
      }
    } while (loom__parser_accept(p, TOKEN_COMMA));
  }
  if (!loom__parser_expect(p, TOKEN_RBRACE,
                           "to close the attribute dictionary")) {
    return false;
  }
  if (!named) {
    return loom__parser_error_at(p, b->location,
                                 "'%s' needs the op to execute: op_name = "
                                 "\"...\"",
                                 b->name);
  }
  if (!loom__parser_expect(p, TOKEN_COLON, "before the operation's type") ||
      !loom__parser_parse_signature(p, fb, b, 0, false)) {
    return false;
  }
  if (b->num_operands < first) {
    return loom__parser_error_at(
        p, b->location, "'%s' needs %s as its first operand%s", b->name,
        seq ? "an op handler and a chain" : "an op handler", seq ? "s" : "");
  }
  if (!loom__parser_check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_OP_HANDLER,
                                       "!corert.ophandler") ||
      (seq && !loom__parser_check_operand_kind(p, fb, b, 1, PROGRAM_TYPE_CHAIN,
                                               "!tfrt.chain"))) {
    return false;
  }
  for (int32_t i = first; i < b->num_operands; ++i) {
    if (!loom__parser_check_operand_kind(
            p, fb, b, i, PROGRAM_TYPE_TENSOR_HANDLE, "!corert.tensorhandle")) {
      return false;
    }
  }
  for (int32_t i = 0; i < b->num_results; ++i) {
    program_type_kind_t kind =
        seq && i == 0 ? PROGRAM_TYPE_CHAIN : PROGRAM_TYPE_TENSOR_HANDLE;
    if (b->result_types[i]->kind != kind) {
      return loom__parser_error_at(
          p, b->location, "'%s' result #%d must be of type '%s', got '%s'",
          b->name, i,
          kind == PROGRAM_TYPE_CHAIN ? "!tfrt.chain" : "!corert.tensorhandle",
          b->result_types[i]->spelling);
    }
  }
  if (seq && b->num_results < 1) {
    return loom__parser_error_at(p, b->location,
                                 "'%s' returns a !tfrt.chain first", b->name);
  }
  return true;
}

bool loom__parser_corert_const_dense(parser_t* p, function_builder_t* fb,
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
         loom__parser_parse_optional_attrs(p, b) &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_TENSOR_HANDLE,
                                      "!corert.tensorhandle");
}

// Kernels whose custom form is `name [operands] [attr-dict]` with a fixed
// result.
bool loom__parser_corert_handle_result(parser_t* p, function_builder_t* fb,
                                       op_builder_t* b, const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, 0) &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_TENSOR_HANDLE,
                                      "!corert.tensorhandle");
}

static bool parse_chain_result(parser_t* p, function_builder_t* fb,
                               op_builder_t* b, const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, -1) &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain");
}

static bool parse_to_int32(parser_t* p, function_builder_t* fb, op_builder_t* b,
                           const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, 1) &&
         loom__parser_check_operand_kind(
             p, fb, b, 0, PROGRAM_TYPE_TENSOR_HANDLE, "!corert.tensorhandle") &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_INTEGER, "i32");
}

static bool parse_to_shape(parser_t* p, function_builder_t* fb, op_builder_t* b,
                           const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, -1) &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_SHAPE, "!ts.shape");
}

static bool parse_opattrs_result(parser_t* p, function_builder_t* fb,
                                 op_builder_t* b, const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, 0) &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_OP_ATTRS,
                                      "!corert.opattrs");
}

// corert.cond %c @t @f (%ch, %args) : (T...) -> (T...)
// corert.while @cond @body (%ch, %args) : (T...) -> (T...)
static bool parse_corert_control(parser_t* p, function_builder_t* fb,
                                 op_builder_t* b, const char* suffix) {
  (void)suffix;
  bool is_cond = strcmp(b->name, "corert.cond") == 0;
  int32_t skip = 0;
  if (is_cond) {
    if (!loom__parser_parse_operand(p, fb, b) ||
        !loom__parser_check_operand_kind(
            p, fb, b, 0, PROGRAM_TYPE_TENSOR_HANDLE, "!corert.tensorhandle")) {
      return false;
    }
    loom__parser_accept(p, TOKEN_COMMA);
    skip = 1;
  }
  if (!loom__parser_parse_callee(p, b)) return false;
  loom__parser_accept(p, TOKEN_COMMA);
  if (!loom__parser_parse_callee(p, b)) return false;
  if (!loom__parser_expect(p, TOKEN_LPAREN, "to begin the operands")) {
    return false;
  }
  if (!loom__parser_parse_operand_list(p, fb, b) ||
      !loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list")) {
    return false;
  }
  if (b->num_operands < skip + 1) {
    return loom__parser_error_at(p, b->location,
                                 "'%s' needs an input chain "
                                 "as its first operand in ()",
                                 b->name);
  }
  if (!loom__parser_check_operand_kind(p, fb, b, skip, PROGRAM_TYPE_CHAIN,
                                       "!tfrt.chain") ||
      !loom__parser_parse_optional_attrs(p, b) ||
      !loom__parser_expect(p, TOKEN_COLON, "before the operand types")) {
    return false;
  }
  return loom__parser_parse_signature(p, fb, b, skip + 1, true);
}

static const program_custom_op_t kOps[] = {
    {.name = "corert.get_op_handler", .parse = parse_get_op_handler},
    {.name = "corert.register_op_handler", .parse = parse_get_op_handler},
    {.name = "corert.create_null_op_handler", .parse = parse_create_handler},
    {.name = "corert.create_cpu_op_handler", .parse = parse_create_handler},
    {.name = "corert.create_logging_op_handler", .parse = parse_create_handler},
    {.name = "corert.executeop",
     .parse = loom__parser_corert_executeop,
     .parse_generic = parse_executeop_generic},
    {.name = "corert.executeop.seq",
     .parse = loom__parser_corert_executeop,
     .parse_generic = parse_executeop_generic},
    {.name = "corert.const_dense_tensor",
     .parse = loom__parser_corert_const_dense},
    {.name = "corert.const_string_tensor",
     .parse = loom__parser_corert_handle_result},
    {.name = "corert.create_dense_tensor.",
     .prefix = true,
     .parse = loom__parser_corert_handle_result},
    {.name = "corert.print_tensorhandle", .parse = parse_chain_result},
    {.name = "corert.tensorhandle_to_int32", .parse = parse_to_int32},
    {.name = "corert.tensorhandle_to_shape", .parse = parse_to_shape},
    {.name = "corert.cond", .parse = parse_corert_control},
    {.name = "corert.while", .parse = parse_corert_control},
    {.name = "corert.create_op_attrs", .parse = parse_opattrs_result},
    {.name = "corert.op_attrs_set.",
     .prefix = true,
     .parse = parse_chain_result},
    {.name = "corert.op_attrs_set_array.",
     .prefix = true,
     .parse = parse_chain_result},
};

const program_dialect_t loom__parser_dialect_corert = {
    .name = "corert",
    .ops = kOps,
    .num_ops = sizeof(kOps) / sizeof(kOps[0]),
};

//===----------------------------------------------------------------------===//
// corert_sync: the same ops for functions without chains ({tfrt.sync})
//===----------------------------------------------------------------------===//

// corert_sync.get_op_handler "name" {attrs}
// corert_sync.register_op_handler %h "name" {attrs}
static bool parse_sync_handler(parser_t* p, function_builder_t* fb,
                               op_builder_t* b, const char* suffix) {
  (void)suffix;
  bool get = strcmp(b->name, "corert_sync.get_op_handler") == 0;
  if (!get) {
    if (!loom__parser_parse_operand(p, fb, b) ||
        !loom__parser_check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_OP_HANDLER,
                                         "!corert.ophandler")) {
      return false;
    }
    loom__parser_accept(p, TOKEN_COMMA);
  }
  if (p->tok.kind != TOKEN_STRING) {
    return loom__parser_error_got(p,
                                  "expected the op handler's name (a "
                                  "string)");
  }
  program_attr_t name;
  if (!loom__parser_parse_attr(p, NULL, &name) ||
      !loom__parser_set_attr(p, &b->attrs, "op_handler_name", &name) ||
      !loom__parser_parse_optional_attrs(p, b)) {
    return false;
  }
  return !get || loom__parser_add_result_kind(p, b, PROGRAM_TYPE_OP_HANDLER,
                                              "!corert.ophandler");
}

// corert_sync.print_tensorhandle %h (or (%h)): no result.
static bool parse_sync_print(parser_t* p, function_builder_t* fb,
                             op_builder_t* b, const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, 1) &&
         loom__parser_check_operand_kind(
             p, fb, b, 0, PROGRAM_TYPE_TENSOR_HANDLE, "!corert.tensorhandle");
}

static const program_custom_op_t kSyncOps[] = {
    {.name = "corert_sync.get_op_handler", .parse = parse_sync_handler},
    {.name = "corert_sync.register_op_handler", .parse = parse_sync_handler},
    {.name = "corert_sync.executeop",
     .parse = loom__parser_corert_executeop,
     .parse_generic = parse_executeop_generic},
    {.name = "corert_sync.const_dense_tensor",
     .parse = loom__parser_corert_const_dense},
    {.name = "corert_sync.create_dense_tensor.",
     .prefix = true,
     .parse = loom__parser_corert_handle_result},
    {.name = "corert_sync.print_tensorhandle", .parse = parse_sync_print},
};

const program_dialect_t loom__parser_dialect_corert_sync = {
    .name = "corert_sync",
    .ops = kSyncOps,
    .num_ops = sizeof(kSyncOps) / sizeof(kSyncOps[0]),
};
