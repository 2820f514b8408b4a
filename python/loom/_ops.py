"""NumPy-style functions over the registered ops: loom.add, loom.sum, ..."""

import operator

import numpy as np

from ._tensor import Tensor, tensor
from .dtypes import as_dtype, int32, int64

raw_ops = None  # set by loom/__init__.py once the registry is read

__all__ = [
    "add", "subtract", "multiply", "divide", "floor_divide", "mod", "power",
    "matmul", "negative", "abs", "exp", "log", "sqrt", "square", "tanh",
    "sigmoid", "relu", "softmax", "sin", "cos", "maximum", "minimum",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_not", "sum", "mean", "max", "min",
    "prod", "argmax", "argmin", "reshape", "transpose", "cast", "concatenate",
    "stack", "zeros", "ones", "zeros_like", "ones_like", "arange", "where",
]


def _is_int(x):
    dtype = x.dtype.numpy if isinstance(x, Tensor) else np.asarray(x).dtype
    return dtype is not None and dtype.kind in "iub"


def add(x, y): return raw_ops.AddV2(x, y)
def subtract(x, y): return raw_ops.Sub(x, y)
def multiply(x, y): return raw_ops.Mul(x, y)
def floor_divide(x, y): return raw_ops.FloorDiv(x, y)
def mod(x, y): return raw_ops.FloorMod(x, y)
def power(x, y): return raw_ops.Pow(x, y)
def maximum(x, y): return raw_ops.Maximum(x, y)
def minimum(x, y): return raw_ops.Minimum(x, y)
def equal(x, y): return raw_ops.Equal(x, y)
def not_equal(x, y): return raw_ops.NotEqual(x, y)
def less(x, y): return raw_ops.Less(x, y)
def less_equal(x, y): return raw_ops.LessEqual(x, y)
def greater(x, y): return raw_ops.Greater(x, y)
def greater_equal(x, y): return raw_ops.GreaterEqual(x, y)
def logical_and(x, y): return raw_ops.LogicalAnd(x, y)
def logical_or(x, y): return raw_ops.LogicalOr(x, y)
def logical_not(x): return raw_ops.LogicalNot(x)
def negative(x): return raw_ops.Neg(x)
def abs(x): return raw_ops.Abs(x)
def exp(x): return raw_ops.Exp(x)
def log(x): return raw_ops.Log(x)
def sqrt(x): return raw_ops.Sqrt(x)
def square(x): return raw_ops.Square(x)
def tanh(x): return raw_ops.Tanh(x)
def sigmoid(x): return raw_ops.Sigmoid(x)
def relu(x): return raw_ops.Relu(x)
def sin(x): return raw_ops.Sin(x)
def cos(x): return raw_ops.Cos(x)


def divide(x, y):
    """True division; integer operands divide as float64 (NumPy's rule)."""
    if _is_int(x) and _is_int(y):
        x, y = cast(tensor(x), "float64"), cast(tensor(y), "float64")
    return raw_ops.RealDiv(x, y)


def matmul(a, b):
    a, b = tensor(a), tensor(b)
    if a.ndim == 2 and b.ndim == 2:
        return raw_ops.MatMul(a, b)
    if a.ndim == 1 or b.ndim == 1:
        squeeze_a, squeeze_b = a.ndim == 1, b.ndim == 1
        if squeeze_a:
            a = reshape(a, (1, -1))
        if squeeze_b:
            b = reshape(b, (-1, 1))
        out = matmul(a, b)
        shape = list(out.shape)
        if squeeze_b:
            shape.pop(-1)
        if squeeze_a:
            shape.pop(-2 if squeeze_b is False else -1)
        return reshape(out, shape)
    return raw_ops.BatchMatMulV2(a, b)


def cast(x, dtype):
    return raw_ops.Cast(x, DstT=as_dtype(dtype))


def softmax(x, axis=-1):
    x = tensor(x)
    if axis in (-1, x.ndim - 1):
        return raw_ops.Softmax(x)
    e = exp(x - max(x, axis=axis, keepdims=True))
    return e / sum(e, axis=axis, keepdims=True)


def _axes(x, axis):
    if axis is None:
        if x.ndim is None:  # a traced value of unknown rank: every axis
            return raw_ops.Range(start=tensor(0, dtype=int32),
                                 limit=raw_ops.Rank(input=x),
                                 delta=tensor(1, dtype=int32))
        return tensor(list(range(x.ndim)), dtype=int32)
    if isinstance(axis, int):
        return tensor(axis, dtype=int32)
    return tensor(list(axis), dtype=int32)


def _reduce(op, x, axis, keepdims):
    x = tensor(x)
    return op(x, _axes(x, axis), keep_dims=bool(keepdims))


def sum(x, axis=None, keepdims=False):
    return _reduce(raw_ops.Sum, x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    return _reduce(raw_ops.Mean, x, axis, keepdims)


def max(x, axis=None, keepdims=False):
    return _reduce(raw_ops.Max, x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return _reduce(raw_ops.Min, x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    return _reduce(raw_ops.Prod, x, axis, keepdims)


def argmax(x, axis=0):
    return raw_ops.ArgMax(x, tensor(axis, dtype=int32), output_type=int64)


def argmin(x, axis=0):
    return raw_ops.ArgMin(x, tensor(axis, dtype=int32), output_type=int64)


def reshape(x, shape):
    if isinstance(shape, int):
        shape = (shape,)
    return raw_ops.Reshape(x, tensor([int(d) for d in shape], dtype=int64))


def transpose(x, axes=None):
    x = tensor(x)
    if axes is None:
        axes = list(reversed(range(x.ndim)))
    return raw_ops.Transpose(x, tensor(list(axes), dtype=int32))


def concatenate(tensors, axis=0):
    return raw_ops.ConcatV2([tensor(t) for t in tensors],
                            tensor(axis, dtype=int32))


def stack(tensors, axis=0):
    return raw_ops.Pack([tensor(t) for t in tensors], axis=axis)


def zeros(shape, dtype="float32"):
    return tensor(np.zeros(shape, dtype=as_dtype(dtype).numpy))


def ones(shape, dtype="float32"):
    return tensor(np.ones(shape, dtype=as_dtype(dtype).numpy))


def zeros_like(x): return raw_ops.ZerosLike(x)
def ones_like(x): return raw_ops.OnesLike(x)


def arange(start, stop=None, step=1, dtype=None):
    if stop is None:
        start, stop = 0, start
    return tensor(np.arange(start, stop, step), dtype=dtype)


def where(condition, x, y):
    return raw_ops.SelectV2(condition, x, y)


def getitem(x, index):
    """x[index] for ints, slices, Ellipsis and None (StridedSlice)."""
    if not isinstance(index, tuple):
        index = (index,)
    begin, end, strides = [], [], []
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0,
             "new_axis_mask": 0, "shrink_axis_mask": 0}
    for i, item in enumerate(index):
        bit = 1 << i
        if item is Ellipsis:
            masks["ellipsis_mask"] |= bit
            item_begin, item_end, step = 0, 0, 1
        elif item is None:
            masks["new_axis_mask"] |= bit
            item_begin, item_end, step = 0, 0, 1
        elif isinstance(item, slice):
            step = 1 if item.step is None else operator.index(item.step)
            if step == 0:
                raise ValueError("slice step cannot be zero")
            item_begin, item_end = item.start, item.stop
            if item_begin is None:
                masks["begin_mask"] |= bit
                item_begin = 0
            if item_end is None:
                masks["end_mask"] |= bit
                item_end = 0
            item_begin, item_end = operator.index(item_begin), \
                operator.index(item_end)
        else:
            try:
                position = operator.index(item)
            except TypeError:
                raise TypeError(
                    "loom tensors take ints, slices, Ellipsis and None as "
                    f"indices, not {type(item).__name__}") from None
            masks["shrink_axis_mask"] |= bit
            item_begin, item_end, step = position, position + 1, 1
        begin.append(item_begin)
        end.append(item_end)
        strides.append(step)
    return raw_ops.StridedSlice(
        x, tensor(begin, dtype=int64), tensor(end, dtype=int64),
        tensor(strides, dtype=int64), **masks)

