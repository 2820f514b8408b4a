"""Kernels that read only the last dims, index or copy, above rank 8.

TensorFlow's ranks go to 254; Loom keeps 8 dims inline and spills the
rest (loom/shape.h). These cases run at ranks 9, 10 and well above:
TopKV2, CheckNumericsV2, Assert, the random ops, MatrixBandPart,
MatrixDiagV3, MatrixDiagPartV3, GatherNd, ScatterNd, TensorScatterUpdate,
the copies, the resource ops and the training ops, with empty tensors
and the errors of index depths and result ranks; and Einsum with more
than 8 distinct labels (cases_einsum.py runs it above rank 8). References come from the families' own
(cases_*.py); the random ops' from Philox4x32-10 written out below, as
random.c draws (counter-based: a shape's values depend only on its
element count).
"""

import math

import numpy as np

from casegen import Case, Variable
import cases_indexing
import cases_logging
import cases_matrix
import cases_training

F16 = np.float16
F32 = np.float32
F64 = np.float64
I16 = np.int16
I32 = np.int32
I64 = np.int64

# Shapes of ranks 9, 10, 12 and 20 with few elements.
R9 = (2, 1, 3, 1, 1, 2, 1, 1, 4)
R10 = (1, 2, 1, 1, 2, 1, 1, 1, 3, 5)
R12 = (2, 1, 1, 2, 1, 1, 1, 1, 1, 2, 3, 4)
R20 = (2, 1, 1, 1) * 4 + (1, 1, 3, 4)


def _err(name, op, inputs, text, attrs=None, outputs=1):
    return Case(name, op, inputs, attrs=attrs or {},
                error=("INVALID_ARGUMENT", text), outputs=outputs)


def _make(rng, dtype, shape):
    return cases_indexing._make(rng, dtype, shape)


def _dims(shape):
    """A shape as TensorShape::DebugString writes it: [2,1,3]."""
    return "[%s]" % ",".join(str(d) for d in shape)


def _ints(values):
    """Values as Loom's messages quote them: [2, 1, 3]."""
    return "[%s]" % ", ".join(str(int(v)) for v in values)


#===---------------------------------------------------------------------===#
# TopKV2
#===---------------------------------------------------------------------===#

def _top_k_cases(rng):
    out = []
    for tag, shape, k, dtype in (("rank9", R9, 3, "float32"),
                                 ("rank10", R10, 5, "int32"),
                                 ("rank12", R12, 1, "bfloat16"),
                                 ("rank20", R20, 2, "float64")):
        x = _make(rng, dtype, shape)
        values, indices = cases_indexing._top_k(x, k)
        out.append(Case("LargeRanks_TopKV2_%s_%s" % (dtype, tag), "TopKV2",
                        [x, np.array(k, I32)], [values, indices]))
    x = _make(rng, "float32", R10)
    values, indices = cases_indexing._top_k(x, 4)
    out.append(Case("LargeRanks_TopKV2_float32_rank10_unsorted_int64",
                    "TopKV2", [x, np.array(4, I64)],
                    [values, indices.astype(I64)],
                    attrs={"sorted": ("bool", False),
                           "index_type": ("type", "int64")}))
    empty = (0,) + R9[1:]
    out.append(Case("LargeRanks_TopKV2_float32_rank9_empty", "TopKV2",
                    [np.zeros(empty, F32), np.array(2, I32)],
                    [np.zeros(empty[:-1] + (2,), F32),
                     np.zeros(empty[:-1] + (2,), I32)]))
    out.append(_err("LargeRanks_TopKV2_k_above_columns", "TopKV2",
                    [_make(rng, "float32", R10), np.array(6, I32)],
                    "input must have at least k columns. Had 5, needed 6",
                    outputs=2))
    return out


#===---------------------------------------------------------------------===#
# CheckNumericsV2, Assert
#===---------------------------------------------------------------------===#

def _check_numerics_cases(rng):
    out = []
    message = {"message": ("string", "large")}
    for tag, shape, dtype in (("rank9", R9, "float32"),
                              ("rank10", R10, "float64"),
                              ("rank20", R20, "float16")):
        x = _make(rng, dtype, shape)
        out.append(Case("LargeRanks_CheckNumericsV2_%s_%s" % (dtype, tag),
                        "CheckNumericsV2", [x], [x], attrs=message))
    empty = R10[:4] + (0,) + R10[5:]
    out.append(Case("LargeRanks_CheckNumericsV2_float32_rank10_empty",
                    "CheckNumericsV2", [np.zeros(empty, F32)],
                    [np.zeros(empty, F32)], attrs=message))
    x = _make(rng, "float32", R12)
    x[1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 2, 3] = np.inf
    x[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] = np.nan
    out.append(_err("LargeRanks_CheckNumericsV2_rank12_inf_nan",
                    "CheckNumericsV2", [x],
                    "large : Tensor had +Inf and NaN values", attrs=message))
    return out


def _assert_cases(rng):
    out = []
    out.append(cases_logging._assert(
        "LargeRanks_Assert_true_rank10_data",
        [np.arange(np.prod(R10), dtype=I32).reshape(R10)], condition=True))
    for tag, shape, limit in (("rank9", R9, None), ("rank10", R10, 7),
                              ("rank20", R20, 40)):
        data = (np.arange(np.prod(shape)) % 17 - 8).astype(F32) / 4
        out.append(cases_logging._assert("LargeRanks_Assert_%s" % tag,
                                         [data.reshape(shape)], limit))
    empty = R12[:3] + (0,) + R12[4:]
    out.append(cases_logging._assert("LargeRanks_Assert_rank12_empty",
                                     [np.zeros(empty, I64),
                                      np.array([1, 2], I32)], 4))
    condition = np.ones((1,) * 9, np.bool_)
    out.append(Case("LargeRanks_Assert_rank9_condition", "Assert",
                    [condition, np.zeros(3, F32)],
                    error=("INVALID_ARGUMENT",
                           "In[0] should be a scalar: " + _dims((1,) * 9)),
                    outputs=0))
    return out


#===---------------------------------------------------------------------===#
# RandomUniform, RandomStandardNormal, TruncatedNormal
#===---------------------------------------------------------------------===#

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF
_GROUP = 256  # elements per stream


def _philox(counter_low, counter_high, key):
    c = [counter_low & _M32, counter_low >> 32, counter_high & _M32,
         counter_high >> 32]
    k0, k1 = key & _M32, key >> 32
    for _ in range(10):
        p0 = 0xD2511F53 * c[0]
        p1 = 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & _M32, (p0 >> 32) ^ c[3] ^ k1,
             p0 & _M32]
        k0 = (k0 + 0x9E3779B9) & _M32
        k1 = (k1 + 0xBB67AE85) & _M32
    return c


class _Stream:
    """A group's words: Philox blocks at counter (draw, group)."""

    def __init__(self, key, group):
        self.key, self.group, self.draw, self.words = key, group, 0, []

    def word(self):
        if not self.words:
            self.words = _philox(self.draw, self.group, self.key)
            self.draw += 1
        return self.words.pop(0)

    def float(self):
        bits = np.array([0x3F800000 | (self.word() >> 9)], np.uint32)
        return float(bits.view(F32)[0]) - 1.0

    def half(self):
        """float16: its 10 significand bits, exact (never rounds to 1)."""
        return (self.word() & 0x3FF) / 1024.0

    def double(self):
        high, low = self.word(), self.word()
        bits = np.array([0x3FF0000000000000 | ((high << 32 | low) >> 12)],
                        np.uint64)
        return float(bits.view(F64)[0]) - 1.0


def _random(op, dtype, count, seed, seed2):
    """The first call's values of a kernel with these seeds."""
    key = (seed ^ (seed2 * 0x9E3779B97F4A7C15)) & _M64
    values = []
    for group in range((count + _GROUP - 1) // _GROUP):
        stream = _Stream(key, group)
        last = min(count, (group + 1) * _GROUP)
        start = len(values)
        while len(values) < last:
            if op == "RandomUniform":
                values.append(stream.double() if dtype == F64
                              else stream.half() if dtype == F16
                              else stream.float())
                continue
            u1 = 1.0 - stream.double()
            u2 = stream.double()
            radius = math.sqrt(-2.0 * math.log(u1))
            angle = 6.283185307179586 * u2
            for value in (radius * math.cos(angle), radius * math.sin(angle)):
                if len(values) == last:
                    break
                if op == "TruncatedNormal" and abs(value) > 2.0:
                    continue
                values.append(value)
        assert len(values) - start == last - group * _GROUP
    values = np.array(values, F64)
    assert np.all(np.isfinite(values))
    if op == "RandomUniform":
        assert np.all((values >= 0) & (values < 1))
    if op == "TruncatedNormal":
        assert np.all(np.abs(values) <= 2)
    # Stored as random.c stores them: through float unless double.
    return values if dtype == F64 else values.astype(F32).astype(dtype)


_TYPE_NAMES = {F32: "float", F64: "double", F16: "half"}


def _random_cases():
    out = []
    ops = ("RandomUniform", "RandomStandardNormal", "TruncatedNormal")
    # One reference for every rank: the generator is counter-based, so a
    # shape's values depend on its element count only (test_random.c
    # checks the same seeds at rank 1 and 20). Each case has seeds of its
    # own: the runtime keeps one kernel, and so one stream, per seeds.
    shapes = (("rank1", (600,)), ("rank10", (2, 1, 3, 1, 1, 2, 1, 5, 1, 10)),
              ("rank20", (1,) * 18 + (20, 30)))
    seed = 100
    for op in ops:
        for dtype in (F32, F64, F16):
            for tag, shape in shapes:
                seed += 1
                seed2 = 5
                values = _random(op, dtype, int(np.prod(shape)), seed, seed2)
                attrs = {"seed": ("int", seed), "seed2": ("int", seed2),
                         "dtype": ("type", _TYPE_NAMES[dtype])}
                # Normals go through log, cos and sin: a last-place
                # difference in the C library is allowed.
                tolerance = {} if op == "RandomUniform" else \
                    {"rtol": 1e-6 if dtype != F16 else 1e-3, "atol": 1e-12}
                out.append(Case("LargeRanks_%s_%s_%s" %
                                (op, np.dtype(dtype).name, tag), op,
                                [np.array(shape, I32)],
                                [values.reshape(shape)], attrs=attrs,
                                **tolerance))
    empty = np.array((2, 1, 1, 1, 1, 1, 1, 1, 0, 3, 1, 2), I64)
    for op in ops:
        out.append(Case("LargeRanks_%s_float32_rank12_empty" % op, op,
                        [empty], [np.zeros(tuple(empty), F32)],
                        attrs={"seed": ("int", 3), "seed2": ("int", 6),
                               "dtype": ("type", "float")}))
    out.append(_err("LargeRanks_RandomUniform_rank255", "RandomUniform",
                    [np.ones(255, I32)],
                    "RandomUniform: shape has 255 dimensions, more than 254",
                    attrs={"dtype": ("type", "float")}))
    return out


#===---------------------------------------------------------------------===#
# MatrixBandPart, MatrixDiagV3, MatrixDiagPartV3
#===---------------------------------------------------------------------===#

def _matrix_cases(rng):
    out = []
    for tag, shape, dtype, lower, upper in (
            ("rank9", R9, "float32", 1, 2), ("rank10", R10, "int8", -1, 0),
            ("rank20", R20, "complex64", 0, -1)):
        x = _make(rng, dtype, shape)
        out.append(Case("LargeRanks_MatrixBandPart_%s_%s" % (dtype, tag),
                        "MatrixBandPart",
                        [x, np.array(lower, I64), np.array(upper, I64)],
                        [cases_matrix._band(x, lower, upper)]))
    empty = R10[:2] + (0,) + R10[3:]
    out.append(Case("LargeRanks_MatrixBandPart_float32_rank10_empty",
                    "MatrixBandPart",
                    [np.zeros(empty, F32), np.array(1, I32),
                     np.array(1, I32)], [np.zeros(empty, F32)]))
    pad = np.array(9.0, F32)
    # MatrixDiagPartV3: one diagonal drops a rank, a band keeps it.
    for tag, shape, k in (("rank9_band", R9[:-2] + (3, 4), (-1, 2)),
                          ("rank10_main", R10, (0, 0)),
                          ("rank12_band", R12, (-2, 1)),
                          ("rank20_super", R20, (1, 1))):
        x = _make(rng, "float32", shape)
        out.append(Case("LargeRanks_MatrixDiagPartV3_float32_%s" % tag,
                        "MatrixDiagPartV3", [x, np.array(k, I32), pad],
                        [cases_matrix._diag_part(x, k, pad, "RIGHT_LEFT")]))
    empty = (0,) + R9[1:-2] + (3, 4)
    out.append(Case("LargeRanks_MatrixDiagPartV3_float32_rank9_empty",
                    "MatrixDiagPartV3",
                    [np.zeros(empty, F32), np.array([-1, 1], I32), pad],
                    [np.zeros(empty[:-2] + (3, 3), F32)]))
    # MatrixDiagV3: a diagonal of rank r makes rank r + 1, a band of
    # diagonals rank r.
    for tag, shape, k, rows, cols in (
            ("rank9_main", R9, (0, 0), -1, -1),
            ("rank10_band", R10[:-2] + (3, 4), (-1, 1), -1, -1),
            ("rank12_sub", R12, (-1, -1), 5, -1),
            ("rank20_band", R20[:-2] + (2, 3), (0, 1), -1, 4)):
        d = _make(rng, "int32", shape)
        # TensorFlow's inference of a -1 row or column count.
        min_rows = shape[-1] - min(k[1], 0)
        min_cols = shape[-1] + max(k[0], 0)
        r, c = rows, cols
        if rows < 0 and cols < 0:
            r = c = max(min_rows, min_cols)
        elif rows < 0:
            r = min_rows
        elif cols < 0:
            c = min_cols
        pad_i = np.array(-1, I32)
        out.append(Case("LargeRanks_MatrixDiagV3_int32_%s" % tag,
                        "MatrixDiagV3",
                        [d, np.array(k, I32), np.array(rows, I32),
                         np.array(cols, I32), pad_i],
                        [cases_matrix._diag(d, k, r, c, pad_i,
                                            "RIGHT_LEFT")]))
    empty = R10[:3] + (0,) + R10[4:-1]
    out.append(Case("LargeRanks_MatrixDiagV3_float32_rank9_empty",
                    "MatrixDiagV3",
                    [np.zeros(empty + (3,), F32), np.array(0, I32),
                     np.array(-1, I32), np.array(-1, I32), pad],
                    [np.zeros(empty + (3, 3), F32)]))
    return out


#===---------------------------------------------------------------------===#
# GatherNd, ScatterNd, TensorScatterUpdate
#===---------------------------------------------------------------------===#

def _tuples(rng, shape, depth, count):
    return np.stack([rng.integers(0, shape[d], count) for d in range(depth)],
                    axis=-1)


def _gather_nd_cases(rng):
    out = []
    for tag, params_shape, index_outer, depth, dtype in (
            ("rank10_depth3", R10, (4,), 3, "float32"),
            ("rank9_outer_rank3", R9, (2, 2), 2, "int64"),
            ("rank10_depth10", R10, (3,), 10, "string"),
            ("rank12_full_depth_rank9_indices", R12, (1, 2, 1, 1, 1, 1, 1, 2),
             12, "complex128"),
            ("rank2_indices_rank10", (5, 3), (2, 1, 1, 2, 1, 1, 1, 2, 1), 1,
             "int8"),
            ("rank20_depth9", R20, (3,), 9, "bfloat16")):
        p = _make(rng, dtype, params_shape)
        count = int(np.prod(index_outer))
        idx = _tuples(rng, params_shape, depth, count)
        idx = idx.reshape(index_outer + (depth,)).astype(I32)
        out.append(Case("LargeRanks_GatherNd_%s_%s" % (dtype, tag), "GatherNd",
                        [p, idx], [cases_indexing._gather_nd(p, idx)]))
    p = _make(rng, "float32", R10)
    out.append(Case("LargeRanks_GatherNd_float32_rank10_empty_indices",
                    "GatherNd", [p, np.zeros((0, 3), I64)],
                    [np.zeros((0,) + R10[3:], F32)]))
    bad = np.zeros((2, 10), I32)
    bad[1, 9] = 5
    out.append(_err("LargeRanks_GatherNd_rank10_out_of_range", "GatherNd",
                    [p, bad],
                    "indices[1] = %s does not index into param shape %s, "
                    "node name: GatherNd" % (_ints(bad[1]), _dims(R10))))
    out.append(_err("LargeRanks_GatherNd_depth_above_rank", "GatherNd",
                    [p, np.zeros((2, 11), I32)],
                    "index innermost dimension length must be <= params "
                    "rank; saw: 11 vs. 10"))
    return out


def _scatter_cases(rng):
    out = []
    for tag, shape, index_outer, depth, dtype in (
            ("rank10_depth4", R10, (5,), 4, "float32"),
            ("rank12_depth10", R12, (3,), 10, "int32"),
            ("rank3_indices_rank10", (3, 4, 2), (2, 1, 1, 1, 1, 1, 1, 1, 2),
             2, "float64"),
            ("rank20_depth1", R20, (2,), 1, "complex64")):
        count = int(np.prod(index_outer))
        idx = _tuples(rng, shape, depth, count)
        # Repeat a tuple: ScatterNd sums it.
        idx[-1] = idx[0]
        idx = idx.reshape(index_outer + (depth,)).astype(I64)
        u = _make(rng, dtype, index_outer + shape[depth:])
        zeros = np.zeros(shape, u.dtype)
        out.append(Case("LargeRanks_ScatterNd_%s_%s" % (dtype, tag),
                        "ScatterNd", [idx, u, np.array(shape, I64)],
                        [cases_indexing._scatter(zeros, idx, u, True)]))
    for tag, shape, index_outer, depth, dtype in (
            ("rank10_depth9", R10, (4,), 9, "int16"),
            ("rank9_indices_rank10", R9, (1, 2, 1, 1, 1, 1, 1, 1, 2), 3,
             "string"),
            ("rank20_depth20", R20, (3,), 20, "float32")):
        t = _make(rng, dtype, shape)
        count = int(np.prod(index_outer))
        idx = _tuples(rng, shape, depth, count)
        idx = idx.reshape(index_outer + (depth,)).astype(I32)
        u = _make(rng, dtype, index_outer + shape[depth:])
        out.append(Case("LargeRanks_TensorScatterUpdate_%s_%s" % (dtype, tag),
                        "TensorScatterUpdate", [t, idx, u],
                        [cases_indexing._scatter(t, idx, u, False)]))
    empty_u = np.zeros((0,) + R10[2:], F32)
    out.append(Case("LargeRanks_ScatterNd_float32_rank10_empty_indices",
                    "ScatterNd",
                    [np.zeros((0, 2), I32), empty_u, np.array(R10, I32)],
                    [np.zeros(R10, F32)]))
    t = _make(rng, "float32", R10)
    out.append(Case("LargeRanks_TensorScatterUpdate_float32_rank10_empty",
                    "TensorScatterUpdate",
                    [t, np.zeros((0, 2), I32), empty_u], [t]))
    out.append(_err("LargeRanks_ScatterNd_depth_above_rank", "ScatterNd",
                    [np.zeros((1, 11), I32), np.ones(1, F32),
                     np.array(R10, I32)],
                    "ScatterNd: index innermost dimension length must be <= "
                    "shape rank; saw: 11 vs. 10 (indices [1,11], shape %s)"
                    % _dims(R10)))
    out.append(_err("LargeRanks_TensorScatterUpdate_depth_above_rank",
                    "TensorScatterUpdate",
                    [t, np.zeros((1, 11), I32), np.ones(1, F32)],
                    "TensorScatterUpdate: index innermost dimension length "
                    "must be <= tensor rank; saw: 11 vs. 10 (indices [1,11], "
                    "tensor %s)" % _dims(R10)))
    bad = np.zeros((2, 9), I64)
    bad[1, 8] = 3
    out.append(_err("LargeRanks_ScatterNd_rank10_out_of_range", "ScatterNd",
                    [bad, np.ones((2, 5), F32), np.array(R10, I64)],
                    "indices[1] = %s does not index into shape %s"
                    % (_ints(bad[1]), _dims(R10))))
    return out


#===---------------------------------------------------------------------===#
# Copies, variables, training
#===---------------------------------------------------------------------===#

def _copy_and_variable_cases(rng):
    out = []
    for op in ("CopyOn", "CopyOnGrad", "CopyOff", "CopyOffGrad"):
        for tag, shape, dtype in (("rank9", R9, "string"),
                                  ("rank20", R20, "int64")):
            x = _make(rng, dtype, shape)
            out.append(Case("LargeRanks_%s_%s_%s" % (op, dtype, tag), op,
                            [x], [x]))
    for tag, shape in (("rank10", R10), ("rank20", R20)):
        x = _make(rng, "float32", shape)
        y = _make(rng, "float32", shape)
        dtype = {"dtype": ("type", "float")}
        out.append(Case("LargeRanks_ReadVariableOp_float32_" + tag,
                        "ReadVariableOp", [Variable(x)], [x], attrs=dtype))
        out.append(Case("LargeRanks_AssignVariableOp_float32_" + tag,
                        "AssignVariableOp", [Variable(x), y], [],
                        attrs=dtype, variables={0: y}))
        out.append(Case("LargeRanks_AssignAddVariableOp_float32_" + tag,
                        "AssignAddVariableOp", [Variable(x), y], [],
                        attrs=dtype, variables={0: x + y}))
        out.append(Case("LargeRanks_AssignSubVariableOp_float32_" + tag,
                        "AssignSubVariableOp", [Variable(x), y], [],
                        attrs=dtype, variables={0: x - y}))
    x = _make(rng, "int32", R9)
    out.append(Case("LargeRanks_AssignVariableOp_int32_rank9_wrong_shape",
                    "AssignVariableOp", [Variable(x), x.reshape(R9[::-1])],
                    attrs={"dtype": ("type", "int32"),
                           "validate_shape": ("bool", True)},
                    error=("INVALID_ARGUMENT",
                           "Trying to assign to variable with tensor with "
                           "wrong shape. Expected [2, 1, 3, 1, 1, 2, 1, 1, 4] "
                           "got [4, 1, 1, 2, 1, 1, 3, 1, 2]"), outputs=0))
    return out


def _training_cases(rng):
    out = []
    for op in cases_training.OPS:
        for tag, shape, dtype in (("rank9", R9, np.float32),
                                  ("rank10", R10, np.float64),
                                  ("rank20", R20, np.float16),
                                  ("rank10_empty", R10[:9] + (0,),
                                   np.float32)):
            nesterov = cases_training.OPS[op][4]
            case = cases_training._update_case(rng, op, dtype, shape,
                                               nesterov, tag)
            case.name = "LargeRanks_" + case.name
            out.append(case)
    return out


#===---------------------------------------------------------------------===#
# Einsum: operands of rank 8, more than 8 distinct labels
#===---------------------------------------------------------------------===#

def _einsum_cases(rng):
    # Two rank-8 operands naming 12 labels, results of rank 8 and 4 (the
    # ranks above 8 are in cases_einsum.py).
    x = rng.integers(-4, 5, size=(2, 1, 3, 1, 2, 1, 1, 2)).astype(F64)
    y = rng.integers(-4, 5, size=(2, 1, 3, 1, 1, 2, 1, 3)).astype(F64)
    out = []
    for tag, equation in (("rank8", "abcdefgh,abcdijkl->efghijkl"),
                          ("rank4", "abcdefgh,abcdijkl->hlea")):
        out.append(Case("LargeRanks_Einsum_float64_12_labels_" + tag,
                        "Einsum", [x, y], [np.einsum(equation, x, y)],
                        attrs={"equation": ("string", equation),
                               "N": ("int", 2)}))
    return out


def cases():
    rng = np.random.default_rng(20261128)
    out = []
    for group in (_top_k_cases, _check_numerics_cases, _assert_cases,
                  _matrix_cases, _gather_nd_cases, _scatter_cases,
                  _copy_and_variable_cases, _training_cases,
                  _einsum_cases):
        out.extend(group(rng))
    out.extend(_random_cases())
    return out
