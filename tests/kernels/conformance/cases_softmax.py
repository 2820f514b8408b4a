"""Softmax, LogSoftmax, SoftmaxCrossEntropyWithLogits and
SparseSoftmaxCrossEntropyWithLogits against NumPy (float64, max-shifted),
including broadcast labels, empty batches, extreme logits and TensorFlow's
errors (bad ranks, out-of-range sparse labels as the CPU kernel reports
them)."""

import numpy as np

from casegen import BFloat16, Case, round_bfloat16

DTYPES = [np.float32, np.float64, np.float16, "bfloat16"]


def _name(dtype):
    return "bfloat16" if dtype == "bfloat16" else np.dtype(dtype).name


def _cast(values, dtype):
    """values in dtype (bfloat16: float32 rounded), for inputs."""
    if dtype == "bfloat16":
        return round_bfloat16(np.asarray(values, np.float32))
    return np.asarray(values).astype(dtype)


def _wrap(values, dtype):
    return BFloat16(values) if dtype == "bfloat16" else values


def _result(values, dtype):
    if dtype == "bfloat16":
        return BFloat16(np.asarray(values).astype(np.float32))
    return np.asarray(values).astype(dtype)


def _tolerance(dtype):
    return {np.float32: dict(rtol=2e-6, atol=1e-6),
            np.float64: dict(rtol=1e-13, atol=1e-14),
            np.float16: dict(rtol=2e-3, atol=1e-3),
            "bfloat16": dict(rtol=1.6e-2, atol=8e-3)}[dtype]


def _softmax(x):
    x = x.astype(np.float64)
    if x.size == 0:
        return x
    with np.errstate(invalid="ignore"):
        shifted = x - np.max(x, axis=-1, keepdims=True)
        e = np.exp(shifted)
        return e / np.sum(e, axis=-1, keepdims=True)


def _log_softmax(x):
    x = x.astype(np.float64)
    if x.size == 0:
        return x
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = x - np.max(x, axis=-1, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=-1,
                                       keepdims=True))


SOFTMAX_SHAPES = {
    "vector": (5,),
    "matrix": (3, 4),
    "rank3": (2, 3, 4),
    "single": (1, 1),
    "empty_batch": (0, 4),
    "no_classes": (3, 0),
}


def _softmax_cases(rng):
    out = []
    for op, fn in (("Softmax", _softmax), ("LogSoftmax", _log_softmax)):
        for dtype in DTYPES:
            shapes = dict(SOFTMAX_SHAPES)
            if dtype == np.float32:
                shapes["large"] = (20, 1000)
            for shape_name, shape in shapes.items():
                x = _cast(rng.standard_normal(shape) * 3, dtype)
                out.append(Case("%s_%s_%s" % (op, _name(dtype), shape_name), op,
                                [_wrap(x, dtype)], [_result(fn(x), dtype)],
                                **_tolerance(dtype)))
            # Large logits: the max shift keeps exp finite; -inf gives 0.
            x = _cast([[1000.0, 999.0, -1000.0, -np.inf],
                       [-50.0, -50.0, -50.0, -50.0]], dtype)
            out.append(Case("%s_%s_extreme" % (op, _name(dtype)), op,
                            [_wrap(x, dtype)], [_result(fn(x), dtype)],
                            **_tolerance(dtype)))
        # NaN in a row makes the row NaN; other rows are unaffected.
        x = np.array([[1.0, np.nan, 2.0], [0.5, 1.5, -1.0]], np.float32)
        out.append(Case("%s_float32_nan" % op, op, [x],
                        [_result(fn(x), np.float32)], rtol=2e-6, atol=1e-6))
    out.append(Case("Softmax_scalar", "Softmax", [np.float32(1.0)],
                    error=("INVALID_ARGUMENT",
                           "logits must have >= 1 dimension, got []")))
    out.append(Case("LogSoftmax_int32_not_allowed", "LogSoftmax",
                    [np.zeros((2, 2), np.int32)],
                    error=("INVALID_ARGUMENT", "not in the list of allowed")))
    return out


def _xent(features, labels):
    f = features.astype(np.float64)
    labels = labels.astype(np.float64)
    shape = np.broadcast_shapes(f.shape, labels.shape)
    f = np.broadcast_to(f, shape)
    labels = np.broadcast_to(labels, shape)
    if f.size == 0:
        return np.zeros(shape[:1]), np.zeros(shape)
    shifted = f - np.max(f, axis=1, keepdims=True)
    log_sum = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    loss = np.sum(labels * (log_sum - shifted), axis=1)
    backprop = np.exp(shifted - log_sum) - labels
    return loss, backprop


XENT_SHAPES = {
    "same": ((3, 4), (3, 4)),
    "labels_row": ((3, 4), (1, 4)),
    "labels_vector": ((3, 4), (4,)),
    "features_row": ((1, 4), (3, 4)),
    "labels_column": ((3, 4), (3, 1)),
    "empty_batch": ((0, 4), (0, 4)),
}


def _labels(rng, shape):
    """Rows that sum to 1 (a distribution over the last axis)."""
    raw = rng.random(shape) + 0.1
    return raw / np.sum(raw, axis=-1, keepdims=True)


def _xent_cases(rng):
    out = []
    for dtype in DTYPES:
        shapes = dict(XENT_SHAPES)
        if dtype == np.float32:
            shapes["large"] = ((32, 600), (32, 600))
        for shape_name, (sf, sl) in shapes.items():
            features = _cast(rng.standard_normal(sf) * 2, dtype)
            labels = _cast(_labels(rng, sl), dtype)
            loss, backprop = _xent(features, labels)
            out.append(Case(
                "SoftmaxCrossEntropyWithLogits_%s_%s" % (_name(dtype),
                                                         shape_name),
                "SoftmaxCrossEntropyWithLogits",
                [_wrap(features, dtype), _wrap(labels, dtype)],
                [_result(loss, dtype), _result(backprop, dtype)],
                **_tolerance(dtype)))
    f32 = np.float32
    out.append(Case("SoftmaxCrossEntropyWithLogits_not_broadcastable",
                    "SoftmaxCrossEntropyWithLogits",
                    [np.zeros((2, 3), f32), np.zeros((2, 4), f32)],
                    error=("INVALID_ARGUMENT",
                           "logits and labels must be broadcastable: "
                           "logits_size=[2,3] labels_size=[2,4]"),
                    outputs=2))
    out.append(Case("SoftmaxCrossEntropyWithLogits_rank3",
                    "SoftmaxCrossEntropyWithLogits",
                    [np.zeros((2, 3, 4), f32), np.zeros((2, 3, 4), f32)],
                    error=("INVALID_ARGUMENT",
                           "logits and labels must be either 2-dimensional, "
                           "or broadcasted to be 2-dimensional"),
                    outputs=2))
    return out


def _sparse(features, labels):
    f = features.astype(np.float64)
    if f.size == 0:
        return np.zeros(f.shape[:1]), f
    shifted = f - np.max(f, axis=1, keepdims=True)
    log_sum = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    rows = np.arange(f.shape[0])
    loss = log_sum[:, 0] - shifted[rows, labels]
    backprop = np.exp(shifted - log_sum)
    backprop[rows, labels] -= 1
    return loss, backprop


def _sparse_cases(rng):
    out = []
    op = "SparseSoftmaxCrossEntropyWithLogits"
    for dtype in DTYPES:
        for label_dtype in (np.int32, np.int64):
            shapes = {"small": (3, 5), "one_class": (2, 1),
                      "empty_batch": (0, 5)}
            if dtype == np.float32 and label_dtype == np.int64:
                shapes["large"] = (32, 600)
            if dtype == np.float32:
                # Rows of a few classes go in chunks of 64 rows.
                shapes["many_rows"] = (150, 4)
            for shape_name, shape in shapes.items():
                features = _cast(rng.standard_normal(shape) * 2, dtype)
                labels = rng.integers(0, shape[1], size=shape[0]).astype(
                    label_dtype)
                loss, backprop = _sparse(features, labels)
                out.append(Case(
                    "%s_%s_%s_%s" % (op, _name(dtype),
                                     np.dtype(label_dtype).name, shape_name),
                    op, [_wrap(features, dtype), labels],
                    [_result(loss, dtype), _result(backprop, dtype)],
                    **_tolerance(dtype)))
    f32 = np.float32
    features = np.zeros((3, 5), f32)
    errors = [
        ("label_too_large", [features, np.array([0, 5, 1], np.int64)],
         "Received a label value of 5 which is outside the valid range of "
         "[0, 5).  Label values: 0 5 1"),
        ("label_negative", [features, np.array([-1, 7, 1], np.int32)],
         "Received a label value of -1 which is outside the valid range of "
         "[0, 5).  Label values: -1 7 1"),
        ("logits_rank1", [np.zeros((3,), f32), np.array([0, 1, 2], np.int64)],
         "logits must be 2-D, but got shape [3]"),
        ("labels_rank2", [features, np.zeros((3, 1), np.int64)],
         "labels must be 1-D, but got shape [3,1]"),
        ("batch_mismatch", [features, np.zeros((4,), np.int64)],
         "logits and labels must have the same first dimension, got logits "
         "shape [3,5] and labels shape [4]"),
        ("no_classes", [np.zeros((2, 0), f32), np.zeros((2,), np.int64)],
         "Must have at least one class, but got logits shape [2,0]"),
        ("float_labels", [features, np.zeros((3,), f32)],
         "not in the list of allowed"),
    ]
    for name, inputs, message in errors:
        out.append(Case("%s_%s" % (op, name), op, inputs,
                        error=("INVALID_ARGUMENT", message), outputs=2))
    return out


def cases():
    rng = np.random.default_rng(20261126)
    return _softmax_cases(rng) + _xent_cases(rng) + _sparse_cases(rng)
