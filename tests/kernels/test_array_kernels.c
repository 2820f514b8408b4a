// The data-movement kernels beyond what the conformance cases see: outputs
// that are views of their input (no copy), SCALAR host tensors handed to
// kernels through loom_kernel_run, the transpose panels and row loops at
// every ISA level this CPU runs, outputs large enough for the paths
// that stream (non-temporal stores) or split copies over the pool, and the
// checks only kernels make (loom_kernel_run has no shape function).

#include <stdlib.h>

#include "kernels/array_internal.h"
#include "loom/loom.h"
#include "test_support.h"

static loom_host_context_t* g_host;

static loom_tensor_t* make_f32(int rank, const int64_t* dims) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  float* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < loom_tensor_num_elements(tensor); ++i) {
    data[i] = (float)i;
  }
  return tensor;
}

static loom_tensor_t* make_i32(int64_t n, const int32_t* values) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &n, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_INT32, &shape, &tensor));
  memcpy(loom_tensor_data(tensor), values, sizeof(int32_t) * (size_t)n);
  return tensor;
}

static loom_tensor_t* scalar_i32(int32_t value) {
  loom_shape_t shape = loom_shape_scalar();
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_INT32, &shape, &tensor));
  *(int32_t*)loom_tensor_data(tensor) = value;
  return tensor;
}

// Runs `op` (the inputs are consumed) and returns its `count` outputs.
static void run(const char* op, loom_tensor_t** inputs, int32_t num_inputs,
                const loom_op_attrs_t* attrs, loom_tensor_t** outputs,
                int32_t count) {
  loom_kernel_run_options_t options = {.host = g_host};
  int32_t produced = 0;
  LOOM_ASSERT_OK(loom_kernel_run(&options, op, inputs, num_inputs, attrs,
                                 outputs, count, &produced));
  assert_int_equal(produced, count);
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

static void reshape_expand_squeeze_identity_share_the_buffer(void** state) {
  (void)state;
  const int64_t dims[] = {2, 3, 4};
  loom_tensor_t* x = make_f32(3, dims);
  const float* data = loom_tensor_data(x);
  loom_tensor_retain(x);
  const int32_t sizes[] = {4, -1};
  loom_tensor_t* in[2] = {x, make_i32(2, sizes)};
  loom_tensor_t* reshaped = NULL;
  run("Reshape", in, 2, NULL, &reshaped, 1);
  assert_ptr_equal(loom_tensor_data(reshaped), data);
  assert_int_equal(loom_tensor_shape(reshaped)->dims[1], 6);

  in[0] = reshaped;
  in[1] = scalar_i32(0);
  loom_tensor_t* expanded = NULL;
  run("ExpandDims", in, 2, NULL, &expanded, 1);
  assert_ptr_equal(loom_tensor_data(expanded), data);
  assert_int_equal(loom_tensor_shape(expanded)->rank, 3);

  in[0] = expanded;
  loom_tensor_t* squeezed = NULL;
  run("Squeeze", in, 1, NULL, &squeezed, 1);
  assert_ptr_equal(loom_tensor_data(squeezed), data);
  assert_int_equal(loom_tensor_shape(squeezed)->rank, 2);

  in[0] = squeezed;
  loom_tensor_t* same = NULL;
  run("Identity", in, 1, NULL, &same, 1);
  assert_ptr_equal(loom_tensor_data(same), data);

  in[0] = same;
  loom_tensor_t* stopped = NULL;
  run("StopGradient", in, 1, NULL, &stopped, 1);
  assert_ptr_equal(loom_tensor_data(stopped), data);
  loom_tensor_release(stopped);
  loom_tensor_release(x);
}

static void reshape_of_strings_shares_the_elements(void** state) {
  (void)state;
  const int64_t dims[] = {2, 2};
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, 2));
  loom_tensor_t* x = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_create_string(loom_allocator_default(), &shape, &x));
  for (int64_t i = 0; i < 4; ++i) {
    LOOM_ASSERT_OK(loom_tstring_copy(loom_tensor_string_at(x, i),
                                     "a string longer than inline", 27));
  }
  loom_tensor_retain(x);
  const int32_t sizes[] = {4};
  loom_tensor_t* in[2] = {x, make_i32(1, sizes)};
  loom_tensor_t* out = NULL;
  run("Reshape", in, 2, NULL, &out, 1);
  assert_ptr_equal(loom_tensor_string_at(out, 3), loom_tensor_string_at(x, 3));
  loom_tensor_release(out);
  // Once the input is gone the view still owns the strings.
  loom_tensor_release(x);
}

static void outer_pieces_are_views_when_aligned(void** state) {
  (void)state;
  // Rows of 16 floats: 64-byte aligned pieces.
  const int64_t dims[] = {4, 16};
  loom_tensor_t* x = make_f32(2, dims);
  const float* data = loom_tensor_data(x);
  loom_tensor_retain(x);
  loom_tensor_t* in[2] = {scalar_i32(0), x};
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_default());
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "num_split", 4));
  loom_tensor_t* pieces[4] = {NULL};
  run("Split", in, 2, &attrs, pieces, 4);
  for (int k = 0; k < 4; ++k) {
    assert_ptr_equal(loom_tensor_data(pieces[k]), data + 16 * k);
    loom_tensor_release(pieces[k]);
  }
  loom_op_attrs_deinitialize(&attrs);

  const int32_t begin[] = {2, 0}, size[] = {2, -1};
  loom_tensor_retain(x);
  loom_tensor_t* slice_in[3] = {x, make_i32(2, begin), make_i32(2, size)};
  loom_tensor_t* slice = NULL;
  run("Slice", slice_in, 3, NULL, &slice, 1);
  assert_ptr_equal(loom_tensor_data(slice), data + 32);
  loom_tensor_release(slice);

  // Rows of 3 floats: unaligned pieces are copied.
  const int64_t odd_dims[] = {4, 3};
  loom_tensor_t* y = make_f32(2, odd_dims);
  const float* odd = loom_tensor_data(y);
  loom_tensor_retain(y);
  loom_op_attrs_initialize(&attrs, loom_allocator_default());
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "num", 4));
  loom_tensor_t* rows[4] = {NULL};
  in[0] = y;
  run("Unpack", in, 1, &attrs, rows, 4);
  assert_ptr_equal(loom_tensor_data(rows[0]), odd);
  for (int k = 1; k < 4; ++k) {
    assert_ptr_not_equal(loom_tensor_data(rows[k]), odd + 3 * k);
    assert_true(((const float*)loom_tensor_data(rows[k]))[2] ==
                (float)(3 * k + 2));
  }
  for (int k = 0; k < 4; ++k) loom_tensor_release(rows[k]);
  loom_op_attrs_deinitialize(&attrs);
  loom_tensor_release(x);
  loom_tensor_release(y);
}

//===----------------------------------------------------------------------===//
// SCALAR host tensors
//===----------------------------------------------------------------------===//

static loom_tensor_t* scalar_f32(int rank, const int64_t* dims, float value) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_default(), LOOM_DTYPE_FLOAT, &shape, &value, &tensor));
  return tensor;
}

static void scalar_host_tensors_are_expanded(void** state) {
  (void)state;
  const int64_t dims[] = {3, 4};
  const int32_t perm[] = {1, 0};
  loom_tensor_t* in[3] = {scalar_f32(2, dims, 7.0f), make_i32(2, perm), NULL};
  loom_tensor_t* out = NULL;
  run("Transpose", in, 2, NULL, &out, 1);
  assert_int_equal(loom_tensor_kind(out), LOOM_TENSOR_DENSE);
  assert_int_equal(loom_tensor_shape(out)->dims[0], 4);
  for (int i = 0; i < 12; ++i) {
    assert_true(((const float*)loom_tensor_data(out))[i] == 7.0f);
  }
  loom_tensor_release(out);

  in[0] = scalar_f32(2, dims, 1.0f);
  in[1] = make_f32(2, dims);
  in[2] = scalar_i32(1);
  run("ConcatV2", in, 3, NULL, &out, 1);
  const float* data = loom_tensor_data(out);
  assert_int_equal(loom_tensor_shape(out)->dims[1], 8);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) {
      assert_true(data[r * 8 + c] == 1.0f);
      assert_true(data[r * 8 + 4 + c] == (float)(r * 4 + c));
    }
  }
  loom_tensor_release(out);

  const int32_t rows[] = {2, 0, 2};
  in[0] = scalar_f32(2, dims, 3.5f);
  in[1] = make_i32(3, rows);
  run("Gather", in, 2, NULL, &out, 1);
  assert_int_equal(loom_tensor_num_elements(out), 12);
  assert_true(((const float*)loom_tensor_data(out))[11] == 3.5f);
  loom_tensor_release(out);

  // A view of a SCALAR tensor is a SCALAR tensor of the new shape.
  const int32_t sizes[] = {12};
  in[0] = scalar_f32(2, dims, 2.0f);
  in[1] = make_i32(1, sizes);
  run("Reshape", in, 2, NULL, &out, 1);
  assert_int_equal(loom_tensor_kind(out), LOOM_TENSOR_SCALAR);
  assert_int_equal(loom_tensor_shape(out)->dims[0], 12);
  loom_tensor_release(out);
}

//===----------------------------------------------------------------------===//
// Loops at every ISA level
//===----------------------------------------------------------------------===//

static const loom__transpose_table_t* const kPanels[LOOM_ISA_LEVELS] = {
    &loom__transpose_panels_baseline, &loom__transpose_panels_avx2,
    &loom__transpose_panels_avx512};
static const loom__array_row_table_t* const kRows[LOOM_ISA_LEVELS] = {
    &loom__array_rows_baseline, &loom__array_rows_avx2,
    &loom__array_rows_avx512};

static void transpose_panels_match_a_naive_transpose(void** state) {
  (void)state;
  static const size_t kSizes[5] = {1, 2, 4, 8, 16};
  // Rows and columns around the block sizes; strides that keep output
  // rows line-aligned (streaming) and ones that do not.
  static const int64_t kRowsCols[][2] = {{64, 64}, {13, 29}, {8, 8},
                                         {3, 100}, {70, 5},  {16, 1}};
  enum { kMaxBytes = 128 * 128 * 16 };
  unsigned char* src = NULL;
  unsigned char* dst = NULL;
  LOOM_ASSERT_OK(loom_allocator_malloc_aligned(loom_allocator_default(),
                                               kMaxBytes, 64, (void**)&src));
  LOOM_ASSERT_OK(loom_allocator_malloc_aligned(loom_allocator_default(),
                                               kMaxBytes, 64, (void**)&dst));
  for (int i = 0; i < kMaxBytes; ++i) src[i] = (unsigned char)(i * 7 + 3);
  for (int level = 0; level <= (int)loom__isa_level(); ++level) {
    for (int s = 0; s < 5; ++s) {
      size_t size = kSizes[s];
      for (size_t c = 0; c < sizeof(kRowsCols) / sizeof(kRowsCols[0]); ++c) {
        int64_t rows = kRowsCols[c][0], cols = kRowsCols[c][1];
        for (int stream = 0; stream < 2; ++stream) {
          // Input row stride cols + 3; output row stride 128 (aligned) or
          // rows + 1.
          int64_t ss = cols + 3, ds = stream ? 128 : rows + 1;
          memset(dst, 0xee, kMaxBytes);
          (*kPanels[level])[s](src, ss, dst, ds, rows, cols, stream);
          for (int64_t i = 0; i < rows; ++i) {
            for (int64_t j = 0; j < cols; ++j) {
              assert_memory_equal(dst + (size_t)(j * ds + i) * size,
                                  src + (size_t)(i * ss + j) * size, size);
            }
          }
        }
      }
    }
  }
  loom_allocator_free(loom_allocator_default(), src);
  loom_allocator_free(loom_allocator_default(), dst);
}

static void row_loops_match_a_naive_copy(void** state) {
  (void)state;
  static const int64_t kStrides[][2] = {{1, 1}, {0, 1}, {-1, 1}, {2, 1},
                                        {3, 1}, {1, 2}, {0, 3},  {5, 4}};
  enum { kN = 37, kBytes = 16 * 1024 };
  unsigned char* src = malloc(kBytes);
  unsigned char* dst = malloc(kBytes);
  unsigned char* want = malloc(kBytes);
  assert_non_null(src);
  assert_non_null(dst);
  assert_non_null(want);
  for (int i = 0; i < kBytes; ++i) src[i] = (unsigned char)(i * 13 + 1);
  for (int level = 0; level <= (int)loom__isa_level(); ++level) {
    for (int s = 0; s < 5; ++s) {
      int64_t size = (int64_t)1 << s;
      for (size_t k = 0; k < sizeof(kStrides) / sizeof(kStrides[0]); ++k) {
        int64_t ss = kStrides[k][0], ds = kStrides[k][1];
        // Reversed rows start at their last element.
        const unsigned char* from = src + (ss < 0 ? (kN - 1) * size : 0);
        memset(dst, 0, kBytes);
        memset(want, 0, kBytes);
        kRows[level]->rows[s](from, ss, dst, ds, kN);
        for (int64_t i = 0; i < kN; ++i) {
          memcpy(want + i * ds * size, from + i * ss * size, (size_t)size);
        }
        assert_memory_equal(dst, want, kBytes);
      }
    }
  }
  free(src);
  free(dst);
  free(want);
}

//===----------------------------------------------------------------------===//
// Large outputs
//===----------------------------------------------------------------------===//

static void large_outputs_are_written_correctly(void** state) {
  (void)state;
  enum { kN = 1600 };  // 1600 x 1600 floats: 10 MB
  const int64_t dims[] = {kN, kN};
  const int32_t perm[] = {1, 0};
  loom_tensor_t* x = make_f32(2, dims);
  const float* data = loom_tensor_data(x);
  loom_tensor_retain(x);
  loom_tensor_t* in[4] = {x, make_i32(2, perm)};
  loom_tensor_t* out = NULL;
  run("Transpose", in, 2, NULL, &out, 1);
  const float* t = loom_tensor_data(out);
  for (int64_t i = 0; i < kN; ++i) {
    for (int64_t j = 0; j < kN; ++j) {
      if (t[j * kN + i] != data[i * kN + j])
        fail_msg("transpose row %ld", (long)i);
    }
  }
  loom_tensor_release(out);

  loom_tensor_retain(x);
  loom_tensor_retain(x);
  in[0] = x;
  in[1] = x;
  in[2] = scalar_i32(1);
  run("ConcatV2", in, 3, NULL, &out, 1);
  const float* c = loom_tensor_data(out);
  for (int64_t i = 0; i < kN; ++i) {
    if (memcmp(c + i * 2 * kN, data + i * kN, kN * sizeof(float)) != 0 ||
        memcmp(c + i * 2 * kN + kN, data + i * kN, kN * sizeof(float)) != 0) {
      fail_msg("concat row %ld", (long)i);
    }
  }
  loom_tensor_release(out);

  // x[::-1, 1:] reversed rows, shifted columns.
  const int32_t begin[] = {0, 1}, end[] = {0, kN}, strides[] = {-1, 1};
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_default());
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "begin_mask", 1));
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "end_mask", 1));
  loom_tensor_retain(x);
  in[0] = x;
  in[1] = make_i32(2, begin);
  in[2] = make_i32(2, end);
  in[3] = make_i32(2, strides);
  run("StridedSlice", in, 4, &attrs, &out, 1);
  const float* s = loom_tensor_data(out);
  for (int64_t i = 0; i < kN; ++i) {
    if (memcmp(s + i * (kN - 1), data + (kN - 1 - i) * kN + 1,
               (kN - 1) * sizeof(float)) != 0) {
      fail_msg("strided slice row %ld", (long)i);
    }
  }
  loom_tensor_release(out);
  loom_op_attrs_deinitialize(&attrs);

  // Every row twice, in reverse.
  int32_t* rows = malloc(sizeof(int32_t) * 2 * kN);
  assert_non_null(rows);
  for (int i = 0; i < 2 * kN; ++i) rows[i] = kN - 1 - i / 2;
  loom_tensor_retain(x);
  in[0] = x;
  in[1] = make_i32(2 * kN, rows);
  free(rows);
  run("Gather", in, 2, NULL, &out, 1);
  const float* g = loom_tensor_data(out);
  for (int64_t i = 0; i < 2 * kN; ++i) {
    if (memcmp(g + i * kN, data + (kN - 1 - i / 2) * kN, kN * sizeof(float)) !=
        0) {
      fail_msg("gather row %ld", (long)i);
    }
  }
  loom_tensor_release(out);
  loom_tensor_release(x);
}

//===----------------------------------------------------------------------===//
// Shape functions on partly known inputs
//===----------------------------------------------------------------------===//

// Runs op's shape function on `shapes` (with values where `tensors` has
// them) and returns output 0's shape.
static loom_shape_t infer(const char* name, const loom_shape_t* shapes,
                          const loom_dtype_t* dtypes,
                          loom_tensor_t* const* tensors, int32_t n,
                          const loom_op_attrs_t* caller_attrs) {
  const loom_op_def_t* op = NULL;
  LOOM_ASSERT_OK(loom_op_registry_lookup(loom_op_registry_global(), name, &op));
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_default());
  LOOM_ASSERT_OK(loom_op_attrs_merge(&attrs, caller_attrs));
  LOOM_ASSERT_OK(loom_op_def_complete_attrs(op, dtypes, n, &attrs));
  loom_shape_t out[4];
  LOOM_ASSERT_OK(loom_op_def_infer_shapes(op, &attrs, shapes, dtypes, tensors,
                                          n, out, op->num_outputs));
  loom_op_attrs_deinitialize(&attrs);
  return out[0];
}

static loom_shape_t dims_of(int rank, int64_t d0, int64_t d1, int64_t d2) {
  loom_shape_t shape = loom_shape_scalar();
  shape.rank = rank;
  shape.dims[0] = d0;
  shape.dims[1] = d1;
  shape.dims[2] = d2;
  return shape;
}

static void shape_functions_keep_what_is_unknown_unknown(void** state) {
  (void)state;
  const int64_t U = LOOM_UNKNOWN_DIM;
  loom_dtype_t f32_i32[4] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_INT32,
                             LOOM_DTYPE_INT32, LOOM_DTYPE_INT32};
  // Reshape [?, 4] to [-1, 2]: the unknown stays unknown.
  const int32_t sizes[] = {-1, 2};
  loom_tensor_t* sizes_t = make_i32(2, sizes);
  loom_shape_t in[4] = {dims_of(2, U, 4, 0), dims_of(1, 2, 0, 0)};
  loom_tensor_t* values[4] = {NULL, sizes_t, NULL, NULL};
  loom_shape_t out = infer("Reshape", in, f32_i32, values, 2, NULL);
  assert_int_equal(out.rank, 2);
  assert_true(out.dims[0] == U && out.dims[1] == 2);
  // ... and without the sizes' values only the rank is known.
  values[1] = NULL;
  out = infer("Reshape", in, f32_i32, values, 2, NULL);
  assert_true(out.rank == 2 && out.dims[0] == U && out.dims[1] == U);
  loom_tensor_release(sizes_t);

  // Transpose of an unknown rank, and of a known one without perm values.
  in[0] = loom_shape_unknown();
  in[1] = dims_of(1, 3, 0, 0);
  out = infer("Transpose", in, f32_i32, values, 2, NULL);
  assert_int_equal(out.rank, LOOM_UNKNOWN_RANK);
  in[0] = dims_of(3, 2, U, 5);
  out = infer("Transpose", in, f32_i32, values, 2, NULL);
  assert_true(out.rank == 3 && out.dims[0] == U && out.dims[2] == U);

  // ConcatV2 of [2, ?] and [2, 3] along 1: [2, ?]; along 0: [4, 3].
  loom_dtype_t concat_types[3] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT,
                                  LOOM_DTYPE_INT32};
  loom_shape_t concat_in[3] = {dims_of(2, 2, U, 0), dims_of(2, 2, 3, 0),
                               loom_shape_scalar()};
  loom_tensor_t* axis = scalar_i32(1);
  loom_tensor_t* concat_values[3] = {NULL, NULL, axis};
  out = infer("ConcatV2", concat_in, concat_types, concat_values, 3, NULL);
  assert_true(out.rank == 2 && out.dims[0] == 2 && out.dims[1] == U);
  *(int32_t*)loom_tensor_data(axis) = 0;
  out = infer("ConcatV2", concat_in, concat_types, concat_values, 3, NULL);
  assert_true(out.rank == 2 && out.dims[0] == 4 && out.dims[1] == 3);
  loom_tensor_release(axis);

  // Concat (v1: the axis first) keeps what is unknown unknown too.
  loom_dtype_t concat_v1_types[3] = {LOOM_DTYPE_INT32, LOOM_DTYPE_FLOAT,
                                     LOOM_DTYPE_FLOAT};
  loom_shape_t concat_v1_in[3] = {loom_shape_scalar(), dims_of(2, 2, U, 0),
                                  dims_of(2, 2, 3, 0)};
  loom_tensor_t* dim = scalar_i32(1);
  loom_tensor_t* concat_v1_values[3] = {dim, NULL, NULL};
  out =
      infer("Concat", concat_v1_in, concat_v1_types, concat_v1_values, 3, NULL);
  assert_true(out.rank == 2 && out.dims[0] == 2 && out.dims[1] == U);
  *(int32_t*)loom_tensor_data(dim) = 0;
  out =
      infer("Concat", concat_v1_in, concat_v1_types, concat_v1_values, 3, NULL);
  assert_true(out.rank == 2 && out.dims[0] == 4 && out.dims[1] == 3);
  loom_tensor_release(dim);

  // StridedSlice with strides known, bounds not: shrunk dims are gone,
  // masked dims whole, the others unknown.
  const int32_t strides[] = {1, 1, 1};
  loom_tensor_t* strides_t = make_i32(3, strides);
  loom_shape_t slice_in[4] = {dims_of(3, 4, 5, 6), dims_of(1, 3, 0, 0),
                              dims_of(1, 3, 0, 0), dims_of(1, 3, 0, 0)};
  loom_tensor_t* slice_values[4] = {NULL, NULL, NULL, strides_t};
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_default());
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "shrink_axis_mask", 1));
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "begin_mask", 2));
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "end_mask", 2));
  out = infer("StridedSlice", slice_in, f32_i32, slice_values, 4, &attrs);
  assert_true(out.rank == 2 && out.dims[0] == 5 && out.dims[1] == U);
  loom_op_attrs_deinitialize(&attrs);
  loom_tensor_release(strides_t);

  // Where without the value: [?, rank].
  loom_dtype_t bool_type = LOOM_DTYPE_BOOL;
  loom_shape_t where_in = dims_of(3, 2, 3, 4);
  loom_tensor_t* no_value = NULL;
  out = infer("Where", &where_in, &bool_type, &no_value, 1, NULL);
  assert_true(out.rank == 2 && out.dims[0] == U && out.dims[1] == 3);

  // GatherV2 without the axis' value: rank params + indices - 1.
  loom_dtype_t gather_types[3] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_INT32,
                                  LOOM_DTYPE_INT32};
  loom_shape_t gather_in[3] = {dims_of(3, 4, 5, 6), dims_of(2, 7, 8, 0),
                               loom_shape_scalar()};
  loom_tensor_t* gather_values[3] = {NULL, NULL, NULL};
  out = infer("GatherV2", gather_in, gather_types, gather_values, 3, NULL);
  assert_true(out.rank == 4 && out.dims[0] == U);
}

//===----------------------------------------------------------------------===//
// Checks only a kernel makes
//===----------------------------------------------------------------------===//

// Runs `op` (the inputs are consumed) expecting it to fail; returns the
// status.
static loom_status_t run_failing(const char* op, loom_tensor_t** inputs,
                                 int32_t num_inputs, int32_t num_outputs) {
  loom_kernel_run_options_t options = {.host = g_host};
  loom_tensor_t* outputs[2] = {NULL, NULL};
  int32_t produced = 0;
  loom_status_t status = loom_kernel_run(&options, op, inputs, num_inputs, NULL,
                                         outputs, num_outputs, &produced);
  for (int32_t i = 0; i < produced; ++i) loom_tensor_release(outputs[i]);
  return status;
}

// loom_kernel_run skips shape functions: these checks of TensorFlow's
// kernels are the only ones such a caller meets.
static void kernels_check_what_shape_functions_would(void** state) {
  (void)state;
  const int64_t square[] = {2, 2};
  loom_tensor_t* x = make_f32(2, square);
  loom_tensor_t* perm = NULL;
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, square, 2));
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_INT32, &shape, &perm));
  memset(loom_tensor_data(perm), 0, 4 * sizeof(int32_t));
  LOOM_ASSERT_STATUS(run_failing("InvertPermutation", &perm, 1, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "invert_permutation expects a 1D vector.");

  loom_tensor_retain(x);
  loom_tensor_t* reverse_in[2] = {x, scalar_i32(0)};
  LOOM_ASSERT_STATUS(run_failing("ReverseV2", reverse_in, 2, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "'dims' must be 1-dimension, not 0");

  const int64_t wide[] = {2, 3}, tall[] = {3, 2};
  loom_tensor_t* leaky_in[2] = {make_f32(2, wide), make_f32(2, tall)};
  LOOM_ASSERT_STATUS(
      run_failing("LeakyReluGrad", leaky_in, 2, 1),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Inputs to operation LeakyReluGrad of type LeakyReluGrad must have the "
      "same size and shape.  Input 0: [2,3] != input 1: [3,2]");
  loom_tensor_release(x);
}

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_builtin_ops_register());
  LOOM_ASSERT_OK(loom_host_context_create(NULL, &g_host));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_host_context_destroy(g_host);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reshape_expand_squeeze_identity_share_the_buffer),
      cmocka_unit_test(reshape_of_strings_shares_the_elements),
      cmocka_unit_test(outer_pieces_are_views_when_aligned),
      cmocka_unit_test(scalar_host_tensors_are_expanded),
      cmocka_unit_test(transpose_panels_match_a_naive_transpose),
      cmocka_unit_test(row_loops_match_a_naive_copy),
      cmocka_unit_test(large_outputs_are_written_correctly),
      cmocka_unit_test(shape_functions_keep_what_is_unknown_unknown),
      cmocka_unit_test(kernels_check_what_shape_functions_would),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
