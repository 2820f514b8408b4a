// Bounded text (text.h).

#include "base/text.h"

#include <stdarg.h>
#include <stdio.h>

void loom__text_append(loom__text_t* text, const char* format, ...) {
  va_list args;
  va_start(args, format);
  size_t room =
      text->length < text->capacity ? text->capacity - text->length : 0;
  int written =
      vsnprintf(room ? text->buffer + text->length : NULL, room, format, args);
  va_end(args);
  if (written > 0) text->length += (size_t)written;
}
