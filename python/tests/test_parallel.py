"""The parallel handler from Python (loom.ParallelHandler): pack and
unpack, ops per component, a CPU tensor broadcast, the gradient of a
broadcast summed back over the components, CollectiveReduceV2 between the
components, and the errors. References from NumPy."""

import re

import numpy as np
import pytest

import loom

CPU = "/job:localhost/replica:0/task:0/device:CPU:"


@pytest.fixture(scope="module")
def p():
    loom.config.set_logical_cpu_devices(3)
    return loom.ParallelHandler(["CPU:0", "CPU:1"])


def _assert_error(raised, cls, code, message):
    assert type(raised.value) is cls
    assert raised.value.code == code
    assert raised.value.message == message


def test_pack_and_unpack_round_trip(p, rng):
    a0 = rng.standard_normal((2, 3)).astype(np.float32)
    a1 = rng.standard_normal((2, 3)).astype(np.float32)
    x = p.pack([loom.tensor(a0), loom.tensor(a1)])
    assert re.fullmatch(r"/job:localhost/replica:0/task:0/device:PARALLEL:\d+",
                        p.name)
    assert p.devices == [CPU + "0", CPU + "1"]
    assert p.num_components == 2
    assert x.device == p.name
    assert p.is_parallel_value(x)
    assert x.shape == (2, 3) and x.dtype == loom.float32
    assert "ParallelValue(" in repr(x)
    x0, x1 = p.unpack(x)
    assert (x0.device, x1.device) == (CPU + "0", CPU + "1")
    np.testing.assert_array_equal(x0.numpy(), a0)
    np.testing.assert_array_equal(x1.numpy(), a1)


def test_ops_run_per_component_with_a_broadcast(p, rng):
    a0, a1, c = (rng.standard_normal((3, 3)) for _ in range(3))
    x = p.pack([loom.tensor(a0), loom.tensor(a1)])
    w = loom.tensor(c)  # on the CPU: broadcast to every component
    with p:
        y = loom.tanh(x @ w) * w + 1.0
        s = loom.sum(y, axis=0)
    assert y.device == p.name and s.device == p.name
    for k, a in enumerate((a0, a1)):
        expected = np.tanh(a @ c) * c + 1.0
        np.testing.assert_allclose(p.unpack(y)[k].numpy(), expected,
                                   rtol=1e-12)
        np.testing.assert_allclose(p.unpack(s)[k].numpy(),
                                   expected.sum(axis=0), rtol=1e-12)
    # An op with a parallel input runs on the handler outside its scope.
    z = x * x
    assert z.device == p.name
    np.testing.assert_array_equal(p.unpack(z)[1].numpy(), a1 * a1)


def test_broadcast_copy_and_copy_off(p):
    c = np.array([0.5, -1.0, 2.0])
    b = loom.tensor(c).to(p)
    assert b.device == p.name
    for part in p.unpack(b):
        np.testing.assert_array_equal(part.numpy(), c)
    # Every component holds the same value: it copies off.
    np.testing.assert_array_equal(b.numpy(), c)


def test_collective_reduce_between_components(p, rng):
    a0 = rng.standard_normal(5).astype(np.float32)
    a1 = rng.standard_normal(5).astype(np.float32)
    x = p.pack([loom.tensor(a0), loom.tensor(a1)])
    cases = [("Add", "Id", a0 + a1), ("Add", "Div", (a0 + a1) / 2),
             ("Max", "Id", np.maximum(a0, a1)),
             ("Min", "Id", np.minimum(a0, a1))]
    with p:
        for key, (merge, final, expected) in enumerate(cases):
            y = loom.raw_ops.CollectiveReduceV2(
                input=x, group_size=2, group_key=7, instance_key=key + 1,
                ordering_token=[], merge_op=merge, final_op=final,
                timeout_seconds=10.0)
            for part in p.unpack(y):
                np.testing.assert_allclose(part.numpy(), expected,
                                           rtol=1e-6)
    # Every component holds the sum: it copies off.
    np.testing.assert_allclose(y.numpy(), np.minimum(a0, a1))


def test_gradient_of_a_broadcast_is_summed_back(p):
    # The design's example: a tape watching a CPU value; inside the
    # parallel scope a = 2 is broadcast, b = fill([], 3) is per component;
    # c = a * b; the gradient of unpack(c)[0].
    a = loom.tensor(2.0, dtype=loom.float32)
    with p:
        with loom.GradientTape() as tape:
            tape.watch(a)
            b = loom.raw_ops.Fill(dims=loom.tensor([], dtype=loom.int32),
                                  value=loom.tensor(3.0, dtype=loom.float32))
            tape.watch(b)
            c = a * b
            c0, c1 = p.unpack(c)
    a_grad, b_grad = tape.gradient(c0, [a, b])
    dc = np.array([1.0, 0.0], np.float32)   # d c0 / d c_k
    b_parts = np.array([3.0, 3.0], np.float32)
    assert a_grad.device == CPU + "0"
    np.testing.assert_allclose(a_grad.numpy(), np.sum(dc * b_parts))
    assert b_grad.device == p.name
    np.testing.assert_allclose([g.numpy() for g in p.unpack(b_grad)],
                               dc * np.float32(2.0))


def test_tape_outside_the_parallel_scope_records_its_ops(p, rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal(3)
    b0, b1 = rng.standard_normal(3), rng.standard_normal(3)
    x = loom.tensor(a)
    b = p.pack([loom.tensor(b0), loom.tensor(b1)])
    with loom.GradientTape() as tape:
        tape.watch([x, b])
        with p:
            loss = loom.sum(loom.square(x * b) + loom.sin(b))
            parts = p.unpack(loss)
    dx, db = tape.gradient(parts[1], [x, b])
    assert dx is not None and db is not None
    tx = torch.tensor(a, requires_grad=True)
    tb0 = torch.tensor(b0, requires_grad=True)
    tb1 = torch.tensor(b1, requires_grad=True)
    torch.sum((tx * tb1) ** 2 + torch.sin(tb1)).backward()
    np.testing.assert_allclose(dx.numpy(), tx.grad.numpy(), rtol=1e-10)
    db0, db1 = p.unpack(db)
    assert tb0.grad is None
    np.testing.assert_array_equal(db0.numpy(), np.zeros(3))
    np.testing.assert_allclose(db1.numpy(), tb1.grad.numpy(), rtol=1e-10)


def test_gradient_through_pack_and_unpack(p, rng):
    a = rng.standard_normal(3)
    b0, b1 = rng.standard_normal(3), rng.standard_normal(3)
    x = loom.tensor(a)
    b = p.pack([loom.tensor(b0), loom.tensor(b1)])
    with p:
        with loom.GradientTape() as tape:
            tape.watch([x, b])
            loss = loom.sum(loom.square(x * b))
            parts = p.unpack(loss)
    dx, db = tape.gradient(parts[1], [x, b])
    # numpy: d/dx sum((x b1)^2) = 2 x b1^2; d/db1 = 2 x^2 b1, d/db0 = 0
    np.testing.assert_allclose(dx.numpy(), 2 * a * b1**2)
    db0, db1 = p.unpack(db)
    np.testing.assert_array_equal(db0.numpy(), np.zeros(3))
    np.testing.assert_allclose(db1.numpy(), 2 * a**2 * b1)


def test_errors(p):
    x = p.pack([loom.tensor([1.0, 2.0]), loom.tensor([3.0, 4.0])])
    with pytest.raises(loom.InvalidArgumentError) as raised:
        x.numpy()
    _assert_error(raised, loom.InvalidArgumentError, 3,
                  f"CopyOff: cannot copy a parallel value off parallel "
                  f"handler '{p.name}' (2 components): its components "
                  f"differ (components 0 and 1 of the parallel value hold "
                  f"different values); unpack it with loom_parallel_unpack "
                  f"or reduce it first")
    with pytest.raises(loom.InvalidArgumentError) as raised:
        p.pack([loom.tensor([1.0])])
    _assert_error(raised, loom.InvalidArgumentError, 3,
                  f"loom_parallel_pack: 1 values for parallel handler "
                  f"'{p.name}' of 2 components")
    with pytest.raises(loom.InvalidArgumentError) as raised:
        loom.ParallelHandler(["CPU:0", "GPU:0"])
    _assert_error(raised, loom.InvalidArgumentError, 3,
                  "loom_parallel_handler_create: devices[1] 'GPU:0' is not "
                  "a device of the context (add CPU devices with "
                  "loom_context_set_cpu_device_count)")
    with pytest.raises(TypeError) as raised:
        loom.ParallelHandler("CPU:0")
    assert str(raised.value) == "devices is a list of device names"
