"""Neural-network ops: softmax and cross-entropy, BiasAdd, convolutions and
their backprops (second order), pooling (MaxPool to third order: MaxPoolGrad
and MaxPoolGradGrad), FusedBatchNormV3 in training and inference.
References follow TensorFlow's layouts (NHWC / NCHW, HWIO filters) and
padding rules (SAME pads needed // 2 before, the rest after; AvgPool
divides by the real elements of a window)."""

import numpy as np
import torch
import torch.nn.functional as F

from gradcase import F32, F64, I32, I64, a_bool, a_float, a_ints, a_str


def _softmax(b):
    for shape in ((3, 5), (2, 3, 4), (4,)):
        tag = "x".join(map(str, shape))
        b.add("Softmax_%s" % tag, "Softmax", [b.normal(*shape)],
              lambda x: torch.softmax(x, -1), hvp=True)
        b.add("LogSoftmax_%s" % tag, "LogSoftmax", [b.normal(*shape)],
              lambda x: torch.log_softmax(x, -1), hvp=True)
    b.add("Softmax_float32", "Softmax", [b.normal(3, 4, dtype=F32)],
          lambda x: torch.softmax(x, -1))

    def sce(x, labels):
        logp = torch.log_softmax(x, -1)
        return -(labels * logp).sum(-1), torch.softmax(x, -1) - labels

    labels = np.abs(b.normal(3, 5))
    labels /= labels.sum(-1, keepdims=True)
    b.add("SoftmaxCrossEntropyWithLogits", "SoftmaxCrossEntropyWithLogits",
          [b.normal(3, 5), labels], sce, outgrads=["random", None])
    # With an upstream gradient on backprop too (second order): TensorFlow
    # then differentiates the features only.
    b.add("SoftmaxCrossEntropyWithLogits_backprop_upstream",
          "SoftmaxCrossEntropyWithLogits", [b.normal(3, 5), labels], sce,
          watch=[0])
    onehot = np.eye(3, dtype=F32)[[0, 1, 2, 0]]
    b.add("SoftmaxCrossEntropyWithLogits_float32",
          "SoftmaxCrossEntropyWithLogits",
          [b.normal(4, 3, dtype=F32), onehot], sce,
          outgrads=["random", None])

    def sparse(x, labels):
        onehot = F.one_hot(labels.long(), x.shape[-1]).to(x.dtype)
        return sce(x, onehot)

    for dtype in (I32, I64):
        b.add("SparseSoftmaxCrossEntropyWithLogits_%s" % np.dtype(dtype).name,
              "SparseSoftmaxCrossEntropyWithLogits",
              [b.normal(4, 5), np.array([0, 4, 2, 2], dtype)], sparse,
              outgrads=["random", None])
    b.add("SparseSoftmaxCrossEntropyWithLogits_backprop_upstream",
          "SparseSoftmaxCrossEntropyWithLogits",
          [b.normal(3, 4), np.array([1, 3, 0], I64)], sparse)


def _bias(b):
    b.add("BiasAdd_nhwc", "BiasAdd", [b.normal(2, 3, 4), b.normal(4)],
          lambda x, c: x + c)
    b.add("BiasAdd_nchw", "BiasAdd", [b.normal(2, 3, 2, 2), b.normal(3)],
          lambda x, c: x + c.reshape(3, 1, 1),
          attrs={"data_format": a_str("NCHW")})
    b.add("BiasAdd_matrix", "BiasAdd", [b.normal(3, 4), b.normal(4)],
          lambda x, c: x + c)
    b.add("BiasAddV1", "BiasAddV1", [b.normal(2, 3), b.normal(3)],
          lambda x, c: x + c)
    b.add("BiasAddGrad_nhwc", "BiasAddGrad", [b.normal(2, 3, 4)],
          lambda g: g.sum((0, 1)))
    b.add("BiasAddGrad_nchw", "BiasAddGrad", [b.normal(2, 3, 2, 2)],
          lambda g: g.sum((0, 2, 3)), attrs={"data_format": a_str("NCHW")})


def _leaky_relu_l2_loss(b):
    # alpha is a float attribute: double kernels use float32(alpha).
    def f32(alpha):
        return float(np.float32(alpha))

    for alpha in (0.2, 0.01, 1.5, -0.5):
        b.add("LeakyRelu_alpha%g" % alpha, "LeakyRelu", [b.away(3, 4)],
              lambda x, a=f32(alpha): torch.where(x > 0, x, x * a),
              attrs={"alpha": a_float(alpha)}, hvp=True)
    b.add("LeakyRelu_default_alpha", "LeakyRelu", [b.away(2, 3)],
          lambda x: F.leaky_relu(x, f32(0.2)))
    b.add("LeakyReluGrad", "LeakyReluGrad", [b.normal(2, 3), b.away(2, 3)],
          lambda g, x: torch.where(x > 0, g, g * f32(0.3)),
          attrs={"alpha": a_float(0.3)})
    b.add("L2Loss_matrix", "L2Loss", [b.normal(3, 4)],
          lambda t: (t * t).sum() / 2, hvp=True)
    b.add("L2Loss_scalar", "L2Loss", [np.array(1.5)],
          lambda t: (t * t).sum() / 2)


def _pads(size, k, stride, dilation, padding, explicit=(0, 0)):
    eff = (k - 1) * dilation + 1
    if padding == "VALID":
        return 0, 0
    if padding == "EXPLICIT":
        return explicit
    out = (size + stride - 1) // stride
    needed = max(0, (out - 1) * stride + eff - size)
    return needed // 2, needed - needed // 2


def _to_nchw(x, fmt):
    return x if fmt == "NCHW" else x.permute(0, 3, 1, 2)


def _from_nchw(x, fmt):
    return x if fmt == "NCHW" else x.permute(0, 2, 3, 1)


def _conv(x, f, strides, padding, dilations, fmt, explicit):
    """TensorFlow's Conv2D: x in `fmt`, f HWIO."""
    xc = _to_nchw(x, fmt)
    kh, kw = f.shape[0], f.shape[1]
    sh, sw = strides
    dh, dw = dilations
    ph = _pads(xc.shape[2], kh, sh, dh, padding, explicit[0])
    pw = _pads(xc.shape[3], kw, sw, dw, padding, explicit[1])
    xc = F.pad(xc, (pw[0], pw[1], ph[0], ph[1]))
    y = F.conv2d(xc, f.permute(3, 2, 0, 1), stride=(sh, sw),
                 dilation=(dh, dw))
    return _from_nchw(y, fmt)


def _conv_attrs(strides, padding, dilations, fmt, explicit):
    def four(hw):
        return [1, 1] + list(hw) if fmt == "NCHW" else [1] + list(hw) + [1]
    attrs = {"strides": a_ints(four(strides)), "padding": a_str(padding),
             "dilations": a_ints(four(dilations)), "data_format": a_str(fmt)}
    if padding == "EXPLICIT":
        pairs = [[0, 0], list(explicit[0]), list(explicit[1]), [0, 0]]
        if fmt == "NCHW":
            pairs = [[0, 0], [0, 0], list(explicit[0]), list(explicit[1])]
        attrs["explicit_paddings"] = a_ints(sum(pairs, []))
    return attrs


CONVS = [
    # name, NHWC input shape, filter HWIO, strides, padding, dilations,
    # explicit paddings ((top, bottom), (left, right)), format
    ("valid", (2, 5, 5, 2), (3, 3, 2, 3), (1, 1), "VALID", (1, 1), None,
     "NHWC"),
    ("same_stride2", (1, 5, 6, 2), (3, 2, 2, 2), (2, 2), "SAME", (1, 1), None,
     "NHWC"),
    ("explicit", (1, 4, 4, 1), (2, 2, 1, 2), (1, 2), "EXPLICIT", (1, 1),
     ((1, 0), (2, 1)), "NHWC"),
    ("dilated", (1, 6, 6, 2), (2, 2, 2, 2), (1, 1), "VALID", (2, 2), None,
     "NHWC"),
    ("nchw_same", (2, 4, 4, 3), (3, 3, 3, 2), (1, 1), "SAME", (1, 1), None,
     "NCHW"),
]


def _convs(b):
    for name, xs, fs, strides, padding, dil, explicit, fmt in CONVS:
        explicit = explicit or ((0, 0), (0, 0))
        if fmt == "NCHW":
            xs = (xs[0], xs[3], xs[1], xs[2])
        attrs = _conv_attrs(strides, padding, dil, fmt, explicit)

        def conv(x, f, strides=strides, padding=padding, dil=dil, fmt=fmt,
                 explicit=explicit):
            return _conv(x, f, strides, padding, dil, fmt, explicit)

        x, f = b.normal(*xs), b.normal(*fs)
        b.add("Conv2D_%s" % name, "Conv2D", [x, f], conv, attrs=attrs,
              hvp=name in ("valid", "nchw_same"))
        y = conv(torch.tensor(x), torch.tensor(f))
        dy = b.normal(*y.shape)

        def backprop_input(sizes, f, dy, conv=conv, xs=xs):
            x0 = torch.zeros(xs, dtype=f.dtype, requires_grad=True)
            return torch.autograd.grad(conv(x0, f), x0, dy,
                                       create_graph=True)[0]

        def backprop_filter(x, sizes, dy, conv=conv, fs=fs):
            f0 = torch.zeros(fs, dtype=x.dtype, requires_grad=True)
            return torch.autograd.grad(conv(x, f0), f0, dy,
                                       create_graph=True)[0]

        b.add("Conv2DBackpropInput_%s" % name, "Conv2DBackpropInput",
              [np.array(xs, I32), f, dy], backprop_input, attrs=attrs,
              hvp=name == "valid")
        b.add("Conv2DBackpropFilter_%s" % name, "Conv2DBackpropFilter",
              [x, np.array(fs, I32), dy], backprop_filter, attrs=attrs,
              hvp=name == "valid")
    attrs = _conv_attrs((1, 1), "VALID", (1, 1), "NHWC", None)
    b.add("Conv2D_float32", "Conv2D",
          [b.normal(1, 4, 4, 2, dtype=F32), b.normal(2, 2, 2, 2, dtype=F32)],
          lambda x, f: _conv(x, f, (1, 1), "VALID", (1, 1), "NHWC",
                             ((0, 0), (0, 0))), attrs=attrs)


POOLS = [
    ("valid", (2, 4, 4, 2), (2, 2), (2, 2), "VALID", "NHWC"),
    ("same_overlap", (1, 5, 4, 2), (3, 2), (2, 1), "SAME", "NHWC"),
    ("nchw", (1, 4, 5, 2), (2, 3), (1, 2), "VALID", "NCHW"),
]


def _pool_windows(x, k, s, padding, fmt, reduce):
    """TensorFlow's pooling by windows (x in `fmt`), reduced by
    `reduce(window, dims)` over the real elements of each window."""
    xc = _to_nchw(x, fmt)
    h, w = xc.shape[2], xc.shape[3]
    ph = _pads(h, k[0], s[0], 1, padding)
    pw = _pads(w, k[1], s[1], 1, padding)
    oh = (h + ph[0] + ph[1] - k[0]) // s[0] + 1
    ow = (w + pw[0] + pw[1] - k[1]) // s[1] + 1
    rows = []
    for i in range(oh):
        cols = []
        for j in range(ow):
            r0, c0 = i * s[0] - ph[0], j * s[1] - pw[0]
            win = xc[:, :, max(r0, 0):min(r0 + k[0], h),
                     max(c0, 0):min(c0 + k[1], w)]
            cols.append(reduce(win))
        rows.append(torch.stack(cols, -1))
    return _from_nchw(torch.stack(rows, -2), fmt)


def _pool_attrs(k, s, padding, fmt):
    def four(hw):
        return [1, 1] + list(hw) if fmt == "NCHW" else [1] + list(hw) + [1]
    return {"ksize": a_ints(four(k)), "strides": a_ints(four(s)),
            "padding": a_str(padding), "data_format": a_str(fmt)}


def _pools(b):
    for name, xs, k, s, padding, fmt in POOLS:
        if fmt == "NCHW":
            xs = (xs[0], xs[3], xs[1], xs[2])
        attrs = _pool_attrs(k, s, padding, fmt)

        def maxpool(x, k=k, s=s, padding=padding, fmt=fmt):
            return _pool_windows(x, k, s, padding, fmt,
                                 lambda w: w.amax((2, 3)))

        def avgpool(x, k=k, s=s, padding=padding, fmt=fmt):
            return _pool_windows(x, k, s, padding, fmt,
                                 lambda w: w.mean((2, 3)))

        b.add("MaxPool_%s" % name, "MaxPool", [b.distinct(*xs)], maxpool,
              attrs=attrs)
        x = b.normal(*xs)
        b.add("AvgPool_%s" % name, "AvgPool", [x], avgpool, attrs=attrs)
        dy = b.normal(*avgpool(torch.tensor(x)).shape)

        def avgpool_grad(sizes, dy, avgpool=avgpool, xs=xs):
            x0 = torch.zeros(xs, dtype=dy.dtype, requires_grad=True)
            return torch.autograd.grad(avgpool(x0), x0, dy,
                                       create_graph=True)[0]

        b.add("AvgPoolGrad_%s" % name, "AvgPoolGrad",
              [np.array(xs, I32), dy], avgpool_grad, attrs=attrs)
    attrs = _pool_attrs((2, 2), (2, 2), "VALID", "NHWC")
    b.add("MaxPool_float32", "MaxPool", [b.distinct(1, 4, 4, 1).astype(F32)],
          lambda x: _pool_windows(x, (2, 2), (2, 2), "VALID", "NHWC",
                                  lambda w: w.amax((2, 3))), attrs=attrs)


def _max_pool_second_order(b):
    """MaxPoolGrad(x, y, dy) and MaxPoolGradGrad(x, y, g): PyTorch's
    second-order max pool (by double backward), on distinct values (no
    ties, where amax splits the gradient). Both are linear in their last
    input and have zero gradients for x and y."""
    for name, xs, k, s, padding, fmt in POOLS:
        if fmt == "NCHW":
            xs = (xs[0], xs[3], xs[1], xs[2])
        attrs = _pool_attrs(k, s, padding, fmt)

        def maxpool(x, k=k, s=s, padding=padding, fmt=fmt):
            return _pool_windows(x, k, s, padding, fmt,
                                 lambda w: w.amax((2, 3)))

        def maxpool_grad(x, y, dy, maxpool=maxpool):
            return torch.autograd.grad(maxpool(x), x, dy,
                                       create_graph=True)[0]

        def maxpool_grad_grad(x, y, g, maxpool=maxpool):
            x0 = x.detach().requires_grad_(True)
            out = maxpool(x0)
            u = torch.zeros(out.shape, dtype=g.dtype, requires_grad=True)
            vjp = torch.autograd.grad(out, x0, u, create_graph=True)[0]
            return torch.autograd.grad(vjp, u, g, create_graph=True)[0]

        x = b.distinct(*xs)
        y = maxpool(torch.tensor(x)).numpy()
        b.add("MaxPoolGrad_%s" % name, "MaxPoolGrad",
              [x, y, b.normal(*y.shape)], maxpool_grad, attrs=attrs,
              hvp=True)
        b.add("MaxPoolGradGrad_%s" % name, "MaxPoolGradGrad",
              [x, y, b.normal(*xs)], maxpool_grad_grad, attrs=attrs,
              hvp=True)
    # Only the gradient input watched (x and y get none computed).
    name, xs, k, s, padding, fmt = POOLS[1]
    attrs = _pool_attrs(k, s, padding, fmt)

    def maxpool_grad_dy(x, y, dy):
        x0 = x.detach().requires_grad_(True)
        out = _pool_windows(x0, k, s, padding, fmt, lambda w: w.amax((2, 3)))
        return torch.autograd.grad(out, x0, dy, create_graph=True)[0]

    x = b.distinct(*xs)
    y = _pool_windows(torch.tensor(x), k, s, padding, fmt,
                      lambda w: w.amax((2, 3))).numpy()
    b.add("MaxPoolGrad_%s_grad_only" % name, "MaxPoolGrad",
          [x, y, b.normal(*y.shape)], maxpool_grad_dy, watch=[2],
          attrs=attrs)
    x32 = b.distinct(1, 4, 4, 2).astype(F32)
    attrs = _pool_attrs((2, 2), (2, 2), "VALID", "NHWC")

    def maxpool32_grad(x, y, dy):
        return torch.autograd.grad(
            _pool_windows(x, (2, 2), (2, 2), "VALID", "NHWC",
                          lambda w: w.amax((2, 3))), x, dy,
            create_graph=True)[0]

    y32 = _pool_windows(torch.tensor(x32), (2, 2), (2, 2), "VALID", "NHWC",
                        lambda w: w.amax((2, 3))).numpy()
    b.add("MaxPoolGrad_float32", "MaxPoolGrad",
          [x32, y32, b.normal(1, 2, 2, 2, dtype=F32)], maxpool32_grad,
          attrs=attrs)


def _batch_norm(b):
    eps = 2.0 ** -10  # exact in the float attr

    def channel_axes(fmt, rank):
        return (0, 2, 3) if fmt == "NCHW" else tuple(range(rank - 1))

    def shaped(v, fmt, rank):
        return v.reshape(-1, 1, 1) if fmt == "NCHW" else v

    for dtype in (F64, F32):
        for fmt in ("NHWC", "NCHW"):
            shape = (2, 3, 2, 2) if fmt == "NCHW" else (2, 2, 2, 3)
            x = b.normal(*shape, dtype=dtype, scale=2.0) + 0.5
            scale = b.uniform(0.5, 1.5, 3, dtype=dtype)
            offset = b.normal(3, dtype=dtype)
            empty = np.zeros([0], dtype)
            attrs = {"epsilon": a_float(eps), "data_format": a_str(fmt),
                     "is_training": a_bool(True)}

            def train(x, scale, offset, mean, var, fmt=fmt):
                axes = channel_axes(fmt, x.dim())
                m = x.mean(axes, keepdim=True)
                v = ((x - m) ** 2).mean(axes, keepdim=True)
                y = (x - m) / torch.sqrt(v + eps)
                return (y * shaped(scale, fmt, 4) + shaped(offset, fmt, 4),
                        None, None, None, None, None)

            tag = "%s_%s" % (np.dtype(dtype).name, fmt)
            b.add("FusedBatchNormV3_training_%s" % tag, "FusedBatchNormV3",
                  [x, scale, offset, empty, empty], train, watch=[0, 1, 2],
                  attrs=attrs, hvp=dtype == F64 and fmt == "NHWC",
                  rtol=None if dtype == F64 else 1e-4,
                  atol=None if dtype == F64 else 1e-4)
            mean = b.normal(3, dtype=dtype)
            var = b.uniform(0.5, 2.0, 3, dtype=dtype)
            attrs = dict(attrs, is_training=a_bool(False))

            def infer(x, scale, offset, mean, var, fmt=fmt):
                y = (x - shaped(mean, fmt, 4)) / torch.sqrt(
                    shaped(var, fmt, 4) + eps)
                return (y * shaped(scale, fmt, 4) + shaped(offset, fmt, 4),
                        None, None, None, None, None)

            # TensorFlow gives no gradient to the population statistics.
            b.add("FusedBatchNormV3_inference_%s" % tag, "FusedBatchNormV3",
                  [x, scale, offset, mean, var], infer,
                  watch=[0, 1, 2, 3, 4], none=(3, 4), attrs=attrs,
                  rtol=None if dtype == F64 else 1e-4,
                  atol=None if dtype == F64 else 1e-4)


def cases(b):
    _softmax(b)
    _bias(b)
    _leaky_relu_l2_loss(b)
    _convs(b)
    _pools(b)
    _batch_norm(b)
    _max_pool_second_order(b)
