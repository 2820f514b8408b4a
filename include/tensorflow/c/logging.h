/* Logging of TensorFlow's C API (tensorflow::Logging), as provided by Loom.
 * Messages go to stderr as "<date> <time>: <I|W|E|F> <message>". As in
 * TensorFlow, the environment variable TF_CPP_MIN_LOG_LEVEL (0-3, default
 * 0) hides TF_Log messages below that level, and TF_CPP_MAX_VLOG_LEVEL
 * (default 0) shows TF_VLog messages of that level or lower. Valid C11 and
 * C++. */

#ifndef TENSORFLOW_C_LOGGING_H_
#define TENSORFLOW_C_LOGGING_H_

#include "tensorflow/c/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum TF_LogLevel {
  TF_INFO = 0,
  TF_WARNING = 1,
  TF_ERROR = 2,
  TF_FATAL = 3
} TF_LogLevel;

/* Logs the printf-style message at `level`. TF_FATAL logs and then aborts
 * the process, as TensorFlow's LOG(FATAL) does. */
TF_CAPI_EXPORT extern void TF_Log(TF_LogLevel level, const char* fmt, ...);

/* Logs the message as information when verbose level `level` is on
 * (level <= TF_CPP_MAX_VLOG_LEVEL). */
TF_CAPI_EXPORT extern void TF_VLog(int level, const char* fmt, ...);

/* As TF_VLog when Loom is built without NDEBUG (a debug build); nothing
 * otherwise, as TensorFlow's DVLOG. */
TF_CAPI_EXPORT extern void TF_DVLog(int level, const char* fmt, ...);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_C_LOGGING_H_ */
