// The custom forms of TFRT's dense host tensor dialect (tfrt_dht):
//
//   %t = tfrt_dht.create_uninitialized_tensor.i32.2 [3 : i64, 2 : i64]
//   %c = tfrt_dht.fill_tensor_with_constant.i32 %t, %ch 0 : i32
//   %c = tfrt_dht.set_tensor_with_constant_values.i32 %t, %ch [1 : i32, ...]
//   %c = tfrt_dht.print_tensor %t, %ch
//   %eq, %c = tfrt_dht.tensor_equal.i32 %a, %b, %ch     (tensor_allclose.*)
//   %buf, %c = tfrt_dht.get_buffer %t, %ch
//   %buf = tfrt_dht.allocate_buffer %size, %alignment
//   %slice = tfrt_dht.get_buffer_slice %buf, %offset, %size
//   %c = tfrt_dht.print_buffer %buf, %ch
//   %t, %c = tfrt_dht.make_tensor.f32 %buf, %shape, %ch
//   %shape = tfrt_dht.get_tensor_shape %t
//
// and tfrt_dht_sync's, for functions without chains (`{tfrt.sync}`):
// create_uninitialized_tensor, `set_tensor_with_constant_values.<dtype> %t
// [...]`, `print_tensor %t`, get_tensor_shape, allocate_buffer,
// get_buffer_slice, `make_tensor.<dtype> %buf, %shape`. The generic form
// of each works too (create_dense_tensor and create_from_scalar have only
// that one, as in TFRT's tests).
//
// And the coo dialect's (TFRT's sparse host tensors):
//
//   %coo, %c = coo.convert_dht_to_coo.i32.2 %t, %ch
//   %t, %c = coo.convert_coo_to_dht.i32.2 %coo, %ch
//   %eq, %c = coo.tensor_equal.i32.2 %a, %b, %ch

#include "function/program_parser.h"

#define TENSOR_TYPE "!t.tensor"
#define BUFFER_TYPE "!ht.host_buffer"

static bool add_chain(parser_t* p, op_builder_t* b) {
  return loom__parser_add_result_kind(p, b, PROGRAM_TYPE_CHAIN, "!tfrt.chain");
}

static bool add_opaque(parser_t* p, op_builder_t* b, const char* spelling) {
  return loom__parser_add_result_kind(p, b, PROGRAM_TYPE_OPAQUE, spelling);
}

static bool parse_create(parser_t* p, function_builder_t* fb, op_builder_t* b,
                         const char* suffix) {
  (void)fb;
  (void)suffix;
  if (!loom__parser_is(p, TOKEN_LSQUARE)) {
    return loom__parser_error_got(p, "expected '[' to begin the shape");
  }
  program_attr_t shape;
  return loom__parser_parse_attr(p, NULL, &shape) &&
         loom__parser_set_attr(p, &b->attrs, "shape", &shape) &&
         loom__parser_parse_optional_attrs(p, b) &&
         add_opaque(p, b, TENSOR_TYPE);
}

// `%t, %ch VALUE` into attribute `name`, with a chain result.
static bool parse_tensor_chain_value(parser_t* p, function_builder_t* fb,
                                     op_builder_t* b, const char* name) {
  for (int i = 0; i < 2; ++i) {
    if ((i > 0 && !loom__parser_expect(p, TOKEN_COMMA, "between operands")) ||
        !loom__parser_parse_operand(p, fb, b)) {
      return false;
    }
  }
  program_attr_t value;
  return loom__parser_parse_attr(p, NULL, &value) &&
         loom__parser_set_attr(p, &b->attrs, name, &value) &&
         loom__parser_parse_optional_attrs(p, b) && add_chain(p, b);
}

static bool parse_fill(parser_t* p, function_builder_t* fb, op_builder_t* b,
                       const char* suffix) {
  (void)suffix;
  return parse_tensor_chain_value(p, fb, b, "value");
}

static bool parse_set_values(parser_t* p, function_builder_t* fb,
                             op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_tensor_chain_value(p, fb, b, "values");
}

// `N operands -> results`: the results' spellings in `results`, NULL for a
// chain.
static bool parse_fixed(parser_t* p, function_builder_t* fb, op_builder_t* b,
                        int32_t count, const char* result0, const char* result1,
                        bool chain1) {
  if (!loom__parser_parse_simple(p, fb, b, count)) return false;
  if (!(result0 ? add_opaque(p, b, result0) : add_chain(p, b))) return false;
  if (result1 && !add_opaque(p, b, result1)) return false;
  return !chain1 || add_chain(p, b);
}

static bool parse_to_chain(parser_t* p, function_builder_t* fb, op_builder_t* b,
                           const char* suffix) {
  (void)suffix;
  return parse_fixed(p, fb, b, 2, NULL, NULL, false);
}

static bool parse_compare(parser_t* p, function_builder_t* fb, op_builder_t* b,
                          const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, 3) &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_INTEGER, "i1") &&
         add_chain(p, b);
}

static bool parse_get_buffer(parser_t* p, function_builder_t* fb,
                             op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_fixed(p, fb, b, 2, BUFFER_TYPE, NULL, true);
}

static bool parse_allocate_buffer(parser_t* p, function_builder_t* fb,
                                  op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_fixed(p, fb, b, 2, BUFFER_TYPE, NULL, false);
}

static bool parse_buffer_slice(parser_t* p, function_builder_t* fb,
                               op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_fixed(p, fb, b, 3, BUFFER_TYPE, NULL, false);
}

static bool parse_make_tensor(parser_t* p, function_builder_t* fb,
                              op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_fixed(p, fb, b, 3, TENSOR_TYPE, NULL, true);
}

static bool parse_get_shape(parser_t* p, function_builder_t* fb,
                            op_builder_t* b, const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, 1) &&
         loom__parser_add_result_kind(p, b, PROGRAM_TYPE_SHAPE, "!ts.shape");
}

static bool parse_no_op(parser_t* p, function_builder_t* fb, op_builder_t* b,
                        const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, 1) && add_chain(p, b);
}

// tfrt_dht_sync.set_tensor_with_constant_values.<dtype> %t [values]
static bool parse_sync_set_values(parser_t* p, function_builder_t* fb,
                                  op_builder_t* b, const char* suffix) {
  (void)suffix;
  program_attr_t values;
  return loom__parser_parse_operand(p, fb, b) &&
         loom__parser_parse_attr(p, NULL, &values) &&
         loom__parser_set_attr(p, &b->attrs, "values", &values) &&
         loom__parser_parse_optional_attrs(p, b);
}

// tfrt_dht_sync.make_tensor.<dtype> %buffer, %shape
static bool parse_sync_make_tensor(parser_t* p, function_builder_t* fb,
                                   op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_fixed(p, fb, b, 2, TENSOR_TYPE, NULL, false);
}

// tfrt_dht_sync.print_tensor %t
static bool parse_sync_print(parser_t* p, function_builder_t* fb,
                             op_builder_t* b, const char* suffix) {
  (void)suffix;
  return loom__parser_parse_simple(p, fb, b, 1);
}

static const program_custom_op_t kSyncOps[] = {
    {.name = "tfrt_dht_sync.print_tensor", .parse = parse_sync_print},
    {.name = "tfrt_dht_sync.get_tensor_shape", .parse = parse_get_shape},
    {.name = "tfrt_dht_sync.allocate_buffer", .parse = parse_allocate_buffer},
    {.name = "tfrt_dht_sync.get_buffer_slice", .parse = parse_buffer_slice},
    {.name = "tfrt_dht_sync.create_uninitialized_tensor.",
     .prefix = true,
     .parse = parse_create},
    {.name = "tfrt_dht_sync.set_tensor_with_constant_values.",
     .prefix = true,
     .parse = parse_sync_set_values},
    {.name = "tfrt_dht_sync.make_tensor.",
     .prefix = true,
     .parse = parse_sync_make_tensor},
};

const program_dialect_t loom__parser_dialect_dht_sync = {
    .name = "tfrt_dht_sync",
    .ops = kSyncOps,
    .num_ops = sizeof(kSyncOps) / sizeof(kSyncOps[0]),
};

static const program_custom_op_t kOps[] = {
    {.name = "tfrt_dht.print_tensor", .parse = parse_to_chain},
    {.name = "tfrt_dht.print_tensor_shape", .parse = parse_to_chain},
    {.name = "tfrt_dht.print_buffer", .parse = parse_to_chain},
    {.name = "tfrt_dht.get_buffer", .parse = parse_get_buffer},
    {.name = "tfrt_dht.allocate_buffer", .parse = parse_allocate_buffer},
    {.name = "tfrt_dht.get_buffer_slice", .parse = parse_buffer_slice},
    {.name = "tfrt_dht.get_tensor_shape", .parse = parse_get_shape},
    {.name = "tfrt_dht.no_op_ht", .parse = parse_no_op},
    {.name = "tfrt_dht.create_uninitialized_tensor.",
     .prefix = true,
     .parse = parse_create},
    {.name = "tfrt_dht.fill_tensor_with_constant.",
     .prefix = true,
     .parse = parse_fill},
    {.name = "tfrt_dht.set_tensor_with_constant_values.",
     .prefix = true,
     .parse = parse_set_values},
    {.name = "tfrt_dht.tensor_equal.", .prefix = true, .parse = parse_compare},
    {.name = "tfrt_dht.tensor_allclose.",
     .prefix = true,
     .parse = parse_compare},
    {.name = "tfrt_dht.make_tensor.",
     .prefix = true,
     .parse = parse_make_tensor},
};

const program_dialect_t loom__parser_dialect_dht = {
    .name = "tfrt_dht",
    .ops = kOps,
    .num_ops = sizeof(kOps) / sizeof(kOps[0]),
};

// coo.convert_dht_to_coo.<dtype>.<rank> and convert_coo_to_dht: a tensor
// and a chain in, a tensor and a chain out.
static bool parse_coo_convert(parser_t* p, function_builder_t* fb,
                              op_builder_t* b, const char* suffix) {
  (void)suffix;
  return parse_fixed(p, fb, b, 2, TENSOR_TYPE, NULL, true);
}

static const program_custom_op_t kCooOps[] = {
    {.name = "coo.convert_dht_to_coo.",
     .prefix = true,
     .parse = parse_coo_convert},
    {.name = "coo.convert_coo_to_dht.",
     .prefix = true,
     .parse = parse_coo_convert},
    {.name = "coo.tensor_equal.", .prefix = true, .parse = parse_compare},
};

const program_dialect_t loom__parser_dialect_coo = {
    .name = "coo",
    .ops = kCooOps,
    .num_ops = sizeof(kCooOps) / sizeof(kCooOps[0]),
};
