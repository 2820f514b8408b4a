/* TensorFlow's C API for tensorflow::Env, as provided by Loom: files and
 * directories of the local (POSIX) file system, temporary directories, the
 * clock, threads and shared libraries. Failures are reported with the codes
 * TensorFlow gives the underlying errno (a missing path is TF_NOT_FOUND, an
 * existing one TF_ALREADY_EXISTS, a forbidden one TF_PERMISSION_DENIED, a
 * non-empty directory TF_FAILED_PRECONDITION) and a message naming the
 * function and the path. Valid C11 and C++. */

#ifndef TENSORFLOW_C_ENV_H_
#define TENSORFLOW_C_ENV_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_file_statistics.h"
#include "tensorflow/c/tf_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TF_WritableFileHandle TF_WritableFileHandle;
typedef struct TF_StringStream TF_StringStream;
typedef struct TF_Thread TF_Thread;

typedef struct TF_ThreadOptions {
  /* Stack size in bytes; 0 for the system default. */
  size_t stack_size;
  /* Guard area below the stack in bytes; 0 for the system default. */
  size_t guard_size;
  /* NUMA node to run on, -1 for none (Loom does not pin threads). */
  int numa_node;
} TF_ThreadOptions;

/* Creates directory `dirname` (its parent must exist). TF_ALREADY_EXISTS
 * when it exists. */
TF_CAPI_EXPORT extern void TF_CreateDir(const char* dirname, TF_Status* status);

/* Deletes the empty directory `dirname`; TF_FAILED_PRECONDITION when it is
 * not empty. */
TF_CAPI_EXPORT extern void TF_DeleteDir(const char* dirname, TF_Status* status);

/* Deletes `dirname` and everything below it (symbolic links are removed,
 * not followed), going on past entries it cannot delete: they are counted
 * in *undeleted_file_count and *undeleted_dir_count and the status is the
 * error of one of them. When `dirname` does not exist: TF_NOT_FOUND with
 * the counts 0 files and 1 directory. */
TF_CAPI_EXPORT extern void TF_DeleteRecursively(const char* dirname,
                                                int64_t* undeleted_file_count,
                                                int64_t* undeleted_dir_count,
                                                TF_Status* status);

/* Fills *stats for `filename` (following symbolic links); *stats is left
 * untouched on failure. */
TF_CAPI_EXPORT extern void TF_FileStat(const char* filename,
                                       TF_FileStatistics* stats,
                                       TF_Status* status);

/* Creates or truncates `filename` for appending. On success *handle is a
 * new handle the caller closes with TF_CloseWritableFile; on failure
 * *handle is left untouched. */
TF_CAPI_EXPORT extern void TF_NewWritableFile(const char* filename,
                                              TF_WritableFileHandle** handle,
                                              TF_Status* status);

/* Flushes and closes the file and frees the handle, even on failure. */
TF_CAPI_EXPORT extern void TF_CloseWritableFile(TF_WritableFileHandle* handle,
                                                TF_Status* status);

/* Flushes the handle's buffer and waits until the file system has stored
 * the data (fsync). */
TF_CAPI_EXPORT extern void TF_SyncWritableFile(TF_WritableFileHandle* handle,
                                               TF_Status* status);

/* Hands the handle's buffered data to the operating system. */
TF_CAPI_EXPORT extern void TF_FlushWritableFile(TF_WritableFileHandle* handle,
                                                TF_Status* status);

/* Appends data[0, length) to the file. */
TF_CAPI_EXPORT extern void TF_AppendWritableFile(TF_WritableFileHandle* handle,
                                                 const char* data,
                                                 size_t length,
                                                 TF_Status* status);

/* Deletes the file `filename`. */
TF_CAPI_EXPORT extern void TF_DeleteFile(const char* filename,
                                         TF_Status* status);

/* Sets *result to the next string of `list` and returns true; at the end
 * sets *result to NULL and returns false. The strings belong to the list
 * and stay valid until TF_StringStreamDone. */
TF_CAPI_EXPORT extern bool TF_StringStreamNext(TF_StringStream* list,
                                               const char** result);

/* Frees the list and its strings; NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_StringStreamDone(TF_StringStream* list);

/* The names (not paths) of the entries of directory `filename`, without
 * "." and "..", in the order the file system lists them; NULL on failure.
 * The caller frees the list with TF_StringStreamDone. */
TF_CAPI_EXPORT extern TF_StringStream* TF_GetChildren(const char* filename,
                                                      TF_Status* status);

/* Writable directories for temporary files: those of TEST_TMPDIR, TMPDIR
 * and TMP that exist, then /tmp. The caller frees the list with
 * TF_StringStreamDone; NULL when memory is exhausted. */
TF_CAPI_EXPORT extern TF_StringStream* TF_GetLocalTempDirectories(void);

/* Creates a new, empty file with a unique name in the first usable
 * temporary directory, ending in "." extension (no dot for an empty or
 * NULL extension), and returns its path, which the caller frees with
 * free(); NULL when no file could be created. */
TF_CAPI_EXPORT extern char* TF_GetTempFileName(const char* extension);

/* The time since the Unix epoch. */
TF_CAPI_EXPORT extern uint64_t TF_NowNanos(void);
TF_CAPI_EXPORT extern uint64_t TF_NowMicros(void);
TF_CAPI_EXPORT extern uint64_t TF_NowSeconds(void);

/* Fills *options with the system defaults (sizes 0, numa_node -1). */
TF_CAPI_EXPORT extern void TF_DefaultThreadOptions(TF_ThreadOptions* options);

/* Starts a thread running work_func(param), named thread_name (shortened
 * to what the system allows) for debuggers and profilers. The caller must
 * eventually pass the result to TF_JoinThread. NULL when the thread could
 * not be started (the reason is logged) or work_func is NULL. */
TF_CAPI_EXPORT extern TF_Thread* TF_StartThread(const TF_ThreadOptions* options,
                                                const char* thread_name,
                                                void (*work_func)(void*),
                                                void* param);

/* Waits for the thread to finish, then frees it; NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_JoinThread(TF_Thread* thread);

/* Loads the shared library `library_filename` (dlopen: searched as the
 * dynamic linker does) and returns its handle; NULL and TF_NOT_FOUND with
 * the loader's reason on failure. The library is never unloaded. Unlike
 * TF_LoadLibrary, registers nothing. */
TF_CAPI_EXPORT extern void* TF_LoadSharedLibrary(const char* library_filename,
                                                 TF_Status* status);

/* The address of `symbol_name` in a library from TF_LoadSharedLibrary;
 * NULL and TF_NOT_FOUND when it has no such symbol. */
TF_CAPI_EXPORT extern void* TF_GetSymbolFromLibrary(void* handle,
                                                    const char* symbol_name,
                                                    TF_Status* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_C_ENV_H_ */
