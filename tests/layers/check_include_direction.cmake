# The test layer_includes: compiled with a layer's include path and
# definitions, a source including a header of a layer it may use must
# compile, and one including a header of a layer above it must fail
# because that header is not found. The first shows that the second fails
# for that reason alone.
#
#   cmake -DCOMPILER=cc -DFLAGS=<generated file> -DALLOWED=<source>
#         -DREJECTED=<source> -DHEADER=<the rejected header's path in src>
#         -P check_include_direction.cmake
#
# FLAGS sets `includes` and `definitions` (lists) of the layer.

cmake_minimum_required(VERSION 3.20)

include(${FLAGS})
get_filename_component(name ${HEADER} NAME)
if(NOT EXISTS ${HEADER})
  message(FATAL_ERROR "${HEADER} does not exist: the rejected include "
                      "would fail for that reason; name a header that does")
endif()

set(flags -std=c11 -fsyntax-only)
foreach(directory ${includes})
  list(APPEND flags -I${directory})
endforeach()
foreach(definition ${definitions})
  list(APPEND flags -D${definition})
endforeach()

execute_process(COMMAND ${COMPILER} ${flags} ${ALLOWED}
  OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "${ALLOWED} should compile, but:\n${output}")
endif()

execute_process(COMMAND ${COMPILER} ${flags} ${REJECTED}
  OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE failed)
if(NOT failed)
  message(FATAL_ERROR "${REJECTED} compiled: its include runs against the "
                      "layers and must not")
endif()
string(REPLACE "." "\\." quoted ${name})
if(NOT output MATCHES "${quoted}'?: No such file|${quoted}' file not found")
  message(FATAL_ERROR "${REJECTED} failed, but not for want of ${name}:\n"
                      "${output}")
endif()
message("as it should, ${REJECTED} does not compile:\n${output}")
