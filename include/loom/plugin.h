// Plugins: shared libraries that register ops and kernels through
// TensorFlow's C API (tensorflow/c/ops.h, tensorflow/c/kernels.h), and
// handler plugins that provide an op handler (see the end of this file).
//
// A plugin registers its ops and kernels the ways TensorFlow's custom-op
// libraries do: from static initialisers that run while the library is
// opened (C `__attribute__((constructor))` functions, C++ static objects,
// as REGISTER_OP and the kernel C API's builders are used in a .so), and/or
// from the entry points `void TF_InitPlugin(void)` (the kernel C API
// design's) and `void TF_InitKernel(void)` (TensorFlow's), which Loom calls,
// in that order, when the library itself defines them. Neither is needed.
//
// Loom calls TF_InitPlugin with no arguments, in the form the kernel C API
// design gives it. TensorFlow's own plugin interfaces use other
// signatures for their entry points (PluggableDevice's SE_InitPlugin takes
// registration params and a TF_Status*; a modular filesystem's
// TF_InitPlugin takes a plugin-info struct): Loom does not call those, and
// a library whose TF_InitPlugin expects arguments must not be loaded.
//
// The load's registration journal is installed before dlopen: every
// registration made while the library loads (by its initialisers, its
// entry points, threads either starts) is recorded, and so is every
// registration call that fails (a spec that does not parse, a kernel
// builder whose type constraint, host-memory argument or label was
// rejected), whether or not the plugin checks its TF_Status. If any fails,
// everything the library registered is rolled back, then the library is
// unmapped, and the load fails with the first error.

#ifndef LOOM_PLUGIN_H_
#define LOOM_PLUGIN_H_

#include "loom/allocator.h"
#include "loom/macros.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_plugin_t loom_plugin_t;

// Loads the library at `path` (running its static initialisers) and runs
// its entry points. NOT_FOUND when the file cannot be loaded, or the first
// registration error; every error names the library. Loading a library that
// is already loaded (by any path) returns a new handle to it and runs
// nothing, as TensorFlow's TF_LoadLibrary does. A library whose load failed
// was unmapped after the rollback and is loaded afresh, its initialisers
// running again; one that could not be unmapped (linked with -z nodelete,
// or opened by someone else too) and whose initialisers registered
// something fails again with the first load's error, since they do not run
// twice. A library mapped before its first load (the program links it)
// had its initialisers run outside any load: only its entry points count.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_plugin_load(
    loom_allocator_t allocator, const char* path, loom_plugin_t** out_plugin);

// Frees the handle. The library stays loaded (its ops and kernels stay
// registered and may be running), as in TensorFlow.
LOOM_API void loom_plugin_release(loom_plugin_t* plugin);

LOOM_API const char* loom_plugin_path(const loom_plugin_t* plugin);

// The ops the library registered in the global op registry while it loaded,
// in registration order: writes up to `capacity` names to `names` and
// returns the count (0 for NULL). The names live as long as the process;
// every handle to the library lists the same ops.
LOOM_API size_t loom_plugin_op_names(const loom_plugin_t* plugin,
                                     const char** names, size_t capacity);

//===----------------------------------------------------------------------===//
// Handler plugins
//===----------------------------------------------------------------------===//
//
// A library may also provide an op handler (a transformation or a device;
// loom/op_handler.h) by exporting
//
//   loom_status_t LoomCreateOpHandler(loom_context_t* context,
//                                     const char* options,
//                                     loom_op_handler_t** out_handler);
//
// which makes a handler for `context` (on loom_context_runtime(context))
// and returns a reference to it; `options` is the loader's string (may be
// NULL). loom_context_load_handler (loom/eager.h) loads such a library:
// first its TF_InitPlugin / TF_InitKernel, if it exports either, as
// loom_plugin_load does (that is where it registers its handler-specific
// ops, with the usual rollback on failure), then LoomCreateOpHandler; the
// handler is then added to the context under its vtable's type name
// ("/job:localhost/replica:0/task:0/device:<type_name>:<n>"), ready to be
// entered as a scope. The library stays loaded for the life of the
// process. Such a plugin includes loom/ headers and links libloom (the
// shared library), as the example examples/plugins/counter does.

// The entry point's name and type.
#define LOOM_HANDLER_PLUGIN_ENTRY_POINT "LoomCreateOpHandler"
struct loom_context_t;
struct loom_op_handler_t;
typedef loom_status_t (*loom_handler_plugin_create_fn_t)(
    struct loom_context_t* context, const char* options,
    struct loom_op_handler_t** out_handler);

LOOM_EXTERN_C_END

#endif  // LOOM_PLUGIN_H_
