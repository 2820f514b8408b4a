// Errors of the program parser: the status format (`file:line:col: error:
// what`), the location it reports, the message for each kind of mistake,
// and that arbitrary bytes never crash it.

#include <stdlib.h>

#include "loom/program.h"
#include "test_support.h"

typedef struct error_case_t {
  const char* text;
  int32_t line;
  int32_t column;
  const char* message;  // the part after "error: "
} error_case_t;

static const error_case_t kCases[] = {
    {"bogus", 1, 1, "expected 'func.func', got 'bogus'"},
    {"func.func @f(", 1, 14,
     "expected an argument (%name: type), got end of file"},
    {"func.func @f() -> x {", 1, 19, "expected a type, got 'x'"},
    {"func.func @f() {\n  %x = tfrt.constant.i32 1\n}", 3, 1,
     "function 'f' must end with 'tfrt.return', got '}'"},
    {"func.func @f() {\n  tfrt.return %y : i32\n}", 2, 15,
     "use of undeclared SSA value '%y'"},
    {"func.func @f() {\n  %a = tfrt.new.chain\n  %a = tfrt.new.chain\n  "
     "tfrt.return\n}",
     3, 3, "redefinition of SSA value '%a'"},
    {"func.func @f() {\n  %x = tfrt.frob\n  tfrt.return\n}", 2, 8,
     "custom op 'tfrt.frob' is unknown; write it in the generic form "
     "\"tfrt.frob\"(...) : (...) -> (...)"},
    {"func.func @f() {\n  %x = \"a.b\"() {k = 1, k = 2} : () -> i32\n  "
     "tfrt.return\n}",
     2, 24, "duplicate key 'k' in the attribute dictionary"},
    {"func.func @f() {\n  %x = tfrt.constant.i32 1.5\n  tfrt.return\n}", 2, 26,
     "floating point value not valid for integer type 'i32'"},
    {"func.func @f() {\n  %x = \"a.b\"() {v = 300 : i8} : () -> i32\n  "
     "tfrt.return\n}",
     2, 21, "integer constant 300 is out of range for type 'i8'"},
    {"func.func @f() {\n  %t = corert.const_dense_tensor dense<[1, 2]> : "
     "tensor<3xi32>\n  tfrt.return\n}",
     2, 34,
     "dense attribute has 2 elements, but its type 'tensor<3xi32>' "
     "needs 3"},
    {"func.func @f() {\n  tfrt.call @g() : () -> ()\n  tfrt.return\n}", 2, 3,
     "'tfrt.call' refers to an undefined function @g"},
    {"func.func @f() -> i32 {\n  %c = tfrt.new.chain\n  tfrt.return %c : "
     "!tfrt.chain\n}",
     3, 3,
     "type of return operand 0 ('!tfrt.chain') doesn't match function "
     "result type ('i32') in function @f"},
    {"func.func @f() {\n  %x = \"a.b\"() {s = \"open\n  tfrt.return\n}", 2, 21,
     "expected an attribute value, got '\"open'"},
    {"func.func @f() {\n  %x = \"a.b\"() : () -> !x<\n}", 2, 24,
     "unbalanced '<' in dialect type"},
    {"func.func @f() {\n  \x01\n}", 2, 3, "expected an operation, got '\\x01'"},
    {"func.func @f() {\n  %x = tfrt.constant.i64 99999999999999999999\n}", 2,
     26, "integer literal is out of range, got '99999999999999999999'"},
    {"func.func @f() { tfrt.return }\nfunc.func @f() { tfrt.return }", 2, 11,
     "redefinition of symbol named 'f'"},
    {"func.func @f() {\n  %x = \"corert.executeop\"() : () -> ()\n  "
     "tfrt.return\n}",
     2, 29,
     "expected '{' to begin the attributes (op_name, op_attrs), got ':'"},
    {"func.func @f(%h: !corert.ophandler) {\n  %x = \"corert.executeop\"(%h) "
     "{op_attrs = []} : (!corert.ophandler) -> ()\n  tfrt.return\n}",
     2, 8, "'corert.executeop' needs the op to execute: op_name = \"...\""},
    {"func.func @f() {\n  %x = foo.bar\n  tfrt.return\n}", 2, 8,
     "custom op 'foo.bar' is unknown; write it in the generic form "
     "\"foo.bar\"(...) : (...) -> (...)"},
    // Quoted as written, however large.
    {"func.func @f() -> !tfrt.chain {\n  %x = tfrt.new.chain\n  tfrt.return "
     "%x#99999999999 : !tfrt.chain\n}",
     3, 15, "result number 99999999999 is out of range for '%x', which has 1"},
    // The generic form spells the dialect: "return" is not func.return.
    {"func.func @f() {\n  \"return\"() : () -> ()\n}", 3, 1,
     "function 'f' must end with 'tfrt.return', got '}'"},
};

static void reports_each_mistake_at_its_location(void** state) {
  (void)state;
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    const error_case_t* c = &kCases[i];
    loom_program_t* program = NULL;
    loom_program_location_t where;
    loom_status_t status =
        loom_program_parse(loom_allocator_system(), "bad.mlir", c->text,
                           strlen(c->text), &program, &where);
    if (!status) {
      loom_program_destroy(program);
      fail_msg("case %zu parsed: %s", i, c->text);
    }
    assert_null(program);
    assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
    char expected[1024];
    snprintf(expected, sizeof(expected), "bad.mlir:%d:%d: error: %s", c->line,
             c->column, c->message);
    if (strcmp(loom_status_message(status), expected) != 0) {
      fail_msg("case %zu:\n  got      %s\n  expected %s", i,
               loom_status_message(status), expected);
    }
    assert_string_equal(where.file, "bad.mlir");
    assert_int_equal(where.line, c->line);
    assert_int_equal(where.column, c->column);
    loom_status_free(status);
  }
}

static void quotes_long_tokens_shortened(void** state) {
  (void)state;
  const char* text =
      "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghij";
  loom_program_t* program = NULL;
  loom_status_t status = loom_program_parse(loom_allocator_system(), "t", text,
                                            strlen(text), &program, NULL);
  assert_non_null(status);
  assert_non_null(strstr(loom_status_message(status),
                         "got 'abcdefghijklmnopqrstuvwxyzabcdefghijklmn...'"));
  loom_status_free(status);
}

// Arbitrary bytes, including NULs and truncations of a valid program:
// always an error or a program, never a crash (the fuzzer does this at
// length; this keeps a quick deterministic version in the unit tests).
static void survives_arbitrary_bytes(void** state) {
  (void)state;
  const char* valid =
      "func.func @f(%a: i32) -> (i32, !tfrt.chain) {\n"
      "  %ch = tfrt.new.chain\n"
      "  %x = \"k.v\"(%a) {s = [1, \"x\", dense<1> : tensor<2xf32>], "
      "t = #corert.shape<2x?>} : (i32) -> i32\n"
      "  tfrt.return %x, %ch : i32, !tfrt.chain\n"
      "}\n";
  size_t length = strlen(valid);
  for (size_t cut = 0; cut <= length; ++cut) {
    loom_program_t* program = NULL;
    loom_status_t status = loom_program_parse(loom_allocator_system(), "t",
                                              valid, cut, &program, NULL);
    loom_status_free(status);
    loom_program_destroy(program);
  }
  char noise[512];
  unsigned seed = 12345;
  for (int round = 0; round < 2000; ++round) {
    size_t n = (size_t)(rand_r(&seed) % (int)sizeof(noise));
    for (size_t i = 0; i < n; ++i) {
      // Mostly characters of the syntax, sometimes anything.
      static const char kAlphabet[] = "%@!#^\"(){}[]<>,:=-+?*x0123456789.abz_ ";
      int r = rand_r(&seed);
      noise[i] = (r & 7) ? kAlphabet[(size_t)r % (sizeof(kAlphabet) - 1)]
                         : (char)(r >> 8);
    }
    loom_program_t* program = NULL;
    loom_status_t status = loom_program_parse(loom_allocator_system(), "t",
                                              noise, n, &program, NULL);
    loom_status_free(status);
    loom_program_destroy(program);
  }
}

// `prefix` repeated `depth` times, then `middle`, then `suffix` as often,
// inside `before` ... `after` (malloc'ed).
static char* nest(const char* before, const char* prefix, const char* middle,
                  const char* suffix, const char* after, size_t depth) {
  size_t size = strlen(before) + depth * (strlen(prefix) + strlen(suffix)) +
                strlen(middle) + strlen(after) + 1;
  char* text = malloc(size);
  assert_non_null(text);
  char* p = text;
  p += sprintf(p, "%s", before);
  for (size_t i = 0; i < depth; ++i) p += sprintf(p, "%s", prefix);
  p += sprintf(p, "%s", middle);
  for (size_t i = 0; i < depth; ++i) p += sprintf(p, "%s", suffix);
  sprintf(p, "%s", after);
  return text;
}

typedef struct nesting_case_t {
  const char* before;
  const char* prefix;
  const char* middle;
  const char* suffix;
  const char* after;
  const char* message;  // NULL: parses
} nesting_case_t;

// Text nested a hundred thousand deep is an error at the level past the
// bound, never a stack overflow; nesting that the parser does not recurse
// on (locations) parses.
static void deep_nesting_is_an_error_not_a_crash(void** state) {
  (void)state;
  static const nesting_case_t kNesting[] = {
      {"func.func @f(%x: ", "complex<", "f32", ">", ") { tfrt.return }",
       "bad.mlir:1:146: error: types nest more than 16 deep, got 'complex'"},
      {"func.func @f(%x: ", "tensor<", "f32", ">", ") { tfrt.return }",
       "bad.mlir:1:130: error: types nest more than 16 deep, got 'tensor'"},
      {"func.func @f() {\n  %x = \"a.b\"() {k = ", "[", "1", "]",
       "} : () -> i32\n  tfrt.return\n}",
       "bad.mlir:2:86: error: attribute nests too deeply, got '['"},
      {"func.func @f() {\n  %x = corert.const_dense_tensor dense<", "[", "1",
       "]", "> : tensor<1xi32>\n  tfrt.return\n}",
       "bad.mlir:2:73: error: dense attribute nests too deeply, got '['"},
      {"func.func @f() {\n  %x = tfrt.new.chain loc(", "(", "\"a\"", ")",
       ")\n  tfrt.return\n}", NULL},
  };
  for (size_t i = 0; i < sizeof(kNesting) / sizeof(kNesting[0]); ++i) {
    const nesting_case_t* c = &kNesting[i];
    char* text =
        nest(c->before, c->prefix, c->middle, c->suffix, c->after, 100000);
    loom_program_t* program = NULL;
    loom_status_t status =
        loom_program_parse(loom_allocator_system(), "bad.mlir", text,
                           strlen(text), &program, NULL);
    free(text);
    if (!c->message) {
      LOOM_ASSERT_OK(status);
      loom_program_destroy(program);
      continue;
    }
    assert_null(program);
    assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
    if (strcmp(loom_status_message(status), c->message) != 0) {
      fail_msg("case %zu:\n  got      %s\n  expected %s", i,
               loom_status_message(status), c->message);
    }
    loom_status_free(status);
  }
}

// A short text asking for millions of values (4,096 results an operation)
// is an error at the operation past the bound: each call of the function
// would allocate them all.
static void values_per_function_are_bounded(void** state) {
  (void)state;
  size_t capacity = 300 * 80;
  char* text = malloc(capacity);
  assert_non_null(text);
  size_t n = (size_t)snprintf(text, capacity,
                              "func.func @f() {\n"
                              "  %%ch = tfrt.new.chain\n"
                              "  %%cpu = corert.get_op_handler %%ch \"cpu\"\n");
  for (int i = 0; i < 300; ++i) {
    n += (size_t)snprintf(text + n, capacity - n,
                          "  %%v%03d:4096 = corert.executeop(%%cpu) \"a\"() "
                          ": 4096\n",
                          i);
  }
  loom_program_t* program = NULL;
  loom_status_t status = loom_program_parse(loom_allocator_system(), "bad.mlir",
                                            text, n, &program, NULL);
  free(text);
  assert_null(program);
  assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
  // 2 + 4096 * 256 values pass 2^20 at the 256th operation, on line 259.
  assert_string_equal(
      loom_status_message(status),
      "bad.mlir:259:16: error: function @f has more than 1048576 values");
  loom_status_free(status);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reports_each_mistake_at_its_location),
      cmocka_unit_test(quotes_long_tokens_shortened),
      cmocka_unit_test(survives_arbitrary_bytes),
      cmocka_unit_test(deep_nesting_is_an_error_not_a_crash),
      cmocka_unit_test(values_per_function_are_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
