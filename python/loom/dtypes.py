"""Element types: loom.float32, loom.int64, ... (values equal TF_DataType)."""

import builtins

import numpy as np

from . import _loom

__all__ = ["DType", "as_dtype"]


class DType:
    """A Loom element type. Compares equal to the NumPy dtype it maps to."""

    __slots__ = ("enum", "name", "numpy")

    def __init__(self, enum, name, numpy):
        self.enum = enum
        self.name = name
        self.numpy = None if numpy is None else np.dtype(numpy)

    def __repr__(self):
        return f"loom.{self.name}"

    def __eq__(self, other):
        try:
            return self.enum == as_dtype(other).enum
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.enum)

    @property
    def is_floating(self):
        return self.numpy is not None and self.numpy.kind == "f" or \
            self.name == "bfloat16"

    @property
    def is_complex(self):
        return self.numpy is not None and self.numpy.kind == "c"


_TABLE = [
    (1, "float32", np.float32), (2, "float64", np.float64),
    (3, "int32", np.int32), (4, "uint8", np.uint8), (5, "int16", np.int16),
    (6, "int8", np.int8), (7, "string", None), (8, "complex64", np.complex64),
    (9, "int64", np.int64), (10, "bool", np.bool_), (14, "bfloat16", None),
    (17, "uint16", np.uint16), (18, "complex128", np.complex128),
    (19, "float16", np.float16), (20, "resource", None), (21, "variant", None),
    (22, "uint32", np.uint32), (23, "uint64", np.uint64),
]

BY_ENUM = {}
_BY_NAME = {}
_BY_NUMPY = {}
for _enum, _name, _np in _TABLE:
    _d = DType(_enum, _name, _np)
    BY_ENUM[_enum] = _d
    _BY_NAME[_name] = _d
    _BY_NAME[_loom.dtype_name(_enum)] = _d  # TensorFlow's "float", "double"
    if _d.numpy is not None:
        _BY_NUMPY[_d.numpy] = _d
    globals()[_name] = _d
    __all__.append(_name)
_BY_NAME["half"] = _BY_NAME["float16"]


def as_dtype(value):
    """A DType from a DType, a NumPy dtype or type, a name or an enum value."""
    if isinstance(value, DType):
        return value
    if isinstance(value, int) and not isinstance(value, builtins.bool):
        if value in BY_ENUM:
            return BY_ENUM[value]
        raise TypeError(f"no loom dtype has the value {value}")
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    try:
        np_dtype = np.dtype(value)
    except Exception:
        raise TypeError(f"cannot interpret {value!r} as a loom dtype") from None
    if np_dtype in _BY_NUMPY:
        return _BY_NUMPY[np_dtype]
    raise TypeError(f"loom has no dtype for numpy's {np_dtype}")


def enum_of(dtype):
    return as_dtype(dtype).enum
