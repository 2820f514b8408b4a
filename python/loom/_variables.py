"""loom.Variable: a resource variable (tf.Variable) over the registered
resource ops VarHandleOp, AssignVariableOp, AssignAddVariableOp,
AssignSubVariableOp and ReadVariableOp."""

import numpy as np

from . import _ops, _tensor
from ._tensor import tensor

__all__ = ["Variable"]


class Variable:
    """A mutable tensor: a resource handle to a value that assign,
    assign_add and assign_sub replace. Reading it (`read_value()`, or using
    it where a tensor is expected) gives the value at that moment; a value
    read earlier never changes. A GradientTape watches the variables read
    in its block (unless made with watch_accessed_variables=False) and
    gives their gradients: `tape.gradient(loss, [v])`."""

    def __init__(self, initial_value, dtype=None, trainable=True, name=None):
        value = tensor(initial_value, dtype=dtype)
        self._dtype = value.dtype
        self._shape = value.shape
        self.trainable = bool(trainable)
        self.name = name
        # No shared_name: an anonymous variable that lives as long as its
        # handle (TensorFlow's eager variables likewise die with theirs).
        self._handle = _ops.raw_ops.VarHandleOp(dtype=self._dtype,
                                                shape=list(self._shape))
        self.assign(value)

    @property
    def handle(self):
        """The resource tensor (dtype loom.resource) naming the variable."""
        return self._handle

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    @property
    def ndim(self):
        return len(self._shape)

    def read_value(self):
        return _ops.raw_ops.ReadVariableOp(resource=self._handle,
                                           dtype=self._dtype)

    value = read_value

    def _converted(self, value):
        value = tensor(value, dtype=self._dtype)
        if value.shape != self._shape:
            raise ValueError(f"cannot assign a value of shape {value.shape} "
                             f"to a variable of shape {self._shape}")
        return value

    def assign(self, value):
        _ops.raw_ops.AssignVariableOp(resource=self._handle,
                                      value=self._converted(value))
        return self

    def assign_add(self, delta):
        _ops.raw_ops.AssignAddVariableOp(resource=self._handle,
                                         value=self._converted(delta))
        return self

    def assign_sub(self, delta):
        _ops.raw_ops.AssignSubVariableOp(resource=self._handle,
                                         value=self._converted(delta))
        return self

    def numpy(self):
        return self.read_value().numpy()

    def __array__(self, dtype=None):
        array = np.asarray(self.read_value())
        return array if dtype is None else array.astype(dtype, copy=False)

    def __repr__(self):
        name = f" {self.name!r}" if self.name else ""
        return (f"<loom.Variable{name} shape={self._shape} "
                f"dtype={self._dtype!r} value={self.read_value()!r}>")

    # Reads of the value stand for the variable in expressions.
    __array_ufunc__ = None
    __hash__ = object.__hash__

    def __add__(self, other): return self.read_value() + other
    def __radd__(self, other): return other + self.read_value()
    def __sub__(self, other): return self.read_value() - other
    def __rsub__(self, other): return other - self.read_value()
    def __mul__(self, other): return self.read_value() * other
    def __rmul__(self, other): return other * self.read_value()
    def __truediv__(self, other): return self.read_value() / other
    def __rtruediv__(self, other): return other / self.read_value()
    def __pow__(self, other): return self.read_value() ** other
    def __matmul__(self, other): return self.read_value() @ other
    def __rmatmul__(self, other): return other @ self.read_value()
    def __neg__(self): return -self.read_value()
    def __getitem__(self, index): return self.read_value()[index]

    def __iadd__(self, other):
        return self.assign_add(other)

    def __isub__(self, other):
        return self.assign_sub(other)


# loom.tensor(v) (and so every op given a variable) reads its value.
_tensor.VARIABLE_TYPES = (Variable,)
