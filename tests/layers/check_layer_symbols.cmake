# The test layer_symbols: every loom_, loom__, TF_ or TFE_ symbol that a
# layer's objects reference must be defined in the layer itself or in a
# layer it may use (cmake/LoomLayers.cmake). Includes are checked by the
# build; this catches a call that runs the wrong way through a public
# header.
#
#   cmake -DMANIFEST=<build>/tests/layers/manifest.cmake -DNM=nm
#         -P check_layer_symbols.cmake
#
# MANIFEST sets `layers` and, per layer, objects_<layer>, uses_<layer>,
# exceptions_<layer> and only_<layer>_<used layer> (the file stems an
# exception is limited to).

cmake_minimum_required(VERSION 3.20)

include(${MANIFEST})

set(symbol "(loom_|TF_|TFE_)[A-Za-z0-9_]*")

# "<build>/.../loom_layer_corert.dir/corert/runtime.c.o" -> corert/runtime.c
function(source_of object out)
  string(REGEX REPLACE "^.*/loom_[a-z0-9_]+\\.dir/(\\./)?(.*)\\.o$" "\\2"
         source "${object}")
  set(${out} "${source}" PARENT_SCOPE)
endfunction()

# Who defines what ("nm -A -P -g", external symbols only:
# "<object>: <symbol> <type> ...").
foreach(layer ${layers})
  execute_process(COMMAND ${NM} -A -P -g ${objects_${layer}}
    OUTPUT_VARIABLE nm_${layer} ERROR_VARIABLE error RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "${NM} failed on the objects of layer ${layer}: "
                        "${error}")
  endif()
  string(REGEX MATCHALL "[^\n]*: ${symbol} [ABCDGRSTVWiu] " definitions
         "${nm_${layer}}")
  foreach(line ${definitions})
    string(REGEX MATCH "^(.*): ([^ ]+) " _ "${line}")
    set(layer_of_${CMAKE_MATCH_2} ${layer})
    set(object_of_${CMAKE_MATCH_2} ${CMAKE_MATCH_1})
  endforeach()
endforeach()

# What each layer references.
set(violations 0)
set(checked 0)
foreach(layer ${layers})
  string(REGEX MATCHALL "[^\n]*: ${symbol} U" references "${nm_${layer}}")
  foreach(line ${references})
    math(EXPR checked "${checked} + 1")
    string(REGEX MATCH "^(.*): ([^ ]+) U" _ "${line}")
    set(object ${CMAKE_MATCH_1})
    set(name ${CMAKE_MATCH_2})
    set(owner ${layer_of_${name}})
    if(owner STREQUAL layer OR owner IN_LIST uses_${layer})
      continue()
    endif()
    source_of(${object} user)
    if(NOT owner)
      message("layer ${layer}: ${user} uses ${name}, which no layer defines")
      math(EXPR violations "${violations} + 1")
      continue()
    endif()
    source_of(${object_of_${name}} definer)
    if(owner IN_LIST exceptions_${layer})
      get_filename_component(stem ${definer} NAME_WE)
      if(NOT only_${layer}_${owner} OR stem IN_LIST only_${layer}_${owner})
        continue()
      endif()
    endif()
    message("layer ${layer}: ${user} uses ${name}, defined in layer "
            "${owner} (${definer}), which ${layer} may not use")
    math(EXPR violations "${violations} + 1")
  endforeach()
endforeach()

list(LENGTH layers count)
if(violations)
  message(FATAL_ERROR "uses that run against the layers: ${violations} "
                      "(cmake/LoomLayers.cmake says what each may use)")
endif()
message("${count} layers: ${checked} references to loom_/TF_/TFE_ symbols, "
        "all to the layer itself or to one it may use")
