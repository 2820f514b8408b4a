"""Broadcasting binary arithmetic: AddV2, Add, Sub, Mul, RealDiv, Div,
FloorDiv, FloorMod, TruncateDiv, TruncateMod, Pow, Maximum, Minimum,
SquaredDifference, against NumPy with TensorFlow's conventions (integer
division truncates for Div, floors for FloorDiv; FloorMod takes the
divisor's sign; x / -1 wraps; division by zero and negative integer powers
fail the op). half and bfloat16 are computed in float32 and rounded."""

import numpy as np

from casegen import BFloat16, Case, round_bfloat16

FLOATS = [np.float32, np.float64]
HALVES = [np.float16, "bfloat16"]
INTS = [np.int32, np.int64, np.uint8, np.int8, np.int16, np.uint16,
        np.uint32, np.uint64]
SIGNED = [np.int32, np.int64, np.int8, np.int16]

# (shape of x, shape of y) for every shape class.
SHAPES = {
    "scalar": ((), ()),
    "scalar_vector": ((), (5,)),
    "vector_scalar": ((7,), ()),
    "same": ((3, 4), (3, 4)),
    "row": ((3, 4), (4,)),
    "column": ((3, 1), (3, 4)),
    "outer": ((5, 1), (1, 6)),
    "rank3": ((2, 1, 4), (3, 1)),
    "empty": ((0, 4), (4,)),
    "empty_broadcast": ((3, 0), (3, 1)),
    "large": ((40001,), (40001,)),
    "large_rows": ((40, 1000), (1000,)),
    # Many short rows plus a repeated row, on either side (the rows are
    # taken several at a time, the last group partial).
    "short_rows": ((300, 7), (7,)),
    "short_rows_first": ((3,), (37, 3)),
    # Costly ops split across threads from a few thousand elements.
    "threaded": ((10001,), (10001,)),
}

# Fewer shape classes for the 16-bit floats and the newer ops (the
# broadcasting driver is shared; these check the loops).
SMALL_SHAPES = ("scalar", "scalar_vector", "vector_scalar", "same", "row",
                "column", "rank3", "empty")

LARGE = ("large", "large_rows")


def _name(dtype):
    return "bfloat16" if dtype == "bfloat16" else np.dtype(dtype).name


def _random(rng, dtype, shape, kind=None):
    """Random values; kind: None, "positive" (floats > 0.5, ints >= 1),
    "nonzero" (ints != 0 of either sign), "base" / "exponent" (Pow)."""
    if dtype in (np.float16, "bfloat16") or np.issubdtype(dtype, np.floating):
        if kind == "base":
            values = rng.uniform(0.1, 4.0, shape)
        elif kind == "exponent":
            values = rng.uniform(-3.0, 3.0, shape)
        else:
            values = rng.standard_normal(shape) * 10
            if kind in ("positive", "nonzero"):
                values = np.abs(values) + 0.5
        if dtype == "bfloat16":
            return BFloat16(values)
        return values.astype(dtype)
    info = np.iinfo(dtype)
    if kind == "base":
        low, high = max(info.min, -6), 6
    elif kind == "exponent":
        low, high = 0, 5
    elif kind in ("positive", "nonzero"):
        low, high = 1, min(info.max, 1000)
    else:
        low, high = max(info.min, -1000), min(info.max, 1000)
    values = rng.integers(low, high, size=shape, endpoint=True)
    if kind == "nonzero" and info.min < 0:
        values = values * rng.choice([-1, 1], size=shape)
    return values.astype(dtype)


def _wide(value):
    """float32 values of a 16-bit float input (NumPy computes in them)."""
    if isinstance(value, BFloat16):
        return value.values
    return np.asarray(value).astype(np.float32)


def _narrow(values, dtype):
    if dtype == "bfloat16":
        return BFloat16(round_bfloat16(values))
    return np.asarray(values).astype(dtype)


def _trunc_div(x, y):
    q = np.floor_divide(x, y)
    return np.where((np.remainder(x, y) != 0) & ((x < 0) != (y < 0)), q + 1, q)


def _floor_mod_float(x, y):
    r = np.fmod(x, y)
    return np.where((r != 0) & ((y < 0) != (r < 0)), r + y, r)


# op -> (dtypes, NumPy function, kind of x values, kind of y values)
def _ops():
    everything = FLOATS + HALVES + INTS
    yield "AddV2", everything, lambda x, y: x + y, None, None
    yield "Add", everything, lambda x, y: x + y, None, None
    yield "Sub", everything, lambda x, y: x - y, None, None
    yield "Mul", everything, lambda x, y: x * y, None, None
    yield "RealDiv", FLOATS + HALVES, lambda x, y: x / y, None, "positive"
    yield "Maximum", everything, np.maximum, None, None
    yield "Minimum", everything, np.minimum, None, None
    yield ("SquaredDifference", FLOATS + HALVES + [np.int32, np.int64],
           lambda x, y: (x - y) * (x - y), None, None)
    yield ("Div", FLOATS + HALVES + INTS,
           lambda x, y: x / y if x.dtype.kind == "f" else _trunc_div(x, y),
           None, "nonzero")
    yield ("TruncateDiv", FLOATS + HALVES + INTS,
           lambda x, y: np.trunc(x / y) if x.dtype.kind == "f"
           else _trunc_div(x, y), None, "nonzero")
    yield ("FloorDiv", FLOATS + HALVES + INTS,
           lambda x, y: np.floor(x / y) if x.dtype.kind == "f"
           else np.floor_divide(x, y), None, "nonzero")
    yield ("FloorMod", FLOATS + HALVES + INTS,
           lambda x, y: _floor_mod_float(x, y) if x.dtype.kind == "f"
           else np.remainder(x, y), None, "nonzero")
    yield ("TruncateMod", FLOATS + HALVES + [np.int32, np.int64],
           np.fmod, None, "nonzero")
    yield "Pow", FLOATS + HALVES + SIGNED, np.power, "base", "exponent"


# Ops present before the 16-bit floats and the division family: every
# shape class; the others get SMALL_SHAPES.
_FIRST_OPS = ("AddV2", "Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum",
              "SquaredDifference")


def _tolerance(op, dtype):
    if op == "Pow":
        return {np.float32: dict(rtol=2e-6), np.float64: dict(rtol=1e-14),
                np.float16: dict(rtol=1e-3), "bfloat16": dict(rtol=8e-3)
                }.get(dtype, {})
    if dtype == np.float32 and op in ("RealDiv", "SquaredDifference", "Div"):
        return dict(rtol=1e-6)
    if op in ("FloorMod", "TruncateMod") and dtype in (np.float32, np.float64):
        return dict(rtol=1e-6, atol=1e-6)
    return {}


def _expect(fn, x, y, dtype):
    with np.errstate(all="ignore"):
        if dtype in HALVES:
            return _narrow(fn(_wide(x), _wide(y)), dtype)
        return np.asarray(fn(x, y)).astype(dtype)


def _regular_cases(rng):
    out = []
    for op, dtypes, fn, kind_x, kind_y in _ops():
        for dtype in dtypes:
            for shape_name, (sx, sy) in SHAPES.items():
                if shape_name in LARGE and (
                        dtype not in (np.float32, np.int64) or
                        op not in ("AddV2", "Maximum")):
                    continue  # the threaded path: two ops, two dtypes
                if shape_name == "threaded" and (
                        dtype not in (np.float32, np.int64) or
                        op not in ("FloorMod", "Pow", "Div")):
                    continue
                if (shape_name not in SMALL_SHAPES + LARGE + ("threaded",)
                        and (op not in _FIRST_OPS or dtype in HALVES)):
                    continue
                x = _random(rng, dtype, sx, kind_x)
                y = _random(rng, dtype, sy, kind_y)
                z = _expect(fn, x, y, dtype)
                out.append(Case("%s_%s_%s" % (op, _name(dtype), shape_name),
                                op, [x, y], [z], **_tolerance(op, dtype)))
    return out


def _wrap(value, dtype):
    info = np.iinfo(dtype)
    span = 1 << info.bits
    return (value - info.min) % span + info.min


def _int_edge_cases():
    """Signs, x / -1 at the most negative value (wraps as TensorFlow's)."""
    out = []
    rules = {
        "Div": lambda a, b: (abs(a) // abs(b)) * (1 if (a < 0) == (b < 0)
                                                  else -1),
        "FloorDiv": lambda a, b: a // b,
        "FloorMod": lambda a, b: a % b,
        "TruncateMod": lambda a, b: a - b * ((abs(a) // abs(b)) *
                                             (1 if (a < 0) == (b < 0) else -1)),
    }
    rules["TruncateDiv"] = rules["Div"]
    for dtype in (np.int32, np.int64, np.int8, np.int16):
        low = int(np.iinfo(dtype).min)
        xs = [7, -7, 7, -7, low, low, 0, 5, -1, low]
        ys = [2, 2, -2, -2, -1, 1, 3, -1, 3, 7]
        for op, rule in rules.items():
            if op == "TruncateMod" and dtype not in (np.int32, np.int64):
                continue
            z = [_wrap(rule(a, b), dtype) for a, b in zip(xs, ys)]
            out.append(Case("%s_%s_signs" % (op, np.dtype(dtype).name), op,
                            [np.array(xs, dtype), np.array(ys, dtype)],
                            [np.array(z, dtype)]))
    for dtype in (np.uint8, np.uint32, np.uint64):
        high = int(np.iinfo(dtype).max)
        xs = [7, high, 0, high, 1]
        ys = [2, 1, 3, high, high]
        for op, rule in rules.items():
            if op == "TruncateMod":
                continue
            z = [rule(a, b) for a, b in zip(xs, ys)]
            out.append(Case("%s_%s_edges" % (op, np.dtype(dtype).name), op,
                            [np.array(xs, dtype), np.array(ys, dtype)],
                            [np.array(z, dtype)]))
    return out


def _special_cases():
    out = []
    # NaN propagates through Maximum and Minimum, as in TensorFlow.
    x = np.array([np.nan, 1.0, -np.inf, 2.0], dtype=np.float32)
    y = np.array([0.0, np.nan, 3.0, np.inf], dtype=np.float32)
    for op, fn in (("Maximum", np.maximum), ("Minimum", np.minimum)):
        out.append(Case("%s_float32_nan" % op, op, [x, y], [fn(x, y)]))
        out.append(Case("%s_float16_nan" % op, op,
                        [x.astype(np.float16), y.astype(np.float16)],
                        [fn(x, y).astype(np.float16)]))
    # Float division by zero gives infinities and NaN.
    x = np.array([1.0, -1.0, 0.0, 2.5], dtype=np.float64)
    y = np.array([0.0, 0.0, 0.0, -0.0], dtype=np.float64)
    with np.errstate(all="ignore"):
        out.append(Case("RealDiv_float64_by_zero", "RealDiv", [x, y], [x / y]))
        out.append(Case("Div_float64_by_zero", "Div", [x, y], [x / y]))
        out.append(Case("FloorDiv_float64_by_zero", "FloorDiv", [x, y],
                        [np.floor(x / y)]))
        out.append(Case("FloorMod_float64_by_zero", "FloorMod", [x, y],
                        [_floor_mod_float(x, y)]))
        xf = x.astype(np.float32)
        yf = y.astype(np.float32)
        out.append(Case("FloorDiv_float32_by_zero", "FloorDiv", [xf, yf],
                        [np.floor(xf / yf)]))
    # FloorMod of floats: the divisor's sign, also for tiny remainders.
    x = np.array([5.5, -5.5, 5.5, -5.5, 1e-30, -6.0, 3.0], dtype=np.float32)
    y = np.array([2.0, 2.0, -2.0, -2.0, -1.0, 3.0, np.inf], dtype=np.float32)
    out.append(Case("FloorMod_float32_signs", "FloorMod", [x, y],
                    [_floor_mod_float(x, y)]))
    out.append(Case("TruncateMod_float32_signs", "TruncateMod", [x, y],
                    [np.fmod(x, y)]))
    out.append(Case("FloorDiv_float32_signs", "FloorDiv", [x, y],
                    [np.floor(x / y)]))
    # Pow's special values (C99 Annex F, as std::pow and NumPy).
    x = np.array([-2.0, -2.0, 0.0, 0.0, 1.0, np.nan, 4.0, -8.0, 2.0],
                 dtype=np.float32)
    y = np.array([3.0, 0.5, 0.0, -1.0, np.nan, 0.0, 0.5, 1.0 / 3.0, 128.0],
                 dtype=np.float32)
    with np.errstate(all="ignore"):
        out.append(Case("Pow_float32_special", "Pow", [x, y], [np.power(x, y)],
                        rtol=2e-6))
    # Integer powers wrap; 0 ** 0 == 1.
    x = np.array([0, 2, -3, 7, 1, -1], dtype=np.int32)
    y = np.array([0, 31, 5, 20, 100, 7], dtype=np.int32)
    with np.errstate(all="ignore"):
        out.append(Case("Pow_int32_wraps", "Pow", [x, y], [np.power(x, y)]))
    # Integer arithmetic wraps.
    big = np.array([np.iinfo(np.int32).max, np.iinfo(np.int32).min],
                   dtype=np.int32)
    one = np.array([1, 1], dtype=np.int32)
    with np.errstate(all="ignore"):
        out.append(Case("AddV2_int32_wraps", "AddV2", [big, one], [big + one]))
        out.append(Case("Sub_int32_wraps", "Sub", [big, one], [big - one]))
        out.append(Case("Mul_int16_wraps", "Mul",
                        [np.array([300, -300], np.int16),
                         np.array([300, 300], np.int16)],
                        [np.array([300, -300], np.int16) *
                         np.array([300, 300], np.int16)]))
        out.append(Case("Mul_uint16_wraps", "Mul",
                        [np.array([65535, 40000], np.uint16),
                         np.array([65535, 3], np.uint16)],
                        [np.array([65535, 40000], np.uint16) *
                         np.array([65535, 3], np.uint16)]))
    # 16-bit float rounding and overflow.
    x = np.array([65504.0, 1.0, 2049.0], dtype=np.float16)
    y = np.array([65504.0, 0.0004883, 1.0], dtype=np.float16)
    with np.errstate(all="ignore"):
        z = (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)
    out.append(Case("AddV2_float16_rounding", "AddV2", [x, y], [z]))
    return out


def _error_cases():
    out = []
    f32 = np.float32
    out.append(Case("AddV2_incompatible_shapes", "AddV2",
                    [np.zeros((2, 3), f32), np.zeros((4,), f32)],
                    error=("INVALID_ARGUMENT",
                           "Incompatible shapes: [2,3] vs. [4]")))
    out.append(Case("Pow_incompatible_shapes", "Pow",
                    [np.zeros((3,), f32), np.zeros((2, 2), f32)],
                    error=("INVALID_ARGUMENT",
                           "Incompatible shapes: [3] vs. [2,2]")))
    out.append(Case("Mul_mixed_dtypes", "Mul",
                    [np.zeros((2,), f32), np.zeros((2,), np.int32)],
                    error=("INVALID_ARGUMENT", "Mul")))
    out.append(Case("RealDiv_int32_not_allowed", "RealDiv",
                    [np.ones((2,), np.int32), np.ones((2,), np.int32)],
                    error=("INVALID_ARGUMENT", "not in the list of allowed")))
    out.append(Case("Pow_uint8_not_allowed", "Pow",
                    [np.ones((2,), np.uint8), np.ones((2,), np.uint8)],
                    error=("INVALID_ARGUMENT", "not in the list of allowed")))
    out.append(Case("FloorMod_bool_not_allowed", "FloorMod",
                    [np.ones((2,), np.bool_), np.ones((2,), np.bool_)],
                    error=("INVALID_ARGUMENT", "not in the list of allowed")))
    # Integer division by zero fails the op, as TensorFlow's.
    for op in ("Div", "FloorDiv", "FloorMod", "TruncateDiv", "TruncateMod"):
        for dtype in (np.int32, np.int64, np.uint8):
            if op == "TruncateMod" and dtype == np.uint8:
                continue
            out.append(Case("%s_%s_by_zero" % (op, np.dtype(dtype).name), op,
                            [np.array([4, 5, 6], dtype),
                             np.array([1, 0, 2], dtype)],
                            error=("INVALID_ARGUMENT",
                                   "Integer division by zero")))
    out.append(Case("FloorDiv_int32_by_zero_scalar", "FloorDiv",
                    [np.arange(10001, dtype=np.int32), np.int32(0)],
                    error=("INVALID_ARGUMENT", "Integer division by zero")))
    for dtype in (np.int32, np.int64):
        out.append(Case("Pow_%s_negative_exponent" % np.dtype(dtype).name,
                        "Pow", [np.array([5, 2], dtype),
                                np.array([2, -3], dtype)],
                        error=("INVALID_ARGUMENT",
                               "Integers to negative integer powers are not "
                               "allowed")))
    return out


def _exact_fmod_cases(rng):
    """float32 FloorMod and TruncateMod to the bit (NumPy's fmod is exact):
    quotients from below 1 to past 2^27, where the vector loop's double
    precision path ends, exact multiples (zeros of either sign), and
    infinities, NaN and zero divisors (which take SLEEF's path); 4099
    elements, so that vectors mixing the two paths and a tail occur."""
    n = 4099
    sign_a = rng.choice([-1.0, 1.0], n)
    sign_b = rng.choice([-1.0, 1.0], n)
    a = sign_a * rng.uniform(1, 2, n) * np.exp2(rng.integers(-40, 70, n))
    b = sign_b * rng.uniform(1, 2, n) * np.exp2(rng.integers(-40, 40, n))
    a, b = a.astype(np.float32), b.astype(np.float32)
    # Exact multiples, and quotients just under and over 2^27.
    a[:200] = (b[:200].astype(np.float64) *
               rng.integers(-1000, 1000, 200)).astype(np.float32)
    a[200:300] = (np.abs(b[200:300]).astype(np.float64) *
                  (2.0 ** 27 - rng.integers(1, 64, 100))).astype(np.float32)
    a[300:400] = (np.abs(b[300:400]).astype(np.float64) *
                  (2.0 ** 27 + rng.integers(1, 64, 100))).astype(np.float32)
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0],
                       np.float32)
    a[400:449] = np.repeat(special, 7)
    b[400:449] = np.tile(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3.0,
                                   -3.0], np.float32), 7)
    out = []
    with np.errstate(all="ignore"):
        for op, fn in (("TruncateMod", np.fmod),
                       ("FloorMod", _floor_mod_float)):
            z = fn(a, b).astype(np.float32)
            out.append(Case("%s_float32_exact" % op, op, [a, b], [z]))
    return out


# Pow of floats to within 1 ulp of NumPy's float64 power rounded to the
# dtype (rtol 2^-23 or 2^-52 admits one unit in the last place of the
# expected value's binade and never two; atol one ulp of the subnormals).
_POW_ULP = {np.float32: dict(rtol=2.0 ** -23, atol=2.0 ** -149),
            np.float64: dict(rtol=2.0 ** -52, atol=2.0 ** -1074)}


def _pow_reference(x, y, dtype):
    with np.errstate(all="ignore"):
        return np.power(x.astype(np.float64),
                        y.astype(np.float64)).astype(dtype)


def _pow_cases(rng):
    """IEEE pow's special values (every pair of a grid, through the
    broadcast loop and contiguous), and random operands over the whole
    range: subnormal bases, results that overflow or underflow through the
    subnormals, bases near 1 with large exponents, negative bases with
    integral exponents; 4099 elements, so that vectors mixing special and
    ordinary lanes and a tail occur."""
    out = []
    for dtype in (np.float32, np.float64):
        info = np.finfo(dtype)
        tiny = info.smallest_subnormal
        specials = [0.0, np.inf, np.nan, 1.0, 0.5, 2.0, 3.0, tiny,
                    float(info.tiny), float(info.max), 1.0 + float(info.eps)]
        xs = np.array(specials + [-v for v in specials], dtype)
        ys = np.array(specials + [-v for v in specials] +
                      [1.5, -1.5, 2.0 ** 24 + 2, -(2.0 ** 24) - 2, 1e10,
                       -1e10, 2.0 ** 31 + 2 ** 8, 7.0, -7.0, 1.0 / 3.0],
                      dtype)
        x = xs[:, None]
        y = ys[None, :]
        name = np.dtype(dtype).name
        out.append(Case("Pow_%s_special_grid" % name, "Pow", [x, y],
                        [_pow_reference(x, y, dtype)], **_POW_ULP[dtype]))
        xf = np.repeat(xs, len(ys))
        yf = np.tile(ys, len(xs))
        out.append(Case("Pow_%s_special_pairs" % name, "Pow", [xf, yf],
                        [_pow_reference(xf, yf, dtype)], **_POW_ULP[dtype]))

        n = 4099
        low = -149 if dtype == np.float32 else -1074
        high = 127 if dtype == np.float32 else 1023
        x = rng.uniform(1, 2, n) * np.exp2(rng.integers(low, high, n))
        # Exponents that bring |y log2 x| up to 1.2 times the range, so
        # that some results overflow and some underflow.
        log2x = np.log2(np.maximum(x, np.finfo(np.float64).smallest_subnormal))
        y = rng.uniform(-1.2, 1.2, n) * (high + 25) / np.maximum(
            np.abs(log2x), 1e-3)
        # Bases near 1 with large exponents.
        eps = float(np.finfo(dtype).eps)
        x[:500] = 1.0 + rng.integers(-4000, 4000, 500) * eps
        y[:500] = rng.uniform(-1, 1, 500) * 2.0 ** rng.integers(0, 28, 500)
        # Negative bases with integral exponents (odd and even), and with
        # non-integral ones (NaN).
        x[500:1500] = -x[500:1500]
        y[500:1200] = np.round(y[500:1200])
        y[1200:1300] = rng.integers(-40, 40, 100)
        # Small exponents of ordinary bases.
        y[1500:2500] = rng.uniform(-4, 4, 1000)
        # A few special values among ordinary lanes.
        special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0])
        x[2500:2800:7] = np.resize(special, len(range(2500, 2800, 7)))
        y[2503:2900:11] = np.resize(special, len(range(2503, 2900, 11)))
        x, y = x.astype(dtype), y.astype(dtype)
        out.append(Case("Pow_%s_wide" % name, "Pow", [x, y],
                        [_pow_reference(x, y, dtype)], **_POW_ULP[dtype]))
        # One base, many exponents (the broadcast operand), and the reverse.
        out.append(Case("Pow_%s_scalar_base" % name, "Pow",
                        [np.array(1.7, dtype), y[1500:2500]],
                        [_pow_reference(np.array(1.7, dtype), y[1500:2500],
                                        dtype)], **_POW_ULP[dtype]))
        out.append(Case("Pow_%s_scalar_exponent" % name, "Pow",
                        [x[1000:2500], np.array(-2.5, dtype)],
                        [_pow_reference(x[1000:2500], np.array(-2.5, dtype),
                                        dtype)], **_POW_ULP[dtype]))
    return out


def cases():
    rng = np.random.default_rng(20261123)
    return (_regular_cases(rng) + _int_edge_cases() + _special_cases() +
            _exact_fmod_cases(rng) + _error_cases() +
            _pow_cases(np.random.default_rng(20261128)))
