"""MatrixBandPart, MatrixDiagV3 and MatrixDiagPartV3 against NumPy.

The diagonal references follow the formulas of TensorFlow's op
documentation element by element (output position to input position,
with the alignment offset), independently of how the kernels walk the
diagonals. Errors check TensorFlow's messages.
"""

import numpy as np

from casegen import Case

F32 = np.float32
I32 = np.int32
I64 = np.int64

DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8",
          "bool", "complex64"]
ALIGNS = ["LEFT_RIGHT", "RIGHT_LEFT", "LEFT_LEFT", "RIGHT_RIGHT"]


def _make(rng, dtype, shape):
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) +
                1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith("float"):
        return (rng.standard_normal(shape) * 10).astype(dtype)
    return rng.integers(1, 100, size=shape).astype(dtype)


def _err(name, op, inputs, text, attrs=None):
    return Case(name, op, inputs, attrs=attrs or {},
                error=("INVALID_ARGUMENT", text))


def _band(x, lower, upper):
    rows, cols = x.shape[-2:]
    m = np.arange(rows)[:, None]
    n = np.arange(cols)[None, :]
    keep = ((lower < 0) | (m - n <= lower)) & ((upper < 0) | (n - m <= upper))
    return np.where(keep, x, np.zeros((), x.dtype)).astype(x.dtype)


def _band_cases(rng):
    out = []
    for dtype in DTYPES:
        x = _make(rng, dtype, (2, 4, 5))
        out.append(Case("MatrixBandPart_%s" % dtype, "MatrixBandPart",
                        [x, np.array(1, I64), np.array(2, I64)],
                        [_band(x, 1, 2)]))
    x = _make(rng, "float32", (3, 6))
    for lower, upper in ((-1, 0), (0, -1), (0, 0), (-1, -1), (3, 6),
                         (2, 1)):
        out.append(Case(("MatrixBandPart_float32_%d_%d" % (lower, upper))
                        .replace("-", "m"), "MatrixBandPart",
                        [x, np.array(lower, I32), np.array(upper, I32)],
                        [_band(x, lower, upper)]))
    big = rng.integers(0, 9, size=(20, 64, 64)).astype(I32)
    out.append(Case("MatrixBandPart_int32_large", "MatrixBandPart",
                    [big, np.array(3, I64), np.array(-1, I64)],
                    [_band(big, 3, -1)]))
    out.append(Case("MatrixBandPart_float32_empty", "MatrixBandPart",
                    [np.zeros((0, 3, 3), F32), np.array(1, I64),
                     np.array(1, I64)], [np.zeros((0, 3, 3), F32)]))
    out.append(_err("MatrixBandPart_vector", "MatrixBandPart",
                    [np.zeros(3, F32), np.array(0, I64), np.array(0, I64)],
                    "input must be at least 2-dim, received shape: [3]"))
    out.append(_err("MatrixBandPart_lower_too_big", "MatrixBandPart",
                    [x, np.array(4, I64), np.array(0, I64)],
                    "num_lower must be negative or less or equal to number "
                    "of rows (3) got: 4"))
    out.append(_err("MatrixBandPart_upper_too_big", "MatrixBandPart",
                    [x, np.array(0, I64), np.array(7, I64)],
                    "num_upper must be negative or less or equal to number "
                    "of columns (6) got: 7"))
    out.append(_err("MatrixBandPart_lower_not_scalar", "MatrixBandPart",
                    [x, np.array([0], I64), np.array(0, I64)],
                    "num_lower must be scalar, got shape [1]"))
    return out


def _offset(align, d, max_len, length):
    right = ((align in ("RIGHT_LEFT", "RIGHT_RIGHT") and d >= 0) or
             (align in ("LEFT_RIGHT", "RIGHT_RIGHT") and d <= 0))
    return max_len - length if right else 0


def _diag_part(x, k, pad, align):
    lo, hi = (k, k) if np.ndim(k) == 0 else (k[0], k[-1])
    rows, cols = x.shape[-2:]
    max_len = min(rows + min(hi, 0), cols - max(lo, 0))
    batch = x.shape[:-2]
    out = np.full(batch + (hi - lo + 1, max_len), pad, x.dtype)
    for m in range(hi - lo + 1):
        d = hi - m
        length = min(rows + min(d, 0), cols - max(d, 0))
        offset = _offset(align, d, max_len, length)
        for n in range(max_len):
            y = n + max(-d, 0) - offset
            z = n + max(d, 0) - offset
            if 0 <= y < rows and 0 <= z < cols:
                out[..., m, n] = x[..., y, z]
    if lo == hi:
        out = out[..., 0, :]
    return out


def _diag(diagonal, k, rows, cols, pad, align):
    lo, hi = (k, k) if np.ndim(k) == 0 else (k[0], k[-1])
    if lo == hi:
        diagonal = diagonal[..., None, :]
    max_len = diagonal.shape[-1]
    batch = diagonal.shape[:-2]
    out = np.full(batch + (rows, cols), pad, diagonal.dtype)
    for m in range(rows):
        for n in range(cols):
            d = n - m
            if lo <= d <= hi:
                length = min(rows + min(d, 0), cols - max(d, 0))
                offset = _offset(align, d, max_len, length)
                out[..., m, n] = diagonal[..., hi - d, n - max(d, 0) + offset]
    return out


def _diag_cases(rng):
    out = []
    for dtype in DTYPES:
        x = _make(rng, dtype, (2, 3, 4))
        pad = _make(rng, dtype, ())
        k = np.array([-1, 2], I32)
        out.append(Case("MatrixDiagPartV3_%s" % dtype, "MatrixDiagPartV3",
                        [x, k, pad],
                        [_diag_part(x, (-1, 2), pad, "RIGHT_LEFT")]))
        d = _make(rng, dtype, (2, 3, 3))
        out.append(Case("MatrixDiagV3_%s" % dtype, "MatrixDiagV3",
                        [d, np.array([-1, 1], I32), np.array(-1, I32),
                         np.array(-1, I32), pad],
                        [_diag(d, (-1, 1), 3, 3, pad, "RIGHT_LEFT")]))
    x = _make(rng, "float32", (4, 6))
    pad = np.array(9.0, F32)
    for align in ALIGNS:
        for k in ((-2, 1), (1, 3), (-3, -1)):
            name = ("%s_%d_%d" % (align, k[0], k[1])).replace("-", "m")
            out.append(Case("MatrixDiagPartV3_float32_" + name,
                            "MatrixDiagPartV3",
                            [x, np.array(k, I32), pad],
                            [_diag_part(x, k, pad, align)],
                            attrs={"align": ("string", align)}))
            part = _diag_part(x, k, 0, align)
            out.append(Case("MatrixDiagV3_float32_" + name, "MatrixDiagV3",
                            [part, np.array(k, I32), np.array(4, I32),
                             np.array(6, I32), pad],
                            [_diag(part, k, 4, 6, pad, align)],
                            attrs={"align": ("string", align)}))
    for k in (0, 2, -3):
        out.append(Case(("MatrixDiagPartV3_float32_k%d" % k).replace("-", "m"),
                        "MatrixDiagPartV3", [x, np.array(k, I32), pad],
                        [_diag_part(x, k, pad, "RIGHT_LEFT")]))
    v = _make(rng, "float64", (2, 3))
    for name, k, rows, cols in (("square", 0, -1, -1), ("super", 1, -1, -1),
                                ("rows_given", -1, 5, -1),
                                ("cols_given", 1, -1, 5),
                                ("both_given", 0, 3, 5)):
        r, c = rows, cols
        lo = k
        min_rows = 3 - min(k, 0)
        min_cols = 3 + max(lo, 0)
        if r == -1 and c == -1:
            r = c = max(min_rows, min_cols)
        elif r == -1:
            r = min_rows
        elif c == -1:
            c = min_cols
        out.append(Case("MatrixDiagV3_float64_" + name, "MatrixDiagV3",
                        [v, np.array(k, I32), np.array(rows, I32),
                         np.array(cols, I32), np.array(0.5)],
                        [_diag(v, k, r, c, 0.5, "RIGHT_LEFT")]))
    out.append(_err("MatrixDiagPartV3_vector", "MatrixDiagPartV3",
                    [np.zeros(3, F32), np.array(0, I32), pad],
                    "input must be at least 2-dim, received shape: [3]"))
    out.append(_err("MatrixDiagPartV3_k_out_of_bound", "MatrixDiagPartV3",
                    [x, np.array(6, I32), pad],
                    "lower_diag_index is out of bound: 6. It must be between "
                    "-4 and 6"))
    out.append(_err("MatrixDiagPartV3_k_reversed", "MatrixDiagPartV3",
                    [x, np.array([2, 1], I32), pad],
                    "lower_diag_index must not be greater than "
                    "upper_diag_index, received lower_diag_index = 2 and "
                    "upper_diag_index = 1"))
    out.append(_err("MatrixDiagPartV3_padding_not_scalar", "MatrixDiagPartV3",
                    [x, np.array(0, I32), np.zeros(1, F32)],
                    "padding_value must be a scalar, received shape: [1]"))
    out.append(_err("MatrixDiagV3_diagonal_count", "MatrixDiagV3",
                    [np.zeros((2, 3), F32), np.array([0, 2], I32),
                     np.array(-1, I32), np.array(-1, I32), pad],
                    "The number of diagonals provided in the input does not "
                    "match the lower_diag_index and upper_diag_index range."))
    out.append(_err("MatrixDiagV3_rows_too_small", "MatrixDiagV3",
                    [np.zeros(3, F32), np.array(0, I32), np.array(2, I32),
                     np.array(-1, I32), pad],
                    "The number of rows is too small."))
    out.append(_err("MatrixDiagV3_inconsistent", "MatrixDiagV3",
                    [np.zeros(3, F32), np.array(0, I32), np.array(4, I32),
                     np.array(4, I32), pad],
                    "The number of rows or columns is not consistent with "
                    "the specified d_lower, d_upper, and diagonal."))
    out.append(_err("MatrixDiagV3_scalar_diagonal", "MatrixDiagV3",
                    [np.array(1.0, F32), np.array(0, I32), np.array(-1, I32),
                     np.array(-1, I32), pad],
                    "diagonal must be at least 1-dim, received shape: []"))
    return out


def cases():
    rng = np.random.default_rng(20261128)
    return _band_cases(rng) + _diag_cases(rng)
