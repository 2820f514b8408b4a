// libloom.so loads with dlopen, as a Python extension loads it: the
// library may not use initial-exec thread-locals, which need room in the
// static TLS block a process reserves at start ("cannot allocate memory in
// static TLS block").

// cmocka alone, without libloom.a: the library must come only from dlopen.
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

static const char* g_library_path;

static void shared_library_loads_with_dlopen(void** state) {
  (void)state;
  void* library = dlopen(g_library_path, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) fail_msg("dlopen: %s", dlerror());
  assert_non_null(dlsym(library, "loom_context_create"));
  assert_int_equal(dlclose(library), 0);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_dlopen <path of libloom.so>\n");
    return 2;
  }
  g_library_path = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shared_library_loads_with_dlopen),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
