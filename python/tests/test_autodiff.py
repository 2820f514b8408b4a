"""GradientTape, ForwardAccumulator and logging against torch.autograd."""

import numpy as np
import pytest

import loom

torch = pytest.importorskip("torch")


def both(rng, *shape):
    value = rng.standard_normal(shape)
    return loom.tensor(value), torch.tensor(value, requires_grad=True)


def test_gradient_of_a_small_network_matches_torch(rng):
    x, tx = both(rng, 4, 3)
    w, tw = both(rng, 3, 2)
    with loom.GradientTape() as tape:
        tape.watch([x, w])
        y = loom.sum(loom.tanh(loom.relu(x @ w) * 2.0 + 1.0) ** 2.0)
    dx, dw = tape.gradient(y, [x, w])
    ty = torch.sum(torch.tanh(torch.relu(tx @ tw) * 2.0 + 1.0) ** 2.0)
    ty.backward()
    np.testing.assert_allclose(float(y), ty.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(dx), tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(dw), tw.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.exp(x) / m.sum(m.exp(x)),
    lambda m, x: m.sigmoid(x) * x,
    lambda m, x: x[1:, ::2] * 3.0,
    lambda m, x: m.reshape(x, (2, 6)) @ m.reshape(x, (6, 2)),
    lambda m, x: m.mean(m.square(x), 0),
])
def test_gradients_match_torch(fn, rng):
    x, tx = both(rng, 3, 4)

    class L:
        exp, sum, sigmoid = loom.exp, loom.sum, loom.sigmoid
        reshape, mean, square = loom.reshape, loom.mean, loom.square

    class T:
        exp, sum, sigmoid = torch.exp, torch.sum, torch.sigmoid
        reshape, square = torch.reshape, torch.square
        mean = staticmethod(lambda v, axis: torch.mean(v, dim=axis))

    with loom.GradientTape() as tape:
        tape.watch(x)
        y = fn(L, x)
    grad = tape.gradient(y, x)
    fn(T, tx).sum().backward()
    np.testing.assert_allclose(np.asarray(grad), tx.grad.numpy(), rtol=1e-10,
                               atol=1e-12)


def test_persistent_tape_and_structures(rng):
    x = loom.tensor(rng.standard_normal(3))
    with loom.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = loom.sum(y)
    np.testing.assert_allclose(np.asarray(tape.gradient(z, x)),
                               2 * np.asarray(x))
    grads = tape.gradient(z, {"x": x})
    np.testing.assert_allclose(np.asarray(grads["x"]), 2 * np.asarray(x))


def test_second_gradient_of_a_non_persistent_tape_fails():
    x = loom.tensor([1.0])
    with loom.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(loom.FailedPreconditionError):
        tape.gradient(y, x)


def test_unconnected_gradients():
    x, u = loom.tensor([1.0, 2.0]), loom.tensor([3.0])
    with loom.GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        y = loom.sum(x)
    assert tape.gradient(y, [x, u])[1] is None
    zero = tape.gradient(y, u, unconnected_gradients="zero")
    np.testing.assert_array_equal(np.asarray(zero), [0.0])


def test_nested_tapes_give_second_derivatives():
    x = loom.tensor(1.5)
    with loom.GradientTape() as outer:
        outer.watch(x)
        with loom.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    assert float(dy) == pytest.approx(3 * 1.5 ** 2)
    assert float(d2y) == pytest.approx(6 * 1.5)


def test_forward_accumulator_matches_torch_jvp(rng):
    x_value = rng.standard_normal((2, 3))
    v_value = rng.standard_normal((2, 3))
    x = loom.tensor(x_value)
    with loom.ForwardAccumulator(x, loom.tensor(v_value)) as acc:
        y = loom.sin(x) * x
    jvp = acc.jvp(y)
    _, expected = torch.autograd.functional.jvp(
        lambda t: torch.sin(t) * t, torch.tensor(x_value),
        torch.tensor(v_value))
    np.testing.assert_allclose(np.asarray(jvp), expected.numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(y), np.sin(x_value) * x_value)
    # The primal is itself again after the block.
    np.testing.assert_array_equal(np.asarray(x), x_value)


def test_logging_prints_each_op(capfd):
    x = loom.tensor([1.0, 2.0], dtype="float32")
    with loom.logging() as log:
        loom.raw_ops.MatMul(a=loom.reshape(x, (1, 2)),
                            b=loom.reshape(x, (2, 1)))
    err = capfd.readouterr().err
    assert "MatMul(float [1, 2], float [2, 1])" in err
    assert "transpose_b=false" in err
    assert log.count == 3  # two Reshapes and the MatMul


def test_jacobian_matches_torch(rng):
    x_value = rng.standard_normal(3)
    x = loom.tensor(x_value)
    with loom.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = loom.tanh(x) * x[::-1]
    jacobian = tape.jacobian(y, x)
    expected = torch.autograd.functional.jacobian(
        lambda t: torch.tanh(t) * t.flip(0), torch.tensor(x_value))
    assert jacobian.shape == (3, 3)
    np.testing.assert_allclose(np.asarray(jacobian), expected.numpy(),
                               rtol=1e-10, atol=1e-12)


def test_stop_recording_hides_ops_from_the_tape():
    x = loom.tensor([2.0, 3.0])
    with loom.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            constant = x * x
        y = loom.sum(constant * x)
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, x)),
                                  [4.0, 9.0])
