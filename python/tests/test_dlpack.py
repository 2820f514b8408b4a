"""DLPack exchange with NumPy and PyTorch, without copies."""

import gc
import sys

import numpy as np
import pytest

import loom


def test_numpy_reads_a_tensor_through_dlpack():
    t = loom.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert t.__dlpack_device__() == (1, 0)
    array = np.from_dlpack(t)
    assert array.ctypes.data == t._data_ptr
    np.testing.assert_array_equal(array, np.arange(6).reshape(2, 3))


def test_torch_reads_a_tensor_through_dlpack():
    torch = pytest.importorskip("torch")
    t = loom.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = torch.utils.dlpack.from_dlpack(t.__dlpack__())
    assert out.data_ptr() == t._data_ptr
    assert out.dtype == torch.float64
    assert out.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8,
                                   np.int32, np.int64, np.uint8,
                                   np.complex64])
def test_from_numpy_shares_memory(dtype):
    array = np.arange(12).reshape(3, 4).astype(dtype)
    t = loom.from_dlpack(array)
    assert t.dtype == dtype
    assert t._data_ptr == array.ctypes.data
    np.testing.assert_array_equal(np.asarray(t), array)
    if array.dtype.kind != "c":
        np.testing.assert_array_equal(np.asarray(loom.add(t, t)),
                                      array + array)


def test_from_torch_shares_memory_and_keeps_it_alive():
    torch = pytest.importorskip("torch")
    source = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    pointer = source.data_ptr()
    t = loom.from_dlpack(source)
    del source
    gc.collect()
    assert t._data_ptr == pointer
    np.testing.assert_array_equal(np.asarray(t),
                                  np.arange(6, dtype=np.float32).reshape(2, 3))


def test_imported_memory_is_released_with_the_tensor():
    array = np.arange(4.0)
    base = sys.getrefcount(array)
    t = loom.from_dlpack(array)
    assert sys.getrefcount(array) > base
    del t
    gc.collect()
    assert sys.getrefcount(array) == base


def test_capsules_are_consumed_once():
    capsule = np.arange(3.0).__dlpack__()
    loom.from_dlpack(capsule)
    with pytest.raises(ValueError):
        loom.from_dlpack(capsule)


def test_non_contiguous_sources_are_refused():
    with pytest.raises(BufferError, match="compact row-major"):
        loom.from_dlpack(np.arange(12.0).reshape(3, 4).T)


def test_unconsumed_exports_are_freed():
    t = loom.tensor(np.arange(3.0))
    for _ in range(100):
        t.__dlpack__()
    np.testing.assert_array_equal(np.asarray(t), [0.0, 1.0, 2.0])


def test_imported_memory_freed_while_an_op_runs():
    # The op may drop the last reference on a worker thread, whose
    # deallocator then takes the GIL: execute must not hold it meanwhile.
    for _ in range(20):
        out = loom.from_dlpack(np.ones((128, 128))) @ loom.tensor(
            np.ones((128, 128)))
        assert float(out[0, 0]) == 128.0
