// stderr logging with a level read once from LOOM_LOG_LEVEL.

#include "base/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_level(const char* text) {
  if (!text) return LOOM_LOG_WARNING;
  static const char* const kNames[] = {"error", "warning", "info", "debug"};
  for (int i = 0; i < 4; ++i) {
    if (strcmp(text, kNames[i]) == 0) return i;
  }
  return LOOM_LOG_WARNING;
}

static int current_level(void) {
  static atomic_int level = -1;  // the environment's, read once
  int value = atomic_load_explicit(&level, memory_order_relaxed);
  if (value < 0) {
    value = parse_level(getenv("LOOM_LOG_LEVEL"));
    atomic_store_explicit(&level, value, memory_order_relaxed);
  }
  return value;
}

void loom__log(loom__log_level_t level, const char* file, int line,
               const char* format, ...) {
  if ((int)level > current_level()) return;
  static const char kTags[] = {'E', 'W', 'I', 'D'};
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  const char* base = strrchr(file, '/');
  fprintf(stderr, "loom %c %s:%d] %s\n", kTags[level], base ? base + 1 : file,
          line, message);
}
