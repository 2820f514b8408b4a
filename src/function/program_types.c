// Types: builtin (i32, f32, index, tensor<2x?xf32>, complex<f32>) and
// dialect types (!tfrt.chain, !corert.tensorhandle, ...), interned by their
// canonical spelling.

#include <stdio.h>
#include <string.h>

#include "function/program_dtype.h"
#include "function/program_parser.h"
#include "loom/shape.h"

bool loom__parser_type_lookup(parser_t* p, program_type_kind_t kind,
                              const char* text, const program_type_t** out);

void loom__parser_types_deinitialize(parser_t* p) {
  loom__hash_map_deinitialize(&p->types);
}

// Any MLIR integer type: i<N>, si<N>, ui<N> with N in [1, 2^24).
static bool is_integer_spelling(const char* text, size_t length) {
  size_t prefix = 0;
  if (length > 1 && text[0] == 'i') {
    prefix = 1;
  } else if (length > 2 && (text[0] == 's' || text[0] == 'u') &&
             text[1] == 'i') {
    prefix = 2;
  } else {
    return false;
  }
  if (length - prefix > 7 || text[prefix] == '0') return false;
  for (size_t i = prefix; i < length; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

// Dialect types with a meaning to the executor; the others are opaque, with
// the dtype they spell (!corert.string) if any.
static void classify_dialect_type(const char* name, program_type_kind_t* kind,
                                  loom_dtype_t* dtype) {
  static const struct {
    const char* name;
    program_type_kind_t kind;
  } kDialectTypes[] = {
      {"!tfrt.chain", PROGRAM_TYPE_CHAIN},
      {"!hex.chain", PROGRAM_TYPE_CHAIN},
      {"!corert.tensorhandle", PROGRAM_TYPE_TENSOR_HANDLE},
      {"!corert.ophandler", PROGRAM_TYPE_OP_HANDLER},
      {"!corert.opattrs", PROGRAM_TYPE_OP_ATTRS},
      {"!ts.shape", PROGRAM_TYPE_SHAPE},
  };
  *kind = PROGRAM_TYPE_OPAQUE;
  *dtype = LOOM_DTYPE_INVALID;
  for (size_t i = 0; i < sizeof(kDialectTypes) / sizeof(kDialectTypes[0]);
       ++i) {
    if (strcmp(kDialectTypes[i].name, name) == 0) {
      *kind = kDialectTypes[i].kind;
      return;
    }
  }
  *dtype = loom__program_dtype_from_spelling(name, strlen(name));
}

bool loom__parser_type(parser_t* p, program_type_kind_t kind, const char* text,
                       const program_type_t** out) {
  size_t slot_index = ((uintptr_t)text >> 3) & 7;
  if (p->type_cache[slot_index].text == text &&
      strcmp(p->type_cache[slot_index].type->spelling, text) == 0) {
    *out = p->type_cache[slot_index].type;
    return true;
  }
  if (!loom__parser_type_lookup(p, kind, text, out)) return false;
  p->type_cache[slot_index].text = text;
  p->type_cache[slot_index].type = *out;
  return true;
}

bool loom__parser_type_lookup(parser_t* p, program_type_kind_t kind,
                              const char* text, const program_type_t** out) {
  size_t length = strlen(text);
  uint64_t hash = loom__hash_bytes(text, length);
  uint64_t found = 0;
  // Linear probing over hash + i keeps a (theoretical) collision correct.
  for (uint64_t i = 0; loom__hash_map_find(&p->types, hash + i, &found); ++i) {
    const program_type_t* type = (const program_type_t*)(uintptr_t)found;
    if (strcmp(type->spelling, text) == 0) {
      *out = type;
      return true;
    }
  }
  program_type_t* type = NULL;
  if (!loom__parser_allocate(p, sizeof(*type), (void**)&type) ||
      !loom__parser_strndup(p, text, length, &type->spelling)) {
    return false;
  }
  type->kind = kind;
  type->dtype = LOOM_DTYPE_INVALID;
  if (kind == PROGRAM_TYPE_INTEGER || kind == PROGRAM_TYPE_FLOAT) {
    type->dtype = loom__program_dtype_from_spelling(text, length);
  } else if (kind == PROGRAM_TYPE_OPAQUE) {
    classify_dialect_type(text, &type->kind, &type->dtype);
  }
  uint64_t slot = hash;
  while (loom__hash_map_find(&p->types, slot, NULL)) ++slot;
  loom_status_t status =
      loom__hash_map_insert(&p->types, slot, (uint64_t)(uintptr_t)type);
  if (status) {
    loom_status_free(status);
    return loom__parser_out_of_memory(p);
  }
  *out = type;
  return true;
}

bool loom__parser_at_type(const parser_t* p) {
  if (p->tok.kind == TOKEN_TYPE_ID) return true;
  if (p->tok.kind != TOKEN_BARE_ID) return false;
  const char* text = p->tok.text;
  size_t length = p->tok.length;
  if (is_integer_spelling(text, length) ||
      loom__program_dtype_from_spelling(text, length)) {
    return true;
  }
  static const char* const kKeywords[] = {"index", "none", "tensor", "complex"};
  for (size_t i = 0; i < sizeof(kKeywords) / sizeof(kKeywords[0]); ++i) {
    if (strlen(kKeywords[i]) == length &&
        memcmp(kKeywords[i], text, length) == 0) {
      return true;
    }
  }
  return false;
}

bool loom__parser_parse_dims(parser_t* p, bool trailing_x, int64_t* dims,
                             int32_t* rank) {
  // The current token is the one right after '<'; rescan from its start.
  const char* position = p->tok.text;
  const char* end = p->lexer.end;
  int32_t count = 0;
  *rank = 0;
  if (position < end && *position == '*') {
    const char* q = position + 1;
    if (trailing_x) {
      if (q >= end || *q != 'x') {
        program_source_location_t at = {p->tok.line, p->tok.column};
        return loom__parser_error_at(p, at,
                                     "expected 'x' after '*' in an "
                                     "unranked tensor type");
      }
      ++q;
    }
    *rank = LOOM_UNKNOWN_RANK;
    loom__program_lexer_reset(&p->lexer, q);
    loom__parser_advance(p);
    return true;
  }
  for (;;) {
    const char* q = position;
    int64_t dim = 0;
    if (q < end && *q == '?') {
      dim = LOOM_UNKNOWN_DIM;
      ++q;
    } else if (q < end && *q >= '0' && *q <= '9') {
      while (q < end && *q >= '0' && *q <= '9') {
        if (dim > (INT64_MAX - 9) / 10) {
          program_source_location_t at = {
              p->tok.line, loom__program_lexer_column(&p->lexer, position)};
          return loom__parser_error_at(p, at, "dimension is too large");
        }
        dim = dim * 10 + (*q - '0');
        ++q;
      }
    } else {
      break;  // not a dimension: the element type (or '>')
    }
    bool has_x = q < end && *q == 'x';
    if (trailing_x && !has_x) break;  // e.g. `tensor<i32>`: not a dimension
    if (count == LOOM_MAX_RANK) {
      program_source_location_t at = {
          p->tok.line, loom__program_lexer_column(&p->lexer, position)};
      return loom__parser_error_at(p, at,
                                   "rank exceeds %d, the most Loom "
                                   "supports",
                                   LOOM_MAX_RANK);
    }
    dims[count++] = dim;
    position = has_x ? q + 1 : q;
    if (!has_x) break;
  }
  *rank = count;
  if (position == p->tok.text) return true;  // no dimensions: keep the token
  loom__program_lexer_reset(&p->lexer, position);
  loom__parser_advance(p);
  return true;
}

// Appends to a fixed buffer, tracking overflow.
static void append(char* buffer, size_t capacity, size_t* length,
                   const char* text, size_t text_length) {
  if (*length + text_length + 1 > capacity) {
    *length = capacity;  // marks the overflow
    return;
  }
  memcpy(buffer + *length, text, text_length);
  *length += text_length;
  buffer[*length] = '\0';
}

static bool parse_tensor_type(parser_t* p, const program_type_t** out) {
  program_source_location_t at = loom__parser_location(p);
  loom__parser_advance(p);  // tensor
  if (!loom__parser_is(p, TOKEN_LESS)) {
    return loom__parser_error_got(p, "expected '<' after 'tensor'");
  }
  loom__parser_advance(p);
  int64_t dims[LOOM_MAX_RANK];
  int32_t rank = 0;
  if (!loom__parser_parse_dims(p, true, dims, &rank)) return false;
  const program_type_t* element = NULL;
  if (!loom__parser_parse_type(p, &element)) return false;
  if (element->kind == PROGRAM_TYPE_TENSOR) {
    return loom__parser_error_at(p, at,
                                 "a tensor's element type cannot be a "
                                 "tensor");
  }
  if (!loom__parser_expect(p, TOKEN_GREATER, "to close the tensor type")) {
    return false;
  }
  char text[512];
  size_t length = 0;
  text[0] = '\0';
  append(text, sizeof(text), &length, "tensor<", 7);
  if (rank == LOOM_UNKNOWN_RANK) {
    append(text, sizeof(text), &length, "*x", 2);
  }
  for (int32_t i = 0; i < rank; ++i) {
    char dim[32];
    int n = dims[i] == LOOM_UNKNOWN_DIM
                ? snprintf(dim, sizeof(dim), "?x")
                : snprintf(dim, sizeof(dim), "%lldx", (long long)dims[i]);
    append(text, sizeof(text), &length, dim, (size_t)n);
  }
  append(text, sizeof(text), &length, element->spelling,
         strlen(element->spelling));
  append(text, sizeof(text), &length, ">", 1);
  if (length >= sizeof(text)) {
    return loom__parser_error_at(p, at, "tensor type is too long");
  }
  if (!loom__parser_type(p, PROGRAM_TYPE_TENSOR, text, out)) return false;
  ((program_type_t*)*out)->dtype = element->dtype;
  return true;
}

// A dialect type: !name, optionally with a <...> body kept as written.
static bool parse_dialect_type(parser_t* p, const program_type_t** out) {
  program_source_location_t at = loom__parser_location(p);
  const char* start = p->tok.text;
  const char* stop = p->tok.text + p->tok.length;
  const char* end = p->lexer.end;
  if (stop < end && *stop == '<') {
    int depth = 0;
    const char* q = stop;
    for (; q < end; ++q) {
      if (*q == '<') depth++;
      if (*q == '>' && --depth == 0) break;
      if (*q == '\n' || *q == '\0') break;
    }
    if (q >= end || *q != '>') {
      return loom__parser_error_at(p, at, "unbalanced '<' in dialect type");
    }
    stop = q + 1;
    loom__program_lexer_reset(&p->lexer, stop);
  }
  size_t length = (size_t)(stop - start);
  if (length > 256) return loom__parser_error_at(p, at, "type is too long");
  char text[260];
  memcpy(text, start, length);
  text[length] = '\0';
  loom__parser_advance(p);
  return loom__parser_type(p, PROGRAM_TYPE_OPAQUE, text, out);
}

static bool parse_type(parser_t* p, const program_type_t** out);

// Types nest (tensor<complex<f32>>) by recursion: a bound keeps adversarial
// text (`complex<complex<...` a million deep) from exhausting the stack.
enum { kMaxTypeNesting = 16 };

bool loom__parser_parse_type(parser_t* p, const program_type_t** out) {
  if (p->type_nesting >= kMaxTypeNesting) {
    return loom__parser_error_got(p, "types nest more than %d deep",
                                  kMaxTypeNesting);
  }
  p->type_nesting++;
  bool ok = parse_type(p, out);
  p->type_nesting--;
  return ok;
}

static bool parse_type(parser_t* p, const program_type_t** out) {
  if (p->tok.kind == TOKEN_TYPE_ID) return parse_dialect_type(p, out);
  if (!loom__parser_at_type(p))
    return loom__parser_error_got(p, "expected a type");
  char text[16];
  size_t length = p->tok.length;
  if (length == 6 && memcmp(p->tok.text, "tensor", 6) == 0) {
    return parse_tensor_type(p, out);
  }
  if (length == 7 && memcmp(p->tok.text, "complex", 7) == 0) {
    program_source_location_t at = loom__parser_location(p);
    loom__parser_advance(p);
    if (!loom__parser_expect(p, TOKEN_LESS, "after 'complex'")) return false;
    const program_type_t* element = NULL;
    if (!loom__parser_parse_type(p, &element)) return false;
    if (!loom__parser_expect(p, TOKEN_GREATER, "to close the complex type")) {
      return false;
    }
    char spelling[64];
    int written =
        snprintf(spelling, sizeof(spelling), "complex<%s>", element->spelling);
    loom_dtype_t dtype =
        written > 0 && (size_t)written < sizeof(spelling)
            ? loom__program_dtype_from_spelling(spelling, (size_t)written)
            : LOOM_DTYPE_INVALID;
    if (!loom_dtype_is_complex(dtype)) {
      return loom__parser_error_at(p, at,
                                   "complex<%s> is not supported: "
                                   "use complex<f32> or complex<f64>",
                                   element->spelling);
    }
    if (!loom__parser_type(p, PROGRAM_TYPE_COMPLEX,
                           loom__program_dtype_spelling(dtype), out)) {
      return false;
    }
    ((program_type_t*)*out)->dtype = dtype;
    return true;
  }
  // A scalar builtin: spellings are short (is_integer_spelling caps them).
  memcpy(text, p->tok.text, length < sizeof(text) ? length : 0);
  if (length >= sizeof(text)) {
    return loom__parser_error_got(p, "expected a type");
  }
  text[length] = '\0';
  program_type_kind_t kind = PROGRAM_TYPE_INTEGER;
  if (strcmp(text, "index") == 0) {
    kind = PROGRAM_TYPE_INDEX;
  } else if (strcmp(text, "none") == 0) {
    kind = PROGRAM_TYPE_NONE;
  } else if (!is_integer_spelling(text, length)) {
    kind = PROGRAM_TYPE_FLOAT;
  }
  loom__parser_advance(p);
  return loom__parser_type(p, kind, text, out);
}
