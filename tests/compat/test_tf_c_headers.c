// TensorFlow's own pure-C check of its headers (tensorflow/c/c_test.c), on
// Loom: every non-eager header in one C translation unit, and the calls
// that check makes (TF_InitMain, a temporary file, a kernel builder for a
// device type given by string) working together.

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/c_api_experimental.h"
#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/env.h"
#include "tensorflow/c/experimental/next_pluggable_device/c_api.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/logging.h"
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_attrtype.h"
#include "tensorflow/c/tf_buffer.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_file_statistics.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"
#include "test_support.h"

// kernels.h leaves the name to the program, as TensorFlow's does.
#ifdef DEVICE_CPU
#error "tensorflow/c/kernels.h must not define DEVICE_CPU"
#endif
#define DEVICE_CPU "a program's own DEVICE_CPU"

static void compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Tensor* input = NULL;
  TF_Status* s = TF_NewStatus();
  TF_GetInput(ctx, 0, &input, s);
  TF_DeleteTensor(input);
  TF_DeleteStatus(s);
}

static void tensorflow_c_test_flow_works(void** state) {
  (void)state;
  char program[] = "test_tf_c_headers";
  char* arguments[] = {program, NULL};
  char** argv = arguments;
  int argc = 1;
  TF_InitMain(argv[0], &argc, &argv);

  TF_StringStream* s = TF_GetLocalTempDirectories();
  const char* path = NULL;
  assert_true(TF_StringStreamNext(s, &path));
  char full_path[600];
  snprintf(full_path, sizeof(full_path), "%s/loom-c-test-%d.txt", path,
           (int)getpid());

  TF_WritableFileHandle* h = NULL;
  TF_Status* status = TF_NewStatus();
  TF_NewWritableFile(full_path, &h, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TF_CloseWritableFile(h, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TF_FileStatistics stats = {.length = -1};
  TF_FileStat(full_path, &stats, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_int_equal(stats.length, 0);
  TF_DeleteFile(full_path, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TF_StringStreamDone(s);

  // A device type given by string; registering for an unknown op fails
  // (in TensorFlow it is deferred), and the builder is consumed either way.
  TF_KernelBuilder* b =
      TF_NewKernelBuilder("SomeOp", "SomeDevice", NULL, &compute, NULL);
  TF_RegisterKernelBuilder("someKernel", b, status);
  TF_DeleteStatus(status);

  TF_AttrType kind = TF_ATTR_FUNC;
  assert_int_equal(kind, 8);
  assert_string_equal(DEVICE_CPU, "a program's own DEVICE_CPU");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tensorflow_c_test_flow_works),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
