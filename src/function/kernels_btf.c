// TFRT's binary tensor format (BTF) kernels:
//
//   btf.read_dense_tensor.<dtype>.<rank> (path: !tfrt.string, index: i32)
//       -> !t.tensor
//   btf.write_dense_tensors (path: !tfrt.string, chain, !t.tensor...)
//       -> chain   (Loom's: writes the tensors as one BTF file)
//
// A BTF file is little-endian: the number of tensors (u64), each tensor's
// byte offset from the start of the file (u64), then per tensor a header
// (rank: u64, dtype: u8, layout: u8 (0, row-major dense), 6 padding
// bytes), its dimensions (u64 each) and its elements, padded to 8 bytes.
// Paths are relative to the working directory.

#include <stdio.h>
#include <string.h>

#include "function/kernels_common.h"
#include "tensor/checked_size.h"

// BTF's dtype codes (persisted in files).
static const loom_dtype_t kBtfDtypes[] = {
    LOOM_DTYPE_INT8,  LOOM_DTYPE_INT16,  LOOM_DTYPE_INT32, LOOM_DTYPE_INT64,
    LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_UINT8,
};
enum { kNumBtfDtypes = sizeof(kBtfDtypes) / sizeof(kBtfDtypes[0]) };
static const char* const kBtfNames[] = {"i8",  "i16", "i32", "i64",
                                        "f32", "f64", "ui8"};

static int btf_code(loom_dtype_t dtype) {
  for (int i = 0; i < kNumBtfDtypes; ++i) {
    if (kBtfDtypes[i] == dtype) return i;
  }
  return -1;
}

static const char* string_argument(loom_program_frame_t* frame, int32_t index) {
  if (!loom__kernel_check(frame, index, LOOM_PROGRAM_VALUE_STRING)) {
    return NULL;
  }
  return loom_program_string_data(
      loom_program_frame_value(frame, index)->u.string, NULL);
}

// Reads `count` u64 values at the file's position.
static bool read_u64s(FILE* file, uint64_t* out, size_t count) {
  return fread(out, sizeof(uint64_t), count, file) == count;
}

static loom_status_t read_error(const char* op, const char* path, int32_t index,
                                const char* what) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "'%s': %s: tensor %d: %s", op, path, index, what);
}

static loom_status_t read_tensor(loom_program_frame_t* frame, FILE* file,
                                 const char* path, int32_t index,
                                 loom_dtype_t dtype, int32_t rank,
                                 loom_tensor_t** out) {
  const char* op = loom_program_frame_op_name(frame);
  if (fseek(file, 0, SEEK_END) != 0) {
    return read_error(op, path, index, "cannot seek");
  }
  long file_size = ftell(file);
  uint64_t count = 0;
  if (fseek(file, 0, SEEK_SET) != 0 || !read_u64s(file, &count, 1)) {
    return read_error(op, path, index, "cannot read the number of tensors");
  }
  if (index < 0 || (uint64_t)index >= count) {
    return loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                            "'%s': %s: tensor %d: the file holds %llu "
                            "tensors",
                            op, path, index, (unsigned long long)count);
  }
  uint64_t offset = 0;
  if (fseek(file, (long)(8 + 8 * (int64_t)index), SEEK_SET) != 0 ||
      !read_u64s(file, &offset, 1) || offset > (uint64_t)file_size ||
      fseek(file, (long)offset, SEEK_SET) != 0) {
    return read_error(op, path, index, "cannot read its offset");
  }
  uint64_t file_rank = 0;
  uint8_t type[8];
  if (!read_u64s(file, &file_rank, 1) || fread(type, 1, 8, file) != 8) {
    return read_error(op, path, index, "cannot read its header");
  }
  if (type[1] != 0) {
    return read_error(op, path, index, "its layout is not row-major dense (0)");
  }
  if (type[0] >= kNumBtfDtypes || kBtfDtypes[type[0]] != dtype ||
      file_rank != (uint64_t)rank) {
    char what[160];
    snprintf(what, sizeof(what),
             "it is a rank-%llu tensor of %s, expected rank %d of %s",
             (unsigned long long)file_rank,
             type[0] < kNumBtfDtypes ? kBtfNames[type[0]] : "an unknown dtype",
             rank, loom_dtype_name(dtype));
    return read_error(op, path, index, what);
  }
  uint64_t dims[LOOM_MAX_RANK];
  if (!read_u64s(file, dims, (size_t)rank)) {
    return read_error(op, path, index, "cannot read its dimensions");
  }
  int64_t signed_dims[LOOM_MAX_RANK];
  int64_t elements = 0;
  size_t bytes = 0;
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] > (uint64_t)INT64_MAX) {
      return read_error(op, path, index, "a dimension is out of range");
    }
    signed_dims[i] = (int64_t)dims[i];
  }
  if (!loom__size_product(signed_dims, rank, &elements) ||
      !loom__size_bytes(elements, loom_dtype_size(dtype), &bytes) ||
      bytes > (uint64_t)file_size) {
    return read_error(op, path, index, "its data is larger than the file");
  }
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, signed_dims, rank));
  LOOM_RETURN_IF_ERROR(
      loom_tensor_create_dense(frame->executor->allocator, dtype, &shape, out));
  if (bytes > 0 && fread(loom_tensor_data(*out), 1, bytes, file) != bytes) {
    loom_tensor_release(*out);
    *out = NULL;
    return read_error(op, path, index, "cannot read its data");
  }
  return loom_ok_status();
}

// user_data: dtype | rank << 8.
static void read_kernel(loom_program_frame_t* frame, void* user_data) {
  loom_dtype_t dtype = (loom_dtype_t)((uintptr_t)user_data & 0xff);
  int32_t rank = (int32_t)((uintptr_t)user_data >> 8);
  const char* path = string_argument(frame, 0);
  if (!path || !loom__kernel_check(frame, 1, LOOM_PROGRAM_VALUE_I32)) return;
  int32_t index = loom_program_frame_value(frame, 1)->u.i32;
  FILE* file = fopen(path, "rb");
  if (!file) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_NOT_FOUND, "'%s': cannot open '%s'",
                                loom_program_frame_op_name(frame), path));
    return;
  }
  loom_tensor_t* tensor = NULL;
  loom_status_t status =
      read_tensor(frame, file, path, index, dtype, rank, &tensor);
  fclose(file);
  if (!status) {
    loom_program_value_t payload;
    memset(&payload, 0, sizeof(payload));
    payload.kind = LOOM_PROGRAM_VALUE_TENSOR;
    payload.u.tensor = tensor;
    status =
        loom_program_value_set(loom_program_frame_result(frame, 0), &payload);
  }
  loom_tensor_release(tensor);
  loom__kernel_set_or_fail(frame, status);
}

static size_t padding(size_t n) {
  return (8 - n % 8) % 8;
}

// btf.write_dense_tensors %path, %ch, %t0, ... -> chain
static void write_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  const char* op = loom_program_frame_op_name(frame);
  const char* path = string_argument(frame, 0);
  if (!path) return;
  int32_t count = frame->num_arguments - 2;
  for (int32_t i = 0; i < count; ++i) {
    if (!loom__kernel_check(frame, 2 + i, LOOM_PROGRAM_VALUE_TENSOR)) return;
    const loom_tensor_t* t = loom_program_frame_value(frame, 2 + i)->u.tensor;
    if (loom_tensor_kind(t) != LOOM_TENSOR_DENSE ||
        btf_code(loom_tensor_dtype(t)) < 0) {
      loom_program_frame_fail(
          frame,
          loom_make_status(
              LOOM_STATUS_INVALID_ARGUMENT,
              "'%s': tensor %d is a %s tensor of %s; BTF "
              "holds dense tensors of i8, i16, i32, i64, "
              "f32, f64 and ui8",
              op, i,
              loom_tensor_kind(t) == LOOM_TENSOR_DENSE ? "dense" : "non-dense",
              loom_dtype_name(loom_tensor_dtype(t))));
      return;
    }
  }
  FILE* file = fopen(path, "wb");
  if (!file) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_PERMISSION_DENIED,
                                "'%s': cannot create '%s'", op, path));
    return;
  }
  uint64_t header = (uint64_t)count;
  bool ok = fwrite(&header, 8, 1, file) == 1;
  uint64_t offset = 8 + 8 * (uint64_t)count;
  for (int32_t i = 0; ok && i < count; ++i) {
    const loom_tensor_t* t = loom_program_frame_value(frame, 2 + i)->u.tensor;
    ok = fwrite(&offset, 8, 1, file) == 1;
    size_t bytes = loom_tensor_byte_size(t);
    offset +=
        16 + 8 * (uint64_t)loom_tensor_shape(t)->rank + bytes + padding(bytes);
  }
  static const uint8_t kZeros[8] = {0};
  for (int32_t i = 0; ok && i < count; ++i) {
    const loom_tensor_t* t = loom_program_frame_value(frame, 2 + i)->u.tensor;
    const loom_shape_t* shape = loom_tensor_shape(t);
    uint64_t rank = (uint64_t)shape->rank;
    uint8_t type[8] = {(uint8_t)btf_code(loom_tensor_dtype(t)), 0};
    ok = fwrite(&rank, 8, 1, file) == 1 && fwrite(type, 1, 8, file) == 8;
    for (int32_t d = 0; ok && d < shape->rank; ++d) {
      uint64_t dim = (uint64_t)shape->dims[d];
      ok = fwrite(&dim, 8, 1, file) == 1;
    }
    size_t bytes = loom_tensor_byte_size(t);
    ok = ok && fwrite(loom_tensor_data(t), 1, bytes, file) == bytes &&
         fwrite(kZeros, 1, padding(bytes), file) == padding(bytes);
  }
  ok = fclose(file) == 0 && ok;
  if (!ok) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_DATA_LOSS,
                                "'%s': cannot write '%s'", op, path));
    return;
  }
  loom__kernel_set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 0)));
}

loom_status_t loom__program_register_btf_kernels(
    loom_program_executor_t* executor) {
  char name[64];
  for (int d = 0; d < kNumBtfDtypes; ++d) {
    for (int rank = 0; rank <= 5; ++rank) {
      snprintf(name, sizeof(name), "btf.read_dense_tensor.%s.%d", kBtfNames[d],
               rank);
      void* user_data =
          (void*)(((uintptr_t)rank << 8) | (uintptr_t)kBtfDtypes[d]);
      LOOM_RETURN_IF_ERROR(
          loom__kernel_add(executor, name, read_kernel, user_data, 2, 1));
    }
  }
  return loom__kernel_add(executor, "btf.write_dense_tensors", write_kernel,
                          NULL, -1, 1);
}
