"""Element-wise unary math, activations, rounding, LogicalNot and the
gradient helpers (TanhGrad, ReluGrad, ...), against NumPy.

Expected values are computed in float64 from the inputs as stored (16-bit
floats already rounded) and rounded to the output dtype. Tolerances per
dtype: float32 1e-6 relative (SLEEF's u10 functions are within 1 ulp, the
u35 ones Loom uses for float Tanh, Log, Sin and Cos within 3.5 ulp, the
composite ones such as Sigmoid a few ulp), float64 1e-13 (u10 throughout),
half 2e-3 and bfloat16 1.6e-2 (one or two units in the last place: Loom
computes them in float and rounds once more); rounding ops, Neg, Abs, Sign,
Relu, Relu6 and integers are exact.
"""

import math

import numpy as np

from casegen import BFloat16, Case

FLOATS = ["float32", "float64", "float16", "bfloat16"]
SIGNED = [np.int8, np.int16, np.int32, np.int64]
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]

TOLERANCE = {
    "float32": dict(rtol=1e-6, atol=1e-30),
    "float64": dict(rtol=1e-13, atol=1e-300),
    "float16": dict(rtol=2e-3, atol=1e-6),
    "bfloat16": dict(rtol=1.6e-2, atol=1e-30),
}

SHAPES = {
    "scalar": (),
    "empty": (0, 3),
    "vector": (7,),
    "matrix": (3, 5),
    "rank3": (2, 3, 4),
}

SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


def name_of(dtype):
    return dtype if isinstance(dtype, str) else np.dtype(dtype).name


def make(dtype, values):
    """A tensor of `dtype` holding `values` (rounded to it)."""
    values = np.asarray(values, dtype=np.float64)
    if dtype == "bfloat16":
        return bfloat16(values)
    return values.astype(dtype)


def bfloat16(values):
    """A BFloat16 of any shape (casegen rounds 1-d arrays only)."""
    values = np.asarray(values, dtype=np.float32)
    tensor = BFloat16(values.reshape(-1))
    tensor.values = tensor.values.reshape(values.shape)
    return tensor


def as64(tensor):
    array = tensor.values if isinstance(tensor, BFloat16) else tensor
    return np.asarray(array).astype(np.float64)


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _softplus(limit):
    # log1p(exp(x)), and x itself where that is x in the type computed in
    # (-(log(epsilon) + 2), as TensorFlow).
    def fn(x):
        with np.errstate(all="ignore"):
            return np.where(x > limit, x, np.log1p(np.exp(x)))
    return fn


def _round_even(x):
    return np.rint(x)


# name: (reference in float64, input range (low, high), exact?); every op
# runs on the four float dtypes, INT_TYPES lists the integer ones.
FLOAT_OPS = {
    "Neg": (np.negative, (-10, 10), True),
    "Abs": (np.abs, (-10, 10), True),
    "Sign": (np.sign, (-3, 3), True),
    "Exp": (np.exp, (-10, 10), False),
    "Expm1": (np.expm1, (-5, 5), False),
    "Log": (np.log, (0.01, 100), False),
    "Log1p": (np.log1p, (-0.9, 10), False),
    "Sqrt": (np.sqrt, (0, 100), False),
    "Rsqrt": (lambda x: 1 / np.sqrt(x), (0.01, 100), False),
    "Square": (np.square, (-10, 10), False),
    "Reciprocal": (lambda x: 1 / x, (0.1, 10), False),
    "Inv": (lambda x: 1 / x, (-10, -0.1), False),
    "Sin": (np.sin, (-10, 10), False),
    "Cos": (np.cos, (-10, 10), False),
    "Tanh": (np.tanh, (-5, 5), False),
    "Sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-10, 10), False),
    "Relu": (lambda x: np.where(x < 0, 0.0, x), (-10, 10), True),
    "Relu6": (lambda x: np.where(x < 0, 0.0, np.where(x > 6, 6.0, x)),
              (-10, 10), True),
    "Elu": (lambda x: np.where(x < 0, np.expm1(x), x), (-5, 5), False),
    "Selu": (lambda x: np.where(x < 0, SELU_SCALE * SELU_ALPHA * np.expm1(x),
                                SELU_SCALE * x), (-5, 5), False),
    "Softplus": (_softplus(13.942385152878742), (-20, 20), False),
    "Softsign": (lambda x: x / (1 + np.abs(x)), (-10, 10), False),
    "Erf": (_erf, (-3, 3), False),
    "Floor": (np.floor, (-10, 10), True),
    "Ceil": (np.ceil, (-10, 10), True),
    "Round": (_round_even, (-10, 10), True),
}

# Integer dtypes per op (as the kernels registered).
INT_TYPES = {
    "Neg": SIGNED,
    "Abs": SIGNED,
    "Sign": SIGNED,
    "Square": SIGNED + UNSIGNED,
    "Relu": SIGNED + UNSIGNED,
    "Relu6": SIGNED + UNSIGNED,
    "Round": SIGNED,
}


def _int_reference(op, x):
    """Integer results wrap as two's complement, as TensorFlow's do."""
    dtype = x.dtype
    wide = x.astype(object)  # exact Python integers
    if op == "Neg":
        result = -wide
    elif op == "Abs":
        result = np.array([abs(v) for v in wide.reshape(-1)],
                          dtype=object).reshape(x.shape)
    elif op == "Sign":
        result = np.sign(x)
    elif op == "Square":
        result = wide * wide
    elif op == "Relu":
        result = np.where(x < 0, 0, x)
    elif op == "Relu6":
        result = np.where(x < 0, 0, np.where(x > 6, 6, x))
    else:  # Round
        result = x
    return _wrap(result, dtype)


def _wrap(values, dtype):
    bits = np.iinfo(dtype).bits
    flat = []
    for v in np.asarray(values, dtype=object).reshape(-1):
        v = int(v) % (1 << bits)
        if np.iinfo(dtype).min < 0 and v >= 1 << (bits - 1):
            v -= 1 << bits
        flat.append(v)
    return np.array(flat, dtype=dtype).reshape(np.shape(values))


def _random(rng, shape, low, high):
    return rng.uniform(low, high, size=shape)


def _float_case(name, op, fn, dtype, inputs, exact):
    if op == "Softplus" and dtype == "float64":
        fn = _softplus(34.04365338911715)
    with np.errstate(all="ignore"):
        z = make(dtype, fn(*[as64(t) for t in inputs]))
    tolerance = {} if exact else TOLERANCE[dtype]
    return Case(name, op, inputs, [z], **tolerance)


SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5,
            -2.5, 1e-3]


def _unary_cases(rng):
    out = []
    for op, (fn, (low, high), exact) in FLOAT_OPS.items():
        for dtype in FLOATS:
            for shape_name, shape in SHAPES.items():
                x = make(dtype, _random(rng, shape, low, high))
                out.append(_float_case("%s_%s_%s" % (op, dtype, shape_name),
                                       op, fn, dtype, [x], exact))
            if dtype != "bfloat16":
                x = make(dtype, SPECIALS)
                out.append(_float_case("%s_%s_special" % (op, dtype), op,
                                       fn, dtype, [x], exact))
        for dtype in INT_TYPES.get(op, []):
            info = np.iinfo(dtype)
            for shape_name in ("scalar", "empty", "matrix"):
                x = rng.integers(max(info.min, -100), min(info.max, 100),
                                 size=SHAPES[shape_name],
                                 endpoint=True).astype(dtype)
                out.append(Case("%s_%s_%s" % (op, name_of(dtype), shape_name),
                                op, [x], [_int_reference(op, x)]))
            # The extremes wrap (Neg and Abs of the minimum, Square).
            x = np.array([info.min, info.max, 0, 1, 7, info.max // 2],
                         dtype=dtype)
            out.append(Case("%s_%s_extremes" % (op, name_of(dtype)), op, [x],
                            [_int_reference(op, x)]))
    # Rounding at halves: Round is half to even, Floor and Ceil exact.
    halves = np.arange(-4.5, 5.0, 0.5)
    for op, fn in (("Round", np.rint), ("Floor", np.floor),
                   ("Ceil", np.ceil)):
        for dtype in FLOATS:
            x = make(dtype, halves)
            out.append(_float_case("%s_%s_halves" % (op, dtype), op, fn,
                                   dtype, [x], True))
        big = make("float32", [8388607.5, -8388607.5, 16777216.0, 3e9,
                               -3e9, 4194303.5])
        out.append(_float_case("%s_float32_big" % op, op, fn, "float32",
                               [big], True))
        big = make("float64", [4503599627370495.5, -4503599627370495.5,
                               2.0**60, 0.49999999999999994])
        out.append(_float_case("%s_float64_big" % op, op, fn, "float64",
                               [big], True))
    # LogicalNot.
    for shape_name, shape in SHAPES.items():
        x = rng.integers(0, 1, size=shape, endpoint=True).astype(np.bool_)
        out.append(Case("LogicalNot_bool_%s" % shape_name, "LogicalNot", [x],
                        [np.logical_not(x)]))
    # The threaded path: just above the sizes that run inline.
    # (Sizes just above kUnaryInlineElements whose cost the pool splits.)
    for op, dtype, size in (("Exp", "float32", 20001),
                            ("Sigmoid", "float16", 20001)):
        fn, (low, high), exact = FLOAT_OPS[op]
        x = make(dtype, _random(rng, (size,), low, high))
        out.append(_float_case("%s_%s_large" % (op, dtype), op, fn, dtype,
                               [x], exact))
    # float32 Tanh is a rational approximation on [-8, 8], exactly +-1
    # beyond: a dense sweep across the whole range, the cut-off and tiny
    # values; then saturation (where float tanh is exactly +-1), exact.
    sweep = np.concatenate([np.linspace(-12, 12, 240001), [9.0, -9.0],
                            [8.0, -8.0],
                            [np.nextafter(np.float32(8), np.float32(10))],
                            [1e-30, -1e-30, 1e-8, 1e-40, 3e-4, -3e-4]])
    out.append(_float_case("Tanh_float32_sweep", "Tanh", np.tanh, "float32",
                           [make("float32", sweep)], False))
    saturated = np.float32([10.0, -10.0, 20.0, -20.0, 1e30, -1e30,
                            np.inf, -np.inf, np.nan])
    out.append(_float_case("Tanh_float32_saturates", "Tanh", np.tanh,
                           "float32", [make("float32", saturated)], True))
    # float32 Exp (and Sigmoid, Softplus through it) has its own vector exp
    # at AVX-512: the whole float range, the overflow and underflow edges
    # (subnormal results, 0), the clamp at [-104, 89], infinities and NaN.
    edges = np.float32([88.72, 88.7228, 88.73, 89.0, 89.5, 1e4, -87.3,
                        -87.4, -100.0, -103.2, -103.3, -103.98, -104.0,
                        -104.5, -1e4, 0.0, -0.0, 1e-30, -1e-30,
                        np.inf, -np.inf, np.nan])
    sweep = np.concatenate([np.linspace(-110, 95, 200001), edges])
    for op in ("Exp", "Sigmoid", "Softplus"):
        fn = FLOAT_OPS[op][0]
        out.append(_float_case("%s_float32_sweep" % op, op, fn, "float32",
                               [make("float32", sweep)], False))
    return out


# Gradients: name -> (reference(a, b), range of a, range of b); every op
# runs on the four float dtypes, GRAD_INT_TYPES lists the integer ones.
GRAD_OPS = {
    "TanhGrad": (lambda y, dy: dy * (1 - y * y), (-0.9, 0.9), (-3, 3)),
    "SigmoidGrad": (lambda y, dy: dy * y * (1 - y), (0.05, 0.95), (-3, 3)),
    "RsqrtGrad": (lambda y, dy: -0.5 * dy * y * y * y, (0.2, 5), (-3, 3)),
    "SqrtGrad": (lambda y, dy: 0.5 * dy / y, (0.2, 5), (-3, 3)),
    "ReciprocalGrad": (lambda y, dy: -dy * y * y, (-5, 5), (-3, 3)),
    "InvGrad": (lambda y, dy: -dy * y * y, (-5, 5), (-3, 3)),
    "ReluGrad": (lambda g, f: g * (f > 0), (-3, 3), (-3, 3)),
    "Relu6Grad": (lambda g, f: g * ((f > 0) & (f < 6)), (-3, 3), (-3, 9)),
    "EluGrad": (lambda g, o: np.where(o < 0, g * (o + 1), g), (-3, 3),
                (-1, 3)),
    "SeluGrad": (lambda g, o: np.where(o < 0,
                                       g * (o + SELU_SCALE * SELU_ALPHA),
                                       g * SELU_SCALE), (-3, 3), (-1.7, 3)),
    "SoftplusGrad": (lambda g, f: g / (1 + np.exp(-f)), (-3, 3), (-20, 20)),
    "SoftsignGrad": (lambda g, f: g / (1 + np.abs(f)) ** 2, (-3, 3), (-10, 10)),
}

GRAD_INT_TYPES = {"ReluGrad": SIGNED + UNSIGNED,
                  "Relu6Grad": SIGNED + UNSIGNED}


def _grad_cases(rng):
    out = []
    for op, (fn, range_a, range_b) in GRAD_OPS.items():
        for dtype in FLOATS:
            for shape_name in ("scalar", "empty", "matrix", "rank3"):
                shape = SHAPES[shape_name]
                a = make(dtype, _random(rng, shape, *range_a))
                b = make(dtype, _random(rng, shape, *range_b))
                out.append(_float_case("%s_%s_%s" % (op, dtype, shape_name),
                                       op, fn, dtype, [a, b], False))
        for dtype in GRAD_INT_TYPES.get(op, []):
            low = 0 if np.iinfo(dtype).min == 0 else -5
            g = rng.integers(low, 20, size=(3, 5)).astype(dtype)
            f = rng.integers(low, 9, size=(3, 5)).astype(dtype)
            if op == "ReluGrad":
                z = np.where(f > 0, g, 0).astype(dtype)
            else:
                z = np.where((f > 0) & (f < 6), g, 0).astype(dtype)
            out.append(Case("%s_%s_matrix" % (op, name_of(dtype)), op,
                            [g, f], [z]))
    # NaN gradients stay NaN where the mask is 0 (TensorFlow multiplies).
    g = np.array([np.nan, 1.0, np.inf, 2.0], dtype=np.float32)
    f = np.array([-1.0, np.nan, -2.0, 3.0], dtype=np.float32)
    with np.errstate(all="ignore"):
        out.append(Case("ReluGrad_float32_special", "ReluGrad", [g, f],
                        [(g * (f > 0)).astype(np.float32)]))
    # TanhGrad and friends only need equal element counts; the result has
    # y's shape.
    y = make("float32", _random(rng, (2, 3), -0.9, 0.9))
    dy = make("float32", _random(rng, (6,), -3, 3))
    z = make("float32", as64(dy).reshape(2, 3) * (1 - as64(y) ** 2))
    out.append(Case("TanhGrad_float32_reshaped", "TanhGrad", [y, dy], [z],
                    **TOLERANCE["float32"]))
    # The threaded path.
    fn, range_a, range_b = GRAD_OPS["SoftplusGrad"]
    a = make("float32", _random(rng, (20001,), *range_a))
    b = make("float32", _random(rng, (20001,), *range_b))
    out.append(_float_case("SoftplusGrad_float32_large", "SoftplusGrad", fn,
                           "float32", [a, b], False))
    return out


def _error_cases():
    f32 = np.zeros((2, 3), np.float32)
    return [
        Case("Exp_int32_not_allowed", "Exp", [np.ones((2,), np.int32)],
             error=("INVALID_ARGUMENT", "not in the list of allowed")),
        Case("Reciprocal_int32_no_kernel", "Reciprocal",
             [np.ones((2,), np.int32)], error=("NOT_FOUND", "Reciprocal")),
        Case("LogicalNot_float_not_bool", "LogicalNot", [f32],
             error=("INVALID_ARGUMENT", "LogicalNot")),
        Case("TanhGrad_element_counts", "TanhGrad",
             [f32, np.zeros((4,), np.float32)],
             error=("INVALID_ARGUMENT",
                    "The two arguments to a cwise op must have same number "
                    "of elements, got 6 and 4")),
        Case("ReluGrad_shapes", "ReluGrad",
             [f32, np.zeros((3, 2), np.float32)],
             error=("INVALID_ARGUMENT",
                    "Inputs to operation ReluGrad of type ReluGrad must have "
                    "the same size and shape.  Input 0: [2,3] != input 1: "
                    "[3,2]")),
        Case("EluGrad_ranks", "EluGrad",
             [f32, np.zeros((6,), np.float32)],
             error=("INVALID_ARGUMENT", "Input 0: [2,3] != input 1: [6]")),
        Case("ReluGrad_mixed_dtypes", "ReluGrad",
             [f32, np.zeros((2, 3), np.float64)],
             error=("INVALID_ARGUMENT", "ReluGrad")),
    ]


def cases():
    rng = np.random.default_rng(20261124)
    return _unary_cases(rng) + _grad_cases(rng) + _error_cases()
