// Diagnostic logging to stderr, filtered by the LOOM_LOG_LEVEL environment
// variable (error, warning, info, debug; default warning). Used for events
// a caller cannot be told through a status (a deallocator misbehaving, a
// worker thread failing to start).

#ifndef LOOM_BASE_LOG_H_
#define LOOM_BASE_LOG_H_

#include "loom/macros.h"

typedef enum loom__log_level_t {
  LOOM_LOG_ERROR = 0,
  LOOM_LOG_WARNING = 1,
  LOOM_LOG_INFO = 2,
  LOOM_LOG_DEBUG = 3,
} loom__log_level_t;

void loom__log(loom__log_level_t level, const char* file, int line,
               const char* format, ...) LOOM_PRINTF_FORMAT(4, 5);

#define LOOM_LOG(level, ...) loom__log((level), __FILE__, __LINE__, __VA_ARGS__)

#endif  // LOOM_BASE_LOG_H_
