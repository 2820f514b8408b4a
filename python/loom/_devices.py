"""Placement: loom.device scopes (tf.device), copies between devices, and
the parallel handler (one op on every component device)."""

from . import _loom
from ._tensor import Tensor, device_scopes

__all__ = ["device", "copy_to", "ParallelHandler"]


class device:
    """Places the ops run in the `with` block (and the tensors loom.tensor
    makes there) on a device of the context, as tf.device does:

        loom.config.set_logical_cpu_devices(2)
        with loom.device("CPU:1"):
            y = x * 2          # y.device ends in "device:CPU:1"

    `name` is full or partial ("CPU:1", "/device:CPU:1", "cpu:1"); a
    device the context does not have is an InvalidArgumentError on entry.
    Scopes are per thread. A GradientTape records the ops of a device scope
    whether it is entered inside the scope or around it (the tape stays on
    top of the device, as TensorFlow's does)."""

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
    shares the buffer; a copy onto a parallel handler broadcasts)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"copy_to takes a loom.Tensor, got "
                        f"{type(value).__name__}")
    if isinstance(device, ParallelHandler):
        device = device.name
    return _loom.copy_to(value, device)


class ParallelHandler:
    """Loom's parallel handler over several devices (loom/parallel.h): a
    tensor on it is a parallel value, one tensor per component device;
    an op in its `with` block, or with a parallel value as input, runs once
    per component, at once, and gives parallel values.

        loom.config.set_logical_cpu_devices(2)
        p = loom.ParallelHandler(["CPU:0", "CPU:1"])
        x = p.pack([x0, x1])
        with p:
            y = loom.tanh(x) * w           # w, on the CPU, is broadcast
        y0, y1 = p.unpack(y)

    A GradientTape, entered inside the block or around it, sees the ops
    un-replicated: a watched CPU tensor is broadcast and its gradient summed
    back over the components. `loom.raw_ops.CollectiveReduceV2` (and the other
    collectives) run between the components of a parallel value.
    The handler stays in the context (with its component threads) until
    the process ends."""

    def __init__(self, devices):
        if isinstance(devices, str):
            raise TypeError("devices is a list of device names")
        self._handler = _loom.parallel_create(list(devices))
        self.name, self.devices = _loom.parallel_info(self._handler)

    @property
    def num_components(self):
        return len(self.devices)

    def __enter__(self):
        _loom.enter_scope(self._handler)
        return self

    def __exit__(self, *exc):
        _loom.exit_scope()
        return False

    def pack(self, tensors):
        """One parallel value of tensors[k] on component k (a tensor on
        another device is copied to its component's)."""
        return _loom.parallel_pack(self._handler, list(tensors))

    def unpack(self, value):
        """The components of a parallel value, tensor k on device k."""
        return _loom.parallel_unpack(self._handler, value)

    def is_parallel_value(self, value):
        return _loom.is_parallel_value(value)

    def __repr__(self):
        return f"ParallelHandler({self.devices!r})"
