"""Placement from Python: logical CPU devices (loom.config), device= on
loom.tensor and raw_ops, loom.device scopes, Tensor.to / loom.copy_to and
the errors for devices the context does not have (TensorFlow's words)."""

import re

import numpy as np
import pytest

import loom
from test_config import run_python

CPU = "/job:localhost/replica:0/task:0/device:CPU:"


@pytest.fixture(autouse=True)
def three_cpus():
    loom.config.set_logical_cpu_devices(3)


def _unknown(name):
    devices = ", ".join(loom.config.list_logical_devices())
    return (f"Could not satisfy device specification '{name}'. "
            f"enable_soft_placement=0. Supported device types [CPU]. "
            f"All available devices [{devices}].")


def _assert_error(raised, cls, code, message):
    assert type(raised.value) is cls
    assert raised.value.code == code
    assert raised.value.message == message


def test_logical_cpu_devices_are_listed():
    names = loom.config.list_logical_devices("CPU")
    assert names[:3] == [CPU + "0", CPU + "1", CPU + "2"]
    assert loom.config.list_logical_devices("GPU") == []
    loom.config.set_logical_cpu_devices(2)  # fewer: nothing changes
    assert loom.config.list_logical_devices("CPU")[:3] == names[:3]


def test_logical_cpu_devices_before_the_context_exists():
    out = run_python("""
        import loom
        loom.config.set_logical_cpu_devices(2)
        assert not loom.config.is_initialized()
        x = loom.tensor([1.0, 2.0], device="CPU:1")
        print(x.device)
        print(loom.config.list_logical_devices())
    """)
    assert out.splitlines() == [
        CPU + "1", str([CPU + "0", CPU + "1"])]


def test_a_count_outside_the_range_is_a_value_error():
    with pytest.raises(ValueError) as raised:
        loom.config.set_logical_cpu_devices(0)
    assert str(raised.value) == \
        "the number of CPU devices must be in [1, 1024], got 0"


def test_tensor_on_a_device(rng):
    a = rng.standard_normal((2, 3))
    t = loom.tensor(a, device="CPU:1")
    assert t.device == CPU + "1"
    np.testing.assert_array_equal(t.numpy(), a)
    assert loom.tensor(a).device == CPU + "0"


def test_raw_op_placed_explicitly(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    x, y = loom.tensor(a), loom.tensor(b)
    z = loom.raw_ops.AddV2(x=x, y=y, device="CPU:2")
    assert z.device == CPU + "2"
    np.testing.assert_allclose(z.numpy(), a + b)
    m = loom.raw_ops.MatMul(a=x, b=y, transpose_b=True, device="/device:CPU:1")
    assert m.device == CPU + "1"
    np.testing.assert_allclose(m.numpy(), a @ b.T)


def test_device_scope_places_ops_and_tensors(rng):
    a = rng.standard_normal((3,)).astype(np.float32)
    x = loom.tensor(a)
    with loom.device("CPU:1") as name:
        assert name == CPU + "1"
        y = x * x + loom.exp(x)
        c = loom.tensor(2.0, dtype=loom.float32)
        with loom.device("cpu:2"):
            z = y * c
        w = loom.raw_ops.Neg(x=z)
    assert y.device == CPU + "1"
    assert c.device == CPU + "1"
    assert z.device == CPU + "2"
    assert w.device == CPU + "1"
    assert (x + x).device == CPU + "0"
    expected = a * a + np.exp(a)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(w.numpy(), -(expected * np.float32(2.0)),
                               rtol=1e-6)


def test_tape_inside_a_device_scope(rng):
    a = rng.standard_normal((4,))
    x = loom.tensor(a)
    with loom.device("CPU:1"):
        with loom.GradientTape() as tape:
            tape.watch(x)
            y = loom.sum(loom.sin(x) * x)
    assert y.device == CPU + "1"
    grad = tape.gradient(y, x)
    np.testing.assert_allclose(grad.numpy(), np.cos(a) * a + np.sin(a))


def test_tape_outside_a_device_scope_records_its_ops(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((4,))
    w = rng.standard_normal((4, 3))
    x, wt = loom.tensor(a), loom.tensor(w)
    with loom.GradientTape() as tape:
        tape.watch([x, wt])
        with loom.device("CPU:1"):
            y = loom.sum(loom.tanh(loom.reshape(x, [1, 4]) @ wt) * x[0])
        z = y * 2.0                       # after the scope: back on CPU:0
    assert y.device == CPU + "1"
    assert z.device == CPU + "0"
    dx, dw = tape.gradient(z, [x, wt])
    assert dx is not None and dw is not None
    tx = torch.tensor(a, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    tz = torch.sum(torch.tanh(tx.reshape(1, 4) @ tw) * tx[0]) * 2.0
    tz.backward()
    np.testing.assert_allclose(float(z), tz.item(), rtol=1e-12)
    np.testing.assert_allclose(dx.numpy(), tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(dw.numpy(), tw.grad.numpy(), rtol=1e-10)


def test_nested_device_scopes_inside_a_tape(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((3,))
    x = loom.tensor(a)
    with loom.GradientTape() as tape:
        tape.watch(x)
        with loom.device("CPU:1"):
            u = loom.sin(x)
            with loom.device("CPU:2"):
                v = u * x
        s = loom.sum(v)
    assert (u.device, v.device, s.device) == (CPU + "1", CPU + "2", CPU + "0")
    grad = tape.gradient(s, x)
    tx = torch.tensor(a, requires_grad=True)
    torch.sum(torch.sin(tx) * tx).backward()
    np.testing.assert_allclose(grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_copies_between_devices_share_the_buffer(rng):
    a = rng.standard_normal((2, 2))
    t = loom.tensor(a)
    u = t.to("CPU:2")
    v = loom.copy_to(u, "/job:localhost/replica:0/task:0/device:CPU:1")
    assert (u.device, v.device) == (CPU + "2", CPU + "1")
    assert u._data_ptr == t._data_ptr == v._data_ptr
    np.testing.assert_array_equal(v.numpy(), a)
    assert loom.copy_to(v, "CPU:0").device == CPU + "0"


def test_unknown_devices_fail_with_tensorflows_error():
    x = loom.tensor([1.0, 2.0])
    with pytest.raises(loom.InvalidArgumentError) as raised:
        loom.raw_ops.AddV2(x=x, y=x, device="CPU:7")
    _assert_error(raised, loom.InvalidArgumentError, 3, _unknown("CPU:7"))
    with pytest.raises(loom.InvalidArgumentError) as raised:
        with loom.device("GPU:0"):
            pass
    _assert_error(raised, loom.InvalidArgumentError, 3, _unknown("GPU:0"))
    assert (x + x).device == CPU + "0"  # no scope was left open
    with pytest.raises(loom.InvalidArgumentError) as raised:
        x.to("CPU:9")
    _assert_error(raised, loom.InvalidArgumentError, 3, _unknown("CPU:9"))
    with pytest.raises(loom.InvalidArgumentError) as raised:
        loom.tensor([1.0], device="TPU:0")
    _assert_error(raised, loom.InvalidArgumentError, 3, _unknown("TPU:0"))


def test_malformed_device_names():
    x = loom.tensor([1.0])
    with pytest.raises(loom.InvalidArgumentError) as raised:
        loom.raw_ops.Neg(x=x, device="bogus")
    _assert_error(raised, loom.InvalidArgumentError, 3,
                  "Malformed device specification 'bogus' in eager op: Neg")
    with pytest.raises(TypeError) as raised:
        loom.device(1)
    assert str(raised.value) == "a device name is a str, got int"


@pytest.mark.parametrize("how", ["scope", "device="])
@pytest.mark.parametrize("name", ["CPU:0", "CPU:1", CPU + "0"])
def test_a_tape_records_ops_placed_on_any_device(rng, how, name):
    """The tape's own device named explicitly, by a scope or by an op's
    device=, is a placement like any other: the tape sees the ops."""
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((5,))
    x = loom.tensor(a)
    with loom.GradientTape() as tape:
        tape.watch(x)
        if how == "scope":
            with loom.device(name):
                y = loom.sin(x) * x
        else:
            y = loom.raw_ops.Mul(x=loom.raw_ops.Sin(x=x, device=name), y=x,
                                 device=name)
        s = loom.sum(y)
    assert y.device == loom.config.list_logical_devices()[
        1 if name == "CPU:1" else 0]
    grad = tape.gradient(s, x)
    assert grad is not None
    tx = torch.tensor(a, requires_grad=True)
    torch.sum(torch.sin(tx) * tx).backward()
    np.testing.assert_allclose(grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_a_tape_records_copies_between_devices(rng):
    """A copy made in a tape's scope (.to, loom.copy_to) is recorded: its
    gradient goes back to the source, as TensorFlow's copies do."""
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((4,))
    x = loom.tensor(a)
    with loom.GradientTape() as tape:
        tape.watch(x)
        u = x.to("CPU:1")
        v = loom.copy_to(loom.sin(u), "CPU:2")
        s = loom.sum(v * x)
    assert (u.device, v.device) == (CPU + "1", CPU + "2")
    grad = tape.gradient(s, x)
    tx = torch.tensor(a, requires_grad=True)
    torch.sum(torch.sin(tx) * tx).backward()
    np.testing.assert_allclose(grad.numpy(), tx.grad.numpy(), rtol=1e-12)
