"""Cumsum and Cumprod (src/kernels/scan.c) against NumPy.

NumPy's cumsum adds in order along the axis in the array's own dtype, as
Loom does, so every dtype is exact: float32 and float64 give the same bits,
integers wrap alike, and float16 rounds after every addition in both.
Exclusive sums are the inclusive ones shifted by one (a zero first);
reverse sums run from the end. Products likewise (cumprod, a one first).
"""

import numpy as np

from casegen import BFloat16, Case, round_bfloat16

I32, I64, F32 = np.int32, np.int64, np.float32

DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64", "complex64", "complex128"]


def _complex_cumprod(y, axis):
    """Running complex products as Loom forms them: (a.re b.re - a.im b.im,
    a.re b.im + a.im b.re), each product and sum rounded on its own. NumPy's
    own complex multiply differs by an ulp where it dispatches to a loop
    that fuses them (AVX-512), so its result depends on the machine."""
    y = np.moveaxis(y, axis, 0)
    part = y.real.dtype.type
    re, im = y.real.copy(), y.imag.copy()
    for k in range(1, y.shape[0]):
        a_re, a_im, b_re, b_im = re[k - 1], im[k - 1], y.real[k], y.imag[k]
        re[k] = part(a_re * b_re) - part(a_im * b_im)
        im[k] = part(a_re * b_im) + part(a_im * b_re)
    return np.moveaxis(re + 1j * im, 0, axis).astype(y.dtype)


def cumsum(x, axis, exclusive=False, reverse=False, product=False):
    y = np.flip(x, axis) if reverse else x
    with np.errstate(all="ignore"):
        if product and x.dtype.kind == "c":
            out = _complex_cumprod(y, axis)
        else:
            out = (np.cumprod if product else np.cumsum)(y, axis=axis,
                                                         dtype=x.dtype)
    if exclusive:
        out = np.roll(out, 1, axis=axis)
        index = [slice(None)] * x.ndim
        index[axis] = 0
        out[tuple(index)] = 1 if product else 0
    return (np.flip(out, axis) if reverse else out).copy()


def _bf16_cumsum(values, axis, exclusive, reverse):
    """bfloat16: each running sum rounded to bfloat16."""
    x = np.moveaxis(values, axis, -1)
    if reverse:
        x = np.flip(x, -1)
    out = np.zeros_like(x)
    total = np.zeros(x.shape[:-1], F32)
    for k in range(x.shape[-1]):
        if exclusive:
            out[..., k] = total
            total = round_bfloat16(total + x[..., k])
        else:
            total = round_bfloat16(total + x[..., k])
            out[..., k] = total
    if reverse:
        out = np.flip(out, -1)
    out = np.moveaxis(out, -1, axis).copy()
    result = BFloat16(out.reshape(-1))
    result.values = result.values.reshape(out.shape)
    return result


def _values(rng, dtype, shape):
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) +
                1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    # Large magnitudes: the sums wrap.
    return rng.integers(info.min, info.max, size=shape, dtype=dtype,
                        endpoint=True)


def cases():
    rng = np.random.default_rng(20261127)
    out = []
    for dtype in DTYPES:
        x = _values(rng, dtype, (3, 4, 5))
        for axis in (0, 1, -1):
            for exclusive in (False, True):
                for reverse in (False, True):
                    name = "Cumsum_%s_axis%d%s%s" % (
                        dtype, axis, "_exclusive" if exclusive else "",
                        "_reverse" if reverse else "")
                    out.append(Case(name, "Cumsum",
                                    [x, np.array(axis, I32)],
                                    [cumsum(x, axis, exclusive, reverse)],
                                    attrs={"exclusive": ("bool", exclusive),
                                           "reverse": ("bool", reverse)}))
    # Cumprod: every dtype, each direction (integers wrap alike).
    for dtype in DTYPES:
        x = _values(rng, dtype, (3, 4, 5))
        for axis in (0, -1):
            for exclusive in (False, True):
                for reverse in (False, True):
                    name = "Cumprod_%s_axis%d%s%s" % (
                        dtype, axis, "_exclusive" if exclusive else "",
                        "_reverse" if reverse else "")
                    out.append(Case(name.replace("-", "m"), "Cumprod",
                                    [x, np.array(axis, I64)],
                                    [cumsum(x, axis, exclusive, reverse,
                                            product=True)],
                                    attrs={"exclusive": ("bool", exclusive),
                                           "reverse": ("bool", reverse)}))
    x = rng.choice(np.array([-1, 1, 2, 0.5], F32), size=(32, 1000))
    out.append(Case("Cumprod_float32_large_axis1", "Cumprod",
                    [x, np.array(1, I32)], [cumsum(x, 1, product=True)]))
    out.append(Case("Cumprod_axis_out_of_range", "Cumprod",
                    [np.zeros((2, 3), F32), np.array(2, I32)],
                    error=("INVALID_ARGUMENT", "ScanOp: Expected scan axis in "
                           "the range [-2, 2), but got 2")))
    b = BFloat16(rng.standard_normal(24).astype(F32))
    b.values = b.values.reshape(4, 6)
    for exclusive in (False, True):
        for reverse in (False, True):
            out.append(Case("Cumsum_bfloat16_%d%d" % (exclusive, reverse),
                            "Cumsum", [b, np.array(1, I64)],
                            [_bf16_cumsum(b.values, 1, exclusive, reverse)],
                            attrs={"exclusive": ("bool", exclusive),
                                   "reverse": ("bool", reverse)}))
    # Above the threading threshold; small integers keep the file small
    # (and their sums exact).
    x = rng.integers(-8, 8, size=(32, 1000)).astype(F32)
    out.append(Case("Cumsum_float32_large_axis1", "Cumsum",
                    [x, np.array(1, I32)], [cumsum(x, 1)]))
    out.append(Case("Cumsum_float32_large_axis0", "Cumsum",
                    [x, np.array(0, I32)], [cumsum(x, 0)]))
    out.append(Case("Cumsum_float32_vector", "Cumsum",
                    [np.arange(5, dtype=F32), np.array(0, I32)],
                    [np.array([0, 1, 3, 6, 10], F32)]))
    e = np.zeros((2, 0, 3), F32)
    out.append(Case("Cumsum_float32_empty", "Cumsum",
                    [e, np.array(1, I32)], [e]))
    a = np.zeros((2, 3), F32)
    out.append(Case("Cumsum_axis_out_of_range", "Cumsum",
                    [a, np.array(2, I32)],
                    error=("INVALID_ARGUMENT", "ScanOp: Expected scan axis in "
                           "the range [-2, 2), but got 2")))
    out.append(Case("Cumsum_negative_axis_out_of_range", "Cumsum",
                    [a, np.array(-3, I32)],
                    error=("INVALID_ARGUMENT", "ScanOp: Expected scan axis in "
                           "the range [-2, 2), but got -1")))
    out.append(Case("Cumsum_axis_not_scalar", "Cumsum",
                    [a, np.array([1], I32)],
                    error=("INVALID_ARGUMENT",
                           "ScanOp: axis must be a scalar, not [1]")))
    out.append(Case("Cumsum_bool", "Cumsum",
                    [np.zeros(3, bool), np.array(0, I32)],
                    error=("INVALID_ARGUMENT", "Cumsum")))
    return out
