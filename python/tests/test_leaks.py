"""Tensors, ops and tapes give back what they take."""

import gc
import sys
import tracemalloc

import numpy as np

import loom


def _traced_growth(step, warmup=50, rounds=2000):
    for _ in range(warmup):
        step()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(rounds):
        step()
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    stats = after.compare_to(before, "filename")
    return sum(s.size_diff for s in stats if s.size_diff > 0)


def test_creating_and_computing_does_not_grow_python_memory():
    array = np.ones((8, 8), np.float32)

    def step():
        t = loom.tensor(array)
        y = loom.sum(t * 2.0 + t, axis=0)
        np.asarray(y)[0]
        repr(y)

    assert _traced_growth(step) < 64 * 1024


def test_errors_do_not_leak():
    a, b = loom.tensor([1.0, 2.0]), loom.tensor([1.0, 2.0, 3.0])

    def step():
        try:
            a + b
        except loom.InvalidArgumentError:
            pass

    assert _traced_growth(step) < 64 * 1024


def test_tapes_do_not_leak():
    x = loom.tensor([1.0, 2.0])

    def step():
        with loom.GradientTape() as tape:
            tape.watch(x)
            y = loom.sum(x * x)
        tape.gradient(y, x)

    assert _traced_growth(step, rounds=500) < 64 * 1024


def test_reference_counts_are_balanced():
    array = np.arange(4.0)
    t = loom.tensor(array)
    base_array, base_tensor = sys.getrefcount(array), sys.getrefcount(t)
    for _ in range(100):
        loom.tensor(array)
        np.asarray(t)
        t + 1.0
        t[1:]
    assert sys.getrefcount(array) == base_array
    assert sys.getrefcount(t) == base_tensor


def test_numpy_views_release_the_tensor():
    import weakref  # noqa: F401  (Tensor has no weakref slot; use refcount)
    t = loom.tensor(np.arange(4.0))
    base = sys.getrefcount(t)
    views = [np.asarray(t) for _ in range(10)]
    assert sys.getrefcount(t) > base
    del views
    gc.collect()
    assert sys.getrefcount(t) == base


def test_vmap_functions_and_variables_do_not_leak():
    xs = loom.tensor(np.ones((4, 3)))
    w = loom.tensor(np.ones(3))
    v = loom.Variable(np.zeros(3))

    @loom.function
    def traced(x):
        return loom.tanh(x * 2.0)

    def step():
        loom.vmap(lambda x: loom.sum(x * w))(xs)
        traced(w)
        with loom.GradientTape() as tape:
            y = loom.sum(v * v)
        v.assign_add(tape.gradient(y, v))
        loom.Variable(np.ones(3)).read_value()
        loom.raw_ops.AddV2(w, w)
        loom.raw_ops.AddV2(x=w, y=w)

    assert _traced_growth(step, rounds=500) < 64 * 1024


def test_a_function_traced_and_dropped_is_collected():
    import weakref

    class Model:
        @loom.function
        def __call__(self, x):
            return x * 2.0

    def make():
        f = loom.function(lambda x: x + 1.0)
        f(loom.tensor([1.0]))
        return weakref.ref(f)

    ref = make()
    gc.collect()
    assert ref() is None
    Model()(loom.tensor([1.0]))


def test_device_scopes_and_parallel_values_do_not_leak():
    loom.config.set_logical_cpu_devices(2)
    p = loom.ParallelHandler(["CPU:0", "CPU:1"])
    x = loom.tensor([1.0, 2.0])

    def step():
        with loom.device("CPU:1"):
            y = x * x + 1.0
        v = p.pack([x, y.to("CPU:0")])
        with p:
            with loom.GradientTape() as tape:
                tape.watch(x)
                parts = p.unpack(loom.sum(v * x))
        tape.gradient(parts[1], x)
        gc.collect()

    assert _traced_growth(step, rounds=300) < 64 * 1024
