"""Shape and data-movement ops (Identity ... Const) against NumPy.

Every op runs on every dtype it takes (numbers, bool, complex and strings
for the pure data-movement ops) on a small shape, and on f32 (sometimes
int64 or strings) across its shape classes: rank 0, empty tensors,
negative axes, views (Reshape, Squeeze, slices of the outermost dim) and
sizes just above the threaded threshold. Errors check TensorFlow's
messages.
"""

import numpy as np

from casegen import BFloat16, Case

F32 = np.float32
I32 = np.int32
I64 = np.int64

# Every dtype the data-movement kernels take; "bfloat16" and "string" are
# made by _make.
ALL = ["float32", "float64", "float16", "bfloat16", "int8", "int16",
       "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
       "complex64", "complex128", "string"]
POD = [d for d in ALL if d != "string"]

_WORDS = ["", "a", "loom", "tensor", "a string longer than twenty-two bytes",
          "\u00e9t\u00e9", "x" * 40, "zz"]


def _make(rng, dtype, shape):
    """Random values of `dtype` (a name) and `shape`."""
    shape = tuple(shape)
    if dtype == "string":
        picks = rng.integers(0, len(_WORDS), size=shape)
        out = np.empty(shape, dtype=object)
        for index in np.ndindex(*shape):
            out[index] = _WORDS[picks[index]] + str(index)
        return out
    if dtype == "bfloat16":
        return BFloat16(rng.standard_normal(shape).astype(np.float32))
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) +
                1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith("float"):
        return (rng.standard_normal(shape) * 10).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), size=shape,
                        endpoint=True).astype(dtype)


def _big(rng, shape, dtype=np.int32):
    """Values for the threaded cases: small integers keep the file small."""
    return rng.integers(0, 100, size=shape).astype(dtype)


def _apply(fn, *values):
    """fn on the arrays of values, keeping bfloat16 as bfloat16."""
    arrays = [v.values if isinstance(v, BFloat16) else v for v in values]
    result = fn(*arrays)
    if any(isinstance(v, BFloat16) for v in values):
        if isinstance(result, (list, tuple)):
            return [BFloat16(r) for r in result]
        return BFloat16(result)
    return result


def _err(name, op, inputs, text, attrs=None, outputs=1):
    return Case(name, op, inputs, attrs=attrs or {},
                error=("INVALID_ARGUMENT", text), outputs=outputs)


def _shape_ops(rng):
    out = []
    # Identity, IdentityN.
    for dtype in ALL:
        x = _make(rng, dtype, (3, 4))
        out.append(Case("Identity_%s" % dtype, "Identity", [x], [x]))
    for name, shape in (("scalar", ()), ("empty", (0, 3))):
        x = _make(rng, "float32", shape)
        out.append(Case("Identity_float32_%s" % name, "Identity", [x], [x]))
    values = [_make(rng, "float32", (2, 3)), _make(rng, "string", (2,)),
              np.array(7, I64)]
    out.append(Case("IdentityN_mixed", "IdentityN", values, values))
    # StopGradient: the identity in the forward pass.
    for dtype in ("float32", "float64", "int32", "bool", "string"):
        x = _make(rng, dtype, (2, 3))
        out.append(Case("StopGradient_%s" % dtype, "StopGradient", [x], [x]))
    out.append(Case("StopGradient_float32_empty", "StopGradient",
                    [np.zeros((0, 3), F32)], [np.zeros((0, 3), F32)]))
    # Reshape.
    for dtype in ALL:
        x = _make(rng, dtype, (2, 3))
        out.append(Case("Reshape_%s" % dtype, "Reshape",
                        [x, np.array([3, 2], I32)],
                        [_apply(lambda a: a.reshape(3, 2), x)]))
    x = _make(rng, "float32", (2, 3, 4))
    for name, shape in (("infer_first", [-1, 4]), ("infer_last", [6, -1]),
                        ("flatten", [-1]), ("rank4", [2, 1, 3, 4])):
        out.append(Case("Reshape_float32_%s" % name, "Reshape",
                        [x, np.array(shape, I64)], [x.reshape(shape)]))
    s = np.array(5.0, F32)
    out.append(Case("Reshape_float32_scalar_to_vector", "Reshape",
                    [s, np.array([1], I32)], [s.reshape(1)]))
    out.append(Case("Reshape_float32_vector_to_scalar", "Reshape",
                    [s.reshape(1), np.zeros((0,), I32)], [s]))
    e = np.zeros((0, 4), F32)
    out.append(Case("Reshape_float32_empty_infer", "Reshape",
                    [e, np.array([-1, 2], I32)], [e.reshape(0, 2)]))
    out.append(_err("Reshape_count_mismatch", "Reshape",
                    [x, np.array([5, 5], I32)],
                    "Input to reshape is a tensor with 24 values, but the "
                    "requested shape has 25"))
    out.append(_err("Reshape_not_a_multiple", "Reshape",
                    [x, np.array([5, -1], I32)],
                    "Input to reshape is a tensor with 24 values, but the "
                    "requested shape requires a multiple of 5"))
    out.append(_err("Reshape_two_unknown", "Reshape",
                    [x, np.array([-1, -1], I32)],
                    "Only one input size may be -1, not both 0 and 1"))
    out.append(_err("Reshape_negative_size", "Reshape",
                    [x, np.array([-2, 12], I32)],
                    "Size 0 must be non-negative, not -2"))
    out.append(_err("Reshape_shape_not_vector", "Reshape",
                    [x, np.array([[24]], I32)],
                    "sizes input must be 1-D, not [1,1]"))
    # Shape, Size, Rank.
    for dtype in ("float32", "string", "bool"):
        x = _make(rng, dtype, (2, 3, 4))
        out.append(Case("Shape_%s" % dtype, "Shape", [x],
                        [np.array([2, 3, 4], I32)]))
    out.append(Case("Shape_float32_int64", "Shape",
                    [np.zeros((5, 0), F32)], [np.array([5, 0], I64)],
                    attrs={"out_type": ("type", "int64")}))
    out.append(Case("Shape_float32_scalar", "Shape", [np.array(1.0, F32)],
                    [np.zeros((0,), I32)]))
    # ShapeN: one shape vector per input.
    xs = [_make(rng, "float32", (2, 3, 4)), _make(rng, "float32", (5,)),
          np.array(7, F32), np.zeros((3, 0), F32)]
    out.append(Case("ShapeN_float32_four", "ShapeN", xs,
                    [np.array(x.shape, I32) for x in xs]))
    strings = [_make(rng, "string", (2, 1)), _make(rng, "string", (4,))]
    out.append(Case("ShapeN_string", "ShapeN", strings,
                    [np.array(x.shape, I32) for x in strings]))
    out.append(Case("ShapeN_int64", "ShapeN", xs[:2],
                    [np.array(x.shape, I64) for x in xs[:2]],
                    attrs={"out_type": ("type", "int64")}))
    out.append(Case("ShapeN_one", "ShapeN", xs[:1],
                    [np.array([2, 3, 4], I32)]))
    huge = np.zeros((3, 2 ** 40, 0), F32)
    out.append(Case("ShapeN_huge_dim_int64", "ShapeN", [xs[0], huge],
                    [np.array([2, 3, 4], I64), np.array([3, 2 ** 40, 0], I64)],
                    attrs={"out_type": ("type", "int64")}))
    out.append(_err("ShapeN_huge_dim_int32", "ShapeN", [xs[0], huge],
                    "ShapeN output type is 32-bit but shape 1 dim 1 is "
                    "1099511627776", outputs=2))
    out.append(_err("Shape_huge_dim_int32", "Shape", [huge],
                    "Shape output type is 32-bit but dim 1 is 1099511627776"))
    for name, shape in (("matrix", (2, 3)), ("scalar", ()), ("empty", (4, 0))):
        x = _make(rng, "float32", shape)
        out.append(Case("Size_float32_%s" % name, "Size", [x],
                        [np.array(x.size, I32)]))
        out.append(Case("Rank_float32_%s" % name, "Rank", [x],
                        [np.array(x.ndim, I32)]))
    out.append(Case("Size_string_int64", "Size", [_make(rng, "string", (3,))],
                    [np.array(3, I64)], attrs={"out_type": ("type", "int64")}))
    # ExpandDims.
    for dtype in ALL:
        x = _make(rng, dtype, (2, 3))
        out.append(Case("ExpandDims_%s" % dtype, "ExpandDims",
                        [x, np.array(1, I32)],
                        [_apply(lambda a: np.expand_dims(a, 1), x)]))
    x = _make(rng, "float32", (2, 3))
    for axis in (0, 2, -1, -3):
        out.append(Case("ExpandDims_float32_axis%d" % axis, "ExpandDims",
                        [x, np.array(axis, I64)], [np.expand_dims(x, axis)]))
    out.append(Case("ExpandDims_float32_scalar", "ExpandDims",
                    [np.array(3.0, F32), np.array(0, I32)],
                    [np.array([3.0], F32)]))
    out.append(Case("ExpandDims_float32_dim_vector", "ExpandDims",
                    [x, np.array([0], I32)], [np.expand_dims(x, 0)]))
    out.append(_err("ExpandDims_out_of_range", "ExpandDims",
                    [x, np.array(3, I32)],
                    "Tried to expand dim index 3 for tensor with 2 dimensions."))
    out.append(_err("ExpandDims_not_single", "ExpandDims",
                    [x, np.array([0, 1], I32)],
                    "'dim' must be a tensor with a single value"))
    # Squeeze.
    for dtype in ALL:
        x = _make(rng, dtype, (1, 3, 1))
        out.append(Case("Squeeze_%s" % dtype, "Squeeze", [x],
                        [_apply(np.squeeze, x)]))
    x = _make(rng, "float32", (1, 2, 1, 3, 1))
    for dims in ([0], [2, -1], [-5]):
        out.append(Case("Squeeze_float32_dims_%s" % "_".join(
            str(d).replace("-", "m") for d in dims), "Squeeze", [x],
            [np.squeeze(x, axis=tuple(dims))],
            attrs={"squeeze_dims": ("ints", dims)}))
    out.append(Case("Squeeze_float32_to_scalar", "Squeeze",
                    [np.ones((1, 1), F32)], [np.array(1.0, F32)]))
    out.append(Case("Squeeze_float32_empty", "Squeeze",
                    [np.zeros((0, 1), F32)], [np.zeros((0,), F32)]))
    out.append(_err("Squeeze_not_one", "Squeeze", [x],
                    "Can not squeeze dim[1], expected a dimension of 1, got 2",
                    attrs={"squeeze_dims": ("ints", [1])}))
    out.append(_err("Squeeze_out_of_range", "Squeeze", [x],
                    "Tried to squeeze dim index 5 for tensor with 5 "
                    "dimensions.", attrs={"squeeze_dims": ("ints", [5])}))
    # Const.
    for dtype in ("float32", "int64", "bool", "string", "complex64",
                  "float16"):
        value = _make(rng, dtype, (2, 3))
        out.append(Case("Const_%s" % dtype, "Const", [], [value],
                        attrs={"value": ("tensor", value),
                               "dtype": ("type", _tf_name(dtype))}))
    value = np.array(2.5, F32)
    out.append(Case("Const_float32_scalar", "Const", [], [value],
                    attrs={"value": ("tensor", value),
                           "dtype": ("type", "float")}))
    out.append(_err("Const_type_mismatch", "Const", [],
                    "Type mismatch between value (float) and dtype (int32)",
                    attrs={"value": ("tensor", value),
                           "dtype": ("type", "int32")}))
    # Fill.
    for dtype in ALL:
        value = _make(rng, dtype, ())
        out.append(Case("Fill_%s" % dtype, "Fill",
                        [np.array([2, 3], I32), value],
                        [_apply(lambda v: np.full((2, 3), v, dtype=v.dtype),
                                value)]))
    v = np.array(1.5, F32)
    out.append(Case("Fill_float32_scalar", "Fill", [np.zeros((0,), I32), v],
                    [v]))
    out.append(Case("Fill_float32_empty", "Fill", [np.array([3, 0], I64), v],
                    [np.zeros((3, 0), F32)]))
    out.append(Case("Fill_int32_large", "Fill",
                    [np.array([200, 500], I32), np.array(7, I32)],
                    [np.full((200, 500), 7, I32)]))
    out.append(_err("Fill_negative", "Fill", [np.array([2, -1], I32), v],
                    "Fill dimensions must be >= 0"))
    out.append(_err("Fill_value_not_scalar", "Fill",
                    [np.array([2], I32), np.array([1.0, 2.0], F32)],
                    "value must be a scalar, got shape [2]"))
    out.append(_err("Fill_dims_not_vector", "Fill",
                    [np.array([[2]], I32), v],
                    "dims must be a vector, got shape [1,1]"))
    # ZerosLike, OnesLike.
    for dtype in ALL:
        x = _make(rng, dtype, (2, 3))
        if dtype == "string":
            zeros = np.full((2, 3), "", dtype=object)
        else:
            zeros = _apply(np.zeros_like, x)
        out.append(Case("ZerosLike_%s" % dtype, "ZerosLike", [x], [zeros]))
        if dtype != "string":
            out.append(Case("OnesLike_%s" % dtype, "OnesLike", [x],
                            [_apply(np.ones_like, x)]))
    x = _make(rng, "float32", (0, 3))
    out.append(Case("ZerosLike_float32_empty", "ZerosLike", [x], [x]))
    out.append(Case("OnesLike_float32_scalar", "OnesLike",
                    [np.array(3.0, F32)], [np.array(1.0, F32)]))
    x = _big(rng, (200, 400))
    out.append(Case("OnesLike_int32_large", "OnesLike", [x],
                    [np.ones_like(x)]))
    # Range.
    for dtype, (a, b, d) in (("int32", (0, 10, 3)), ("int64", (10, -5, -4)),
                             ("float32", (0.5, 3.0, 0.5)),
                             ("float64", (-1.0, 1.0, 0.25)),
                             ("int8", (1, 9, 2)), ("int16", (5, 5, 1)),
                             ("uint16", (2, 11, 3)), ("uint32", (0, 4, 1)),
                             ("float16", (0.0, 2.0, 0.5)),
                             ("bfloat16", (4.0, 0.0, -1.0))):
        if dtype == "bfloat16":
            inputs = [BFloat16(np.array(v, F32)) for v in (a, b, d)]
            expect = BFloat16(np.arange(a, b, d, dtype=F32))
        else:
            inputs = [np.array(v, dtype) for v in (a, b, d)]
            expect = np.arange(a, b, d, dtype=dtype)
        out.append(Case("Range_%s" % dtype, "Range", inputs, [expect]))
    out.append(Case("Range_int32_large", "Range",
                    [np.array(v, I32) for v in (3, 40003, 2)],
                    [np.arange(3, 40003, 2, dtype=I32)]))
    out.append(_err("Range_zero_delta", "Range",
                    [np.array(v, I32) for v in (0, 5, 0)],
                    "Requires delta != 0: 0"))
    out.append(_err("Range_wrong_direction", "Range",
                    [np.array(v, I32) for v in (5, 1, 1)],
                    "Requires start <= limit when delta > 0: 5/1"))
    out.append(_err("Range_wrong_direction_negative", "Range",
                    [np.array(v, F32) for v in (1, 5, -1)],
                    "Requires start >= limit when delta < 0: 1/5"))
    out.append(_err("Range_start_not_scalar", "Range",
                    [np.array([1, 2], I32), np.array(5, I32),
                     np.array(1, I32)],
                    "start must be a scalar, not shape [2]"))
    # BroadcastGradientArgs.
    for name, (a, b) in (("row", ([2, 3], [3])), ("column", ([2, 1], [2, 3])),
                         ("ones", ([1, 1], [1])), ("same", ([4, 5], [4, 5])),
                         ("scalar", ([], [2, 2])), ("outer", ([5, 1], [1, 6]))):
        r0, r1 = _gradient_args(a, b)
        for dtype in (I32, I64):
            out.append(Case("BroadcastGradientArgs_%s_%s" % (
                np.dtype(dtype).name, name), "BroadcastGradientArgs",
                [np.array(a, dtype), np.array(b, dtype)],
                [np.array(r0, dtype), np.array(r1, dtype)]))
    out.append(_err("BroadcastGradientArgs_incompatible",
                    "BroadcastGradientArgs",
                    [np.array([2, 3], I32), np.array([4], I32)],
                    "Incompatible shapes: [2,3] vs. [4]", outputs=2))
    return out


def _tf_name(dtype):
    return {"float32": "float", "float64": "double", "float16": "half"}.get(
        dtype, dtype)


def _gradient_args(a, b):
    rank = max(len(a), len(b))
    pa = [1] * (rank - len(a)) + list(a)
    pb = [1] * (rank - len(b)) + list(b)
    r0, r1 = [], []
    for i in range(rank):
        if pa[i] == 1 and pb[i] == 1:
            r0.append(i)
            r1.append(i)
        elif pa[i] == 1:
            r0.append(i)
        elif pb[i] == 1:
            r1.append(i)
    return r0, r1


def _transpose(rng):
    out = []
    for dtype in ALL:
        x = _make(rng, dtype, (3, 5))
        out.append(Case("Transpose_%s" % dtype, "Transpose",
                        [x, np.array([1, 0], I32)],
                        [_apply(lambda a: a.T.copy(), x)]))
    # Tile edges for each element size: 1, 2, 4, 8, 16 bytes and strings.
    for dtype in ("uint8", "float16", "float32", "float64", "complex128",
                  "string"):
        x = _make(rng, dtype, (19, 37))
        out.append(Case("Transpose_%s_ragged" % dtype, "Transpose",
                        [x, np.array([1, 0], I64)],
                        [_apply(lambda a: a.T.copy(), x)]))
        x = _make(rng, dtype, (2, 9, 3, 17))
        out.append(Case("Transpose_%s_4d" % dtype, "Transpose",
                        [x, np.array([3, 0, 2, 1], I32)],
                        [_apply(lambda a: a.transpose(3, 0, 2, 1).copy(), x)]))
    x = _make(rng, "float32", (4, 6, 8))
    for perm in ((0, 2, 1), (2, 0, 1), (1, 0, 2), (1, 2, 0), (0, 1, 2),
                 (2, 1, 0)):
        out.append(Case("Transpose_float32_perm%s" % "".join(map(str, perm)),
                        "Transpose", [x, np.array(perm, I32)],
                        [x.transpose(perm).copy()]))
    x = _make(rng, "float32", (3, 1, 4, 1))
    out.append(Case("Transpose_float32_unit_dims_move", "Transpose",
                    [x, np.array([1, 0, 3, 2], I32)],
                    [x.transpose(1, 0, 3, 2).copy()]))
    out.append(Case("Transpose_float32_scalar", "Transpose",
                    [np.array(2.0, F32), np.zeros((0,), I32)],
                    [np.array(2.0, F32)]))
    x = np.zeros((0, 3), F32)
    out.append(Case("Transpose_float32_empty", "Transpose",
                    [x, np.array([1, 0], I32)], [x.T.copy()]))
    for dtype, shape in ((I32, (300, 300)), (I64, (200, 300))):
        x = _big(rng, shape, dtype)
        out.append(Case("Transpose_%s_large" % np.dtype(dtype).name,
                        "Transpose", [x, np.array([1, 0], I32)], [x.T.copy()]))
    x = _big(rng, (5, 70, 300))
    out.append(Case("Transpose_int32_large_batched", "Transpose",
                    [x, np.array([0, 2, 1], I32)],
                    [x.transpose(0, 2, 1).copy()]))
    x = _big(rng, (30000, 3))
    out.append(Case("Transpose_int32_large_narrow", "Transpose",
                    [x, np.array([1, 0], I32)], [x.T.copy()]))
    x = _make(rng, "float32", (2, 3))
    out.append(_err("Transpose_wrong_size", "Transpose",
                    [x, np.array([0, 1, 2], I32)],
                    "transpose expects a vector of size 2. But input(1) is a "
                    "vector of size 3"))
    out.append(_err("Transpose_out_of_range", "Transpose",
                    [x, np.array([0, 2], I32)], "2 is out of range [0 .. 2)"))
    out.append(_err("Transpose_duplicate", "Transpose",
                    [x, np.array([1, 1], I32)], "0 is missing from {1,1}."))
    out.append(Case("Transpose_float_perm", "Transpose",
                    [x, np.array([1.0, 0.0], F32)],
                    error=("INVALID_ARGUMENT", "not in the list of allowed")))
    out.append(_err("Transpose_perm_not_vector", "Transpose",
                    [x, np.array([[1, 0]], I32)],
                    "perm must be rank 1, got shape [1,2]"))
    return out


def _invert_permutation(rng):
    out = []
    for dtype in (I32, I64):
        for n in (0, 1, 7, 1000):
            p = rng.permutation(n).astype(dtype)
            out.append(Case("InvertPermutation_%s_%d" % (np.dtype(dtype).name,
                                                         n),
                            "InvertPermutation", [p],
                            [np.argsort(p).astype(dtype)],
                            attrs={"T": ("type", np.dtype(dtype).name)}))
    out.append(_err("InvertPermutation_out_of_range", "InvertPermutation",
                    [np.array([0, 3, 1], I32)], "3 is not between 0 and 3"))
    out.append(_err("InvertPermutation_negative", "InvertPermutation",
                    [np.array([0, -1], I64)], "-1 is not between 0 and 2"))
    out.append(_err("InvertPermutation_duplicate", "InvertPermutation",
                    [np.array([1, 0, 1], I32)], "1 is duplicated in the input."))
    out.append(_err("InvertPermutation_matrix", "InvertPermutation",
                    [np.zeros((2, 2), I32)], "Shape must be rank 1 but is "
                    "rank 2"))
    out.append(Case("InvertPermutation_float", "InvertPermutation",
                    [np.zeros(2, F32)],
                    error=("INVALID_ARGUMENT", "InvertPermutation")))
    return out


def _reverse(rng):
    out = []
    for dtype in ALL:
        x = _make(rng, dtype, (2, 3, 4))
        out.append(Case("ReverseV2_%s" % dtype, "ReverseV2",
                        [x, np.array([1], I32)],
                        [_apply(lambda a: np.flip(a, 1).copy(), x)]))
    x = _make(rng, "float32", (2, 3, 4))
    for axes in ([], [0], [2], [-1], [0, 2], [2, 0, 1], [-3, -2]):
        name = "_".join(str(a).replace("-", "m") for a in axes) or "none"
        out.append(Case("ReverseV2_float32_axes_%s" % name, "ReverseV2",
                        [x, np.array(axes, I64)],
                        [np.flip(x, axes).copy() if axes else x]))
    big = _big(rng, (300, 400))
    out.append(Case("ReverseV2_int32_large", "ReverseV2",
                    [big, np.array([0, 1], I32)], [np.flip(big).copy()]))
    # A scalar or an empty tensor is its own reverse.
    e = np.zeros((3, 0), F32)
    out.append(Case("ReverseV2_float32_empty", "ReverseV2",
                    [e, np.array([1], I32)], [e]))
    out.append(_err("ReverseV2_axis_out_of_range", "ReverseV2",
                    [x, np.array([3], I32)],
                    "'axis'[0] = 3 is out of valid range [0, 2"))
    out.append(_err("ReverseV2_axis_negative_out_of_range", "ReverseV2",
                    [x, np.array([0, -4], I32)],
                    "'axis'[1] = -4 is out of valid range [0, 2"))
    out.append(_err("ReverseV2_axis_twice", "ReverseV2",
                    [x, np.array([1, -2], I32)],
                    "axis 1 specified more than once."))
    out.append(_err("ReverseV2_axis_scalar", "ReverseV2",
                    [x, np.array(1, I32)],
                    "Shape must be rank 1 but is rank 0"))
    return out


def _concat(rng):
    out = []
    for dtype in ALL:
        a, b = _make(rng, dtype, (2, 3)), _make(rng, dtype, (1, 3))
        out.append(Case("ConcatV2_%s" % dtype, "ConcatV2",
                        [a, b, np.array(0, I32)],
                        [_apply(lambda x, y: np.concatenate([x, y]), a, b)]))
    a = _make(rng, "float32", (2, 3, 4))
    b = _make(rng, "float32", (2, 1, 4))
    c = _make(rng, "float32", (2, 5, 4))
    out.append(Case("ConcatV2_float32_axis1_three", "ConcatV2",
                    [a, b, c, np.array(1, I64)],
                    [np.concatenate([a, b, c], axis=1)]))
    d = _make(rng, "float32", (2, 3, 7))
    out.append(Case("ConcatV2_float32_negative_axis", "ConcatV2",
                    [a, d, np.array(-1, I32)],
                    [np.concatenate([a, d], axis=-1)]))
    e = np.zeros((2, 0, 4), F32)
    out.append(Case("ConcatV2_float32_with_empty", "ConcatV2",
                    [a, e, b, np.array(1, I32)],
                    [np.concatenate([a, e, b], axis=1)]))
    out.append(Case("ConcatV2_float32_one_nonempty", "ConcatV2",
                    [e, a, np.array(1, I32)], [a]))
    out.append(Case("ConcatV2_float32_all_empty", "ConcatV2",
                    [e, e, np.array(1, I32)], [np.zeros((2, 0, 4), F32)]))
    out.append(Case("ConcatV2_float32_vectors", "ConcatV2",
                    [np.arange(3, dtype=F32), np.arange(2, dtype=F32),
                     np.array(0, I32)],
                    [np.array([0, 1, 2, 0, 1], F32)]))
    many = [_make(rng, "int64", (2, k % 3 + 1)) for k in range(20)]
    out.append(Case("ConcatV2_int64_twenty_inputs", "ConcatV2",
                    many + [np.array(1, I32)],
                    [np.concatenate(many, axis=1)]))
    for axis in (0, 1):
        a = _big(rng, (300, 200))
        b = _big(rng, (300, 200))
        out.append(Case("ConcatV2_int32_large_axis%d" % axis, "ConcatV2",
                        [a, b, np.array(axis, I32)],
                        [np.concatenate([a, b], axis=axis)]))
    s = _make(rng, "string", (100, 20))
    out.append(Case("ConcatV2_string_large", "ConcatV2",
                    [s, s, np.array(1, I32)], [np.concatenate([s, s], 1)]))
    a = _make(rng, "float32", (2, 3))
    out.append(_err("ConcatV2_rank_mismatch", "ConcatV2",
                    [a, np.zeros((3,), F32), np.array(0, I32)],
                    "ConcatOp : Ranks of all input tensors should match: "
                    "shape[0] = [2,3] vs. shape[1] = [3]"))
    out.append(_err("ConcatV2_dims_mismatch", "ConcatV2",
                    [a, np.zeros((3, 4), F32), np.array(0, I32)],
                    "ConcatOp : Dimensions of inputs should match: shape[0] = "
                    "[2,3] vs. shape[1] = [3,4]"))
    out.append(_err("ConcatV2_axis_out_of_range", "ConcatV2",
                    [a, a, np.array(2, I32)],
                    "ConcatOp : Expected concatenating dimensions in the "
                    "range [-2, 2), but got 2"))
    out.append(_err("ConcatV2_scalars", "ConcatV2",
                    [np.array(1.0, F32), np.array(2.0, F32),
                     np.array(0, I32)],
                    "Can't concatenate scalars (use tf.stack instead)"))
    out.append(_err("ConcatV2_axis_not_scalar", "ConcatV2",
                    [a, a, np.array([0, 1], I32)],
                    "axis tensor should be a scalar integer, but got shape "
                    "[2]"))
    out.append(Case("ConcatV2_mixed_dtypes", "ConcatV2",
                    [a, np.zeros((2, 3), I32), np.array(0, I32)],
                    error=("INVALID_ARGUMENT", "ConcatV2")))
    # Concat (v1): concat_dim (int32 only) comes before the values.
    for dtype in ALL:
        a, b = _make(rng, dtype, (2, 3)), _make(rng, dtype, (2, 2))
        out.append(Case("Concat_%s" % dtype, "Concat",
                        [np.array(1, I32), a, b],
                        [_apply(lambda x, y: np.concatenate([x, y], 1),
                                a, b)]))
    xs = [_make(rng, "float32", (k, 2, 3)) for k in (1, 3, 2)]
    out.append(Case("Concat_float32_three_axis0", "Concat",
                    [np.array(0, I32)] + xs, [np.concatenate(xs, 0)]))
    ys = [_make(rng, "float64", (2, 3, k)) for k in (4, 1)]
    out.append(Case("Concat_float64_negative_axis", "Concat",
                    [np.array(-1, I32)] + ys, [np.concatenate(ys, -1)]))
    out.append(Case("Concat_float64_axis_as_vector", "Concat",
                    [np.array([2], I32)] + ys, [np.concatenate(ys, 2)]))
    e = np.zeros((2, 0, 4), F32)
    f = _make(rng, "float32", (2, 3, 4))
    out.append(Case("Concat_float32_with_empty", "Concat",
                    [np.array(1, I32), e, f, e],
                    [np.concatenate([e, f, e], 1)]))
    big = [_big(rng, (200, 150)) for _ in range(3)]
    out.append(Case("Concat_int32_large_axis1", "Concat",
                    [np.array(1, I32)] + big, [np.concatenate(big, 1)]))
    a = _make(rng, "float32", (2, 3))
    out.append(_err("Concat_rank_mismatch", "Concat",
                    [np.array(0, I32), a, np.zeros((3,), F32)],
                    "ConcatOp : Ranks of all input tensors should match: "
                    "shape[0] = [2,3] vs. shape[1] = [3]"))
    out.append(_err("Concat_dims_mismatch", "Concat",
                    [np.array(1, I32), a, np.zeros((3, 4), F32)],
                    "ConcatOp : Dimensions of inputs should match: shape[0] = "
                    "[2,3] vs. shape[1] = [3,4]"))
    out.append(_err("Concat_axis_out_of_range", "Concat",
                    [np.array(-3, I32), a, a],
                    "ConcatOp : Expected concatenating dimensions in the "
                    "range [-2, 2), but got -3"))
    out.append(_err("Concat_axis_not_scalar", "Concat",
                    [np.array([0, 1], I32), a, a],
                    "concat_dim tensor should be a scalar integer, but got "
                    "shape [2]"))
    out.append(Case("Concat_int64_axis", "Concat",
                    [np.array(0, I64), a, a],
                    error=("INVALID_ARGUMENT", "Concat")))
    # Pack.
    for dtype in ALL:
        a, b = _make(rng, dtype, (2, 3)), _make(rng, dtype, (2, 3))
        out.append(Case("Pack_%s" % dtype, "Pack", [a, b],
                        [_apply(lambda x, y: np.stack([x, y]), a, b)]))
    xs = [_make(rng, "float32", (2, 3)) for _ in range(3)]
    for axis in (1, 2, -1, -3):
        out.append(Case("Pack_float32_axis%d" % axis, "Pack", xs,
                        [np.stack(xs, axis=axis)],
                        attrs={"axis": ("int", axis)}))
    out.append(Case("Pack_float32_one", "Pack", xs[:1], [np.stack(xs[:1])]))
    scalars = [np.array(v, F32) for v in (1, 2, 3)]
    out.append(Case("Pack_float32_scalars", "Pack", scalars,
                    [np.array([1, 2, 3], F32)]))
    big = [_big(rng, (100, 300)) for _ in range(3)]
    out.append(Case("Pack_int32_large_axis1", "Pack", big,
                    [np.stack(big, axis=1)], attrs={"axis": ("int", 1)}))
    out.append(_err("Pack_shape_mismatch", "Pack",
                    [np.zeros((2,), F32), np.zeros((3,), F32)],
                    "Shapes of all inputs must match: values[0].shape = [2] "
                    "!= values[1].shape = [3]"))
    out.append(_err("Pack_axis_out_of_range", "Pack", xs, "axis = 3 not in "
                    "[-3, 3)", attrs={"axis": ("int", 3)}))
    # Unpack.
    for dtype in ALL:
        x = _make(rng, dtype, (3, 2))
        out.append(Case("Unpack_%s" % dtype, "Unpack", [x],
                        [_apply(lambda a, i=i: a[i].copy(), x)
                         for i in range(3)], attrs={"num": ("int", 3)}))
    x = _make(rng, "float32", (2, 3, 4))
    for axis in (1, 2, -1):
        pieces = [np.take(x, i, axis=axis) for i in range(x.shape[axis])]
        out.append(Case("Unpack_float32_axis%d" % axis, "Unpack", [x], pieces,
                        attrs={"num": ("int", len(pieces)),
                               "axis": ("int", axis)}))
    v = _make(rng, "float32", (3,))
    out.append(Case("Unpack_float32_to_scalars", "Unpack", [v],
                    [v[i] for i in range(3)], attrs={"num": ("int", 3)}))
    big = _make(rng, "float32", (4, 30, 10))
    out.append(Case("Unpack_float32_axis1_copy", "Unpack",
                    [big[:, :2, :].copy()],
                    [big[:, i, :].copy() for i in range(2)],
                    attrs={"num": ("int", 2), "axis": ("int", 1)}))
    aligned = _make(rng, "float32", (4, 16))
    out.append(Case("Unpack_float32_aligned_rows", "Unpack", [aligned],
                    [aligned[i] for i in range(4)],
                    attrs={"num": ("int", 4)}))
    out.append(_err("Unpack_axis_out_of_range", "Unpack", [x],
                    "axis = 3 not in [-3, 3)",
                    attrs={"num": ("int", 2), "axis": ("int", 3)}, outputs=2))
    out.append(_err("Unpack_num_mismatch", "Unpack", [x],
                    "Input shape axis 0 must equal 3, got shape [2,3,4]",
                    attrs={"num": ("int", 3)}, outputs=3))
    return out


def _split(rng):
    out = []
    for dtype in ALL:
        x = _make(rng, dtype, (4, 3))
        out.append(Case("Split_%s" % dtype, "Split", [np.array(0, I32), x],
                        _apply(lambda a: [p.copy() for p in np.split(a, 2)],
                               x), attrs={"num_split": ("int", 2)}))
    x = _make(rng, "float32", (2, 6, 4))
    for axis, n in ((1, 3), (-1, 2), (2, 4), (0, 1)):
        out.append(Case("Split_float32_axis%d_%d" % (axis, n), "Split",
                        [np.array(axis, I32), x],
                        [p.copy() for p in np.split(x, n, axis=axis)],
                        attrs={"num_split": ("int", n)}))
    big = _make(rng, "float32", (6, 16))
    out.append(Case("Split_float32_aligned_rows", "Split",
                    [np.array(0, I32), big], np.split(big, 3),
                    attrs={"num_split": ("int", 3)}))
    big = _big(rng, (300, 360))
    out.append(Case("Split_int32_large_columns", "Split",
                    [np.array(1, I32), big],
                    [p.copy() for p in np.split(big, 3, axis=1)],
                    attrs={"num_split": ("int", 3)}))
    odd = _make(rng, "float32", (5, 3))
    out.append(Case("Split_float32_unaligned_rows", "Split",
                    [np.array(0, I32), odd[:4].copy()], np.split(odd[:4], 4),
                    attrs={"num_split": ("int", 4)}))
    out.append(_err("Split_not_divisible", "Split", [np.array(1, I32), x],
                    "Number of ways to split should evenly divide the split "
                    "dimension, but got split_dim 1 (size = 6) and num_split "
                    "4", attrs={"num_split": ("int", 4)}, outputs=4))
    out.append(_err("Split_dim_out_of_range", "Split", [np.array(3, I32), x],
                    "-input rank(-3) <= split_dim < input rank (3), but got 3",
                    attrs={"num_split": ("int", 2)}, outputs=2))
    # SplitV.
    for dtype in ("float32", "int64", "string", "bool", "bfloat16"):
        x = _make(rng, dtype, (2, 7))
        out.append(Case("SplitV_%s" % dtype, "SplitV",
                        [x, np.array([2, -1, 1], I64), np.array(1, I32)],
                        _apply(lambda a: [a[:, :2].copy(), a[:, 2:6].copy(),
                                          a[:, 6:].copy()], x),
                        attrs={"num_split": ("int", 3)}))
    x = _make(rng, "float32", (5, 2))
    out.append(Case("SplitV_float32_zero_piece", "SplitV",
                    [x, np.array([0, 5], I32), np.array(-2, I32)],
                    [x[:0], x], attrs={"num_split": ("int", 2)}))
    out.append(Case("SplitV_float32_int8_sizes", "SplitV",
                    [x, np.array([3, 2], np.int8), np.array(0, I32)],
                    [x[:3], x[3:]], attrs={"num_split": ("int", 2)}))
    out.append(_err("SplitV_two_unknown", "SplitV",
                    [x, np.array([-1, -1], I32), np.array(0, I32)],
                    "There can only be one -1 in the input.",
                    attrs={"num_split": ("int", 2)}, outputs=2))
    out.append(_err("SplitV_sum_mismatch", "SplitV",
                    [x, np.array([1, 2], I32), np.array(0, I32)],
                    "Determined shape must either match input shape along "
                    "split_dim exactly if fully specified, or be less than "
                    "the size of the input along split_dim if not fully "
                    "specified.  Got: 3",
                    attrs={"num_split": ("int", 2)}, outputs=2))
    out.append(_err("SplitV_wrong_count", "SplitV",
                    [x, np.array([1, 2, 2], I32), np.array(0, I32)],
                    "size of the split_tensor must be 1-D and have the same "
                    "elements as outputs got 1 -D and 3 elements",
                    attrs={"num_split": ("int", 2)}, outputs=2))
    out.append(_err("SplitV_scalar", "SplitV",
                    [np.array(1.0, F32), np.array([1], I32),
                     np.array(0, I32)], "Can't split scalars",
                    attrs={"num_split": ("int", 1)}))
    return out


def _slices(rng):
    out = []
    for dtype in ALL:
        x = _make(rng, dtype, (4, 5))
        out.append(Case("Slice_%s" % dtype, "Slice",
                        [x, np.array([1, 2], I32), np.array([2, -1], I32)],
                        [_apply(lambda a: a[1:3, 2:].copy(), x)]))
    x = _make(rng, "float32", (4, 5, 6))
    for name, begin, size in (("all", [0, 0, 0], [-1, -1, -1]),
                              ("rows", [1, 0, 0], [2, 5, 6]),
                              ("inner", [0, 1, 2], [4, 3, 2]),
                              ("one_row", [2, 3, 0], [1, 1, 6]),
                              ("empty", [1, 5, 0], [2, 0, 6])):
        expect = x[tuple(slice(b, x.shape[i] if s == -1 else b + s)
                         for i, (b, s) in enumerate(zip(begin, size)))]
        out.append(Case("Slice_float32_%s" % name, "Slice",
                        [x, np.array(begin, I64), np.array(size, I64)],
                        [expect.copy()]))
    out.append(Case("Slice_float32_scalar", "Slice",
                    [np.array(1.0, F32), np.zeros((0,), I32),
                     np.zeros((0,), I32)], [np.array(1.0, F32)]))
    big = _big(rng, (300, 300))
    out.append(Case("Slice_int32_large", "Slice",
                    [big, np.array([10, 7], I32), np.array([280, 250], I32)],
                    [big[10:290, 7:257].copy()]))
    rows = _make(rng, "float32", (40, 16))
    out.append(Case("Slice_float32_aligned_rows", "Slice",
                    [rows, np.array([4, 0], I32), np.array([16, -1], I32)],
                    [rows[4:20].copy()]))
    out.append(Case("Slice_float32_unaligned_rows", "Slice",
                    [rows, np.array([3, 0], I32), np.array([16, -1], I32)],
                    [rows[3:19].copy()]))
    out.append(_err("Slice_begin_out_of_range", "Slice",
                    [x, np.array([5, 0, 0], I32), np.array([1, 1, 1], I32)],
                    "Expected begin[0] in [0, 4], but got 5"))
    out.append(_err("Slice_size_out_of_range", "Slice",
                    [x, np.array([0, 3, 0], I32), np.array([1, 3, 1], I32)],
                    "Expected size[1] in [0, 2], but got 3"))
    out.append(_err("Slice_wrong_lengths", "Slice",
                    [x, np.array([0, 0], I32), np.array([1, 1, 1], I32)],
                    "Expected begin and size arguments to be 1-D tensors of "
                    "size 3, but got shapes [2] and [3] instead."))
    # StridedSlice: (name, spec, begin, end, strides, masks) against NumPy
    # indexing with the same meaning.
    x = _make(rng, "float32", (5, 6, 7))
    E, N = Ellipsis, None
    specs = [
        ("basic", (slice(1, 4), slice(0, 6, 2)), [1, 0], [4, 6], [1, 2], {}),
        ("negative_stride", (slice(4, 0, -1),), [4], [0], [-1], {}),
        ("reverse_all", (slice(None, None, -1), slice(None, None, -2)),
         [0, 0], [0, 0], [-1, -2], {"begin_mask": 3, "end_mask": 3}),
        ("negative_indices", (slice(-4, -1), slice(-2, None)), [-4, -2],
         [-1, 0], [1, 1], {"end_mask": 2}),
        ("clamped", (slice(-100, 100),), [-100], [100], [1], {}),
        ("shrink", (2, slice(1, 3)), [2, 1], [3, 3], [1, 1],
         {"shrink_axis_mask": 1}),
        ("shrink_negative", (slice(None), -1), [0, -1], [0, 0], [1, 1],
         {"begin_mask": 1, "end_mask": 1, "shrink_axis_mask": 2}),
        ("new_axis", (N, slice(1, 3)), [0, 1], [0, 3], [1, 1],
         {"new_axis_mask": 1}),
        ("ellipsis", (E, slice(1, 5, 3)), [0, 1], [0, 5], [1, 3],
         {"ellipsis_mask": 1}),
        ("ellipsis_middle", (1, E, 3), [1, 0, 3], [2, 0, 4], [1, 1, 1],
         {"ellipsis_mask": 2, "shrink_axis_mask": 5}),
        ("ellipsis_new_axis", (E, N, slice(0, 2)), [0, 0, 0], [0, 0, 2],
         [1, 1, 1], {"ellipsis_mask": 1, "new_axis_mask": 2}),
        ("empty_range", (slice(3, 1),), [3], [1], [1], {}),
        ("all_shrunk", (1, 2, 3), [1, 2, 3], [2, 3, 4], [1, 1, 1],
         {"shrink_axis_mask": 7}),
        ("identity", (slice(None),), [0], [0], [1],
         {"begin_mask": 1, "end_mask": 1}),
        ("dim0_range", (slice(1, 3),), [1], [3], [1], {}),
    ]
    for name, index, begin, end, strides, masks in specs:
        attrs = {k: ("int", v) for k, v in masks.items()}
        out.append(Case("StridedSlice_float32_%s" % name, "StridedSlice",
                        [x, np.array(begin, I32), np.array(end, I32),
                         np.array(strides, I32)],
                        [np.array(x[index])], attrs=attrs))
    for dtype in ALL:
        y = _make(rng, dtype, (4, 5))
        out.append(Case("StridedSlice_%s" % dtype, "StridedSlice",
                        [y, np.array([3, 1], I64), np.array([0, 5], I64),
                         np.array([-2, 2], I64)],
                        [_apply(lambda a: a[3:0:-2, 1:5:2].copy(), y)]))
    big = _big(rng, (300, 300))
    out.append(Case("StridedSlice_int32_large_reverse", "StridedSlice",
                    [big, np.array([0, 0], I32), np.array([0, 0], I32),
                     np.array([-1, -1], I32)], [big[::-1, ::-1].copy()],
                    attrs={"begin_mask": ("int", 3), "end_mask": ("int", 3)}))
    big = _big(rng, (300, 400))
    out.append(Case("StridedSlice_int32_large_columns", "StridedSlice",
                    [big, np.array([0, 3], I32), np.array([300, 400], I32),
                     np.array([1, 3], I32)], [big[:, 3::3].copy()]))
    out.append(Case("StridedSlice_int16_index", "StridedSlice",
                    [x, np.array([1], np.int16), np.array([3], np.int16),
                     np.array([1], np.int16)], [x[1:3].copy()]))
    out.append(_err("StridedSlice_zero_stride", "StridedSlice",
                    [x, np.array([0], I32), np.array([1], I32),
                     np.array([0], I32)], "strides[0] must be non-zero"))
    out.append(_err("StridedSlice_shrink_out_of_bounds", "StridedSlice",
                    [x, np.array([5], I32), np.array([6], I32),
                     np.array([1], I32)],
                    "slice index 5 of dimension 0 out of bounds.",
                    attrs={"shrink_axis_mask": ("int", 1)}))
    out.append(_err("StridedSlice_two_ellipses", "StridedSlice",
                    [x, np.array([0, 0], I32), np.array([0, 0], I32),
                     np.array([1, 1], I32)],
                    "Multiple ellipses in slice spec not allowed",
                    attrs={"ellipsis_mask": ("int", 3)}))
    out.append(_err("StridedSlice_too_many_indices", "StridedSlice",
                    [x, np.zeros(4, I32), np.ones(4, I32), np.ones(4, I32)],
                    "Index out of range using input dim 3; input has only 3 "
                    "dims"))
    out.append(_err("StridedSlice_unequal_lengths", "StridedSlice",
                    [x, np.zeros(2, I32), np.ones(1, I32), np.ones(2, I32)],
                    "Expected begin, end, and strides to be 1D equal size "
                    "tensors, but got shapes [2], [1], and [2] instead."))
    return out


def _grow(rng):
    out = []
    # Tile.
    for dtype in ALL:
        x = _make(rng, dtype, (2, 3))
        out.append(Case("Tile_%s" % dtype, "Tile",
                        [x, np.array([2, 1], I32)],
                        [_apply(lambda a: np.tile(a, (2, 1)), x)]))
    x = _make(rng, "float32", (2, 1, 3))
    for reps in ((1, 1, 1), (2, 3, 2), (1, 4, 1), (0, 2, 1), (3, 1, 5)):
        out.append(Case("Tile_float32_%s" % "x".join(map(str, reps)), "Tile",
                        [x, np.array(reps, I64)], [np.tile(x, reps)]))
    out.append(Case("Tile_float32_scalar", "Tile",
                    [np.array(2.0, F32), np.zeros((0,), I32)],
                    [np.array(2.0, F32)]))
    y = _big(rng, (100, 70))
    out.append(Case("Tile_int32_large", "Tile",
                    [y, np.array([3, 4], I32)], [np.tile(y, (3, 4))]))
    out.append(_err("Tile_wrong_length", "Tile", [x, np.array([2, 2], I32)],
                    "Expected multiples argument to be a vector of length 3 "
                    "but got length 2"))
    out.append(_err("Tile_negative", "Tile", [x, np.array([1, -1, 1], I32)],
                    "Expected multiples[1] >= 0, but got -1"))
    # Pad, PadV2.
    for dtype in ALL:
        x = _make(rng, dtype, (2, 3))
        p = [[1, 0], [2, 1]]
        if dtype == "string":
            expect = np.full((3, 6), "", dtype=object)
            expect[1:3, 2:5] = x
        else:
            expect = _apply(lambda a: np.pad(a, p), x)
        out.append(Case("Pad_%s" % dtype, "Pad", [x, np.array(p, I32)],
                        [expect]))
        c = _make(rng, dtype, ())
        if dtype == "string":
            expect = np.full((3, 6), c, dtype=object)
            expect[1:3, 2:5] = x
        else:
            expect = _apply(lambda a, k: np.pad(a, p, constant_values=k), x, c)
        out.append(Case("PadV2_%s" % dtype, "PadV2",
                        [x, np.array(p, I64), c], [expect]))
    x = _make(rng, "float32", (3, 4, 5))
    for name, p in (("none", [[0, 0], [0, 0], [0, 0]]),
                    ("inner_only", [[0, 0], [0, 0], [2, 3]]),
                    ("outer_only", [[1, 2], [0, 0], [0, 0]]),
                    ("middle", [[0, 0], [3, 1], [0, 0]]),
                    ("all", [[1, 1], [2, 0], [0, 4]])):
        out.append(Case("Pad_float32_%s" % name, "Pad",
                        [x, np.array(p, I32)], [np.pad(x, p)]))
    out.append(Case("Pad_float32_scalar", "Pad",
                    [np.array(3.0, F32), np.zeros((0, 2), I32)],
                    [np.array(3.0, F32)]))
    e = np.zeros((2, 0), F32)
    out.append(Case("Pad_float32_empty_input", "PadV2",
                    [e, np.array([[1, 1], [2, 2]], I32), np.array(7, F32)],
                    [np.pad(e, [[1, 1], [2, 2]], constant_values=7)]))
    big = _big(rng, (300, 250))
    out.append(Case("Pad_int32_large", "Pad",
                    [big, np.array([[3, 5], [7, 1]], I32)],
                    [np.pad(big, [[3, 5], [7, 1]])]))
    flat = _big(rng, (70000,))
    out.append(Case("Pad_int32_large_vector", "PadV2",
                    [flat, np.array([[100, 20000]], I32), np.array(-1, I32)],
                    [np.pad(flat, [[100, 20000]], constant_values=-1)]))
    out.append(_err("Pad_negative", "Pad", [x, np.array(
        [[0, 0], [-1, 0], [0, 0]], I32)], "Paddings must be non-negative: -1 0"))
    out.append(_err("Pad_wrong_rank", "Pad",
                    [x, np.array([[0, 0], [0, 0]], I32)],
                    "The first dimension of paddings must be the rank of "
                    "inputs[2,2] [3,4,5]"))
    out.append(_err("Pad_not_matrix", "Pad", [x, np.array([0, 0, 0], I32)],
                    "paddings must be a matrix with 2 columns: [3]"))
    out.append(_err("PadV2_constant_not_scalar", "PadV2",
                    [x, np.zeros((3, 2), I32), np.zeros((2,), F32)],
                    "constant_values must be a scalar. Got: [2]"))
    # BroadcastTo.
    for dtype in ALL:
        x = _make(rng, dtype, (3, 1))
        out.append(Case("BroadcastTo_%s" % dtype, "BroadcastTo",
                        [x, np.array([2, 3, 4], I32)],
                        [_apply(lambda a: np.broadcast_to(a, (2, 3, 4)).copy(),
                                x)]))
    x = _make(rng, "float32", (1, 5, 1))
    for shape in ((1, 5, 1), (4, 5, 3), (2, 1, 5, 6), (0, 5, 2)):
        out.append(Case("BroadcastTo_float32_%s" % "x".join(map(str, shape)),
                        "BroadcastTo", [x, np.array(shape, I64)],
                        [np.broadcast_to(x, shape).copy()]))
    out.append(Case("BroadcastTo_float32_scalar", "BroadcastTo",
                    [np.array(2.0, F32), np.array([2, 3], I32)],
                    [np.full((2, 3), 2.0, F32)]))
    row = _big(rng, (300,))
    out.append(Case("BroadcastTo_int32_large", "BroadcastTo",
                    [row, np.array([250, 300], I32)],
                    [np.broadcast_to(row, (250, 300)).copy()]))
    out.append(_err("BroadcastTo_incompatible", "BroadcastTo",
                    [x, np.array([2, 4, 1], I32)],
                    "Incompatible shapes: [1,5,1] vs. [2,4,1]"))
    out.append(_err("BroadcastTo_rank", "BroadcastTo",
                    [x, np.array([5, 1], I32)],
                    "Rank of input (3) must be no greater than rank of output "
                    "shape (2)."))
    out.append(_err("BroadcastTo_unable", "BroadcastTo",
                    [np.zeros((3,), F32), np.array([1], I32)],
                    "Unable to broadcast tensor of shape [3] to tensor of "
                    "shape [1]"))
    return out


def _indexing(rng):
    out = []
    # Gather, GatherV2.
    for dtype in ALL:
        p = _make(rng, dtype, (5, 3))
        i = np.array([[4, 0], [2, 2]], I32)
        out.append(Case("Gather_%s" % dtype, "Gather", [p, i],
                        [_apply(lambda a: a[i], p)]))
        out.append(Case("GatherV2_%s" % dtype, "GatherV2",
                        [p, np.array([2, 0, 1], I64), np.array(1, I32)],
                        [_apply(lambda a: a[:, [2, 0, 1]].copy(), p)]))
    p = _make(rng, "float32", (4, 5, 6))
    for name, idx, axis in (("scalar_index", np.array(3, I64), 0),
                            ("axis1", np.array([[4, 1, 1]], I32), 1),
                            ("last_axis", np.array([5, 0], I32), -1),
                            ("empty", np.zeros((0,), I32), 1)):
        out.append(Case("GatherV2_float32_%s" % name, "GatherV2",
                        [p, idx, np.array(axis, I64)],
                        [np.take(p, idx, axis=axis)]))
    idx = np.array([[3, 0], [1, 1], [2, 4], [0, 0]], I32)
    expect = np.stack([np.take(p[b], idx[b], axis=0) for b in range(4)])
    out.append(Case("GatherV2_float32_batch_dims", "GatherV2",
                    [p, idx, np.array(1, I32)], [expect],
                    attrs={"batch_dims": ("int", 1)}))
    expect = np.stack([np.take(p[b], idx[b], axis=1) for b in range(4)])
    out.append(Case("GatherV2_float32_batch_dims_axis2", "GatherV2",
                    [p, idx, np.array(2, I32)], [expect],
                    attrs={"batch_dims": ("int", -1)}))
    table = _big(rng, (200, 64))
    ids = rng.integers(0, 200, size=(1300,)).astype(I64)
    out.append(Case("Gather_int32_large_rows", "Gather", [table, ids],
                    [table[ids]]))
    vec = _big(rng, (5000,), I64)
    ids = rng.integers(0, 5000, size=(20000,)).astype(I32)
    out.append(Case("GatherV2_int64_large_elements", "GatherV2",
                    [vec, ids, np.array(0, I32)], [vec[ids]]))
    p = _make(rng, "float32", (5, 3))
    out.append(_err("Gather_index_out_of_range", "Gather",
                    [p, np.array([[0, 1], [7, 2]], I32)],
                    "indices[1,0] = 7 is not in [0, 5)"))
    out.append(_err("GatherV2_negative_index", "GatherV2",
                    [p, np.array([-1], I64), np.array(0, I32)],
                    "indices[0] = -1 is not in [0, 5)"))
    out.append(_err("GatherV2_axis_out_of_range", "GatherV2",
                    [p, np.array([0], I32), np.array(2, I32)],
                    "Expected axis in the range [-2, 2), but got 2"))
    out.append(_err("GatherV2_batch_dims_mismatch", "GatherV2",
                    [p, np.zeros((4, 1), I32), np.array(1, I32)],
                    "params.shape[0]: 5 should be equal to indices.shape[0]: "
                    "4", attrs={"batch_dims": ("int", 1)}))
    out.append(_err("Gather_scalar_params", "Gather",
                    [np.array(1.0, F32), np.array([0], I32)],
                    "params must be at least 1 dimensional"))
    # OneHot.
    indices = np.array([[0, 2, -1], [5, 1, 3]], I64)
    for dtype in ("float32", "int32", "bool", "string", "float64",
                  "bfloat16", "complex64"):
        on, off = _make(rng, dtype, ()), _make(rng, dtype, ())
        for axis in (-1, 0, 1):
            expect = _one_hot(indices, 4, on, off, axis)
            out.append(Case(("OneHot_%s_axis%d" % (dtype, axis)).replace(
                "-", "m"), "OneHot", [indices, np.array(4, I32), on, off],
                [expect], attrs={"axis": ("int", axis)}))
    for ti in (np.uint8, np.int8, np.int32):
        idx = np.array([1, 0, 3], ti)
        on, off = np.array(1.0, F32), np.array(0.0, F32)
        out.append(Case("OneHot_float32_%s_indices" % np.dtype(ti).name,
                        "OneHot", [idx, np.array(3, I32), on, off],
                        [_one_hot(idx, 3, on, off, -1)]))
    out.append(Case("OneHot_float32_scalar_index", "OneHot",
                    [np.array(2, I64), np.array(3, I32), np.array(1.0, F32),
                     np.array(0.0, F32)], [np.array([0, 0, 1], F32)]))
    out.append(_err("OneHot_negative_depth", "OneHot",
                    [indices, np.array(-1, I32), np.array(1.0, F32),
                     np.array(0.0, F32)], "depth must be non-negative, got: -1"))
    out.append(_err("OneHot_bad_axis", "OneHot",
                    [indices, np.array(3, I32), np.array(1.0, F32),
                     np.array(0.0, F32)],
                    "Expected axis to be -1 or between [0, 3).  But received: 3",
                    attrs={"axis": ("int", 3)}))
    out.append(_err("OneHot_on_not_scalar", "OneHot",
                    [indices, np.array(3, I32), np.array([1.0], F32),
                     np.array(0.0, F32)],
                    "on_value must be a scalar, but got: [1]"))
    # Where.
    for dtype in ("bool", "float32", "float64", "int32", "int64", "uint8",
                  "float16", "bfloat16", "complex64", "int8"):
        x = _make(rng, dtype, (3, 4))
        arr = x.values if isinstance(x, BFloat16) else x
        if dtype != "bool":
            mask = rng.integers(0, 2, size=(3, 4)).astype(bool)
            arr = np.where(mask, arr, 0).astype(arr.dtype)
            x = BFloat16(arr) if dtype == "bfloat16" else arr
        out.append(Case("Where_%s" % dtype, "Where", [x],
                        [np.argwhere(arr).astype(I64)]))
    special = np.array([0.0, -0.0, np.nan, 1.0], F32)
    out.append(Case("Where_float32_signed_zero_nan", "Where", [special],
                    [np.array([[2], [3]], I64)]))
    for name, shape in (("scalar", ()), ("vector", (7,)),
                        ("rank3", (2, 3, 4)), ("empty", (0, 3))):
        x = rng.integers(0, 2, size=shape).astype(np.bool_)
        out.append(Case("Where_bool_%s" % name, "Where", [x],
                        [np.argwhere(x).astype(I64)]))
    out.append(Case("Where_string", "Where", [_make(rng, "string", (2,))],
                    error=("INVALID_ARGUMENT", "not in the list of allowed")))
    out.append(Case("Range_string", "Range",
                    [_make(rng, "string", ()) for _ in range(3)],
                    error=("INVALID_ARGUMENT", "not in the list of allowed")))
    out.append(Case("OnesLike_string", "OnesLike",
                    [_make(rng, "string", (2,))],
                    error=("INVALID_ARGUMENT", "not in the list of allowed")))
    out.append(Case("Where_bool_none", "Where", [np.zeros((4, 2), bool)],
                    [np.zeros((0, 2), I64)]))
    big = rng.random((300, 500)) < 0.3
    out.append(Case("Where_bool_large", "Where", [big],
                    [np.argwhere(big).astype(I64)]))
    big = (rng.random((200, 400)) < 0.5).astype(I32)
    out.append(Case("Where_int32_large", "Where", [big],
                    [np.argwhere(big).astype(I64)]))
    return out


def _one_hot(indices, depth, on, off, axis):
    def fn(o, f):
        hot = indices[..., None] == np.arange(depth)
        if axis != -1:
            hot = np.moveaxis(hot, -1, axis)
        return np.where(hot, o, f).astype(o.dtype)
    return _apply(fn, on, off)


def cases():
    rng = np.random.default_rng(20261124)
    out = []
    for group in (_shape_ops, _transpose, _invert_permutation, _reverse,
                  _concat, _split, _slices, _grow, _indexing):
        out.extend(group(rng))
    return out
