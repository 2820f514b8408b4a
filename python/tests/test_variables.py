"""loom.Variable: resource variables read, assigned and differentiated
(reference: NumPy for values, torch.autograd for gradients)."""

import numpy as np
import pytest

import loom


def test_read_and_assign(rng):
    value = rng.standard_normal((2, 3))
    v = loom.Variable(value)
    assert v.dtype == loom.float64 and v.shape == (2, 3)
    np.testing.assert_array_equal(v.numpy(), value)
    before = v.read_value()
    v.assign(value * 2)
    np.testing.assert_array_equal(np.asarray(v), value * 2)
    v.assign_add(np.ones((2, 3)))
    np.testing.assert_array_equal(np.asarray(v), value * 2 + 1)
    v.assign_sub(np.full((2, 3), 0.5))
    np.testing.assert_array_equal(np.asarray(v), value * 2 + 1 - 0.5)
    v += np.ones((2, 3))
    np.testing.assert_array_equal(np.asarray(v), value * 2 + 1 - 0.5 + 1)
    # A value read earlier does not change.
    np.testing.assert_array_equal(np.asarray(before), value)
    assert v.handle.dtype == loom.resource


def test_a_variable_stands_for_its_value_in_ops(rng):
    w = rng.standard_normal((3, 2)).astype(np.float32)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    v = loom.Variable(w)
    np.testing.assert_allclose(np.asarray(loom.tensor(x) @ v), x @ w,
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(v * 2.0 + 1.0), w * 2 + 1)
    np.testing.assert_allclose(np.asarray(loom.relu(v)), np.maximum(w, 0))
    np.testing.assert_allclose(np.asarray(v[1]), w[1])


def test_a_tape_watches_the_variables_it_reads(rng):
    torch = pytest.importorskip("torch")
    w_value = rng.standard_normal((3, 2))
    x_value = rng.standard_normal((4, 3))
    w = loom.Variable(w_value)
    with loom.GradientTape() as tape:
        loss = loom.sum(loom.tanh(loom.tensor(x_value) @ w))
    grad, = tape.gradient(loss, [w])
    tw = torch.tensor(w_value, requires_grad=True)
    torch.sum(torch.tanh(torch.tensor(x_value) @ tw)).backward()
    np.testing.assert_allclose(np.asarray(grad), tw.grad.numpy(), rtol=1e-10)


def test_watch_accessed_variables_false_needs_watch():
    v = loom.Variable([1.0, 2.0])
    with loom.GradientTape(watch_accessed_variables=False) as tape:
        y = loom.sum(v * v)
    assert tape.gradient(y, v) is None
    with loom.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(v)
        y = loom.sum(v * v)
    np.testing.assert_allclose(np.asarray(tape.gradient(y, v)), [2.0, 4.0])


def test_gradient_descent_on_a_variable_converges():
    target = np.array([1.0, -2.0, 3.0])
    v = loom.Variable(np.zeros(3))
    for _ in range(100):
        with loom.GradientTape() as tape:
            loss = loom.sum(loom.square(v - loom.tensor(target)))
        v.assign_sub(tape.gradient(loss, v) * 0.1)
    np.testing.assert_allclose(v.numpy(), target, rtol=1e-6)


def test_a_variable_in_a_traced_function(rng):
    v = loom.Variable(np.array([1.0, 2.0]))

    @loom.function
    def step(x):
        v.assign_add(x)
        return v.read_value() * 2.0

    np.testing.assert_allclose(np.asarray(step(loom.tensor([1.0, 1.0]))),
                               [4.0, 6.0])
    np.testing.assert_allclose(np.asarray(step(loom.tensor([1.0, 1.0]))),
                               [6.0, 8.0])
    np.testing.assert_allclose(v.numpy(), [3.0, 4.0])


def test_assigning_another_shape_is_an_error():
    v = loom.Variable(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match=r"cannot assign a value of shape "
                       r"\(3,\) to a variable of shape \(2, 2\)"):
        v.assign([1.0, 2.0, 3.0])
    assert v.dtype == loom.float32
    v.assign(np.ones((2, 2)))   # converted to the variable's dtype
    assert v.read_value().dtype == loom.float32
