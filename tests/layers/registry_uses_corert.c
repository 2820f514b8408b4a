// Compiled by the test layer_includes with the registry layer's include
// path: the core runtime is above the registry, so this must not compile.

#include "corert/corert_internal.h"
#include "registry/op_def_internal.h"
