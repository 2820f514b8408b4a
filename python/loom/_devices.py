"""Placement: loom.device scopes (tf.device) and copies between devices."""

from . import _loom
from ._tensor import Tensor, device_scopes

__all__ = ["device", "copy_to"]


class device:
    """Places the ops run in the `with` block (and the tensors loom.tensor
    makes there) on a device of the context, as tf.device does:

        loom.config.set_logical_cpu_devices(2)
        with loom.device("CPU:1"):
            y = x * 2          # y.device ends in "device:CPU:1"

    `name` is full or partial ("CPU:1", "/device:CPU:1", "cpu:1"); a
    device the context does not have is an InvalidArgumentError on entry.
    Scopes are per thread. A GradientTape records the ops of a device scope
    when it is entered inside it."""

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"a device name is a str, got "
                            f"{type(name).__name__}")
        self._name = name
        self._full = None

    def __enter__(self):
        _loom.enter_device_scope(self._name)
        self._full = _loom.device_name(self._name)
        stack = getattr(device_scopes, "stack", None)
        if stack is None:
            stack = device_scopes.stack = []
        stack.append(self._full)
        return self._full

    def __exit__(self, *exc):
        device_scopes.stack.pop()
        _loom.exit_scope()
        return False


def copy_to(value, device):
    """A tensor with `value`'s value on `device` (a device-to-device copy
    shares the buffer)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"copy_to takes a loom.Tensor, got "
                        f"{type(value).__name__}")
    return _loom.copy_to(value, device)
