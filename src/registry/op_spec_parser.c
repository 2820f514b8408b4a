// A recursive-descent parser for attribute and argument specs. Every error
// names the spec and the 1-based column where parsing stopped.

#include "registry/op_spec_parser.h"

#include "registry/attr_encoding.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//===----------------------------------------------------------------------===//
// Type groups (TensorFlow's NumberTypes, RealNumberTypes, QuantizedTypes)
//===----------------------------------------------------------------------===//

static const loom_dtype_t kNumberTypes[] = {
    LOOM_DTYPE_FLOAT,      LOOM_DTYPE_DOUBLE,   LOOM_DTYPE_INT64,
    LOOM_DTYPE_INT32,      LOOM_DTYPE_UINT8,    LOOM_DTYPE_UINT16,
    LOOM_DTYPE_INT16,      LOOM_DTYPE_INT8,     LOOM_DTYPE_COMPLEX64,
    LOOM_DTYPE_COMPLEX128, LOOM_DTYPE_QINT8,    LOOM_DTYPE_QUINT8,
    LOOM_DTYPE_QINT32,     LOOM_DTYPE_HALF,     LOOM_DTYPE_UINT32,
    LOOM_DTYPE_UINT64,     LOOM_DTYPE_BFLOAT16,
};

static const loom_dtype_t kRealNumberTypes[] = {
    LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT32,  LOOM_DTYPE_INT64,
    LOOM_DTYPE_UINT8, LOOM_DTYPE_INT16,  LOOM_DTYPE_INT8,   LOOM_DTYPE_UINT16,
    LOOM_DTYPE_HALF,  LOOM_DTYPE_UINT32, LOOM_DTYPE_UINT64, LOOM_DTYPE_BFLOAT16,
};

static const loom_dtype_t kQuantizedTypes[] = {
    LOOM_DTYPE_QINT8,   LOOM_DTYPE_QUINT8, LOOM_DTYPE_QINT16,
    LOOM_DTYPE_QUINT16, LOOM_DTYPE_QINT32,
};

#define COUNT_OF(array) ((int32_t)(sizeof(array) / sizeof((array)[0])))

static bool token_is(const char* data, size_t length, const char* word) {
  return strlen(word) == length && memcmp(data, word, length) == 0;
}

const loom_dtype_t* loom__dtype_group(const char* name, size_t length,
                                      int32_t* out_count) {
  // TensorFlow's op_def_builder also accepts "numerictype" and
  // "realnumerictype" as spellings of the first two.
  if (token_is(name, length, "numbertype") ||
      token_is(name, length, "numerictype")) {
    *out_count = COUNT_OF(kNumberTypes);
    return kNumberTypes;
  }
  if (token_is(name, length, "realnumbertype") ||
      token_is(name, length, "realnumerictype")) {
    *out_count = COUNT_OF(kRealNumberTypes);
    return kRealNumberTypes;
  }
  if (token_is(name, length, "quantizedtype")) {
    *out_count = COUNT_OF(kQuantizedTypes);
    return kQuantizedTypes;
  }
  return NULL;
}

//===----------------------------------------------------------------------===//
// Scanner
//===----------------------------------------------------------------------===//

typedef struct parser_t {
  const char* spec;
  const char* at;
  loom__arena_t* arena;
  const char* what;  // "attr" or "argument"
} parser_t;

static loom_status_t parse_error(const parser_t* parser, const char* format,
                                 ...) LOOM_PRINTF_FORMAT(2, 3);

enum {
  // Quoted text longer than this is cut (at a character) and ends in "...".
  kQuoteLimit = 80,
  kQuoteCapacity = kQuoteLimit + 4,
};

// The length of the UTF-8 character at `s` (not at its end): 1 for an
// ASCII byte or a byte that starts no valid sequence.
static size_t utf8_length(const char* s) {
  unsigned char c = (unsigned char)s[0];
  size_t length = c < 0x80           ? 1
                  : (c >> 5) == 0x6  ? 2
                  : (c >> 4) == 0xe  ? 3
                  : (c >> 3) == 0x1e ? 4
                                     : 1;
  for (size_t i = 1; i < length; ++i) {
    if (((unsigned char)s[i] >> 6) != 0x2) return 1;  // truncated or invalid
  }
  return length;
}

// Copies `text` into out[kQuoteCapacity], whole characters only, cut after
// kQuoteLimit bytes with "...".
static void quote(const char* text, char* out) {
  size_t length = 0;
  while (text[length]) {
    size_t next = utf8_length(text + length);
    if (length + next > kQuoteLimit) {
      memcpy(out, text, length);
      memcpy(out + length, "...", 4);
      return;
    }
    length += next;
  }
  memcpy(out, text, length + 1);
}

// The character at the parser (whole, however many bytes it takes), for
// "found 'x'"; out has room for 8 bytes.
static const char* current_char(const parser_t* parser, char* out) {
  size_t length = utf8_length(parser->at);
  if (length == 1 && (unsigned char)parser->at[0] >= 0x80) {
    snprintf(out, 8, "\\x%02x", (unsigned char)parser->at[0]);
  } else {
    memcpy(out, parser->at, length);
    out[length] = '\0';
  }
  return out;
}

static loom_status_t parse_error(const parser_t* parser, const char* format,
                                 ...) {
  char message[256];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  char spec[kQuoteCapacity];
  quote(parser->spec, spec);
  // The column counts characters, not bytes.
  int column = 1;
  for (const char* c = parser->spec; c < parser->at; ++c) {
    if (((unsigned char)*c >> 6) != 0x2) column++;
  }
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "invalid %s spec \"%s\": %s at column %d",
                          parser->what, spec, message, column);
}

static void skip_space(parser_t* parser) {
  while (*parser->at && isspace((unsigned char)*parser->at)) parser->at++;
}

static bool peek(parser_t* parser, char c) {
  skip_space(parser);
  return *parser->at == c;
}

static bool consume(parser_t* parser, char c) {
  if (!peek(parser, c)) return false;
  parser->at++;
  return true;
}

static loom_status_t expect(parser_t* parser, char c, const char* context) {
  if (consume(parser, c)) return loom_ok_status();
  if (*parser->at == '\0') {
    return parse_error(parser, "expected '%c' %s, found the end", c, context);
  }
  char found[8];
  return parse_error(parser, "expected '%c' %s, found '%s'", c, context,
                     current_char(parser, found));
}

typedef struct token_t {
  const char* data;
  size_t length;
} token_t;

static bool is_identifier_start(char c) {
  return isalpha((unsigned char)c) || c == '_';
}

static bool is_identifier_char(char c) {
  return isalnum((unsigned char)c) || c == '_';
}

// Reads [A-Za-z_][A-Za-z0-9_]*; false (nothing consumed) when absent.
static bool read_identifier(parser_t* parser, token_t* out) {
  skip_space(parser);
  if (!is_identifier_start(*parser->at)) return false;
  out->data = parser->at;
  while (is_identifier_char(*parser->at)) parser->at++;
  out->length = (size_t)(parser->at - out->data);
  return true;
}

static loom_status_t expect_identifier(parser_t* parser, const char* what,
                                       token_t* out) {
  if (read_identifier(parser, out)) return loom_ok_status();
  if (*parser->at == '\0') {
    return parse_error(parser, "expected %s, found the end", what);
  }
  char found[8];
  return parse_error(parser, "expected %s, found '%s'", what,
                     current_char(parser, found));
}

static bool at_end(parser_t* parser) {
  skip_space(parser);
  return *parser->at == '\0';
}

static loom_status_t expect_end(parser_t* parser) {
  if (at_end(parser)) return loom_ok_status();
  char rest[kQuoteCapacity];
  quote(parser->at, rest);
  return parse_error(parser, "unexpected '%s'", rest);
}

// A dtype from its TensorFlow name ("float") or enum name ("DT_FLOAT").
static bool dtype_from_token(token_t token, loom_dtype_t* out) {
  char name[40];
  if (token.length >= sizeof(name)) return false;
  size_t start = 0;
  bool enum_form = token.length > 3 && memcmp(token.data, "DT_", 3) == 0;
  if (enum_form) start = 3;
  size_t length = 0;
  for (size_t i = start; i < token.length; ++i) {
    char c = token.data[i];
    name[length++] = enum_form ? (char)tolower((unsigned char)c) : c;
  }
  name[length] = '\0';
  for (int value = 1; value < LOOM_DTYPE_COUNT; ++value) {
    if (strcmp(name, loom_dtype_name((loom_dtype_t)value)) == 0) {
      *out = (loom_dtype_t)value;
      return true;
    }
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Attribute types
//===----------------------------------------------------------------------===//

enum { kMaxAllowed = 64 };

typedef struct allowed_t {
  loom_dtype_t types[kMaxAllowed];
  int32_t num_types;
  loom_string_view_t strings[kMaxAllowed];
  int32_t num_strings;
} allowed_t;

static loom_status_t add_allowed_type(parser_t* parser, allowed_t* allowed,
                                      loom_dtype_t dtype) {
  for (int32_t i = 0; i < allowed->num_types; ++i) {
    if (allowed->types[i] == dtype) return loom_ok_status();
  }
  if (allowed->num_types == kMaxAllowed) {
    return parse_error(parser, "more than %d allowed types", kMaxAllowed);
  }
  allowed->types[allowed->num_types++] = dtype;
  return loom_ok_status();
}

static loom_status_t parse_quoted_string(parser_t* parser,
                                         loom_string_view_t* out);

// Parses the inside of `{...}`: types and groups, or quoted strings.
static loom_status_t parse_allowed_set(parser_t* parser, allowed_t* allowed,
                                       loom_attr_kind_t* out_kind) {
  bool strings = peek(parser, '"') || peek(parser, '\'');
  *out_kind = strings ? LOOM_ATTR_KIND_STRING : LOOM_ATTR_KIND_DTYPE;
  if (peek(parser, '}')) {
    return parse_error(parser, "an allowed-value set must not be empty");
  }
  do {
    if (strings) {
      if (!peek(parser, '"') && !peek(parser, '\'')) {
        return parse_error(parser,
                           "expected a quoted string in a set of strings");
      }
      if (allowed->num_strings == kMaxAllowed) {
        return parse_error(parser, "more than %d allowed strings", kMaxAllowed);
      }
      LOOM_RETURN_IF_ERROR(parse_quoted_string(
          parser, &allowed->strings[allowed->num_strings++]));
      continue;
    }
    token_t token;
    const char* start = (skip_space(parser), parser->at);
    LOOM_RETURN_IF_ERROR(expect_identifier(parser, "a type", &token));
    int32_t group_count = 0;
    const loom_dtype_t* group =
        loom__dtype_group(token.data, token.length, &group_count);
    if (group) {
      for (int32_t i = 0; i < group_count; ++i) {
        LOOM_RETURN_IF_ERROR(add_allowed_type(parser, allowed, group[i]));
      }
      continue;
    }
    loom_dtype_t dtype;
    if (!dtype_from_token(token, &dtype)) {
      parser->at = start;
      return parse_error(parser, "unknown type '%.*s'", (int)token.length,
                         token.data);
    }
    LOOM_RETURN_IF_ERROR(add_allowed_type(parser, allowed, dtype));
  } while (consume(parser, ','));
  return expect(parser, '}', "to close the set of allowed values");
}

// Parses `list(<base>)` or `<base>`.
static loom_status_t parse_attr_type(parser_t* parser, loom_attr_def_t* attr,
                                     allowed_t* allowed, bool nested) {
  skip_space(parser);
  if (consume(parser, '{')) {
    return parse_allowed_set(parser, allowed, &attr->kind);
  }
  token_t token;
  const char* start = parser->at;
  LOOM_RETURN_IF_ERROR(expect_identifier(parser, "an attr type", &token));
  static const struct {
    const char* name;
    loom_attr_kind_t kind;
  } kTypes[] = {
      {"string", LOOM_ATTR_KIND_STRING}, {"int", LOOM_ATTR_KIND_I64},
      {"float", LOOM_ATTR_KIND_F32},     {"bool", LOOM_ATTR_KIND_BOOL},
      {"type", LOOM_ATTR_KIND_DTYPE},    {"shape", LOOM_ATTR_KIND_SHAPE},
      {"tensor", LOOM_ATTR_KIND_TENSOR}, {"func", LOOM_ATTR_KIND_FUNC},
  };
  for (size_t i = 0; i < sizeof(kTypes) / sizeof(kTypes[0]); ++i) {
    if (token_is(token.data, token.length, kTypes[i].name)) {
      attr->kind = kTypes[i].kind;
      return loom_ok_status();
    }
  }
  int32_t group_count = 0;
  const loom_dtype_t* group =
      loom__dtype_group(token.data, token.length, &group_count);
  if (group) {
    attr->kind = LOOM_ATTR_KIND_DTYPE;
    for (int32_t i = 0; i < group_count; ++i) {
      LOOM_RETURN_IF_ERROR(add_allowed_type(parser, allowed, group[i]));
    }
    return loom_ok_status();
  }
  if (token_is(token.data, token.length, "list")) {
    if (nested) {
      parser->at = start;
      return parse_error(parser, "lists of lists are not supported");
    }
    LOOM_RETURN_IF_ERROR(expect(parser, '(', "after 'list'"));
    attr->is_list = true;
    LOOM_RETURN_IF_ERROR(parse_attr_type(parser, attr, allowed, true));
    return expect(parser, ')', "to close 'list('");
  }
  parser->at = start;
  return parse_error(parser, "unknown attr type '%.*s'", (int)token.length,
                     token.data);
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A "..." or '...' string with C escapes, copied (unescaped) into the arena.
static loom_status_t parse_quoted_string(parser_t* parser,
                                         loom_string_view_t* out) {
  skip_space(parser);
  char quote = *parser->at;
  if (quote != '"' && quote != '\'') {
    return parse_error(parser, "expected a quoted string");
  }
  const char* open = parser->at++;
  size_t capacity = strlen(parser->at) + 1;
  char* text = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__arena_allocate(parser->arena, capacity, (void**)&text));
  size_t length = 0;
  for (;;) {
    char c = *parser->at;
    if (c == '\0') {
      parser->at = open;
      return parse_error(parser, "unterminated string");
    }
    parser->at++;
    if (c == quote) break;
    if (c != '\\') {
      text[length++] = c;
      continue;
    }
    const char* backslash = parser->at - 1;
    char e = *parser->at++;
    switch (e) {
      case 'n':
        text[length++] = '\n';
        break;
      case 't':
        text[length++] = '\t';
        break;
      case 'r':
        text[length++] = '\r';
        break;
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        int value = e - '0';
        for (int i = 0; i < 2 && *parser->at >= '0' && *parser->at <= '7';
             ++i) {
          value = value * 8 + (*parser->at++ - '0');
        }
        if (value > 0xff) {
          int digits = (int)(parser->at - backslash) - 1;
          parser->at = backslash;
          return parse_error(parser, "octal escape '\\%.*s' exceeds 0xff",
                             digits, backslash + 1);
        }
        text[length++] = (char)value;
        break;
      }
      case 'x': {
        int high = hex_value(parser->at[0]);
        int low = high >= 0 ? hex_value(parser->at[1]) : -1;
        if (low < 0) {
          parser->at -= 2;
          return parse_error(parser, "invalid \\x escape");
        }
        parser->at += 2;
        text[length++] = (char)(high * 16 + low);
        break;
      }
      case '\\':
      case '\'':
      case '"':
      case '?':
        text[length++] = e;
        break;
      case '\0':  // a backslash just before the end
        parser->at = open;
        return parse_error(parser, "unterminated string");
      default:
        parser->at = backslash;
        return parse_error(parser, "invalid escape '\\%c'", e);
    }
  }
  text[length] = '\0';
  out->data = text;
  out->size = length;
  return loom_ok_status();
}

// Copies a numeric token [-+0-9a-zA-Z.] to `buffer`.
static loom_status_t read_number_token(parser_t* parser, char* buffer,
                                       size_t capacity) {
  skip_space(parser);
  size_t length = 0;
  while (parser->at[length] &&
         (isalnum((unsigned char)parser->at[length]) ||
          parser->at[length] == '-' || parser->at[length] == '+' ||
          parser->at[length] == '.')) {
    if (length + 1 >= capacity) {
      return parse_error(parser, "number too long");
    }
    buffer[length] = parser->at[length];
    length++;
  }
  buffer[length] = '\0';
  if (length == 0) {
    if (*parser->at == '\0') {
      return parse_error(parser, "expected a number, found the end");
    }
    char found[8];
    return parse_error(parser, "expected a number, found '%s'",
                       current_char(parser, found));
  }
  return loom_ok_status();
}

static loom_status_t parse_int(parser_t* parser, int64_t* out) {
  char token[64];
  LOOM_RETURN_IF_ERROR(read_number_token(parser, token, sizeof(token)));
  char* end = NULL;
  errno = 0;
  long long value = strtoll(token, &end, 10);
  if (*end != '\0' || end == token) {
    return parse_error(parser, "expected an integer, found '%s'", token);
  }
  if (errno == ERANGE) {
    return parse_error(parser, "integer '%s' out of range", token);
  }
  parser->at += strlen(token);
  *out = value;
  return loom_ok_status();
}

static loom_status_t parse_float(parser_t* parser, double* out) {
  char token[64];
  LOOM_RETURN_IF_ERROR(read_number_token(parser, token, sizeof(token)));
  const char* text = token;
  bool negative = false;
  if (*text == '-' || *text == '+') negative = *text++ == '-';
  double value;
  if (strcmp(text, "inf") == 0 || strcmp(text, "infinity") == 0) {
    value = INFINITY;
  } else if (strcmp(text, "nan") == 0) {
    value = NAN;
  } else {
    char* end = NULL;
    value = strtod(text, &end);
    // Proto text also accepts a trailing 'f' ("1.0f").
    if (end && (*end == 'f' || *end == 'F') && end[1] == '\0') end++;
    if (end == text || *end != '\0' || isalpha((unsigned char)*text)) {
      return parse_error(parser, "expected a number, found '%s'", token);
    }
  }
  parser->at += strlen(token);
  *out = negative ? -value : value;
  return loom_ok_status();
}

static loom_status_t parse_bool(parser_t* parser, bool* out) {
  token_t token;
  const char* start = (skip_space(parser), parser->at);
  if (read_identifier(parser, &token)) {
    if (token_is(token.data, token.length, "true")) {
      *out = true;
      return loom_ok_status();
    }
    if (token_is(token.data, token.length, "false")) {
      *out = false;
      return loom_ok_status();
    }
  }
  parser->at = start;
  return parse_error(parser, "expected true or false");
}

static loom_status_t parse_dtype_literal(parser_t* parser, loom_dtype_t* out) {
  token_t token;
  const char* start = (skip_space(parser), parser->at);
  LOOM_RETURN_IF_ERROR(expect_identifier(parser, "a type", &token));
  if (!dtype_from_token(token, out)) {
    parser->at = start;
    return parse_error(parser, "unknown type '%.*s'", (int)token.length,
                       token.data);
  }
  return loom_ok_status();
}

// Skips proto-text field separators.
static void skip_separators(parser_t* parser) {
  while (consume(parser, ',') || consume(parser, ';')) {
  }
}

// `field:` or `field` before a message; returns the field name.
static loom_status_t parse_field_name(parser_t* parser, token_t* out) {
  LOOM_RETURN_IF_ERROR(expect_identifier(parser, "a field name", out));
  consume(parser, ':');
  return loom_ok_status();
}

// Appends `dim` to dims[0, *rank), or fails at `at` past TensorFlow's rank
// limit.
static loom_status_t append_dim(parser_t* parser, const char* at, int64_t dim,
                                int64_t* dims, int32_t* rank) {
  if (*rank == LOOM_MAX_SHAPE_RANK) {
    parser->at = at;
    return parse_error(parser, "shape rank exceeds %d", LOOM_MAX_SHAPE_RANK);
  }
  dims[(*rank)++] = dim;
  return loom_ok_status();
}

// A shape: `[2, -1, 3]`, or TensorShapeProto text `{ dim { size: 2 } }`,
// `{ unknown_rank: true }`, `{}`. Ranks above LOOM_MAX_RANK spill (see
// loom/shape.h).
static loom_status_t parse_shape_literal(parser_t* parser, loom_shape_t* out) {
  *out = loom_shape_scalar();
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t rank = 0;
  if (consume(parser, '[')) {
    if (consume(parser, ']')) return loom_ok_status();
    do {
      int64_t dim;
      const char* dim_at = (skip_space(parser), parser->at);
      if (consume(parser, '?')) {
        dim = LOOM_UNKNOWN_DIM;
      } else {
        LOOM_RETURN_IF_ERROR(parse_int(parser, &dim));
      }
      if (dim < -1) {
        parser->at = dim_at;
        return parse_error(parser, "dimension %lld is below -1",
                           (long long)dim);
      }
      LOOM_RETURN_IF_ERROR(append_dim(parser, dim_at, dim, dims, &rank));
    } while (consume(parser, ','));
    LOOM_RETURN_IF_ERROR(expect(parser, ']', "to close the shape"));
    return loom_shape_initialize_large(out, dims, rank);
  }
  bool unknown_rank = false;
  LOOM_RETURN_IF_ERROR(expect(parser, '{', "to start a shape"));
  for (skip_separators(parser); !consume(parser, '}');
       skip_separators(parser)) {
    token_t field;
    const char* start = (skip_space(parser), parser->at);
    LOOM_RETURN_IF_ERROR(parse_field_name(parser, &field));
    if (token_is(field.data, field.length, "unknown_rank")) {
      bool unknown = false;
      LOOM_RETURN_IF_ERROR(parse_bool(parser, &unknown));
      if (unknown && rank > 0) {
        parser->at = start;
        return parse_error(parser, "a shape of unknown rank has no dims");
      }
      unknown_rank = unknown_rank || unknown;
    } else if (token_is(field.data, field.length, "dim")) {
      LOOM_RETURN_IF_ERROR(expect(parser, '{', "after 'dim'"));
      int64_t size = 0;
      const char* size_at = NULL;
      for (skip_separators(parser); !consume(parser, '}');
           skip_separators(parser)) {
        token_t dim_field;
        const char* dim_start = (skip_space(parser), parser->at);
        LOOM_RETURN_IF_ERROR(parse_field_name(parser, &dim_field));
        if (token_is(dim_field.data, dim_field.length, "size")) {
          size_at = (skip_space(parser), parser->at);
          LOOM_RETURN_IF_ERROR(parse_int(parser, &size));
        } else if (token_is(dim_field.data, dim_field.length, "name")) {
          loom_string_view_t ignored;
          LOOM_RETURN_IF_ERROR(parse_quoted_string(parser, &ignored));
        } else {
          parser->at = dim_start;
          return parse_error(parser, "unknown dim field '%.*s'",
                             (int)dim_field.length, dim_field.data);
        }
        if (*parser->at == '\0') {
          return parse_error(parser, "expected '}' to close 'dim'");
        }
      }
      if (size < -1) {
        parser->at = size_at;
        return parse_error(parser, "dimension %lld is below -1",
                           (long long)size);
      }
      if (unknown_rank) {
        parser->at = start;
        return parse_error(parser, "a shape of unknown rank has no dims");
      }
      LOOM_RETURN_IF_ERROR(append_dim(parser, start, size, dims, &rank));
    } else {
      parser->at = start;
      return parse_error(parser, "unknown shape field '%.*s'",
                         (int)field.length, field.data);
    }
    if (at_end(parser)) return parse_error(parser, "expected '}'");
  }
  if (unknown_rank) {
    *out = loom_shape_unknown();
    return loom_ok_status();
  }
  return loom_shape_initialize_large(out, dims, rank);
}

enum {
  kMaxTensorValues = 4096,
  // Defaults live as long as their registry and are built at registration:
  // a spec must not be able to ask for gigabytes.
  kMaxTensorDefaultElements = 1 << 16,
};

// One `*_val` entry of a tensor literal, as written.
typedef struct tensor_value_t {
  const char* at;  // where it starts in the spec (for errors)
  bool is_int;     // int_val / int64_val / bool_val: `i`; else `f`
  int64_t i;
  double f;
} tensor_value_t;

// The fields of a TensorProto text into *out_dtype, *out_shape, values[],
// with where the dtype and the shape were given (for errors).
static loom_status_t parse_tensor_fields(
    parser_t* parser, loom_dtype_t* out_dtype, const char** out_dtype_at,
    loom_shape_t* out_shape, const char** out_shape_at, tensor_value_t* values,
    int64_t* out_num_values) {
  for (skip_separators(parser); !consume(parser, '}');
       skip_separators(parser)) {
    token_t field;
    const char* start = (skip_space(parser), parser->at);
    LOOM_RETURN_IF_ERROR(parse_field_name(parser, &field));
    bool is_float = token_is(field.data, field.length, "float_val") ||
                    token_is(field.data, field.length, "double_val") ||
                    token_is(field.data, field.length, "half_val");
    bool is_int = token_is(field.data, field.length, "int_val") ||
                  token_is(field.data, field.length, "int64_val");
    bool is_bool = token_is(field.data, field.length, "bool_val");
    if (token_is(field.data, field.length, "dtype")) {
      *out_dtype_at = (skip_space(parser), parser->at);
      LOOM_RETURN_IF_ERROR(parse_dtype_literal(parser, out_dtype));
    } else if (token_is(field.data, field.length, "tensor_shape")) {
      *out_shape_at = (skip_space(parser), parser->at);
      LOOM_RETURN_IF_ERROR(parse_shape_literal(parser, out_shape));
    } else if (is_float || is_int || is_bool) {
      if (*out_num_values == kMaxTensorValues) {
        parser->at = start;
        return parse_error(parser, "more than %d tensor values",
                           kMaxTensorValues);
      }
      tensor_value_t* value = &values[*out_num_values];
      memset(value, 0, sizeof(*value));
      value->at = (skip_space(parser), parser->at);
      value->is_int = !is_float;
      if (is_float) {
        LOOM_RETURN_IF_ERROR(parse_float(parser, &value->f));
      } else if (is_int) {
        LOOM_RETURN_IF_ERROR(parse_int(parser, &value->i));
      } else {
        bool b = false;
        LOOM_RETURN_IF_ERROR(parse_bool(parser, &b));
        value->i = b;
      }
      ++*out_num_values;
    } else {
      parser->at = start;
      return parse_error(parser, "unknown tensor field '%.*s'",
                         (int)field.length, field.data);
    }
    if (at_end(parser)) return parse_error(parser, "expected '}'");
  }
  return loom_ok_status();
}

// The range of an integer dtype's values that a literal can give.
static void integer_range(loom_dtype_t dtype, int64_t* out_min,
                          int64_t* out_max) {
  switch (dtype) {
    case LOOM_DTYPE_INT8:
      *out_min = INT8_MIN, *out_max = INT8_MAX;
      break;
    case LOOM_DTYPE_INT16:
      *out_min = INT16_MIN, *out_max = INT16_MAX;
      break;
    case LOOM_DTYPE_INT32:
      *out_min = INT32_MIN, *out_max = INT32_MAX;
      break;
    case LOOM_DTYPE_UINT8:
      *out_min = 0, *out_max = UINT8_MAX;
      break;
    case LOOM_DTYPE_UINT16:
      *out_min = 0, *out_max = UINT16_MAX;
      break;
    case LOOM_DTYPE_UINT32:
      *out_min = 0, *out_max = UINT32_MAX;
      break;
    case LOOM_DTYPE_UINT64:
      *out_min = 0, *out_max = INT64_MAX;
      break;
    default:  // INT64
      *out_min = INT64_MIN, *out_max = INT64_MAX;
      break;
  }
}

// `value` as an element of an integer `dtype`: it must be a whole number in
// the dtype's range (converting anything else would be undefined).
static loom_status_t tensor_integer(parser_t* parser,
                                    const tensor_value_t* value,
                                    loom_dtype_t dtype, int64_t* out) {
  int64_t min = 0, max = 0;
  integer_range(dtype, &min, &max);
  int64_t integer = value->i;
  if (!value->is_int) {
    // [-2^63, 2^63) holds exactly the doubles that fit an int64.
    if (!(value->f == trunc(value->f)) || value->f < -9223372036854775808.0 ||
        value->f >= 9223372036854775808.0) {
      parser->at = value->at;
      return parse_error(parser, "tensor value %g is not a valid %s", value->f,
                         loom_dtype_name(dtype));
    }
    integer = (int64_t)value->f;
  }
  if (integer < min || integer > max) {
    parser->at = value->at;
    return parse_error(parser, "tensor value %lld is out of range for %s",
                       (long long)integer, loom_dtype_name(dtype));
  }
  *out = integer;
  return loom_ok_status();
}

// Writes `count` elements of `dtype` from `values` (one value fills all;
// none gives zeros).
static loom_status_t fill_tensor(parser_t* parser, loom_dtype_t dtype,
                                 const tensor_value_t* values,
                                 int64_t num_values, int64_t count,
                                 unsigned char* data) {
  for (int64_t i = 0; i < count && num_values > 0; ++i) {
    const tensor_value_t* value = &values[num_values == 1 ? 0 : i];
    double real = value->is_int ? (double)value->i : value->f;
    int64_t integer = 0;
    switch (dtype) {
      case LOOM_DTYPE_FLOAT:
        ((float*)data)[i] = (float)real;
        break;
      case LOOM_DTYPE_DOUBLE:
        ((double*)data)[i] = real;
        break;
      case LOOM_DTYPE_BOOL:
        ((bool*)data)[i] = real != 0;
        break;
      default:
        LOOM_RETURN_IF_ERROR(tensor_integer(parser, value, dtype, &integer));
        switch (dtype) {
          case LOOM_DTYPE_INT8:
            ((int8_t*)data)[i] = (int8_t)integer;
            break;
          case LOOM_DTYPE_INT16:
            ((int16_t*)data)[i] = (int16_t)integer;
            break;
          case LOOM_DTYPE_INT32:
            ((int32_t*)data)[i] = (int32_t)integer;
            break;
          case LOOM_DTYPE_UINT8:
            ((uint8_t*)data)[i] = (uint8_t)integer;
            break;
          case LOOM_DTYPE_UINT16:
            ((uint16_t*)data)[i] = (uint16_t)integer;
            break;
          case LOOM_DTYPE_UINT32:
            ((uint32_t*)data)[i] = (uint32_t)integer;
            break;
          case LOOM_DTYPE_UINT64:
            ((uint64_t*)data)[i] = (uint64_t)integer;
            break;
          default:  // INT64
            ((int64_t*)data)[i] = integer;
            break;
        }
        break;
    }
  }
  return loom_ok_status();
}

static bool is_tensor_default_dtype(loom_dtype_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
    case LOOM_DTYPE_DOUBLE:
    case LOOM_DTYPE_BOOL:
    case LOOM_DTYPE_INT8:
    case LOOM_DTYPE_INT16:
    case LOOM_DTYPE_INT32:
    case LOOM_DTYPE_INT64:
    case LOOM_DTYPE_UINT8:
    case LOOM_DTYPE_UINT16:
    case LOOM_DTYPE_UINT32:
    case LOOM_DTYPE_UINT64:
      return true;
    default:
      return false;
  }
}

// Checks the dtype, shape and number of values a tensor literal gave; an
// error points at the field at fault.
static loom_status_t check_tensor_literal(
    parser_t* parser, loom_dtype_t dtype, const char* dtype_at,
    const loom_shape_t* shape, const char* shape_at,
    const tensor_value_t* values, int64_t num_values, int64_t* out_count) {
  if (!is_tensor_default_dtype(dtype)) {
    parser->at = dtype_at;
    return parse_error(parser,
                       "a tensor default needs a dtype of float, double, an "
                       "integer type or bool");
  }
  if (!loom_shape_is_fully_defined(shape)) {
    parser->at = shape_at;
    return parse_error(parser, "a tensor default needs a fully defined shape");
  }
  int64_t count = loom_shape_num_elements(shape);  // -1 when it overflows
  if (count < 0 || count > kMaxTensorDefaultElements) {
    char text[128];
    loom_shape_format(shape, text, sizeof(text));
    parser->at = shape_at;
    return parse_error(parser,
                       "a tensor default holds at most %d elements, not a "
                       "tensor of shape %s",
                       kMaxTensorDefaultElements, text);
  }
  if (num_values > 1 && num_values != count) {
    parser->at = values[0].at;
    return parse_error(parser, "%lld values for a tensor of %lld elements",
                       (long long)num_values, (long long)count);
  }
  *out_count = count;
  return loom_ok_status();
}

// TensorProto text: `{ dtype: DT_FLOAT tensor_shape { ... } float_val: 1 }`
// with float_val, double_val, half_val, int_val, int64_val or bool_val
// entries. One value fills the whole tensor; none gives zeros.
static loom_status_t parse_tensor_literal(parser_t* parser,
                                          loom_allocator_t allocator,
                                          loom_tensor_t** out_tensor) {
  const char* open = (skip_space(parser), parser->at);
  LOOM_RETURN_IF_ERROR(expect(parser, '{', "to start a tensor"));
  const char* dtype_at = open;
  const char* shape_at = open;
  loom_dtype_t dtype = LOOM_DTYPE_INVALID;
  loom_shape_t shape = loom_shape_scalar();
  tensor_value_t* values = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
      allocator, sizeof(tensor_value_t) * kMaxTensorValues, (void**)&values));
  int64_t num_values = 0;
  int64_t count = 0;
  loom_tensor_t* tensor = NULL;
  loom_status_t status = parse_tensor_fields(parser, &dtype, &dtype_at, &shape,
                                             &shape_at, values, &num_values);
  const char* end = parser->at;
  if (!status) {
    status = check_tensor_literal(parser, dtype, dtype_at, &shape, shape_at,
                                  values, num_values, &count);
  }
  if (!status) {
    status = loom_tensor_create_dense(allocator, dtype, &shape, &tensor);
  }
  if (!status) {
    // The buffer may be reused memory: zero it for the no-value case.
    memset(loom_tensor_data(tensor), 0, (size_t)count * loom_dtype_size(dtype));
    status = fill_tensor(parser, dtype, values, num_values, count,
                         loom_tensor_data(tensor));
  }
  loom_allocator_free(allocator, values);
  if (status) {
    loom_tensor_release(tensor);
    return status;
  }
  parser->at = end;
  *out_tensor = tensor;
  return loom_ok_status();
}

// A function name: "f" or NameAttrList text `{ name: "f" }`.
static loom_status_t parse_func_literal(parser_t* parser,
                                        loom_string_view_t* out) {
  if (!consume(parser, '{')) return parse_quoted_string(parser, out);
  token_t field;
  const char* start = (skip_space(parser), parser->at);
  LOOM_RETURN_IF_ERROR(parse_field_name(parser, &field));
  if (!token_is(field.data, field.length, "name")) {
    parser->at = start;
    return parse_error(parser, "expected 'name' in a function value");
  }
  LOOM_RETURN_IF_ERROR(parse_quoted_string(parser, out));
  return expect(parser, '}', "to close the function value");
}

//===----------------------------------------------------------------------===//
// Default values
//===----------------------------------------------------------------------===//

// One element of `kind` into *out (tensors are owned by the caller).
static loom_status_t parse_scalar_default(parser_t* parser,
                                          loom_attr_kind_t kind,
                                          loom_allocator_t allocator,
                                          loom_attr_value_t* out,
                                          loom_shape_t* shape_storage) {
  memset(out, 0, sizeof(*out));
  out->kind = kind;
  out->count = 1;
  switch (kind) {
    case LOOM_ATTR_KIND_I64:
      return parse_int(parser, &out->u.i64);
    case LOOM_ATTR_KIND_F32: {
      double value = 0;
      LOOM_RETURN_IF_ERROR(parse_float(parser, &value));
      out->u.f32 = (float)value;
      return loom_ok_status();
    }
    case LOOM_ATTR_KIND_BOOL:
      return parse_bool(parser, &out->u.b);
    case LOOM_ATTR_KIND_DTYPE:
      return parse_dtype_literal(parser, &out->u.dtype);
    case LOOM_ATTR_KIND_STRING:
      return parse_quoted_string(parser, &out->u.string);
    case LOOM_ATTR_KIND_FUNC:
      return parse_func_literal(parser, &out->u.string);
    case LOOM_ATTR_KIND_SHAPE:
      LOOM_RETURN_IF_ERROR(parse_shape_literal(parser, shape_storage));
      out->u.shape.rank = shape_storage->rank;
      out->u.shape.dims = loom_shape_dims(shape_storage);
      return loom_ok_status();
    case LOOM_ATTR_KIND_TENSOR:
      return parse_tensor_literal(parser, allocator, &out->u.tensor);
    default:
      return parse_error(parser, "attrs of this kind take no default");
  }
}

enum { kMaxListDefault = 256 };

static loom_status_t parse_default(parser_t* parser,
                                   const loom_attr_def_t* attr,
                                   loom_op_attrs_t* defaults) {
  loom_allocator_t allocator = defaults->allocator;
  if (!attr->is_list) {
    loom_attr_value_t value;
    loom_shape_t shape;
    LOOM_RETURN_IF_ERROR(
        parse_scalar_default(parser, attr->kind, allocator, &value, &shape));
    loom_status_t status =
        loom_op_attrs_set_value(defaults, attr->name, &value);
    if (value.kind == LOOM_ATTR_KIND_TENSOR)
      loom_tensor_release(value.u.tensor);
    return status;
  }
  LOOM_RETURN_IF_ERROR(expect(parser, '[', "to start a list default"));
  loom_attr_value_t* elements = NULL;
  loom_shape_t* shapes = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      parser->arena, sizeof(loom_attr_value_t) * kMaxListDefault,
      (void**)&elements));
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      parser->arena, sizeof(loom_shape_t) * kMaxListDefault, (void**)&shapes));
  int64_t count = 0;
  loom_status_t status = loom_ok_status();
  if (!consume(parser, ']')) {
    do {
      if (count == kMaxListDefault) {
        status =
            parse_error(parser, "more than %d list elements", kMaxListDefault);
        break;
      }
      status = parse_scalar_default(parser, attr->kind, allocator,
                                    &elements[count], &shapes[count]);
      if (status) break;
      count++;
    } while (consume(parser, ','));
    if (!status) status = expect(parser, ']', "to close the list default");
  }
  if (!status) {
    // Gather the elements into the layout the list setters take.
    void* array = NULL;
    size_t element_size = loom__attr_array_element_size(attr->kind);
    if (attr->kind == LOOM_ATTR_KIND_SHAPE) {
      element_size = sizeof(loom_shape_t);
    } else if (!element_size) {
      element_size = sizeof(loom_string_view_t);
    }
    status = loom__arena_allocate(
        parser->arena, element_size * (size_t)(count ? count : 1), &array);
    if (!status) {
      loom_attr_value_t list;
      memset(&list, 0, sizeof(list));
      list.kind = attr->kind;
      list.is_list = true;
      list.count = count;
      list.u.list = array;
      for (int64_t i = 0; i < count; ++i) {
        const loom_attr_value_t* e = &elements[i];
        switch (attr->kind) {
          case LOOM_ATTR_KIND_I64:
            ((int64_t*)array)[i] = e->u.i64;
            break;
          case LOOM_ATTR_KIND_F32:
            ((float*)array)[i] = e->u.f32;
            break;
          case LOOM_ATTR_KIND_BOOL:
            ((bool*)array)[i] = e->u.b;
            break;
          case LOOM_ATTR_KIND_DTYPE:
            ((loom_dtype_t*)array)[i] = e->u.dtype;
            break;
          case LOOM_ATTR_KIND_TENSOR:
            ((loom_tensor_t**)array)[i] = e->u.tensor;
            break;
          case LOOM_ATTR_KIND_SHAPE:
            ((loom_shape_t*)array)[i] = shapes[i];
            break;
          default:  // STRING, FUNC
            ((loom_string_view_t*)array)[i] = e->u.string;
            break;
        }
      }
      status = loom_op_attrs_set_value(defaults, attr->name, &list);
    }
  }
  if (attr->kind == LOOM_ATTR_KIND_TENSOR) {
    for (int64_t i = 0; i < count; ++i)
      loom_tensor_release(elements[i].u.tensor);
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Attribute specs
//===----------------------------------------------------------------------===//

static loom_status_t copy_allowed(parser_t* parser, const allowed_t* allowed,
                                  loom_attr_def_t* attr) {
  if (allowed->num_types) {
    loom_dtype_t* types = NULL;
    LOOM_RETURN_IF_ERROR(loom__arena_allocate(
        parser->arena, sizeof(loom_dtype_t) * (size_t)allowed->num_types,
        (void**)&types));
    memcpy(types, allowed->types,
           sizeof(loom_dtype_t) * (size_t)allowed->num_types);
    attr->allowed_types = types;
    attr->num_allowed_types = allowed->num_types;
  }
  if (allowed->num_strings) {
    loom_string_view_t* strings = NULL;
    LOOM_RETURN_IF_ERROR(loom__arena_allocate(
        parser->arena,
        sizeof(loom_string_view_t) * (size_t)allowed->num_strings,
        (void**)&strings));
    memcpy(strings, allowed->strings,
           sizeof(loom_string_view_t) * (size_t)allowed->num_strings);
    attr->allowed_strings = strings;
    attr->num_allowed_strings = allowed->num_strings;
  }
  return loom_ok_status();
}

loom_status_t loom__parse_attr_spec(const char* spec, loom__arena_t* arena,
                                    loom_op_attrs_t* defaults,
                                    loom_attr_def_t* out_attr) {
  memset(out_attr, 0, sizeof(*out_attr));
  parser_t parser = {.spec = spec, .at = spec, .arena = arena, .what = "attr"};
  LOOM_RETURN_IF_ERROR(
      loom__arena_strndup(arena, spec, strlen(spec), &out_attr->spec));
  parser.spec = out_attr->spec;
  parser.at = out_attr->spec;

  token_t name;
  LOOM_RETURN_IF_ERROR(expect_identifier(&parser, "an attr name", &name));
  if (!isalpha((unsigned char)name.data[0])) {
    parser.at = name.data;
    return parse_error(&parser, "an attr name must start with a letter");
  }
  LOOM_RETURN_IF_ERROR(
      loom__arena_strndup(arena, name.data, name.length, &out_attr->name));
  LOOM_RETURN_IF_ERROR(expect(&parser, ':', "after the attr name"));

  allowed_t* allowed = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__arena_allocate(arena, sizeof(allowed_t), (void**)&allowed));
  LOOM_RETURN_IF_ERROR(parse_attr_type(&parser, out_attr, allowed, false));
  LOOM_RETURN_IF_ERROR(copy_allowed(&parser, allowed, out_attr));

  skip_space(&parser);
  if (parser.at[0] == '>' && parser.at[1] == '=') {
    if (!out_attr->is_list && out_attr->kind != LOOM_ATTR_KIND_I64) {
      return parse_error(&parser,
                         "only int and list attrs can have a minimum ('>=')");
    }
    parser.at += 2;
    const char* minimum_at = (skip_space(&parser), parser.at);
    LOOM_RETURN_IF_ERROR(parse_int(&parser, &out_attr->minimum));
    if (out_attr->is_list && out_attr->minimum < 0) {
      parser.at = minimum_at;
      return parse_error(&parser, "a list length minimum must be >= 0");
    }
    out_attr->has_minimum = true;
  }
  if (!consume(&parser, '=')) return expect_end(&parser);
  // The default goes to `defaults` only once the whole spec has parsed: a
  // bad spec must leave the builder (and an earlier attr's default of the
  // same name) as it was.
  loom_op_attrs_t parsed;
  loom_op_attrs_initialize(&parsed, defaults->allocator);
  loom_status_t status = parse_default(&parser, out_attr, &parsed);
  if (!status) status = expect_end(&parser);
  loom_attr_value_t value;
  if (!status && loom_op_attrs_get(&parsed, out_attr->name, &value)) {
    status = loom_op_attrs_set_value(defaults, out_attr->name, &value);
  }
  loom_op_attrs_deinitialize(&parsed);
  if (!status) out_attr->has_default = true;
  return status;
}

//===----------------------------------------------------------------------===//
// Argument specs
//===----------------------------------------------------------------------===//

// `name` part of `name: type`: [a-z][a-z0-9_]*.
static loom_status_t parse_arg_name(parser_t* parser, const char** out_name) {
  token_t name;
  LOOM_RETURN_IF_ERROR(expect_identifier(parser, "an argument name", &name));
  for (size_t i = 0; i < name.length; ++i) {
    char c = name.data[i];
    bool ok = (c >= 'a' && c <= 'z') ||
              (i > 0 && (isdigit((unsigned char)c) || c == '_'));
    if (!ok) {
      parser->at = name.data + i;
      return parse_error(parser,
                         "argument names use lower-case letters, digits and "
                         "'_', starting with a letter");
    }
  }
  return loom__arena_strndup(parser->arena, name.data, name.length, out_name);
}

// A dtype name or an attr name.
static loom_status_t parse_type_reference(parser_t* parser,
                                          loom_arg_def_t* arg) {
  token_t token;
  LOOM_RETURN_IF_ERROR(
      expect_identifier(parser, "a type or attr name", &token));
  loom_dtype_t dtype;
  if (dtype_from_token(token, &dtype)) {
    arg->dtype = dtype;
    return loom_ok_status();
  }
  return loom__arena_strndup(parser->arena, token.data, token.length,
                             &arg->type_attr);
}

loom_status_t loom__parse_arg_spec(const char* spec, loom__arena_t* arena,
                                   loom_arg_def_t* out_arg) {
  memset(out_arg, 0, sizeof(*out_arg));
  parser_t parser = {
      .spec = spec, .at = spec, .arena = arena, .what = "argument"};
  LOOM_RETURN_IF_ERROR(
      loom__arena_strndup(arena, spec, strlen(spec), &out_arg->spec));
  parser.spec = out_arg->spec;
  parser.at = out_arg->spec;

  LOOM_RETURN_IF_ERROR(parse_arg_name(&parser, &out_arg->name));
  LOOM_RETURN_IF_ERROR(expect(&parser, ':', "after the argument name"));

  // Ref(...) wraps the type expression.
  const char* before = (skip_space(&parser), parser.at);
  token_t word;
  if (read_identifier(&parser, &word) &&
      token_is(word.data, word.length, "Ref") && peek(&parser, '(')) {
    consume(&parser, '(');
    out_arg->is_ref = true;
  } else {
    parser.at = before;
  }

  const char* length_at = (skip_space(&parser), parser.at);
  LOOM_RETURN_IF_ERROR(parse_type_reference(&parser, out_arg));
  if (consume(&parser, '*')) {
    if (!out_arg->type_attr) {
      parser.at = length_at;
      return parse_error(&parser,
                         "the length in 'N * T' must be an int attr, "
                         "not a type");
    }
    out_arg->number_attr = out_arg->type_attr;
    out_arg->type_attr = NULL;
    LOOM_RETURN_IF_ERROR(parse_type_reference(&parser, out_arg));
  }
  if (out_arg->is_ref) {
    LOOM_RETURN_IF_ERROR(expect(&parser, ')', "to close 'Ref('"));
  }
  return expect_end(&parser);
}
