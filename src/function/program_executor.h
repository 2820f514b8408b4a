// The executor's internals shared by its files and the built-in kernels.

#ifndef LOOM_FUNCTION_PROGRAM_EXECUTOR_H_
#define LOOM_FUNCTION_PROGRAM_EXECUTOR_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/arena.h"
#include "base/hash_map.h"
#include "base/small_vector.h"
#include "function/program_internal.h"
#include "loom/program.h"
#include "loom/program_kernel.h"

typedef struct program_frame_t program_frame_t;

typedef struct program_kernel_t {
  const char* name;
  loom_program_kernel_fn_t fn;
  void* user_data;
  int32_t num_arguments;  // -1: any
  int32_t num_results;    // -1: any
} program_kernel_t;

// A prepared op cached for the corert.executeop operations that name one op
// (the first handler they run on).
typedef struct program_prepared_t {
  loom_op_handler_t* handler;
  loom_prepared_op_t* op;
} program_prepared_t;

// What an executor keeps per program it runs.
typedef struct program_binding_t {
  const loom_program_t* program;
  uint64_t program_id;
  uint32_t id;      // the high half of location tokens
  int32_t num_ops;  // the program's (which may be gone at destruction)
  const program_kernel_t** kernels;  // by op global index (NULL: a return)
  _Atomic(program_prepared_t*)* prepared;  // by op execute_index
  int32_t num_prepared;
  struct program_binding_t* next;
} program_binding_t;

typedef struct program_cpu_ops_t {
  loom_program_cpu_ops_fn_t fn;
  void* user_data;
} program_cpu_ops_t;

typedef struct program_named_handler_t {
  const char* name;
  loom_op_handler_t* handler;
} program_named_handler_t;

struct loom_program_executor_t {
  loom_allocator_t allocator;
  loom_host_context_t* host;
  loom_runtime_t* runtime;
  FILE* output;
  loom_program_diagnostic_handler_t diagnostic_handler;
  void* diagnostic_user_data;
  int32_t max_call_depth;
  int32_t max_calls_in_flight;
  // What a frame's op without attributes reads (loom_program_frame_attrs).
  loom_op_attrs_t empty_attrs;
  pthread_mutex_t mutex;  // everything below that is not atomic
  pthread_mutex_t report_mutex;
  // Serialises changes to the op attribute sets of the programs this
  // executor runs that do not order them with chains (reading them
  // unordered is the program's race).
  pthread_mutex_t op_attrs_mutex;
  loom__arena_t arena;
  loom__hash_map_t kernels;  // name hash (+ probe) -> program_kernel_t*
  program_cpu_ops_t* cpu_ops;
  int32_t num_cpu_ops;
  int32_t cpu_ops_capacity;
  program_named_handler_t* handlers;  // registered by programs
  int32_t num_handlers;
  int32_t handlers_capacity;
  void** plugins;  // dlopen handles
  int32_t num_plugins;
  int32_t plugins_capacity;
  program_binding_t* bindings;
  uint32_t next_binding_id;
  _Atomic int64_t live_frames;  // calls in flight
  // Set when a call exceeded a limit (see max_calls_in_flight): kernels are
  // skipped with stop_error until no call is in flight.
  _Atomic bool stopped;
  loom_status_t stop_error;  // guarded by mutex
  _Atomic int64_t kernels_run;
  _Atomic int64_t kernels_skipped;
  _Atomic int64_t functions_called;
  _Atomic int64_t diagnostics;
};

// One kernel call, as kernels see it.
struct loom_program_frame_t {
  loom_program_executor_t* executor;
  program_frame_t* frame;
  const program_op_t* op;
  const program_binding_t* binding;
  int32_t depth;  // of the function invocation
  loom_async_value_t* const* arguments;
  int32_t num_arguments;
  loom_async_value_t* const* results;
  int32_t num_results;
};

// Arrays of program values: up to 16 without allocating.
LOOM_DEFINE_SMALL_VECTOR(program_value_vector, loom_async_value_t*, 16)

// Registers the built-in kernels (kernels_*.c).
loom_status_t loom__program_register_tfrt_kernels(
    loom_program_executor_t* executor);
loom_status_t loom__program_register_control_flow_kernels(
    loom_program_executor_t* executor);
loom_status_t loom__program_register_loop_kernels(
    loom_program_executor_t* executor);
loom_status_t loom__program_register_corert_kernels(
    loom_program_executor_t* executor);
loom_status_t loom__program_register_shape_kernels(
    loom_program_executor_t* executor);
// Registers `name`, a synchronous kernel (for functions without chains)
// that runs the registered kernel `wrapped` and waits for its results:
// an available chain is passed as the wrapped kernel's argument
// `chain_argument` (-1: none), and its result 0, a chain, is dropped when
// `chain_result`. INTERNAL when `wrapped` is not registered.
loom_status_t loom__program_add_sync_kernel(
    loom_program_executor_t* executor, const char* name, const char* wrapped,
    int32_t chain_argument, bool chain_result, int32_t num_arguments,
    int32_t num_results);
// The corert_sync kernels wrap corert's: register them after those.
loom_status_t loom__program_register_corert_sync_kernels(
    loom_program_executor_t* executor);
loom_status_t loom__program_register_composite_kernels(
    loom_program_executor_t* executor);
// tfrt_dht and corert's tensor handle conversions (kernels_dht.c).
loom_status_t loom__program_register_dht_kernels(
    loom_program_executor_t* executor);
// btf.* (kernels_btf.c).
loom_status_t loom__program_register_btf_kernels(
    loom_program_executor_t* executor);
// tfrt_test.benchmark (kernels_benchmark.c).
loom_status_t loom__program_register_benchmark_kernels(
    loom_program_executor_t* executor);

// Operand `index` of the kernel's operation, a tensor handle, moved out of
// its value when this operation is the value's last use and nothing else
// holds the value (the caller owns the handle; the value holds nothing
// from then on); NULL otherwise. What lets an op reuse (forward) the
// buffer of an argument nobody reads after it, as TFRT does.
loom_tensor_handle_t* loom__program_frame_take_handle(
    const loom_program_frame_t* call, int32_t index);

// The kernel registered as `name`, or NULL.
const program_kernel_t* loom__program_find_kernel(
    loom_program_executor_t* executor, const char* name);

// Binds `program` (resolving its kernels once): the binding, or the first
// binding error, also reported as a diagnostic.
loom_status_t loom__program_bind(loom_program_executor_t* executor,
                                 const loom_program_t* program,
                                 program_binding_t** out_binding);

// Starts `function` with `arguments` (borrowed) and fills `results` (unset
// program values, borrowed): each is set when the function's return value
// is. `caller` is the frame whose operation `call_op` makes the call (NULL
// for a call from outside); it is kept alive while the callee runs, for the
// call stack of errors. On error (a limit, memory) the results are set to
// it and it is returned: it has been reported already, once, with the call
// stack, and the executor is stopped (see max_calls_in_flight).
loom_status_t loom__program_call(loom_program_executor_t* executor,
                                 const program_binding_t* binding,
                                 const program_function_t* function,
                                 program_frame_t* caller,
                                 const program_op_t* call_op,
                                 loom_async_value_t* const* arguments,
                                 loom_async_value_t* const* results);

// loom__program_call that also calls on_done(on_done_arg) once the
// callee's frame has run every operation and is freed (when the call
// started: on error nothing is called). What waits for a function without
// results (tfrt_test.sync_benchmark). on_done runs on the thread that
// freed the frame, and must not call into the executor inline.
loom_status_t loom__program_call_notify(
    loom_program_executor_t* executor, const program_binding_t* binding,
    const program_function_t* function, program_frame_t* caller,
    const program_op_t* call_op, loom_async_value_t* const* arguments,
    loom_async_value_t* const* results, void (*on_done)(void* arg),
    void* on_done_arg);

// Keeps a frame (and its callers) alive past its last operation: what a
// kernel that calls functions later (corert.while) holds for their call
// stacks.
void loom__program_frame_retain(program_frame_t* frame);
void loom__program_frame_release(program_frame_t* frame);

// The executor's stop error (a new status), or OK when it is not stopped.
loom_status_t loom__program_stop_error(loom_program_executor_t* executor);
// Ends a stop; returns its error (owned) for the caller to free.
loom_status_t loom__program_stop_clear(loom_program_executor_t* executor);

// snprintf at *length into buffer[0, capacity); *length stays below
// capacity (the text is truncated).
void loom__program_append(char* buffer, size_t capacity, size_t* length,
                          const char* format, ...) LOOM_PRINTF_FORMAT(4, 5);

// A status's message, or for a status without one (made when there was no
// memory for it) its code and why, written into buffer.
const char* loom__program_status_text(loom_status_t status, char* buffer,
                                      size_t capacity);

// Sets `destination` from `source` when source is set: its payload or error.
void loom__program_value_forward(loom_allocator_t allocator,
                                 loom_async_value_t* source,
                                 loom_async_value_t* destination);
void loom__program_value_forward_now(loom_async_value_t* source,
                                     loom_async_value_t* destination);

// The location token of an operation under a binding, and its decoding.
loom_location_t loom__program_location(const program_binding_t* binding,
                                       const program_op_t* op);

// Reports an error at an operation (borrows `error`).
void loom__program_report_at(loom_program_executor_t* executor,
                             const program_op_t* op, loom_status_t error);
// Reports an error at a location of a program (borrows `error`).
void loom__program_report_at_location(loom_program_executor_t* executor,
                                      const loom_program_t* program,
                                      program_source_location_t location,
                                      loom_status_t error);
// Reports a diagnostic that is not a runtime error (binding problems).
void loom__program_report_message(loom_program_executor_t* executor,
                                  const loom_program_t* program,
                                  program_source_location_t location,
                                  const char* message);

// The cpu handler registration hooks, applied to a new cpu handler.
loom_status_t loom__program_apply_cpu_ops(loom_program_executor_t* executor,
                                          loom_op_handler_t* cpu);

// Handlers programs registered by name (corert.register_op_handler), then
// the runtime's. get returns a new reference or NULL.
loom_status_t loom__program_register_handler(loom_program_executor_t* executor,
                                             const char* name,
                                             loom_op_handler_t* handler);
loom_op_handler_t* loom__program_get_handler(loom_program_executor_t* executor,
                                             const char* name);

// !corert.opattrs payloads.
loom_status_t loom__program_op_attrs_create(loom_allocator_t allocator,
                                            loom_program_op_attrs_t** out);
void loom__program_op_attrs_retain(loom_program_op_attrs_t* attrs);
void loom__program_op_attrs_release(loom_program_op_attrs_t* attrs);

// Sets every unset result of a frame to a copy of `error` (borrowed).
void loom__program_frame_fail_results(const loom_program_frame_t* frame,
                                      loom_status_t error);

#endif  // LOOM_FUNCTION_PROGRAM_EXECUTOR_H_
