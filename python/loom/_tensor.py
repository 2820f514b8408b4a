"""loom.Tensor and loom.tensor()."""

import threading

import numpy as np

from . import _loom
from .dtypes import BY_ENUM, as_dtype

__all__ = ["Tensor", "tensor", "from_dlpack"]

# Types tensor() converts by reading their value (loom.Variable, set by
# loom/_variables.py).
VARIABLE_TYPES = ()

# This thread's loom.device scopes (their full device names), innermost
# last; loom/_devices.py pushes and pops them.
device_scopes = threading.local()


def current_device():
    """The device of the innermost loom.device scope of this thread, or
    None."""
    stack = getattr(device_scopes, "stack", None)
    return stack[-1] if stack else None


class Tensor(_loom.TensorBase):
    """An immutable tensor on a Loom device (a reference-counted handle).

    `numpy.asarray(t)` views a host tensor's memory without copying it
    (read-only: Loom tensors never change once made).
    """

    __slots__ = ()
    # NumPy defers binary operators with a Tensor operand to the Tensor.
    __array_ufunc__ = None
    __hash__ = object.__hash__

    @property
    def dtype(self):
        return BY_ENUM[self._dtype_enum]

    @property
    def ndim(self):
        """The rank; None when unknown (a traced value)."""
        shape = self.shape
        return None if shape is None else len(shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def numpy(self):
        """A read-only NumPy array sharing the tensor's memory."""
        return np.asarray(self)

    def __array__(self, dtype=None):
        array = np.asarray(memoryview(self))
        return array if dtype is None else array.astype(dtype, copy=False)

    def item(self):
        return self.numpy().item()

    def tolist(self):
        return self.numpy().tolist()

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        if self.size != 1:
            raise ValueError("the truth value of a tensor with more than one "
                             "element is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.numpy is None or self.dtype.numpy.kind not in "iu":
            raise TypeError("only integer tensors can be used as an index")
        return int(self.item())

    def __repr__(self):
        dtype = self.dtype
        if dtype.numpy is None or _loom.is_parallel_value(self):
            return f"tensor({self._debug_string()})"
        array = self.numpy()
        suffix = ""
        if dtype.name not in ("float32", "int64", "bool"):
            suffix = f", dtype=loom.{dtype.name}"
        if array.size == 0:
            return f"tensor([], size={tuple(array.shape)}{suffix})"
        text = np.array2string(array, separator=", ", prefix="tensor(")
        return f"tensor({text}{suffix})"

    __str__ = __repr__

    # Operators: NumPy's semantics (broadcasting), TensorFlow's kernels.
    # +, - and * are TensorBase's C slots: two tensors go straight to the
    # op (the common case, and the one whose dispatch cost
    # bench/python_tiny_op.py measures); any other operand goes to the
    # NumPy-style function (loom/__init__.py: _loom.set_operators), which
    # converts it.
    def __truediv__(self, other): return _ops.divide(self, other)
    def __rtruediv__(self, other): return _ops.divide(other, self)
    def __floordiv__(self, other): return _ops.floor_divide(self, other)
    def __rfloordiv__(self, other): return _ops.floor_divide(other, self)
    def __mod__(self, other): return _ops.mod(self, other)
    def __pow__(self, other): return _ops.power(self, other)
    def __rpow__(self, other): return _ops.power(other, self)
    def __matmul__(self, other): return _ops.matmul(self, other)
    def __rmatmul__(self, other): return _ops.matmul(other, self)
    def __neg__(self): return _ops.negative(self)
    def __pos__(self): return self
    def __abs__(self): return _ops.abs(self)
    def __invert__(self): return _ops.logical_not(self)
    def __and__(self, other): return _ops.logical_and(self, other)
    def __or__(self, other): return _ops.logical_or(self, other)
    def __eq__(self, other): return _ops.equal(self, other)
    def __ne__(self, other): return _ops.not_equal(self, other)
    def __lt__(self, other): return _ops.less(self, other)
    def __le__(self, other): return _ops.less_equal(self, other)
    def __gt__(self, other): return _ops.greater(self, other)
    def __ge__(self, other): return _ops.greater_equal(self, other)

    def __getitem__(self, index):
        return _ops.getitem(self, index)

    # Methods as NumPy and PyTorch spell them.
    def reshape(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return _ops.reshape(self, shape)

    def sum(self, axis=None, keepdims=False):
        return _ops.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        return _ops.mean(self, axis=axis, keepdims=keepdims)

    def astype(self, dtype):
        return _ops.cast(self, dtype)

    def to(self, device):
        """The value on `device` (a name, or a loom.ParallelHandler: a
        broadcast); see loom.copy_to."""
        from ._devices import copy_to
        return copy_to(self, device)

    @property
    def T(self):
        return _ops.transpose(self)


def tensor(value, dtype=None, device=None):
    """A tensor from a NumPy array, a Python scalar, a (nested) list or a
    tensor. Without `dtype`, the dtype is the one NumPy infers (float64 for
    Python floats, int64 for ints); with it, the values are converted. The
    data is copied. It lives on `device`, else on the device of the
    innermost loom.device scope, else on CPU:0."""
    if isinstance(value, Tensor) and device is None:
        return _on_cpu(value, dtype)  # where it is, as TensorFlow leaves it
    if device is None:
        device = current_device()
    made = _on_cpu(value, dtype)
    return made if device is None else _loom.copy_to(made, device)


def _on_cpu(value, dtype):
    if isinstance(value, VARIABLE_TYPES):
        value = value.read_value()
    if isinstance(value, Tensor):
        if dtype is None or as_dtype(dtype) == value.dtype:
            return value
        return _ops.cast(value, dtype)
    target = None if dtype is None else as_dtype(dtype)
    if target is not None and target.numpy is None:
        raise TypeError(f"loom.tensor() cannot make {target!r} tensors")
    array = np.asarray(value, dtype=None if target is None else target.numpy)
    loom_dtype = as_dtype(array.dtype)
    if not array.flags.c_contiguous:
        array = array.copy(order="C")
    return _loom.from_buffer(array, loom_dtype.enum, array.shape)


def from_dlpack(value):
    """A tensor sharing the memory of `value`, an object with __dlpack__
    (a NumPy array, a PyTorch CPU tensor, ...) or a DLPack capsule. The
    memory must be on the CPU and compact row-major. Loom treats it as
    immutable: do not change it through the other object while loom uses
    it."""
    if hasattr(value, "__dlpack__"):
        device = value.__dlpack_device__() if \
            hasattr(value, "__dlpack_device__") else (1, 0)
        if device[0] != 1:
            raise BufferError(f"loom takes CPU tensors, not DLPack device "
                              f"{device}")
        value = value.__dlpack__()
    return _loom.from_dlpack_capsule(value)


from . import _ops  # noqa: E402  (the operators need Tensor defined first)
