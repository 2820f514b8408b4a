"""The cost of one tiny op from Python: `a + b` on one-element float32
tensors with loom (the Python front end), NumPy and PyTorch, in one run,
and loom.raw_ops.AddV2(a, b) (the generated op functions' path).

Prints "name median unit" lines as the other benchmarks do, then
"ratio_<loom>_vs_<reference> <ratio> x" (above 1: loom is faster). Run it
with a Python where `loom` is installed (docs/python.md), e.g. the venv
CTest makes: build/python-venv/bin/python bench/python_tiny_op.py [--quick]
"""

import statistics
import sys
import time

import numpy as np


def median_ns(fn, iterations, repetitions):
    fn(max(1, iterations // 10))  # warm-up
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter_ns()
        fn(iterations)
        samples.append((time.perf_counter_ns() - start) / iterations)
    return statistics.median(samples)


def loop(a, b):
    def run(n):
        for _ in range(n):
            a + b
    return run


def raw_loop(op, a, b):
    def run(n):
        for _ in range(n):
            op(a, b)
    return run


def main():
    import loom
    quick = "--quick" in sys.argv
    iterations = 2000 if quick else 100000
    repetitions = 3 if quick else 9
    figures = {}
    la = loom.tensor([1.0], dtype="float32")
    lb = loom.tensor([2.0], dtype="float32")
    figures["python_loom_add_1"] = median_ns(loop(la, lb), iterations,
                                             repetitions)
    figures["python_loom_raw_add_1"] = median_ns(
        raw_loop(loom.raw_ops.AddV2, la, lb), iterations, repetitions)
    na = np.ones(1, np.float32)
    nb = np.full(1, 2.0, np.float32)
    figures["python_numpy_add_1"] = median_ns(loop(na, nb), iterations,
                                              repetitions)
    try:
        import torch
        torch.set_num_threads(1)
        ta = torch.ones(1, dtype=torch.float32)
        tb = torch.full((1,), 2.0, dtype=torch.float32)
        figures["python_torch_add_1"] = median_ns(loop(ta, tb), iterations,
                                                  repetitions)
    except ImportError:
        pass
    for name, value in figures.items():
        print(f"{name} {value:.1f} ns/op")
    for name in ("python_loom_add_1", "python_loom_raw_add_1"):
        for reference in ("python_numpy_add_1", "python_torch_add_1"):
            if reference in figures:
                ratio = figures[reference] / figures[name]
                print(f"ratio_{name}_vs_{reference} {ratio:.2f} x")


if __name__ == "__main__":
    main()
