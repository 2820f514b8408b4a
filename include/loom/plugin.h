// Plugins: shared libraries that register ops and kernels through
// TensorFlow's C API (tensorflow/c/ops.h, tensorflow/c/kernels.h).
//
// A plugin exports `void TF_InitPlugin(void)` (the kernel C API design's
// entry point) and/or `void TF_InitKernel(void)` (TensorFlow's); Loom calls
// each one present, in that order, and needs no static initialisers. Every
// registration made while they run is recorded: if any fails, all of them
// are rolled back and the load fails with that registration's error.

#ifndef LOOM_PLUGIN_H_
#define LOOM_PLUGIN_H_

#include "loom/allocator.h"
#include "loom/macros.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_plugin_t loom_plugin_t;

// Loads the library at `path` and runs its entry points. NOT_FOUND when the
// file cannot be loaded or exports no entry point, or the first registration
// error; every error names the library.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_plugin_load(
    loom_allocator_t allocator, const char* path, loom_plugin_t** out_plugin);

// Frees the handle. The library stays loaded (its ops and kernels stay
// registered and may be running), as in TensorFlow.
LOOM_API void loom_plugin_release(loom_plugin_t* plugin);

LOOM_API const char* loom_plugin_path(const loom_plugin_t* plugin);

LOOM_EXTERN_C_END

#endif  // LOOM_PLUGIN_H_
