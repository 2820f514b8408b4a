// What the functions derived from a call share (trace_call_backward.c,
// trace_call_jvp.c): the key they are kept under in the context's library
// (function/function_derived.h) — bytes written field by field, first
// counted, then written — their names, and leaving a scope on an error
// path.

#ifndef LOOM_HANDLERS_TRACE_TRACE_DERIVED_H_
#define LOOM_HANDLERS_TRACE_TRACE_DERIVED_H_

#include <stdbool.h>
#include <stddef.h>

#include "loom/autodiff.h"
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

// What a derived function is made from: `request` (the builder's own),
// how its key is written, and how it is traced under a name.
typedef struct loom__derived_builder_t {
  const void* request;
  void (*write_key)(const void* request, loom__derived_key_t* key);
  loom_status_t (*trace)(const void* request, const char* name,
                         loom_function_t** out_function);
} loom__derived_builder_t;

// The function derived from `base` (a function of `context`'s library
// named `function`) for the builder's request, found by its key, or traced
// under "<function>_<kind>_<k>" and kept when the library has none (a
// trace that fails is remembered too): a new reference in *out_derived,
// or NULL when none can be made or kept. *out_made tells whether this
// call made it.
loom_status_t loom__derived_find_or_make(loom_context_t* context,
                                         loom_function_t* base,
                                         const char* function, const char* kind,
                                         const loom__derived_builder_t* builder,
                                         loom_function_t** out_derived,
                                         bool* out_made);

// The body of a derived function, in its trace's scope: params[0, n) are
// its parameters; it sets outs[0, *out_count) (new references; room for
// the capacity loom__derived_trace was given), the function's outputs.
typedef loom_status_t (*loom__derived_body_fn_t)(const void* request,
                                                 loom_tensor_handle_t** params,
                                                 loom_tensor_handle_t** outs,
                                                 int32_t* out_count);

// Traces function `name` in `context` with an executing trace (ops of
// constants run as they are traced, so that an op reading one, a Sum's
// axes or a Reshape's shape, finds its value): parameters of
// metadata[0, n), then `body(request, ...)` with room for `capacity`
// outputs.
loom_status_t loom__derived_trace(loom_context_t* context, const char* name,
                                  const loom_tensor_metadata_t* metadata,
                                  int32_t n, int32_t capacity,
                                  loom__derived_body_fn_t body,
                                  const void* request,
                                  loom_function_t** out_function);

// The metadata of handles[0, n) (waited for), in *out_metadata (free it
// with loom_allocator_system()).
loom_status_t loom__derived_metadata(loom_tensor_handle_t* const* handles,
                                     int32_t n,
                                     loom_tensor_metadata_t** out_metadata);

// Runs the function of `kind` derived from function `function` of
// `context`'s library for the builder's request (found, or traced and
// kept) on inputs[0, n) in the current scope: outputs[0, m) receive new
// references. *out_done false, nothing written, when `function` is not in
// the library or its derived function cannot be made.
loom_status_t loom__derived_run(loom_context_t* context, const char* function,
                                const char* kind,
                                const loom__derived_builder_t* builder,
                                loom_tensor_handle_t* const* inputs, int32_t n,
                                loom_tensor_handle_t** outputs, int32_t m,
                                bool* out_done);

// Calls `derived` on inputs[0, n) in the current scope: outputs[0, m)
// receive new references (none on an error).
loom_status_t loom__derived_call(loom_context_t* context,
                                 const loom_function_t* derived,
                                 loom_tensor_handle_t* const* inputs, int32_t n,
                                 loom_tensor_handle_t** outputs, int32_t m);

// Leaves the innermost scope; the first error of `status` and the exit's.
loom_status_t loom__derived_exit_scope(loom_context_t* context,
                                       loom_status_t status);

// Whether the gradient of input `i` of the op `ctx` differentiates is
// computed by a backward function: it needs one and is floating.
bool loom__trace_backward_wants(loom_gradient_context_t* ctx, int32_t i);

// The backward function (found or made) of a call of `function_name` whose
// inputs are the inputs [first, num_inputs) of the op `ctx` differentiates
// and whose outputs are the op's (with the gradients `dys`, NULL where
// none): it takes those inputs, then the dys given, and gives the
// gradients of the inputs loom__trace_backward_wants (zeros where
// unconnected). *out_backward is a new reference, NULL when no gradient
// flows or the gradient cannot be traced. NOT_FOUND for a function not in
// the library.
loom_status_t loom__trace_backward_function(loom_gradient_context_t* ctx,
                                            const char* function_name,
                                            int32_t first,
                                            loom_tensor_handle_t* const* dys,
                                            loom_function_t** out_backward);

// The same for a call of `function_name` on n inputs of `inputs`' dtypes
// and shapes, of which wanted[i] need a gradient, and m outputs, of which
// seeded[k] bring one of seeds[k]'s dtype and shape.
loom_status_t loom__trace_backward_function_of(
    loom_context_t* context, const char* function_name, int32_t n, int32_t m,
    const loom_tensor_metadata_t* inputs, const bool* wanted,
    const loom_tensor_metadata_t* seeds, const bool* seeded,
    loom_function_t** out_backward);

// The JVP function (found or made) of a call of `function_name` on
// primals[0, n) with the tangents given (NULL: zero), of m outputs: it
// takes the primals, then the tangents given, and gives the m outputs,
// then their m tangents (`loop`, for a loop body, m == n: only those of the
// outputs whose input has a tangent, so that outputs match inputs).
// *out_jvp is a new reference, NULL when it cannot be traced. NOT_FOUND
// for a function not in the library.
loom_status_t loom__trace_jvp_function(loom_context_t* context,
                                       const char* function_name, int32_t n,
                                       loom_tensor_handle_t* const* primals,
                                       loom_tensor_handle_t* const* tangents,
                                       int32_t m, bool loop,
                                       loom_function_t** out_jvp);

// Registers `gradient` and `jvp` as the gradient and JVP functions of
// ops[0, n), reading all their inputs; the first error.
loom_status_t loom__derived_register_derivatives(const char* const* ops,
                                                 size_t n,
                                                 loom_gradient_fn_t gradient,
                                                 loom_jvp_fn_t jvp);

// Registers the gradient and JVP functions of If, StatelessIf, Case and
// StatelessCase (trace_control_flow_gradients.c): the same op over the
// branches' backward (JVP) functions. A late gradient family
// (handlers/autodiff/gradient_families.h).
loom_status_t loom__trace_register_control_flow_gradients(void);

// The same for While and StatelessWhile (trace_while_gradients.c): the JVP
// a While over the body's JVP function, the gradient the loop run again
// keeping each iteration's variables, then counted down through the body's
// backward function.
loom_status_t loom__trace_register_while_gradients(void);

// Install the builders of backward functions (trace_call_backward.c) and
// of JVP functions (trace_call_jvp.c) in the tape and the forward
// accumulator; trace_derived.c calls both as the library loads.
void loom__trace_install_call_backward(void);
void loom__trace_install_call_jvp(void);
// ... of batched functions (trace_call_batch.c) in vmap, and of checked
// functions (trace_call_checked.c) in the numerics handler.
void loom__trace_install_call_batch(void);
void loom__trace_install_call_checked(void);

#endif  // LOOM_HANDLERS_TRACE_TRACE_DERIVED_H_
