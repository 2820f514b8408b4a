// loom_status_t: the result of every fallible native Loom call.
//
// OK is the null status, so `if (status)` reads as "if it failed" and the
// success path never allocates. An error status owns a message (printf-style)
// and an optional source location. Error codes are numerically equal to
// TensorFlow's TF_Code. A status is owned by whoever holds it: pass it on,
// return it, or release it with loom_status_free (loom_status_ignore says the
// drop is deliberate).

#ifndef LOOM_STATUS_H_
#define LOOM_STATUS_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "loom/macros.h"

LOOM_EXTERN_C_BEGIN

// Error codes; the values equal TensorFlow's TF_Code (error_codes.proto).
typedef enum loom_status_code_t {
  LOOM_STATUS_OK = 0,
  LOOM_STATUS_CANCELLED = 1,
  LOOM_STATUS_UNKNOWN = 2,
  LOOM_STATUS_INVALID_ARGUMENT = 3,
  LOOM_STATUS_DEADLINE_EXCEEDED = 4,
  LOOM_STATUS_NOT_FOUND = 5,
  LOOM_STATUS_ALREADY_EXISTS = 6,
  LOOM_STATUS_PERMISSION_DENIED = 7,
  LOOM_STATUS_RESOURCE_EXHAUSTED = 8,
  LOOM_STATUS_FAILED_PRECONDITION = 9,
  LOOM_STATUS_ABORTED = 10,
  LOOM_STATUS_OUT_OF_RANGE = 11,
  LOOM_STATUS_UNIMPLEMENTED = 12,
  LOOM_STATUS_INTERNAL = 13,
  LOOM_STATUS_UNAVAILABLE = 14,
  LOOM_STATUS_DATA_LOSS = 15,
  LOOM_STATUS_UNAUTHENTICATED = 16,
} loom_status_code_t;

// Number of distinct codes (OK included).
#define LOOM_STATUS_CODE_COUNT 17

// Opaque; NULL means OK. A value below LOOM_STATUS_CODE_COUNT that is not NULL
// is an error carrying only its code (what is left when even the message
// could not be allocated); anything else points at heap storage.
typedef struct loom_status_storage_t* loom_status_t;

#define loom_ok_status() ((loom_status_t)NULL)

// Creates an error status with a formatted message and the location
// file:line (file may be NULL, and must outlive the status: pass __FILE__).
// code must not be LOOM_STATUS_OK (an OK code yields the OK status and the
// message is dropped). Never fails: when memory is short the result keeps
// only its code.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_status_make_at(loom_status_code_t code, const char* file, int line,
                    const char* format, ...) LOOM_PRINTF_FORMAT(4, 5);

LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_status_make_va(loom_status_code_t code, const char* file, int line,
                    const char* format, va_list args);

// loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "'%s': bad rank %d", n, r)
// records the caller's file and line.
#define loom_make_status(code, ...) \
  loom_status_make_at((code), __FILE__, __LINE__, __VA_ARGS__)

// A status with a code and no message or location. Never allocates.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_status_from_code(loom_status_code_t code);

static inline bool loom_status_is_ok(loom_status_t status) {
  return status == NULL;
}

// The code of `status` (LOOM_STATUS_OK for the OK status).
LOOM_API loom_status_code_t loom_status_code(loom_status_t status);

// The message; "" for OK and for code-only statuses. Valid until the status
// is freed.
LOOM_API const char* loom_status_message(loom_status_t status);

// The source location recorded at creation: NULL / 0 when there is none.
LOOM_API const char* loom_status_file(loom_status_t status);
LOOM_API int loom_status_line(loom_status_t status);

// The canonical name of a code, e.g. "INVALID_ARGUMENT"; "UNKNOWN_CODE" for
// values outside the enum.
LOOM_API const char* loom_status_code_name(loom_status_code_t code);

// Releases an error status; a no-op for OK.
LOOM_API void loom_status_free(loom_status_t status);

// Releases a status whose failure the caller deliberately does not act on.
static inline void loom_status_ignore(loom_status_t status) {
  loom_status_free(status);
}

// A copy of `status` (the same code; the message and location when memory
// allows).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_status_clone(loom_status_t status);

// Consumes `status` and returns it with "<formatted context>: " put in front
// of its message, keeping its code and location. OK stays OK.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_status_annotate(
    loom_status_t status, const char* format, ...) LOOM_PRINTF_FORMAT(2, 3);

// Writes "CODE: message (file:line)" ("OK" for OK) into buffer, truncating
// to capacity (always NUL-terminated when capacity > 0). Returns the length
// the full text needs, without the NUL, like snprintf.
LOOM_API size_t loom_status_format(loom_status_t status, char* buffer,
                                   size_t capacity);

// Evaluates expr (a loom_status_t); returns it from the enclosing function
// when it is an error.
#define LOOM_RETURN_IF_ERROR(expr)                 \
  do {                                             \
    loom_status_t loom_status_tmp_ = (expr);       \
    if (LOOM_UNLIKELY(loom_status_tmp_ != NULL)) { \
      return loom_status_tmp_;                     \
    }                                              \
  } while (0)

LOOM_EXTERN_C_END

#endif  // LOOM_STATUS_H_
