// TensorFlow's tensorflow::Env C API, files and directories: the local POSIX
// file system, with TensorFlow's errno-to-code mapping
// (TF_SetStatusFromIOError) and messages that name the function and path.

#include "tensorflow/c/env.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat/tf_status_internal.h"
#include "loom/macros.h"

// Reports errno value `error` as TensorFlow does, after the context
// formatted from `format`: "<context>; <strerror>".
static void set_io_error(TF_Status* status, int error, const char* format, ...)
    LOOM_PRINTF_FORMAT(3, 4);
static void set_io_error(TF_Status* status, int error, const char* format,
                         ...) {
  char context[512];
  va_list args;
  va_start(args, format);
  vsnprintf(context, sizeof(context), format, args);
  va_end(args);
  TF_SetStatusFromIOError(status, error, context);
}

static bool null_argument(TF_Status* status, const void* value,
                          const char* function, const char* argument) {
  if (value) return false;
  loom__tf_status_set(
      status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                               function, argument));
  return true;
}

static void set_ok(TF_Status* status) {
  loom__tf_status_set(status, loom_ok_status());
}

//===----------------------------------------------------------------------===//
// Directories and files
//===----------------------------------------------------------------------===//

void TF_CreateDir(const char* dirname, TF_Status* status) {
  if (null_argument(status, dirname, "TF_CreateDir", "dirname")) return;
  if (mkdir(dirname, 0755) != 0) {
    set_io_error(status, errno, "TF_CreateDir: cannot create '%s'", dirname);
    return;
  }
  set_ok(status);
}

void TF_DeleteDir(const char* dirname, TF_Status* status) {
  if (null_argument(status, dirname, "TF_DeleteDir", "dirname")) return;
  if (rmdir(dirname) != 0) {
    set_io_error(status, errno, "TF_DeleteDir: cannot delete '%s'", dirname);
    return;
  }
  set_ok(status);
}

void TF_DeleteFile(const char* filename, TF_Status* status) {
  if (null_argument(status, filename, "TF_DeleteFile", "filename")) return;
  if (unlink(filename) != 0) {
    set_io_error(status, errno, "TF_DeleteFile: cannot delete '%s'", filename);
    return;
  }
  set_ok(status);
}

typedef struct delete_state_t {
  int64_t undeleted_files;
  int64_t undeleted_dirs;
  int error;  // the errno of the last failure, 0 if none
  char failed_path[512];
} delete_state_t;

static void delete_failed(delete_state_t* state, const char* path, int error,
                          bool is_directory) {
  if (is_directory) {
    ++state->undeleted_dirs;
  } else {
    ++state->undeleted_files;
  }
  state->error = error;
  snprintf(state->failed_path, sizeof(state->failed_path), "%s", path);
}

// Deletes the tree at `path` (a directory, per lstat), depth first, going
// on past failures.
static void delete_tree(delete_state_t* state, const char* path) {
  DIR* dir = opendir(path);
  if (!dir) {
    delete_failed(state, path, errno, true);
    return;
  }
  size_t path_length = strlen(path);
  struct dirent* entry;
  while ((entry = readdir(dir)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) {
      continue;
    }
    size_t child_size = path_length + strlen(entry->d_name) + 2;
    char* child = malloc(child_size);
    if (!child) {
      delete_failed(state, path, ENOMEM, false);
      continue;
    }
    snprintf(child, child_size, "%s/%s", path, entry->d_name);
    struct stat info;
    if (lstat(child, &info) != 0) {
      delete_failed(state, child, errno, false);
    } else if (S_ISDIR(info.st_mode)) {
      delete_tree(state, child);
    } else if (unlink(child) != 0) {
      delete_failed(state, child, errno, false);
    }
    free(child);
  }
  closedir(dir);
  if (rmdir(path) != 0) delete_failed(state, path, errno, true);
}

void TF_DeleteRecursively(const char* dirname, int64_t* undeleted_file_count,
                          int64_t* undeleted_dir_count, TF_Status* status) {
  if (null_argument(status, dirname, "TF_DeleteRecursively", "dirname") ||
      null_argument(status, undeleted_file_count, "TF_DeleteRecursively",
                    "undeleted_file_count") ||
      null_argument(status, undeleted_dir_count, "TF_DeleteRecursively",
                    "undeleted_dir_count")) {
    return;
  }
  *undeleted_file_count = 0;
  *undeleted_dir_count = 0;
  struct stat info;
  if (lstat(dirname, &info) != 0) {
    // As TensorFlow: the root counts as one undeleted directory.
    *undeleted_dir_count = 1;
    set_io_error(status, errno, "TF_DeleteRecursively: cannot read '%s'",
                 dirname);
    return;
  }
  delete_state_t state = {.error = 0};
  if (S_ISDIR(info.st_mode)) {
    delete_tree(&state, dirname);
  } else if (unlink(dirname) != 0) {
    delete_failed(&state, dirname, errno, false);
  }
  *undeleted_file_count = state.undeleted_files;
  *undeleted_dir_count = state.undeleted_dirs;
  if (state.error) {
    set_io_error(status, state.error,
                 "TF_DeleteRecursively: cannot delete '%s' under '%s'",
                 state.failed_path, dirname);
    return;
  }
  set_ok(status);
}

void TF_FileStat(const char* filename, TF_FileStatistics* stats,
                 TF_Status* status) {
  if (null_argument(status, filename, "TF_FileStat", "filename") ||
      null_argument(status, stats, "TF_FileStat", "stats")) {
    return;
  }
  struct stat info;
  if (stat(filename, &info) != 0) {
    set_io_error(status, errno, "TF_FileStat: cannot read '%s'", filename);
    return;
  }
  stats->length = (int64_t)info.st_size;
  stats->mtime_nsec =
      (int64_t)info.st_mtim.tv_sec * 1000000000 + (int64_t)info.st_mtim.tv_nsec;
  stats->is_directory = S_ISDIR(info.st_mode);
  set_ok(status);
}

//===----------------------------------------------------------------------===//
// Writable files
//===----------------------------------------------------------------------===//

struct TF_WritableFileHandle {
  FILE* file;
  char name[];  // for messages
};

void TF_NewWritableFile(const char* filename, TF_WritableFileHandle** handle,
                        TF_Status* status) {
  if (null_argument(status, filename, "TF_NewWritableFile", "filename") ||
      null_argument(status, handle, "TF_NewWritableFile", "handle")) {
    return;
  }
  size_t name_size = strlen(filename) + 1;
  TF_WritableFileHandle* file = malloc(sizeof(*file) + name_size);
  if (!file) {
    set_io_error(status, ENOMEM, "TF_NewWritableFile: cannot open '%s'",
                 filename);
    return;
  }
  memcpy(file->name, filename, name_size);
  file->file = fopen(filename, "w");
  if (!file->file) {
    set_io_error(status, errno, "TF_NewWritableFile: cannot open '%s'",
                 filename);
    free(file);
    return;
  }
  *handle = file;
  set_ok(status);
}

void TF_AppendWritableFile(TF_WritableFileHandle* handle, const char* data,
                           size_t length, TF_Status* status) {
  if (null_argument(status, handle, "TF_AppendWritableFile", "handle") ||
      (length > 0 &&
       null_argument(status, data, "TF_AppendWritableFile", "data"))) {
    return;
  }
  if (length > 0 && fwrite(data, 1, length, handle->file) != length) {
    set_io_error(status, errno,
                 "TF_AppendWritableFile: cannot append %zu bytes to '%s'",
                 length, handle->name);
    return;
  }
  set_ok(status);
}

void TF_FlushWritableFile(TF_WritableFileHandle* handle, TF_Status* status) {
  if (null_argument(status, handle, "TF_FlushWritableFile", "handle")) return;
  if (fflush(handle->file) != 0) {
    set_io_error(status, errno, "TF_FlushWritableFile: cannot flush '%s'",
                 handle->name);
    return;
  }
  set_ok(status);
}

void TF_SyncWritableFile(TF_WritableFileHandle* handle, TF_Status* status) {
  if (null_argument(status, handle, "TF_SyncWritableFile", "handle")) return;
  if (fflush(handle->file) != 0 || fsync(fileno(handle->file)) != 0) {
    set_io_error(status, errno, "TF_SyncWritableFile: cannot sync '%s'",
                 handle->name);
    return;
  }
  set_ok(status);
}

void TF_CloseWritableFile(TF_WritableFileHandle* handle, TF_Status* status) {
  if (null_argument(status, handle, "TF_CloseWritableFile", "handle")) return;
  int result = fclose(handle->file);
  if (result != 0) {
    set_io_error(status, errno, "TF_CloseWritableFile: cannot close '%s'",
                 handle->name);
  } else {
    set_ok(status);
  }
  free(handle);
}

//===----------------------------------------------------------------------===//
// String streams
//===----------------------------------------------------------------------===//

struct TF_StringStream {
  char** items;
  size_t count;
  size_t capacity;
  size_t position;
};

static TF_StringStream* new_string_stream(void) {
  return calloc(1, sizeof(TF_StringStream));
}

// Appends a copy of `text`; false when memory is exhausted.
static bool string_stream_append(TF_StringStream* list, const char* text) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 8;
    char** items = realloc(list->items, capacity * sizeof(*items));
    if (!items) return false;
    list->items = items;
    list->capacity = capacity;
  }
  char* copy = strdup(text);
  if (!copy) return false;
  list->items[list->count++] = copy;
  return true;
}

bool TF_StringStreamNext(TF_StringStream* list, const char** result) {
  if (!list || list->position >= list->count) {
    if (result) *result = NULL;
    return false;
  }
  if (result) *result = list->items[list->position];
  ++list->position;
  return true;
}

void TF_StringStreamDone(TF_StringStream* list) {
  if (!list) return;
  for (size_t i = 0; i < list->count; ++i) free(list->items[i]);
  free(list->items);
  free(list);
}

TF_StringStream* TF_GetChildren(const char* filename, TF_Status* status) {
  if (null_argument(status, filename, "TF_GetChildren", "filename")) {
    return NULL;
  }
  DIR* dir = opendir(filename);
  if (!dir) {
    set_io_error(status, errno, "TF_GetChildren: cannot list '%s'", filename);
    return NULL;
  }
  TF_StringStream* list = new_string_stream();
  bool ok = list != NULL;
  struct dirent* entry;
  while (ok && (entry = readdir(dir)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) {
      continue;
    }
    ok = string_stream_append(list, entry->d_name);
  }
  closedir(dir);
  if (!ok) {
    TF_StringStreamDone(list);
    set_io_error(status, ENOMEM, "TF_GetChildren: cannot list '%s'", filename);
    return NULL;
  }
  set_ok(status);
  return list;
}

//===----------------------------------------------------------------------===//
// Temporary files
//===----------------------------------------------------------------------===//

static bool is_writable_directory(const char* path) {
  struct stat info;
  return stat(path, &info) == 0 && S_ISDIR(info.st_mode) &&
         access(path, W_OK | X_OK) == 0;
}

TF_StringStream* TF_GetLocalTempDirectories(void) {
  TF_StringStream* list = new_string_stream();
  if (!list) return NULL;
  // TensorFlow's order: the test runner's directory, then the usual
  // variables, then /tmp.
  const char* variables[] = {"TEST_TMPDIR", "TMPDIR", "TMP"};
  for (size_t i = 0; i < sizeof(variables) / sizeof(variables[0]); ++i) {
    const char* path = getenv(variables[i]);
    if (path && path[0] && is_writable_directory(path) &&
        !string_stream_append(list, path)) {
      TF_StringStreamDone(list);
      return NULL;
    }
  }
  if (is_writable_directory("/tmp") && !string_stream_append(list, "/tmp")) {
    TF_StringStreamDone(list);
    return NULL;
  }
  return list;
}

char* TF_GetTempFileName(const char* extension) {
  bool has_extension = extension && extension[0];
  size_t suffix_length = has_extension ? strlen(extension) + 1 : 0;
  TF_StringStream* dirs = TF_GetLocalTempDirectories();
  const char* dir = NULL;
  char* path = NULL;
  while (TF_StringStreamNext(dirs, &dir)) {
    // mkstemps creates the file, so the name cannot be taken twice.
    size_t size = strlen(dir) + suffix_length + 64;
    path = malloc(size);
    if (!path) break;
    snprintf(path, size, "%s/tempfile-%ld-XXXXXX%s%s", dir, (long)getpid(),
             has_extension ? "." : "", has_extension ? extension : "");
    int fd = mkstemps(path, (int)suffix_length);
    if (fd >= 0) {
      close(fd);
      break;
    }
    free(path);
    path = NULL;
  }
  TF_StringStreamDone(dirs);
  return path;
}
