// Dtypes: values equal TF_DataType, sizes, names, parsing and classes.

#include <complex.h>

#include "loom/dtype.h"
#include "tensorflow/c/tf_datatype.h"
#include "test_support.h"

typedef struct dtype_case_t {
  loom_dtype_t dtype;
  TF_DataType tf;
  size_t size;  // from the C type where there is one
  const char* name;
  const char* short_name;
} dtype_case_t;

static const dtype_case_t kCases[] = {
    {LOOM_DTYPE_FLOAT, TF_FLOAT, sizeof(float), "float", "f32"},
    {LOOM_DTYPE_DOUBLE, TF_DOUBLE, sizeof(double), "double", "f64"},
    {LOOM_DTYPE_INT32, TF_INT32, sizeof(int32_t), "int32", "i32"},
    {LOOM_DTYPE_UINT8, TF_UINT8, sizeof(uint8_t), "uint8", "ui8"},
    {LOOM_DTYPE_INT16, TF_INT16, sizeof(int16_t), "int16", "i16"},
    {LOOM_DTYPE_INT8, TF_INT8, sizeof(int8_t), "int8", "i8"},
    {LOOM_DTYPE_STRING, TF_STRING, 0, "string", "string"},
    {LOOM_DTYPE_COMPLEX64, TF_COMPLEX64, sizeof(float _Complex), "complex64",
     "complex64"},
    {LOOM_DTYPE_INT64, TF_INT64, sizeof(int64_t), "int64", "i64"},
    {LOOM_DTYPE_BOOL, TF_BOOL, sizeof(bool), "bool", "i1"},
    {LOOM_DTYPE_QINT8, TF_QINT8, sizeof(int8_t), "qint8", "qi8"},
    {LOOM_DTYPE_QUINT8, TF_QUINT8, sizeof(uint8_t), "quint8", "qui8"},
    {LOOM_DTYPE_QINT32, TF_QINT32, sizeof(int32_t), "qint32", "qi32"},
    {LOOM_DTYPE_BFLOAT16, TF_BFLOAT16, sizeof(uint16_t), "bfloat16", "bf16"},
    {LOOM_DTYPE_QINT16, TF_QINT16, sizeof(int16_t), "qint16", "qi16"},
    {LOOM_DTYPE_QUINT16, TF_QUINT16, sizeof(uint16_t), "quint16", "qui16"},
    {LOOM_DTYPE_UINT16, TF_UINT16, sizeof(uint16_t), "uint16", "ui16"},
    {LOOM_DTYPE_COMPLEX128, TF_COMPLEX128, sizeof(double _Complex),
     "complex128", "complex128"},
    {LOOM_DTYPE_HALF, TF_HALF, sizeof(uint16_t), "half", "f16"},
    {LOOM_DTYPE_RESOURCE, TF_RESOURCE, 0, "resource", "resource"},
    {LOOM_DTYPE_VARIANT, TF_VARIANT, 0, "variant", "variant"},
    {LOOM_DTYPE_UINT32, TF_UINT32, sizeof(uint32_t), "uint32", "ui32"},
    {LOOM_DTYPE_UINT64, TF_UINT64, sizeof(uint64_t), "uint64", "ui64"},
    {LOOM_DTYPE_FLOAT8_E5M2, TF_FLOAT8_E5M2, sizeof(uint8_t), "float8_e5m2",
     "f8E5M2"},
    {LOOM_DTYPE_FLOAT8_E4M3FN, TF_FLOAT8_E4M3FN, sizeof(uint8_t),
     "float8_e4m3fn", "f8E4M3FN"},
    {LOOM_DTYPE_FLOAT8_E4M3FNUZ, TF_FLOAT8_E4M3FNUZ, sizeof(uint8_t),
     "float8_e4m3fnuz", "f8E4M3FNUZ"},
    {LOOM_DTYPE_FLOAT8_E4M3B11FNUZ, TF_FLOAT8_E4M3B11FNUZ, sizeof(uint8_t),
     "float8_e4m3b11fnuz", "f8E4M3B11FNUZ"},
    {LOOM_DTYPE_FLOAT8_E5M2FNUZ, TF_FLOAT8_E5M2FNUZ, sizeof(uint8_t),
     "float8_e5m2fnuz", "f8E5M2FNUZ"},
    {LOOM_DTYPE_INT4, TF_INT4, sizeof(int8_t), "int4", "i4"},
    {LOOM_DTYPE_UINT4, TF_UINT4, sizeof(uint8_t), "uint4", "ui4"},
    {LOOM_DTYPE_INT2, TF_INT2, sizeof(int8_t), "int2", "i2"},
    {LOOM_DTYPE_UINT2, TF_UINT2, sizeof(uint8_t), "uint2", "ui2"},
};

#define NUM_CASES (sizeof(kCases) / sizeof(kCases[0]))

static void every_value_equals_tensorflow_and_has_its_size(void** state) {
  (void)state;
  assert_int_equal(NUM_CASES, LOOM_DTYPE_COUNT - 1);
  for (size_t i = 0; i < NUM_CASES; ++i) {
    const dtype_case_t* c = &kCases[i];
    assert_int_equal((int)c->dtype, (int)c->tf);
    assert_true(loom_dtype_is_valid(c->dtype));
    assert_int_equal(loom_dtype_size(c->dtype), c->size);
    assert_int_equal(TF_DataTypeSize(c->tf), c->size);
  }
  assert_int_equal(TF_COMPLEX, TF_COMPLEX64);
}

static void invalid_values_have_no_size_and_name_invalid(void** state) {
  (void)state;
  const int kInvalid[] = {0, -1, LOOM_DTYPE_COUNT, 1000};
  for (size_t i = 0; i < sizeof(kInvalid) / sizeof(kInvalid[0]); ++i) {
    loom_dtype_t dtype = (loom_dtype_t)kInvalid[i];
    assert_false(loom_dtype_is_valid(dtype));
    assert_int_equal(loom_dtype_size(dtype), 0);
    assert_int_equal(TF_DataTypeSize((TF_DataType)kInvalid[i]), 0);
    assert_string_equal(loom_dtype_name(dtype), "invalid");
    assert_string_equal(loom_dtype_short_name(dtype), "invalid");
    assert_false(loom_dtype_is_floating(dtype));
  }
}

static void names_round_trip_through_parsing(void** state) {
  (void)state;
  for (size_t i = 0; i < NUM_CASES; ++i) {
    const dtype_case_t* c = &kCases[i];
    assert_string_equal(loom_dtype_name(c->dtype), c->name);
    assert_string_equal(loom_dtype_short_name(c->dtype), c->short_name);
    loom_dtype_t parsed = LOOM_DTYPE_INVALID;
    LOOM_ASSERT_OK(loom_dtype_from_name(c->name, &parsed));
    assert_int_equal(parsed, c->dtype);
    parsed = LOOM_DTYPE_INVALID;
    LOOM_ASSERT_OK(loom_dtype_from_name(c->short_name, &parsed));
    assert_int_equal(parsed, c->dtype);
  }
}

static void tensorflow_aliases_parse(void** state) {
  (void)state;
  loom_dtype_t dtype;
  LOOM_ASSERT_OK(loom_dtype_from_name("float32", &dtype));
  assert_int_equal(dtype, LOOM_DTYPE_FLOAT);
  LOOM_ASSERT_OK(loom_dtype_from_name("float64", &dtype));
  assert_int_equal(dtype, LOOM_DTYPE_DOUBLE);
  LOOM_ASSERT_OK(loom_dtype_from_name("float16", &dtype));
  assert_int_equal(dtype, LOOM_DTYPE_HALF);
}

static void unknown_names_are_not_found(void** state) {
  (void)state;
  loom_dtype_t dtype = LOOM_DTYPE_FLOAT;
  LOOM_ASSERT_STATUS(loom_dtype_from_name("float33", &dtype),
                     LOOM_STATUS_NOT_FOUND, "unknown dtype 'float33'");
  assert_int_equal(dtype, LOOM_DTYPE_INVALID);
  LOOM_ASSERT_STATUS(loom_dtype_from_name("", &dtype), LOOM_STATUS_NOT_FOUND,
                     "unknown dtype ''");
  LOOM_ASSERT_STATUS(loom_dtype_from_name(NULL, &dtype),
                     LOOM_STATUS_INVALID_ARGUMENT, "name is NULL");
  LOOM_ASSERT_STATUS(loom_dtype_from_name("float", NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_dtype is NULL");
}

static void classes_match_tensorflow_groups(void** state) {
  (void)state;
  assert_true(loom_dtype_is_floating(LOOM_DTYPE_FLOAT));
  assert_true(loom_dtype_is_floating(LOOM_DTYPE_HALF));
  assert_true(loom_dtype_is_floating(LOOM_DTYPE_BFLOAT16));
  assert_true(loom_dtype_is_floating(LOOM_DTYPE_FLOAT8_E4M3FN));
  assert_false(loom_dtype_is_floating(LOOM_DTYPE_INT32));
  assert_true(loom_dtype_is_integer(LOOM_DTYPE_INT64));
  assert_true(loom_dtype_is_integer(LOOM_DTYPE_UINT4));
  assert_false(loom_dtype_is_integer(LOOM_DTYPE_BOOL));
  assert_false(loom_dtype_is_integer(LOOM_DTYPE_QINT8));
  assert_true(loom_dtype_is_unsigned(LOOM_DTYPE_UINT16));
  assert_true(loom_dtype_is_unsigned(LOOM_DTYPE_QUINT8));
  assert_false(loom_dtype_is_unsigned(LOOM_DTYPE_INT8));
  assert_true(loom_dtype_is_complex(LOOM_DTYPE_COMPLEX128));
  assert_false(loom_dtype_is_complex(LOOM_DTYPE_DOUBLE));
  assert_true(loom_dtype_is_quantized(LOOM_DTYPE_QINT16));
  assert_false(loom_dtype_is_quantized(LOOM_DTYPE_INT16));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_value_equals_tensorflow_and_has_its_size),
      cmocka_unit_test(invalid_values_have_no_size_and_name_invalid),
      cmocka_unit_test(names_round_trip_through_parsing),
      cmocka_unit_test(tensorflow_aliases_parse),
      cmocka_unit_test(unknown_names_are_not_found),
      cmocka_unit_test(classes_match_tensorflow_groups),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
