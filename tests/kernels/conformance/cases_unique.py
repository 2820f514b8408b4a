"""Unique (src/kernels/unique.c) against a Python reference.

The reference keeps a dict of the values seen, as TensorFlow's kernel
keeps a hash map compared with ==: values come out in the order they
first appear, -0.0 and 0.0 are one value (the first one seen is kept) and
every NaN is a value of its own.
"""

import math

import numpy as np

from casegen import BFloat16, Case

I32, I64, F32 = np.int32, np.int64, np.float32

DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64", "bool"]


def unique(values, out_idx=I32):
    seen, y, idx = {}, [], []
    for v in values.tolist():
        if isinstance(v, float) and math.isnan(v):
            idx.append(len(y))
            y.append(v)
            continue
        key = 0.0 if v == 0 and isinstance(v, float) else v
        if key not in seen:
            seen[key] = len(y)
            y.append(v)
        idx.append(seen[key])
    return np.array(y, values.dtype), np.array(idx, out_idx)


def cases():
    rng = np.random.default_rng(20261129)
    out = []
    for dtype in DTYPES:
        if dtype == "bool":
            x = rng.integers(0, 2, size=12).astype(np.bool_)
        else:
            x = rng.integers(0, 6, size=12).astype(dtype)
        y, idx = unique(x)
        out.append(Case("Unique_%s" % dtype, "Unique", [x], [y, idx]))
    x = np.array([0.0, -0.0, np.nan, 1.5, np.nan, -0.0, 1.5], F32)
    y, idx = unique(x, I64)
    out.append(Case("Unique_float32_zeros_nan_int64", "Unique", [x], [y, idx],
                    attrs={"out_idx": ("type", "int64")}))
    b = BFloat16(np.array([1.0, -0.0, 0.0, 1.0, 2.5], F32))
    out.append(Case("Unique_bfloat16", "Unique", [b],
                    [BFloat16(np.array([1.0, -0.0, 2.5], F32)),
                     np.array([0, 1, 1, 0, 2], I32)]))
    out.append(Case("Unique_float32_empty", "Unique", [np.zeros(0, F32)],
                    [np.zeros(0, F32), np.zeros(0, I32)]))
    x = rng.integers(0, 1000, size=20000).astype(I64)
    y, idx = unique(x)
    out.append(Case("Unique_int64_large", "Unique", [x], [y, idx]))
    out.append(Case("Unique_matrix", "Unique", [np.zeros((2, 2), F32)],
                    error=("INVALID_ARGUMENT", "unique expects a 1D vector."),
                    outputs=2))
    out.append(Case("Unique_scalar", "Unique", [np.array(1.0, F32)],
                    error=("INVALID_ARGUMENT", "unique expects a 1D vector."),
                    outputs=2))
    return out
