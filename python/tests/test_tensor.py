"""loom.Tensor: construction, dtype inference, NumPy views, repr."""

import numpy as np
import pytest

import loom


@pytest.mark.parametrize("value, dtype", [
    (1.5, np.float64), (3, np.int64), (True, np.bool_),
    ([1.0, 2.0], np.float64), ([[1, 2], [3, 4]], np.int64),
    ([1, 2.5], np.float64),
])
def test_python_values_take_numpys_dtype(value, dtype):
    t = loom.tensor(value)
    assert t.dtype == dtype
    assert t.shape == np.asarray(value).shape
    np.testing.assert_array_equal(np.asarray(t), np.asarray(value))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int16,
                                   np.int32, np.int64, np.uint8, np.uint16,
                                   np.uint32, np.uint64, np.bool_,
                                   np.complex64, np.complex128, np.float16])
def test_numpy_arrays_round_trip(dtype, rng):
    array = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    t = loom.tensor(array)
    assert t.dtype == dtype
    assert t.shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(t), array)


def test_dtype_argument_converts():
    t = loom.tensor([1, 2, 3], dtype=loom.float32)
    assert t.dtype == loom.float32
    assert t.dtype == np.float32
    assert t.dtype == "float32"
    assert np.asarray(t).dtype == np.float32


def test_non_contiguous_arrays_are_copied_in_order():
    array = np.arange(12.0).reshape(3, 4).T
    np.testing.assert_array_equal(np.asarray(loom.tensor(array)), array)


def test_scalar_and_empty_tensors():
    assert loom.tensor(2.0).shape == ()
    assert loom.tensor(2.0).item() == 2.0
    empty = loom.tensor(np.zeros((0, 3), np.float32))
    assert empty.shape == (0, 3)
    assert np.asarray(empty).shape == (0, 3)


def test_numpy_view_shares_the_tensor_memory():
    t = loom.tensor(np.arange(6, dtype=np.float32))
    a = np.asarray(t)
    b = np.asarray(t)
    assert a.ctypes.data == t._data_ptr == b.ctypes.data
    assert not a.flags.writeable
    # The view keeps the tensor alive.
    del t
    np.testing.assert_array_equal(a, np.arange(6, dtype=np.float32))


def test_results_of_ops_are_viewed_without_a_copy():
    y = loom.tensor([1.0, 2.0]) * 2.0
    assert np.asarray(y).ctypes.data == y._data_ptr
    assert np.shares_memory(np.asarray(y), y.numpy())


def test_memoryview_is_read_only():
    view = memoryview(loom.tensor([1, 2, 3], dtype="int32"))
    assert view.readonly and view.format == "i" and view.shape == (3,)
    with pytest.raises(TypeError):
        view[0] = 5


def test_device_is_the_cpu():
    assert loom.tensor(1.0).device.endswith("device:CPU:0")


def test_repr_is_pytorchs():
    assert repr(loom.tensor([1.0, 2.0], dtype="float32")) == "tensor([1., 2.])"
    assert repr(loom.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(loom.tensor([1, 2], dtype="int32")) == \
        "tensor([1, 2], dtype=loom.int32)"
    assert repr(loom.tensor([[1.0, 2.0], [3.0, 4.0]], dtype="float32")) == \
        "tensor([[1., 2.],\n        [3., 4.]])"
    assert repr(loom.tensor(3.5)) == "tensor(3.5, dtype=loom.float64)"


def test_tensors_cannot_be_made_directly():
    with pytest.raises(TypeError):
        loom.Tensor()


def test_unsupported_values_are_type_errors():
    with pytest.raises(TypeError):
        loom.tensor(["a", object()])
