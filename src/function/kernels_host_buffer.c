// TFRT's host buffer kernels (tfrt_dht): the !ht.host_buffer values under
// dense host tensors, made, sliced and printed, and tensors made over them
// (tfrt_dht.make_tensor, tfrt_dht_sync.make_tensor).

#include <string.h>

#include "function/kernels_dht.h"
#include "function/program_dtype.h"
#include "tensor/checked_size.h"

typedef struct make_tensor_kernel_t {
  loom_dtype_t dtype;
  bool sync;  // tfrt_dht_sync's: no chains
} make_tensor_kernel_t;

// make_tensor's user data packs its dtype and whether it is the sync one.
static void* pack(loom_dtype_t dtype, bool sync) {
  return (void*)(((uintptr_t)sync << 8) | (uintptr_t)dtype);
}

static make_tensor_kernel_t unpack(const void* user_data) {
  uintptr_t bits = (uintptr_t)user_data;
  return (make_tensor_kernel_t){.dtype = (loom_dtype_t)(bits & 0xff),
                                .sync = ((bits >> 8) & 1) != 0};
}

static loom_status_t set_buffer(loom_async_value_t* result,
                                loom_buffer_t* buffer, size_t offset,
                                size_t size) {
  loom_program_value_t payload;
  memset(&payload, 0, sizeof(payload));
  payload.kind = LOOM_PROGRAM_VALUE_HOST_BUFFER;
  payload.u.host_buffer.buffer = buffer;
  payload.u.host_buffer.offset = offset;
  payload.u.host_buffer.size = size;
  return loom_program_value_set(result, &payload);  // retains
}

// tfrt_dht.get_buffer %t, %ch -> (!ht.host_buffer, chain): the bytes the
// tensor's elements are in.
static void get_buffer_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  loom_tensor_t* tensor =
      loom__dht_tensor_argument(frame, 0, LOOM_DTYPE_INVALID);
  if (!tensor) return;
  loom_buffer_t* buffer = loom_tensor_buffer(tensor);
  size_t offset = (size_t)((const char*)loom_tensor_data(tensor) -
                           (const char*)loom_buffer_data(buffer));
  loom_status_t status = set_buffer(loom_program_frame_result(frame, 0), buffer,
                                    offset, loom_tensor_byte_size(tensor));
  if (!status) status = loom__dht_set_chain(frame, 1);
  loom__kernel_set_or_fail(frame, status);
}

static bool int64_argument(loom_program_frame_t* frame, int32_t index,
                           const char* name, int64_t minimum, int64_t* out) {
  if (!loom__kernel_check(frame, index, LOOM_PROGRAM_VALUE_I64)) return false;
  *out = loom_program_frame_value(frame, index)->u.i64;
  if (*out >= minimum) return true;
  loom_program_frame_fail(
      frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "'%s': %s must be at least %lld, got %lld",
                              loom_program_frame_op_name(frame), name,
                              (long long)minimum, (long long)*out));
  return false;
}

// tfrt_dht.allocate_buffer %size, %alignment (i64) -> !ht.host_buffer
static void allocate_buffer_kernel(loom_program_frame_t* frame,
                                   void* user_data) {
  (void)user_data;
  int64_t size = 0;
  int64_t alignment = 0;
  if (!int64_argument(frame, 0, "the size", 0, &size) ||
      !int64_argument(frame, 1, "the alignment", 1, &alignment)) {
    return;
  }
  if ((alignment & (alignment - 1)) != 0 || alignment > 4096) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s': the alignment must be a power of two "
                                "of at most 4096, got %lld",
                                loom_program_frame_op_name(frame),
                                (long long)alignment));
    return;
  }
  loom_buffer_t* buffer = NULL;
  loom_status_t status = loom_buffer_allocate(
      frame->executor->allocator, (size_t)size, (size_t)alignment, &buffer);
  if (!status) {
    memset(loom_buffer_data(buffer), 0, (size_t)size);
    status = set_buffer(loom_program_frame_result(frame, 0), buffer, 0,
                        (size_t)size);
  }
  if (buffer) loom_buffer_release(buffer);
  loom__kernel_set_or_fail(frame, status);
}

// tfrt_dht.get_buffer_slice %buffer, %offset, %size -> !ht.host_buffer: the
// bytes [offset, offset + size) of the buffer, shared with it.
static void get_buffer_slice_kernel(loom_program_frame_t* frame,
                                    void* user_data) {
  (void)user_data;
  int64_t offset = 0;
  int64_t size = 0;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_HOST_BUFFER) ||
      !int64_argument(frame, 1, "the offset", 0, &offset) ||
      !int64_argument(frame, 2, "the size", 0, &size)) {
    return;
  }
  const loom_program_value_t* parent = loom_program_frame_value(frame, 0);
  int64_t end = 0;
  if (!loom__size_add(offset, size, &end) ||
      end > (int64_t)parent->u.host_buffer.size) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s': the slice [%lld, %lld + %lld) is out "
                                "of the buffer's %zu bytes",
                                loom_program_frame_op_name(frame),
                                (long long)offset, (long long)offset,
                                (long long)size, parent->u.host_buffer.size));
    return;
  }
  loom__kernel_set_or_fail(
      frame,
      set_buffer(loom_program_frame_result(frame, 0),
                 parent->u.host_buffer.buffer,
                 parent->u.host_buffer.offset + (size_t)offset, (size_t)size));
}

// tfrt_dht.print_buffer %buffer, %ch -> chain: `HostBuffer<pointer=0x...,
// size=N>`.
static void print_buffer_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_HOST_BUFFER)) return;
  const loom_program_value_t* v = loom_program_frame_value(frame, 0);
  FILE* out = loom_program_frame_output(frame);
  fprintf(out, "HostBuffer<pointer=%p, size=%zu>\n",
          (void*)((char*)loom_buffer_data(v->u.host_buffer.buffer) +
                  v->u.host_buffer.offset),
          v->u.host_buffer.size);
  fflush(out);
  loom__kernel_set_or_fail(frame, loom__dht_set_chain(frame, 0));
}

// tfrt_dht.make_tensor.<dtype> %buffer, %shape, %ch -> (!t.tensor, chain):
// a tensor over the buffer's bytes, which must be exactly its elements'.
// tfrt_dht_sync.make_tensor.<dtype> %buffer, %shape -> !t.tensor (user
// data's `sync`) is the same without chains.
static void make_tensor_kernel(loom_program_frame_t* frame, void* user_data) {
  const make_tensor_kernel_t kernel = unpack(user_data);
  const make_tensor_kernel_t* k = &kernel;
  bool sync = k->sync;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_HOST_BUFFER) ||
      !loom__kernel_check(frame, 1, LOOM_PROGRAM_VALUE_SHAPE)) {
    return;
  }
  const loom_program_value_t* buffer = loom_program_frame_value(frame, 0);
  const loom_shape_t* shape = &loom_program_frame_value(frame, 1)->u.shape;
  int64_t count = 0;
  size_t bytes = 0;
  bool fits = loom_shape_is_fully_defined(shape) &&
              loom__size_product(shape->dims, shape->rank, &count) &&
              loom__size_bytes(count, loom_dtype_size(k->dtype), &bytes);
  if (!fits || bytes != buffer->u.host_buffer.size) {
    char text[256];
    loom_shape_format(shape, text, sizeof(text));
    // TFRT's message.
    loom_program_frame_fail(
        frame,
        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                         "'%s': %s failed: buffer_size "
                         "(%zu) is not equal to the number of elements "
                         "in shape (%s) times element size (%zu)",
                         loom_program_frame_op_name(frame),
                         sync ? "tfrt_dht_sync.make_tensor" : "dht.make_tensor",
                         buffer->u.host_buffer.size, text,
                         loom_dtype_size(k->dtype)));
    return;
  }
  loom_tensor_t* tensor = NULL;
  loom_status_t status = loom_tensor_create_dense_in_buffer(
      frame->executor->allocator, k->dtype, shape, buffer->u.host_buffer.buffer,
      buffer->u.host_buffer.offset, &tensor);
  if (!status)
    status = loom__dht_set_tensor(loom_program_frame_result(frame, 0), tensor);
  loom_tensor_release(tensor);
  if (!status && !sync) status = loom__dht_set_chain(frame, 1);
  loom__kernel_set_or_fail(frame, status);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

loom_status_t loom__program_register_host_buffer_kernels(
    loom_program_executor_t* executor) {
  char name[96];
  for (int d = 0; d < LOOM__DHT_NUM_DTYPES; ++d) {
    const char* t = loom__dht_dtypes[d].name;
    loom_dtype_t dtype = loom__dht_dtypes[d].dtype;
    snprintf(name, sizeof(name), "tfrt_dht.make_tensor.%s", t);
    LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, name, make_tensor_kernel,
                                          pack(dtype, false), 3, 2));
    snprintf(name, sizeof(name), "tfrt_dht_sync.make_tensor.%s", t);
    LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, name, make_tensor_kernel,
                                          pack(dtype, true), 2, 1));
  }
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "tfrt_dht.get_buffer",
                                        get_buffer_kernel, NULL, 2, 2));
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "tfrt_dht.allocate_buffer",
                                        allocate_buffer_kernel, NULL, 2, 1));
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "tfrt_dht.get_buffer_slice",
                                        get_buffer_slice_kernel, NULL, 3, 1));
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "tfrt_dht.print_buffer",
                                        print_buffer_kernel, NULL, 2, 1));
  LOOM_RETURN_IF_ERROR(loom__program_add_sync_kernel(
      executor, "tfrt_dht_sync.allocate_buffer", "tfrt_dht.allocate_buffer", -1,
      false, 2, 1));
  return loom__program_add_sync_kernel(
      executor, "tfrt_dht_sync.get_buffer_slice", "tfrt_dht.get_buffer_slice",
      -1, false, 3, 1);
}
