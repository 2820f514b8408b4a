"""Handlers written in Python (loom.PythonHandler) alone and in a stack
with Loom's own: the gradient tape and the logging handler. Values from
NumPy, gradients from PyTorch's autograd."""

import gc
import threading
import weakref

import numpy as np
import pytest
import torch

import loom


class Recorder(loom.PythonHandler):
    """Records the name of every op it sees and passes it on."""

    def __init__(self):
        super().__init__()
        self.names = []

    def execute(self, op):
        self.names.append(op.name)
        return op.run()


class SwapSub(loom.PythonHandler):
    """Runs Sub with its inputs swapped: sub(a, b) gives b - a."""

    def execute(self, op):
        if op.name == "Sub":
            a, b = op.inputs
            return op.run(b, a)
        return op.run()


def test_a_python_handler_sees_each_op_and_passes_it_on(rng):
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    recorder = Recorder()
    with recorder:
        out = loom.tensor(a) * loom.tensor(b) + loom.tensor(a)
    np.testing.assert_allclose(np.asarray(out), a * b + a)
    assert recorder.names.count("Mul") == 1
    assert recorder.names.count("AddV2") == 1
    assert recorder.names.index("Mul") < recorder.names.index("AddV2")


def test_the_op_shows_its_name_inputs_and_outputs(rng):
    a = rng.standard_normal((2, 3))
    seen = {}

    class Inspect(loom.PythonHandler):
        def execute(self, op):
            if op.name == "Transpose":
                seen["inputs"] = [np.asarray(t) for t in op.inputs]
                seen["num_outputs"] = op.num_outputs
            return op.run()

    with Inspect():
        out = loom.raw_ops.Transpose(x=loom.tensor(a), perm=loom.tensor(
            np.array([1, 0], np.int32)))
    np.testing.assert_array_equal(np.asarray(out), a.T)
    np.testing.assert_array_equal(seen["inputs"][0], a)
    assert seen["num_outputs"] == 1


def test_a_handler_may_change_the_inputs(rng):
    a, b = rng.standard_normal(3), rng.standard_normal(3)
    with SwapSub():
        out = loom.tensor(a) - loom.tensor(b)
    np.testing.assert_allclose(np.asarray(out), b - a)


def test_a_tape_around_the_handler_records_what_it_ran(rng):
    """The tape sees the op the Python handler ran beneath it: the gradient
    of sum(w - x * w) with respect to x and w (PyTorch's autograd)."""
    xv, wv = rng.standard_normal(5), rng.standard_normal(5)
    x, w = loom.tensor(xv), loom.tensor(wv)
    with loom.GradientTape() as tape:
        tape.watch(x)
        tape.watch(w)
        with SwapSub():
            y = loom.sum((x * w) - w)  # swapped: w - x * w
    dx, dw = tape.gradient(y, [x, w])
    xt = torch.tensor(xv, requires_grad=True)
    wt = torch.tensor(wv, requires_grad=True)
    (wt - xt * wt).sum().backward()
    np.testing.assert_allclose(np.asarray(dx), xt.grad.numpy())
    np.testing.assert_allclose(np.asarray(dw), wt.grad.numpy())


def test_a_handler_around_a_tape_sees_the_recorded_ops(rng):
    xv = rng.standard_normal(3)
    x = loom.tensor(xv)
    recorder = Recorder()
    with recorder:
        with loom.GradientTape() as tape:
            tape.watch(x)
            y = loom.sum(x * x)
    assert "Mul" in recorder.names and "Sum" in recorder.names
    xt = torch.tensor(xv, requires_grad=True)
    (xt * xt).sum().backward()
    np.testing.assert_allclose(np.asarray(tape.gradient(y, x)),
                               xt.grad.numpy())


def test_two_python_handlers_and_logging_stack(rng):
    a, b = rng.standard_normal(2), rng.standard_normal(2)
    outer, inner = Recorder(), Recorder()
    with outer:
        with loom.logging(print=False) as log:
            with inner:
                out = loom.tensor(a) - loom.tensor(b)
    np.testing.assert_allclose(np.asarray(out), a - b)
    assert "Sub" in inner.names and "Sub" in outer.names
    assert log.count >= 1


def test_an_exception_fails_the_op_with_its_name():
    class Failing(loom.PythonHandler):
        def execute(self, op):
            raise ValueError("no " + op.name)

    with Failing():
        with pytest.raises(loom.UnknownError) as info:
            loom.tensor([1.0]) + loom.tensor([2.0])
    assert "AddV2" in str(info.value) and "ValueError: no AddV2" in str(
        info.value)
    # Ops run again once the scope is left.
    np.testing.assert_array_equal(
        np.asarray(loom.tensor([1.0]) + loom.tensor([2.0])), [3.0])


def test_a_loom_error_keeps_its_code():
    class Refusing(loom.PythonHandler):
        def execute(self, op):
            raise loom.InvalidArgumentError("refused")

    with Refusing():
        with pytest.raises(loom.InvalidArgumentError, match="refused"):
            loom.tensor([1.0]) * 2.0


def test_wrong_outputs_are_errors():
    class NoOutputs(loom.PythonHandler):
        def execute(self, op):
            return []

    class NotTensors(loom.PythonHandler):
        def execute(self, op):
            return [1.0]

    with NoOutputs():
        with pytest.raises(loom.InvalidArgumentError, match="returned 0"):
            loom.tensor([1.0]) * 2.0
    with NotTensors():
        with pytest.raises(loom.InvalidArgumentError, match="not a loom"):
            loom.tensor([1.0]) * 2.0


def test_run_after_execute_is_an_error():
    kept = []

    class Keeper(loom.PythonHandler):
        def execute(self, op):
            kept.append(op)
            return op.run()

    with Keeper():
        loom.tensor([1.0]) * 2.0
    with pytest.raises(RuntimeError, match="ran already"):
        kept[0].run()


def test_threads_call_the_handler(rng):
    a = rng.standard_normal(8)
    recorder = Recorder()
    results = [None, None]

    def work(i):
        with recorder:
            results[i] = np.asarray(loom.tensor(a) * float(i + 2))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(2):
        np.testing.assert_allclose(results[i], a * (i + 2))
    assert recorder.names.count("Mul") == 2


def test_the_handler_is_collected():
    recorder = Recorder()
    with recorder:
        loom.tensor([1.0]) + loom.tensor([1.0])
    ref = weakref.ref(recorder)
    del recorder
    gc.collect()
    assert ref() is None


def test_the_op_shows_its_attributes(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 3))
    seen = {}

    class Inspect(loom.PythonHandler):
        def execute(self, op):
            if op.name == "MatMul":
                seen.update(op.attrs)
            return op.run()

    with Inspect():
        out = loom.raw_ops.MatMul(a=loom.tensor(a), b=loom.tensor(b),
                                  transpose_b=True)
    np.testing.assert_allclose(np.asarray(out), a @ b.T)
    assert seen["transpose_b"] is True
    assert seen.get("transpose_a", False) is False
    assert all(isinstance(k, str) for k in seen)


def test_a_handler_may_change_the_attributes(rng):
    a = rng.standard_normal((3, 3))
    b = rng.standard_normal((3, 3))

    class Transposer(loom.PythonHandler):
        def execute(self, op):
            if op.name == "MatMul":
                return op.run(attrs={"transpose_b": True})
            return op.run()

    with Transposer():
        out = loom.matmul(loom.tensor(a), loom.tensor(b))
    np.testing.assert_allclose(np.asarray(out), a @ b.T, rtol=1e-6)

    class Unknown(loom.PythonHandler):
        def execute(self, op):
            return op.run(attrs={"no_such_attr": 1})

    with pytest.raises(loom.errors.UnknownError, match="no_such_attr"):
        with Unknown():
            loom.tensor([1.0]) + loom.tensor([2.0])


@loom.function
def _scaled_sum(x, y):
    return x * y + x


def test_a_handler_with_call_takes_function_calls_whole(rng):
    x, y = rng.standard_normal(4), rng.standard_normal(4)

    class Whole(loom.PythonHandler):
        def __init__(self):
            super().__init__()
            self.calls = []
            self.ops = []

        def call(self, fn):
            self.calls.append((fn.name, fn.num_outputs, len(fn.inputs)))
            return fn.run()

        def execute(self, op):
            self.ops.append(op.name)
            return op.run()

    expected = x * y + x
    _scaled_sum(loom.tensor(x), loom.tensor(y))  # traced outside
    whole = Whole()
    with whole:
        out = _scaled_sum(loom.tensor(x), loom.tensor(y))
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
    assert len(whole.calls) == 1
    _, num_outputs, num_inputs = whole.calls[0]
    assert (num_outputs, num_inputs) == (1, 2)
    # The body ran beneath the handler: its Mul and AddV2 did not reach it.
    assert "Mul" not in whole.ops and "AddV2" not in whole.ops


def test_a_call_returning_none_is_left_to_execute(rng):
    x, y = rng.standard_normal(4), rng.standard_normal(4)

    class Leave(loom.PythonHandler):
        def __init__(self):
            super().__init__()
            self.ops = []

        def call(self, fn):
            return None

        def execute(self, op):
            self.ops.append(op.name)
            return op.run()

    _scaled_sum(loom.tensor(x), loom.tensor(y))
    leave = Leave()
    with leave:
        out = _scaled_sum(loom.tensor(x), loom.tensor(y))
    np.testing.assert_allclose(np.asarray(out), x * y + x, rtol=1e-6)
    assert "Mul" in leave.ops and "AddV2" in leave.ops


def test_a_call_may_replace_the_outputs_or_fail(rng):
    x, y = rng.standard_normal(4), rng.standard_normal(4)

    class Zeros(loom.PythonHandler):
        def call(self, fn):
            return [loom.tensor(np.zeros(4))]

    _scaled_sum(loom.tensor(x), loom.tensor(y))
    with Zeros():
        out = _scaled_sum(loom.tensor(x), loom.tensor(y))
    np.testing.assert_array_equal(np.asarray(out), np.zeros(4))

    class Fails(loom.PythonHandler):
        def call(self, fn):
            raise ValueError("no calls here")

    with pytest.raises(loom.errors.UnknownError, match="no calls here"):
        with Fails():
            _scaled_sum(loom.tensor(x), loom.tensor(y))
