# Loom's layers (DESIGN.md), bottom to top, and what each may use: the one
# place that says so. src/CMakeLists.txt builds one library per layer from
# src/<directory>/*.c; a layer's objects see the private headers
# (src/<directory>/*.h) of the layers it names and of no other, so an
# include that runs the wrong way does not compile; and the test
# layer_symbols checks that its objects call no other layer's functions
# (tests/layers). A layer names every layer it uses, not only the next one
# down, and only layers above it in this table, so the graph has no cycle.
# Public headers (include/) are visible to every layer.

# loom_layer(<layer> <directory> [<layer it uses>...])
function(loom_layer layer directory)
  get_property(known GLOBAL PROPERTY LOOM_LAYERS)
  foreach(used ${ARGN})
    if(NOT used IN_LIST known)
      message(FATAL_ERROR "layer ${layer} uses '${used}', which is not a "
                          "layer listed before it")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY LOOM_LAYERS ${layer})
  set_property(GLOBAL PROPERTY LOOM_LAYER_DIRECTORY_${layer} ${directory})
  set_property(GLOBAL PROPERTY LOOM_LAYER_USES_${layer} ${ARGN})
endfunction()

# loom_layer_exception(<layer> <used layer> [ONLY <file stem>...])
# A use the table does not allow, tolerated until the code is fixed: with
# ONLY, just the headers <directory>/<stem>.h and the functions defined in
# <directory>/<stem>.c of the used layer.
function(loom_layer_exception layer used)
  cmake_parse_arguments(ARG "" "" "ONLY" ${ARGN})
  get_property(known GLOBAL PROPERTY LOOM_LAYERS)
  if(NOT layer IN_LIST known OR NOT used IN_LIST known)
    message(FATAL_ERROR "loom_layer_exception(${layer} ${used}): not layers")
  endif()
  set_property(GLOBAL APPEND PROPERTY LOOM_LAYER_EXCEPTIONS_${layer} ${used})
  set_property(GLOBAL PROPERTY LOOM_LAYER_EXCEPTION_ONLY_${layer}_${used}
               ${ARG_ONLY})
endfunction()

#          layer               directory           uses
loom_layer(base                base)
loom_layer(host                host                base)
loom_layer(tensor              tensor              base)
loom_layer(registry            registry            base host tensor)
loom_layer(plugin              plugin              base host tensor registry)
# Collectives: one interface, an in-process backend and an MPI one.
loom_layer(collective          collective          base host tensor)
# Kernels register through the registry, as a plugin's would.
loom_layer(kernels             kernels             base host tensor registry
                                                   collective)
# The runtime registers the built-in ops.
loom_layer(corert              corert              base host tensor registry
                                                   kernels)
# The front end runs ops by name: it knows no kernel.
loom_layer(frontend            frontend            base host tensor registry
                                                   plugin corert)
# One library per handler: none sees another's private headers. What the
# reverse and forward modes share (the gradient and JVP registries, the
# recompute segment's note) is a library of its own below them.
loom_layer(handlers_autodiff   handlers/autodiff   base host tensor registry
                                                   plugin corert frontend)
loom_layer(handlers_tape       handlers/tape       base host tensor registry
                                                   plugin corert frontend
                                                   handlers_autodiff)
# Forward mode falls back to double-backward through the tape where an op
# has no JVP function.
loom_layer(handlers_forward    handlers/forward    base host tensor registry
                                                   plugin corert frontend
                                                   handlers_autodiff
                                                   handlers_tape)
loom_layer(handlers_logging    handlers/logging    base host tensor registry
                                                   plugin corert frontend)
loom_layer(handlers_numerics   handlers/numerics   base host tensor registry
                                                   plugin corert frontend)
loom_layer(handlers_recompute  handlers/recompute  base host tensor registry
                                                   plugin corert frontend
                                                   handlers_autodiff)
# vmap batches ops with the gradient helpers' op runner and vectors.
loom_layer(handlers_vmap       handlers/vmap       base host tensor registry
                                                   plugin corert frontend
                                                   handlers_autodiff)
# The parallel handler registers the gradients of pack and unpack.
loom_layer(handlers_parallel   handlers/parallel   base host tensor registry
                                                   plugin corert frontend
                                                   handlers_autodiff)
# Jacobians and Hessians compose the tape, forward mode and vmap.
loom_layer(handlers_jacobian   handlers/jacobian   base host tensor registry
                                                   plugin corert frontend
                                                   handlers_autodiff
                                                   handlers_tape
                                                   handlers_forward
                                                   handlers_vmap)
loom_layer(function            function            base host tensor registry
                                                   plugin corert frontend
                                                   handlers_autodiff
                                                   handlers_tape
                                                   handlers_forward
                                                   handlers_logging
                                                   handlers_numerics
                                                   handlers_recompute)
# Tracing records ops into the function layer's functions; it makes the
# backward functions of calls a tape records, the JVP functions of calls
# a forward accumulator takes (a tape or an accumulator in a trace), the
# batched functions of calls on a vmap and the checked functions of calls
# under the numerics handler.
loom_layer(handlers_trace      handlers/trace      base host tensor registry
                                                   plugin corert frontend
                                                   handlers_autodiff
                                                   handlers_tape
                                                   handlers_forward
                                                   handlers_numerics
                                                   handlers_vmap function)
# TensorFlow's C API over all of it: TF_ and TFE_ names live only here.
loom_layer(compat              compat              base host tensor registry
                                                   plugin kernels corert
                                                   frontend handlers_autodiff
                                                   handlers_tape
                                                   handlers_forward
                                                   handlers_logging
                                                   handlers_numerics
                                                   handlers_recompute
                                                   function handlers_trace)
