// TF_Status: codes, messages, payloads and errno mapping.

#include <errno.h>

#include "loom/status.h"
#include "tensorflow/c/tf_status.h"
#include "test_support.h"

static void new_status_is_ok_with_empty_message(void** state) {
  (void)state;
  TF_Status* s = TF_NewStatus();
  assert_non_null(s);
  assert_int_equal(TF_GetCode(s), TF_OK);
  assert_string_equal(TF_Message(s), "");
  TF_DeleteStatus(s);
  TF_DeleteStatus(NULL);
}

static void codes_match_loom_codes(void** state) {
  (void)state;
  const TF_Code kCodes[] = {
      TF_OK,
      TF_CANCELLED,
      TF_UNKNOWN,
      TF_INVALID_ARGUMENT,
      TF_DEADLINE_EXCEEDED,
      TF_NOT_FOUND,
      TF_ALREADY_EXISTS,
      TF_PERMISSION_DENIED,
      TF_RESOURCE_EXHAUSTED,
      TF_FAILED_PRECONDITION,
      TF_ABORTED,
      TF_OUT_OF_RANGE,
      TF_UNIMPLEMENTED,
      TF_INTERNAL,
      TF_UNAVAILABLE,
      TF_DATA_LOSS,
      TF_UNAUTHENTICATED,
  };
  assert_int_equal(sizeof(kCodes) / sizeof(kCodes[0]), LOOM_STATUS_CODE_COUNT);
  TF_Status* s = TF_NewStatus();
  for (int i = 0; i < LOOM_STATUS_CODE_COUNT; ++i) {
    assert_int_equal((int)kCodes[i], i);
    TF_SetStatus(s, kCodes[i], "some message");
    assert_int_equal(TF_GetCode(s), kCodes[i]);
    assert_string_equal(TF_Message(s), i == 0 ? "" : "some message");
  }
  TF_DeleteStatus(s);
}

static void clearing_an_error_empties_the_message(void** state) {
  (void)state;
  TF_Status* s = TF_NewStatus();
  TF_SetStatus(s, TF_INTERNAL, "broken");
  TF_SetStatus(s, TF_OK, "ignored");
  assert_int_equal(TF_GetCode(s), TF_OK);
  assert_string_equal(TF_Message(s), "");
  TF_DeleteStatus(s);
}

typedef struct visited_t {
  int count;
  char keys[4][16];
  char values[4][16];
} visited_t;

static void visit(const char* key, const char* value, void* capture) {
  visited_t* visited = capture;
  snprintf(visited->keys[visited->count], 16, "%s", key);
  snprintf(visited->values[visited->count], 16, "%s", value);
  visited->count++;
}

static void payloads_are_kept_in_order_and_overwritten(void** state) {
  (void)state;
  TF_Status* s = TF_NewStatus();
  TF_SetPayload(s, "ignored", "while ok");
  visited_t visited = {0};
  TF_ForEachPayload(s, visit, &visited);
  assert_int_equal(visited.count, 0);

  TF_SetStatus(s, TF_ABORTED, "retry");
  TF_SetPayload(s, "a", "1");
  TF_SetPayload(s, "b", "2");
  TF_SetPayload(s, "a", "3");
  TF_ForEachPayload(s, visit, &visited);
  assert_int_equal(visited.count, 2);
  assert_string_equal(visited.keys[0], "a");
  assert_string_equal(visited.values[0], "3");
  assert_string_equal(visited.keys[1], "b");
  assert_string_equal(visited.values[1], "2");

  TF_SetStatus(s, TF_ABORTED, "again");  // payloads go with the old status
  visited.count = 0;
  TF_ForEachPayload(s, visit, &visited);
  assert_int_equal(visited.count, 0);
  TF_DeleteStatus(s);
}

static void io_errors_map_like_tensorflow(void** state) {
  (void)state;
  const struct {
    int error;
    TF_Code code;
  } kCases[] = {
      {ENOENT, TF_NOT_FOUND},
      {EACCES, TF_PERMISSION_DENIED},
      {ENOMEM, TF_RESOURCE_EXHAUSTED},
      {EINVAL, TF_INVALID_ARGUMENT},
      {ECANCELED, TF_CANCELLED},
      {EEXIST, TF_ALREADY_EXISTS},
      {ETIMEDOUT, TF_DEADLINE_EXCEEDED},
      {EAGAIN, TF_UNAVAILABLE},
      {ENOSYS, TF_UNIMPLEMENTED},
      {ERANGE, TF_OUT_OF_RANGE},
      {EBUSY, TF_FAILED_PRECONDITION},
      {EDEADLK, TF_ABORTED},
      {12345, TF_UNKNOWN},
  };
  TF_Status* s = TF_NewStatus();
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    TF_SetStatusFromIOError(s, kCases[i].error, "opening model.bin");
    assert_int_equal(TF_GetCode(s), kCases[i].code);
    char expected[256];
    snprintf(expected, sizeof(expected), "opening model.bin; %s",
             strerror(kCases[i].error));
    assert_string_equal(TF_Message(s), expected);
  }
  TF_SetStatusFromIOError(s, 0, "fine");
  assert_int_equal(TF_GetCode(s), TF_OK);
  assert_string_equal(TF_Message(s), "");
  TF_DeleteStatus(s);
}

static void null_status_is_tolerated(void** state) {
  (void)state;
  TF_SetStatus(NULL, TF_INTERNAL, "x");
  TF_SetPayload(NULL, "k", "v");
  assert_int_equal(TF_GetCode(NULL), TF_OK);
  assert_string_equal(TF_Message(NULL), "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(new_status_is_ok_with_empty_message),
      cmocka_unit_test(codes_match_loom_codes),
      cmocka_unit_test(clearing_an_error_empties_the_message),
      cmocka_unit_test(payloads_are_kept_in_order_and_overwritten),
      cmocka_unit_test(io_errors_map_like_tensorflow),
      cmocka_unit_test(null_status_is_tolerated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
