// TensorFlow's logging C API (tensorflow/c/logging.h): what reaches stderr
// under TensorFlow's TF_CPP_MIN_LOG_LEVEL and TF_CPP_MAX_VLOG_LEVEL, and
// TF_FATAL ending the process.

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tensorflow/c/logging.h"
#include "test_support.h"

static void assert_contains(const char* text, const char* substring) {
  if (!strstr(text, substring)) {
    fail_msg("'%s' does not contain '%s'", text, substring);
  }
}

// Captures what `log` writes to stderr into `out`.
static void capture_stderr(void (*log)(void), char* out, size_t capacity) {
  char path[] = "/tmp/loom-logging-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  assert_true(saved >= 0);
  assert_true(dup2(fd, STDERR_FILENO) >= 0);
  log();
  fflush(stderr);
  assert_true(dup2(saved, STDERR_FILENO) >= 0);
  close(saved);
  lseek(fd, 0, SEEK_SET);
  ssize_t length = read(fd, out, capacity - 1);
  out[length > 0 ? length : 0] = '\0';
  close(fd);
  unlink(path);
}

static void log_each_level(void) {
  TF_Log(TF_INFO, "info %d", 1);
  TF_Log(TF_WARNING, "warning %s", "two");
  TF_Log(TF_ERROR, "error %.1f", 3.0);
}

static void log_writes_severity_and_formatted_message(void** state) {
  (void)state;
  unsetenv("TF_CPP_MIN_LOG_LEVEL");
  char output[1024];
  capture_stderr(log_each_level, output, sizeof(output));
  assert_contains(output, ": I info 1\n");
  assert_contains(output, ": W warning two\n");
  assert_contains(output, ": E error 3.0\n");
  // Each line starts with the date: "YYYY-MM-DD HH:MM:SS.uuuuuu: ".
  assert_true(output[4] == '-' && output[7] == '-' && output[10] == ' ' &&
              output[13] == ':' && output[19] == '.' && output[26] == ':');
}

static void min_log_level_hides_lower_severities(void** state) {
  (void)state;
  setenv("TF_CPP_MIN_LOG_LEVEL", "2", 1);
  char output[1024];
  capture_stderr(log_each_level, output, sizeof(output));
  unsetenv("TF_CPP_MIN_LOG_LEVEL");
  assert_null(strstr(output, "info 1"));
  assert_null(strstr(output, "warning two"));
  assert_contains(output, ": E error 3.0\n");
}

static void log_verbose_levels(void) {
  TF_VLog(0, "vlog %d", 0);
  TF_VLog(1, "vlog %d", 1);
  TF_VLog(2, "vlog %d", 2);
  TF_DVLog(1, "dvlog %d", 1);
}

static void vlog_shows_levels_up_to_the_max_vlog_level(void** state) {
  (void)state;
  unsetenv("TF_CPP_MAX_VLOG_LEVEL");
  char output[1024];
  capture_stderr(log_verbose_levels, output, sizeof(output));
  assert_contains(output, ": I vlog 0\n");
  assert_null(strstr(output, "vlog 1"));
  assert_null(strstr(output, "dvlog"));

  setenv("TF_CPP_MAX_VLOG_LEVEL", "1", 1);
  capture_stderr(log_verbose_levels, output, sizeof(output));
  unsetenv("TF_CPP_MAX_VLOG_LEVEL");
  assert_contains(output, ": I vlog 0\n");
  assert_contains(output, ": I vlog 1\n");
  assert_null(strstr(output, "vlog 2"));
#ifdef NDEBUG
  // Loom is built like this test: DVLog is compiled out.
  assert_null(strstr(output, "dvlog"));
#else
  assert_contains(output, ": I dvlog 1\n");
#endif
}

static void log_a_long_message(void) {
  char text[3000];
  memset(text, 'x', sizeof(text) - 1);
  text[sizeof(text) - 1] = '\0';
  TF_Log(TF_WARNING, "%s|end", text);
}

static void long_messages_are_not_truncated(void** state) {
  (void)state;
  unsetenv("TF_CPP_MIN_LOG_LEVEL");
  char output[4096];
  capture_stderr(log_a_long_message, output, sizeof(output));
  assert_contains(output, "xxxx|end\n");
  assert_true(strlen(output) > 2999);
}

static void fatal_logs_and_aborts(void** state) {
  (void)state;
  fflush(NULL);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    // Even a minimum level above fatal does not hide it.
    setenv("TF_CPP_MIN_LOG_LEVEL", "4", 1);
    int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, STDERR_FILENO);
    TF_Log(TF_FATAL, "the end");
    _exit(0);  // not reached
  }
  int wait_status = 0;
  assert_int_equal(waitpid(child, &wait_status, 0), child);
  assert_true(WIFSIGNALED(wait_status));
  assert_int_equal(WTERMSIG(wait_status), SIGABRT);
}

static void null_format_is_ignored(void** state) {
  (void)state;
  TF_Log(TF_ERROR, NULL);
  TF_VLog(0, NULL);
  TF_DVLog(0, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(log_writes_severity_and_formatted_message),
      cmocka_unit_test(min_log_level_hides_lower_severities),
      cmocka_unit_test(vlog_shows_levels_up_to_the_max_vlog_level),
      cmocka_unit_test(long_messages_are_not_truncated),
      cmocka_unit_test(fatal_logs_and_aborts),
      cmocka_unit_test(null_format_is_ignored),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
