"""Ops against NumPy: raw_ops, the NumPy-style names and the operators."""

import inspect

import numpy as np
import pytest

import loom


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_raw_ops_cover_the_registry():
    assert len(loom.raw_ops.__all__) > 150
    for name in ("MatMul", "AddV2", "StridedSlice", "Conv2D", "Softmax"):
        assert callable(getattr(loom.raw_ops, name))


def test_raw_op_signature_and_docstring_come_from_the_definition():
    matmul = loom.raw_ops.MatMul
    params = inspect.signature(matmul).parameters
    assert list(params)[:2] == ["a", "b"]
    assert params["transpose_b"].kind is inspect.Parameter.KEYWORD_ONLY
    assert "transpose_b: bool = false" in matmul.__doc__
    assert "a: T" in matmul.__doc__


def test_raw_matmul_with_keywords_and_attr_defaults(rng):
    a, b = f32(rng, 2, 3), f32(rng, 4, 3)
    out = loom.raw_ops.MatMul(a=loom.tensor(a), b=loom.tensor(b),
                              transpose_b=True)
    np.testing.assert_allclose(np.asarray(out), a @ b.T, rtol=1e-5)
    with pytest.raises(loom.InvalidArgumentError):
        loom.raw_ops.MatMul(a=loom.tensor(a), b=loom.tensor(b))


def test_raw_op_with_list_input_and_multiple_outputs(rng):
    x = f32(rng, 6, 2)
    parts = loom.raw_ops.Split(split_dim=loom.tensor(0, dtype="int32"),
                               value=loom.tensor(x), num_split=3)
    assert len(parts) == 3
    np.testing.assert_array_equal(np.asarray(parts[2]), x[4:])
    joined = loom.raw_ops.ConcatV2(values=parts,
                                   axis=loom.tensor(0, dtype="int32"))
    np.testing.assert_array_equal(np.asarray(joined), x)


def test_raw_op_argument_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        loom.raw_ops.AddV2(x=loom.tensor(1.0), y=loom.tensor(2.0), c=1)
    with pytest.raises(TypeError, match="missing"):
        loom.raw_ops.AddV2(x=loom.tensor(1.0))


@pytest.mark.parametrize("name, reference", [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
    ("divide", np.divide), ("maximum", np.maximum), ("minimum", np.minimum),
])
def test_binary_functions_broadcast_like_numpy(name, reference, rng):
    x, y = f32(rng, 3, 1, 4), f32(rng, 5, 1) + 3
    out = getattr(loom, name)(loom.tensor(x), loom.tensor(y))
    np.testing.assert_allclose(np.asarray(out), reference(x, y), rtol=1e-6)


@pytest.mark.parametrize("name, reference", [
    ("exp", np.exp), ("tanh", np.tanh), ("negative", np.negative),
    ("abs", np.abs), ("square", np.square),
    ("relu", lambda v: np.maximum(v, 0)),
    ("sigmoid", lambda v: 1 / (1 + np.exp(-v))),
])
def test_unary_functions(name, reference, rng):
    x = f32(rng, 4, 5)
    out = getattr(loom, name)(loom.tensor(x))
    np.testing.assert_allclose(np.asarray(out), reference(x), rtol=1e-5,
                               atol=1e-6)


def test_log_and_sqrt(rng):
    x = np.abs(f32(rng, 7)) + 0.1
    np.testing.assert_allclose(np.asarray(loom.log(loom.tensor(x))),
                               np.log(x), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(loom.sqrt(loom.tensor(x))),
                               np.sqrt(x), rtol=1e-6)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(axis, keepdims, rng):
    x = f32(rng, 2, 3, 4)
    t = loom.tensor(x)
    for name in ("sum", "mean", "max", "min"):
        out = getattr(loom, name)(t, axis=axis, keepdims=keepdims)
        ref = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5,
                                   err_msg=name)


def test_matmul_reshape_transpose(rng):
    a, b = f32(rng, 3, 4), f32(rng, 4, 5)
    np.testing.assert_allclose(np.asarray(loom.matmul(a, b)), a @ b,
                               rtol=1e-5)
    batch_a, batch_b = f32(rng, 2, 3, 4), f32(rng, 2, 4, 2)
    np.testing.assert_allclose(
        np.asarray(loom.tensor(batch_a) @ loom.tensor(batch_b)),
        batch_a @ batch_b, rtol=1e-5)
    v = f32(rng, 4)
    np.testing.assert_allclose(np.asarray(loom.tensor(a) @ loom.tensor(v)),
                               a @ v, rtol=1e-5)
    t = loom.tensor(a)
    assert loom.reshape(t, (2, 6)).shape == (2, 6)
    assert t.reshape(-1).shape == (12,)
    np.testing.assert_array_equal(np.asarray(t.T), a.T)
    np.testing.assert_array_equal(
        np.asarray(loom.transpose(loom.tensor(batch_a), (1, 0, 2))),
        batch_a.transpose(1, 0, 2))


def test_operators(rng):
    x, y = f32(rng, 3, 4), np.abs(f32(rng, 4)) + 0.5
    tx, ty = loom.tensor(x), loom.tensor(y)
    cases = [
        (tx + ty, x + y), (tx - ty, x - y), (tx * ty, x * y),
        (tx / ty, x / y), (-tx, -x), (ty ** 2.0, y ** 2),
        (tx + 1, x + 1), (2 * tx, 2 * x), (1 - tx, 1 - x), (1 / ty, 1 / y),
        (x + ty, x + y),
    ]
    for got, want in cases:
        assert got.dtype == loom.float32
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(tx == tx), np.ones((3, 4), bool))
    np.testing.assert_array_equal(np.asarray(tx < ty), x < y)
    np.testing.assert_array_equal(np.asarray(tx >= ty), x >= y)


def test_integer_division_is_true_division():
    out = loom.tensor([1, 2, 3]) / 2
    assert out.dtype == loom.float64
    np.testing.assert_array_equal(np.asarray(out), [0.5, 1.0, 1.5])
    np.testing.assert_array_equal(np.asarray(loom.tensor([7, -7]) // 2),
                                  [3, -4])


@pytest.mark.parametrize("index", [
    0, -1, 2, slice(1, 3), slice(None, None, 2), slice(None, None, -1),
    (1, 2), (slice(None), 1), (Ellipsis, 0), (None, 1), (slice(1, None), -2),
    (0, slice(None), None),
])
def test_indexing_matches_numpy(index):
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    got = loom.tensor(x)[index]
    np.testing.assert_array_equal(np.asarray(got), x[index])
    assert got.shape == x[index].shape


def test_cast_and_python_conversions():
    t = loom.tensor([1.7, -2.2])
    np.testing.assert_array_equal(np.asarray(loom.cast(t, "int32")), [1, -2])
    assert float(loom.sum(t)) == pytest.approx(-0.5)
    assert int(loom.tensor(3)) == 3
    assert len(t) == 2 and [float(v) for v in t] == [1.7, -2.2]
    assert t.tolist() == [1.7, -2.2]


def test_python_threads_run_ops_at_once():
    import threading
    errors = []

    def work():
        try:
            for _ in range(200):
                t = loom.tensor(np.ones(100))
                assert float(loom.sum(t + t)) == 200.0
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
