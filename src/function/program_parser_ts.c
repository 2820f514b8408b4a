// The ts (tensor shape) dialect's custom forms.

#include "function/program_parser.h"

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
         loom__parser_parse_optional_attrs(p, b) &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_SHAPE, "!ts.shape");
}

static bool parse_no_result(parser_t* p, function_builder_t* fb,
                            op_builder_t* b, const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, -1);
}

static const program_custom_op_t kOps[] = {
    {.name = "ts.build_shape", .parse = parse_build_shape},
    {.name = "ts.print_shape", .parse = parse_no_result},
};

const program_dialect_t loom__parser_dialect_ts = {
    .name = "ts",
    .ops = kOps,
    .num_ops = sizeof(kOps) / sizeof(kOps[0]),
};
