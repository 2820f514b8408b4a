"""_FusedMatMul against NumPy: every fusion TensorFlow's CPU kernel accepts
(BiasAdd, and BiasAdd followed by Relu, Relu6, Elu or LeakyRelu) for each
dtype the op allows (float; half and bfloat16 computed in float and rounded
once), transposes, a product large enough to be split over the pool,
empty and zero-depth products, and TensorFlow's messages for unsupported
fusions, missing arguments and bad shapes."""

import numpy as np

from casegen import BFloat16, Case, round_bfloat16

DTYPES = [np.float32, np.float16, "bfloat16"]

# fused_ops after "BiasAdd", and the activation in float64.
FUSIONS = {
    "bias": (None, lambda x, alpha: x),
    "relu": ("Relu", lambda x, alpha: np.maximum(x, 0)),
    "relu6": ("Relu6", lambda x, alpha: np.clip(x, 0, 6)),
    "elu": ("Elu", lambda x, alpha: np.where(x < 0, np.expm1(x), x)),
    "leakyrelu": ("LeakyRelu", lambda x, alpha: np.where(x < 0, x * alpha, x)),
}


def _name(dtype):
    return "bfloat16" if dtype == "bfloat16" else np.dtype(dtype).name


def _random(rng, dtype, shape, scale=1.0):
    values = rng.standard_normal(shape) * scale
    if dtype == "bfloat16":
        return round_bfloat16(values.astype(np.float32))
    return values.astype(dtype)


def _wrap(values, dtype):
    return BFloat16(values) if dtype == "bfloat16" else values


def _result(values, dtype):
    if dtype == "bfloat16":
        return BFloat16(values.astype(np.float32))
    return values.astype(dtype)


def _tolerance(dtype, k):
    if dtype == np.float32:
        return dict(rtol=1e-5, atol=1e-6 * (k + 1))
    if dtype == np.float16:
        return dict(rtol=2e-3, atol=2e-3)
    return dict(rtol=1.6e-2, atol=1.6e-2)


def _attrs(fusion, ta=False, tb=False, alpha=None):
    activation = FUSIONS[fusion][0]
    ops = ["BiasAdd"] + ([activation] if activation else [])
    attrs = {"fused_ops": ("strings", ops)}
    if ta:
        attrs["transpose_a"] = ("bool", True)
    if tb:
        attrs["transpose_b"] = ("bool", True)
    if alpha is not None:
        attrs["leakyrelu_alpha"] = ("float", alpha)
    return attrs


def _case(rng, name, dtype, fusion, sa, sb, ta=False, tb=False, alpha=None,
          bias_shape=None):
    """op(a) has shape sa and op(b) shape sb; values of about +-10 so that
    Relu6 clips and Elu and LeakyRelu see negatives."""
    x = _random(rng, dtype, sa, 2.0)
    y = _random(rng, dtype, sb)
    n = sb[1]
    bias = _random(rng, dtype, bias_shape or (n,), 3.0)
    a = x.T.copy() if ta else x
    b = y.T.copy() if tb else y
    product = np.matmul(x.astype(np.float64), y.astype(np.float64))
    # The op computes in float32; alpha is a float attribute.
    used_alpha = 0.2 if alpha is None else alpha
    used_alpha = float(np.float32(used_alpha))
    z = product + bias.astype(np.float64).reshape(-1)
    z = FUSIONS[fusion][1](z, used_alpha)
    return Case(name, "_FusedMatMul",
                [_wrap(a, dtype), _wrap(b, dtype), _wrap(bias, dtype)],
                [_result(z, dtype)], _attrs(fusion, ta, tb, alpha),
                **_tolerance(dtype, sa[1]))


def _value_cases(rng):
    out = []
    for dtype in DTYPES:
        for fusion in FUSIONS:
            base = "_FusedMatMul_%s_%s" % (_name(dtype), fusion)
            out.append(_case(rng, base + "_small", dtype, fusion,
                             (3, 4), (4, 5)))
            out.append(_case(rng, base + "_ta_tb", dtype, fusion,
                             (3, 4), (4, 5), ta=True, tb=True))
            # Split over the pool in blocks of rows, each with its epilogue.
            if dtype == np.float32 or fusion == "relu":
                out.append(_case(rng, base + "_large", dtype, fusion,
                                 (150, 120), (120, 130)))
    for fusion in ("bias", "relu"):
        for ta, tb in ((True, False), (False, True)):
            suffix = ("_ta" if ta else "") + ("_tb" if tb else "")
            out.append(_case(rng, "_FusedMatMul_float32_%s%s" % (fusion,
                                                                 suffix),
                             np.float32, fusion, (2, 3), (3, 4), ta=ta,
                             tb=tb))
    out.append(_case(rng, "_FusedMatMul_float32_leakyrelu_alpha",
                     np.float32, "leakyrelu", (3, 4), (4, 5), alpha=0.3))
    out.append(_case(rng, "_FusedMatMul_float32_leakyrelu_alpha_above_1",
                     np.float32, "leakyrelu", (3, 4), (4, 5), alpha=1.5))
    # A product too small to split over the pool whose result is larger
    # than a block of C the epilogue keeps in cache: blocks of 208 rows.
    out.append(_case(rng, "_FusedMatMul_float32_relu_cache_blocks",
                     np.float32, "relu", (300, 8), (8, 300)))
    out.append(_case(rng, "_FusedMatMul_float32_large_transposed",
                     np.float32, "elu", (150, 120), (120, 130), ta=True,
                     tb=True))
    # TensorFlow's rule: leading dims of 1 are fine.
    out.append(_case(rng, "_FusedMatMul_float32_bias_1xn", np.float32,
                     "relu", (2, 3), (3, 4), bias_shape=(1, 4)))
    out.append(_case(rng, "_FusedMatMul_float32_n1_scalar_bias", np.float32,
                     "bias", (2, 3), (3, 1), bias_shape=()))
    # Empty products; with k = 0 the product is zeros and the bias and
    # activation still apply (as MatMul + BiasAdd + Relu6 give).
    for dtype in DTYPES:
        for label, (sa, sb) in (("empty_rows", ((0, 3), (3, 4))),
                                ("empty_columns", ((2, 3), (3, 0))),
                                ("zero_depth", ((2, 0), (0, 3)))):
            out.append(_case(rng, "_FusedMatMul_%s_%s" % (_name(dtype),
                                                          label),
                             dtype, "relu6", sa, sb))
    return out


def _error_cases():
    f32 = np.float32
    a = np.ones((2, 3), f32)
    b = np.ones((3, 4), f32)
    bias = np.ones((4,), f32)
    fused = lambda *ops: {"fused_ops": ("strings", list(ops))}
    return [
        Case("_FusedMatMul_no_fused_ops", "_FusedMatMul", [a, b],
             error=("INVALID_ARGUMENT",
                    "Fused MatMul must have at least one fused op.")),
        Case("_FusedMatMul_fusion_tanh", "_FusedMatMul", [a, b, bias],
             attrs=fused("BiasAdd", "Tanh"),
             error=("UNIMPLEMENTED",
                    "Fusion is not implemented: [BiasAdd,Tanh]")),
        Case("_FusedMatMul_fusion_relu_alone", "_FusedMatMul", [a, b, bias],
             attrs=fused("Relu"),
             error=("UNIMPLEMENTED",
                    "Op '_FusedMatMul' (kernel '_FusedMatMulCpu') "
                    "construction: Fusion is not implemented: [Relu]")),
        Case("_FusedMatMul_fusion_three_ops", "_FusedMatMul", [a, b, bias],
             attrs=fused("BiasAdd", "Relu", "Relu6"),
             error=("UNIMPLEMENTED",
                    "Fusion is not implemented: [BiasAdd,Relu,Relu6]")),
        Case("_FusedMatMul_fusion_batch_norm", "_FusedMatMul",
             [a, b, bias, bias, bias, bias], attrs=fused("FusedBatchNorm"),
             error=("UNIMPLEMENTED",
                    "Fusion is not implemented: [FusedBatchNorm]")),
        Case("_FusedMatMul_bias_missing", "_FusedMatMul", [a, b],
             attrs=fused("BiasAdd"),
             error=("INVALID_ARGUMENT",
                    "Fused MatMul with BiasAdd must have one extra argument: "
                    "bias.")),
        Case("_FusedMatMul_two_biases", "_FusedMatMul", [a, b, bias, bias],
             attrs=fused("BiasAdd", "Relu"),
             error=("INVALID_ARGUMENT",
                    "Fused MatMul with BiasAdd must have one extra argument: "
                    "bias.")),
        Case("_FusedMatMul_bias_size", "_FusedMatMul",
             [a, b, np.ones((3,), f32)], attrs=fused("BiasAdd"),
             error=("INVALID_ARGUMENT",
                    "Must provide as many biases as the product has columns: "
                    "bias [3] vs. product [2,4]")),
        Case("_FusedMatMul_bias_scalar", "_FusedMatMul",
             [a, b, np.float32(1)], attrs=fused("BiasAdd"),
             error=("INVALID_ARGUMENT",
                    "Must provide as many biases as the product has columns: "
                    "bias [] vs. product [2,4]")),
        Case("_FusedMatMul_bias_matrix", "_FusedMatMul",
             [a, b, np.ones((2, 4), f32)], attrs=fused("BiasAdd"),
             error=("INVALID_ARGUMENT",
                    "all dimension sizes of bias must be 1 except the last "
                    "dimension: [2,4]")),
        Case("_FusedMatMul_size_incompatible", "_FusedMatMul",
             [np.ones((2, 2), f32), b, bias], attrs=fused("BiasAdd"),
             error=("INVALID_ARGUMENT",
                    "Matrix size-incompatible: In[0]: [2,2], In[1]: [3,4]")),
        Case("_FusedMatMul_rank3", "_FusedMatMul",
             [np.ones((1, 2, 3), f32), np.ones((1, 3, 4), f32), bias],
             attrs=fused("BiasAdd"),
             error=("INVALID_ARGUMENT",
                    "In[0] and In[1] ndims must be == 2: 3")),
        Case("_FusedMatMul_double_not_allowed", "_FusedMatMul",
             [a.astype(np.float64), b.astype(np.float64),
              bias.astype(np.float64)], attrs=fused("BiasAdd"),
             error=("INVALID_ARGUMENT", "not in the list of allowed")),
        Case("_FusedMatMul_mixed_dtypes", "_FusedMatMul",
             [a, b, bias.astype(np.float16)], attrs=fused("BiasAdd"),
             error=("INVALID_ARGUMENT", "_FusedMatMul")),
    ]


def cases():
    rng = np.random.default_rng(20261127)
    return _value_cases(rng) + _error_cases()
