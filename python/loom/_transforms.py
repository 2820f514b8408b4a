"""loom.vmap and @loom.function: Loom's vmap and trace handlers as Python
function transformations (jax.vmap / tf.vectorized_map and tf.function)."""

import functools
import itertools
import threading
import weakref

from . import _loom
from ._tensor import Tensor, tensor

__all__ = ["vmap", "function"]

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


class Function:
    """A Python function traced into a Loom function (tf.function): the
    first call with a new input signature (the dtypes and shapes of the
    tensor arguments, the values of the others) runs the Python code once
    under a trace handler; that call and later ones with the same signature
    call the traced function, whose ops run without Python. A gradient
    tape around a call records the function's ops."""

    def __init__(self, f):
        functools.update_wrapper(self, f)
        self._python_function = f
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

    def _trace(self, args, kwargs, leaves, rebuild):
        name = f"{self._base}_{next(_names)}"
        trace = _loom.trace_create(name)
        _loom.enter_scope(trace)
        try:
            inner = [_loom.trace_add_parameter(trace, leaf._dtype_enum,
                                               leaf.shape)
                     if isinstance(leaf, Tensor) else leaf
                     for leaf in leaves]
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

    def __call__(self, *args, **kwargs):
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
        leaves, _ = _flatten((args, kwargs))
        name, _ = self._traces[_Signature.of(leaves)]
        return _loom.function_stats(name)


def function(f=None):
    """Decorator: traces `f` into a Loom function on its first call per
    input signature and calls the traced function afterwards
    (tf.function). `@loom.function` and `@loom.function()` both work."""
    if f is None:
        return function
    return Function(f)
