// The program lexer: MLIR's tokens as TFRT's programs use them.

#include "function/program_lexer.h"

#include <string.h>

// Character classes, one table lookup per character.
enum {
  kDigit = 1,    // 0-9
  kHex = 2,      // 0-9 a-f A-F
  kLetter = 4,   // a-z A-Z
  kIdStart = 8,  // letters and _
  kId = 16,      // MLIR's bare-id characters after the first: + digits $ .
  kSuffix = 32,  // value and block ids: + '-'
  kSpace = 64,   // blanks other than '\n'
};

// A constant table: no initialisation, nothing shared that changes.
#define DIGIT (kDigit | kHex | kId | kSuffix)
#define HEX_LETTER (kHex | kLetter | kIdStart | kId | kSuffix)
#define LETTER (kLetter | kIdStart | kId | kSuffix)
static const uint8_t kClasses[256] = {
    // clang-format off
    ['0'] = DIGIT, ['1'] = DIGIT, ['2'] = DIGIT, ['3'] = DIGIT, ['4'] = DIGIT,
    ['5'] = DIGIT, ['6'] = DIGIT, ['7'] = DIGIT, ['8'] = DIGIT, ['9'] = DIGIT,
    ['a'] = HEX_LETTER, ['b'] = HEX_LETTER, ['c'] = HEX_LETTER,
    ['d'] = HEX_LETTER, ['e'] = HEX_LETTER, ['f'] = HEX_LETTER,
    ['A'] = HEX_LETTER, ['B'] = HEX_LETTER, ['C'] = HEX_LETTER,
    ['D'] = HEX_LETTER, ['E'] = HEX_LETTER, ['F'] = HEX_LETTER,
    ['g'] = LETTER, ['h'] = LETTER, ['i'] = LETTER, ['j'] = LETTER,
    ['k'] = LETTER, ['l'] = LETTER, ['m'] = LETTER, ['n'] = LETTER,
    ['o'] = LETTER, ['p'] = LETTER, ['q'] = LETTER, ['r'] = LETTER,
    ['s'] = LETTER, ['t'] = LETTER, ['u'] = LETTER, ['v'] = LETTER,
    ['w'] = LETTER, ['x'] = LETTER, ['y'] = LETTER, ['z'] = LETTER,
    ['G'] = LETTER, ['H'] = LETTER, ['I'] = LETTER, ['J'] = LETTER,
    ['K'] = LETTER, ['L'] = LETTER, ['M'] = LETTER, ['N'] = LETTER,
    ['O'] = LETTER, ['P'] = LETTER, ['Q'] = LETTER, ['R'] = LETTER,
    ['S'] = LETTER, ['T'] = LETTER, ['U'] = LETTER, ['V'] = LETTER,
    ['W'] = LETTER, ['X'] = LETTER, ['Y'] = LETTER, ['Z'] = LETTER,
    ['_'] = kIdStart | kId | kSuffix,
    ['$'] = kId | kSuffix, ['.'] = kId | kSuffix, ['-'] = kSuffix,
    [' '] = kSpace, ['\t'] = kSpace, ['\r'] = kSpace, ['\f'] = kSpace,
    ['\v'] = kSpace,
    // clang-format on
};
#undef DIGIT
#undef HEX_LETTER
#undef LETTER

static inline bool has(char c, uint8_t class_bits) {
  return (kClasses[(unsigned char)c] & class_bits) != 0;
}
static bool is_digit(char c) {
  return has(c, kDigit);
}
static bool is_hex_digit(char c) {
  return has(c, kHex);
}
static bool is_letter(char c) {
  return has(c, kLetter);
}
static bool is_id_char(char c) {
  return has(c, kId);
}
static bool is_suffix_char(char c) {
  return has(c, kSuffix);
}

void loom__program_lexer_initialize(program_lexer_t* lexer, const char* text,
                                    size_t size) {
  lexer->begin = text;
  lexer->end = text + size;
  lexer->position = text;
  lexer->line = 1;
  lexer->line_start = text;
}

int32_t loom__program_lexer_column(const program_lexer_t* lexer,
                                   const char* position) {
  return (int32_t)(position - lexer->line_start) + 1;
}

void loom__program_lexer_reset(program_lexer_t* lexer, const char* position) {
  if (position < lexer->begin) position = lexer->begin;
  if (position > lexer->end) position = lexer->end;
  if (position < lexer->position) {
    // Backwards: recount from the start (never on the parser's paths).
    lexer->position = lexer->begin;
    lexer->line = 1;
    lexer->line_start = lexer->begin;
  }
  for (const char* p = lexer->position; p < position; ++p) {
    if (*p == '\n') {
      lexer->line++;
      lexer->line_start = p + 1;
    }
  }
  lexer->position = position;
}

static void skip_space_and_comments(program_lexer_t* lexer) {
  const char* p = lexer->position;
  while (p < lexer->end) {
    char c = *p;
    if (c == '\n') {
      lexer->line++;
      lexer->line_start = p + 1;
      ++p;
    } else if (has(c, kSpace)) {
      ++p;
    } else if (c == '/' && p + 1 < lexer->end && p[1] == '/') {
      while (p < lexer->end && *p != '\n') ++p;
    } else {
      break;
    }
  }
  lexer->position = p;
}

static program_token_t make(program_lexer_t* lexer, program_token_kind_t kind,
                            const char* start, const char* stop) {
  program_token_t token;
  token.kind = kind;
  token.text = start;
  token.length = (size_t)(stop - start);
  token.line = lexer->line;
  token.column = loom__program_lexer_column(lexer, start);
  lexer->position = stop;
  return token;
}

// A number starting at p (a digit): integer, hex integer or float.
static program_token_t lex_number(program_lexer_t* lexer, const char* p) {
  const char* start = p;
  const char* end = lexer->end;
  if (*p == '0' && p + 1 < end && (p[1] == 'x' || p[1] == 'X') && p + 2 < end &&
      is_hex_digit(p[2])) {
    p += 2;
    while (p < end && is_hex_digit(*p)) ++p;
    return make(lexer, TOKEN_INTEGER, start, p);
  }
  while (p < end && is_digit(*p)) ++p;
  if (p >= end || *p != '.') return make(lexer, TOKEN_INTEGER, start, p);
  ++p;  // '.'
  while (p < end && is_digit(*p)) ++p;
  if (p < end && (*p == 'e' || *p == 'E')) {
    const char* q = p + 1;
    if (q < end && (*q == '+' || *q == '-')) ++q;
    if (q < end && is_digit(*q)) {
      while (q < end && is_digit(*q)) ++q;
      p = q;
    }
  }
  return make(lexer, TOKEN_FLOAT, start, p);
}

static program_token_t lex_string(program_lexer_t* lexer, const char* p) {
  const char* start = p;
  ++p;  // opening quote
  while (p < lexer->end) {
    char c = *p;
    if (c == '"') return make(lexer, TOKEN_STRING, start, p + 1);
    if (c == '\n' || c == '\0') break;
    if (c == '\\') {
      if (p + 1 >= lexer->end) break;
      p += 2;
      continue;
    }
    ++p;
  }
  // Unterminated: an error token covering what was read.
  return make(lexer, TOKEN_ERROR, start, p > start + 1 ? p : start + 1);
}

// A prefixed identifier: %x, @f, !t.x, #a.b, ^bb. `suffix` allows '-' and
// leading digits (value and block ids).
static program_token_t lex_prefixed(program_lexer_t* lexer, const char* p,
                                    program_token_kind_t kind, bool suffix) {
  const char* start = p;
  const char* end = lexer->end;
  ++p;
  if (kind == TOKEN_SYMBOL && p < end && *p == '"') {
    program_token_t quoted = lex_string(lexer, p);
    if (quoted.kind == TOKEN_ERROR)
      return make(lexer, TOKEN_ERROR, start, p + 1);
    return make(lexer, TOKEN_SYMBOL, start, quoted.text + quoted.length);
  }
  if (suffix) {
    if (p >= end || !is_suffix_char(*p)) {
      return make(lexer, TOKEN_ERROR, start, p);
    }
    while (p < end && is_suffix_char(*p)) ++p;
  } else {
    if (p >= end || !(is_letter(*p) || *p == '_')) {
      return make(lexer, TOKEN_ERROR, start, p);
    }
    while (p < end && is_id_char(*p)) ++p;
  }
  return make(lexer, kind, start, p);
}

program_token_t loom__program_lexer_next(program_lexer_t* lexer) {
  skip_space_and_comments(lexer);
  const char* p = lexer->position;
  const char* end = lexer->end;
  if (p >= end) return make(lexer, TOKEN_EOF, p, p);
  char c = *p;
  if (has(c, kIdStart)) {
    const char* q = p + 1;
    while (q < end && is_id_char(*q)) ++q;
    return make(lexer, TOKEN_BARE_ID, p, q);
  }
  if (is_digit(c)) return lex_number(lexer, p);
  switch (c) {
    case '"':
      return lex_string(lexer, p);
    case '%':
      return lex_prefixed(lexer, p, TOKEN_VALUE_ID, true);
    case '^':
      return lex_prefixed(lexer, p, TOKEN_BLOCK_ID, true);
    case '@':
      return lex_prefixed(lexer, p, TOKEN_SYMBOL, false);
    case '!':
      return lex_prefixed(lexer, p, TOKEN_TYPE_ID, false);
    case '#':
      return lex_prefixed(lexer, p, TOKEN_ATTR_ID, false);
    case '(':
      return make(lexer, TOKEN_LPAREN, p, p + 1);
    case ')':
      return make(lexer, TOKEN_RPAREN, p, p + 1);
    case '{':
      return make(lexer, TOKEN_LBRACE, p, p + 1);
    case '}':
      return make(lexer, TOKEN_RBRACE, p, p + 1);
    case '[':
      return make(lexer, TOKEN_LSQUARE, p, p + 1);
    case ']':
      return make(lexer, TOKEN_RSQUARE, p, p + 1);
    case '<':
      return make(lexer, TOKEN_LESS, p, p + 1);
    case '>':
      return make(lexer, TOKEN_GREATER, p, p + 1);
    case ',':
      return make(lexer, TOKEN_COMMA, p, p + 1);
    case ':':
      return make(lexer, TOKEN_COLON, p, p + 1);
    case '=':
      return make(lexer, TOKEN_EQUAL, p, p + 1);
    case '+':
      return make(lexer, TOKEN_PLUS, p, p + 1);
    case '?':
      return make(lexer, TOKEN_QUESTION, p, p + 1);
    case '*':
      return make(lexer, TOKEN_STAR, p, p + 1);
    case '-':
      if (p + 1 < end && p[1] == '>') return make(lexer, TOKEN_ARROW, p, p + 2);
      return make(lexer, TOKEN_MINUS, p, p + 1);
    default:
      return make(lexer, TOKEN_ERROR, p, p + 1);
  }
}

const char* loom__program_token_kind_name(program_token_kind_t kind) {
  switch (kind) {
    case TOKEN_EOF:
      return "end of file";
    case TOKEN_ERROR:
      return "an invalid token";
    case TOKEN_BARE_ID:
      return "an identifier";
    case TOKEN_VALUE_ID:
      return "a value (%name)";
    case TOKEN_SYMBOL:
      return "a symbol (@name)";
    case TOKEN_TYPE_ID:
      return "a dialect type (!dialect.type)";
    case TOKEN_ATTR_ID:
      return "a dialect attribute (#dialect.attr)";
    case TOKEN_BLOCK_ID:
      return "a block label";
    case TOKEN_INTEGER:
      return "an integer";
    case TOKEN_FLOAT:
      return "a float";
    case TOKEN_STRING:
      return "a string";
    case TOKEN_LPAREN:
      return "'('";
    case TOKEN_RPAREN:
      return "')'";
    case TOKEN_LBRACE:
      return "'{'";
    case TOKEN_RBRACE:
      return "'}'";
    case TOKEN_LSQUARE:
      return "'['";
    case TOKEN_RSQUARE:
      return "']'";
    case TOKEN_LESS:
      return "'<'";
    case TOKEN_GREATER:
      return "'>'";
    case TOKEN_COMMA:
      return "','";
    case TOKEN_COLON:
      return "':'";
    case TOKEN_EQUAL:
      return "'='";
    case TOKEN_ARROW:
      return "'->'";
    case TOKEN_MINUS:
      return "'-'";
    case TOKEN_PLUS:
      return "'+'";
    case TOKEN_QUESTION:
      return "'?'";
    case TOKEN_STAR:
      return "'*'";
  }
  return "a token";
}

static int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

int64_t loom__program_string_decode(const program_token_t* token, char* out) {
  const char* p = token->text;
  const char* end = token->text + token->length;
  // Skip to the opening quote (a symbol token starts with '@').
  while (p < end && *p != '"') ++p;
  if (p >= end) return -1;
  ++p;
  --end;  // closing quote
  size_t n = 0;
  while (p < end) {
    char c = *p++;
    if (c != '\\') {
      out[n++] = c;
      continue;
    }
    if (p >= end) return -1;
    char e = *p++;
    switch (e) {
      case '"':
      case '\\':
        out[n++] = e;
        break;
      case 'n':
        out[n++] = '\n';
        break;
      case 't':
        out[n++] = '\t';
        break;
      default:
        if (is_hex_digit(e) && p < end && is_hex_digit(*p)) {
          out[n++] = (char)(hex_value(e) * 16 + hex_value(*p));
          ++p;
          break;
        }
        return -1;
    }
  }
  return (int64_t)n;
}
