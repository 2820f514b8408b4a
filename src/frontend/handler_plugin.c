// Handler plugins: shared libraries exporting LoomCreateOpHandler (see
// loom/plugin.h), loaded into a context.

#include <dlfcn.h>
#include <string.h>

#include "frontend/frontend_internal.h"
#include "loom/plugin.h"

loom_status_t loom_context_load_handler(loom_context_t* context,
                                        const char* path, const char* options,
                                        loom_op_handler_t** out_handler,
                                        const char** out_name) {
  if (!context || !path || !out_handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_load_handler: %s is NULL",
                            !context ? "context"
                            : !path  ? "path"
                                     : "out_handler");
  }
  *out_handler = NULL;
  if (out_name) *out_name = NULL;
  // Loaded as a plugin first, so that the ops and kernels it registers
  // (from static initialisers or its entry points; handler-specific ops)
  // belong to the load: all or nothing. The library then stays loaded for
  // the life of the process: its handlers, and tensors on them, may outlive
  // any handle to it.
  loom_plugin_t* plugin = NULL;
  loom_status_t loaded = loom_plugin_load(context->allocator, path, &plugin);
  loom_plugin_release(plugin);
  if (loaded) return loaded;  // names the library already
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  loom_handler_plugin_create_fn_t create = NULL;
  void* symbol =
      library ? dlsym(library, LOOM_HANDLER_PLUGIN_ENTRY_POINT) : NULL;
  memcpy(&create, &symbol, sizeof(create));
  if (!create) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "handler plugin '%s' does not export %s (the ops "
                            "and kernels it registered stay, as a loaded "
                            "library's do)",
                            path, LOOM_HANDLER_PLUGIN_ENTRY_POINT);
  }
  loom_op_handler_t* handler = NULL;
  loom_status_t status = create(context, options, &handler);
  if (!status && !handler) {
    status = loom_make_status(LOOM_STATUS_INTERNAL,
                              "handler plugin '%s': %s made no handler", path,
                              LOOM_HANDLER_PLUGIN_ENTRY_POINT);
  }
  if (!status && loom_op_handler_runtime(handler) != context->runtime) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "handler plugin '%s' made a handler for "
                              "another context",
                              path);
  }
  if (!status) {
    status = loom_context_add_handler(
        context, loom_op_handler_type_name(handler), handler, out_name);
  }
  if (status) {
    loom_op_handler_release(handler);
    return loom_status_annotate(status, "loading handler plugin '%s'", path);
  }
  *out_handler = handler;
  return loom_ok_status();
}
