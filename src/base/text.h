// Formatted text appended to a caller's bounded buffer: what the printers
// of tensors, attributes and op attrs share. The text is cut at the
// buffer's end, and `length` counts all of it, so a caller learns the size
// it needed (snprintf's contract, over many appends).

#ifndef LOOM_BASE_TEXT_H_
#define LOOM_BASE_TEXT_H_

#include <stddef.h>

#include "loom/macros.h"

typedef struct loom__text_t {
  char* buffer;     // may be NULL when capacity is 0
  size_t capacity;  // bytes of buffer, the terminating NUL included
  size_t length;    // of the whole text, written or not
} loom__text_t;

// Appends printf-style text; the buffer stays NUL-terminated.
void loom__text_append(loom__text_t* text, const char* format, ...)
    LOOM_PRINTF_FORMAT(2, 3);

#endif  // LOOM_BASE_TEXT_H_
