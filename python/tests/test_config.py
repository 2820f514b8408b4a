"""loom.config (the eager context's options) and loom.load_library
(TensorFlow custom-op libraries)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import loom


def run_python(code):
    """Runs `code` in a fresh interpreter (the context is made once per
    process); returns its stdout."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_threads_are_set_before_the_context_exists():
    out = run_python("""
        import loom
        assert not loom.config.is_initialized()
        assert loom.config.get_num_threads() == -1
        loom.config.set_num_threads(1)
        x = loom.tensor([1.0, 2.0]) * 2.0
        assert loom.config.is_initialized()
        print(loom.config.get_num_threads(), x.numpy().tolist())
        try:
            loom.config.set_num_threads(3)
        except RuntimeError as error:
            print(error)
    """)
    assert out.splitlines() == [
        "1 [2.0, 4.0]",
        "Loom's context is already initialized: its threads and async mode "
        "cannot be modified after initialization"]


def test_an_async_context_reports_errors_at_async_wait():
    out = run_python("""
        import loom
        loom.config.set_synchronous_execution(False)
        assert not loom.config.get_synchronous_execution()
        a = loom.tensor([1.0, 2.0])
        print((a * 3.0).numpy().tolist())
        loom.config.async_wait()
        print("ok")
    """)
    assert out.splitlines() == ["[3.0, 6.0]", "ok"]


def test_a_thread_switches_to_async_after_initialization():
    loom.tensor([1.0])  # the context exists
    assert loom.config.get_synchronous_execution()
    loom.config.set_synchronous_execution(False)
    try:
        assert not loom.config.get_synchronous_execution()
        y = loom.tensor([1.0, 2.0]) + loom.tensor([3.0, 4.0])
        loom.config.async_wait()
        np.testing.assert_array_equal(np.asarray(y), [4.0, 6.0])
    finally:
        loom.config.set_synchronous_execution(True)
    assert loom.config.get_synchronous_execution()


def test_invalid_thread_counts_are_refused():
    out = run_python("""
        import loom
        try:
            loom.config.set_num_threads(-2)
        except ValueError as error:
            print(error)
    """)
    assert out.strip() == ("num_threads must be -1 (one per core) or >= 0, "
                           "got -2")


def _plugin(name):
    build = os.environ.get("LOOM_BUILD_DIR", os.getcwd())
    path = os.path.join(build, "plugins", f"lib{name}.so")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built")
    return path


def test_load_library_adds_the_librarys_ops():
    lib = loom.load_library(_plugin("showcase_plugin"))
    assert "ShowcaseFill" in loom.raw_ops.__all__
    assert lib.ShowcaseFill is lib.showcase_fill
    filled = lib.showcase_fill(dtype=loom.float32, dims=[2, 3],
                               value=np.float32(1.5))
    np.testing.assert_array_equal(np.asarray(filled),
                                  np.full((2, 3), 1.5, np.float32))
    np.testing.assert_array_equal(
        np.asarray(loom.raw_ops.ShowcaseFill(dims=[1], value=np.float32(2))),
        [2.0])
    assert loom.load_library(_plugin("showcase_plugin")) is lib


def test_load_library_of_a_missing_file_is_not_found():
    with pytest.raises(loom.NotFoundError) as info:
        loom.load_library("/nonexistent/libnothing.so")
    assert info.value.code == 5
    assert "/nonexistent/libnothing.so" in info.value.message
