// libloom.so loads with dlopen, as a Python extension loads it. Its
// thread-locals are initial-exec: a library loaded late gets them from the
// small static TLS space glibc keeps in reserve (512 bytes by default), so
// the library's TLS segment must stay small, or dlopen fails with "cannot
// allocate memory in static TLS block" in a process that loaded others.

// cmocka alone, without libloom.a: the library must come only from dlopen.
#include <dlfcn.h>
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

static const char* g_library_path;

// The bound the library's thread-locals keep to, well inside glibc's
// reserve so that other late-loaded libraries find room too.
enum { kMaxTlsBytes = 320 };

// The size of the library's PT_TLS segment, read from its file.
static uint64_t tls_segment_size(const char* path) {
  FILE* file = fopen(path, "rb");
  if (file == NULL) fail_msg("cannot open %s", path);
  Elf64_Ehdr header;
  assert_int_equal(fread(&header, sizeof header, 1, file), 1);
  assert_int_equal(header.e_ident[EI_CLASS], ELFCLASS64);
  uint64_t size = 0;
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    long offset = (long)(header.e_phoff + (uint64_t)i * header.e_phentsize);
    assert_int_equal(fseek(file, offset, SEEK_SET), 0);
    assert_int_equal(fread(&segment, sizeof segment, 1, file), 1);
    if (segment.p_type == PT_TLS) size = segment.p_memsz;
  }
  fclose(file);
  return size;
}

static void thread_locals_fit_the_static_tls_reserve(void** state) {
  (void)state;
  uint64_t size = tls_segment_size(g_library_path);
  if (size > kMaxTlsBytes) {
    fail_msg(
        "libloom.so has %llu bytes of thread-locals; keep them under "
        "%d (put bigger per-thread state on the heap)",
        (unsigned long long)size, (int)kMaxTlsBytes);
  }
}

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
      cmocka_unit_test(thread_locals_fit_the_static_tls_reserve),
      cmocka_unit_test(shared_library_loads_with_dlopen),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
