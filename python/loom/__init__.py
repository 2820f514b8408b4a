"""Loom: a tensor runtime with TensorFlow's C API, from Python.

    import loom
    x = loom.tensor([1.0, 2.0, 3.0])
    with loom.GradientTape() as tape:
        tape.watch(x)
        y = loom.sum(x * x)
    tape.gradient(y, x)            # tensor([2., 4., 6.], dtype=loom.float64)
    loom.raw_ops.MatMul(a=m, b=m, transpose_b=True)
"""

import sys as _sys

from . import _loom
from . import errors
from .errors import *  # noqa: F401,F403
from .dtypes import *  # noqa: F401,F403
from .dtypes import DType, as_dtype
from ._tensor import Tensor, from_dlpack, tensor
from . import _ops
from ._ops import *  # noqa: F401,F403
from ._variables import Variable
from ._autodiff import ForwardAccumulator, GradientTape, logging
from ._transforms import Function, TensorSpec, function, vmap
from ._devices import ParallelHandler, copy_to, device
from ._python_handler import PythonHandler
from . import _raw_ops
from . import config
from ._library import load_library

_loom.set_classes(Tensor, errors.CLASSES)
_loom.set_operators(_ops.add, _ops.subtract, _ops.multiply)

raw_ops = _raw_ops.build_module()
_sys.modules[__name__ + ".raw_ops"] = raw_ops
_ops.raw_ops = raw_ops

__version__ = "0.1.0"
