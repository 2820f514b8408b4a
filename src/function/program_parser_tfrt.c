// The tfrt dialect's custom forms: chains, scalar constants and arithmetic
// (tfrt.constant.i32, tfrt.add.f64, ...), printing, the calls tfrt.call,
// tfrt.case and tfrt.cond, and the loops tfrt.while and tfrt.repeat.i32.

#include <string.h>

#include "function/program_dtype.h"
#include "function/program_parser.h"

// Optional `: T, ...` after operands (types of the operands), checked.
static bool parse_optional_operand_types(parser_t* p, function_builder_t* fb,
                                         op_builder_t* b) {
  if (!loom__parser_accept(p, TOKEN_COLON)) return true;
  const program_type_t** types = NULL;
  int32_t count = 0;
  if (!loom__parser_parse_type_list(p, &types, &count)) return false;
  return loom__parser_check_operand_types(p, fb, b, 0, types, count);
}

static bool parse_new_chain(parser_t* p, function_builder_t* fb,
                            op_builder_t* b, const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, 0) &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain");
}

static bool parse_merge_chains(parser_t* p, function_builder_t* fb,
                               op_builder_t* b, const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, -1) &&
         parse_optional_operand_types(p, fb, b) &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain");
}

// The scalar types of the tfrt.constant / add / print families, named by
// their spellings (LOOM_DTYPE_INVALID ends a list).
static bool scalar_suffix(parser_t* p, const op_builder_t* b,
                          const char* suffix, const loom_dtype_t* allowed,
                          const program_type_t** out) {
  for (; *allowed; ++allowed) {
    if (strcmp(suffix, loom__program_dtype_spelling(*allowed)) != 0) continue;
    program_type_kind_t kind = loom_dtype_is_floating(*allowed)
                                   ? PROGRAM_TYPE_FLOAT
                                   : PROGRAM_TYPE_INTEGER;
    return loom__parser_type(p, kind, suffix, out);
  }
  return loom__parser_error_at(p, b->location, "custom op '%s' is unknown",
                               b->name);
}

static const loom_dtype_t kConstantTypes[] = {
    LOOM_DTYPE_BOOL,  LOOM_DTYPE_INT32,  LOOM_DTYPE_INT64,
    LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INVALID};
static const loom_dtype_t kArithmeticTypes[] = {
    LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE,
    LOOM_DTYPE_INVALID};
static const loom_dtype_t kIntegerTypes[] = {LOOM_DTYPE_INT32, LOOM_DTYPE_INT64,
                                             LOOM_DTYPE_INVALID};

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
                                   b->name, type->spelling, written->spelling);
    }
  }
  // Typed as the constant's type (with its range check).
  program_attr_t typed = value;
  if (value.kind == PROGRAM_ATTR_BOOL) {
    if (type->dtype != LOOM_DTYPE_BOOL) {
      return loom__parser_error_at(p, at, "'%s' needs a number", b->name);
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
  return loom__parser_parse_optional_attrs(p, b) &&
         loom__parser_add_result(p, b, type);
}

static bool parse_binary(parser_t* p, function_builder_t* fb, op_builder_t* b,
                         const char* suffix) {
  bool is_equal = strncmp(b->name, "tfrt.equal.", 11) == 0;
  bool is_div = strncmp(b->name, "tfrt.div.", 9) == 0;
  const program_type_t* type = NULL;
  if (!scalar_suffix(p, b, suffix,
                     is_equal || is_div ? kIntegerTypes : kArithmeticTypes,
                     &type) ||
      !loom__parser_parse_simple(p, fb, b, 2) ||
      !loom__parser_check_operand_type(p, fb, b, 0, type) ||
      !loom__parser_check_operand_type(p, fb, b, 1, type)) {
    return false;
  }
  if (is_equal)
    return loom__parser_add_result_kind(p, b, PROGRAM_TYPE_INTEGER, "i1");
  if (is_div)
    return loom__parser_add_result(p, b, type) &&
           loom__parser_add_result(p, b, type);
  return loom__parser_add_result(p, b, type);
}

static bool parse_print(parser_t* p, function_builder_t* fb, op_builder_t* b,
                        const char* suffix) {
  const program_type_t* type = NULL;
  return scalar_suffix(p, b, suffix, kConstantTypes, &type) &&
         loom__parser_parse_simple(p, fb, b, 2) &&
         loom__parser_check_operand_type(p, fb, b, 0, type) &&
         loom__parser_check_operand_kind(p, fb, b, 1, PROGRAM_TYPE_CHAIN,
                                         "!tfrt.chain") &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain");
}

// `(%args) attr-dict : (T...) -> (T...)` after the callee(s), with
// `skip` leading operands not in the type's inputs.
static bool parse_call_tail(parser_t* p, function_builder_t* fb,
                            op_builder_t* b, int32_t skip) {
  if (!loom__parser_expect(p, TOKEN_LPAREN, "to begin the call's operands")) {
    return false;
  }
  if (!loom__parser_parse_operand_list(p, fb, b)) return false;
  if (!loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list") ||
      !loom__parser_parse_optional_attrs(p, b) ||
      !loom__parser_expect(p, TOKEN_COLON, "before the call's type")) {
    return false;
  }
  return loom__parser_parse_signature(p, fb, b, skip, false);
}

static bool parse_call(parser_t* p, function_builder_t* fb, op_builder_t* b,
                       const char* suffix) {
  (void)suffix;
  return loom__parser_parse_callee(p, b) && parse_call_tail(p, fb, b, 0);
}

static bool parse_case(parser_t* p, function_builder_t* fb, op_builder_t* b,
                       const char* suffix) {
  (void)suffix;
  if (!loom__parser_parse_operand(p, fb, b) ||
      !loom__parser_check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_INTEGER,
                                       "i32")) {
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
  if (!loom__parser_parse_operand(p, fb, b) ||
      !loom__parser_check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_INTEGER,
                                       "i1")) {
    return false;
  }
  loom__parser_accept(p, TOKEN_COMMA);
  if (!loom__parser_parse_callee(p, b)) return false;
  loom__parser_accept(p, TOKEN_COMMA);
  if (!loom__parser_parse_callee(p, b)) return false;
  return parse_call_tail(p, fb, b, 1);
}

// %r = tfrt.while %cond @body(%a, ...) [{attrs}] parallel_iterations(N)
//     : (T, ...) -> (T, ...)
// (TFRT's form); parallel_iterations becomes an i64 attribute.
static bool parse_while(parser_t* p, function_builder_t* fb, op_builder_t* b,
                        const char* suffix) {
  (void)suffix;
  if (!loom__parser_parse_operand(p, fb, b) ||
      !loom__parser_check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_INTEGER,
                                       "i1") ||
      !loom__parser_parse_callee(p, b) ||
      !loom__parser_expect(p, TOKEN_LPAREN, "to begin the loop's operands") ||
      !loom__parser_parse_operand_list(p, fb, b) ||
      !loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list") ||
      !loom__parser_parse_optional_attrs(p, b)) {
    return false;
  }
  if (loom__parser_is_keyword(p, "parallel_iterations")) {
    loom__parser_advance(p);
    program_attr_t value;
    const program_type_t* i64 = NULL;
    if (!loom__parser_expect(p, TOKEN_LPAREN, "after 'parallel_iterations'") ||
        !loom__parser_parse_number(p, &value) ||
        !loom__parser_expect(p, TOKEN_RPAREN,
                             "to close 'parallel_iterations'") ||
        !loom__parser_type(p, PROGRAM_TYPE_INTEGER, "i64", &i64)) {
      return false;
    }
    if (value.kind != PROGRAM_ATTR_INT || value.u.i < 1) {
      return loom__parser_error_at(p, value.location,
                                   "'parallel_iterations' of '%s' must be a "
                                   "positive integer",
                                   b->name);
    }
    value.type = i64;
    if (!loom__parser_set_attr(p, &b->attrs, "parallel_iterations", &value)) {
      return false;
    }
  }
  if (!loom__parser_expect(p, TOKEN_COLON, "before the loop's type") ||
      !loom__parser_parse_signature(p, fb, b, 1, false)) {
    return false;
  }
  if (b->num_results != b->num_operands - 1) {
    return loom__parser_error_at(p, b->location,
                                 "'%s' has %d loop values but %d results",
                                 b->name, b->num_operands - 1, b->num_results);
  }
  return true;
}

// tfrt.while: the body takes the loop values and returns their next
// values and an i1 (whether to run again).
static bool check_while(parser_t* p, const program_function_t* caller,
                        const program_op_t* op) {
  const program_function_t* body = op->callees[0];
  int32_t n = op->num_results;
  bool ok = body->num_arguments == n && body->num_results == n + 1;
  for (int32_t i = 0; ok && i < n; ++i) {
    const program_type_t* type = caller->value_types[op->operands[1 + i]];
    ok = body->value_types[i] == type && body->result_types[i] == type;
  }
  if (ok) {
    const program_type_t* last = body->result_types[n];
    ok =
        last->kind == PROGRAM_TYPE_INTEGER && strcmp(last->spelling, "i1") == 0;
  }
  if (ok) return true;
  return loom__parser_error_at(p, op->location,
                               "'%s' needs @%s to take its %d loop values "
                               "and return their next values and an i1",
                               op->name, body->name, n);
}

// %r = tfrt.repeat.i32 %count, %a, ... [{attrs}] : T, ... { region }
// (TFRT's form): the region, using the loop values by their names,
// returns their next values.
static bool parse_repeat(parser_t* p, function_builder_t* fb, op_builder_t* b,
                         const char* suffix) {
  (void)suffix;
  if (!loom__parser_parse_operand_list(p, fb, b)) return false;
  if (b->num_operands < 1) {
    return loom__parser_error_at(p, b->location,
                                 "'%s' needs an i32 count as its first operand",
                                 b->name);
  }
  if (!loom__parser_check_operand_kind(p, fb, b, 0, PROGRAM_TYPE_INTEGER,
                                       "i32") ||
      !loom__parser_parse_optional_attrs(p, b)) {
    return false;
  }
  int32_t n = b->num_operands - 1;
  if (n > 0) {
    const program_type_t** types = NULL;
    int32_t count = 0;
    if (!loom__parser_expect(p, TOKEN_COLON, "before the loop values' types") ||
        !loom__parser_parse_type_list(p, &types, &count) ||
        !loom__parser_check_operand_types(p, fb, b, 1, types, count)) {
      return false;
    }
    for (int32_t i = 0; i < count; ++i) {
      if (!loom__parser_add_result(p, b, types[i])) return false;
    }
  }
  if (!loom__parser_is(p, TOKEN_LBRACE)) {
    return loom__parser_error_got(p, "expected '{' to begin the loop's body");
  }
  if (!loom__parser_parse_region(p, fb, b)) return false;
  const program_function_t* region = b->regions[0];
  bool same = region->num_results == n;
  for (int32_t i = 0; same && i < n; ++i) {
    same = region->result_types[i] == b->result_types[i];
  }
  if (!same) {
    return loom__parser_error_at(p, region->ops[region->num_ops - 1].location,
                                 "'%s' returns %d values from its body, which "
                                 "do not match its %d loop values",
                                 b->name, region->num_results, n);
  }
  return true;
}

// tfrt.call: the callee takes every operand.
static bool check_call(parser_t* p, const program_function_t* caller,
                       const program_op_t* op) {
  return loom__parser_check_call_signature(p, caller, op, 0, op->callees[0]);
}

// tfrt.case, tfrt.cond: each branch takes the operands after the first.
static bool check_branches(parser_t* p, const program_function_t* caller,
                           const program_op_t* op) {
  for (int32_t c = 0; c < op->num_callees; ++c) {
    if (!loom__parser_check_call_signature(p, caller, op, 1, op->callees[c])) {
      return false;
    }
  }
  return true;
}

static const program_custom_op_t kOps[] = {
    {.name = "tfrt.new.chain", .parse = parse_new_chain},
    {.name = "tfrt.merge.chains", .parse = parse_merge_chains},
    {.name = "tfrt.return",
     .is_return = true,
     .parse = loom__parser_parse_return},
    {.name = "tfrt.constant.", .prefix = true, .parse = parse_constant},
    {.name = "tfrt.add.", .prefix = true, .parse = parse_binary},
    {.name = "tfrt.equal.", .prefix = true, .parse = parse_binary},
    {.name = "tfrt.div.", .prefix = true, .parse = parse_binary},
    {.name = "tfrt.print.", .prefix = true, .parse = parse_print},
    {.name = "tfrt.call", .parse = parse_call, .check_callees = check_call},
    {.name = "tfrt.case", .parse = parse_case, .check_callees = check_branches},
    {.name = "tfrt.cond",
     .parse = parse_tfrt_cond,
     .check_callees = check_branches},
    {.name = "tfrt.while", .parse = parse_while, .check_callees = check_while},
    {.name = "tfrt.repeat.i32", .parse = parse_repeat},
};

const program_dialect_t loom__parser_dialect_tfrt = {
    .name = "tfrt",
    .ops = kOps,
    .num_ops = sizeof(kOps) / sizeof(kOps[0]),
};
