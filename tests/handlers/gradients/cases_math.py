"""Element-wise math, activations, their gradient helpers, binary ops with
broadcasting, reductions, MatMul / BatchMatMulV2, AddN, ClipByValue and
Select: TensorFlow's gradients against torch.autograd.

Inputs are kept away from the kinks of non-smooth ops (Abs, Relu,
Maximum, FloorMod, ...) so that the finite-difference check holds and the
one-sided conventions of TensorFlow and PyTorch cannot differ."""

import numpy as np
import torch
import torch.nn.functional as F

from gradcase import F32, I32, I64, a_bool, a_type

SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717

SMOOTH_HVP = {"Exp", "Log", "Sin", "Cos", "Tanh", "Sigmoid", "Sqrt", "Rsqrt",
              "Square", "Reciprocal", "Inv", "Softplus", "Erf", "Expm1",
              "Log1p", "Selu"}


def _unary(b):
    def pos(*s):
        return b.uniform(0.3, 3.0, *s)

    table = [
        # name, reference, input maker, none
        ("Neg", lambda x: -x, b.normal, False),
        ("Identity", lambda x: x * 1, b.normal, False),
        ("Abs", torch.abs, b.away, False),
        ("Sign", torch.sign, b.away, False),
        ("Exp", torch.exp, b.normal, False),
        ("Expm1", torch.expm1, b.normal, False),
        ("Log", torch.log, pos, False),
        ("Log1p", torch.log1p, lambda *s: b.uniform(-0.6, 3.0, *s), False),
        ("Sqrt", torch.sqrt, pos, False),
        ("Rsqrt", torch.rsqrt, pos, False),
        ("Square", torch.square, b.normal, False),
        ("Reciprocal", torch.reciprocal, lambda *s: b.away(*s, lo=0.5), False),
        ("Inv", torch.reciprocal, lambda *s: b.away(*s, lo=0.5), False),
        ("Sin", torch.sin, b.normal, False),
        ("Cos", torch.cos, b.normal, False),
        ("Tanh", torch.tanh, b.normal, False),
        ("Sigmoid", torch.sigmoid, b.normal, False),
        ("Relu", torch.relu, b.away, False),
        ("Relu6", lambda x: torch.clamp(x, 0.0, 6.0),
         lambda *s: np.where(b.rng.random(s) < 0.3, 6.0, 0.0) + b.away(*s, hi=3.0),
         False),
        ("Elu", F.elu, b.away, False),
        ("Selu", torch.selu, b.away, False),
        ("Softplus", F.softplus, lambda *s: b.normal(*s, scale=3.0), False),
        ("Softsign", F.softsign, b.away, False),
        ("Erf", torch.erf, b.normal, False),
        ("Floor", torch.floor, lambda *s: b.uniform(-3, 3, *s), True),
        ("Ceil", torch.ceil, lambda *s: b.uniform(-3, 3, *s), True),
        ("Round", torch.round, lambda *s: b.uniform(-3, 3, *s), True),
    ]
    for name, ref, make, none in table:
        hvp = name in SMOOTH_HVP
        for shape in [(2, 3), (), (2, 1, 4)]:
            tag = "x".join(str(d) for d in shape) or "scalar"
            b.add("%s_%s" % (name, tag), name, [make(*shape)], ref,
                  none=(0,) if none else (), hvp=hvp and shape == (2, 3))
        if name in ("Tanh", "Sigmoid", "Exp", "Relu", "Sqrt"):
            b.add("%s_float32" % name, name,
                  [make(3, 4).astype(F32)], ref)
    # An empty tensor.
    b.add("Tanh_empty", "Tanh", [b.normal(0, 3)], torch.tanh)


def _helpers(b):
    """The gradient helpers are ops too: their gradients give second
    order."""
    def pos(*s):
        return b.uniform(0.3, 2.0, *s)

    table = [
        ("TanhGrad", lambda y, dy: dy * (1 - y * y), b.normal),
        ("SigmoidGrad", lambda y, dy: dy * y * (1 - y), b.normal),
        ("RsqrtGrad", lambda y, dy: dy * -0.5 * y * y * y, pos),
        ("SqrtGrad", lambda y, dy: dy * 0.5 / y, pos),
        ("ReciprocalGrad", lambda y, dy: -dy * y * y, b.normal),
        ("InvGrad", lambda y, dy: -dy * y * y, b.normal),
    ]
    for name, ref, make in table:
        b.add(name, name, [make(2, 3), b.normal(2, 3)], ref, hvp=True)

    def mask(cond, x):
        return torch.where(cond, x, torch.zeros((), dtype=x.dtype))

    b.add("ReluGrad", "ReluGrad", [b.normal(2, 3), b.away(2, 3)],
          lambda g, f: mask(f > 0, g))
    f6 = b.away(3, 4, hi=3.0) + np.where(b.rng.random((3, 4)) < 0.4, 6.0, 0.0)
    b.add("Relu6Grad", "Relu6Grad", [b.normal(3, 4), f6],
          lambda g, f: mask((f > 0) & (f < 6), g))
    y = np.where(b.rng.random((2, 3)) < 0.5, b.uniform(-0.9, -0.1, 2, 3),
                 b.uniform(0.1, 2, 2, 3))
    b.add("EluGrad", "EluGrad", [b.normal(2, 3), y],
          lambda g, y: torch.where(y < 0, g * (y + 1), g))
    ys = np.where(b.rng.random((2, 3)) < 0.5,
                  b.uniform(-1.5, -0.1, 2, 3), b.uniform(0.1, 2, 2, 3))
    b.add("SeluGrad", "SeluGrad", [b.normal(2, 3), ys],
          lambda g, y: torch.where(y < 0, g * (y + SELU_SCALE * SELU_ALPHA),
                                   g * SELU_SCALE))
    b.add("SoftplusGrad", "SoftplusGrad", [b.normal(2, 3), b.normal(2, 3)],
          lambda g, x: g * torch.sigmoid(x), hvp=True)


BROADCASTS = [
    ("same", (2, 3), (2, 3)),
    ("row", (2, 3), (3,)),
    ("col", (3, 1), (1, 4)),
    ("scalar_x", (), (2, 3)),
    ("scalar_y", (2, 3), ()),
    ("rank3", (2, 1, 3), (4, 1)),
]


def _cumsum(b):
    for exclusive in (False, True):
        for reverse in (False, True):
            def ref(x, a, exclusive=exclusive, reverse=reverse):
                y = torch.flip(x, [1]) if reverse else x
                out = torch.cumsum(y, 1)
                if exclusive:
                    out = out - y
                return torch.flip(out, [1]) if reverse else out
            b.add("Cumsum_%d%d" % (exclusive, reverse), "Cumsum",
                  [b.normal(2, 4, 3), np.array(1, I32)], ref,
                  attrs={"exclusive": a_bool(exclusive),
                         "reverse": a_bool(reverse)}, hvp=not exclusive)


def _cumprod(b):
    for exclusive in (False, True):
        for reverse in (False, True):
            def ref(x, a, exclusive=exclusive, reverse=reverse):
                y = torch.flip(x, [1]) if reverse else x
                out = torch.cumprod(y, 1)
                if exclusive:
                    ones = torch.ones_like(y[:, :1])
                    out = torch.cat([ones, out[:, :-1]], 1)
                return torch.flip(out, [1]) if reverse else out
            b.add("Cumprod_%d%d" % (exclusive, reverse), "Cumprod",
                  [b.away(2, 4, 3, lo=0.5, hi=1.5), np.array(1, I32)], ref,
                  attrs={"exclusive": a_bool(exclusive),
                         "reverse": a_bool(reverse)}, hvp=not exclusive)


def _binary(b):
    def floor_mod(x, y):
        return x - torch.floor(x / y) * y

    def trunc_mod(x, y):
        return x - torch.trunc(x / y) * y

    table = [
        # name, reference, x maker, y maker, none, hvp
        ("AddV2", torch.add, b.normal, b.normal, (), False),
        ("Add", torch.add, b.normal, b.normal, (), False),
        ("Sub", torch.sub, b.normal, b.normal, (), False),
        ("Mul", torch.mul, b.normal, b.normal, (), True),
        ("RealDiv", torch.div, b.normal, lambda *s: b.away(*s, lo=0.5), (),
         True),
        ("Div", torch.div, b.normal, lambda *s: b.away(*s, lo=0.5), (), False),
        ("Pow", torch.pow, lambda *s: b.uniform(0.5, 2.0, *s),
         lambda *s: b.uniform(-2, 2, *s), (), True),
        ("SquaredDifference", lambda x, y: (x - y) ** 2, b.normal, b.normal,
         (), True),
        ("FloorDiv", lambda x, y: torch.floor(x / y), b.normal,
         lambda *s: b.away(*s, lo=0.5), (0, 1), False),
        ("TruncateDiv", lambda x, y: torch.trunc(x / y), b.normal,
         lambda *s: b.away(*s, lo=0.5), (0, 1), False),
    ]
    for name, ref, mx, my, none, hvp in table:
        for tag, sx, sy in BROADCASTS:
            b.add("%s_%s" % (name, tag), name, [mx(*sx), my(*sy)], ref,
                  none=none, hvp=hvp and tag in ("same", "rank3"))
    b.add("Mul_float32_row", "Mul", [b.normal(3, 4, dtype=F32),
                                     b.normal(4, dtype=F32)], torch.mul)
    # Maximum / Minimum: no ties (TensorFlow gives a tie to x, PyTorch
    # splits it).
    for name, ref in (("Maximum", torch.maximum), ("Minimum", torch.minimum)):
        for tag, sx, sy in BROADCASTS:
            while True:
                x, y = b.normal(*sx), b.normal(*sy)
                if np.min(np.abs(x - y)) > 0.05:
                    break
            b.add("%s_%s" % (name, tag), name, [x, y], ref)
    for name, ref, frac in (("FloorMod", floor_mod, np.floor),
                            ("TruncateMod", trunc_mod, np.trunc)):
        for tag, sx, sy in BROADCASTS:
            while True:
                x, y = b.uniform(-4, 4, *sx), b.away(*sy, lo=0.5)
                q = x / y
                if np.min(np.abs(q - np.round(q))) > 0.05:
                    break
            b.add("%s_%s" % (name, tag), name, [x, y], ref)


def _reductions(b):
    axes_variants = [
        ("axis0", (3, 4), np.array([0], I32), False),
        ("axis1_keep", (3, 4), np.array([1], I32), True),
        ("scalar_axis", (3, 4), np.array(1, I32), False),
        ("negative", (2, 3, 4), np.array([-1], I32), False),
        ("two_axes", (2, 3, 4), np.array([0, 2], I32), False),
        ("two_axes_keep_int64", (2, 3, 4), np.array([2, 0], I64), True),
        ("all", (2, 3), np.array([0, 1], I32), False),
        ("none", (2, 3), np.zeros([0], I32), False),
    ]

    def reduce(fn):
        def ref(x, axes, keep):
            dims = [int(a) % x.dim() for a in np.atleast_1d(axes.numpy())]
            if not dims:
                return x * 1
            return fn(x, dims, keep)
        return ref

    def prod(x, dims, keep):
        for d in sorted(dims, reverse=True):
            x = torch.prod(x, d, keepdim=True)
        if not keep:
            for d in sorted(dims, reverse=True):
                x = x.squeeze(d)
        return x

    ops = [
        ("Sum", reduce(lambda x, d, k: torch.sum(x, d, keepdim=k)),
         b.normal, True),
        ("Mean", reduce(lambda x, d, k: torch.mean(x, d, keepdim=k)),
         b.normal, True),
        ("Prod", reduce(prod), lambda *s: b.uniform(0.5, 1.5, *s), True),
        ("Max", reduce(lambda x, d, k: torch.amax(x, d, keepdim=k)),
         b.distinct, False),
        ("Min", reduce(lambda x, d, k: torch.amin(x, d, keepdim=k)),
         b.distinct, False),
    ]
    for name, ref, make, hvp in ops:
        for tag, shape, axes, keep in axes_variants:
            b.add("%s_%s" % (name, tag), name, [make(*shape), axes],
                  lambda x, a, ref=ref, keep=keep: ref(x, a, keep),
                  attrs={"keep_dims": a_bool(keep)},
                  hvp=hvp and tag in ("two_axes", "all"))
    # Prod with zeros: the gradient of an entry is the product of the others.
    x = b.uniform(0.5, 1.5, 3, 4)
    x[0, 1] = 0.0
    x[2, 0] = 0.0
    x[2, 3] = 0.0
    b.add("Prod_zeros", "Prod", [x, np.array([1], I32)],
          lambda x, a: torch.prod(x, 1))
    b.add("Prod_zeros_axis0", "Prod", [x, np.array([0], I32)],
          lambda x, a: torch.prod(x, 0))
    # Max with ties: the gradient is split between them (as PyTorch's amax).
    x = np.array([[1.0, 3.0, 3.0, 0.5], [2.0, 2.0, 2.0, -1.0]])
    b.add("Max_ties", "Max", [x, np.array([1], I32)],
          lambda x, a: torch.amax(x, 1), fd=False)
    b.add("Min_ties", "Min", [x, np.array([0, 1], I32)],
          lambda x, a: torch.amin(x, (0, 1)), fd=False)
    b.add("Sum_float32", "Sum", [b.normal(3, 4, dtype=F32),
                                 np.array([0], I32)],
          lambda x, a: torch.sum(x, 0))


def _matmul(b):
    for ta in (False, True):
        for tb in (False, True):
            a = b.normal(*((4, 3) if ta else (3, 4)))
            c = b.normal(*((5, 4) if tb else (4, 5)))
            b.add("MatMul_ta%d_tb%d" % (ta, tb), "MatMul", [a, c],
                  lambda a, c, ta=ta, tb=tb: torch.matmul(
                      a.T if ta else a, c.T if tb else c),
                  attrs={"transpose_a": a_bool(ta),
                         "transpose_b": a_bool(tb)},
                  hvp=not ta and not tb)
    b.add("MatMul_float32", "MatMul", [b.normal(3, 4, dtype=F32),
                                       b.normal(4, 2, dtype=F32)],
          torch.matmul)
    shapes = [
        ("batch", (2, 3, 4), (2, 4, 5)),
        ("broadcast_batch", (2, 1, 3, 4), (3, 4, 2)),
        ("rank2_y", (2, 3, 4), (4, 2)),
    ]
    for tag, sx, sy in shapes:
        b.add("BatchMatMulV2_%s" % tag, "BatchMatMulV2",
              [b.normal(*sx), b.normal(*sy)], torch.matmul,
              hvp=tag == "broadcast_batch")
    for ax in (False, True):
        for ay in (False, True):
            x = b.normal(*((2, 4, 3) if ax else (2, 3, 4)))
            y = b.normal(*((2, 5, 4) if ay else (2, 4, 5)))
            b.add("BatchMatMulV2_adj%d%d" % (ax, ay), "BatchMatMulV2", [x, y],
                  lambda x, y, ax=ax, ay=ay: torch.matmul(
                      x.transpose(-1, -2) if ax else x,
                      y.transpose(-1, -2) if ay else y),
                  attrs={"adj_x": a_bool(ax), "adj_y": a_bool(ay)})


def _select(b):
    cond = b.rng.random((2, 3)) < 0.5
    b.add("Select_same", "Select", [cond, b.normal(2, 3), b.normal(2, 3)],
          lambda c, t, e: torch.where(c, t, e))
    b.add("Select_scalar", "Select", [np.array(True), b.normal(2, 3),
                                      b.normal(2, 3)],
          lambda c, t, e: torch.where(c, t, e))
    vec = np.array([True, False, True])
    b.add("Select_rows", "Select", [vec, b.normal(3, 2, 2), b.normal(3, 2, 2)],
          lambda c, t, e: torch.where(c.reshape(3, 1, 1), t, e))
    variants = [
        ("same", (2, 3), (2, 3), (2, 3)),
        ("cond_bcast", (2, 1), (2, 3), (2, 3)),
        ("all_bcast", (2, 1), (1, 3), (3,)),
        ("scalar_e", (2, 3), (2, 3), ()),
    ]
    for tag, sc, st, se in variants:
        c = b.rng.random(sc) < 0.5
        b.add("SelectV2_%s" % tag, "SelectV2",
              [c, b.normal(*st), b.normal(*se)],
              lambda c, t, e: torch.where(c, t, e))


def _misc(b):
    xs = [b.normal(2, 3) for _ in range(3)]
    b.add("AddN_three", "AddN", xs, lambda *x: x[0] + x[1] + x[2], hvp=True)
    b.add("AddN_one", "AddN", [b.normal(4)], lambda x: x * 1)

    def clip(t, lo, hi):
        return torch.minimum(torch.maximum(t, lo), hi)

    def clear(t, *bounds):
        return all(np.min(np.abs(t - v)) > 0.05 for v in bounds)

    while True:
        t = b.uniform(-2, 2, 3, 4)
        if clear(t, -0.5, 0.7):
            break
    b.add("ClipByValue_scalars", "ClipByValue",
          [t, np.array(-0.5), np.array(0.7)], clip)
    while True:
        t, lo = b.uniform(-2, 2, 3, 4), b.uniform(-1.5, -0.1, 3, 4)
        hi = lo + b.uniform(0.3, 2.0, 3, 4)
        if clear(t, lo, hi):
            break
    b.add("ClipByValue_tensors", "ClipByValue", [t, lo, hi], clip)
    b.add("Cast_double_float", "Cast", [b.normal(2, 3)],
          lambda x: x.to(torch.float32),
          attrs={"SrcT": a_type("double"), "DstT": a_type("float")},
          rtol=1e-6, atol=1e-7)
    b.add("Cast_float_double", "Cast", [b.normal(2, 3, dtype=F32)],
          lambda x: x.to(torch.float64),
          attrs={"SrcT": a_type("float"), "DstT": a_type("double")})


def cases(b):
    _unary(b)
    _helpers(b)
    _binary(b)
    _reductions(b)
    _cumsum(b)
    _cumprod(b)
    _matmul(b)
    _select(b)
    _misc(b)
