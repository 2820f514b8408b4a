"""@loom.function with input_signature (tf.function's): traced once for
TensorSpecs with None dims, every matching call served by that trace, calls
that do not match rejected naming the argument; static shapes inside a
trace (variable reads, calls of other traced functions); the versioned
function statistics. References: NumPy."""

import numpy as np
import pytest

import loom


def test_tensor_spec_describes_dtype_and_shape():
    spec = loom.TensorSpec([None, 3], loom.float32, name="x")
    assert spec.shape == (None, 3)
    assert spec.dtype == loom.float32
    assert spec.name == "x"
    assert repr(spec) == ("TensorSpec(shape=(None, 3), dtype=loom.float32, "
                          "name='x')")
    assert spec == loom.TensorSpec((None, 3), "float32", "x")
    assert hash(spec) == hash(loom.TensorSpec((None, 3), "float32", "x"))
    assert loom.TensorSpec(None).shape is None
    assert loom.TensorSpec(None).dtype == loom.float32
    assert spec.is_compatible_with(loom.tensor(np.zeros((5, 3), np.float32)))
    assert not spec.is_compatible_with(loom.tensor(np.zeros((5, 4),
                                                            np.float32)))
    assert not spec.is_compatible_with(loom.tensor(np.zeros((5, 3))))
    assert loom.TensorSpec.from_tensor(loom.tensor([1, 2])) == \
        loom.TensorSpec((2,), loom.int64)
    with pytest.raises(ValueError, match=r"TensorSpec shape dims must be "
                       r"ints >= 0 or None, got -2 in \[2, -2\]"):
        loom.TensorSpec([2, -2])
    with pytest.raises(TypeError, match="TensorSpec shape must be a "
                       "sequence of ints and None, or None, got int"):
        loom.TensorSpec(3)


def test_a_signature_with_none_dims_traces_once(rng):
    traces = []

    @loom.function(input_signature=[loom.TensorSpec([None, 3], loom.float32),
                                    loom.TensorSpec([3], loom.float32)])
    def affine(x, b):
        traces.append(x.shape)
        return x * 2.0 + b

    b = rng.standard_normal(3).astype(np.float32)
    for rows in (1, 4, 7):
        x = rng.standard_normal((rows, 3)).astype(np.float32)
        out = affine(loom.tensor(x), loom.tensor(b))
        assert out.shape == (rows, 3)
        np.testing.assert_allclose(np.asarray(out), x * np.float32(2.0) + b,
                                   rtol=1e-6)
    # Keywords bind to the signature's parameters; NumPy arrays convert.
    out = affine(b=b, x=np.ones((2, 3), np.float32))
    np.testing.assert_allclose(np.asarray(out),
                               np.ones((2, 3), np.float32) * 2 + b, rtol=1e-6)
    assert traces == [(None, 3)]
    assert affine.trace_count == 1
    assert affine.input_signature[0] == loom.TensorSpec([None, 3])
    stats = affine.stats()
    assert stats["nodes"] >= 2
    assert stats["planned_calls"] + stats["plans_built"] >= 1


def test_a_call_not_matching_the_signature_names_the_argument():
    @loom.function(input_signature=[loom.TensorSpec([None, 3], loom.float32),
                                    loom.TensorSpec([], loom.int32)])
    def f(x, n):
        return x * loom.cast(n, loom.float32)

    x = loom.tensor(np.ones((2, 3), np.float32))
    n = loom.tensor(np.int32(2))
    np.testing.assert_allclose(np.asarray(f(x, n)), np.full((2, 3), 2.0))
    with pytest.raises(TypeError, match=r"f\(\): argument 'x' "
                       r"\(input_signature\[0\]\) has dtype loom.float64, "
                       r"but the input_signature says loom.float32"):
        f(loom.tensor(np.ones((2, 3))), n)
    with pytest.raises(ValueError, match=r"f\(\): argument 'x' "
                       r"\(input_signature\[0\]\) has shape \(2, 4\), not "
                       r"compatible with the input_signature's \(None, 3\)"):
        f(loom.tensor(np.ones((2, 4), np.float32)), n)
    with pytest.raises(ValueError, match=r"argument 'x' "
                       r"\(input_signature\[0\]\) has shape \(3,\), not "
                       r"compatible"):
        f(loom.tensor(np.ones(3, np.float32)), n)
    with pytest.raises(TypeError, match=r"f\(\): argument 'n' "
                       r"\(input_signature\[1\]\) \(float of float64\) "
                       r"cannot be a tensor of loom.int32"):
        f(x, 2.5)
    with pytest.raises(TypeError, match=r"f\(\) takes 2 arguments with its "
                       r"input_signature, got 3"):
        f(x, n, n)
    with pytest.raises(TypeError, match=r"f\(\) is missing arguments 'n' of "
                       r"its input_signature"):
        f(x)
    with pytest.raises(TypeError, match=r"f\(\) got an unexpected keyword "
                       r"argument 'scale'"):
        f(x, n, scale=2)
    with pytest.raises(TypeError, match=r"f\(\) got multiple values for "
                       r"argument 'x'"):
        f(x, n, x=x)
    assert f.trace_count == 1


def test_structured_signatures_and_bad_signatures():
    @loom.function(input_signature=[[loom.TensorSpec([2]),
                                     loom.TensorSpec([2])]])
    def total(pair):
        return pair[0] + pair[1]

    a = loom.tensor(np.array([1.0, 2.0], np.float32))
    np.testing.assert_allclose(np.asarray(total([a, a])), [2.0, 4.0])
    with pytest.raises(TypeError, match=r"total\(\): argument 'pair' "
                       r"\(input_signature\[0\]\) does not match the "
                       r"structure"):
        total([a])
    with pytest.raises(TypeError, match="input_signature must hold "
                       "loom.TensorSpec"):
        loom.function(lambda x: x, input_signature=[3])
    with pytest.raises(TypeError, match="input_signature must be a list or "
                       "tuple of loom.TensorSpec, got TensorSpec"):
        loom.function(lambda x: x, input_signature=loom.TensorSpec([2]))
    with pytest.raises(TypeError, match=r"takes 1 positional arguments, but "
                       r"input_signature has 2 specs"):
        loom.function(lambda x: x, input_signature=[loom.TensorSpec([2]),
                                                    loom.TensorSpec([2])])


def test_a_variable_read_in_a_function_has_the_variable_shape(rng):
    v_value = rng.standard_normal((3, 4))
    v = loom.Variable(v_value)
    seen = []

    @loom.function
    def project(w):
        read = v.read_value()
        product = read @ w
        seen.append((read.shape, product.shape))
        return product

    w_value = rng.standard_normal((4, 2))
    out = project(loom.tensor(w_value))
    assert seen == [((3, 4), (3, 2))]
    np.testing.assert_allclose(np.asarray(out), v_value @ w_value)


def test_a_nested_function_call_has_the_callee_shapes(rng):
    @loom.function
    def gram(a):
        return a @ loom.transpose(a)

    seen = []

    @loom.function(input_signature=[loom.TensorSpec([2, 3], loom.float64)])
    def outer(x):
        g = gram(x)
        seen.append(g.shape)
        return -g

    x = rng.standard_normal((2, 3))
    out = outer(loom.tensor(x))
    assert seen == [(2, 2)]
    np.testing.assert_allclose(np.asarray(out), -(x @ x.T))


def test_function_stats_report_every_count():
    @loom.function
    def f(x):
        return x * 2.0

    x = loom.tensor([1.0, 2.0])
    for _ in range(3):
        f(x)
    stats = f.stats(x)
    assert set(stats) == {"planned_calls", "plans_built", "planned_nodes",
                          "replays_built", "replay_hits", "frame_calls",
                          "buffers_reused", "buffers_allocated", "nodes"}
    assert stats["plans_built"] == 1
    assert stats["planned_calls"] == 2
