"""@loom.function: traced once per input signature, equal to eager, and
differentiable under a GradientTape (reference: the eager run, torch)."""

import gc

import numpy as np
import pytest

import loom


def test_a_traced_function_equals_eager_and_traces_once(rng):
    calls = []

    def mlp(x, w, b):
        calls.append(1)
        return loom.relu(x @ w + b) * 2.0

    traced = loom.function(mlp)
    x = loom.tensor(rng.standard_normal((4, 3)))
    w = loom.tensor(rng.standard_normal((3, 2)))
    b = loom.tensor(rng.standard_normal(2))
    eager = mlp(x, w, b)
    first = traced(x, w, b)
    second = traced(x * 2.0, w, b)
    assert len(calls) == 2          # the eager call and one trace
    assert traced.trace_count == 1
    np.testing.assert_allclose(np.asarray(first), np.asarray(eager))
    np.testing.assert_allclose(np.asarray(second),
                               np.asarray(mlp(x * 2.0, w, b)))


def test_a_new_signature_traces_again():
    traces = []

    @loom.function
    def double(x):
        traces.append((x.dtype, x.shape))
        return x + x

    np.testing.assert_allclose(np.asarray(double(loom.tensor([1.0, 2.0]))),
                               [2.0, 4.0])
    double(loom.tensor([3.0, 4.0]))
    double(loom.tensor([1.0, 2.0, 3.0]))                  # a new shape
    out = double(loom.tensor([1, 2], dtype=loom.int32))   # a new dtype
    assert out.dtype == loom.int32
    np.testing.assert_array_equal(np.asarray(out), [2, 4])
    assert traces == [(loom.float64, (2,)), (loom.float64, (3,)),
                      (loom.int32, (2,))]
    assert double.trace_count == 3


def test_python_values_are_part_of_the_signature():
    @loom.function
    def scale(x, factor, *, offset=0.0):
        return x * factor + offset

    x = loom.tensor([1.0, 2.0])
    np.testing.assert_allclose(np.asarray(scale(x, 3.0)), [3.0, 6.0])
    np.testing.assert_allclose(np.asarray(scale(x, 3.0, offset=1.0)),
                               [4.0, 7.0])
    np.testing.assert_allclose(np.asarray(scale(x, 5.0)), [5.0, 10.0])
    assert scale.trace_count == 3


def test_structured_results_and_captured_tensors(rng):
    w = loom.tensor(rng.standard_normal((3, 3)))

    @loom.function
    def f(x):
        y = x @ w
        return {"y": y, "pair": (loom.sum(y), w)}

    x = loom.tensor(rng.standard_normal((2, 3)))
    out = f(x)
    np.testing.assert_allclose(np.asarray(out["y"]),
                               np.asarray(x) @ np.asarray(w))
    np.testing.assert_allclose(float(out["pair"][0]),
                               np.sum(np.asarray(x) @ np.asarray(w)))
    np.testing.assert_allclose(np.asarray(out["pair"][1]), np.asarray(w))


def test_gradients_flow_through_a_call(rng):
    torch = pytest.importorskip("torch")
    x_value = rng.standard_normal((4, 3))
    w_value = rng.standard_normal((3, 2))

    @loom.function
    def loss(x, w):
        return loom.sum(loom.tanh(x @ w) ** 2.0)

    x, w = loom.tensor(x_value), loom.tensor(w_value)
    loss(x, w)  # traced outside the tape first
    with loom.GradientTape() as tape:
        tape.watch(w)
        y = loss(x, w)
    grad = tape.gradient(y, w)
    tw = torch.tensor(w_value, requires_grad=True)
    ty = torch.sum(torch.tanh(torch.tensor(x_value) @ tw) ** 2.0)
    ty.backward()
    np.testing.assert_allclose(float(y), ty.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(grad), tw.grad.numpy(), rtol=1e-10)


def test_a_method_is_traced_per_instance_argument():
    class Model:
        def __init__(self, scale):
            self.scale = scale

        @loom.function
        def __call__(self, x):
            return x * self.scale

    m = Model(3.0)
    np.testing.assert_allclose(np.asarray(m(loom.tensor([1.0]))), [3.0])


def test_results_that_are_not_tensors_are_a_type_error():
    @loom.function
    def bad(x):
        return [x, "text"]

    with pytest.raises(TypeError, match="bad returned a str: a loom.function "
                       "returns tensors"):
        bad(loom.tensor([1.0]))

    @loom.function
    def takes_two(x, options):
        return x

    with pytest.raises(TypeError, match="must be tensors or hashable Python "
                       "values, got set"):
        takes_two(loom.tensor([1.0]), {1})


def test_errors_in_a_traced_op_propagate():
    @loom.function
    def add(a, b):
        return a + b

    with pytest.raises(loom.InvalidArgumentError) as info:
        add(loom.tensor([1.0, 2.0]), loom.tensor([1.0, 2.0, 3.0]))
    assert info.value.code == 3
    assert "Incompatible shapes: [2] vs. [3]" in info.value.message
    # The trace's scope was left: eager ops work.
    np.testing.assert_allclose(np.asarray(loom.tensor([1.0]) * 2.0), [2.0])


def test_a_dropped_function_leaves_the_library():
    @loom.function
    def f(x):
        return x * 2.0

    f(loom.tensor([1.0]))
    (name, _), = f._traces.values()
    assert loom._loom.function_stats(name)["nodes"] >= 1
    del f
    gc.collect()
    with pytest.raises(loom.NotFoundError):
        loom._loom.function_stats(name)
