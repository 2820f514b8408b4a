// Checking diagnostics against `expected-error` annotations, as MLIR's
// -verify-diagnostics does:
//
//   %x = "tfrt_test.fail"() : () -> i32  // expected-error {{bad happened}}
//   // expected-error @+1 {{runtime error: something bad happened}}
//
// An annotation applies to its own line, or to the line @+N / @-N away
// (@above, @below: one line). Its text must occur in the diagnostic's
// message.

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "loom/program.h"

typedef struct expectation_t {
  const char* kind;  // "error", "warning", "note", "remark"
  const char* text;  // the {{...}} contents
  int32_t line;      // the line it applies to
  int32_t annotation_line;
  int32_t annotation_column;
  bool matched;
} expectation_t;

typedef struct unexpected_t {
  int32_t line;
  int32_t column;
  const char* message;
} unexpected_t;

struct loom_program_verifier_t {
  loom_allocator_t allocator;
  loom__arena_t arena;
  const char* file_name;
  pthread_mutex_t mutex;
  expectation_t* expectations;
  int32_t num_expectations;
  int32_t expectations_capacity;
  unexpected_t* unexpected;
  int32_t num_unexpected;
  int32_t unexpected_capacity;
};

static loom_status_t grow(loom_program_verifier_t* verifier, void** data,
                          int32_t* capacity, int32_t count, size_t size) {
  if (count < *capacity) return loom_ok_status();
  int32_t new_capacity = *capacity ? *capacity * 2 : 16;
  void* grown = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &verifier->arena, size * (size_t)new_capacity, &grown));
  if (count) memcpy(grown, *data, size * (size_t)count);
  *data = grown;
  *capacity = new_capacity;
  return loom_ok_status();
}

static bool starts_with(const char* p, const char* end, const char* prefix) {
  size_t length = strlen(prefix);
  return (size_t)(end - p) >= length && memcmp(p, prefix, length) == 0;
}

// Parses one annotation starting at `p` (just after "expected-") on a line
// ending at `end` and records it. Text that is not a complete annotation is
// ignored, as MLIR does; an error only for what Loom cannot check.
static loom_status_t parse_annotation(loom_program_verifier_t* verifier,
                                      const char* p, const char* end,
                                      int32_t line, int32_t column) {
  static const char* const kKinds[] = {"error", "warning", "note", "remark"};
  const char* kind = NULL;
  for (size_t i = 0; i < sizeof(kKinds) / sizeof(kKinds[0]); ++i) {
    if (starts_with(p, end, kKinds[i])) {
      kind = kKinds[i];
      p += strlen(kKinds[i]);
      break;
    }
  }
  if (!kind) return loom_ok_status();
  if (starts_with(p, end, "-re")) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "%s:%d:%d: error: expected-%s-re (regular "
                            "expressions) is not supported",
                            verifier->file_name, line, column, kind);
  }
  while (p < end && *p == ' ') ++p;
  int32_t target = line;
  if (p < end && *p == '@') {
    ++p;
    if (starts_with(p, end, "above")) {
      target = line - 1;
      p += 5;
    } else if (starts_with(p, end, "below")) {
      target = line + 1;
      p += 5;
    } else if (p < end && (*p == '+' || *p == '-')) {
      int sign = *p == '-' ? -1 : 1;
      ++p;
      int64_t offset = 0;
      if (p >= end || *p < '0' || *p > '9') return loom_ok_status();
      while (p < end && *p >= '0' && *p <= '9') {
        if (offset < 1000000) offset = offset * 10 + (*p - '0');
        ++p;
      }
      target = line + sign * (int32_t)offset;
    } else {
      return loom_ok_status();
    }
    while (p < end && *p == ' ') ++p;
  }
  if (!starts_with(p, end, "{{")) return loom_ok_status();
  p += 2;
  // The text runs to the last "}}" on the line.
  const char* close = NULL;
  for (const char* q = p; q + 1 < end; ++q) {
    if (q[0] == '}' && q[1] == '}') close = q;
  }
  if (!close) return loom_ok_status();
  const char* text = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__arena_strndup(&verifier->arena, p, (size_t)(close - p), &text));
  LOOM_RETURN_IF_ERROR(grow(verifier, (void**)&verifier->expectations,
                            &verifier->expectations_capacity,
                            verifier->num_expectations, sizeof(expectation_t)));
  expectation_t* e = &verifier->expectations[verifier->num_expectations++];
  e->kind = kind;
  e->text = text;
  e->line = target;
  e->annotation_line = line;
  e->annotation_column = column;
  e->matched = false;
  return loom_ok_status();
}

loom_status_t loom_program_verifier_create(loom_allocator_t allocator,
                                           const char* file_name,
                                           const char* text, size_t size,
                                           loom_program_verifier_t** out) {
  if (!file_name || (!text && size) || !out) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_program_verifier_create: %s is NULL",
                            !file_name ? "file_name"
                            : !out     ? "out"
                                       : "text");
  }
  *out = NULL;
  loom_program_verifier_t* verifier = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*verifier), (void**)&verifier));
  verifier->allocator = allocator;
  loom__arena_initialize(&verifier->arena, allocator);
  pthread_mutex_init(&verifier->mutex, NULL);
  loom_status_t status = loom__arena_strndup(
      &verifier->arena, file_name, strlen(file_name), &verifier->file_name);
  const char* end = text ? text + size : NULL;
  int32_t line = 1;
  for (const char* p = text; !status && p && p < end;) {
    const char* line_end = memchr(p, '\n', (size_t)(end - p));
    if (!line_end) line_end = end;
    for (const char* q = p; !status && q + 9 <= line_end; ++q) {
      if (memcmp(q, "expected-", 9) == 0) {
        status = parse_annotation(verifier, q + 9, line_end, line,
                                  (int32_t)(q - p) + 1);
      }
    }
    p = line_end + 1;
    line++;
  }
  if (status) {
    loom_program_verifier_destroy(verifier);
    return status;
  }
  *out = verifier;
  return loom_ok_status();
}

void loom_program_verifier_destroy(loom_program_verifier_t* verifier) {
  if (!verifier) return;
  pthread_mutex_destroy(&verifier->mutex);
  loom__arena_deinitialize(&verifier->arena);
  loom_allocator_free(verifier->allocator, verifier);
}

bool loom_program_verifier_check(loom_program_verifier_t* verifier,
                                 const loom_program_diagnostic_t* diagnostic) {
  if (!verifier || !diagnostic) return false;
  const char* message = diagnostic->message ? diagnostic->message : "";
  bool matched = false;
  pthread_mutex_lock(&verifier->mutex);
  for (int32_t i = 0; i < verifier->num_expectations; ++i) {
    expectation_t* e = &verifier->expectations[i];
    if (e->matched || e->line != diagnostic->location.line ||
        strcmp(e->kind, "error") != 0 || !strstr(message, e->text)) {
      continue;
    }
    e->matched = true;
    matched = true;
    break;
  }
  if (!matched) {
    loom_status_t status = grow(verifier, (void**)&verifier->unexpected,
                                &verifier->unexpected_capacity,
                                verifier->num_unexpected, sizeof(unexpected_t));
    const char* copy = NULL;
    if (!status) {
      status = loom__arena_strndup(&verifier->arena, message, strlen(message),
                                   &copy);
    }
    if (!status) {
      unexpected_t* u = &verifier->unexpected[verifier->num_unexpected++];
      u->line = diagnostic->location.line;
      u->column = diagnostic->location.column;
      u->message = copy;
    }
    // Out of memory: the count of unexpected diagnostics may be short, but
    // the result of finish stays non-zero through the unmatched state.
    loom_status_free(status);
  }
  pthread_mutex_unlock(&verifier->mutex);
  return matched;
}

int32_t loom_program_verifier_finish(loom_program_verifier_t* verifier,
                                     FILE* stream) {
  if (!verifier) return 0;
  int32_t failures = 0;
  pthread_mutex_lock(&verifier->mutex);
  for (int32_t i = 0; i < verifier->num_unexpected; ++i) {
    const unexpected_t* u = &verifier->unexpected[i];
    if (stream) {
      fprintf(stream, "%s:%d:%d: error: unexpected error: %s\n",
              verifier->file_name, u->line, u->column, u->message);
    }
    failures++;
  }
  for (int32_t i = 0; i < verifier->num_expectations; ++i) {
    const expectation_t* e = &verifier->expectations[i];
    if (e->matched) continue;
    if (stream) {
      fprintf(stream, "%s:%d:%d: error: expected %s \"%s\" was not produced\n",
              verifier->file_name, e->annotation_line, e->annotation_column,
              e->kind, e->text);
    }
    failures++;
  }
  pthread_mutex_unlock(&verifier->mutex);
  if (stream) fflush(stream);
  return failures;
}
