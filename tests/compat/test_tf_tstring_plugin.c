// A plugin's inline TF_TString meets Loom's through a real kernel: the
// fixture plugin (examples/plugins/fixtures/tstring_plugin.c) reads string
// tensors Loom made and fills its outputs with strings its own inline code
// made (malloc), which Loom then reads and frees with the output tensors.
//
// Linked with the shared libloom, as the plugin is, so both see one
// registry.

#include "eager_test_util.h"
#include "tensorflow/c/c_api.h"
#include "tensorflow/c/tf_tstring.h"

static const char kSuffix[] = " and a suffix the plugin's inline code adds";

enum { kCount = 6 };
static const char* const kInputs[kCount] = {
    "",
    "short",
    "exactly twenty-two ch!",
    "a string of some forty bytes, on the heap",
    ("a string long enough that the plugin's appended suffix makes it grow "
     "its block through realloc, which is the C heap's, not Loom's"),
    "a view",  // made a VIEW below
};

static TF_Library* g_plugin;

static int setup(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  g_plugin = TF_LoadLibrary(LOOM_FIXTURE_TSTRING_PATH, status);
  if (TF_GetCode(status) != TF_OK) fail_msg("%s", TF_Message(status));
  TF_DeleteStatus(status);
  return 0;
}

static int teardown(void** state) {
  (void)state;
  TF_DeleteLibraryHandle(g_plugin);
  return 0;
}

static TFE_TensorHandle* run_suffix(TFE_Context* ctx, TFE_TensorHandle* input,
                                    const char* suffix) {
  TF_Status* status = TF_NewStatus();
  TFE_Op* op = TFE_NewOp(ctx, "TStringFixtureSuffix", status);
  ASSERT_TF_OK(status);
  TFE_OpAddInput(op, input, status);
  ASSERT_TF_OK(status);
  TFE_OpSetAttrString(op, "suffix", suffix, strlen(suffix));
  TFE_TensorHandle* result = NULL;
  int num_results = 1;
  TFE_Execute(op, &result, &num_results, status);
  ASSERT_TF_OK(status);
  TFE_DeleteOp(op);
  TF_DeleteStatus(status);
  return result;
}

// The plugin's output strings are what TensorFlow's inline code makes of
// input + suffix: SMALL up to 22 bytes, else LARGE with a capacity of
// 16-byte blocks less one at least as large as the string.
static void check_outputs(TF_Tensor* output, const char* suffix) {
  assert_int_equal(TF_TensorType(output), TF_STRING);
  assert_int_equal(TF_TensorElementCount(output), kCount);
  const TF_TString* strings = TF_TensorData(output);
  for (int i = 0; i < kCount; ++i) {
    char expected[512];
    int size = snprintf(expected, sizeof(expected), "%s%s", kInputs[i], suffix);
    assert_int_equal(TF_StringGetSize(&strings[i]), (size_t)size);
    assert_memory_equal(TF_StringGetDataPointer(&strings[i]), expected,
                        (size_t)size);
    if (size <= TF_TString_SmallCapacity) {
      assert_int_equal(TF_StringGetType(&strings[i]), TF_TSTR_SMALL);
    } else {
      assert_int_equal(TF_StringGetType(&strings[i]), TF_TSTR_LARGE);
      size_t capacity = TF_StringGetCapacity(&strings[i]);
      assert_true(capacity >= (size_t)size);
      assert_int_equal((capacity + 1) % 16, 0);
    }
  }
}

static TFE_TensorHandle* loom_made_strings(void) {
  const int64_t dims[1] = {kCount};
  TF_Tensor* tensor =
      TF_AllocateTensor(TF_STRING, dims, 1, kCount * sizeof(TF_TString));
  assert_non_null(tensor);
  TF_TString* strings = TF_TensorData(tensor);
  for (int i = 0; i < kCount - 1; ++i) {
    TF_StringInit(&strings[i]);
    TF_StringCopy(&strings[i], kInputs[i], strlen(kInputs[i]));
  }
  TF_StringInit(&strings[kCount - 1]);
  TF_StringAssignView(&strings[kCount - 1], kInputs[kCount - 1],
                      strlen(kInputs[kCount - 1]));
  TF_Status* status = TF_NewStatus();
  TFE_TensorHandle* handle = TFE_NewTensorHandle(tensor, status);
  ASSERT_TF_OK(status);
  TF_DeleteStatus(status);
  TF_DeleteTensor(tensor);
  return handle;
}

static void plugin_kernel_strings_are_read_and_freed_by_loom(void** state) {
  (void)state;
  TFE_Context* ctx = new_context(false);
  TFE_TensorHandle* input = loom_made_strings();
  TFE_TensorHandle* result = run_suffix(ctx, input, kSuffix);
  TF_Status* status = TF_NewStatus();
  TF_Tensor* output = TFE_TensorHandleResolve(result, status);
  ASSERT_TF_OK(status);
  check_outputs(output, kSuffix);
  // Loom grows the plugin's blocks too (realloc of its malloc).
  TF_TString* strings = TF_TensorData(output);
  TF_TString_AppendN(&strings[4], "!", 1);
  TF_DeleteTensor(output);
  TFE_DeleteTensorHandle(result);  // frees the plugin's blocks
  TFE_DeleteTensorHandle(input);
  TF_DeleteStatus(status);
  TFE_DeleteContext(ctx);
}

static void plugin_strings_feed_another_plugin_run_and_a_loom_kernel(
    void** state) {
  (void)state;
  TFE_Context* ctx = new_context(false);
  TFE_TensorHandle* input = loom_made_strings();
  TFE_TensorHandle* once = run_suffix(ctx, input, "");
  // The plugin's own strings as its input, then Loom's Tile copies them.
  TFE_TensorHandle* twice = run_suffix(ctx, once, kSuffix);
  TF_Status* status = TF_NewStatus();
  TFE_TensorHandle* multiples =
      int_handle(ctx, (const int64_t[]){1}, 1, (const int32_t[]){2});
  TFE_Op* tile = TFE_NewOp(ctx, "Tile", status);
  ASSERT_TF_OK(status);
  TFE_OpAddInput(tile, twice, status);
  ASSERT_TF_OK(status);
  TFE_OpAddInput(tile, multiples, status);
  ASSERT_TF_OK(status);
  TFE_TensorHandle* tiled = NULL;
  int num_results = 1;
  TFE_Execute(tile, &tiled, &num_results, status);
  ASSERT_TF_OK(status);
  TFE_DeleteOp(tile);
  TF_Tensor* output = TFE_TensorHandleResolve(tiled, status);
  ASSERT_TF_OK(status);
  assert_int_equal(TF_TensorElementCount(output), 2 * kCount);
  const TF_TString* strings = TF_TensorData(output);
  for (int i = 0; i < kCount; ++i) {
    char expected[512];
    int size =
        snprintf(expected, sizeof(expected), "%s%s", kInputs[i], kSuffix);
    for (int copy = 0; copy < 2; ++copy) {
      const TF_TString* s = &strings[copy * kCount + i];
      assert_int_equal(TF_StringGetSize(s), (size_t)size);
      assert_memory_equal(TF_StringGetDataPointer(s), expected, (size_t)size);
    }
  }
  TF_DeleteTensor(output);
  TFE_DeleteTensorHandle(tiled);
  TFE_DeleteTensorHandle(multiples);
  TFE_DeleteTensorHandle(twice);
  TFE_DeleteTensorHandle(once);
  TFE_DeleteTensorHandle(input);
  TF_DeleteStatus(status);
  TFE_DeleteContext(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plugin_kernel_strings_are_read_and_freed_by_loom),
      cmocka_unit_test(
          plugin_strings_feed_another_plugin_run_and_a_loom_kernel),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
