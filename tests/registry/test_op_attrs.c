// Op attribute sets: inline storage and spilling, every value kind, typed
// reads, replacement, freezing, printing and allocation failures.

#include "loom/op_attrs.h"
#include "test_support.h"

static loom_fault_allocator_t* g_fault;

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(
      loom_fault_allocator_create(loom_allocator_system(), &g_fault));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  assert_int_equal(loom_fault_allocator_live_count(g_fault), 0);
  loom_fault_allocator_destroy(g_fault);
  return 0;
}

static loom_allocator_t allocator(void) {
  return loom_fault_allocator_allocator(g_fault);
}

static void six_small_attributes_stay_inline(void** state) {
  (void)state;
  loom_fault_allocator_fail_nth(g_fault, 0);
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  int64_t shape[1] = {5};
  LOOM_ASSERT_OK(loom_op_attrs_set_f32(&attrs, "value", 1.0f));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "shape", LOOM_ATTR_KIND_I64, shape, 1));
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(&attrs, "t", true));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_OK(loom_op_attrs_set_i32(&attrs, "axis", -1));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "pad", "SAME", 4));
  assert_int_equal(loom_op_attrs_count(&attrs), 6);
  assert_true(loom_op_attrs_is_inline(&attrs));
  assert_int_equal(loom_fault_allocator_allocation_count(g_fault), 0);
  loom_op_attrs_deinitialize(&attrs);
}

static void seventh_attribute_spills_and_keeps_values(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  char name[8];
  for (int i = 0; i < 7; ++i) {
    snprintf(name, sizeof(name), "a%d", i);
    LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, name, i * 100));
  }
  assert_false(loom_op_attrs_is_inline(&attrs));
  for (int i = 0; i < 7; ++i) {
    snprintf(name, sizeof(name), "a%d", i);
    int64_t value = 0;
    LOOM_ASSERT_OK(loom_op_attrs_get_i64(&attrs, name, &value));
    assert_int_equal(value, i * 100);
  }
  loom_op_attrs_deinitialize(&attrs);
}

static void large_value_spills_the_byte_buffer(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  char text[300];
  memset(text, 'z', sizeof(text));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "s", text, sizeof(text)));
  assert_false(loom_op_attrs_is_inline(&attrs));
  loom_attr_value_t value;
  assert_true(loom_op_attrs_get(&attrs, "s", &value));
  assert_int_equal(value.u.string.size, sizeof(text));
  assert_memory_equal(value.u.string.data, text, sizeof(text));
  assert_int_equal(value.u.string.data[sizeof(text)], '\0');
  loom_op_attrs_deinitialize(&attrs);
}

static void scalar_kinds_round_trip(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  int64_t dims[3] = {2, -1, 4};
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(&attrs, "b", true));
  LOOM_ASSERT_OK(loom_op_attrs_set_i32(&attrs, "i32", -7));
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "i64", INT64_MIN));
  LOOM_ASSERT_OK(loom_op_attrs_set_f32(&attrs, "f32", 0.25f));
  LOOM_ASSERT_OK(loom_op_attrs_set_f64(&attrs, "f64", -1e300));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "dt", LOOM_DTYPE_BFLOAT16));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(&attrs, "shape", dims, 3));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(&attrs, "unknown", NULL, -1));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "s", "a\0b", 3));
  LOOM_ASSERT_OK(loom_op_attrs_set_func(&attrs, "f", "body", 4));

  loom_attr_value_t v;
  assert_true(loom_op_attrs_get(&attrs, "b", &v));
  assert_int_equal(v.kind, LOOM_ATTR_KIND_BOOL);
  assert_false(v.is_list);
  assert_true(v.u.b);
  assert_true(loom_op_attrs_get(&attrs, "i32", &v));
  assert_int_equal(v.u.i32, -7);
  assert_true(loom_op_attrs_get(&attrs, "i64", &v));
  assert_true(v.u.i64 == INT64_MIN);
  assert_true(loom_op_attrs_get(&attrs, "f32", &v));
  assert_true(v.u.f32 == 0.25f);
  assert_true(loom_op_attrs_get(&attrs, "f64", &v));
  assert_true(v.u.f64 == -1e300);
  assert_true(loom_op_attrs_get(&attrs, "dt", &v));
  assert_int_equal(v.u.dtype, LOOM_DTYPE_BFLOAT16);
  assert_true(loom_op_attrs_get(&attrs, "shape", &v));
  assert_int_equal(v.u.shape.rank, 3);
  assert_memory_equal(v.u.shape.dims, dims, sizeof(dims));
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_attr_value_to_shape(&v, &shape));
  assert_int_equal(shape.dims[1], LOOM_UNKNOWN_DIM);
  assert_true(loom_op_attrs_get(&attrs, "unknown", &v));
  assert_int_equal(v.u.shape.rank, LOOM_UNKNOWN_RANK);
  LOOM_ASSERT_OK(loom_attr_value_to_shape(&v, &shape));
  assert_int_equal(shape.rank, LOOM_UNKNOWN_RANK);
  assert_true(loom_op_attrs_get(&attrs, "s", &v));
  assert_int_equal(v.u.string.size, 3);
  assert_memory_equal(v.u.string.data, "a\0b", 3);
  assert_true(loom_op_attrs_get(&attrs, "f", &v));
  assert_int_equal(v.kind, LOOM_ATTR_KIND_FUNC);
  assert_string_equal(v.u.string.data, "body");
  assert_false(loom_op_attrs_get(&attrs, "missing", &v));
  loom_op_attrs_deinitialize(&attrs);
}

static void list_kinds_round_trip(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  bool bools[3] = {true, false, true};
  int32_t i32s[2] = {1, -2};
  int64_t i64s[4] = {1, 2, 3, 4};
  float f32s[2] = {0.5f, -0.5f};
  double f64s[1] = {3.25};
  loom_dtype_t types[2] = {LOOM_DTYPE_INT32, LOOM_DTYPE_DOUBLE};
  loom_string_view_t strings[3] = {{"x", 1}, {"", 0}, {"long string", 11}};
  loom_shape_t shapes[3];
  int64_t d2[2] = {3, 4};
  LOOM_ASSERT_OK(loom_shape_initialize(&shapes[0], d2, 2));
  shapes[1] = loom_shape_unknown();
  shapes[2] = loom_shape_scalar();
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "bools", LOOM_ATTR_KIND_BOOL, bools, 3));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "i32s", LOOM_ATTR_KIND_I32, i32s, 2));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "i64s", LOOM_ATTR_KIND_I64, i64s, 4));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "f32s", LOOM_ATTR_KIND_F32, f32s, 2));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "f64s", LOOM_ATTR_KIND_F64, f64s, 1));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "types", LOOM_ATTR_KIND_DTYPE, types, 2));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "empty", LOOM_ATTR_KIND_I64, NULL, 0));
  LOOM_ASSERT_OK(loom_op_attrs_set_string_list(&attrs, "strings", strings, 3));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape_list(&attrs, "shapes", shapes, 3));

  loom_attr_value_t v, e;
  assert_true(loom_op_attrs_get(&attrs, "bools", &v));
  assert_true(v.is_list);
  assert_int_equal(v.count, 3);
  assert_memory_equal(v.u.list, bools, sizeof(bools));
  assert_true(loom_op_attrs_get(&attrs, "i32s", &v));
  assert_memory_equal(v.u.list, i32s, sizeof(i32s));
  assert_true(loom_op_attrs_get(&attrs, "i64s", &v));
  assert_memory_equal(v.u.list, i64s, sizeof(i64s));
  assert_true(loom_op_attrs_get(&attrs, "f32s", &v));
  assert_memory_equal(v.u.list, f32s, sizeof(f32s));
  assert_true(loom_op_attrs_get(&attrs, "f64s", &v));
  assert_memory_equal(v.u.list, f64s, sizeof(f64s));
  assert_true(loom_op_attrs_get(&attrs, "types", &v));
  assert_memory_equal(v.u.list, types, sizeof(types));
  LOOM_ASSERT_OK(loom_attr_value_list_element(&v, 1, &e));
  assert_int_equal(e.u.dtype, LOOM_DTYPE_DOUBLE);
  assert_true(loom_op_attrs_get(&attrs, "empty", &v));
  assert_true(v.is_list);
  assert_int_equal(v.count, 0);

  assert_true(loom_op_attrs_get(&attrs, "strings", &v));
  assert_int_equal(v.kind, LOOM_ATTR_KIND_STRING);
  for (int i = 0; i < 3; ++i) {
    LOOM_ASSERT_OK(loom_attr_value_list_element(&v, i, &e));
    assert_int_equal(e.u.string.size, strings[i].size);
    assert_memory_equal(e.u.string.data, strings[i].data, strings[i].size);
  }
  assert_true(loom_op_attrs_get(&attrs, "shapes", &v));
  LOOM_ASSERT_OK(loom_attr_value_list_element(&v, 0, &e));
  assert_int_equal(e.u.shape.rank, 2);
  assert_int_equal(e.u.shape.dims[1], 4);
  LOOM_ASSERT_OK(loom_attr_value_list_element(&v, 1, &e));
  assert_int_equal(e.u.shape.rank, LOOM_UNKNOWN_RANK);
  LOOM_ASSERT_OK(loom_attr_value_list_element(&v, 2, &e));
  assert_int_equal(e.u.shape.rank, 0);
  LOOM_ASSERT_STATUS(loom_attr_value_list_element(&v, 3, &e),
                     LOOM_STATUS_OUT_OF_RANGE,
                     "index 3 is outside a list of 3 elements");
  loom_attr_value_t scalar;
  assert_true(loom_op_attrs_get(&attrs, "empty", &scalar));
  scalar.is_list = false;
  LOOM_ASSERT_STATUS(loom_attr_value_list_element(&scalar, 0, &e),
                     LOOM_STATUS_INVALID_ARGUMENT, "is not a list");
  loom_op_attrs_deinitialize(&attrs);
}

static int g_deallocations = 0;
static void count_deallocation(void* data, size_t size, void* arg) {
  (void)data;
  (void)size;
  (void)arg;
  g_deallocations++;
}

static loom_tensor_t* make_tensor(float value) {
  static float storage[64][4];
  static int next = 0;
  float* data = storage[next++ % 64];
  for (int i = 0; i < 4; ++i) data[i] = value;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), data,
                                  4 * sizeof(float), count_deallocation, NULL,
                                  &buffer));
  int64_t dims[2] = {2, 2};
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, 2));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, buffer, 0, &tensor));
  loom_buffer_release(buffer);
  return tensor;
}

static void tensors_are_retained_until_the_set_goes(void** state) {
  (void)state;
  g_deallocations = 0;
  loom_tensor_t* a = make_tensor(1.0f);
  loom_tensor_t* b = make_tensor(2.0f);
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  LOOM_ASSERT_OK(loom_op_attrs_set_tensor(&attrs, "value", a));
  loom_tensor_t* list[2] = {a, b};
  LOOM_ASSERT_OK(loom_op_attrs_set_tensor_list(&attrs, "values", list, 2));
  loom_tensor_release(a);
  loom_tensor_release(b);
  assert_int_equal(g_deallocations, 0);
  loom_attr_value_t v;
  assert_true(loom_op_attrs_get(&attrs, "values", &v));
  assert_ptr_equal(((loom_tensor_t* const*)v.u.list)[1], b);
  // Replacing the scalar drops one reference to `a`; the list still holds it.
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "value", 3));
  assert_int_equal(g_deallocations, 0);
  loom_op_attrs_deinitialize(&attrs);
  assert_int_equal(g_deallocations, 2);
}

static void aggregates_nest_any_kinds(void** state) {
  (void)state;
  g_deallocations = 0;
  loom_tensor_t* tensor = make_tensor(5.0f);
  int64_t dims[2] = {1, 2};
  loom_attr_value_t inner[2];
  memset(inner, 0, sizeof(inner));
  inner[0].kind = LOOM_ATTR_KIND_I64;
  inner[0].u.i64 = 9;
  inner[1].kind = LOOM_ATTR_KIND_TENSOR;
  inner[1].u.tensor = tensor;
  loom_attr_value_t elements[4];
  memset(elements, 0, sizeof(elements));
  elements[0].kind = LOOM_ATTR_KIND_STRING;
  elements[0].u.string = (loom_string_view_t){"abc", 3};
  elements[1].kind = LOOM_ATTR_KIND_I64;
  elements[1].is_list = true;
  elements[1].count = 2;
  elements[1].u.list = dims;
  elements[2].kind = LOOM_ATTR_KIND_AGGREGATE;
  elements[2].is_list = true;
  elements[2].count = 2;
  elements[2].u.list = inner;
  elements[3].kind = LOOM_ATTR_KIND_F64;
  elements[3].u.f64 = 0.5;
  loom_attr_value_t aggregate;
  memset(&aggregate, 0, sizeof(aggregate));
  aggregate.kind = LOOM_ATTR_KIND_AGGREGATE;
  aggregate.is_list = true;
  aggregate.count = 4;
  aggregate.u.list = elements;

  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  LOOM_ASSERT_OK(loom_op_attrs_set_value(&attrs, "agg", &aggregate));
  loom_tensor_release(tensor);
  loom_attr_value_t v, e, nested;
  assert_true(loom_op_attrs_get(&attrs, "agg", &v));
  assert_true(loom_attr_value_equal(&v, &aggregate));
  LOOM_ASSERT_OK(loom_attr_value_list_element(&v, 2, &e));
  assert_int_equal(e.kind, LOOM_ATTR_KIND_AGGREGATE);
  LOOM_ASSERT_OK(loom_attr_value_list_element(&e, 1, &nested));
  assert_ptr_equal(nested.u.tensor, tensor);
  LOOM_ASSERT_OK(loom_attr_value_list_element(&v, 3, &e));
  assert_true(e.u.f64 == 0.5);

  const loom_op_attrs_t* frozen = NULL;
  LOOM_ASSERT_OK(loom_op_attrs_freeze(&attrs, &frozen));
  loom_op_attrs_deinitialize(&attrs);
  assert_int_equal(g_deallocations, 0);  // the frozen copy holds the tensor
  loom_op_attrs_release(frozen);
  assert_int_equal(g_deallocations, 1);
}

static void aggregate_that_is_not_a_list_is_rejected(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  loom_attr_value_t bad;
  memset(&bad, 0, sizeof(bad));
  bad.kind = LOOM_ATTR_KIND_AGGREGATE;
  LOOM_ASSERT_STATUS(loom_op_attrs_set_value(&attrs, "x", &bad),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "attr 'x': invalid attribute value: an aggregate must be "
                     "a list");
  bad.kind = (loom_attr_kind_t)42;
  LOOM_ASSERT_STATUS(loom_op_attrs_set_value(&attrs, "x", &bad),
                     LOOM_STATUS_INVALID_ARGUMENT, "kind 42");
  LOOM_ASSERT_STATUS(loom_op_attrs_set_tensor(&attrs, "t", NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "NULL tensor");
  LOOM_ASSERT_STATUS(
      loom_op_attrs_set_list(&attrs, "t", LOOM_ATTR_KIND_STRING, NULL, 0),
      LOOM_STATUS_INVALID_ARGUMENT, "kind CHAR is not a scalar kind");
  LOOM_ASSERT_STATUS(loom_op_attrs_set_i64(&attrs, "", 1),
                     LOOM_STATUS_INVALID_ARGUMENT, "must not be empty");
  LOOM_ASSERT_STATUS(loom_op_attrs_set_i64(&attrs, NULL, 1),
                     LOOM_STATUS_INVALID_ARGUMENT, "name is NULL");
  int64_t dims[LOOM_MAX_SHAPE_RANK + 1] = {0};
  LOOM_ASSERT_STATUS(
      loom_op_attrs_set_shape(&attrs, "s", dims, LOOM_MAX_SHAPE_RANK + 1),
      LOOM_STATUS_INVALID_ARGUMENT, "attr 's': shape rank 255 exceeds 254");
  assert_int_equal(loom_op_attrs_count(&attrs), 0);
  loom_op_attrs_deinitialize(&attrs);
}

// Shape attributes above rank 8 (up to TensorFlow's 254): stored, read back
// as spilled shapes, alone and in lists.
static void shape_attrs_take_ranks_above_8(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  int64_t dims[12];
  for (int i = 0; i < 12; ++i) dims[i] = i % 3 + 1;
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(&attrs, "s", dims, 12));
  loom_attr_value_t value;
  assert_true(loom_op_attrs_get(&attrs, "s", &value));
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_attr_value_to_shape(&value, &shape));
  assert_int_equal(shape.rank, 12);
  for (int i = 0; i < 12; ++i) {
    assert_int_equal(loom_shape_dims(&shape)[i], dims[i]);
  }
  loom_shape_t list[2];
  LOOM_ASSERT_OK(loom_shape_initialize_large(&list[0], dims, 12));
  LOOM_ASSERT_OK(loom_shape_initialize(&list[1], dims, 2));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape_list(&attrs, "l", list, 2));
  assert_true(loom_op_attrs_get(&attrs, "l", &value));
  assert_int_equal(value.count, 2);
  loom_attr_value_t element;
  LOOM_ASSERT_OK(loom_attr_value_list_element(&value, 0, &element));
  LOOM_ASSERT_OK(loom_attr_value_to_shape(&element, &shape));
  assert_true(loom_shape_equal(&shape, &list[0]));
  LOOM_ASSERT_OK(loom_attr_value_list_element(&value, 1, &element));
  LOOM_ASSERT_OK(loom_attr_value_to_shape(&element, &shape));
  assert_true(loom_shape_equal(&shape, &list[1]));
  loom_op_attrs_deinitialize(&attrs);
}

static void setting_a_name_again_replaces_it(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "N", 2));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "N", "two", 3));
  assert_int_equal(loom_op_attrs_count(&attrs), 1);
  loom_attr_value_t v;
  assert_true(loom_op_attrs_get(&attrs, "N", &v));
  assert_int_equal(v.kind, LOOM_ATTR_KIND_STRING);
  assert_true(loom_op_attrs_remove(&attrs, "N"));
  assert_false(loom_op_attrs_remove(&attrs, "N"));
  assert_int_equal(loom_op_attrs_count(&attrs), 0);
  loom_op_attrs_deinitialize(&attrs);
}

static void setting_from_a_view_into_the_same_set_survives_spilling(
    void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  char text[100];
  memset(text, 'q', sizeof(text));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "a", text, sizeof(text)));
  for (int i = 0; i < 4; ++i) {
    loom_attr_value_t view;
    assert_true(loom_op_attrs_get(&attrs, "a", &view));
    char name[8];
    snprintf(name, sizeof(name), "copy%d", i);
    LOOM_ASSERT_OK(loom_op_attrs_set_value(&attrs, name, &view));
  }
  loom_attr_value_t a, copy;
  assert_true(loom_op_attrs_get(&attrs, "a", &a));
  assert_true(loom_op_attrs_get(&attrs, "copy3", &copy));
  assert_true(loom_attr_value_equal(&a, &copy));
  loom_op_attrs_deinitialize(&attrs);
}

static void typed_reads_convert_and_report_mismatches(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  LOOM_ASSERT_OK(loom_op_attrs_set_i32(&attrs, "small", 7));
  LOOM_ASSERT_OK(loom_op_attrs_set_f64(&attrs, "wide", 0.5));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_INT64));
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(&attrs, "flag", true));
  int64_t i = 0;
  float f = 0;
  bool b = false;
  loom_dtype_t t = LOOM_DTYPE_INVALID;
  LOOM_ASSERT_OK(loom_op_attrs_get_i64(&attrs, "small", &i));
  assert_int_equal(i, 7);
  LOOM_ASSERT_OK(loom_op_attrs_get_f32(&attrs, "wide", &f));
  assert_true(f == 0.5f);
  LOOM_ASSERT_OK(loom_op_attrs_get_dtype(&attrs, "T", &t));
  assert_int_equal(t, LOOM_DTYPE_INT64);
  LOOM_ASSERT_OK(loom_op_attrs_get_bool(&attrs, "flag", &b));
  assert_true(b);
  LOOM_ASSERT_STATUS(loom_op_attrs_get_i64(&attrs, "T", &i),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "attr 'T' has type DTYPE, expected int");
  LOOM_ASSERT_STATUS(loom_op_attrs_get_f32(&attrs, "small", &f),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "attr 'small' has type I32, expected float");
  LOOM_ASSERT_STATUS(loom_op_attrs_get_bool(&attrs, "T", &b),
                     LOOM_STATUS_INVALID_ARGUMENT, "expected bool");
  LOOM_ASSERT_STATUS(loom_op_attrs_get_dtype(&attrs, "flag", &t),
                     LOOM_STATUS_INVALID_ARGUMENT, "expected type");
  LOOM_ASSERT_STATUS(loom_op_attrs_get_i64(&attrs, "nope", &i),
                     LOOM_STATUS_NOT_FOUND, "attr 'nope' not found");
  LOOM_ASSERT_STATUS(loom_op_attrs_get_i64(&attrs, "small", NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_value is NULL");
  loom_op_attrs_deinitialize(&attrs);
}

static void entries_come_in_name_order(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  const char* names[5] = {"zeta", "alpha", "mid", "Beta", "alpha2"};
  for (int i = 0; i < 5; ++i) {
    LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, names[i], i));
  }
  const char* expected[5] = {"Beta", "alpha", "alpha2", "mid", "zeta"};
  for (size_t i = 0; i < 5; ++i) {
    const char* name = NULL;
    assert_true(loom_op_attrs_entry_at(&attrs, i, &name, NULL));
    assert_string_equal(name, expected[i]);
  }
  assert_false(loom_op_attrs_entry_at(&attrs, 5, NULL, NULL));
  loom_op_attrs_deinitialize(&attrs);
}

static void freeze_copies_once_and_shares_after(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  LOOM_ASSERT_OK(loom_op_attrs_set_f32(&attrs, "alpha", 0.2f));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "padding", "VALID", 5));
  loom_fault_allocator_fail_nth(g_fault, 0);
  const loom_op_attrs_t* frozen = NULL;
  LOOM_ASSERT_OK(loom_op_attrs_freeze(&attrs, &frozen));
  assert_int_equal(loom_fault_allocator_allocation_count(g_fault), 1);
  assert_true(loom_op_attrs_is_frozen(frozen));
  assert_false(loom_op_attrs_is_frozen(&attrs));
  loom_op_attrs_deinitialize(&attrs);  // the frozen copy stands alone

  const loom_op_attrs_t* again = NULL;
  LOOM_ASSERT_OK(loom_op_attrs_freeze(frozen, &again));
  assert_ptr_equal(again, frozen);
  assert_int_equal(loom_fault_allocator_allocation_count(g_fault), 1);
  float alpha = 0;
  LOOM_ASSERT_OK(loom_op_attrs_get_f32(frozen, "alpha", &alpha));
  assert_true(alpha == 0.2f);
  LOOM_ASSERT_STATUS(loom_op_attrs_set_i64((loom_op_attrs_t*)frozen, "x", 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "cannot set attr 'x': the attribute set is frozen");
  loom_op_attrs_release(again);
  loom_op_attrs_release(frozen);
}

static void print_matches_tfrt(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  char text[1024];
  loom_op_attrs_print(&attrs, text, sizeof(text));
  assert_string_equal(text, "OpAttrs is empty\n");

  int64_t shape[1] = {5};
  int64_t long_list[7] = {1, 2, 3, 4, 5, 6, 7};
  int64_t dims[2] = {2, 3};
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "shape", LOOM_ATTR_KIND_I64, shape, 1));
  LOOM_ASSERT_OK(loom_op_attrs_set_f32(&attrs, "value", 1.0f));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "long", LOOM_ATTR_KIND_I64, long_list, 7));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_INT32));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(&attrs, "dims", dims, 2));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "name", "hello!", 6));
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(&attrs, "flag", true));
  size_t length = loom_op_attrs_print(&attrs, text, sizeof(text));
  assert_string_equal(text,
                      "OpAttrs contains 7 entries:\n"
                      "  'T' type=DTYPE value=I32\n"
                      "  'dims' type=SHAPE value=<2x3>\n"
                      "  'flag' type=BOOL value=1\n"
                      "  'long' type=I64 value=[1, 2, 3, 4, 5...]\n"
                      "  'name' type=CHAR value=[h, e, l, l, o...]\n"
                      "  'shape' type=I64 value=[5]\n"
                      "  'value' type=F32 value=1.000000e+00\n"
                      "\n");
  assert_int_equal(length, strlen(text));
  char small[8];
  assert_int_equal(loom_op_attrs_print(&attrs, small, sizeof(small)), length);
  assert_string_equal(small, "OpAttrs");
  loom_op_attrs_deinitialize(&attrs);
}

static void format_uses_tensorflow_text(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator());
  int64_t ints[3] = {1, 2, 3};
  int64_t dims[2] = {-1, 3};
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "ints", LOOM_ATTR_KIND_I64, ints, 3));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(&attrs, "s", dims, 2));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "p", "SAME", 4));
  loom_attr_value_t v;
  char text[128];
  assert_true(loom_op_attrs_get(&attrs, "ints", &v));
  loom_attr_value_format(&v, text, sizeof(text));
  assert_string_equal(text, "[1, 2, 3]");
  assert_true(loom_op_attrs_get(&attrs, "T", &v));
  loom_attr_value_format(&v, text, sizeof(text));
  assert_string_equal(text, "DT_FLOAT");
  assert_true(loom_op_attrs_get(&attrs, "s", &v));
  loom_attr_value_format(&v, text, sizeof(text));
  assert_string_equal(text, "[?,3]");
  assert_true(loom_op_attrs_get(&attrs, "p", &v));
  loom_attr_value_format(&v, text, sizeof(text));
  assert_string_equal(text, "\"SAME\"");
  loom_op_attrs_deinitialize(&attrs);
}

typedef struct build_context_t {
  bool freeze;
} build_context_t;

static loom_status_t build_set(loom_allocator_t alloc, void* context) {
  build_context_t* build = context;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, alloc);
  loom_status_t status = loom_ok_status();
  char name[16];
  for (int i = 0; i < 20 && !status; ++i) {
    snprintf(name, sizeof(name), "attribute_%d", i);
    status = loom_op_attrs_set_i64(&attrs, name, i);
  }
  if (!status && build->freeze) {
    const loom_op_attrs_t* frozen = NULL;
    status = loom_op_attrs_freeze(&attrs, &frozen);
    if (!status) loom_op_attrs_release(frozen);
  }
  loom_op_attrs_deinitialize(&attrs);
  return status;
}

// Sets are equal when their names and values are, whatever the order the
// attributes were set in, whether they spilled, and whether one is frozen:
// plain scalars (a dtype, a bool, a float), shapes, strings and lists alike.
static void equal_sets_compare_by_name_and_value(void** state) {
  (void)state;
  loom_op_attrs_t a, b;
  loom_op_attrs_initialize(&a, allocator());
  loom_op_attrs_initialize(&b, allocator());
  const int64_t dims[2] = {3, 4};
  const int64_t list[3] = {1, 2, 3};
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&a, "T", LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(&a, "transpose_a", true));
  LOOM_ASSERT_OK(loom_op_attrs_set_f32(&a, "alpha", 0.5f));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(&a, "shape", dims, 2));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&a, "padding", "SAME", 4));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&a, "strides", LOOM_ATTR_KIND_I64, list, 3));
  // The same in another order, with a replaced value on the way.
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&b, "strides", LOOM_ATTR_KIND_I64, list, 3));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&b, "padding", "VALID", 5));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(&b, "shape", dims, 2));
  LOOM_ASSERT_OK(loom_op_attrs_set_f32(&b, "alpha", 0.5f));
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(&b, "transpose_a", true));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&b, "T", LOOM_DTYPE_FLOAT));
  assert_false(loom_op_attrs_equal(&a, &b));  // "SAME" != "VALID"
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&b, "padding", "SAME", 4));
  assert_true(loom_op_attrs_equal(&a, &b));
  const loom_op_attrs_t* frozen = NULL;
  LOOM_ASSERT_OK(loom_op_attrs_freeze(&b, &frozen));
  assert_true(loom_op_attrs_equal(&a, frozen));
  // Each kind of difference.
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&b, "T", LOOM_DTYPE_DOUBLE));
  assert_false(loom_op_attrs_equal(&a, &b));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&b, "T", LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(&b, "transpose_a", false));
  assert_false(loom_op_attrs_equal(&a, &b));
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(&b, "transpose_a", true));
  LOOM_ASSERT_OK(loom_op_attrs_set_f32(&b, "alpha", -0.5f));
  assert_false(loom_op_attrs_equal(&a, &b));
  LOOM_ASSERT_OK(loom_op_attrs_set_f32(&b, "alpha", 0.5f));
  LOOM_ASSERT_OK(loom_op_attrs_set_i32(&b, "alpha", 1));  // another kind
  assert_false(loom_op_attrs_equal(&a, &b));
  LOOM_ASSERT_OK(loom_op_attrs_set_f32(&b, "alpha", 0.5f));
  assert_true(loom_op_attrs_equal(&a, &b));
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(&b, "transpose_b", false));
  assert_false(loom_op_attrs_equal(&a, &b));  // one more entry
  assert_true(loom_op_attrs_equal(NULL, NULL));
  loom_op_attrs_release(frozen);
  loom_op_attrs_deinitialize(&a);
  loom_op_attrs_deinitialize(&b);
}

// Sets built by the same calls in the same order lie out alike and are
// compared as bytes: a value of the same size that differs is told apart,
// and sets that lie out differently still compare by value.
static void sets_built_alike_compare_as_bytes(void** state) {
  (void)state;
  loom_op_attrs_t a, b;
  loom_op_attrs_initialize(&a, allocator());
  loom_op_attrs_initialize(&b, allocator());
  const int64_t list[2] = {1, 2};
  loom_op_attrs_t* sets[2] = {&a, &b};
  const char* paddings[2] = {"SAME", "VALD"};
  for (int i = 0; i < 2; ++i) {
    LOOM_ASSERT_OK(loom_op_attrs_set_dtype(sets[i], "T", LOOM_DTYPE_FLOAT));
    LOOM_ASSERT_OK(
        loom_op_attrs_set_string(sets[i], "padding", paddings[i], 4));
    LOOM_ASSERT_OK(loom_op_attrs_set_bool(sets[i], "transpose_a", true));
  }
  assert_false(loom_op_attrs_equal(&a, &b));  // same layout, other bytes
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&b, "padding", "SAME", 4));
  assert_true(loom_op_attrs_equal(&a, &b));  // other layout, equal values
  const loom_op_attrs_t* frozen = NULL;
  LOOM_ASSERT_OK(loom_op_attrs_freeze(&a, &frozen));
  assert_true(loom_op_attrs_equal(&a, frozen));
  assert_true(loom_op_attrs_equal(frozen, &a));
  loom_op_attrs_release(frozen);
  for (int i = 0; i < 2; ++i) {
    LOOM_ASSERT_OK(loom_op_attrs_set_list(sets[i], "strides",
                                          LOOM_ATTR_KIND_I64, list, 2));
  }
  assert_true(loom_op_attrs_equal(&a, &b));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&a, "T", LOOM_DTYPE_DOUBLE));
  assert_false(loom_op_attrs_equal(&a, &b));
  loom_op_attrs_deinitialize(&a);
  loom_op_attrs_deinitialize(&b);
}

static void every_allocation_failure_is_reported_without_leaks(void** state) {
  (void)state;
  build_context_t context = {true};
  assert_true(
      loom_test_fault_sweep(build_set, &context, LOOM_TEST_SWEEP_STRICT) >= 3);
}

static void list_sizes_past_int64_are_rejected(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  // 2^61 int64s are 2^64 bytes: the size must not wrap to 0 and store a
  // list longer than its bytes.
  const int64_t values[2] = {1, 2};
  LOOM_ASSERT_STATUS(
      loom_op_attrs_set_list(&attrs, "big", LOOM_ATTR_KIND_I64, values,
                             (int64_t)1 << 61),
      LOOM_STATUS_INVALID_ARGUMENT,
      "list of 2305843009213693952 elements of 8 bytes: the size overflows "
      "int64");
  assert_false(loom_op_attrs_get(&attrs, "big", NULL));
  loom_op_attrs_deinitialize(&attrs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(six_small_attributes_stay_inline),
      cmocka_unit_test(seventh_attribute_spills_and_keeps_values),
      cmocka_unit_test(large_value_spills_the_byte_buffer),
      cmocka_unit_test(scalar_kinds_round_trip),
      cmocka_unit_test(list_kinds_round_trip),
      cmocka_unit_test(tensors_are_retained_until_the_set_goes),
      cmocka_unit_test(aggregates_nest_any_kinds),
      cmocka_unit_test(aggregate_that_is_not_a_list_is_rejected),
      cmocka_unit_test(setting_a_name_again_replaces_it),
      cmocka_unit_test(shape_attrs_take_ranks_above_8),
      cmocka_unit_test(setting_from_a_view_into_the_same_set_survives_spilling),
      cmocka_unit_test(typed_reads_convert_and_report_mismatches),
      cmocka_unit_test(entries_come_in_name_order),
      cmocka_unit_test(freeze_copies_once_and_shares_after),
      cmocka_unit_test(print_matches_tfrt),
      cmocka_unit_test(format_uses_tensorflow_text),
      cmocka_unit_test(equal_sets_compare_by_name_and_value),
      cmocka_unit_test(sets_built_alike_compare_as_bytes),
      cmocka_unit_test(every_allocation_failure_is_reported_without_leaks),
      cmocka_unit_test(list_sizes_past_int64_are_rejected),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
