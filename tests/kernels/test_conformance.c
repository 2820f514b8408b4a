// Kernel conformance: runs every case of a file written by
// tests/kernels/conformance/gen_cases.py (expected values from NumPy)
// through the core runtime on the cpu handler, and compares.
//
//   test_conformance CASES_FILE [NAME_FILTER]
//
// Every failing case is reported (name, what differs, where); the exit
// status is 1 when any failed. The file format is described in casegen.py.

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "loom/loom.h"

enum { kMaxTensors = 32, kMaxCaseAttrs = 16 };

// A resource input: a variable made for the case (VarHandleOp), holding
// the input's value unless uninitialised.
typedef enum variable_kind_t {
  NOT_A_VARIABLE = 0,
  VARIABLE,
  UNINITIALIZED_VARIABLE,
} variable_kind_t;

typedef struct tensor_spec_t {
  loom_dtype_t dtype;
  loom_shape_t shape;
  loom_tensor_t* tensor;  // owned
  variable_kind_t variable;
  int variable_input;  // expected variables: the input it is
} tensor_spec_t;

typedef struct case_t {
  char name[256];
  char op[128];
  loom_op_attrs_t attrs;
  tensor_spec_t inputs[kMaxTensors];
  int num_inputs;
  tensor_spec_t expects[kMaxTensors];
  int num_expects;
  // The values of input variables after the op.
  tensor_spec_t variable_expects[kMaxTensors];
  int num_variable_expects;
  double rtol, atol;
  bool expect_error;
  char error_code[64];
  char error_text[512];
  int outputs;
} case_t;

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

static char* next_token(char** cursor) {
  char* p = *cursor;
  while (*p && isspace((unsigned char)*p)) p++;
  if (!*p) return NULL;
  char* start = p;
  while (*p && !isspace((unsigned char)*p)) p++;
  if (*p) *p++ = '\0';
  *cursor = p;
  return start;
}

// Consumes `word` when it is the next token.
static bool skip_word(char** cursor, const char* word) {
  char* p = *cursor;
  while (*p && isspace((unsigned char)*p)) p++;
  size_t length = strlen(word);
  if (strncmp(p, word, length) != 0 ||
      (p[length] && !isspace((unsigned char)p[length]))) {
    return false;
  }
  *cursor = p + length;
  return true;
}

static int fail_parse(int line, const char* what) {
  fprintf(stderr, "cases:%d: %s\n", line, what);
  return -1;
}

static loom_status_t store_value(void* data, loom_dtype_t dtype, int64_t index,
                                 const char* token) {
  double real = strtod(token, NULL);
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      ((float*)data)[index] = (float)real;
      break;
    case LOOM_DTYPE_DOUBLE:
      ((double*)data)[index] = real;
      break;
    case LOOM_DTYPE_HALF:
      ((uint16_t*)data)[index] = loom__float_to_half((float)real);
      break;
    case LOOM_DTYPE_BFLOAT16:
      ((uint16_t*)data)[index] = loom__float_to_bfloat16((float)real);
      break;
    case LOOM_DTYPE_BOOL:
      ((bool*)data)[index] = atoi(token) != 0;
      break;
    case LOOM_DTYPE_INT8:
      ((int8_t*)data)[index] = (int8_t)strtoll(token, NULL, 10);
      break;
    case LOOM_DTYPE_INT16:
      ((int16_t*)data)[index] = (int16_t)strtoll(token, NULL, 10);
      break;
    case LOOM_DTYPE_INT32:
      ((int32_t*)data)[index] = (int32_t)strtoll(token, NULL, 10);
      break;
    case LOOM_DTYPE_INT64:
      ((int64_t*)data)[index] = strtoll(token, NULL, 10);
      break;
    case LOOM_DTYPE_UINT8:
      ((uint8_t*)data)[index] = (uint8_t)strtoull(token, NULL, 10);
      break;
    case LOOM_DTYPE_UINT16:
      ((uint16_t*)data)[index] = (uint16_t)strtoull(token, NULL, 10);
      break;
    case LOOM_DTYPE_UINT32:
      ((uint32_t*)data)[index] = (uint32_t)strtoull(token, NULL, 10);
      break;
    case LOOM_DTYPE_UINT64:
      ((uint64_t*)data)[index] = strtoull(token, NULL, 10);
      break;
    case LOOM_DTYPE_COMPLEX64:
    case LOOM_DTYPE_COMPLEX128: {
      // "re,im"
      char* end = NULL;
      double re = strtod(token, &end);
      double im = end && *end == ',' ? strtod(end + 1, NULL) : 0.0;
      if (dtype == LOOM_DTYPE_COMPLEX64) {
        ((float*)data)[2 * index] = (float)re;
        ((float*)data)[2 * index + 1] = (float)im;
      } else {
        ((double*)data)[2 * index] = re;
        ((double*)data)[2 * index + 1] = im;
      }
      break;
    }
    default:
      return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                              "dtype %s in a case file",
                              loom_dtype_name(dtype));
  }
  return loom_ok_status();
}

// A string element: "x" and the hex of its bytes.
static loom_status_t store_string(loom_tensor_t* tensor, int64_t index,
                                  const char* token) {
  if (token[0] != 'x' || strlen(token + 1) % 2 != 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "a string value is x<hex>, not %s", token);
  }
  size_t size = strlen(token + 1) / 2;
  char* bytes = malloc(size + 1);
  if (!bytes) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (size_t i = 0; i < size; ++i) {
    char pair[3] = {token[1 + 2 * i], token[2 + 2 * i], '\0'};
    bytes[i] = (char)strtol(pair, NULL, 16);
  }
  loom_status_t status =
      loom_tstring_copy(loom_tensor_string_at(tensor, index), bytes, size);
  free(bytes);
  return status;
}

// "<dtype> <rank> <dims...> <values...>"
static int parse_tensor(char** cursor, int line, tensor_spec_t* spec) {
  char* name = next_token(cursor);
  char* rank_text = next_token(cursor);
  if (!name || !rank_text) return fail_parse(line, "tensor: missing dtype");
  loom_status_t status = loom_dtype_from_name(name, &spec->dtype);
  if (status) {
    loom_status_free(status);
    return fail_parse(line, "tensor: unknown dtype");
  }
  int rank = atoi(rank_text);
  if (rank < 0 || rank > LOOM_MAX_SHAPE_RANK) {
    return fail_parse(line, "tensor: rank out of range");
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int i = 0; i < rank; ++i) {
    char* dim = next_token(cursor);
    if (!dim) return fail_parse(line, "tensor: missing dim");
    dims[i] = strtoll(dim, NULL, 10);
  }
  // Above rank 8 the dims are interned (loom/shape.h).
  status = loom_shape_initialize_large(&spec->shape, dims, rank);
  if (!status && spec->dtype == LOOM_DTYPE_STRING) {
    status = loom_tensor_create_string(loom_allocator_default(), &spec->shape,
                                       &spec->tensor);
  } else if (!status) {
    status = loom_tensor_create_dense(loom_allocator_default(), spec->dtype,
                                      &spec->shape, &spec->tensor);
  }
  if (status) {
    loom_status_free(status);
    return fail_parse(line, "tensor: bad shape or dtype");
  }
  void* data = loom_tensor_data(spec->tensor);
  int64_t count = loom_tensor_num_elements(spec->tensor);
  for (int64_t i = 0; i < count; ++i) {
    char* token = next_token(cursor);
    if (!token) return fail_parse(line, "tensor: too few values");
    status = spec->dtype == LOOM_DTYPE_STRING
                 ? store_string(spec->tensor, i, token)
                 : store_value(data, spec->dtype, i, token);
    if (status) {
      loom_status_free(status);
      return fail_parse(line, "tensor: unsupported dtype");
    }
  }
  return 0;
}

static int parse_attr(char** cursor, int line, loom_op_attrs_t* attrs) {
  char* name = next_token(cursor);
  char* kind = next_token(cursor);
  if (!name || !kind) return fail_parse(line, "attr: missing name or kind");
  loom_status_t status = loom_ok_status();
  if (strcmp(kind, "int") == 0) {
    status = loom_op_attrs_set_i64(attrs, name,
                                   strtoll(next_token(cursor), NULL, 10));
  } else if (strcmp(kind, "float") == 0) {
    status = loom_op_attrs_set_f32(attrs, name,
                                   (float)strtod(next_token(cursor), NULL));
  } else if (strcmp(kind, "bool") == 0) {
    status = loom_op_attrs_set_bool(attrs, name, atoi(next_token(cursor)) != 0);
  } else if (strcmp(kind, "type") == 0) {
    loom_dtype_t dtype;
    status = loom_dtype_from_name(next_token(cursor), &dtype);
    if (!status) status = loom_op_attrs_set_dtype(attrs, name, dtype);
  } else if (strcmp(kind, "tensor") == 0) {
    tensor_spec_t spec = {0};
    int result = parse_tensor(cursor, line, &spec);
    if (!result) status = loom_op_attrs_set_tensor(attrs, name, spec.tensor);
    loom_tensor_release(spec.tensor);
    if (result) return result;
  } else if (strcmp(kind, "string") == 0) {
    // An empty string is no token at all.
    const char* text = next_token(cursor);
    if (!text) text = "";
    status = loom_op_attrs_set_string(attrs, name, text, strlen(text));
  } else if (strcmp(kind, "shape") == 0) {
    int rank = atoi(next_token(cursor));
    int64_t dims[LOOM_MAX_RANK];
    for (int i = 0; i < rank && i < LOOM_MAX_RANK; ++i) {
      dims[i] = strtoll(next_token(cursor), NULL, 10);
    }
    status = loom_op_attrs_set_shape(attrs, name, dims, rank);
  } else if (strcmp(kind, "strings") == 0) {
    // Each "x<hex of its bytes>", decoded in place in the line.
    int count = atoi(next_token(cursor));
    if (count < 0 || count > 64) return fail_parse(line, "attr: bad count");
    loom_string_view_t views[64];
    for (int i = 0; i < count; ++i) {
      char* token = next_token(cursor);
      if (!token || token[0] != 'x' || strlen(token + 1) % 2 != 0) {
        return fail_parse(line, "attr: a string is x<hex>");
      }
      size_t size = strlen(token + 1) / 2;
      for (size_t j = 0; j < size; ++j) {
        char pair[3] = {token[1 + 2 * j], token[2 + 2 * j], '\0'};
        token[j] = (char)strtol(pair, NULL, 16);
      }
      views[i] = (loom_string_view_t){.data = token, .size = size};
    }
    status = loom_op_attrs_set_string_list(attrs, name, views, count);
  } else if (strcmp(kind, "ints") == 0 || strcmp(kind, "floats") == 0 ||
             strcmp(kind, "bools") == 0 || strcmp(kind, "types") == 0) {
    int count = atoi(next_token(cursor));
    if (count < 0 || count > 1024) return fail_parse(line, "attr: bad count");
    int64_t ints[1024];
    float floats[1024];
    bool bools[1024];
    loom_dtype_t types[1024];
    for (int i = 0; i < count; ++i) {
      char* token = next_token(cursor);
      if (!token) return fail_parse(line, "attr: too few values");
      ints[i] = strtoll(token, NULL, 10);
      floats[i] = (float)strtod(token, NULL);
      bools[i] = atoi(token) != 0;
      if (kind[0] == 't') {
        status = loom_dtype_from_name(token, &types[i]);
        if (status) break;
      }
    }
    if (!status) {
      switch (kind[0]) {
        case 'i':
          status = loom_op_attrs_set_list(attrs, name, LOOM_ATTR_KIND_I64, ints,
                                          count);
          break;
        case 'f':
          status = loom_op_attrs_set_list(attrs, name, LOOM_ATTR_KIND_F32,
                                          floats, count);
          break;
        case 'b':
          status = loom_op_attrs_set_list(attrs, name, LOOM_ATTR_KIND_BOOL,
                                          bools, count);
          break;
        default:
          status = loom_op_attrs_set_list(attrs, name, LOOM_ATTR_KIND_DTYPE,
                                          types, count);
          break;
      }
    }
  } else {
    return fail_parse(line, "attr: unknown kind");
  }
  if (status) {
    char text[512];
    loom_status_format(status, text, sizeof(text));
    loom_status_free(status);
    fprintf(stderr, "cases:%d: attr %s: %s\n", line, name, text);
    return -1;
  }
  return 0;
}

static void clear_case(case_t* c) {
  for (int i = 0; i < c->num_inputs; ++i)
    loom_tensor_release(c->inputs[i].tensor);
  for (int i = 0; i < c->num_expects; ++i) {
    loom_tensor_release(c->expects[i].tensor);
  }
  for (int i = 0; i < c->num_variable_expects; ++i) {
    loom_tensor_release(c->variable_expects[i].tensor);
  }
  loom_op_attrs_deinitialize(&c->attrs);
}

//===----------------------------------------------------------------------===//
// Comparing
//===----------------------------------------------------------------------===//

static double element(const loom_tensor_t* t, int64_t i) {
  const void* data = loom_tensor_data(t);
  switch (loom_tensor_dtype(t)) {
    case LOOM_DTYPE_FLOAT:
      return ((const float*)data)[i];
    case LOOM_DTYPE_DOUBLE:
      return ((const double*)data)[i];
    case LOOM_DTYPE_HALF:
      return loom__half_to_float(((const uint16_t*)data)[i]);
    case LOOM_DTYPE_BFLOAT16:
      return loom__bfloat16_to_float(((const uint16_t*)data)[i]);
    default:
      return 0;
  }
}

static bool is_floating(loom_dtype_t dtype) {
  return dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_DOUBLE ||
         dtype == LOOM_DTYPE_HALF || dtype == LOOM_DTYPE_BFLOAT16;
}

// An empty string when `got` matches `want`, else what differs.
static void compare(const case_t* c, const loom_tensor_t* got,
                    const tensor_spec_t* want, char* why, size_t size) {
  why[0] = '\0';
  if (loom_tensor_dtype(got) != want->dtype) {
    snprintf(why, size, "dtype %s, expected %s",
             loom_dtype_name(loom_tensor_dtype(got)),
             loom_dtype_name(want->dtype));
    return;
  }
  if (!loom_shape_equal(loom_tensor_shape(got), &want->shape)) {
    char a[960], b[960];  // up to rank 254 of small dims
    loom_shape_format(loom_tensor_shape(got), a, sizeof(a));
    loom_shape_format(&want->shape, b, sizeof(b));
    snprintf(why, size, "shape %s, expected %s", a, b);
    return;
  }
  int64_t count = loom_tensor_num_elements(got);
  if (want->dtype == LOOM_DTYPE_STRING) {
    for (int64_t i = 0; i < count; ++i) {
      const loom_tstring_t* g = loom_tensor_string_at(got, i);
      const loom_tstring_t* w = loom_tensor_string_at(want->tensor, i);
      if (!g || loom_tstring_size(g) != loom_tstring_size(w) ||
          memcmp(loom_tstring_data(g), loom_tstring_data(w),
                 loom_tstring_size(w)) != 0) {
        snprintf(why, size, "string element %" PRId64 " differs", i);
        return;
      }
    }
    return;
  }
  if (is_floating(want->dtype)) {
    for (int64_t i = 0; i < count; ++i) {
      double g = element(got, i), w = element(want->tensor, i);
      bool ok = isnan(w)   ? isnan(g)
                : isinf(w) ? g == w
                           : fabs(g - w) <= c->atol + c->rtol * fabs(w);
      if (!ok) {
        snprintf(why, size, "element %" PRId64 " is %.9g, expected %.9g", i, g,
                 w);
        return;
      }
    }
    return;
  }
  size_t bytes = loom_tensor_byte_size(got);
  const unsigned char* g = loom_tensor_data(got);
  const unsigned char* w = loom_tensor_data(want->tensor);
  size_t element_size = loom_dtype_size(want->dtype);
  for (size_t offset = 0; offset < bytes; offset += element_size) {
    if (memcmp(g + offset, w + offset, element_size) != 0) {
      snprintf(why, size, "element %zu differs", offset / element_size);
      return;
    }
  }
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

static int g_failures;
static int g_cases;

static void report(const case_t* c, const char* what) {
  fprintf(stderr, "FAIL %s (%s): %s\n", c->name, c->op, what);
  g_failures++;
}

// Runs op_name on args[0, n) (consumed) after *chain, replacing *chain;
// stores one result in *out when out is not NULL. Returns the first error:
// the execution's or the op's.
static loom_status_t run_op(loom_runtime_t* runtime, const char* op_name,
                            loom_tensor_handle_t** args, int n,
                            const loom_op_attrs_t* attrs,
                            loom_async_value_t** chain,
                            loom_tensor_handle_t** out) {
  loom_op_handler_t* cpu = loom_runtime_get_op_handler(runtime, "cpu");
  loom_location_t location = {0};
  loom_tensor_handle_t* result = NULL;
  loom_status_t status =
      loom_runtime_execute(runtime, op_name, cpu, location, args, n, attrs,
                           out ? &result : NULL, out ? 1 : 0, chain);
  if (!status) {
    status = loom_host_context_await(loom_runtime_host(runtime), chain, 1);
  }
  if (!status && loom_async_value_is_error(*chain)) {
    status = loom_status_clone(loom_async_value_error(*chain));
  }
  if (out) {
    if (status) {
      loom_tensor_handle_release(result);
    } else {
      *out = result;
    }
  }
  return status;
}

// A new variable of the spec's dtype and shape, assigned its value unless
// the spec asks for an uninitialised one.
static loom_status_t make_variable(loom_runtime_t* runtime,
                                   const tensor_spec_t* spec,
                                   loom_async_value_t** chain,
                                   loom_tensor_handle_t** out) {
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_default());
  loom_status_t status = loom_op_attrs_set_dtype(&attrs, "dtype", spec->dtype);
  if (!status) {
    status = loom_op_attrs_set_shape(
        &attrs, "shape", loom_shape_dims(&spec->shape), spec->shape.rank);
  }
  loom_tensor_handle_t* var = NULL;
  if (!status) {
    status = run_op(runtime, "VarHandleOp", NULL, 0, &attrs, chain, &var);
  }
  loom_op_attrs_deinitialize(&attrs);
  if (!status && spec->variable == VARIABLE) {
    loom_tensor_handle_t* args[2] = {var, NULL};
    loom_tensor_handle_retain(var);
    status = loom_tensor_handle_create(
        loom_runtime_get_op_handler(runtime, "cpu"), spec->tensor, &args[1]);
    if (!status) {
      loom_op_attrs_t assign;
      loom_op_attrs_initialize(&assign, loom_allocator_default());
      status =
          run_op(runtime, "AssignVariableOp", args, 2, &assign, chain, NULL);
      loom_op_attrs_deinitialize(&assign);
    } else {
      loom_tensor_handle_release(args[0]);
    }
  }
  if (status) {
    loom_tensor_handle_release(var);
    return status;
  }
  *out = var;
  return loom_ok_status();
}

// The value of variable `var` as `dtype` (ReadVariableOp).
static loom_status_t read_variable(loom_runtime_t* runtime,
                                   loom_tensor_handle_t* var,
                                   loom_dtype_t dtype,
                                   loom_async_value_t** chain,
                                   loom_tensor_t** out) {
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_default());
  loom_status_t status = loom_op_attrs_set_dtype(&attrs, "dtype", dtype);
  loom_tensor_handle_t* value = NULL;
  loom_tensor_handle_retain(var);
  if (!status) {
    status = run_op(runtime, "ReadVariableOp", &var, 1, &attrs, chain, &value);
  } else {
    loom_tensor_handle_release(var);
  }
  loom_op_attrs_deinitialize(&attrs);
  if (!status) status = loom_tensor_handle_resolve(value, out);
  loom_tensor_handle_release(value);
  return status;
}

static bool uses_variables(const case_t* c) {
  if (c->num_variable_expects > 0) return true;
  for (int i = 0; i < c->num_inputs; ++i) {
    if (c->inputs[i].variable != NOT_A_VARIABLE) return true;
  }
  return false;
}

// Checks the case's expected variable values (after the op succeeded).
static void check_variables(loom_runtime_t* runtime, case_t* c,
                            loom_tensor_handle_t* const* vars,
                            loom_async_value_t** chain) {
  char why[2048];
  for (int i = 0; i < c->num_variable_expects; ++i) {
    const tensor_spec_t* want = &c->variable_expects[i];
    int input = want->variable_input;
    if (input < 0 || input >= c->num_inputs || !vars[input]) {
      report(c, "expects the value of an input that is not a variable");
      return;
    }
    loom_tensor_t* got = NULL;
    loom_status_t status =
        read_variable(runtime, vars[input], want->dtype, chain, &got);
    if (status) {
      char text[512];
      loom_status_format(status, text, sizeof(text));
      loom_status_free(status);
      snprintf(why, sizeof(why), "reading variable %d: %s", input, text);
      report(c, why);
      return;
    }
    compare(c, got, want, why, sizeof(why));
    loom_tensor_release(got);
    if (why[0]) {
      char what[2200];
      snprintf(what, sizeof(what), "variable %d: %s", input, why);
      report(c, what);
      return;
    }
  }
}

static void run_case(loom_runtime_t* runtime, case_t* c) {
  g_cases++;
  loom_op_handler_t* cpu = loom_runtime_get_op_handler(runtime, "cpu");
  // Cases with variables order their ops by a chain, which also carries
  // the errors of ops without results (Assert): those run on one too.
  int num_results = c->expect_error ? c->outputs : c->num_expects;
  bool chained = uses_variables(c) || num_results == 0;
  loom_async_value_t* chain =
      chained ? loom_host_context_ready_chain(loom_runtime_host(runtime))
              : NULL;
  loom_tensor_handle_t* args[kMaxTensors];
  loom_tensor_handle_t* vars[kMaxTensors] = {NULL};
  for (int i = 0; i < c->num_inputs; ++i) {
    loom_status_t status;
    if (c->inputs[i].variable != NOT_A_VARIABLE) {
      status = make_variable(runtime, &c->inputs[i], &chain, &vars[i]);
      if (!status) {
        loom_tensor_handle_retain(vars[i]);
        args[i] = vars[i];
      }
    } else {
      status = loom_tensor_handle_create(cpu, c->inputs[i].tensor, &args[i]);
    }
    if (status) {
      char text[512], what[600];
      loom_status_format(status, text, sizeof(text));
      loom_status_free(status);
      for (int j = 0; j < i; ++j) loom_tensor_handle_release(args[j]);
      for (int j = 0; j < i; ++j) loom_tensor_handle_release(vars[j]);
      if (chain) loom_async_value_release(chain);
      snprintf(what, sizeof(what), "cannot make input %d: %s", i, text);
      report(c, what);
      return;
    }
  }
  loom_tensor_handle_t* results[kMaxTensors] = {NULL};
  loom_location_t location = {0};
  loom_status_t status = loom_runtime_execute(
      runtime, c->op, cpu, location, args, c->num_inputs, &c->attrs, results,
      num_results, chained ? &chain : NULL);
  if (!status && chained) {
    status = loom_host_context_await(loom_runtime_host(runtime), &chain, 1);
    if (!status && loom_async_value_is_error(chain)) {
      status = loom_status_clone(loom_async_value_error(chain));
    }
  }
  // The first error: Execute's, the chain's, or a result's.
  loom_tensor_t* outputs[kMaxTensors] = {NULL};
  for (int i = 0; !status && i < num_results; ++i) {
    status = loom_tensor_handle_resolve(results[i], &outputs[i]);
  }
  char why[2048];
  if (c->expect_error) {
    if (!status) {
      report(c, "succeeded; expected an error");
    } else if (strcmp(loom_status_code_name(loom_status_code(status)),
                      c->error_code) != 0 ||
               !strstr(loom_status_message(status), c->error_text)) {
      char text[512];
      loom_status_format(status, text, sizeof(text));
      snprintf(why, sizeof(why), "error '%s'; expected %s containing '%s'",
               text, c->error_code, c->error_text);
      report(c, why);
    }
  } else if (status) {
    char text[512];
    loom_status_format(status, text, sizeof(text));
    report(c, text);
  } else {
    for (int i = 0; i < num_results; ++i) {
      compare(c, outputs[i], &c->expects[i], why, sizeof(why));
      if (why[0]) {
        char what[2200];
        snprintf(what, sizeof(what), "result %d: %s", i, why);
        report(c, what);
        break;
      }
    }
    if (c->num_variable_expects > 0) check_variables(runtime, c, vars, &chain);
  }
  loom_status_free(status);
  for (int i = 0; i < num_results; ++i) {
    loom_tensor_release(outputs[i]);
    loom_tensor_handle_release(results[i]);
  }
  for (int i = 0; i < c->num_inputs; ++i) loom_tensor_handle_release(vars[i]);
  if (chain) loom_async_value_release(chain);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CASES_FILE [NAME_FILTER]\n", argv[0]);
    return 2;
  }
  FILE* file = fopen(argv[1], "r");
  if (!file) {
    fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
    return 2;
  }
  const char* filter = argc > 2 ? argv[2] : NULL;
  loom_host_context_t* host = NULL;
  loom_runtime_t* runtime = NULL;
  loom_runtime_options_t options;
  loom_status_t status = loom_host_context_create(NULL, &host);
  if (!status) {
    loom_runtime_options_initialize(&options, host);
    status = loom_runtime_create(&options, &runtime);
  }
  if (status) {
    char text[512];
    loom_status_format(status, text, sizeof(text));
    fprintf(stderr, "setup: %s\n", text);
    return 2;
  }
  size_t capacity = 1 << 20;
  char* line = malloc(capacity);
  case_t* c = calloc(1, sizeof(*c));
  int line_number = 0;
  bool in_case = false;
  int result = 0;
  while (getline(&line, &capacity, file) > 0) {
    line_number++;
    char* cursor = line;
    char* keyword = next_token(&cursor);
    if (!keyword) continue;
    if (strcmp(keyword, "case") == 0) {
      memset(c, 0, sizeof(*c));
      loom_op_attrs_initialize(&c->attrs, loom_allocator_default());
      snprintf(c->name, sizeof(c->name), "%s", next_token(&cursor));
      in_case = true;
    } else if (!in_case) {
      result = fail_parse(line_number, "expected 'case'");
      break;
    } else if (strcmp(keyword, "op") == 0) {
      snprintf(c->op, sizeof(c->op), "%s", next_token(&cursor));
    } else if (strcmp(keyword, "attr") == 0) {
      if ((result = parse_attr(&cursor, line_number, &c->attrs))) break;
    } else if (strcmp(keyword, "input") == 0 && c->num_inputs < kMaxTensors) {
      tensor_spec_t* spec = &c->inputs[c->num_inputs++];
      if (skip_word(&cursor, "variable")) {
        spec->variable = VARIABLE;
      } else if (skip_word(&cursor, "uninitialized_variable")) {
        spec->variable = UNINITIALIZED_VARIABLE;
      }
      if ((result = parse_tensor(&cursor, line_number, spec))) break;
    } else if (strcmp(keyword, "expect") == 0 &&
               skip_word(&cursor, "variable")) {
      if (c->num_variable_expects >= kMaxTensors) {
        result = fail_parse(line_number, "too many expected variables");
        break;
      }
      tensor_spec_t* spec = &c->variable_expects[c->num_variable_expects++];
      char* input = next_token(&cursor);
      spec->variable_input = input ? atoi(input) : -1;
      if ((result = parse_tensor(&cursor, line_number, spec))) break;
    } else if (strcmp(keyword, "expect") == 0 && c->num_expects < kMaxTensors) {
      if ((result = parse_tensor(&cursor, line_number,
                                 &c->expects[c->num_expects++]))) {
        break;
      }
    } else if (strcmp(keyword, "tolerance") == 0) {
      c->rtol = strtod(next_token(&cursor), NULL);
      c->atol = strtod(next_token(&cursor), NULL);
    } else if (strcmp(keyword, "error") == 0) {
      c->expect_error = true;
      snprintf(c->error_code, sizeof(c->error_code), "%s", next_token(&cursor));
      while (*cursor == ' ') cursor++;
      cursor[strcspn(cursor, "\n")] = '\0';
      snprintf(c->error_text, sizeof(c->error_text), "%s", cursor);
    } else if (strcmp(keyword, "outputs") == 0) {
      c->outputs = atoi(next_token(&cursor));
    } else if (strcmp(keyword, "end") == 0) {
      if (!filter || strstr(c->name, filter)) run_case(runtime, c);
      clear_case(c);
      in_case = false;
    } else {
      result = fail_parse(line_number, "unknown keyword");
      break;
    }
  }
  if (in_case) clear_case(c);
  free(c);
  free(line);
  fclose(file);
  loom_runtime_destroy(runtime);
  loom_host_context_destroy(host);
  printf("%d cases, %d failed\n", g_cases, g_failures);
  if (result) return 2;
  return g_failures ? 1 : 0;
}
