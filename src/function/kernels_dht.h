// What the kernels of TFRT's host tensors (kernels_dht.c, kernels_coo.c)
// and host buffers (kernels_host_buffer.c) share: the dtype suffixes of
// their names, tensor arguments and results.

#ifndef LOOM_FUNCTION_KERNELS_DHT_H_
#define LOOM_FUNCTION_KERNELS_DHT_H_

#include "function/kernels_common.h"
#include "loom/tensor.h"

// The dtype suffixes of the kernels' names, TFRT's and the program
// spellings (i32, ui8, f16, ...) and `bool`.
typedef struct loom__dht_dtype_t {
  const char* name;
  loom_dtype_t dtype;
} loom__dht_dtype_t;
enum { LOOM__DHT_NUM_DTYPES = 14 };
extern const loom__dht_dtype_t loom__dht_dtypes[LOOM__DHT_NUM_DTYPES];

// Sets `result` to a TENSOR value holding `tensor` (retained).
loom_status_t loom__dht_set_tensor(loom_async_value_t* result,
                                   loom_tensor_t* tensor);

// Argument `index`, a dense tensor of `dtype` (any dtype when
// LOOM_DTYPE_INVALID), borrowed; NULL after failing the kernel otherwise.
loom_tensor_t* loom__dht_tensor_argument(loom_program_frame_t* frame,
                                         int32_t index, loom_dtype_t dtype);

// Sets result `index` to a chain.
static inline loom_status_t loom__dht_set_chain(loom_program_frame_t* frame,
                                                int32_t index) {
  return loom_program_value_set_chain(loom_program_frame_result(frame, index));
}

// tfrt_dht's host buffer kernels and tfrt_dht(_sync).make_tensor
// (kernels_host_buffer.c); kernels_dht.c registers them.
loom_status_t loom__program_register_host_buffer_kernels(
    loom_program_executor_t* executor);

// TFRT's coo kernels (kernels_coo.c); kernels_dht.c registers them.
loom_status_t loom__program_register_coo_kernels(
    loom_program_executor_t* executor);

#endif  // LOOM_FUNCTION_KERNELS_DHT_H_
