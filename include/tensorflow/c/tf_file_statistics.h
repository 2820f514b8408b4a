/* TF_FileStatistics: what TF_FileStat (tensorflow/c/env.h) reports about a
 * path. Valid C11 and C++. */

#ifndef TENSORFLOW_C_TF_FILE_STATISTICS_H_
#define TENSORFLOW_C_TF_FILE_STATISTICS_H_

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TF_FileStatistics {
  /* The size in bytes. */
  int64_t length;
  /* The last modification time, in nanoseconds since the Unix epoch. */
  int64_t mtime_nsec;
  /* Whether the path names a directory. */
  bool is_directory;
} TF_FileStatistics;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_C_TF_FILE_STATISTICS_H_ */
