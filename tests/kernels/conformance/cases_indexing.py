"""GatherNd, ScatterNd, TensorScatterUpdate and TopKV2 against NumPy.

The references loop over the index tuples in order (ScatterNd sums
repeated tuples in T in that order, TensorScatterUpdate keeps the last),
as TensorFlow's CPU kernels do. TopKV2's reference is a stable sort on
(-value, index): equal values keep the lower index first. Errors check
TensorFlow's messages.
"""

import numpy as np

from casegen import BFloat16, Case

F32 = np.float32
I16 = np.int16
I32 = np.int32
I64 = np.int64

ALL = ["float32", "float64", "float16", "bfloat16", "int8", "int16",
       "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
       "complex64", "complex128", "string"]
NUMBERS = ["float32", "float64", "float16", "int8", "int16", "int32",
           "int64", "uint8", "uint16", "uint32", "uint64", "complex64",
           "complex128"]
REAL = ["float32", "float64", "float16", "bfloat16", "int8", "int16",
        "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _make(rng, dtype, shape):
    shape = tuple(shape)
    if dtype == "string":
        out = np.empty(shape, dtype=object)
        for index in np.ndindex(*shape):
            out[index] = "s%s" % (index,) + "x" * int(rng.integers(0, 30))
        return out
    if dtype == "bfloat16":
        return BFloat16(rng.standard_normal(shape).astype(F32))
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) +
                1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith("float"):
        return (rng.standard_normal(shape) * 10).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -50), min(info.max, 50), size=shape,
                        endpoint=True).astype(dtype)


def _values(x):
    return x.values if isinstance(x, BFloat16) else x


def _err(name, op, inputs, text, attrs=None, outputs=1):
    return Case(name, op, inputs, attrs=attrs or {},
                error=("INVALID_ARGUMENT", text), outputs=outputs)


#===---------------------------------------------------------------------===#
# GatherNd
#===---------------------------------------------------------------------===#

def _gather_nd(params, indices):
    array = _values(params)
    depth = indices.shape[-1]
    tuples = indices.reshape(int(np.prod(indices.shape[:-1])), depth)
    rows = [array[tuple(int(v) for v in t)] for t in tuples]
    shape = indices.shape[:-1] + array.shape[depth:]
    out = (np.stack(rows) if rows else
           np.zeros((0,) + array.shape[depth:], array.dtype)).reshape(shape)
    if isinstance(params, BFloat16):
        return BFloat16(out)
    return out.astype(array.dtype)


def _gather_nd_cases(rng):
    out = []
    indices = np.array([[[1, 0], [2, 3]], [[0, 0], [1, 3]]], I32)
    for dtype in ALL:
        p = _make(rng, dtype, (3, 4, 2))
        out.append(Case("GatherNd_%s" % dtype, "GatherNd", [p, indices],
                        [_gather_nd(p, indices)]))
    p = _make(rng, "float32", (3, 4, 2))
    for name, idx in (("full_depth", np.array([[2, 3, 1], [0, 0, 0]], I64)),
                      ("depth1", np.array([[2], [0], [2]], I16)),
                      ("one_tuple", np.array([1, 2], I32)),
                      ("empty_indices", np.zeros((0, 2), I32)),
                      ("depth0", np.zeros((2, 0), I32))):
        out.append(Case("GatherNd_float32_%s" % name, "GatherNd", [p, idx],
                        [_gather_nd(p, idx)]))
    # Many empty tuples (no elements): nothing to check or copy.
    out.append(Case("GatherNd_float32_huge_empty_tuples", "GatherNd",
                    [np.zeros((0, 3), F32), np.zeros((2**40, 0), I32)],
                    [np.zeros((2**40, 0, 3), F32)]))
    # Threaded: many slices.
    table = rng.integers(0, 100, size=(300, 40, 8)).astype(I32)
    idx = np.stack([rng.integers(0, 300, 2000),
                    rng.integers(0, 40, 2000)], axis=1).astype(I64)
    out.append(Case("GatherNd_int32_large", "GatherNd", [table, idx],
                    [_gather_nd(table, idx)]))
    ignore = {"bad_indices_policy": ("string", "IGNORE")}
    idx = np.array([[0, 1], [5, 0], [2, -1]], I32)
    expect = np.zeros((3, 2), F32)
    expect[0] = p[0, 1]
    out.append(Case("GatherNd_float32_ignore_bad", "GatherNd", [p, idx],
                    [expect], attrs=ignore))
    out.append(_err("GatherNd_index_out_of_range", "GatherNd",
                    [p, np.array([[[0, 1], [3, 0]]], I32)],
                    "indices[0,1] = [3, 0] does not index into param shape "
                    "[3,4,2], node name: GatherNd"))
    out.append(_err("GatherNd_negative_index", "GatherNd",
                    [p, np.array([[1], [-1]], I64)],
                    "indices[1] = [-1] does not index into param shape "
                    "[3,4,2]"))
    out.append(_err("GatherNd_depth_above_rank", "GatherNd",
                    [p, np.zeros((2, 4), I32)],
                    "index innermost dimension length must be <= params "
                    "rank; saw: 4 vs. 3"))
    out.append(_err("GatherNd_scalar_params", "GatherNd",
                    [np.array(1.0, F32), np.zeros((1, 1), I32)],
                    "params must be at least a vector"))
    out.append(_err("GatherNd_scalar_indices", "GatherNd",
                    [p, np.array(0, I32)],
                    "indices must be at least a vector"))
    out.append(_err("GatherNd_empty_params", "GatherNd",
                    [np.zeros((0, 3), F32), np.zeros((2, 1), I32)],
                    "Requested more than 0 entries, but params is empty.  "
                    "Params shape: [0,3]"))
    out.append(_err("GatherNd_bad_policy", "GatherNd",
                    [p, np.zeros((1, 1), I32)],
                    "Unknown bad indices handling attribute: SKIP",
                    attrs={"bad_indices_policy": ("string", "SKIP")}))
    return out


#===---------------------------------------------------------------------===#
# ScatterNd, TensorScatterUpdate
#===---------------------------------------------------------------------===#

def _scatter(base, indices, updates, add):
    out = base.copy()
    depth = indices.shape[-1]
    tuples = indices.reshape(int(np.prod(indices.shape[:-1])), depth)
    slices = updates.reshape((len(tuples),) + out.shape[depth:])
    for t, u in zip(tuples, slices):
        key = tuple(int(v) for v in t)
        if add:
            out[key] = (out[key] + u).astype(out.dtype)
        else:
            out[key] = u
    return out


def _scatter_cases(rng):
    out = []
    indices = np.array([[1, 0], [3, 2], [1, 0], [0, 1]], I32)
    shape = np.array([4, 3, 2], I32)
    for dtype in NUMBERS:
        u = _make(rng, dtype, (4, 2))
        expect = _scatter(np.zeros((4, 3, 2), u.dtype), indices, u, True)
        out.append(Case("ScatterNd_%s" % dtype, "ScatterNd",
                        [indices, u, shape], [expect]))
    u = _make(rng, "float32", (2, 2, 3, 2))
    idx = np.array([[[0], [3]], [[1], [3]]], I64)
    out.append(Case("ScatterNd_float32_batch_of_slices", "ScatterNd",
                    [idx, u, np.array([4, 3, 2], I64)],
                    [_scatter(np.zeros((4, 3, 2), F32), idx, u, True)]))
    idx = np.array([[0, 1, 1], [2, 0, 1], [0, 1, 1]], I16)
    u = _make(rng, "float64", (3,))
    out.append(Case("ScatterNd_float64_elements_int16", "ScatterNd",
                    [idx, u, np.array([3, 2, 2], I16)],
                    [_scatter(np.zeros((3, 2, 2)), idx, u, True)]))
    out.append(Case("ScatterNd_float32_empty", "ScatterNd",
                    [np.zeros((0, 1), I32), np.zeros((0, 2), F32),
                     np.array([3, 2], I32)], [np.zeros((3, 2), F32)]))
    ignore = {"bad_indices_policy": ("string", "IGNORE")}
    idx = np.array([[0], [7], [2]], I32)
    u = np.array([1.0, 2.0, 3.0], F32)
    out.append(Case("ScatterNd_float32_ignore_bad", "ScatterNd",
                    [idx, u, np.array([3], I32)],
                    [np.array([1.0, 0.0, 3.0], F32)], attrs=ignore))
    out.append(_err("ScatterNd_index_out_of_range", "ScatterNd",
                    [np.array([[0, 1], [4, 0]], I32), np.ones(2, F32),
                     np.array([4, 2], I32)],
                    "indices[1] = [4, 0] does not index into shape [4,2]"))
    out.append(_err("ScatterNd_negative_index", "ScatterNd",
                    [np.array([[[-1]]], I64), np.ones((1, 1), F32),
                     np.array([3], I64)],
                    "indices[0,0] = [-1] does not index into shape [3]"))
    out.append(_err("ScatterNd_outer_mismatch", "ScatterNd",
                    [np.zeros((3, 1), I32), np.ones((2, 2), F32),
                     np.array([4, 2], I32)],
                    "Dimensions [0,1) of indices[shape=[3,1]] must match "
                    "dimensions [0,1) of updates[shape=[2,2]]"))
    out.append(_err("ScatterNd_inner_mismatch", "ScatterNd",
                    [np.zeros((2, 1), I32), np.ones((2, 3), F32),
                     np.array([4, 2], I32)],
                    "Dimensions [1,2) of input[shape=[4,2]] must match "
                    "dimensions [1,2) of updates[shape=[2,3]]"))
    out.append(_err("ScatterNd_scalar_indices", "ScatterNd",
                    [np.array(0, I32), np.ones(2, F32), np.array([4], I32)],
                    "Indices shape must have rank at least one. Found:[]"))
    out.append(_err("ScatterNd_negative_shape", "ScatterNd",
                    [np.zeros((1, 1), I32), np.ones(1, F32),
                     np.array([-2], I32)],
                    "Dimension -2 must be >= 0"))
    out.append(_err("ScatterNd_empty_output_shape", "ScatterNd",
                    [np.zeros((1, 1), I32), np.ones(1, F32),
                     np.zeros((0,), I32)],
                    "Indices and updates specified for empty output shape"))
    # Checked size arithmetic: the requested shape's size overflows.
    out.append(_err("ScatterNd_shape_overflow", "ScatterNd",
                    [np.zeros((0, 1), I64), np.zeros((0, 2), F32),
                     np.array([3, 2**40, 2**40], I64)],
                    "ScatterNd: shape [3, 1099511627776, 1099511627776]: "
                    "the size overflows int64"))
    out.append(Case("ScatterNd_string", "ScatterNd",
                    [np.zeros((1, 1), I32), _make(rng, "string", (1,)),
                     np.array([2], I32)],
                    error=("NOT_FOUND", "ScatterNd")))
    # TensorScatterUpdate: every dtype; the last repeated tuple wins.
    for dtype in ALL:
        t = _make(rng, dtype, (4, 3))
        u = _make(rng, dtype, (3, 3))
        idx = np.array([[2], [0], [2]], I32)
        base, upd = _values(t), _values(u)
        expect = _scatter(base, idx, upd, False)
        if dtype == "bfloat16":
            expect = BFloat16(expect)
        out.append(Case("TensorScatterUpdate_%s" % dtype,
                        "TensorScatterUpdate", [t, idx, u], [expect]))
    t = _make(rng, "float32", (3, 4))
    idx = np.array([[0, 3], [2, 1]], I64)
    u = np.array([5.0, 6.0], F32)
    out.append(Case("TensorScatterUpdate_float32_elements",
                    "TensorScatterUpdate", [t, idx, u],
                    [_scatter(t, idx, u, False)]))
    out.append(_err("TensorScatterUpdate_index_out_of_range",
                    "TensorScatterUpdate",
                    [t, np.array([[1], [3]], I32), np.ones((2, 4), F32)],
                    "indices[1] = [3] does not index into shape [3,4]"))
    out.append(_err("TensorScatterUpdate_outer_mismatch",
                    "TensorScatterUpdate",
                    [t, np.zeros((2, 1), I32), np.ones((3, 4), F32)],
                    "Outer dimensions of indices and update must match. "
                    "Indices shape: [2,1], updates shape:[3,4]"))
    out.append(_err("TensorScatterUpdate_inner_rank", "TensorScatterUpdate",
                    [t, np.zeros((2, 1), I32), np.ones((2,), F32)],
                    "Inner dimensions of output shape must match inner "
                    "dimensions of updates shape. Output: [3,4] updates: "
                    "[2]"))
    out.append(_err("TensorScatterUpdate_inner_dims", "TensorScatterUpdate",
                    [t, np.zeros((2, 1), I32), np.ones((2, 5), F32)],
                    "The inner 1 dimensions of output.shape=[3,4] must "
                    "match the inner 1 dimensions of updates.shape=[2,5]"))
    return out


#===---------------------------------------------------------------------===#
# TopKV2
#===---------------------------------------------------------------------===#

def _top_k(x, k):
    array = _values(x)
    flat = array.reshape(-1, array.shape[-1])
    values, indices = [], []
    for row in flat:
        order = sorted(range(len(row)), key=lambda i: (-row[i].item(), i))
        indices.append(order[:k])
        values.append(row[order[:k]])
    shape = array.shape[:-1] + (k,)
    v = np.array(values, array.dtype).reshape(shape)
    i = np.array(indices, I32).reshape(shape)
    return (BFloat16(v) if isinstance(x, BFloat16) else v), i


def _top_k_cases(rng):
    out = []
    for dtype in REAL:
        x = _make(rng, dtype, (3, 7))
        values, indices = _top_k(x, 3)
        out.append(Case("TopKV2_%s" % dtype, "TopKV2",
                        [x, np.array(3, I32)], [values, indices]))
    x = np.array([[3, 1, 3, 2, 3], [0, 0, 0, 0, 0]], F32)
    for k in (0, 2, 5):
        values, indices = _top_k(x, k)
        out.append(Case("TopKV2_float32_ties_k%d" % k, "TopKV2",
                        [x, np.array(k, I32)], [values, indices]))
    x = _make(rng, "float32", (2, 3, 6))
    values, indices = _top_k(x, 4)
    out.append(Case("TopKV2_float32_rank3_unsorted", "TopKV2",
                    [x, np.array(4, I64)], [values, indices.astype(I64)],
                    attrs={"sorted": ("bool", False),
                           "index_type": ("type", "int64")}))
    out.append(Case("TopKV2_float32_int16_indices", "TopKV2",
                    [x, np.array(4, I16)], [values, indices.astype(I16)],
                    attrs={"index_type": ("type", "int16")}))
    x = _make(rng, "float32", (5,))
    values, indices = _top_k(x, 5)
    out.append(Case("TopKV2_float32_vector_all", "TopKV2",
                    [x, np.array(5, I32)], [values, indices]))
    x = np.zeros((0, 4), F32)
    out.append(Case("TopKV2_float32_empty", "TopKV2",
                    [x, np.array(2, I32)],
                    [np.zeros((0, 2), F32), np.zeros((0, 2), I32)]))
    # Threaded: many rows.
    x = rng.permutation(400 * 300).reshape(400, 300).astype(I32)
    values, indices = _top_k(x, 10)
    out.append(Case("TopKV2_int32_large", "TopKV2", [x, np.array(10, I32)],
                    [values, indices]))
    x = _make(rng, "float32", (2, 3))
    out.append(_err("TopKV2_k_above_columns", "TopKV2",
                    [x, np.array(4, I32)],
                    "input must have at least k columns. Had 3, needed 4",
                    outputs=2))
    out.append(_err("TopKV2_negative_k", "TopKV2", [x, np.array(-1, I32)],
                    "Need k >= 0, got -1", outputs=2))
    out.append(_err("TopKV2_int16_indices_too_narrow", "TopKV2",
                    [np.zeros((1, 40000), F32), np.array(1, I32)],
                    "TopKV2: index_type int16 cannot hold the indices of "
                    "rows of 40000 elements",
                    attrs={"index_type": ("type", "int16")}, outputs=2))
    out.append(_err("TopKV2_k_not_scalar", "TopKV2",
                    [x, np.array([1], I32)],
                    "k must be scalar, got shape [1]", outputs=2))
    out.append(_err("TopKV2_scalar_input", "TopKV2",
                    [np.array(1.0, F32), np.array(0, I32)],
                    "input must be >= 1-D, got shape []", outputs=2))
    out.append(Case("TopKV2_bool", "TopKV2",
                    [np.zeros(3, np.bool_), np.array(1, I32)],
                    error=("INVALID_ARGUMENT", "not in the list of allowed"),
                    outputs=2))
    return out


def cases():
    rng = np.random.default_rng(20261127)
    out = []
    for group in (_gather_nd_cases, _scatter_cases, _top_k_cases):
        out.extend(group(rng))
    return out
