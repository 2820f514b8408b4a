"""Transformations as context managers: GradientTape, ForwardAccumulator,
logging. Each is a Loom front-end op handler entered as a scope on the
calling thread: the ops run inside the `with` block go through it."""

import contextlib

from . import _loom
from ._tensor import Tensor, tensor
from ._variables import Variable

__all__ = ["GradientTape", "ForwardAccumulator", "logging"]


def _handle(value):
    """A variable stands for its resource handle."""
    return value.handle if isinstance(value, Variable) else value


def _flatten(structure):
    """(flat list of tensors, a function rebuilding the structure)."""
    if isinstance(structure, (Tensor, Variable)):
        return [_handle(structure)], lambda flat: flat[0]
    if isinstance(structure, dict):
        keys = list(structure)
        return [_handle(structure[k]) for k in keys], \
            lambda flat: dict(zip(keys, flat))
    if isinstance(structure, (list, tuple)):
        kind = type(structure)
        return [_handle(v) for v in structure], lambda flat: kind(flat)
    raise TypeError(f"expected a loom.Tensor or a list, tuple or dict of "
                    f"them, got {type(structure).__name__}")


class GradientTape:
    """Records the ops run in its `with` block on watched tensors, for
    reverse-mode gradients (tf.GradientTape)."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._handler = _loom.tape_create(bool(persistent),
                                          bool(watch_accessed_variables))
        self._persistent = persistent
        self._entered = False

    def __enter__(self):
        _loom.enter_scope(self._handler)
        self._entered = True
        return self

    def __exit__(self, *exc):
        if self._entered:
            self._entered = False
            _loom.exit_scope()
        return False

    def watch(self, tensors):
        flat, _ = _flatten(tensors)
        for t in flat:
            _loom.tape_watch(self._handler, t)

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients="none"):
        """The gradient of the sum of `target` with respect to each source,
        in the sources' structure; None (or zeros with
        unconnected_gradients="zero") for a source `target` does not use."""
        targets, _ = _flatten(target)
        flat_sources, rebuild = _flatten(sources)
        grads = None
        if output_gradients is not None:
            grads, _ = _flatten(output_gradients)
            grads = [g if g is None or isinstance(g, Tensor) else tensor(g)
                     for g in grads]
        if unconnected_gradients not in ("none", "zero"):
            raise ValueError("unconnected_gradients must be 'none' or 'zero'")
        result = _loom.tape_gradient(self._handler, targets, flat_sources,
                                     grads, unconnected_gradients == "zero")
        return rebuild(result)


    def jacobian(self, target, source):
        """d target / d source, shaped target.shape + source.shape (the
        tape must be persistent)."""
        return _loom.tape_jacobian(self._handler, target, source)

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops in this block are not recorded (on this thread)."""
        _loom.tape_recording(self._handler, False)
        try:
            yield
        finally:
            _loom.tape_recording(self._handler, True)


class ForwardAccumulator:
    """Forward-mode autodiff (tf.autodiff.ForwardAccumulator): inside the
    `with` block, `primals` carry `tangents`; `acc.jvp(y)` is y's tangent."""

    def __init__(self, primals, tangents):
        self._primals, _ = _flatten(primals)
        self._tangents, _ = _flatten(tangents)
        if len(self._primals) != len(self._tangents):
            raise ValueError("one tangent per primal")
        self._handler = _loom.forward_create()
        self._saved = []

    def __enter__(self):
        _loom.enter_scope(self._handler)
        try:
            for primal, tangent in zip(self._primals, self._tangents):
                tangent = tensor(tangent, dtype=primal.dtype)
                watched = _loom.forward_watch(self._handler, primal, tangent)
                # The primal object stands for its watched version in the
                # block, as a TensorFlow primal does, and is restored after.
                self._saved.append((primal, _loom.alias(primal)))
                _loom.set_handle(primal, watched)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        for primal, original in self._saved:
            _loom.set_handle(primal, original)
        self._saved = []
        _loom.exit_scope()
        return False

    def jvp(self, tensors, unconnected_gradients="none"):
        flat, rebuild = _flatten(tensors)
        zeros = unconnected_gradients == "zero"
        return rebuild([_loom.forward_jvp(self._handler, t, zeros)
                        for t in flat])


class logging:
    """Prints each op run in the block to stderr, with its inputs and
    attributes (Loom's LOGGING handler); `count` is the number of ops."""

    def __init__(self, print=True):
        self._handler = _loom.logging_create(bool(print))

    def __enter__(self):
        _loom.enter_scope(self._handler)
        return self

    def __exit__(self, *exc):
        _loom.exit_scope()
        return False

    @property
    def count(self):
        return _loom.logging_count(self._handler)
