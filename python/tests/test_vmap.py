"""loom.vmap against NumPy loops over the examples, and per-example
gradients against torch.autograd run once per example."""

import numpy as np
import pytest

import loom


def test_vmap_matches_a_numpy_loop(rng):
    xs = rng.standard_normal((5, 3))
    w = rng.standard_normal((4, 3))
    b = rng.standard_normal(4)

    def f(x, w, b):
        return loom.tanh(w @ x + b)

    out = loom.vmap(f, in_axes=(0, None, None))(
        loom.tensor(xs), loom.tensor(w), loom.tensor(b))
    expected = np.stack([np.tanh(w @ x + b) for x in xs])
    assert out.shape == (5, 4)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-12)


def test_in_axes_and_out_axes_move_the_batch_dimension(rng):
    xs = rng.standard_normal((3, 6, 2))      # batch on axis 1
    ys = rng.standard_normal((3, 2, 6))      # batch on axis -1
    out = loom.vmap(lambda x, y: x * y, in_axes=(1, -1), out_axes=1)(
        loom.tensor(xs), loom.tensor(ys))
    expected = np.stack([xs[:, i, :] * ys[:, :, i] for i in range(6)], axis=1)
    assert out.shape == (3, 6, 2)
    np.testing.assert_allclose(np.asarray(out), expected)


def test_structured_arguments_and_results(rng):
    xs = rng.standard_normal((4, 3))
    scale = 2.0

    def f(pair, factor):
        a, b = pair
        return {"sum": loom.sum(a * b) * factor, "diff": (a - b,)}

    out = loom.vmap(f, in_axes=((0, 0), None))(
        (loom.tensor(xs), loom.tensor(xs[::-1].copy())), scale)
    np.testing.assert_allclose(
        np.asarray(out["sum"]),
        np.array([np.sum(x * y) * scale for x, y in zip(xs, xs[::-1])]))
    np.testing.assert_allclose(np.asarray(out["diff"][0]), xs - xs[::-1])


def test_an_unbatched_output_with_out_axes_none(rng):
    xs = rng.standard_normal((4, 3))
    w = loom.tensor(rng.standard_normal(3))
    out, same = loom.vmap(lambda x, w: (x * w, w * 2.0), out_axes=(0, None),
                          in_axes=(0, None))(loom.tensor(xs), w)
    np.testing.assert_allclose(np.asarray(out), xs * np.asarray(w))
    np.testing.assert_allclose(np.asarray(same), np.asarray(w) * 2.0)


def test_nested_vmap_maps_two_axes(rng):
    m = rng.standard_normal((3, 4, 2))
    out = loom.vmap(loom.vmap(lambda v: loom.sum(v * v)))(loom.tensor(m))
    np.testing.assert_allclose(np.asarray(out), np.sum(m * m, axis=2))


def test_per_example_gradients_match_torch(rng):
    torch = pytest.importorskip("torch")
    xs = rng.standard_normal((6, 3))
    ys = rng.standard_normal((6, 2))
    w_value = rng.standard_normal((2, 3))
    w = loom.tensor(w_value)

    def example_grad(x, y):
        with loom.GradientTape() as tape:
            tape.watch(w)
            loss = loom.sum(loom.square(loom.tanh(w @ x) - y))
        return tape.gradient(loss, w)

    grads = loom.vmap(example_grad)(loom.tensor(xs), loom.tensor(ys))
    assert grads.shape == (6, 2, 3)
    for i in range(6):
        tw = torch.tensor(w_value, requires_grad=True)
        loss = torch.sum(torch.square(
            torch.tanh(tw @ torch.tensor(xs[i])) - torch.tensor(ys[i])))
        loss.backward()
        np.testing.assert_allclose(np.asarray(grads)[i], tw.grad.numpy(),
                                   rtol=1e-10)


def test_a_tape_around_vmap_differentiates_the_batch(rng):
    torch = pytest.importorskip("torch")
    xs = rng.standard_normal((5, 3))
    w_value = rng.standard_normal(3)
    w = loom.tensor(w_value)
    with loom.GradientTape() as tape:
        tape.watch(w)
        out = loom.vmap(lambda x: loom.sin(loom.sum(x * w)))(loom.tensor(xs))
        total = loom.sum(out)
    grad = tape.gradient(total, w)
    tw = torch.tensor(w_value, requires_grad=True)
    torch.sum(torch.sin(torch.tensor(xs) @ tw)).backward()
    np.testing.assert_allclose(np.asarray(grad), tw.grad.numpy(), rtol=1e-10)


def test_batch_sizes_that_differ_are_an_error(rng):
    with pytest.raises(loom.InvalidArgumentError) as info:
        loom.vmap(lambda a, b: a + b)(loom.tensor(np.ones((3, 2))),
                                      loom.tensor(np.ones((4, 2))))
    assert info.value.code == 3
    assert "batch size" in info.value.message


def test_axes_that_do_not_fit_are_errors():
    x = loom.tensor(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"vmap in_axes 2 is out of range "
                       r"for a tensor of rank 2"):
        loom.vmap(lambda v: v, in_axes=2)(x)
    with pytest.raises(ValueError, match=r"vmap in_axes \(0, 0\) does not "
                       r"match the structure of the values, tuple of 1"):
        loom.vmap(lambda v: v, in_axes=(0, 0))(x)
    with pytest.raises(ValueError, match="in_axes are all None"):
        loom.vmap(lambda v: v, in_axes=None)(x)
    with pytest.raises(ValueError, match="randomness must be 'error', "
                       "'different' or 'same', got 'x'"):
        loom.vmap(lambda v: v, randomness="x")
    # The scope is left after an error: ops run eagerly again.
    np.testing.assert_allclose(np.asarray(x + x), 2 * np.ones((3, 2)))
