"""Loom's errors as Python exceptions carrying the status code."""

import pytest

import loom


def test_error_classes_carry_tensorflow_codes():
    assert issubclass(loom.InvalidArgumentError, loom.LoomError)
    assert loom.InvalidArgumentError.code == 3
    assert loom.NotFoundError.code == 5
    assert loom.LoomError("m", 9).code_name == "FAILED_PRECONDITION"


def test_incompatible_shapes_raise_invalid_argument():
    with pytest.raises(loom.InvalidArgumentError) as info:
        loom.tensor([1.0, 2.0]) + loom.tensor([1.0, 2.0, 3.0])
    assert info.value.code == loom.INVALID_ARGUMENT == 3
    assert "Incompatible shapes" in info.value.message
    assert str(info.value).startswith("INVALID_ARGUMENT: ")


def test_unknown_attr_is_invalid_argument():
    with pytest.raises(loom.InvalidArgumentError,
                       match="Attribute 'bogus' does not exist"):
        loom._loom.execute("AddV2", [loom.tensor(1.0), loom.tensor(1.0)],
                           {"bogus": 1})


def test_unknown_op_is_not_found():
    with pytest.raises(loom.NotFoundError) as info:
        loom._loom.execute("NoSuchOp", [], {})
    assert info.value.code == 5
    assert "NoSuchOp" in info.value.message


def test_dtype_mismatch_is_invalid_argument():
    with pytest.raises(loom.InvalidArgumentError):
        loom.raw_ops.AddV2(x=loom.tensor([1.0]),
                           y=loom.tensor([1], dtype="int32"))


def test_errors_leave_the_runtime_usable():
    for _ in range(3):
        with pytest.raises(loom.LoomError):
            loom.matmul(loom.tensor([[1.0]]), loom.tensor([[1.0, 2.0]]).T.T.T)
    assert float(loom.tensor(1.0) + 1.0) == 2.0
