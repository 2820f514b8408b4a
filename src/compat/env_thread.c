// TensorFlow's tensorflow::Env C API, the process part: the clock, threads
// (POSIX threads) and shared libraries (dlopen).

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "compat/tf_status_internal.h"
#include "tensorflow/c/env.h"

//===----------------------------------------------------------------------===//
// Clock
//===----------------------------------------------------------------------===//

uint64_t TF_NowNanos(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

uint64_t TF_NowMicros(void) {
  return TF_NowNanos() / 1000u;
}

uint64_t TF_NowSeconds(void) {
  return TF_NowNanos() / 1000000000u;
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

struct TF_Thread {
  pthread_t thread;
  void (*work)(void*);
  void* param;
  char name[16];  // Linux keeps 15 characters and a NUL; "" for none
};

void TF_DefaultThreadOptions(TF_ThreadOptions* options) {
  if (!options) return;
  options->stack_size = 0;
  options->guard_size = 0;
  options->numa_node = -1;
}

static void* run_thread(void* arg) {
  TF_Thread* thread = arg;
  // Named by itself, before its work, so that the work sees the name.
  if (thread->name[0]) (void)pthread_setname_np(pthread_self(), thread->name);
  thread->work(thread->param);
  return NULL;
}

TF_Thread* TF_StartThread(const TF_ThreadOptions* options,
                          const char* thread_name, void (*work_func)(void*),
                          void* param) {
  const char* name = thread_name ? thread_name : "(null)";
  if (!work_func) {
    LOOM_LOG(LOOM_LOG_ERROR, "TF_StartThread: work_func of thread '%s' is NULL",
             name);
    return NULL;
  }
  TF_Thread* thread = malloc(sizeof(*thread));
  if (!thread) {
    LOOM_LOG(LOOM_LOG_ERROR, "TF_StartThread: out of memory for thread '%s'",
             name);
    return NULL;
  }
  thread->work = work_func;
  thread->param = param;
  thread->name[0] = '\0';
  if (thread_name) {
    strncpy(thread->name, thread_name, sizeof(thread->name) - 1);
    thread->name[sizeof(thread->name) - 1] = '\0';
  }
  pthread_attr_t attributes;
  int error = pthread_attr_init(&attributes);
  if (!error && options && options->stack_size) {
    error = pthread_attr_setstacksize(&attributes, options->stack_size);
  }
  if (!error && options && options->guard_size) {
    error = pthread_attr_setguardsize(&attributes, options->guard_size);
  }
  if (!error) {
    error = pthread_create(&thread->thread, &attributes, run_thread, thread);
  }
  pthread_attr_destroy(&attributes);
  if (error) {
    LOOM_LOG(LOOM_LOG_ERROR,
             "TF_StartThread: cannot start thread '%s' (stack_size %zu, "
             "guard_size %zu): %s",
             name, options ? options->stack_size : 0,
             options ? options->guard_size : 0, strerror(error));
    free(thread);
    return NULL;
  }
  return thread;
}

void TF_JoinThread(TF_Thread* thread) {
  if (!thread) return;
  pthread_join(thread->thread, NULL);
  free(thread);
}

//===----------------------------------------------------------------------===//
// Shared libraries
//===----------------------------------------------------------------------===//

void* TF_LoadSharedLibrary(const char* library_filename, TF_Status* status) {
  if (!library_filename) {
    loom__tf_status_set(status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                                 "TF_LoadSharedLibrary: "
                                                 "library_filename is NULL"));
    return NULL;
  }
  void* handle = dlopen(library_filename, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* reason = dlerror();
    loom__tf_status_set(
        status,
        loom_make_status(LOOM_STATUS_NOT_FOUND,
                         "TF_LoadSharedLibrary: cannot load '%s': %s",
                         library_filename, reason ? reason : "unknown"));
    return NULL;
  }
  loom__tf_status_set(status, loom_ok_status());
  return handle;
}

void* TF_GetSymbolFromLibrary(void* handle, const char* symbol_name,
                              TF_Status* status) {
  if (!handle || !symbol_name) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TF_GetSymbolFromLibrary: %s is NULL",
                                         !handle ? "handle" : "symbol_name"));
    return NULL;
  }
  dlerror();  // clears an earlier error
  void* symbol = dlsym(handle, symbol_name);
  if (!symbol) {
    const char* reason = dlerror();
    loom__tf_status_set(
        status,
        loom_make_status(LOOM_STATUS_NOT_FOUND,
                         "TF_GetSymbolFromLibrary: no symbol '%s': %s",
                         symbol_name, reason ? reason : "its value is NULL"));
    return NULL;
  }
  loom__tf_status_set(status, loom_ok_status());
  return symbol;
}
