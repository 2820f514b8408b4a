"""Select, SelectV2, AddN, ClipByValue, BiasAdd and BiasAddGrad against
NumPy, with TensorFlow's shape rules and messages."""

import numpy as np

from casegen import BFloat16, Case, round_bfloat16

DTYPES = [np.float32, np.float64, np.float16, "bfloat16", np.int32, np.int64,
          np.uint8, np.int8, np.int16, np.uint16, np.uint32, np.uint64]


def _name(dtype):
    return "bfloat16" if dtype == "bfloat16" else np.dtype(dtype).name


def _random(rng, dtype, shape, scale=10):
    if dtype == "bfloat16":
        return BFloat16((rng.standard_normal(shape) * scale).astype(np.float32))
    if np.issubdtype(dtype, np.floating):
        return (rng.standard_normal(shape) * scale).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), size=shape,
                        endpoint=True).astype(dtype)


def _values(x):
    return x.values if isinstance(x, BFloat16) else np.asarray(x)


def _like(values, dtype):
    """NumPy results back in `dtype` (bfloat16 rounded)."""
    if dtype == "bfloat16":
        return BFloat16(round_bfloat16(values))
    return np.asarray(values).astype(dtype)


def _tolerance(dtype, n=1):
    """Sums of n terms: the rounding of each step."""
    if dtype == np.float16:
        return dict(rtol=2e-3 * n, atol=2e-2 * n)
    if dtype == "bfloat16":
        return dict(rtol=1e-2 * n, atol=1e-1 * n)
    if dtype == np.float32:
        return dict(rtol=1e-5, atol=1e-4)
    if dtype == np.float64:
        return dict(rtol=1e-12, atol=1e-10)
    return {}


#===------------------------------------------------------------------------===#
# Select and SelectV2
#===------------------------------------------------------------------------===#

def _select_cases(rng):
    out = []
    # (condition shape, then/else shape)
    select_shapes = {
        "scalar_true": ((), (2, 3)),
        "scalar_false": ((), (2, 3)),
        "same": ((3, 4), (3, 4)),
        "rows": ((3,), (3, 4, 2)),
        "vector": ((5,), (5,)),
        "empty": ((0, 2), (0, 2)),
    }
    for dtype in DTYPES + [np.bool_]:
        for shape_name, (sc, st) in select_shapes.items():
            cond = _random(rng, np.bool_, sc)
            if shape_name == "scalar_true":
                cond = np.array(True)
            elif shape_name == "scalar_false":
                cond = np.array(False)
            t = _random(rng, dtype, st)
            e = _random(rng, dtype, st)
            c = cond.reshape(cond.shape + (1,) * (len(st) - cond.ndim)) \
                if shape_name == "rows" else cond
            z = np.where(c, _values(t), _values(e))
            out.append(Case("Select_%s_%s" % (_name(dtype), shape_name),
                            "Select", [cond, t, e], [_like(z, dtype)]))
    # Just above the single-thread threshold; Select moves elements by size,
    # and integers keep the file small.
    large = (200, 201)
    cond = _random(rng, np.bool_, (200,))
    t = _random(rng, np.int32, large)
    e = _random(rng, np.int32, large)
    out.append(Case("Select_int32_rows_large", "Select", [cond, t, e],
                    [np.where(cond[:, None], t, e)]))
    cond = _random(rng, np.bool_, large)
    out.append(Case("Select_int32_large", "Select", [cond, t, e],
                    [np.where(cond, t, e)]))
    # SelectV2 broadcasts all three.
    v2_shapes = {
        "scalar": ((), (2, 3), (2, 3)),
        "scalar_all": ((), (), ()),
        "same": ((3, 4), (3, 4), (3, 4)),
        "cond_row": ((4,), (3, 4), (3, 4)),
        "then_scalar": ((3, 4), (), (4,)),
        "rank3": ((2, 1, 4), (3, 1), (1,)),
        "cond_expands": ((2, 1, 3), (3,), (3,)),
        "empty": ((0, 3), (3,), ()),
    }
    for dtype in DTYPES + [np.bool_]:
        for shape_name, (sc, st, se) in v2_shapes.items():
            cond = _random(rng, np.bool_, sc)
            t = _random(rng, dtype, st)
            e = _random(rng, dtype, se)
            z = np.where(cond, _values(t), _values(e))
            out.append(Case("SelectV2_%s_%s" % (_name(dtype), shape_name),
                            "SelectV2", [cond, t, e], [_like(z, dtype)]))
    cond = _random(rng, np.bool_, (200, 1))
    t = _random(rng, np.int64, (200, 201))
    e = _random(rng, np.int64, (201,))
    out.append(Case("SelectV2_int64_large", "SelectV2", [cond, t, e],
                    [np.where(cond, t, e)]))
    # Errors.
    f = np.float32
    out.append(Case("Select_then_else_differ", "Select",
                    [np.array(True), np.zeros((2,), f), np.zeros((3,), f)],
                    error=("INVALID_ARGUMENT",
                           "'then' and 'else' must have the same size.  but "
                           "received: [2] vs. [3]")))
    out.append(Case("Select_rows_mismatch", "Select",
                    [np.zeros((2,), np.bool_), np.zeros((3, 2), f),
                     np.zeros((3, 2), f)],
                    error=("INVALID_ARGUMENT",
                           "Number of batches of 'then' must match size of "
                           "'cond', but saw: 3 vs. 2")))
    out.append(Case("Select_cond_shape", "Select",
                    [np.zeros((2, 2), np.bool_), np.zeros((2, 3), f),
                     np.zeros((2, 3), f)],
                    error=("INVALID_ARGUMENT",
                           "must have the same size and shape.  Input 0: "
                           "[2,2] != input 1: [2,3]")))
    out.append(Case("Select_cond_not_bool", "Select",
                    [np.zeros((2,), f), np.zeros((2,), f), np.zeros((2,), f)],
                    error=("INVALID_ARGUMENT", "Select")))
    out.append(Case("SelectV2_not_broadcastable", "SelectV2",
                    [np.zeros((2,), np.bool_), np.zeros((3,), f),
                     np.zeros((4,), f)],
                    error=("INVALID_ARGUMENT",
                           "condition [2], then [3], and else [4] must be "
                           "broadcastable")))
    out.append(Case("SelectV2_mixed_dtypes", "SelectV2",
                    [np.zeros((2,), np.bool_), np.zeros((2,), f),
                     np.zeros((2,), np.int32)],
                    error=("INVALID_ARGUMENT", "SelectV2")))
    return out


#===------------------------------------------------------------------------===#
# AddN
#===------------------------------------------------------------------------===#

def _add_n_cases(rng):
    out = []
    shapes = {"scalar": (), "vector": (7,), "matrix": (3, 5), "empty": (0, 3)}
    for dtype in DTYPES:
        for n in (1, 2, 3, 5):
            for shape_name, shape in shapes.items():
                if n == 5 and shape_name != "matrix":
                    continue
                xs = [_random(rng, dtype, shape) for _ in range(n)]
                total = sum(_values(x).astype(np.float64)
                            if _values(x).dtype.kind == "f"
                            else _values(x).astype(np.int64) for x in xs)
                z = _like(total, dtype)
                out.append(Case("AddN_%s_%d_%s" % (_name(dtype), n,
                                                   shape_name),
                                "AddN", xs, [z],
                                attrs={"N": ("int", n)},
                                **_tolerance(dtype, n)))
    # Many inputs, and the threaded path.
    xs = [_random(rng, np.float32, (4, 3)) for _ in range(12)]
    out.append(Case("AddN_float32_12_inputs", "AddN", xs,
                    [sum(x.astype(np.float64) for x in xs).astype(np.float32)],
                    attrs={"N": ("int", 12)}, rtol=1e-5, atol=1e-4))
    xs = [_random(rng, np.int32, (9000,)) for _ in range(4)]
    out.append(Case("AddN_int32_large", "AddN", xs, [sum(xs)],
                    attrs={"N": ("int", 4)}))
    # Integers wrap.
    big = np.array([np.iinfo(np.int32).max, 5], np.int32)
    with np.errstate(all="ignore"):
        out.append(Case("AddN_int32_wraps", "AddN", [big, big],
                        [big + big], attrs={"N": ("int", 2)}))
    out.append(Case("AddN_shapes_differ", "AddN",
                    [np.zeros((2, 3), np.float32), np.zeros((3,), np.float32)],
                    attrs={"N": ("int", 2)},
                    error=("INVALID_ARGUMENT",
                           "must have the same size and shape.  Input 0: "
                           "[2,3] != input 1: [3]")))
    out.append(Case("AddN_bool_not_allowed", "AddN",
                    [np.zeros((2,), np.bool_), np.zeros((2,), np.bool_)],
                    attrs={"N": ("int", 2)},
                    error=("INVALID_ARGUMENT", "not in the list of allowed")))
    return out


#===------------------------------------------------------------------------===#
# ClipByValue
#===------------------------------------------------------------------------===#

def _clip(t, lo, hi):
    """TensorFlow's order: min with the maximum, then max with the minimum."""
    m = np.where(hi < t, hi, t)
    return np.where(m < lo, lo, m)


def _clip_cases(rng):
    out = []
    for dtype in DTYPES:
        for shape_name, (st, sb) in {"scalar_bounds": ((3, 4), ()),
                                     "tensor_bounds": ((3, 4), (3, 4)),
                                     "rank0": ((), ()),
                                     "empty": ((0, 4), ())}.items():
            t = _random(rng, dtype, st)
            lo = _random(rng, dtype, sb, scale=2)
            hi = _random(rng, dtype, sb, scale=2)
            lo_v, hi_v = np.minimum(_values(lo), _values(hi)), \
                np.maximum(_values(lo), _values(hi))
            lo = _like(lo_v, dtype)
            hi = _like(hi_v, dtype)
            z = _clip(_values(t), _values(lo), _values(hi))
            out.append(Case("ClipByValue_%s_%s" % (_name(dtype), shape_name),
                            "ClipByValue", [t, lo, hi], [_like(z, dtype)]))
    # Mixed: a tensor min with a scalar max.
    t = _random(rng, np.float32, (2, 5))
    lo = _random(rng, np.float32, (2, 5), scale=1) - 2
    hi = np.float32(3.0)
    out.append(Case("ClipByValue_float32_mixed_bounds", "ClipByValue",
                    [t, lo, hi], [_clip(t, lo, hi)]))
    # NaN stays NaN; min above max gives min (TensorFlow's order).
    t = np.array([np.nan, -np.inf, np.inf, 0.5, 5.0], np.float32)
    out.append(Case("ClipByValue_float32_special", "ClipByValue",
                    [t, np.float32(-1.0), np.float32(1.0)],
                    [_clip(t, np.float32(-1.0), np.float32(1.0))]))
    out.append(Case("ClipByValue_float32_min_above_max", "ClipByValue",
                    [t, np.float32(2.0), np.float32(1.0)],
                    [_clip(t, np.float32(2.0), np.float32(1.0))]))
    t = _random(rng, np.int32, (200, 201))
    out.append(Case("ClipByValue_int32_large", "ClipByValue",
                    [t, np.int32(-50), np.int32(50)], [np.clip(t, -50, 50)]))
    out.append(Case("ClipByValue_bad_bounds", "ClipByValue",
                    [np.zeros((2, 3), np.float32), np.zeros((3,), np.float32),
                     np.float32(1.0)],
                    error=("INVALID_ARGUMENT",
                           "clip_value_min and clip_value_max must be either "
                           "of the same shape as input, or a scalar. input "
                           "shape: [2,3] clip_value_min shape: [3] "
                           "clip_value_max shape: []")))
    out.append(Case("ClipByValue_mixed_dtypes", "ClipByValue",
                    [np.zeros((2,), np.float32), np.int32(0), np.int32(1)],
                    error=("INVALID_ARGUMENT", "ClipByValue")))
    return out


#===------------------------------------------------------------------------===#
# BiasAdd and BiasAddGrad
#===------------------------------------------------------------------------===#

def _bias_shape(shape, nchw):
    return shape[1] if nchw and len(shape) > 1 else shape[-1]


def _bias_cases(rng):
    out = []
    shapes = {"rank2": (4, 3), "rank3": (2, 3, 5), "rank4": (2, 3, 2, 4),
              "empty": (0, 2, 3)}
    for dtype in DTYPES:
        for fmt in ("NHWC", "NCHW"):
            for shape_name, shape in shapes.items():
                nchw = fmt == "NCHW"
                value = _random(rng, dtype, shape)
                channels = _bias_shape(shape, nchw)
                bias = _random(rng, dtype, (channels,))
                b = _values(bias)
                if nchw:
                    b = b.reshape((channels,) + (1,) * (len(shape) - 2))
                wide = np.float32 if dtype in (np.float16, "bfloat16") else None
                v = _values(value)
                with np.errstate(all="ignore"):
                    z = (v.astype(wide) + b.astype(wide)) if wide else v + b
                attrs = {"data_format": ("string", fmt)}
                out.append(Case("BiasAdd_%s_%s_%s" % (_name(dtype), fmt,
                                                      shape_name),
                                "BiasAdd", [value, bias], [_like(z, dtype)],
                                attrs=attrs))
                # BiasAddGrad: the sum over every dim but the channel's.
                axes = tuple(i for i in range(len(shape))
                             if i != (1 if nchw else len(shape) - 1))
                wide_sum = np.float64 if v.dtype.kind == "f" else np.int64
                g = np.sum(v.astype(wide_sum), axis=axes)
                n = int(np.prod([shape[i] for i in axes])) or 1
                out.append(Case("BiasAddGrad_%s_%s_%s" % (_name(dtype), fmt,
                                                          shape_name),
                                "BiasAddGrad", [value], [_like(g, dtype)],
                                attrs=attrs, **_tolerance(dtype, n)))
    # Large: the threaded paths (few channels, many channels, NCHW runs).
    for name, shape, fmt in (("nhwc_many", (20, 2000), "NHWC"),
                             ("nchw", (2, 3, 80, 90), "NCHW"),
                             ("nhwc_short_rows", (37, 3), "NHWC"),
                             ("nhwc_rows_in_tiles", (700, 7), "NHWC")):
        value = _random(rng, np.float32, shape, scale=1)
        nchw = fmt == "NCHW"
        axes = tuple(i for i in range(len(shape))
                     if i != (1 if nchw else len(shape) - 1))
        g = np.sum(value.astype(np.float64), axis=axes).astype(np.float32)
        out.append(Case("BiasAddGrad_float32_large_%s" % name, "BiasAddGrad",
                        [value], [g], attrs={"data_format": ("string", fmt)},
                        rtol=1e-4, atol=1e-2))
    value = _random(rng, np.int32, (2, 16, 36, 36))
    bias = _random(rng, np.int32, (16,))
    out.append(Case("BiasAdd_int32_large_NCHW", "BiasAdd", [value, bias],
                    [value + bias.reshape(16, 1, 1)],
                    attrs={"data_format": ("string", "NCHW")}))
    value = _random(rng, np.float64, (2, 3, 4))
    bias = _random(rng, np.float64, (4,))
    out.append(Case("BiasAddV1_float64", "BiasAddV1", [value, bias],
                    [value + bias]))
    value = _random(rng, np.int32, (14000, 3))
    out.append(Case("BiasAddGrad_int32_large", "BiasAddGrad", [value],
                    [np.sum(value, axis=0, dtype=np.int64).astype(np.int32)]))
    # Errors.
    f = np.float32
    out.append(Case("BiasAdd_rank1", "BiasAdd",
                    [np.zeros((3,), f), np.zeros((3,), f)],
                    error=("INVALID_ARGUMENT",
                           "Input tensor must be at least 2D: [3]")))
    out.append(Case("BiasAdd_bias_rank2", "BiasAdd",
                    [np.zeros((2, 3), f), np.zeros((1, 3), f)],
                    error=("INVALID_ARGUMENT", "Biases must be 1D: [1,3]")))
    out.append(Case("BiasAdd_bias_size", "BiasAdd",
                    [np.zeros((2, 3), f), np.zeros((4,), f)],
                    error=("INVALID_ARGUMENT",
                           "Must provide as many biases as the last dimension "
                           "of the input tensor: [4] vs. [2,3]")))
    out.append(Case("BiasAdd_bias_size_NCHW", "BiasAdd",
                    [np.zeros((2, 3, 4), f), np.zeros((4,), f)],
                    attrs={"data_format": ("string", "NCHW")},
                    error=("INVALID_ARGUMENT",
                           "Must provide as many biases as the channel "
                           "dimension of the input tensor: [4] vs. [2,3,4]")))
    out.append(Case("BiasAdd_bad_data_format", "BiasAdd",
                    [np.zeros((2, 3), f), np.zeros((3,), f)],
                    attrs={"data_format": ("string", "NDHWC")},
                    error=("INVALID_ARGUMENT", "data_format")))
    out.append(Case("BiasAddGrad_rank1", "BiasAddGrad", [np.zeros((3,), f)],
                    error=("INVALID_ARGUMENT",
                           "Input tensor must be at least 2D: [3]")))
    out.append(Case("BiasAddGrad_bool_not_allowed", "BiasAddGrad",
                    [np.zeros((2, 2), np.bool_)],
                    error=("INVALID_ARGUMENT", "not in the list of allowed")))
    return out


def cases():
    rng = np.random.default_rng(20261125)
    return (_select_cases(rng) + _add_n_cases(rng) + _clip_cases(rng) +
            _bias_cases(rng))
