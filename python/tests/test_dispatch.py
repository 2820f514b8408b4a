"""The fast path of raw_ops and the operators: the same results, errors
and metadata as the general path (reference: NumPy)."""

import inspect

import numpy as np
import pytest

import loom


def test_raw_ops_keep_their_name_doc_and_signature():
    op = loom.raw_ops.AddV2
    assert isinstance(op, loom._loom.Op)
    assert op.__name__ == "AddV2" and op.op_name == "AddV2"
    assert op.__doc__.startswith("AddV2: the registered op, run eagerly.")
    assert list(inspect.signature(op).parameters) == ["x", "y", "T"]
    assert op.__wrapped__ is op.general


def test_fast_and_general_calls_agree(rng):
    a, b = rng.standard_normal(3), rng.standard_normal(3)
    x, y = loom.tensor(a), loom.tensor(b)
    for _ in range(3):  # the kept op runs again
        np.testing.assert_array_equal(np.asarray(loom.raw_ops.AddV2(x, y)),
                                      a + b)
    np.testing.assert_array_equal(np.asarray(loom.raw_ops.AddV2(x=x, y=y)),
                                  a + b)
    np.testing.assert_array_equal(np.asarray(loom.raw_ops.AddV2(x, 1.0)),
                                  a + 1.0)
    s, idx = loom.raw_ops.Unique(loom.tensor([3, 1, 3]))
    np.testing.assert_array_equal(np.asarray(s), [3, 1])
    np.testing.assert_array_equal(np.asarray(idx), [0, 1, 0])


def test_operators_take_tensors_scalars_and_arrays_on_either_side(rng):
    a = rng.standard_normal((2, 2))
    x = loom.tensor(a)
    np.testing.assert_array_equal(np.asarray(x + x), a + a)
    np.testing.assert_array_equal(np.asarray(x - 1.0), a - 1.0)
    np.testing.assert_array_equal(np.asarray(1.0 - x), 1.0 - a)
    np.testing.assert_array_equal(np.asarray(2.0 * x), 2.0 * a)
    np.testing.assert_array_equal(np.asarray(a * x), a * a)
    with pytest.raises(ValueError, match="could not convert string to "
                       "float: 'text'"):
        x + "text"


def test_fast_path_errors_carry_code_and_message():
    with pytest.raises(loom.InvalidArgumentError) as info:
        loom.raw_ops.AddV2(loom.tensor([1.0, 2.0]),
                           loom.tensor([1.0, 2.0, 3.0]))
    assert info.value.code == 3
    assert info.value.message == \
        "Op 'AddV2': Incompatible shapes: [2] vs. [3]"
    # The op is usable again after the error.
    np.testing.assert_array_equal(
        np.asarray(loom.raw_ops.AddV2(loom.tensor([1.0]),
                                      loom.tensor([2.0]))), [3.0])


def test_the_fast_path_records_on_a_tape():
    x = loom.tensor([1.0, 2.0])
    for _ in range(2):
        with loom.GradientTape() as tape:
            tape.watch(x)
            y = loom.sum(loom.raw_ops.Mul(x, x) + x * x)
        np.testing.assert_array_equal(np.asarray(tape.gradient(y, x)),
                                      [4.0, 8.0])
