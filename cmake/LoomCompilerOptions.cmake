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
