// The dtype spelling table: canonical names, synonyms, and what programs
// cannot spell.

#include <string.h>

#include "function/program_dtype.h"
#include "test_support.h"

static loom_dtype_t from(const char* text) {
  return loom__program_dtype_from_spelling(text, strlen(text));
}

static void canonical_spellings_round_trip(void** state) {
  (void)state;
  size_t count = 0;
  const program_dtype_spelling_t* spellings =
      loom__program_dtype_spellings(&count);
  assert_true(count > 0);
  for (size_t i = 0; i < count; ++i) {
    assert_int_equal(from(spellings[i].name), spellings[i].dtype);
    const char* canonical = loom__program_dtype_spelling(spellings[i].dtype);
    assert_non_null(canonical);
    assert_int_equal(from(canonical), spellings[i].dtype);
    if (spellings[i].canonical) {
      assert_string_equal(canonical, spellings[i].name);
    }
  }
}

static void builtin_spellings_name_their_dtypes(void** state) {
  (void)state;
  assert_int_equal(from("i1"), LOOM_DTYPE_BOOL);
  assert_int_equal(from("i8"), LOOM_DTYPE_INT8);
  assert_int_equal(from("i16"), LOOM_DTYPE_INT16);
  assert_int_equal(from("i32"), LOOM_DTYPE_INT32);
  assert_int_equal(from("i64"), LOOM_DTYPE_INT64);
  assert_int_equal(from("ui8"), LOOM_DTYPE_UINT8);
  assert_int_equal(from("ui16"), LOOM_DTYPE_UINT16);
  assert_int_equal(from("ui32"), LOOM_DTYPE_UINT32);
  assert_int_equal(from("ui64"), LOOM_DTYPE_UINT64);
  assert_int_equal(from("f16"), LOOM_DTYPE_HALF);
  assert_int_equal(from("bf16"), LOOM_DTYPE_BFLOAT16);
  assert_int_equal(from("f32"), LOOM_DTYPE_FLOAT);
  assert_int_equal(from("f64"), LOOM_DTYPE_DOUBLE);
  assert_int_equal(from("complex<f32>"), LOOM_DTYPE_COMPLEX64);
  assert_int_equal(from("complex<f64>"), LOOM_DTYPE_COMPLEX128);
}

static void signed_and_dialect_synonyms_are_accepted(void** state) {
  (void)state;
  assert_int_equal(from("si8"), LOOM_DTYPE_INT8);
  assert_int_equal(from("si16"), LOOM_DTYPE_INT16);
  assert_int_equal(from("si32"), LOOM_DTYPE_INT32);
  assert_int_equal(from("si64"), LOOM_DTYPE_INT64);
  assert_int_equal(from("!corert.string"), LOOM_DTYPE_STRING);
  assert_int_equal(from("!tf.string"), LOOM_DTYPE_STRING);
  assert_int_equal(from("!tfrt.string"), LOOM_DTYPE_STRING);
  assert_int_equal(from("!tf.qint8"), LOOM_DTYPE_QINT8);
  assert_string_equal(loom__program_dtype_spelling(LOOM_DTYPE_INT32), "i32");
  assert_string_equal(loom__program_dtype_spelling(LOOM_DTYPE_STRING),
                      "!corert.string");
}

static void half_is_spelled_f16(void** state) {
  (void)state;
  assert_string_equal(loom__program_dtype_spelling(LOOM_DTYPE_HALF), "f16");
  assert_string_equal(loom__program_dtype_spelling(LOOM_DTYPE_BFLOAT16),
                      "bf16");
}

static void unknown_spellings_and_dtypes_have_none(void** state) {
  (void)state;
  assert_int_equal(from("i7"), LOOM_DTYPE_INVALID);
  assert_int_equal(from("f8"), LOOM_DTYPE_INVALID);
  assert_int_equal(from("complex"), LOOM_DTYPE_INVALID);
  assert_int_equal(from("i3"), LOOM_DTYPE_INVALID);
  assert_int_equal(loom__program_dtype_from_spelling("i32", 2),
                   LOOM_DTYPE_INVALID);
  assert_null(loom__program_dtype_spelling(LOOM_DTYPE_RESOURCE));
  assert_null(loom__program_dtype_spelling(LOOM_DTYPE_INVALID));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(canonical_spellings_round_trip),
      cmocka_unit_test(builtin_spellings_name_their_dtypes),
      cmocka_unit_test(signed_and_dialect_synonyms_are_accepted),
      cmocka_unit_test(half_is_spelled_f16),
      cmocka_unit_test(unknown_spellings_and_dtypes_have_none),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
