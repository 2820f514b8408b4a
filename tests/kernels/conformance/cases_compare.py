"""Comparisons and logical ops: Less, LessEqual, Greater, GreaterEqual,
Equal, NotEqual (with incompatible_shape_error), LogicalAnd, LogicalOr,
against NumPy. Results are bool; 16-bit floats compare as their float32
values (NaN unequal to everything, -0 == +0)."""

import numpy as np

from casegen import BFloat16, Case

REAL = [np.float32, np.float64, np.float16, "bfloat16", np.int32, np.int64,
        np.uint8, np.int8, np.int16, np.uint16, np.uint32, np.uint64]

SHAPES = {
    "scalar": ((), ()),
    "scalar_vector": ((), (5,)),
    "same": ((3, 4), (3, 4)),
    "row": ((3, 4), (4,)),
    "short_rows": ((5,), (300, 5)),  # a bool output over many short rows
    "outer": ((5, 1), (1, 6)),
    "empty": ((0, 4), (4,)),
}

LARGE = ((161, 250), (250,))  # above the single-thread threshold

OPS = {
    "Less": np.less,
    "LessEqual": np.less_equal,
    "Greater": np.greater,
    "GreaterEqual": np.greater_equal,
    "Equal": np.equal,
    "NotEqual": np.not_equal,
}


def _name(dtype):
    return "bfloat16" if dtype == "bfloat16" else np.dtype(dtype).name


def _random(rng, dtype, shape):
    """Few distinct values, so that equal pairs are common."""
    values = rng.integers(-4, 5, size=shape)
    if dtype == "bfloat16":
        return BFloat16((values * 0.5).astype(np.float32))
    if np.issubdtype(dtype, np.floating):
        return (values * 0.5).astype(dtype)
    if np.issubdtype(dtype, np.unsignedinteger):
        values = values + 4
    return values.astype(dtype)


def _values(x):
    return x.values if isinstance(x, BFloat16) else x


def _compare_cases(rng):
    out = []
    for op, fn in OPS.items():
        for dtype in REAL:
            for shape_name, (sx, sy) in SHAPES.items():
                x = _random(rng, dtype, sx)
                y = _random(rng, dtype, sy)
                z = np.asarray(fn(_values(x), _values(y)))
                out.append(Case("%s_%s_%s" % (op, _name(dtype), shape_name),
                                op, [x, y], [z]))
        # The threaded path, for two ops (integers keep the file small).
        if op in ("Less", "Equal"):
            x = _random(rng, np.int32, LARGE[0])
            y = _random(rng, np.int32, LARGE[1])
            out.append(Case("%s_int32_large" % op, op, [x, y], [fn(x, y)]))
    # NaN, infinities and signed zeros.
    x = np.array([np.nan, 1.0, np.nan, -0.0, np.inf, -np.inf, 2.0])
    y = np.array([np.nan, np.nan, 1.0, 0.0, np.inf, np.inf, 2.0])
    for op, fn in OPS.items():
        for dtype in (np.float32, np.float64, np.float16):
            out.append(Case("%s_%s_special" % (op, np.dtype(dtype).name), op,
                            [x.astype(dtype), y.astype(dtype)],
                            [fn(x, y)]))
        out.append(Case("%s_bfloat16_special" % op, op,
                        [BFloat16(x), BFloat16(y)], [fn(x, y)]))
    # Integers at their extremes.
    for dtype in (np.int64, np.uint64, np.int8):
        info = np.iinfo(dtype)
        x = np.array([info.min, info.max, info.min, 0], dtype)
        y = np.array([info.max, info.max, info.min + 1, info.max], dtype)
        for op in ("Less", "Equal"):
            out.append(Case("%s_%s_extremes" % (op, np.dtype(dtype).name), op,
                            [x, y], [OPS[op](x, y)]))
    return out


def _bool_cases(rng):
    out = []
    ops = {"LogicalAnd": np.logical_and, "LogicalOr": np.logical_or,
           "Equal": np.equal, "NotEqual": np.not_equal}
    for op, fn in ops.items():
        for shape_name, (sx, sy) in list(SHAPES.items()) + [("large", LARGE)]:
            x = rng.integers(0, 2, size=sx).astype(np.bool_)
            y = rng.integers(0, 2, size=sy).astype(np.bool_)
            out.append(Case("%s_bool_%s" % (op, shape_name), op, [x, y],
                            [np.asarray(fn(x, y))]))
    return out


def _incompatible_cases():
    out = []
    x = np.zeros((2, 3), np.float32)
    y = np.zeros((4,), np.float32)
    off = {"incompatible_shape_error": ("bool", False)}
    out.append(Case("Equal_incompatible_shapes_no_error", "Equal", [x, y],
                    [np.array(False)], attrs=off))
    out.append(Case("NotEqual_incompatible_shapes_no_error", "NotEqual",
                    [x, y], [np.array(True)], attrs=off))
    # Compatible shapes still broadcast with the attr off.
    a = np.array([[1, 2, 3]], np.int32)
    b = np.array([[1], [3]], np.int32)
    out.append(Case("Equal_compatible_shapes_attr_off", "Equal", [a, b],
                    [np.equal(a, b)], attrs=off))
    for op in ("Equal", "NotEqual", "Less", "LogicalAnd"):
        dtype = np.bool_ if op == "LogicalAnd" else np.float32
        out.append(Case("%s_incompatible_shapes" % op, op,
                        [np.zeros((2, 3), dtype), np.zeros((4,), dtype)],
                        error=("INVALID_ARGUMENT",
                               "Incompatible shapes: [2,3] vs. [4]")))
    out.append(Case("Less_bool_not_allowed", "Less",
                    [np.zeros((2,), np.bool_), np.zeros((2,), np.bool_)],
                    error=("INVALID_ARGUMENT", "not in the list of allowed")))
    out.append(Case("LogicalAnd_float_not_allowed", "LogicalAnd",
                    [np.zeros((2,), np.float32), np.zeros((2,), np.float32)],
                    error=("INVALID_ARGUMENT", "LogicalAnd")))
    out.append(Case("Greater_mixed_dtypes", "Greater",
                    [np.zeros((2,), np.float32), np.zeros((2,), np.float64)],
                    error=("INVALID_ARGUMENT", "Greater")))
    return out


def cases():
    rng = np.random.default_rng(20261124)
    return _compare_cases(rng) + _bool_cases(rng) + _incompatible_cases()
