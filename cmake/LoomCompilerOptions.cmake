# Warnings, portability and sanitizer flags shared by every Loom target.
#
# The default build is portable: no -march=native; code that wants wider
# SIMD selects it at run time. Valgrind must be able to run everything.

set(LOOM_WARNING_FLAGS -Wall -Wextra -Wshadow -Wno-unused-parameter
    -Wno-missing-field-initializers)
if(LOOM_WERROR)
  list(APPEND LOOM_WARNING_FLAGS -Werror)
endif()

# C-only warnings (C++ test helpers would trip on these).
set(LOOM_C_WARNING_FLAGS -Wstrict-prototypes -Wmissing-prototypes)

if(LOOM_SANITIZE)
  string(REPLACE "," ";" _loom_sanitizers "${LOOM_SANITIZE}")
  set(LOOM_SANITIZER_FLAGS -fsanitize=${LOOM_SANITIZE} -fno-omit-frame-pointer
      -fno-sanitize-recover=all)
  add_compile_options(${LOOM_SANITIZER_FLAGS})
  add_link_options(${LOOM_SANITIZER_FLAGS})
endif()

# Applies Loom's warning set to a target.
function(loom_target_warnings target)
  target_compile_options(${target} PRIVATE ${LOOM_WARNING_FLAGS}
    $<$<COMPILE_LANGUAGE:C>:${LOOM_C_WARNING_FLAGS}>)
endfunction()

# What the library's own objects are compiled with, beyond the build type:
# - hidden visibility (only LOOM_API / TF_CAPI_EXPORT declarations are
#   exported), so calls inside the library bind locally;
# - -fno-semantic-interposition: an exported function may be inlined into
#   its callers inside the library (nobody may interpose it);
# - initial-exec thread-locals (-ftls-model=initial-exec): a thread-local
#   costs one load from the thread pointer instead of a call. The library
#   keeps its thread-locals to a few hundred bytes (bigger per-thread state
#   lives on the heap), so that they fit the static TLS space glibc keeps
#   for libraries loaded later: the library can still be dlopen'ed (a
#   Python extension loads it so; test_dlopen checks it).
include(CheckCCompilerFlag)
check_c_compiler_flag(-fno-semantic-interposition
  LOOM_HAVE_NO_SEMANTIC_INTERPOSITION)
check_c_compiler_flag(-ftls-model=initial-exec LOOM_HAVE_INITIAL_EXEC_TLS)
set(LOOM_LIBRARY_FLAGS)
if(LOOM_HAVE_NO_SEMANTIC_INTERPOSITION)
  list(APPEND LOOM_LIBRARY_FLAGS -fno-semantic-interposition)
endif()
if(LOOM_HAVE_INITIAL_EXEC_TLS)
  list(APPEND LOOM_LIBRARY_FLAGS -ftls-model=initial-exec)
endif()

# Applies the library's flags to one of its object libraries.
function(loom_target_library_flags target)
  set_target_properties(${target} PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    C_VISIBILITY_PRESET hidden)
  target_compile_options(${target} PRIVATE ${LOOM_LIBRARY_FLAGS})
endfunction()
