// What the functions derived from a call share (trace_call_backward.c,
// trace_call_jvp.c): the key they are kept under in the context's library
// (function/function_derived.h) — bytes written field by field, first
// counted, then written — their names, and leaving a scope on an error
// path.

#ifndef LOOM_HANDLERS_TRACE_TRACE_DERIVED_H_
#define LOOM_HANDLERS_TRACE_TRACE_DERIVED_H_

#include <stdbool.h>
#include <stddef.h>

#include "loom/eager.h"
#include "loom/function.h"
#include "loom/tensor_metadata.h"

typedef struct loom__derived_key_t {
  unsigned char* bytes;  // NULL: only counting
  size_t size;
} loom__derived_key_t;

void loom__derived_key_put(loom__derived_key_t* key, const void* data,
                           size_t size);

// A flag, then (when set) the dtype and shape.
void loom__derived_key_put_metadata(loom__derived_key_t* key, bool used,
                                    const loom_tensor_metadata_t* metadata);

// A name "<base>_<kind>_<k>" (or "call_<kind>_<serial>" for a long base)
// that is not in `context`'s library, into name[0, capacity).
void loom__derived_name(loom_context_t* context, const char* base,
                        const char* kind, char* name, size_t capacity);

// Leaves the innermost scope; the first error of `status` and the exit's.
loom_status_t loom__derived_exit_scope(loom_context_t* context,
                                       loom_status_t status);

// Install the builders of backward functions (trace_call_backward.c) and
// of JVP functions (trace_call_jvp.c) in the tape and the forward
// accumulator; trace_derived.c calls both as the library loads.
void loom__trace_install_call_backward(void);
void loom__trace_install_call_jvp(void);

#endif  // LOOM_HANDLERS_TRACE_TRACE_DERIVED_H_
