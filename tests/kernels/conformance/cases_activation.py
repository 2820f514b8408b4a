"""LeakyRelu, LeakyReluGrad and L2Loss (src/kernels/nn_activation.c)
against NumPy and PyTorch.

LeakyRelu is x > 0 ? x : x * alpha, with alpha rounded to the dtype first
and the product rounded once (float16: NumPy's own float16 product;
bfloat16: the float32 product rounded to bfloat16), so every dtype is
exact. L2Loss is sum(x^2) / 2, computed here in float64 from the stored
values and rounded to the dtype; Loom accumulates in float64 too, so the
tolerance only covers the one rounding.
"""

import numpy as np
import torch

from casegen import BFloat16, Case, round_bfloat16

FLOATS = ["float32", "float64", "float16", "bfloat16"]
F32, I32 = np.float32, np.int32


def _values(rng, dtype, shape):
    # Both signs, zeros and values of magnitude around 1.
    x = rng.standard_normal(shape) * 2
    x = np.where(rng.random(shape) < 0.1, 0.0, x)
    if dtype == "bfloat16":
        return BFloat16(np.asarray(x, F32).reshape(-1)), shape
    return x.astype(dtype), shape


def _quarters(rng, dtype, shape):
    x = rng.integers(-12, 12, size=shape) / 4
    if dtype == "bfloat16":
        b = BFloat16(np.asarray(x, F32).reshape(-1))
        b.values = b.values.reshape(shape)
        return b
    return x.astype(dtype)


def _shaped(tensor, shape):
    if isinstance(tensor, BFloat16):
        tensor.values = tensor.values.reshape(shape)
    return tensor


def _leaky(dtype, g, x, alpha):
    """x > 0 ? g : g * alpha in `dtype`'s arithmetic."""
    if dtype == "bfloat16":
        a = round_bfloat16(np.float32(alpha))
        out = np.where(x.values > 0, g.values,
                       round_bfloat16(g.values * a))
        result = BFloat16(out.reshape(-1))
        result.values = result.values.reshape(out.shape)
        return result
    if dtype in ("float32", "float64"):
        # PyTorch's leaky_relu / its backward (the same select).
        tg, tx = torch.from_numpy(np.array(g)), torch.from_numpy(np.array(x))
        # alpha is a float attribute: float64 gets float32(alpha).
        slope = torch.tensor(float(np.float32(alpha)), dtype=tg.dtype)
        return torch.where(tx > 0, tg, tg * slope).numpy()
    a = np.asarray(alpha, dtype=dtype)
    return np.where(x > 0, g, g * a).astype(dtype)


def _l2(dtype, x):
    array = x.values if isinstance(x, BFloat16) else x
    loss = np.sum(np.asarray(array, np.float64) ** 2) / 2
    if dtype == "bfloat16":
        result = BFloat16(np.array([loss], F32))
        result.values = result.values.reshape(())
        return result
    return np.asarray(loss).astype(dtype)


TOLERANCE = {"float32": 1e-6, "float64": 1e-13, "float16": 1e-3,
             "bfloat16": 8e-3}


def cases():
    rng = np.random.default_rng(20261127)
    out = []
    for dtype in FLOATS:
        for shape in [(), (0, 3), (7,), (3, 5), (2, 3, 4), (100, 130)]:
            x = _shaped(*_values(rng, dtype, shape))
            if shape == (100, 130):
                # Above the threading threshold: multiples of 1/4 keep the
                # case file small.
                x = _quarters(rng, dtype, shape)
            name = "x".join(str(d) for d in shape) or "scalar"
            for alpha in (0.2, 0.01, 1.5, -0.5):
                attrs = {} if alpha == 0.2 else {"alpha": ("float", alpha)}
                out.append(Case("LeakyRelu_%s_%s_alpha%g" % (dtype, name,
                                                             alpha),
                                "LeakyRelu", [x], [_leaky(dtype, x, x, alpha)],
                                attrs=attrs))
            g = _shaped(*_values(rng, dtype, shape))
            out.append(Case("LeakyReluGrad_%s_%s" % (dtype, name),
                            "LeakyReluGrad", [g, x],
                            [_leaky(dtype, g, x, 0.3)],
                            attrs={"alpha": ("float", 0.3)}))
            l2 = _l2(dtype, x)
            out.append(Case("L2Loss_%s_%s" % (dtype, name), "L2Loss", [x],
                            [l2], rtol=TOLERANCE[dtype], atol=0.0))
    # Infinities and NaN pass through LeakyRelu's select.
    special = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-45], F32)
    out.append(Case("LeakyRelu_float32_special", "LeakyRelu", [special],
                    [np.where(special > 0, special,
                              special * F32(0.2)).astype(F32)]))
    out.append(Case("L2Loss_float32_inf", "L2Loss",
                    [np.array([1.0, -np.inf], F32)], [np.array(np.inf, F32)]))
    # Several chunks (summed over the pool, added in order).
    for dtype in ("float32", "float64"):
        big = rng.standard_normal(200003).astype(dtype)
        out.append(Case("L2Loss_%s_large" % dtype, "L2Loss", [big],
                        [_l2(dtype, big)], rtol=TOLERANCE[dtype], atol=0.0))
    # Errors: mismatched shapes, dtypes outside the op's list.
    a = np.zeros((2, 3), F32)
    out.append(Case("LeakyReluGrad_shape_mismatch", "LeakyReluGrad",
                    [a, np.zeros((3, 2), F32)],
                    error=("INVALID_ARGUMENT",
                           "Inputs to operation LeakyReluGrad of type "
                           "LeakyReluGrad must have the same size and shape."
                           "  Input 0: [2,3] != input 1: [3,2]")))
    out.append(Case("LeakyRelu_int32", "LeakyRelu", [np.zeros(3, I32)],
                    error=("INVALID_ARGUMENT", "LeakyRelu")))
    out.append(Case("L2Loss_int32", "L2Loss", [np.zeros(3, I32)],
                    error=("INVALID_ARGUMENT", "L2Loss")))
    return out
