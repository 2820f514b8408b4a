"""MatMul and BatchMatMulV2 against NumPy: transposes / adjoints, batch
broadcasting, empty and zero-depth products, 16-bit floats computed in
float, wrapping integer products, and TensorFlow's shape errors."""

import numpy as np

from casegen import BFloat16, Case, round_bfloat16

DTYPES = [np.float32, np.float64, np.float16, "bfloat16", np.int32, np.int64]


def _name(dtype):
    return "bfloat16" if dtype == "bfloat16" else np.dtype(dtype).name


def _random(rng, dtype, shape):
    if dtype in (np.int32, np.int64):
        return rng.integers(-20, 20, size=shape, endpoint=True).astype(dtype)
    values = rng.standard_normal(shape)
    if dtype == "bfloat16":
        return round_bfloat16(values.astype(np.float32))
    return values.astype(dtype)


def _wrap(values, dtype):
    return BFloat16(values) if dtype == "bfloat16" else values


def _product(x, y, dtype):
    if dtype in (np.int32, np.int64):
        return np.matmul(x, y).astype(dtype)
    z = np.matmul(x.astype(np.float64), y.astype(np.float64))
    if dtype == "bfloat16":
        return BFloat16(z.astype(np.float32))
    return z.astype(dtype)


def _tolerance(dtype, k):
    if dtype == np.float32:
        return dict(rtol=1e-5, atol=1e-6 * (k + 1))
    if dtype == np.float64:
        return dict(rtol=1e-12, atol=1e-13 * (k + 1))
    if dtype == np.float16:
        return dict(rtol=2e-3, atol=2e-3)
    if dtype == "bfloat16":
        return dict(rtol=1.6e-2, atol=1.6e-2)
    return {}


def _transpose_last(x):
    return np.swapaxes(x, -1, -2)


# name: (shape of op(a), shape of op(b)) as products see them.
MATMUL_SHAPES = {
    "small": ((2, 3), (3, 4)),
    "row_column": ((1, 5), (5, 1)),
    "outer": ((4, 1), (1, 3)),
    "empty_rows": ((0, 3), (3, 4)),
    "zero_depth": ((2, 0), (0, 3)),
}
LARGE_MATMUL = {"large": ((150, 120), (120, 130))}

BATCH_SHAPES = {
    "same_batch": ((2, 3, 4), (2, 4, 5)),
    "broadcast_batch": ((2, 1, 3, 4), (3, 4, 2)),
    "rank2_rank3": ((3, 4), (2, 4, 5)),
    "rank2_both": ((3, 4), (4, 2)),
    "empty_batch": ((0, 3, 4), (4, 5)),
}
LARGE_BATCH = {
    "large_odd_batch": ((3, 96, 80), (3, 80, 112)),
    "large_even_batch": ((8, 64, 64), (8, 64, 64)),
}


def _matmul_cases(rng):
    out = []
    for dtype in DTYPES:
        shapes = dict(MATMUL_SHAPES)
        if dtype in (np.float32, np.int32):
            shapes.update(LARGE_MATMUL)
        for shape_name, (sa, sb) in shapes.items():
            for ta in (False, True):
                for tb in (False, True):
                    if (ta or tb) and shape_name != "small" and not (
                            shape_name == "large" and dtype == np.float32 and
                            ta == tb):
                        continue
                    x = _random(rng, dtype, sa)
                    y = _random(rng, dtype, sb)
                    a = x.T.copy() if ta else x
                    b = y.T.copy() if tb else y
                    attrs = {}
                    if ta:
                        attrs["transpose_a"] = ("bool", True)
                    if tb:
                        attrs["transpose_b"] = ("bool", True)
                    suffix = ("_ta" if ta else "") + ("_tb" if tb else "")
                    out.append(Case(
                        "MatMul_%s_%s%s" % (_name(dtype), shape_name, suffix),
                        "MatMul", [_wrap(a, dtype), _wrap(b, dtype)],
                        [_product(x, y, dtype)], attrs,
                        **_tolerance(dtype, sa[1])))
    # Integer products wrap as TensorFlow's (two's complement).
    x = np.array([[100000, 3]], np.int32)
    y = np.array([[100000], [7]], np.int32)
    out.append(Case("MatMul_int32_wraps", "MatMul", [x, y],
                    [np.matmul(x.astype(np.int64), y.astype(np.int64))
                     .astype(np.int32)]))
    return out


def _batch_cases(rng):
    out = []
    for dtype in DTYPES:
        shapes = dict(BATCH_SHAPES)
        if dtype in (np.float32, np.int64):
            shapes.update(LARGE_BATCH)
        for shape_name, (sa, sb) in shapes.items():
            for adj_x, adj_y in ((False, False), (True, False), (False, True),
                                 (True, True)):
                if (adj_x or adj_y) and shape_name not in (
                        "same_batch", "broadcast_batch"):
                    continue
                x = _random(rng, dtype, sa)
                y = _random(rng, dtype, sb)
                a = _transpose_last(x).copy() if adj_x else x
                b = _transpose_last(y).copy() if adj_y else y
                attrs = {}
                if adj_x:
                    attrs["adj_x"] = ("bool", True)
                if adj_y:
                    attrs["adj_y"] = ("bool", True)
                suffix = ("_adjx" if adj_x else "") + ("_adjy" if adj_y else "")
                out.append(Case(
                    "BatchMatMulV2_%s_%s%s" % (_name(dtype), shape_name,
                                               suffix),
                    "BatchMatMulV2", [_wrap(a, dtype), _wrap(b, dtype)],
                    [_product(x, y, dtype)], attrs,
                    **_tolerance(dtype, sa[-1])))
    return out


# Outer products (k = 1; written without a GEMM) and batches of matrices
# times one matrix (run as one product of all their rows), with every
# adjoint, over several batch sizes and dtypes.
OUTER_SHAPES = {
    "outer_b1": ((1, 4, 1), (1, 1, 3)),
    "outer_b3": ((3, 7, 1), (3, 1, 5)),
    "outer_b8_wide": ((8, 2, 1), (8, 1, 37)),
    "outer_broadcast": ((2, 1, 5, 1), (3, 1, 6)),
    "batch_times_matrix": ((4, 3, 5), (5, 2)),
    "batch_times_batch1": ((2, 3, 2, 5), (1, 5, 4)),
    "batch_rows_times_matrix": ((6, 1, 9), (9, 11)),
}


def _outer_cases(rng):
    out = []
    for dtype in (np.float32, np.float64, np.float16, "bfloat16", np.int32):
        for shape_name, (sa, sb) in OUTER_SHAPES.items():
            for adj_x, adj_y in ((False, False), (True, False), (False, True),
                                 (True, True)):
                x = _random(rng, dtype, sa)
                y = _random(rng, dtype, sb)
                a = _transpose_last(x).copy() if adj_x else x
                b = _transpose_last(y).copy() if adj_y else y
                attrs = {}
                if adj_x:
                    attrs["adj_x"] = ("bool", True)
                if adj_y:
                    attrs["adj_y"] = ("bool", True)
                suffix = ("_adjx" if adj_x else "") + ("_adjy" if adj_y else "")
                out.append(Case(
                    "BatchMatMulV2_%s_%s%s" % (_name(dtype), shape_name,
                                               suffix),
                    "BatchMatMulV2", [_wrap(a, dtype), _wrap(b, dtype)],
                    [_product(x, y, dtype)], attrs,
                    **_tolerance(dtype, sa[-1])))
    return out


def _error_cases():
    f32 = np.float32
    return [
        Case("MatMul_size_incompatible", "MatMul",
             [np.zeros((2, 2), f32), np.zeros((3, 2), f32)],
             error=("INVALID_ARGUMENT",
                    "Matrix size-incompatible: In[0]: [2,2], In[1]: [3,2]")),
        Case("MatMul_size_incompatible_transposed", "MatMul",
             [np.zeros((2, 3), f32), np.zeros((3, 3), f32)],
             attrs={"transpose_a": ("bool", True)},
             error=("INVALID_ARGUMENT",
                    "Matrix size-incompatible: In[0]: [2,3], In[1]: [3,3]")),
        Case("MatMul_rank3", "MatMul",
             [np.zeros((1, 2, 2), f32), np.zeros((1, 2, 2), f32)],
             error=("INVALID_ARGUMENT",
                    "In[0] and In[1] ndims must be == 2: 3")),
        Case("MatMul_different_ranks", "MatMul",
             [np.zeros((7,), f32), np.zeros((7, 1), f32)],
             error=("INVALID_ARGUMENT",
                    "In[0] and In[1] has different ndims: [7] vs. [7,1]")),
        Case("MatMul_mixed_dtypes", "MatMul",
             [np.zeros((2, 2), f32), np.zeros((2, 2), np.int32)],
             error=("INVALID_ARGUMENT", "MatMul")),
        Case("MatMul_bool_not_allowed", "MatMul",
             [np.zeros((2, 2), np.bool_), np.zeros((2, 2), np.bool_)],
             error=("INVALID_ARGUMENT", "not in the list of allowed")),
        Case("BatchMatMulV2_rank1", "BatchMatMulV2",
             [np.zeros((3,), f32), np.zeros((3, 2), f32)],
             error=("INVALID_ARGUMENT", "In[0] ndims must be >= 2: 1")),
        Case("BatchMatMulV2_rank1_second", "BatchMatMulV2",
             [np.zeros((2, 3), f32), np.zeros((3,), f32)],
             error=("INVALID_ARGUMENT", "In[1] ndims must be >= 2: 1")),
        Case("BatchMatMulV2_batch_incompatible", "BatchMatMulV2",
             [np.zeros((2, 3, 4), f32), np.zeros((3, 4, 5), f32)],
             error=("INVALID_ARGUMENT",
                    "In[0] and In[1] must have compatible batch dimensions: "
                    "[2,3,4] vs. [3,4,5]")),
        Case("BatchMatMulV2_size_incompatible", "BatchMatMulV2",
             [np.zeros((2, 3, 4), f32), np.zeros((2, 5, 4), f32)],
             error=("INVALID_ARGUMENT",
                    "Matrix size-incompatible: In[0]: [2,3,4], In[1]: "
                    "[2,5,4]")),
    ]


def cases():
    rng = np.random.default_rng(20261125)
    return (_matmul_cases(rng) + _batch_cases(rng) + _error_cases() +
            _outer_cases(np.random.default_rng(20261127)))
