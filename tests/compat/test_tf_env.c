// TensorFlow's Env C API for files and directories (tensorflow/c/env.h) on
// the local file system: each case works in a fresh directory under the
// first temporary directory TF_GetLocalTempDirectories reports, and checks
// TensorFlow's status codes and Loom's messages.

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tensorflow/c/env.h"
#include "test_support.h"

static char g_root[512];

static void assert_contains(const char* text, const char* substring) {
  if (!strstr(text, substring)) {
    fail_msg("'%s' does not contain '%s'", text, substring);
  }
}

static void expect_status(TF_Status* status, TF_Code code,
                          const char* substring) {
  if (TF_GetCode(status) != code) {
    fail_msg("code %d, expected %d: %s", (int)TF_GetCode(status), (int)code,
             TF_Message(status));
  }
  assert_contains(TF_Message(status), substring);
}

static void expect_ok(TF_Status* status) {
  expect_status(status, TF_OK, "");
}

// g_root/name.
static const char* path_of(const char* name) {
  static char paths[4][640];
  static int next;
  char* path = paths[next++ % 4];
  snprintf(path, sizeof(paths[0]), "%s/%s", g_root, name);
  return path;
}

static void write_file(const char* path, const char* text) {
  FILE* file = fopen(path, "w");
  assert_non_null(file);
  fputs(text, file);
  fclose(file);
}

static int setup(void** state) {
  (void)state;
  TF_StringStream* dirs = TF_GetLocalTempDirectories();
  const char* dir = NULL;
  assert_true(TF_StringStreamNext(dirs, &dir));
  snprintf(g_root, sizeof(g_root), "%s/loom-env-XXXXXX", dir);
  TF_StringStreamDone(dirs);
  assert_non_null(mkdtemp(g_root));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  int64_t files = -1, dirs = -1;
  TF_Status* status = TF_NewStatus();
  TF_DeleteRecursively(g_root, &files, &dirs, status);
  TF_DeleteStatus(status);
  return 0;
}

//===----------------------------------------------------------------------===//
// Directories
//===----------------------------------------------------------------------===//

static void create_dir_twice_is_already_exists(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  const char* dir = path_of("created");
  TF_CreateDir(dir, status);
  expect_ok(status);
  struct stat info;
  assert_int_equal(stat(dir, &info), 0);
  assert_true(S_ISDIR(info.st_mode));

  TF_CreateDir(dir, status);
  char expected[700];
  snprintf(expected, sizeof(expected),
           "TF_CreateDir: cannot create '%s'; File exists", dir);
  expect_status(status, TF_ALREADY_EXISTS, expected);

  TF_CreateDir(path_of("missing/child"), status);
  expect_status(status, TF_NOT_FOUND, "No such file or directory");
  TF_DeleteStatus(status);
}

static void delete_dir_of_a_non_empty_directory_is_failed_precondition(
    void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  const char* dir = path_of("full");
  TF_CreateDir(dir, status);
  expect_ok(status);
  write_file(path_of("full/file"), "x");

  TF_DeleteDir(dir, status);
  char expected[700];
  snprintf(expected, sizeof(expected),
           "TF_DeleteDir: cannot delete '%s'; Directory not empty", dir);
  expect_status(status, TF_FAILED_PRECONDITION, expected);

  TF_DeleteFile(path_of("full/file"), status);
  expect_ok(status);
  TF_DeleteDir(dir, status);
  expect_ok(status);
  assert_int_equal(access(dir, F_OK), -1);

  TF_DeleteDir(dir, status);
  expect_status(status, TF_NOT_FOUND, "No such file or directory");
  TF_DeleteStatus(status);
}

static void delete_recursively_removes_a_tree(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TF_CreateDir(path_of("tree"), status);
  TF_CreateDir(path_of("tree/a"), status);
  TF_CreateDir(path_of("tree/a/b"), status);
  expect_ok(status);
  write_file(path_of("tree/top"), "1");
  write_file(path_of("tree/a/mid"), "22");
  write_file(path_of("tree/a/b/deep"), "333");
  // A link is removed, not followed: its target survives.
  write_file(path_of("kept"), "keep me");
  assert_int_equal(symlink(path_of("kept"), path_of("tree/a/link")), 0);

  int64_t files = -1, dirs = -1;
  TF_DeleteRecursively(path_of("tree"), &files, &dirs, status);
  expect_ok(status);
  assert_int_equal(files, 0);
  assert_int_equal(dirs, 0);
  assert_int_equal(access(path_of("tree"), F_OK), -1);
  assert_int_equal(access(path_of("kept"), F_OK), 0);
  TF_DeleteStatus(status);
}

static void delete_recursively_of_a_missing_path_counts_one_directory(
    void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  int64_t files = -1, dirs = -1;
  TF_DeleteRecursively(path_of("absent"), &files, &dirs, status);
  expect_status(status, TF_NOT_FOUND, "TF_DeleteRecursively: cannot read '");
  assert_contains(TF_Message(status), "absent'; No such file or directory");
  assert_int_equal(files, 0);
  assert_int_equal(dirs, 1);
  TF_DeleteStatus(status);
}

static void get_children_lists_names_without_dots(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TF_CreateDir(path_of("kids"), status);
  TF_CreateDir(path_of("kids/sub"), status);
  expect_ok(status);
  write_file(path_of("kids/b.txt"), "b");
  write_file(path_of("kids/a.txt"), "a");

  TF_StringStream* children = TF_GetChildren(path_of("kids"), status);
  expect_ok(status);
  assert_non_null(children);
  // The file system's order: compare as a set.
  bool seen_a = false, seen_b = false, seen_sub = false;
  int count = 0;
  const char* name = NULL;
  while (TF_StringStreamNext(children, &name)) {
    ++count;
    seen_a |= strcmp(name, "a.txt") == 0;
    seen_b |= strcmp(name, "b.txt") == 0;
    seen_sub |= strcmp(name, "sub") == 0;
  }
  assert_int_equal(count, 3);
  assert_true(seen_a && seen_b && seen_sub);
  // At the end: false and NULL, again and again.
  name = "not reset";
  assert_false(TF_StringStreamNext(children, &name));
  assert_null(name);
  assert_false(TF_StringStreamNext(children, &name));
  TF_StringStreamDone(children);

  TF_StringStream* empty = TF_GetChildren(path_of("kids/sub"), status);
  expect_ok(status);
  assert_false(TF_StringStreamNext(empty, &name));
  TF_StringStreamDone(empty);

  assert_null(TF_GetChildren(path_of("nowhere"), status));
  expect_status(status, TF_NOT_FOUND, "TF_GetChildren: cannot list '");
  assert_null(TF_GetChildren(path_of("kids/a.txt"), status));
  expect_status(status, TF_FAILED_PRECONDITION, "Not a directory");
  TF_StringStreamDone(NULL);
  TF_DeleteStatus(status);
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

static void writable_file_appends_flushes_syncs_and_closes(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  const char* path = path_of("written.bin");
  write_file(path, "old content that must be truncated");
  TF_WritableFileHandle* file = NULL;
  TF_NewWritableFile(path, &file, status);
  expect_ok(status);
  assert_non_null(file);

  TF_AppendWritableFile(file, "hello, ", 7, status);
  expect_ok(status);
  TF_FlushWritableFile(file, status);
  expect_ok(status);
  TF_FileStatistics stats = {.length = -1};
  TF_FileStat(path, &stats, status);
  expect_ok(status);
  assert_int_equal(stats.length, 7);  // flushed: visible to others
  TF_AppendWritableFile(file, "world\0!", 7, status);  // bytes, not a string
  expect_ok(status);
  TF_AppendWritableFile(file, NULL, 0, status);  // nothing to append
  expect_ok(status);
  TF_SyncWritableFile(file, status);
  expect_ok(status);
  TF_CloseWritableFile(file, status);
  expect_ok(status);

  FILE* read_back = fopen(path, "rb");
  assert_non_null(read_back);
  char contents[32] = {0};
  size_t length = fread(contents, 1, sizeof(contents), read_back);
  fclose(read_back);
  assert_int_equal(length, 14);
  assert_memory_equal(contents, "hello, world\0!", 14);
  TF_DeleteStatus(status);
}

static void new_writable_file_in_a_missing_directory_is_not_found(
    void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TF_WritableFileHandle* file = (TF_WritableFileHandle*)0x1;
  const char* path = path_of("no/such/file");
  TF_NewWritableFile(path, &file, status);
  char expected[700];
  snprintf(expected, sizeof(expected),
           "TF_NewWritableFile: cannot open '%s'; No such file or directory",
           path);
  expect_status(status, TF_NOT_FOUND, expected);
  assert_ptr_equal(file, (TF_WritableFileHandle*)0x1);  // untouched
  TF_DeleteStatus(status);
}

static void file_stat_reports_size_time_and_kind(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  const char* path = path_of("stat.txt");
  write_file(path, "0123456789");
  struct stat info;
  assert_int_equal(stat(path, &info), 0);

  TF_FileStatistics stats = {0};
  TF_FileStat(path, &stats, status);
  expect_ok(status);
  assert_int_equal(stats.length, 10);
  assert_false(stats.is_directory);
  assert_int_equal(stats.mtime_nsec, (int64_t)info.st_mtim.tv_sec * 1000000000 +
                                         info.st_mtim.tv_nsec);

  TF_FileStat(g_root, &stats, status);
  expect_ok(status);
  assert_true(stats.is_directory);

  TF_FileStatistics untouched = {.length = 77, .mtime_nsec = 88};
  TF_FileStat(path_of("gone"), &untouched, status);
  expect_status(status, TF_NOT_FOUND, "TF_FileStat: cannot read '");
  assert_int_equal(untouched.length, 77);
  assert_int_equal(untouched.mtime_nsec, 88);
  TF_DeleteStatus(status);
}

static void delete_file_of_a_missing_file_is_not_found(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  const char* path = path_of("never-written");
  TF_DeleteFile(path, status);
  char expected[700];
  snprintf(expected, sizeof(expected),
           "TF_DeleteFile: cannot delete '%s'; No such file or directory",
           path);
  expect_status(status, TF_NOT_FOUND, expected);
  TF_DeleteStatus(status);
}

static void null_arguments_are_invalid(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TF_CreateDir(NULL, status);
  expect_status(status, TF_INVALID_ARGUMENT, "TF_CreateDir: dirname is NULL");
  TF_DeleteDir(NULL, status);
  expect_status(status, TF_INVALID_ARGUMENT, "TF_DeleteDir: dirname is NULL");
  TF_DeleteFile(NULL, status);
  expect_status(status, TF_INVALID_ARGUMENT, "TF_DeleteFile: filename is NULL");
  int64_t count = 0;
  TF_DeleteRecursively(g_root, NULL, &count, status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_DeleteRecursively: undeleted_file_count is NULL");
  TF_FileStat(g_root, NULL, status);
  expect_status(status, TF_INVALID_ARGUMENT, "TF_FileStat: stats is NULL");
  TF_NewWritableFile(path_of("x"), NULL, status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_NewWritableFile: handle is NULL");
  TF_AppendWritableFile(NULL, "x", 1, status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_AppendWritableFile: handle is NULL");
  TF_FlushWritableFile(NULL, status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_FlushWritableFile: handle is NULL");
  TF_SyncWritableFile(NULL, status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_SyncWritableFile: handle is NULL");
  TF_CloseWritableFile(NULL, status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_CloseWritableFile: handle is NULL");
  assert_null(TF_GetChildren(NULL, status));
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_GetChildren: filename is NULL");
  TF_DeleteStatus(status);
}

//===----------------------------------------------------------------------===//
// Temporary directories and files
//===----------------------------------------------------------------------===//

static void temp_directories_follow_the_environment_then_tmp(void** state) {
  (void)state;
  char* saved_test =
      getenv("TEST_TMPDIR") ? strdup(getenv("TEST_TMPDIR")) : NULL;
  char* saved_tmpdir = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
  char* saved_tmp = getenv("TMP") ? strdup(getenv("TMP")) : NULL;
  setenv("TEST_TMPDIR", path_of("does-not-exist"), 1);  // skipped
  setenv("TMPDIR", g_root, 1);
  unsetenv("TMP");

  TF_StringStream* dirs = TF_GetLocalTempDirectories();
  const char* dir = NULL;
  assert_true(TF_StringStreamNext(dirs, &dir));
  assert_string_equal(dir, g_root);
  assert_true(TF_StringStreamNext(dirs, &dir));
  assert_string_equal(dir, "/tmp");
  assert_false(TF_StringStreamNext(dirs, &dir));
  TF_StringStreamDone(dirs);

  // Temporary files go to the first directory and are created, unique.
  char* first = TF_GetTempFileName("txt");
  char* second = TF_GetTempFileName("txt");
  char* bare = TF_GetTempFileName("");
  assert_non_null(first);
  assert_non_null(second);
  assert_non_null(bare);
  assert_string_not_equal(first, second);
  assert_int_equal(strncmp(first, g_root, strlen(g_root)), 0);
  assert_string_equal(first + strlen(first) - 4, ".txt");
  assert_null(strchr(bare + strlen(g_root), '.'));
  assert_int_equal(access(first, F_OK), 0);
  assert_int_equal(access(bare, F_OK), 0);
  free(first);
  free(second);
  free(bare);

  if (saved_test) {
    setenv("TEST_TMPDIR", saved_test, 1);
  } else {
    unsetenv("TEST_TMPDIR");
  }
  if (saved_tmpdir) {
    setenv("TMPDIR", saved_tmpdir, 1);
  } else {
    unsetenv("TMPDIR");
  }
  if (saved_tmp) setenv("TMP", saved_tmp, 1);
  free(saved_test);
  free(saved_tmpdir);
  free(saved_tmp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(create_dir_twice_is_already_exists),
      cmocka_unit_test(
          delete_dir_of_a_non_empty_directory_is_failed_precondition),
      cmocka_unit_test(delete_recursively_removes_a_tree),
      cmocka_unit_test(
          delete_recursively_of_a_missing_path_counts_one_directory),
      cmocka_unit_test(get_children_lists_names_without_dots),
      cmocka_unit_test(writable_file_appends_flushes_syncs_and_closes),
      cmocka_unit_test(new_writable_file_in_a_missing_directory_is_not_found),
      cmocka_unit_test(file_stat_reports_size_time_and_kind),
      cmocka_unit_test(delete_file_of_a_missing_file_is_not_found),
      cmocka_unit_test(null_arguments_are_invalid),
      cmocka_unit_test(temp_directories_follow_the_environment_then_tmp),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
