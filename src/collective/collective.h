// Collectives: one interface, several backends (DESIGN.md). A collective
// is one operation that `group_size` participants run together, found by
// its (group key, instance key); each brings a tensor and gets the result.
// The in-process backend (collective_local.c) meets its participants in
// this process: the components of a parallel handler, or threads running
// CollectiveReduceV2 eagerly. A backend over MPI ranks implements the same
// vtable later and is installed with loom__collective_set_backend.
//
// Kernels call loom__collective_all_reduce; they do not know the backend.

#ifndef LOOM_COLLECTIVE_COLLECTIVE_H_
#define LOOM_COLLECTIVE_COLLECTIVE_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/status.h"
#include "loom/tensor.h"

// TensorFlow's merge_op values.
typedef enum loom__collective_merge_t {
  LOOM__COLLECTIVE_MERGE_MIN = 0,
  LOOM__COLLECTIVE_MERGE_MAX,
  LOOM__COLLECTIVE_MERGE_MUL,
  LOOM__COLLECTIVE_MERGE_ADD,
} loom__collective_merge_t;

// TensorFlow's final_op values.
typedef enum loom__collective_final_t {
  LOOM__COLLECTIVE_FINAL_ID = 0,
  LOOM__COLLECTIVE_FINAL_DIV,  // divides by group_size
} loom__collective_final_t;

// One participant's part in an all-reduce, or in an all-gather (which
// ignores `merge` and `final_op`).
typedef struct loom__collective_reduce_t {
  const char* op_name;  // for messages ("CollectiveReduceV2")
  int32_t group_size;   // >= 1
  int32_t group_key;
  int32_t instance_key;
  loom__collective_merge_t merge;
  loom__collective_final_t final_op;
  // > 0: the participant gives up after this long with DEADLINE_EXCEEDED;
  // 0: it waits as long as it takes (TensorFlow's default).
  double timeout_seconds;
  const loom_tensor_t* input;  // dense; dtype and shape as `output`
  // The full name of the participant's device, or NULL: the in-process
  // backend orders a gather's participants by it (MPI by rank).
  const char* device;
} loom__collective_reduce_t;

typedef struct loom__collective_backend_t {
  const char* name;  // "local", "mpi"
  // Blocks until the group's participants have all contributed, then
  // writes the reduction into `output` (dense, allocated by the caller
  // with the input's dtype and shape). Fails every participant of an
  // instance whose participants disagree (group size, dtype, shape).
  loom_status_t (*all_reduce)(void* state,
                              const loom__collective_reduce_t* request,
                              loom_tensor_t* output);
  // Blocks likewise, then writes every participant's input, in the order
  // of their ranks, concatenated along dim 0 into `output` (dense, dim 0
  // group_size times the input's). The in-process backend ranks its
  // participants by their devices' names.
  loom_status_t (*all_gather)(void* state,
                              const loom__collective_reduce_t* request,
                              loom_tensor_t* output);
  // One participant (`is_sender`) sends `data` (its input) to the others,
  // which receive it into `data` (request->input is `data` too: its dtype
  // and shape are checked against the sender's).
  loom_status_t (*broadcast)(void* state,
                             const loom__collective_reduce_t* request,
                             bool is_sender, loom_tensor_t* data);
  // Blocks likewise, then writes part `rank` of the reduction (the input
  // cut along dim 0 into group_size equal parts) into `output` (dim 0 the
  // input's over group_size).
  loom_status_t (*reduce_scatter)(void* state,
                                  const loom__collective_reduce_t* request,
                                  loom_tensor_t* output);
  // Blocks likewise; every input is cut along dim 0 into group_size equal
  // parts, and part j of the output (shaped as the input) is part `rank`
  // of rank j's input. Ignores `merge` and `final_op`.
  loom_status_t (*all_to_all)(void* state,
                              const loom__collective_reduce_t* request,
                              loom_tensor_t* output);
  void* state;
} loom__collective_backend_t;

// The backend collectives use now (the in-process one unless another was
// installed).
const loom__collective_backend_t* loom__collective_backend(void);

// Installs `backend` (NULL: back to the in-process one); it must outlive
// its use. For a future MPI backend and tests.
void loom__collective_set_backend(const loom__collective_backend_t* backend);

// The in-process backend.
const loom__collective_backend_t* loom__collective_local_backend(void);

// Runs `request` on the current backend.
loom_status_t loom__collective_all_reduce(
    const loom__collective_reduce_t* request, loom_tensor_t* output);

// Runs `request` as an all-gather on the current backend.
loom_status_t loom__collective_all_gather(
    const loom__collective_reduce_t* request, loom_tensor_t* output);

// Runs `request` as a reduce-scatter, or an all-to-all, on the current
// backend.
loom_status_t loom__collective_reduce_scatter(
    const loom__collective_reduce_t* request, loom_tensor_t* output);
loom_status_t loom__collective_all_to_all(
    const loom__collective_reduce_t* request, loom_tensor_t* output);

// Runs `request` as a broadcast on the current backend.
loom_status_t loom__collective_broadcast(
    const loom__collective_reduce_t* request, bool is_sender,
    loom_tensor_t* data);

// "Add", "Div"... for messages.
const char* loom__collective_merge_name(loom__collective_merge_t merge);
const char* loom__collective_final_name(loom__collective_final_t final_op);

#endif  // LOOM_COLLECTIVE_COLLECTIVE_H_
