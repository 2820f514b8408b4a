// DLPack's unversioned ABI (dmlc/dlpack include/dlpack/dlpack.h), written
// from the specification, and a producer for the DLPack tests: a 2x2
// float32 tensor [[1, 2], [3, 4]] in static memory whose deleter counts
// its calls.

#ifndef LOOM_TESTS_SUPPORT_DLPACK_PRODUCER_H_
#define LOOM_TESTS_SUPPORT_DLPACK_PRODUCER_H_

#include <stdint.h>
#include <string.h>

typedef struct {
  int32_t device_type;
  int32_t device_id;
} DLDevice;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6
};

typedef struct {
  DLManagedTensor managed;
  int64_t shape[2];
  int64_t strides[2];
  float data[4];
  int deleted;
} producer_t;

static inline void producer_deleter(DLManagedTensor* managed) {
  ((producer_t*)managed->manager_ctx)->deleted++;
}

static inline void producer_init(producer_t* p) {
  memset(p, 0, sizeof(*p));
  const float values[4] = {1, 2, 3, 4};
  memcpy(p->data, values, sizeof(values));
  p->shape[0] = 2;
  p->shape[1] = 2;
  p->strides[0] = 2;
  p->strides[1] = 1;
  p->managed.dl_tensor = (DLTensor){
      .data = p->data,
      .device = {.device_type = kDLCPU, .device_id = 0},
      .ndim = 2,
      .dtype = {.code = kDLFloat, .bits = 32, .lanes = 1},
      .shape = p->shape,
      .strides = p->strides,
      .byte_offset = 0,
  };
  p->managed.manager_ctx = p;
  p->managed.deleter = producer_deleter;
}

#endif  // LOOM_TESTS_SUPPORT_DLPACK_PRODUCER_H_
