// TensorFlow's logging C API: messages to stderr, filtered by TensorFlow's
// own environment variables (TF_CPP_MIN_LOG_LEVEL, TF_CPP_MAX_VLOG_LEVEL),
// which are read on every call so that a program may change them.

#include "tensorflow/c/logging.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static int environment_level(const char* variable) {
  const char* text = getenv(variable);
  return text ? atoi(text) : 0;
}

// Writes "<date> <time>: <severity> <message>\n" in one call, so that the
// lines of concurrent threads do not interleave.
static void emit(char severity, const char* format, va_list args) {
  char stack_message[1024];
  char* message = stack_message;
  va_list copy;
  va_copy(copy, args);
  int length = vsnprintf(stack_message, sizeof(stack_message), format, copy);
  va_end(copy);
  if (length < 0) return;
  if ((size_t)length >= sizeof(stack_message)) {
    message = malloc((size_t)length + 1);
    if (message) {
      vsnprintf(message, (size_t)length + 1, format, args);
    } else {
      message = stack_message;  // truncated rather than lost
    }
  }
  struct timeval now;
  gettimeofday(&now, NULL);
  struct tm local;
  time_t seconds = now.tv_sec;
  localtime_r(&seconds, &local);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &local);
  fprintf(stderr, "%s.%06ld: %c %s\n", stamp, (long)now.tv_usec, severity,
          message);
  if (message != stack_message) free(message);
}

void TF_Log(TF_LogLevel level, const char* fmt, ...) {
  if (!fmt) return;
  static const char severities[] = {'I', 'W', 'E', 'F'};
  int index = level < TF_INFO ? 0 : level > TF_FATAL ? 3 : (int)level;
  // A fatal message is always shown: the process is about to end.
  if (index < TF_FATAL && index < environment_level("TF_CPP_MIN_LOG_LEVEL")) {
    return;
  }
  va_list args;
  va_start(args, fmt);
  emit(severities[index], fmt, args);
  va_end(args);
  if (index == TF_FATAL) {
    fflush(stderr);
    abort();
  }
}

static void verbose_log(int level, const char* fmt, va_list args) {
  if (!fmt || level > environment_level("TF_CPP_MAX_VLOG_LEVEL")) return;
  emit('I', fmt, args);
}

void TF_VLog(int level, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  verbose_log(level, fmt, args);
  va_end(args);
}

void TF_DVLog(int level, const char* fmt, ...) {
#ifdef NDEBUG
  (void)level;
  (void)fmt;
#else
  va_list args;
  va_start(args, fmt);
  verbose_log(level, fmt, args);
  va_end(args);
#endif
}
