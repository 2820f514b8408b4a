// Shapes: construction, element counts, comparisons, printing, large ranks
// spilled to the shape pool; and the tensor metadata (dtype + shape) built
// on them.

#include <string.h>

#include "loom/shape.h"
#include "loom/tensor_metadata.h"
#include "test_support.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static loom_shape_t make(const int64_t* dims, int rank) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  return shape;
}

//===----------------------------------------------------------------------===//
// loom_shape_initialize
//===----------------------------------------------------------------------===//

static void initialize_copies_rank_and_dims(void** state) {
  (void)state;
  const int64_t dims[3] = {2, 3, 4};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  assert_int_equal(shape.rank, 3);
  assert_memory_equal(shape.dims, dims, sizeof(dims));
}

static void initialize_accepts_unknown_dimensions(void** state) {
  (void)state;
  const int64_t dims[2] = {LOOM_UNKNOWN_DIM, 5};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  assert_int_equal(shape.rank, 2);
  assert_int_equal(shape.dims[0], LOOM_UNKNOWN_DIM);
  assert_int_equal(shape.dims[1], 5);
}

static void initialize_accepts_zero_dimensions(void** state) {
  (void)state;
  const int64_t dims[2] = {0, 0};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  assert_int_equal(shape.rank, 2);
  assert_int_equal(shape.dims[0], 0);
}

static void initialize_accepts_rank_zero_with_null_dims(void** state) {
  (void)state;
  loom_shape_t shape = make(NULL, 0);
  assert_int_equal(shape.rank, 0);
}

static void initialize_accepts_the_maximum_rank(void** state) {
  (void)state;
  const int64_t dims[LOOM_MAX_RANK] = {1, 2, 3, 4, 5, 6, 7, 8};
  loom_shape_t shape = make(dims, LOOM_MAX_RANK);
  assert_int_equal(shape.rank, LOOM_MAX_RANK);
  assert_memory_equal(shape.dims, dims, sizeof(dims));
}

static void initialize_accepts_int64_max_dimension(void** state) {
  (void)state;
  const int64_t dims[1] = {INT64_MAX};
  loom_shape_t shape = make(dims, 1);
  assert_int_equal(shape.dims[0], INT64_MAX);
}

static void initialize_rejects_rank_above_the_maximum(void** state) {
  (void)state;
  loom_shape_t shape;
  const int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  LOOM_ASSERT_STATUS(loom_shape_initialize(&shape, dims, 9),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "shape rank 9 is outside [0, 8]");
}

static void initialize_rejects_negative_rank(void** state) {
  (void)state;
  loom_shape_t shape;
  const int64_t dims[1] = {1};
  LOOM_ASSERT_STATUS(loom_shape_initialize(&shape, dims, -1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "shape rank -1 is outside [0, 8]");
}

static void initialize_rejects_minus_two_naming_the_dimension(void** state) {
  (void)state;
  loom_shape_t shape;
  const int64_t dims[2] = {3, -2};
  LOOM_ASSERT_STATUS(loom_shape_initialize(&shape, dims, 2),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "shape dimension 1 is -2; dimensions must be >= 0 or -1 "
                     "(unknown)");
}

static void initialize_rejects_int64_min_dimension(void** state) {
  (void)state;
  loom_shape_t shape;
  const int64_t dims[1] = {INT64_MIN};
  char expected[128];
  snprintf(expected, sizeof(expected), "shape dimension 0 is %lld",
           (long long)INT64_MIN);
  LOOM_ASSERT_STATUS(loom_shape_initialize(&shape, dims, 1),
                     LOOM_STATUS_INVALID_ARGUMENT, expected);
}

static void initialize_rejects_null_dims_with_positive_rank(void** state) {
  (void)state;
  loom_shape_t shape;
  LOOM_ASSERT_STATUS(loom_shape_initialize(&shape, NULL, 2),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_shape_initialize: dims is NULL");
}

static void initialize_rejects_null_out_shape(void** state) {
  (void)state;
  const int64_t dims[1] = {1};
  LOOM_ASSERT_STATUS(loom_shape_initialize(NULL, dims, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_shape_initialize: out_shape is NULL");
}

//===----------------------------------------------------------------------===//
// Scalar and unknown shapes
//===----------------------------------------------------------------------===//

static void scalar_has_rank_zero(void** state) {
  (void)state;
  loom_shape_t scalar = loom_shape_scalar();
  assert_int_equal(scalar.rank, 0);
}

static void scalar_equals_an_initialized_rank_zero_shape(void** state) {
  (void)state;
  loom_shape_t scalar = loom_shape_scalar();
  loom_shape_t initialized = make(NULL, 0);
  assert_true(loom_shape_equal(&scalar, &initialized));
}

static void scalar_is_fully_defined(void** state) {
  (void)state;
  loom_shape_t scalar = loom_shape_scalar();
  assert_true(loom_shape_is_fully_defined(&scalar));
}

static void unknown_has_unknown_rank(void** state) {
  (void)state;
  loom_shape_t unknown = loom_shape_unknown();
  assert_int_equal(unknown.rank, LOOM_UNKNOWN_RANK);
}

static void unknown_is_not_fully_defined(void** state) {
  (void)state;
  loom_shape_t unknown = loom_shape_unknown();
  assert_false(loom_shape_is_fully_defined(&unknown));
}

static void shape_with_an_unknown_dim_is_not_fully_defined(void** state) {
  (void)state;
  const int64_t dims[3] = {1, 2, LOOM_UNKNOWN_DIM};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  assert_false(loom_shape_is_fully_defined(&shape));
}

static void shape_of_known_dims_is_fully_defined(void** state) {
  (void)state;
  const int64_t dims[3] = {1, 0, 7};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  assert_true(loom_shape_is_fully_defined(&shape));
}

//===----------------------------------------------------------------------===//
// loom_shape_num_elements
//===----------------------------------------------------------------------===//

static void num_elements_is_the_product_of_dims(void** state) {
  (void)state;
  const int64_t dims[4] = {2, 3, 4, 5};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  int64_t product = 1;
  for (size_t i = 0; i < ARRAY_SIZE(dims); ++i) product *= dims[i];
  assert_int_equal(loom_shape_num_elements(&shape), product);
}

static void num_elements_of_scalar_is_one(void** state) {
  (void)state;
  loom_shape_t scalar = loom_shape_scalar();
  assert_int_equal(loom_shape_num_elements(&scalar), 1);
}

static void num_elements_with_an_empty_dim_is_zero(void** state) {
  (void)state;
  const int64_t dims[3] = {4, 0, 7};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  assert_int_equal(loom_shape_num_elements(&shape), 0);
}

static void num_elements_with_an_empty_dim_after_huge_dims_is_zero(
    void** state) {
  (void)state;
  // The product of the first two overflows, but the tensor is empty.
  const int64_t dims[3] = {INT64_MAX, 2, 0};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  assert_int_equal(loom_shape_num_elements(&shape), 0);
}

static void num_elements_with_an_unknown_dim_is_minus_one(void** state) {
  (void)state;
  const int64_t dims[2] = {LOOM_UNKNOWN_DIM, 3};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  assert_int_equal(loom_shape_num_elements(&shape), -1);
}

static void num_elements_with_unknown_and_empty_dims_is_minus_one(
    void** state) {
  (void)state;
  const int64_t dims[2] = {LOOM_UNKNOWN_DIM, 0};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  assert_int_equal(loom_shape_num_elements(&shape), -1);
}

static void num_elements_of_unknown_rank_is_minus_one(void** state) {
  (void)state;
  loom_shape_t unknown = loom_shape_unknown();
  assert_int_equal(loom_shape_num_elements(&unknown), -1);
}

static void num_elements_that_overflow_is_minus_one(void** state) {
  (void)state;
  const int64_t dims[3] = {INT64_MAX / 2, 3, 5};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  assert_int_equal(loom_shape_num_elements(&shape), -1);
}

static void num_elements_just_past_int64_max_is_minus_one(void** state) {
  (void)state;
  const int64_t dims[2] = {INT64_MAX / 2 + 1, 2};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  assert_int_equal(loom_shape_num_elements(&shape), -1);
}

static void num_elements_up_to_int64_max_is_exact(void** state) {
  (void)state;
  const int64_t dims[3] = {1, INT64_MAX, 1};
  loom_shape_t shape = make(dims, ARRAY_SIZE(dims));
  assert_int_equal(loom_shape_num_elements(&shape), INT64_MAX);
}

//===----------------------------------------------------------------------===//
// loom_shape_equal and loom_shape_is_compatible
//===----------------------------------------------------------------------===//

static void shapes_with_the_same_dims_are_equal(void** state) {
  (void)state;
  const int64_t dims[2] = {2, 3};
  loom_shape_t a = make(dims, 2), b = make(dims, 2);
  assert_true(loom_shape_equal(&a, &b));
}

static void shapes_with_different_dims_are_not_equal(void** state) {
  (void)state;
  const int64_t a_dims[2] = {2, 3};
  const int64_t b_dims[2] = {2, 4};
  loom_shape_t a = make(a_dims, 2), b = make(b_dims, 2);
  assert_false(loom_shape_equal(&a, &b));
}

static void shapes_with_different_ranks_are_not_equal(void** state) {
  (void)state;
  const int64_t dims[3] = {2, 3, 1};
  loom_shape_t a = make(dims, 2), b = make(dims, 3);
  assert_false(loom_shape_equal(&a, &b));
}

static void unknown_dim_equals_only_unknown_dim(void** state) {
  (void)state;
  const int64_t partial_dims[2] = {2, LOOM_UNKNOWN_DIM};
  const int64_t known_dims[2] = {2, 3};
  loom_shape_t a = make(partial_dims, 2), b = make(partial_dims, 2),
               known = make(known_dims, 2);
  assert_true(loom_shape_equal(&a, &b));
  assert_false(loom_shape_equal(&a, &known));
}

static void unknown_rank_equals_unknown_rank(void** state) {
  (void)state;
  loom_shape_t a = loom_shape_unknown(), b = loom_shape_unknown();
  assert_true(loom_shape_equal(&a, &b));
}

static void unknown_rank_does_not_equal_scalar(void** state) {
  (void)state;
  loom_shape_t unknown = loom_shape_unknown(), scalar = loom_shape_scalar();
  assert_false(loom_shape_equal(&unknown, &scalar));
  assert_false(loom_shape_equal(&scalar, &unknown));
}

static void unknown_dim_is_compatible_with_any_size(void** state) {
  (void)state;
  const int64_t a_dims[2] = {2, 3};
  const int64_t b_dims[2] = {LOOM_UNKNOWN_DIM, 3};
  loom_shape_t a = make(a_dims, 2), b = make(b_dims, 2);
  assert_true(loom_shape_is_compatible(&a, &b));
  assert_true(loom_shape_is_compatible(&b, &a));
}

static void different_known_dims_are_incompatible(void** state) {
  (void)state;
  const int64_t a_dims[2] = {2, LOOM_UNKNOWN_DIM};
  const int64_t b_dims[2] = {4, 3};
  loom_shape_t a = make(a_dims, 2), b = make(b_dims, 2);
  assert_false(loom_shape_is_compatible(&a, &b));
  assert_false(loom_shape_is_compatible(&b, &a));
}

static void different_ranks_are_incompatible(void** state) {
  (void)state;
  const int64_t dims[3] = {2, 3, 1};
  loom_shape_t a = make(dims, 2), b = make(dims, 3);
  assert_false(loom_shape_is_compatible(&a, &b));
}

static void unknown_rank_is_compatible_with_every_shape(void** state) {
  (void)state;
  const int64_t dims[3] = {2, LOOM_UNKNOWN_DIM, 1};
  loom_shape_t unknown = loom_shape_unknown(), scalar = loom_shape_scalar(),
               partial = make(dims, 3);
  assert_true(loom_shape_is_compatible(&unknown, &scalar));
  assert_true(loom_shape_is_compatible(&partial, &unknown));
  assert_true(loom_shape_is_compatible(&unknown, &unknown));
}

static void equal_shapes_are_compatible(void** state) {
  (void)state;
  const int64_t dims[2] = {7, 0};
  loom_shape_t a = make(dims, 2), b = make(dims, 2);
  assert_true(loom_shape_is_compatible(&a, &b));
}

//===----------------------------------------------------------------------===//
// loom_shape_format
//===----------------------------------------------------------------------===//

static void format_prints_known_dims(void** state) {
  (void)state;
  const int64_t dims[2] = {2, 3};
  loom_shape_t shape = make(dims, 2);
  char text[64];
  assert_int_equal(loom_shape_format(&shape, text, sizeof(text)),
                   strlen("[2, 3]"));
  assert_string_equal(text, "[2, 3]");
}

static void format_prints_unknown_dims_as_question_marks(void** state) {
  (void)state;
  const int64_t dims[2] = {LOOM_UNKNOWN_DIM, 3};
  loom_shape_t shape = make(dims, 2);
  char text[64];
  assert_int_equal(loom_shape_format(&shape, text, sizeof(text)),
                   strlen("[?, 3]"));
  assert_string_equal(text, "[?, 3]");
}

static void format_prints_scalar_as_empty_brackets(void** state) {
  (void)state;
  loom_shape_t scalar = loom_shape_scalar();
  char text[64];
  assert_int_equal(loom_shape_format(&scalar, text, sizeof(text)),
                   strlen("[]"));
  assert_string_equal(text, "[]");
}

static void format_prints_unknown_rank(void** state) {
  (void)state;
  loom_shape_t unknown = loom_shape_unknown();
  char text[64];
  assert_int_equal(loom_shape_format(&unknown, text, sizeof(text)),
                   strlen("<unknown>"));
  assert_string_equal(text, "<unknown>");
}

static void format_prints_the_widest_shape_in_full(void** state) {
  (void)state;
  int64_t dims[LOOM_MAX_RANK];
  for (int i = 0; i < LOOM_MAX_RANK; ++i) dims[i] = INT64_MAX;
  loom_shape_t shape = make(dims, LOOM_MAX_RANK);
  char expected[512] = "[";
  for (int i = 0; i < LOOM_MAX_RANK; ++i) {
    char dim[32];
    snprintf(dim, sizeof(dim), "%s%lld", i ? ", " : "", (long long)INT64_MAX);
    strcat(expected, dim);
  }
  strcat(expected, "]");
  char text[512];
  assert_int_equal(loom_shape_format(&shape, text, sizeof(text)),
                   strlen(expected));
  assert_string_equal(text, expected);
}

static void format_truncates_and_returns_the_full_length(void** state) {
  (void)state;
  const int64_t dims[2] = {2, 3};
  loom_shape_t shape = make(dims, 2);
  char small[4];
  assert_int_equal(loom_shape_format(&shape, small, sizeof(small)),
                   strlen("[2, 3]"));
  assert_string_equal(small, "[2,");
}

static void format_with_room_for_all_but_the_nul_drops_the_last_char(
    void** state) {
  (void)state;
  const int64_t dims[2] = {2, 3};
  loom_shape_t shape = make(dims, 2);
  char text[6];
  assert_int_equal(loom_shape_format(&shape, text, sizeof(text)),
                   strlen("[2, 3]"));
  assert_string_equal(text, "[2, 3");
}

static void format_truncates_unknown_rank(void** state) {
  (void)state;
  loom_shape_t unknown = loom_shape_unknown();
  char text[4];
  assert_int_equal(loom_shape_format(&unknown, text, sizeof(text)),
                   strlen("<unknown>"));
  assert_string_equal(text, "<un");
}

static void format_with_capacity_one_writes_an_empty_string(void** state) {
  (void)state;
  const int64_t dims[1] = {5};
  loom_shape_t shape = make(dims, 1);
  char text[1] = {'x'};
  assert_int_equal(loom_shape_format(&shape, text, sizeof(text)),
                   strlen("[5]"));
  assert_int_equal(text[0], '\0');
}

static void format_with_no_buffer_only_measures(void** state) {
  (void)state;
  const int64_t dims[3] = {10, LOOM_UNKNOWN_DIM, 0};
  loom_shape_t shape = make(dims, 3);
  assert_int_equal(loom_shape_format(&shape, NULL, 0), strlen("[10, ?, 0]"));
}

//===----------------------------------------------------------------------===//
// loom_tensor_metadata_t
//===----------------------------------------------------------------------===//

static void metadata_with_same_dtype_and_shape_are_equal(void** state) {
  (void)state;
  const int64_t dims[1] = {5};
  loom_tensor_metadata_t a = {LOOM_DTYPE_FLOAT, make(dims, 1)};
  loom_tensor_metadata_t b = {LOOM_DTYPE_FLOAT, make(dims, 1)};
  assert_true(loom_tensor_metadata_equal(&a, &b));
}

static void metadata_with_different_dtypes_are_not_equal(void** state) {
  (void)state;
  const int64_t dims[1] = {5};
  loom_tensor_metadata_t a = {LOOM_DTYPE_FLOAT, make(dims, 1)};
  loom_tensor_metadata_t b = {LOOM_DTYPE_INT32, make(dims, 1)};
  assert_false(loom_tensor_metadata_equal(&a, &b));
}

static void metadata_with_different_shapes_are_not_equal(void** state) {
  (void)state;
  const int64_t dims[2] = {5, 1};
  loom_tensor_metadata_t a = {LOOM_DTYPE_FLOAT, make(dims, 1)};
  loom_tensor_metadata_t b = {LOOM_DTYPE_FLOAT, make(dims, 2)};
  assert_false(loom_tensor_metadata_equal(&a, &b));
}

static void metadata_formats_short_dtype_name_and_shape(void** state) {
  (void)state;
  const int64_t dims[2] = {5, LOOM_UNKNOWN_DIM};
  loom_tensor_metadata_t metadata = {LOOM_DTYPE_FLOAT, make(dims, 2)};
  char text[64];
  assert_int_equal(loom_tensor_metadata_format(&metadata, text, sizeof(text)),
                   strlen("f32 [5, ?]"));
  assert_string_equal(text, "f32 [5, ?]");
}

static void metadata_format_truncates_and_returns_the_full_length(
    void** state) {
  (void)state;
  loom_tensor_metadata_t metadata = {LOOM_DTYPE_INT64, loom_shape_unknown()};
  char text[6];
  assert_int_equal(loom_tensor_metadata_format(&metadata, text, sizeof(text)),
                   strlen("i64 <unknown>"));
  assert_string_equal(text, "i64 <");
}

//===----------------------------------------------------------------------===//
// Ranks above LOOM_MAX_RANK
//===----------------------------------------------------------------------===//

static loom_shape_t make_large(const int64_t* dims, int rank) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize_large(&shape, dims, rank));
  return shape;
}

static void large_shapes_keep_their_dims_in_the_pool(void** state) {
  (void)state;
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int i = 0; i < LOOM_MAX_SHAPE_RANK; ++i) dims[i] = 1;
  dims[3] = 5;
  dims[LOOM_MAX_SHAPE_RANK - 1] = 7;
  loom_shape_t a = make_large(dims, LOOM_MAX_SHAPE_RANK);
  assert_int_equal(a.rank, LOOM_MAX_SHAPE_RANK);
  const int64_t* spilled = loom_shape_dims(&a);
  assert_ptr_not_equal(spilled, dims);  // the pool's copy
  assert_int_equal(spilled[3], 5);
  assert_int_equal(spilled[LOOM_MAX_SHAPE_RANK - 1], 7);
  assert_int_equal(loom_shape_num_elements(&a), 35);
  assert_true(loom_shape_is_fully_defined(&a));
  // The same dims share the pool's copy; other dims do not.
  loom_shape_t b = make_large(dims, LOOM_MAX_SHAPE_RANK);
  assert_ptr_equal(loom_shape_dims(&b), spilled);
  assert_true(loom_shape_equal(&a, &b));
  dims[3] = LOOM_UNKNOWN_DIM;
  loom_shape_t c = make_large(dims, LOOM_MAX_SHAPE_RANK);
  assert_false(loom_shape_equal(&a, &c));
  assert_true(loom_shape_is_compatible(&a, &c));
  assert_false(loom_shape_is_fully_defined(&c));
  assert_int_equal(loom_shape_num_elements(&c), -1);
  // A copy is a plain struct copy.
  loom_shape_t copy = a;
  assert_true(loom_shape_equal(&copy, &a));
}

static void large_initialize_keeps_small_ranks_inline(void** state) {
  (void)state;
  const int64_t dims[3] = {2, 3, 4};
  loom_shape_t shape = make_large(dims, 3);
  assert_ptr_equal(loom_shape_dims(&shape), shape.dims);
  loom_shape_t inline_shape = make(dims, 3);
  assert_true(loom_shape_equal(&shape, &inline_shape));
}

static void large_shapes_print_every_dim(void** state) {
  (void)state;
  const int64_t dims[10] = {2, 1, 1, 1, 1, 1, 1, 1, LOOM_UNKNOWN_DIM, 3};
  loom_shape_t shape = make_large(dims, 10);
  char text[64];
  assert_int_equal(loom_shape_format(&shape, text, sizeof(text)),
                   strlen("[2, 1, 1, 1, 1, 1, 1, 1, ?, 3]"));
  assert_string_equal(text, "[2, 1, 1, 1, 1, 1, 1, 1, ?, 3]");
  loom_tensor_metadata_t metadata = {.dtype = LOOM_DTYPE_FLOAT, .shape = shape};
  assert_true(loom_tensor_metadata_format(&metadata, text, sizeof(text)) > 0);
  assert_string_equal(text, "f32 [2, 1, 1, 1, 1, 1, 1, 1, ?, 3]");
}

static void large_initialize_rejects_rank_255_and_bad_dims(void** state) {
  (void)state;
  int64_t dims[LOOM_MAX_SHAPE_RANK + 1];
  for (int i = 0; i <= LOOM_MAX_SHAPE_RANK; ++i) dims[i] = 1;
  loom_shape_t shape;
  LOOM_ASSERT_STATUS(
      loom_shape_initialize_large(&shape, dims, LOOM_MAX_SHAPE_RANK + 1),
      LOOM_STATUS_INVALID_ARGUMENT, "shape rank 255 is outside [0, 254]");
  dims[9] = -2;
  LOOM_ASSERT_STATUS(loom_shape_initialize_large(&shape, dims, 12),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "shape dimension 9 is -2; dimensions must be >= 0 or -1");
  LOOM_ASSERT_STATUS(loom_shape_initialize_large(NULL, dims, 12),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_shape_initialize_large: out_shape is NULL");
}

// Runs last: it fills the process's pool.
static void a_full_pool_refuses_new_large_shapes_only(void** state) {
  (void)state;
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int i = 0; i < LOOM_MAX_SHAPE_RANK; ++i) dims[i] = 1;
  loom_shape_t kept = make_large(dims, LOOM_MAX_SHAPE_RANK);
  loom_status_t status = loom_ok_status();
  int64_t made = 0;
  for (int64_t k = 2; status == NULL; ++k, ++made) {
    dims[0] = k;  // distinct dims each time
    loom_shape_t shape;
    status = loom_shape_initialize_large(&shape, dims, LOOM_MAX_SHAPE_RANK);
  }
  // About LOOM_SHAPE_POOL_BYTES / (254 * 8 bytes).
  assert_true(made > 4000 && made < 9000);
  LOOM_ASSERT_STATUS(status, LOOM_STATUS_RESOURCE_EXHAUSTED,
                     "the pool of shapes above rank 8 is full");
  // Dims already in the pool are still found; small ranks are unaffected.
  dims[0] = 1;
  loom_shape_t again = make_large(dims, LOOM_MAX_SHAPE_RANK);
  assert_ptr_equal(loom_shape_dims(&again), loom_shape_dims(&kept));
  const int64_t small[2] = {3, 4};
  loom_shape_t inline_shape = make_large(small, 2);
  assert_int_equal(loom_shape_num_elements(&inline_shape), 12);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(initialize_copies_rank_and_dims),
      cmocka_unit_test(initialize_accepts_unknown_dimensions),
      cmocka_unit_test(initialize_accepts_zero_dimensions),
      cmocka_unit_test(initialize_accepts_rank_zero_with_null_dims),
      cmocka_unit_test(initialize_accepts_the_maximum_rank),
      cmocka_unit_test(initialize_accepts_int64_max_dimension),
      cmocka_unit_test(initialize_rejects_rank_above_the_maximum),
      cmocka_unit_test(initialize_rejects_negative_rank),
      cmocka_unit_test(initialize_rejects_minus_two_naming_the_dimension),
      cmocka_unit_test(initialize_rejects_int64_min_dimension),
      cmocka_unit_test(initialize_rejects_null_dims_with_positive_rank),
      cmocka_unit_test(initialize_rejects_null_out_shape),
      cmocka_unit_test(scalar_has_rank_zero),
      cmocka_unit_test(scalar_equals_an_initialized_rank_zero_shape),
      cmocka_unit_test(scalar_is_fully_defined),
      cmocka_unit_test(unknown_has_unknown_rank),
      cmocka_unit_test(unknown_is_not_fully_defined),
      cmocka_unit_test(shape_with_an_unknown_dim_is_not_fully_defined),
      cmocka_unit_test(shape_of_known_dims_is_fully_defined),
      cmocka_unit_test(num_elements_is_the_product_of_dims),
      cmocka_unit_test(num_elements_of_scalar_is_one),
      cmocka_unit_test(num_elements_with_an_empty_dim_is_zero),
      cmocka_unit_test(num_elements_with_an_empty_dim_after_huge_dims_is_zero),
      cmocka_unit_test(num_elements_with_an_unknown_dim_is_minus_one),
      cmocka_unit_test(num_elements_with_unknown_and_empty_dims_is_minus_one),
      cmocka_unit_test(num_elements_of_unknown_rank_is_minus_one),
      cmocka_unit_test(num_elements_that_overflow_is_minus_one),
      cmocka_unit_test(num_elements_just_past_int64_max_is_minus_one),
      cmocka_unit_test(num_elements_up_to_int64_max_is_exact),
      cmocka_unit_test(shapes_with_the_same_dims_are_equal),
      cmocka_unit_test(shapes_with_different_dims_are_not_equal),
      cmocka_unit_test(shapes_with_different_ranks_are_not_equal),
      cmocka_unit_test(unknown_dim_equals_only_unknown_dim),
      cmocka_unit_test(unknown_rank_equals_unknown_rank),
      cmocka_unit_test(unknown_rank_does_not_equal_scalar),
      cmocka_unit_test(unknown_dim_is_compatible_with_any_size),
      cmocka_unit_test(different_known_dims_are_incompatible),
      cmocka_unit_test(different_ranks_are_incompatible),
      cmocka_unit_test(unknown_rank_is_compatible_with_every_shape),
      cmocka_unit_test(equal_shapes_are_compatible),
      cmocka_unit_test(format_prints_known_dims),
      cmocka_unit_test(format_prints_unknown_dims_as_question_marks),
      cmocka_unit_test(format_prints_scalar_as_empty_brackets),
      cmocka_unit_test(format_prints_unknown_rank),
      cmocka_unit_test(format_prints_the_widest_shape_in_full),
      cmocka_unit_test(format_truncates_and_returns_the_full_length),
      cmocka_unit_test(
          format_with_room_for_all_but_the_nul_drops_the_last_char),
      cmocka_unit_test(format_truncates_unknown_rank),
      cmocka_unit_test(format_with_capacity_one_writes_an_empty_string),
      cmocka_unit_test(format_with_no_buffer_only_measures),
      cmocka_unit_test(metadata_with_same_dtype_and_shape_are_equal),
      cmocka_unit_test(metadata_with_different_dtypes_are_not_equal),
      cmocka_unit_test(metadata_with_different_shapes_are_not_equal),
      cmocka_unit_test(metadata_formats_short_dtype_name_and_shape),
      cmocka_unit_test(metadata_format_truncates_and_returns_the_full_length),
      cmocka_unit_test(large_shapes_keep_their_dims_in_the_pool),
      cmocka_unit_test(large_initialize_keeps_small_ranks_inline),
      cmocka_unit_test(large_shapes_print_every_dim),
      cmocka_unit_test(large_initialize_rejects_rank_255_and_bad_dims),
      cmocka_unit_test(a_full_pool_refuses_new_large_shapes_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
