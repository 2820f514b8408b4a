// Error statuses: heap storage for code + location + message, or a bare
// code encoded in the pointer value when no memory is available.

#include "loom/status.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status_internal.h"

struct loom_status_storage_t {
  loom_status_code_t code;
  int line;
  const char* file;
  size_t message_length;
  char message[];  // NUL-terminated
};

// Heap pointers are never this small, so small values can hold a bare code.
static bool status_is_code_only(loom_status_t status) {
  return (uintptr_t)status < LOOM_STATUS_CODE_COUNT;
}

static loom_status_code_t sanitize_code(loom_status_code_t code) {
  if ((int)code < 0 || (int)code >= LOOM_STATUS_CODE_COUNT) {
    return LOOM_STATUS_UNKNOWN;
  }
  return code;
}

loom_status_t loom_status_from_code(loom_status_code_t code) {
  code = sanitize_code(code);
  return (loom_status_t)(uintptr_t)code;
}

// Statuses take their memory from malloc, not from an allocator: they pass
// through every layer and outlive the objects (and allocators) that failed,
// and creating one never fails, a status without memory keeping only its
// code. Tests replace malloc here to reach that fallback.
static _Atomic(loom__status_malloc_fn_t) status_malloc_hook;  // NULL: malloc

void loom__status_set_malloc_for_testing(loom__status_malloc_fn_t fn) {
  atomic_store(&status_malloc_hook, fn);
}

static loom_status_t status_allocate(loom_status_code_t code, const char* file,
                                     int line, size_t message_length) {
  loom__status_malloc_fn_t hook =
      atomic_load_explicit(&status_malloc_hook, memory_order_relaxed);
  size_t size = sizeof(struct loom_status_storage_t) + message_length + 1;
  struct loom_status_storage_t* storage = hook ? hook(size) : malloc(size);
  if (!storage) return NULL;
  storage->code = code;
  storage->file = file;
  storage->line = line;
  storage->message_length = message_length;
  storage->message[message_length] = '\0';
  return storage;
}

loom_status_t loom_status_make_va(loom_status_code_t code, const char* file,
                                  int line, const char* format, va_list args) {
  code = sanitize_code(code);
  if (code == LOOM_STATUS_OK) return loom_ok_status();
  if (!format) format = "";
  va_list measure;
  va_copy(measure, args);
  int length = vsnprintf(NULL, 0, format, measure);
  va_end(measure);
  if (length < 0) length = 0;
  loom_status_t status = status_allocate(code, file, line, (size_t)length);
  if (!status) return loom_status_from_code(code);
  vsnprintf(status->message, (size_t)length + 1, format, args);
  return status;
}

loom_status_t loom_status_make_at(loom_status_code_t code, const char* file,
                                  int line, const char* format, ...) {
  va_list args;
  va_start(args, format);
  loom_status_t status = loom_status_make_va(code, file, line, format, args);
  va_end(args);
  return status;
}

loom_status_code_t loom_status_code(loom_status_t status) {
  if (status_is_code_only(status)) return (loom_status_code_t)(uintptr_t)status;
  return status->code;
}

const char* loom_status_message(loom_status_t status) {
  if (status_is_code_only(status)) return "";
  return status->message;
}

const char* loom_status_file(loom_status_t status) {
  if (status_is_code_only(status)) return NULL;
  return status->file;
}

int loom_status_line(loom_status_t status) {
  if (status_is_code_only(status)) return 0;
  return status->line;
}

const char* loom_status_code_name(loom_status_code_t code) {
  static const char* const kNames[LOOM_STATUS_CODE_COUNT] = {
      "OK",
      "CANCELLED",
      "UNKNOWN",
      "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED",
      "NOT_FOUND",
      "ALREADY_EXISTS",
      "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION",
      "ABORTED",
      "OUT_OF_RANGE",
      "UNIMPLEMENTED",
      "INTERNAL",
      "UNAVAILABLE",
      "DATA_LOSS",
      "UNAUTHENTICATED",
  };
  if ((int)code < 0 || (int)code >= LOOM_STATUS_CODE_COUNT) {
    return "UNKNOWN_CODE";
  }
  return kNames[code];
}

void loom_status_free(loom_status_t status) {
  if (status_is_code_only(status)) return;
  free(status);
}

loom_status_t loom_status_clone(loom_status_t status) {
  if (status_is_code_only(status)) return status;
  loom_status_t copy = status_allocate(status->code, status->file, status->line,
                                       status->message_length);
  if (!copy) return loom_status_from_code(status->code);
  memcpy(copy->message, status->message, status->message_length);
  return copy;
}

loom_status_t loom_status_annotate(loom_status_t status, const char* format,
                                   ...) {
  if (status == NULL) return status;
  loom_status_code_t code = loom_status_code(status);
  const char* old_message = loom_status_message(status);
  size_t old_length = strlen(old_message);

  va_list args;
  va_start(args, format);
  int context_length = 0;
  if (format) {
    va_list measure;
    va_copy(measure, args);
    context_length = vsnprintf(NULL, 0, format, measure);
    va_end(measure);
    if (context_length < 0) context_length = 0;
  }
  const char* separator = old_length ? ": " : "";
  size_t separator_length = strlen(separator);
  size_t total = (size_t)context_length + separator_length + old_length;

  loom_status_t annotated = status_allocate(code, loom_status_file(status),
                                            loom_status_line(status), total);
  if (!annotated) {
    va_end(args);
    return status;  // Keep the original rather than lose its message.
  }
  if (format) {
    vsnprintf(annotated->message, (size_t)context_length + 1, format, args);
  }
  va_end(args);
  memcpy(annotated->message + context_length, separator, separator_length);
  memcpy(annotated->message + context_length + separator_length, old_message,
         old_length);
  annotated->message[total] = '\0';
  loom_status_free(status);
  return annotated;
}

size_t loom_status_format(loom_status_t status, char* buffer, size_t capacity) {
  if (capacity && !buffer) capacity = 0;
  int length;
  if (status == NULL) {
    length = snprintf(buffer, capacity, "OK");
  } else {
    const char* name = loom_status_code_name(loom_status_code(status));
    const char* message = loom_status_message(status);
    const char* file = loom_status_file(status);
    const char* separator = message[0] ? ": " : "";
    if (file) {
      length = snprintf(buffer, capacity, "%s%s%s (%s:%d)", name, separator,
                        message, file, loom_status_line(status));
    } else {
      length = snprintf(buffer, capacity, "%s%s%s", name, separator, message);
    }
  }
  return length < 0 ? 0 : (size_t)length;
}
