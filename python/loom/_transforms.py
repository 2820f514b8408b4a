"""loom.vmap and @loom.function: Loom's vmap and trace handlers as Python
function transformations (jax.vmap / tf.vectorized_map and tf.function)."""

import functools
import inspect
import itertools
import threading
import weakref

import numpy as np

from . import _loom
from .dtypes import as_dtype
from ._tensor import Tensor, tensor

__all__ = ["vmap", "function", "TensorSpec"]

_RANDOMNESS = {"error": 0, "different": 1, "same": 2}
_UNBATCHED = -1          # LOOM_VMAP_UNBATCHED
_BATCH_SIZE_UNKNOWN = -1


def _is_leaf(value):
    return not isinstance(value, (list, tuple, dict))


def _flatten(structure):
    """(leaves, rebuild): the leaves of nested lists, tuples and dicts."""
    if isinstance(structure, dict):
        keys = list(structure)
        parts = [_flatten(structure[k]) for k in keys]
    elif isinstance(structure, (list, tuple)):
        keys = None
        parts = [_flatten(item) for item in structure]
    else:
        return [structure], lambda leaves: leaves[0]
    sizes = [len(leaves) for leaves, _ in parts]
    kind = type(structure)

    def rebuild(leaves):
        items, start = [], 0
        for (_, sub), size in zip(parts, sizes):
            items.append(sub(leaves[start:start + size]))
            start += size
        if keys is not None:
            return dict(zip(keys, items))
        if kind in (list, tuple):
            return kind(items)
        return kind(*items)  # a namedtuple
    return [leaf for leaves, _ in parts for leaf in leaves], rebuild


def _axes_for(axes, structure, what):
    """One axis (int or None) per leaf of `structure`: `axes` is an axis for
    all of them or a structure of axes matching it (JAX's prefix rule)."""
    if axes is None or isinstance(axes, int):
        leaves, _ = _flatten(structure)
        return [axes] * len(leaves)
    if isinstance(axes, dict) and isinstance(structure, dict) and \
            set(axes) == set(structure):
        return [a for k in structure
                for a in _axes_for(axes[k], structure[k], what)]
    if isinstance(axes, (list, tuple)) and \
            isinstance(structure, (list, tuple)) and \
            len(axes) == len(structure):
        return [a for ax, s in zip(axes, structure)
                for a in _axes_for(ax, s, what)]
    raise ValueError(f"vmap {what} {axes!r} does not match the structure "
                     f"of the values, {type(structure).__name__} of "
                     f"{len(structure) if not _is_leaf(structure) else 1}")


def _normalize(axis, rank, what):
    if axis is None:
        return _UNBATCHED
    if not isinstance(axis, int):
        raise TypeError(f"vmap {what} must be ints or None, got "
                        f"{type(axis).__name__}")
    if not -rank <= axis < rank:
        raise ValueError(f"vmap {what} {axis} is out of range for a tensor "
                         f"of rank {rank - (what == 'out_axes')}")
    return axis % rank


def vmap(f, in_axes=0, out_axes=0, randomness="error"):
    """Vectorises `f` over a batch dimension (jax.vmap): `f` is written for
    one example; the returned function takes batched arguments and runs
    each op of `f` once over the whole batch (Loom's vmap handler).

    in_axes: for each positional argument, the batch axis of its tensors
    (an int, negative counting from the end, or None for an argument shared
    by every example); one int or None applies to all. Arguments may be
    (nested) lists, tuples and dicts of tensors. Non-tensor leaves with
    in_axes None are passed as they are.
    out_axes: where the batch axis goes in each output (None: an output
    that does not depend on the batch).
    randomness: "error" (the default), "different" or "same", as JAX's.
    """
    if randomness not in _RANDOMNESS:
        raise ValueError("randomness must be 'error', 'different' or "
                         f"'same', got {randomness!r}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @functools.wraps(f)
    def batched(*args):
        axes = _axes_for(in_axes if not isinstance(in_axes, int) and
                         in_axes is not None else in_axes, args, "in_axes")
        leaves, rebuild = _flatten(args)
        if all(axis is None for axis in axes):
            raise ValueError("vmap needs at least one argument with a batch "
                             "axis (in_axes are all None)")
        handler = _loom.vmap_create(_BATCH_SIZE_UNKNOWN,
                                    _RANDOMNESS[randomness])
        _loom.enter_scope(handler)
        try:
            inner = []
            for leaf, axis in zip(leaves, axes):
                if axis is None and not isinstance(leaf, Tensor):
                    inner.append(leaf)
                    continue
                value = leaf if isinstance(leaf, Tensor) else tensor(leaf)
                axis = _normalize(axis, value.ndim, "in_axes")
                inner.append(_loom.vmap_in(handler, value, axis))
            result = f(*rebuild(inner))
            out_leaves, out_rebuild = _flatten(result)
            out_axes_flat = _axes_for(out_axes, result, "out_axes")
            outs = []
            for leaf, axis in zip(out_leaves, out_axes_flat):
                value = leaf if isinstance(leaf, Tensor) else tensor(leaf)
                axis = _normalize(axis, value.ndim + 1, "out_axes")
                outs.append(_loom.vmap_out(handler, value, axis))
        finally:
            _loom.exit_scope()
        return out_rebuild(outs)

    return batched


class _Signature:
    """The key a traced function is kept under: per tensor leaf its dtype
    and shape, other leaves (Python values, traced as constants) by value."""

    @staticmethod
    def of(leaves):
        key = []
        for leaf in leaves:
            if isinstance(leaf, Tensor):
                key.append(("T", leaf._dtype_enum, leaf.shape))
            else:
                try:
                    hash(leaf)
                except TypeError:
                    raise TypeError(
                        "loom.function arguments must be tensors or "
                        f"hashable Python values, got {type(leaf).__name__}")
                key.append(("V", type(leaf), leaf))
        return tuple(key)


_names = itertools.count()


def _shape_text(shape):
    if shape is None:
        return "<unknown>"
    return "(" + ", ".join("None" if d is None else str(d)
                           for d in shape) + ("," if len(shape) == 1 else "") \
        + ")"


class TensorSpec:
    """The dtype and shape a tensor argument may have (tf.TensorSpec):
    `shape` is a sequence of ints and None (any size), or None (any rank).
    Used as `loom.function(f, input_signature=[TensorSpec(...), ...])`."""

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype="float32", name=None):
        if shape is not None:
            try:
                dims = tuple(shape)
            except TypeError:
                raise TypeError("TensorSpec shape must be a sequence of ints "
                                "and None, or None, got "
                                f"{type(shape).__name__}") from None
            for dim in dims:
                if dim is not None and (not isinstance(dim, (int, np.integer))
                                        or isinstance(dim, bool) or dim < 0):
                    raise ValueError("TensorSpec shape dims must be ints >= 0 "
                                     f"or None, got {dim!r} in {shape!r}")
            shape = tuple(None if d is None else int(d) for d in dims)
        self._shape = shape
        self._dtype = as_dtype(dtype)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"TensorSpec name must be a str, got {name!r}")
        self._name = name

    @classmethod
    def from_tensor(cls, t, name=None):
        return cls(t.shape, t.dtype, name)

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    def is_compatible_with(self, value):
        """Whether a tensor (or spec) `value` matches this spec."""
        if not isinstance(value, (Tensor, TensorSpec)):
            return False
        return value.dtype == self._dtype and \
            _shapes_compatible(self._shape, value.shape)

    def __repr__(self):
        return (f"TensorSpec(shape={_shape_text(self._shape)}, "
                f"dtype={self._dtype!r}, name={self._name!r})")

    def __eq__(self, other):
        if not isinstance(other, TensorSpec):
            return NotImplemented
        return (self._shape, self._dtype, self._name) == \
            (other._shape, other._dtype, other._name)

    def __hash__(self):
        return hash((self._shape, self._dtype, self._name))


def _shapes_compatible(spec_shape, shape):
    if spec_shape is None or shape is None:
        return True
    if len(spec_shape) != len(shape):
        return False
    return all(a is None or b is None or a == b
               for a, b in zip(spec_shape, shape))


class _InputSignature:
    """A fixed input signature: binds a call's arguments to the specs, each
    leaf checked (and converted from a NumPy or Python value)."""

    def __init__(self, f, specs):
        if not isinstance(specs, (list, tuple)):
            raise TypeError("input_signature must be a list or tuple of "
                            "loom.TensorSpec, got "
                            f"{type(specs).__name__}")
        self.specs = tuple(specs)
        self.spec_leaves, _ = _flatten(list(self.specs))
        for leaf in self.spec_leaves:
            if not isinstance(leaf, TensorSpec):
                raise TypeError("input_signature must hold loom.TensorSpec "
                                f"(in lists, tuples, dicts), got {leaf!r}")
        self.name = getattr(f, "__name__", "function")
        try:
            parameters = list(inspect.signature(f).parameters.values())
        except (TypeError, ValueError):
            parameters = []
        kinds = (inspect.Parameter.POSITIONAL_ONLY,
                 inspect.Parameter.POSITIONAL_OR_KEYWORD)
        self.names = [p.name for p in parameters if p.kind in kinds]
        if len(self.names) < len(self.specs) and not any(
                p.kind == inspect.Parameter.VAR_POSITIONAL
                for p in parameters):
            raise TypeError(f"{self.name}() takes {len(self.names)} "
                            "positional arguments, but input_signature has "
                            f"{len(self.specs)} specs")

    def _arg_name(self, i):
        if i < len(self.names):
            return f"argument '{self.names[i]}' (input_signature[{i}])"
        return f"argument {i} (input_signature[{i}])"

    def bind(self, args, kwargs):
        """The call's arguments as the specs' leaves (tensors)."""
        n = len(self.specs)
        values = list(args)
        if len(values) > n:
            raise TypeError(f"{self.name}() takes {n} arguments with its "
                            f"input_signature, got {len(values)}")
        for key, value in kwargs.items():
            if key not in self.names[:n]:
                raise TypeError(f"{self.name}() got an unexpected keyword "
                                f"argument '{key}' (not in its "
                                "input_signature)")
            index = self.names.index(key)
            if index < len(args):
                raise TypeError(f"{self.name}() got multiple values for "
                                f"argument '{key}'")
            values.extend([_MISSING] * (index + 1 - len(values)))
            values[index] = value
        if len(values) < n or any(v is _MISSING for v in values):
            missing = [self.names[i] if i < len(self.names) else str(i)
                       for i in range(n)
                       if i >= len(values) or values[i] is _MISSING]
            raise TypeError(f"{self.name}() is missing arguments "
                            f"{', '.join(repr(m) for m in missing)} of its "
                            "input_signature")
        leaves = []
        for i, (value, spec) in enumerate(zip(values, self.specs)):
            spec_leaves, _ = _flatten(spec)
            value_leaves, _ = _flatten(value)
            if len(spec_leaves) != len(value_leaves) or (
                    isinstance(spec, (list, tuple, dict)) and
                    type(value) is not type(spec)):
                raise TypeError(f"{self.name}(): {self._arg_name(i)} does "
                                f"not match the structure of {spec!r}")
            for value_leaf, leaf_spec in zip(value_leaves, spec_leaves):
                leaves.append(self._check(i, value_leaf, leaf_spec))
        return leaves

    def _check(self, i, value, spec):
        if not isinstance(value, Tensor):
            try:
                array = np.asarray(value)
            except Exception as error:  # noqa: BLE001
                raise TypeError(f"{self.name}(): {self._arg_name(i)} is a "
                                f"{type(value).__name__}, not a tensor of "
                                f"{spec.dtype!r}: {error}") from None
            if array.dtype == object or spec.dtype.numpy is None or \
                    not np.can_cast(array.dtype, spec.dtype.numpy,
                                    "same_kind"):
                raise TypeError(f"{self.name}(): {self._arg_name(i)} "
                                f"({type(value).__name__} of {array.dtype}) "
                                f"cannot be a tensor of {spec.dtype!r}, as "
                                f"the input_signature says")
            value = tensor(array, spec.dtype)
        if value.dtype != spec.dtype:
            raise TypeError(f"{self.name}(): {self._arg_name(i)} has dtype "
                            f"{value.dtype!r}, but the input_signature says "
                            f"{spec.dtype!r}")
        if not _shapes_compatible(spec.shape, value.shape):
            raise ValueError(f"{self.name}(): {self._arg_name(i)} has shape "
                             f"{_shape_text(value.shape)}, not compatible "
                             f"with the input_signature's "
                             f"{_shape_text(spec.shape)}")
        return value


_MISSING = object()


class Function:
    """A Python function traced into a Loom function (tf.function): the
    first call with a new input signature (the dtypes and shapes of the
    tensor arguments, the values of the others) runs the Python code once
    under a trace handler; that call and later ones with the same signature
    call the traced function, whose ops run without Python. A gradient
    tape around a call records the function's ops."""

    def __init__(self, f, input_signature=None):
        functools.update_wrapper(self, f)
        self._python_function = f
        self._input_signature = None if input_signature is None else \
            _InputSignature(f, input_signature)
        self._traces = {}  # signature -> (function name, output rebuild)
        self._lock = threading.Lock()
        base = "".join(c if c.isalnum() else "_"
                       for c in getattr(f, "__name__", "f").lower())
        if not base or not base[0].isalpha():
            base = "f" + base
        self._base = base
        weakref.finalize(self, Function._remove_all, self._traces)

    @staticmethod
    def _remove_all(traces):
        for name, _ in traces.values():
            try:
                _loom.remove_function(name)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass

    def __get__(self, instance, owner):
        if instance is None:
            return self
        return functools.partial(self, instance)

    @property
    def python_function(self):
        return self._python_function

    @property
    def trace_count(self):
        """How many signatures have been traced."""
        return len(self._traces)

    @property
    def input_signature(self):
        """The TensorSpecs every call matches, or None (traced per
        signature)."""
        sig = self._input_signature
        return None if sig is None else sig.specs

    def _trace(self, args, kwargs, leaves, rebuild, specs=None):
        name = f"{self._base}_{next(_names)}"
        trace = _loom.trace_create(name)
        _loom.enter_scope(trace)
        try:
            if specs is None:
                specs = [TensorSpec.from_tensor(leaf)
                         if isinstance(leaf, Tensor) else None
                         for leaf in leaves]
            inner = [_loom.trace_add_parameter(trace, spec.dtype.enum,
                                               spec.shape)
                     if spec is not None else leaf
                     for leaf, spec in zip(leaves, specs)]
            call_args, call_kwargs = rebuild(inner)
            result = self._python_function(*call_args, **call_kwargs)
        finally:
            _loom.exit_scope()
        if result is None:
            out_leaves, out_rebuild = [], lambda leaves: None
        else:
            out_leaves, out_rebuild = _flatten(result)
        for leaf in out_leaves:
            if not isinstance(leaf, Tensor):
                raise TypeError(f"{self.__name__} returned a "
                                f"{type(leaf).__name__}: a loom.function "
                                "returns tensors (or lists, tuples and "
                                "dicts of them)")
        name = _loom.trace_finish(trace, out_leaves)
        return name, out_rebuild

    def _call_with_signature(self, args, kwargs):
        sig = self._input_signature
        leaves = sig.bind(args, kwargs)
        entry = self._traces.get(sig)
        if entry is None:
            with self._lock:
                entry = self._traces.get(sig)
                if entry is None:
                    _, rebuild = _flatten(list(sig.specs))
                    entry = self._trace(
                        (), {}, leaves,
                        lambda inner: (tuple(rebuild(inner)), {}),
                        specs=sig.spec_leaves)
                    self._traces[sig] = entry
        name, out_rebuild = entry
        results = _loom.execute(name, leaves, {})
        return out_rebuild(list(results))

    def __call__(self, *args, **kwargs):
        if self._input_signature is not None:
            return self._call_with_signature(args, kwargs)
        leaves, rebuild = _flatten((args, kwargs))
        leaves = [tensor(leaf) if not isinstance(leaf, Tensor) and
                  hasattr(leaf, "__array__") else leaf for leaf in leaves]
        key = _Signature.of(leaves)
        entry = self._traces.get(key)
        if entry is None:
            with self._lock:
                entry = self._traces.get(key)
                if entry is None:
                    entry = self._trace(args, kwargs, leaves, rebuild)
                    self._traces[key] = entry
        name, out_rebuild = entry
        inputs = [leaf for leaf in leaves if isinstance(leaf, Tensor)]
        results = _loom.execute(name, inputs, {})
        return out_rebuild(list(results))

    def stats(self, *args, **kwargs):
        """How the traced function for these arguments' signature ran:
        {"planned_calls", "plans_built", "nodes"}."""
        if self._input_signature is not None:
            name, _ = self._traces[self._input_signature]
            return _loom.function_stats(name)
        leaves, _ = _flatten((args, kwargs))
        name, _ = self._traces[_Signature.of(leaves)]
        return _loom.function_stats(name)


def function(f=None, input_signature=None):
    """Decorator: traces `f` into a Loom function on its first call per
    input signature and calls the traced function afterwards
    (tf.function). `@loom.function` and `@loom.function()` both work.

    input_signature: a list of loom.TensorSpec (one per positional
    parameter; lists, tuples and dicts of them for structured arguments),
    as tf.function's: `f` is traced once for those dtypes and shapes (None
    dims: any size) and every call must match them — TypeError naming the
    argument for a wrong dtype, structure or arity, ValueError for a shape
    that does not fit. NumPy arrays and Python values are converted to the
    spec's dtype when NumPy casts them within their kind."""
    if f is None:
        return functools.partial(function, input_signature=input_signature)
    return Function(f, input_signature)
