// The custom forms of TFRT's test dialect that programs write as such:
//
//   tfrt_test.benchmark "NAME"(%a : T, ...) duration_secs = 1,
//       max_count = 100, num_warmup_runs = 10 { ... tfrt.return %r : T }
//
// The operands are what the region may use (TFRT makes them its
// arguments); the keyword attributes are i32, num_warmup_runs 1 unless
// given; the region returns one value; the result is a !tfrt.chain.
//
//   tfrt_test.sync_benchmark @f(%a : T, ...) duration_secs = 1,
//       max_count = 100, num_warmup_runs = 10
//
// runs function @f (which takes the operands and returns nothing) the same
// way; it has no result.
//
//   %r = tfrt_test.do.async %a, %b [attributes {...}] : (T, T) -> (R) {
//     ... tfrt.return %x : R }
//
// runs its region with the values it uses; its results are the region's.

#include <string.h>

#include "function/program_parser.h"

// `(%a : T, ...) key = N, ...`: the operands with their types, then the
// i32 keyword attributes (num_warmup_runs 1 unless given).
static bool parse_benchmark_tail(parser_t* p, function_builder_t* fb,
                                 op_builder_t* b) {
  if (!loom__parser_expect(p, TOKEN_LPAREN, "to begin the operand list")) {
    return false;
  }
  if (!loom__parser_accept(p, TOKEN_RPAREN)) {
    do {
      const program_type_t* type = NULL;
      if (!loom__parser_parse_operand(p, fb, b) ||
          !loom__parser_expect(p, TOKEN_COLON, "after the operand") ||
          !loom__parser_parse_type(p, &type) ||
          !loom__parser_check_operand_type(p, fb, b, b->num_operands - 1,
                                           type)) {
        return false;
      }
    } while (loom__parser_accept(p, TOKEN_COMMA));
    if (!loom__parser_expect(p, TOKEN_RPAREN, "to close the operand list")) {
      return false;
    }
  }
  const program_type_t* i32 = NULL;
  if (!loom__parser_type(p, PROGRAM_TYPE_INTEGER, "i32", &i32)) return false;
  do {
    if (p->tok.kind != TOKEN_BARE_ID) {
      return loom__parser_error_got(p,
                                    "expected a keyword attribute "
                                    "(max_count = N)");
    }
    const char* key = NULL;
    if (!loom__parser_strndup(p, p->tok.text, p->tok.length, &key)) {
      return false;
    }
    loom__parser_advance(p);
    program_attr_t value;
    if (!loom__parser_expect(p, TOKEN_EQUAL, "after the attribute's name")) {
      return false;
    }
    if (p->tok.kind != TOKEN_INTEGER && p->tok.kind != TOKEN_MINUS) {
      return loom__parser_error_got(p, "expected an integer value of '%s'",
                                    key);
    }
    if (!loom__parser_parse_number(p, &value)) return false;
    value.type = i32;
    if (!loom__parser_set_attr(p, &b->attrs, key, &value)) return false;
  } while (loom__parser_accept(p, TOKEN_COMMA));
  loom_attr_value_t unused;
  if (!loom_op_attrs_get(&b->attrs, "num_warmup_runs", &unused)) {
    program_attr_t one = {.kind = PROGRAM_ATTR_INT, .type = i32, .u.i = 1};
    if (!loom__parser_set_attr(p, &b->attrs, "num_warmup_runs", &one)) {
      return false;
    }
  }
  return true;
}

static bool parse_benchmark(parser_t* p, function_builder_t* fb,
                            op_builder_t* b, const char* suffix) {
  (void)suffix;
  if (p->tok.kind != TOKEN_STRING) {
    return loom__parser_error_got(p,
                                  "expected the benchmark's name (a string)");
  }
  program_attr_t name;
  if (!loom__parser_parse_attr(p, NULL, &name) ||
      !loom__parser_set_attr(p, &b->attrs, "name", &name) ||
      !parse_benchmark_tail(p, fb, b)) {
    return false;
  }
  if (!loom__parser_is(p, TOKEN_LBRACE)) {
    return loom__parser_error_got(p, "expected '{' to begin the benchmark");
  }
  if (!loom__parser_parse_region(p, fb, b)) return false;
  const program_function_t* region = b->regions[0];
  if (region->num_results != 1) {
    return loom__parser_error_at(
        p, region->ops[region->num_ops - 1].location,
        "'%s' returns %d values from its region: one is expected", b->name,
        region->num_results);
  }
  return loom__parser_add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain");
}

static bool parse_sync_benchmark(parser_t* p, function_builder_t* fb,
                                 op_builder_t* b, const char* suffix) {
  (void)suffix;
  return loom__parser_parse_callee(p, b) && parse_benchmark_tail(p, fb, b);
}

// The function takes the operands and returns nothing.
static bool check_sync_benchmark(parser_t* p, const program_function_t* caller,
                                 const program_op_t* op) {
  return loom__parser_check_call_signature(p, caller, op, 0, op->callees[0]);
}

static bool parse_do_async(parser_t* p, function_builder_t* fb, op_builder_t* b,
                           const char* suffix) {
  (void)suffix;
  if (!loom__parser_parse_operand_list(p, fb, b)) return false;
  if (loom__parser_is_keyword(p, "attributes")) {
    loom__parser_advance(p);
    if (!loom__parser_parse_optional_attrs(p, b)) return false;
  }
  if (!loom__parser_expect(p, TOKEN_COLON, "before the operation's type") ||
      !loom__parser_parse_signature(p, fb, b, 0, false)) {
    return false;
  }
  if (!loom__parser_is(p, TOKEN_LBRACE)) {
    return loom__parser_error_got(p, "expected '{' to begin the body");
  }
  if (!loom__parser_parse_region(p, fb, b)) return false;
  const program_function_t* region = b->regions[0];
  const program_op_t* ret = &region->ops[region->num_ops - 1];
  bool same = region->num_results == b->num_results;
  for (int32_t i = 0; same && i < b->num_results; ++i) {
    same = region->result_types[i] == b->result_types[i];
  }
  if (!same) {
    return loom__parser_error_at(p, ret->location,
                                 "'%s' returns %d values from its region, "
                                 "which do not match the %d results of its "
                                 "type",
                                 b->name, region->num_results, b->num_results);
  }
  return true;
}

static const program_custom_op_t kOps[] = {
    {.name = "tfrt_test.do.async", .parse = parse_do_async},
    {.name = "tfrt_test.benchmark", .parse = parse_benchmark},
    {.name = "tfrt_test.sync_benchmark",
     .parse = parse_sync_benchmark,
     .check_callees = check_sync_benchmark},
};

const program_dialect_t loom__parser_dialect_tfrt_test = {
    .name = "tfrt_test",
    .ops = kOps,
    .num_ops = sizeof(kOps) / sizeof(kOps[0]),
};
