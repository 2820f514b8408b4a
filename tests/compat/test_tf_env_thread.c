// TensorFlow's Env C API for the process (tensorflow/c/env.h): the clock,
// threads with their options and names, and shared libraries.

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "tensorflow/c/env.h"
#include "test_support.h"

static void assert_contains(const char* text, const char* substring) {
  if (!strstr(text, substring)) {
    fail_msg("'%s' does not contain '%s'", text, substring);
  }
}

static uint64_t realtime_nanos(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void now_is_the_unix_time_in_three_units(void** state) {
  (void)state;
  uint64_t before = realtime_nanos();
  uint64_t nanos = TF_NowNanos();
  uint64_t micros = TF_NowMicros();
  uint64_t seconds = TF_NowSeconds();
  uint64_t after = realtime_nanos();
  assert_true(before <= nanos && nanos <= after);
  assert_true(before / 1000 <= micros && micros <= after / 1000);
  assert_true(before / 1000000000 <= seconds && seconds <= after / 1000000000);
}

static void default_thread_options_are_system_defaults(void** state) {
  (void)state;
  TF_ThreadOptions options = {.stack_size = 1, .guard_size = 2, .numa_node = 3};
  TF_DefaultThreadOptions(&options);
  assert_int_equal(options.stack_size, 0);
  assert_int_equal(options.guard_size, 0);
  assert_int_equal(options.numa_node, -1);
  TF_DefaultThreadOptions(NULL);  // ignored
}

typedef struct thread_probe_t {
  atomic_int* counter;
  size_t stack_size;
  char name[32];
} thread_probe_t;

static void probe_thread(void* param) {
  thread_probe_t* probe = param;
  atomic_fetch_add(probe->counter, 1);
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
    pthread_attr_getstacksize(&attributes, &probe->stack_size);
    pthread_attr_destroy(&attributes);
  }
  pthread_getname_np(pthread_self(), probe->name, sizeof(probe->name));
}

static void threads_run_their_work_with_options_and_names(void** state) {
  (void)state;
  enum { kThreads = 4 };
  atomic_int counter = 0;
  thread_probe_t probes[kThreads];
  TF_Thread* threads[kThreads];
  TF_ThreadOptions options;
  TF_DefaultThreadOptions(&options);
  options.stack_size = 1u << 20;
  options.guard_size = 1u << 16;
  for (int i = 0; i < kThreads; ++i) {
    probes[i] = (thread_probe_t){.counter = &counter};
    // Longer than the 15 characters Linux keeps.
    threads[i] = TF_StartThread(&options, "loom-env-thread-with-a-long-name",
                                probe_thread, &probes[i]);
    assert_non_null(threads[i]);
  }
  for (int i = 0; i < kThreads; ++i) TF_JoinThread(threads[i]);
  assert_int_equal(atomic_load(&counter), kThreads);
  for (int i = 0; i < kThreads; ++i) {
    assert_true(probes[i].stack_size >= options.stack_size);
    assert_string_equal(probes[i].name, "loom-env-thread");
  }
  TF_JoinThread(NULL);  // ignored
}

static void thread_with_default_options_and_no_name_runs(void** state) {
  (void)state;
  atomic_int counter = 0;
  thread_probe_t probe = {.counter = &counter};
  TF_JoinThread(TF_StartThread(NULL, NULL, probe_thread, &probe));
  assert_int_equal(atomic_load(&counter), 1);
}

static void thread_without_work_or_with_a_bad_stack_is_not_started(
    void** state) {
  (void)state;
  assert_null(TF_StartThread(NULL, "idle", NULL, NULL));
  TF_ThreadOptions options;
  TF_DefaultThreadOptions(&options);
  options.stack_size = 1;  // below PTHREAD_STACK_MIN
  atomic_int counter = 0;
  thread_probe_t probe = {.counter = &counter};
  assert_null(TF_StartThread(&options, "tiny", probe_thread, &probe));
  assert_int_equal(atomic_load(&counter), 0);
}

static void shared_library_symbols_are_found_and_called(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  void* libm = TF_LoadSharedLibrary("libm.so.6", status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_non_null(libm);
  void* symbol = TF_GetSymbolFromLibrary(libm, "cos", status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_non_null(symbol);
  double (*cosine)(double) = NULL;
  memcpy(&cosine, &symbol, sizeof(cosine));  // POSIX: same representation
  // numpy.cos(numpy.float64(0.5))
  assert_true(fabs(cosine(0.5) - 0.8775825618903728) < 1e-15);

  assert_null(TF_GetSymbolFromLibrary(libm, "no_such_symbol_in_libm", status));
  assert_int_equal(TF_GetCode(status), TF_NOT_FOUND);
  assert_contains(TF_Message(status),
                  "TF_GetSymbolFromLibrary: no symbol "
                  "'no_such_symbol_in_libm': ");
  assert_contains(TF_Message(status), "undefined symbol");

  assert_null(TF_LoadSharedLibrary("/nonexistent/libloom_missing.so", status));
  assert_int_equal(TF_GetCode(status), TF_NOT_FOUND);
  assert_contains(TF_Message(status),
                  "TF_LoadSharedLibrary: cannot load "
                  "'/nonexistent/libloom_missing.so': ");
  assert_contains(TF_Message(status), "No such file or directory");

  assert_null(TF_LoadSharedLibrary(NULL, status));
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_contains(TF_Message(status),
                  "TF_LoadSharedLibrary: library_filename is NULL");
  assert_null(TF_GetSymbolFromLibrary(NULL, "cos", status));
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_contains(TF_Message(status),
                  "TF_GetSymbolFromLibrary: handle is NULL");
  assert_null(TF_GetSymbolFromLibrary(libm, NULL, status));
  assert_contains(TF_Message(status),
                  "TF_GetSymbolFromLibrary: symbol_name is NULL");
  TF_DeleteStatus(status);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(now_is_the_unix_time_in_three_units),
      cmocka_unit_test(default_thread_options_are_system_defaults),
      cmocka_unit_test(threads_run_their_work_with_options_and_names),
      cmocka_unit_test(thread_with_default_options_and_no_name_runs),
      cmocka_unit_test(thread_without_work_or_with_a_bad_stack_is_not_started),
      cmocka_unit_test(shared_library_symbols_are_found_and_called),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
