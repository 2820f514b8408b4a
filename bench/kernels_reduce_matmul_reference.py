"""NumPy's and PyTorch's counterparts of bench_kernels_reduce_matmul.

Prints "name median unit" lines (microseconds per op), measured like the C
benchmark (median of repetitions after a warm-up):
  torch_<figure>_t<N>   PyTorch with torch.set_num_threads(N);
  numpy_<figure>        NumPy (its reductions are single-threaded);
  numpy_matmul_<n>_f32_t<N>
                        numpy.matmul, OpenBLAS's threads set to N;
  numpy_einsum_<what>_f32_t<N>
                        numpy.einsum(optimize=True), OpenBLAS's threads N.
Inputs are NumPy arrays (PyTorch shares them), which NumPy backs with
transparent huge pages, as the C benchmark does for Loom's inputs.
"""

import ctypes
import ctypes.util
import statistics
import sys
import time

import numpy as np
import torch


def median_us(fn, repetitions):
    fn()  # warm-up
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1000.0)
    return statistics.median(samples)


def report(name, value):
    print("%s %.1f us" % (name, value))
    sys.stdout.flush()


def _openblas_threads():
    """openblas_set_num_threads of the BLAS NumPy uses, if it is OpenBLAS."""
    for name in ("libblas.so.3", ctypes.util.find_library("openblas")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            return lib.openblas_set_num_threads
        except (OSError, AttributeError):
            continue
    return None


def main():
    quick = "--quick" in sys.argv
    only = None
    if "--only" in sys.argv:
        only = sys.argv[sys.argv.index("--only") + 1]
    repetitions = 1 if quick else 9
    rng = np.random.default_rng(1)
    n = 1 << 20 if quick else 1 << 24
    side = 1024 if quick else 4096
    cube = 64 if quick else 256
    vector = rng.random(n, dtype=np.float32)
    square = rng.random((side, side), dtype=np.float32)
    cubic = rng.random((cube, cube, cube), dtype=np.float32)
    reductions = [
        ("sum_16m_f32", vector, lambda t: t.sum(), lambda a: a.sum()),
        ("sum_rows_4k_f32", square, lambda t: t.sum(dim=1),
         lambda a: a.sum(axis=1)),
        ("sum_columns_4k_f32", square, lambda t: t.sum(dim=0),
         lambda a: a.sum(axis=0)),
        ("sum_axes02_256_f32", cubic, lambda t: t.sum(dim=(0, 2)),
         lambda a: a.sum(axis=(0, 2))),
        ("max_16m_f32", vector, lambda t: t.max(), lambda a: a.max()),
        ("mean_rows_4k_f32", square, lambda t: t.mean(dim=1),
         lambda a: a.mean(axis=1)),
        ("argmax_rows_4k_f32", square, lambda t: t.argmax(dim=1),
         lambda a: a.argmax(axis=1)),
        ("argmax_columns_4k_f32", square, lambda t: t.argmax(dim=0),
         lambda a: a.argmax(axis=0)),
    ]
    set_blas_threads = _openblas_threads()
    logits = rng.standard_normal((256 if quick else 4096, 1000),
                                 dtype=np.float32)
    labels = (np.arange(logits.shape[0]) * 7919) % 1000
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for name, array, torch_fn, numpy_fn in reductions:
            if only and only not in name:
                continue
            tensor = torch.from_numpy(array)
            report("torch_%s_t%d" % (name, threads),
                   median_us(lambda: torch_fn(tensor), repetitions))
            if threads == 1:
                report("numpy_%s" % name,
                       median_us(lambda: numpy_fn(array), repetitions))
        for size in (1024, 2048):
            name = "matmul_%d_f32" % size
            if only and only not in name:
                continue
            dim = size // 8 if quick else size
            a = rng.random((dim, dim), dtype=np.float32)
            b = rng.random((dim, dim), dtype=np.float32)
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            reps = 1 if quick else 5
            report("torch_%s_t%d" % (name, threads),
                   median_us(lambda: torch.matmul(ta, tb), reps))
            if set_blas_threads:
                set_blas_threads(threads)
                report("numpy_%s_t%d" % (name, threads),
                       median_us(lambda: np.matmul(a, b), reps))
        if not only or "batch_matmul" in only:
            a = rng.random((64, 128, 128), dtype=np.float32)
            b = rng.random((64, 128, 128), dtype=np.float32)
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            report("torch_batch_matmul_64x128_f32_t%d" % threads,
                   median_us(lambda: torch.matmul(ta, tb), repetitions))
        einsums = [
            ("matmul_1024", "ij,jk->ik", (1024, 1024), (1024, 1024)),
            ("attention_8x8x256x64", "bhqd,bhkd->bhqk", (8, 8, 256, 64),
             (8, 8, 256, 64)),
        ]
        for name, equation, sa, sb in einsums:
            if only and only not in "einsum_" + name:
                continue
            if quick and len(sa) == 2:
                sa = tuple(d // 8 for d in sa)
                sb = tuple(d // 8 for d in sb)
            elif quick:
                sa = (sa[0] // 8,) + sa[1:]
                sb = (sb[0] // 8,) + sb[1:]
            a = rng.random(sa, dtype=np.float32)
            b = rng.random(sb, dtype=np.float32)
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            report("torch_einsum_%s_f32_t%d" % (name, threads),
                   median_us(lambda: torch.einsum(equation, ta, tb),
                             repetitions))
            if set_blas_threads:
                set_blas_threads(threads)
                report("numpy_einsum_%s_f32_t%d" % (name, threads),
                       median_us(lambda: np.einsum(equation, a, b,
                                                   optimize=True),
                                 repetitions))
        tl = torch.from_numpy(logits)
        tlabels = torch.from_numpy(labels)
        softmaxes = [
            ("softmax", lambda: torch.softmax(tl, dim=1)),
            ("log_softmax", lambda: torch.log_softmax(tl, dim=1)),
            ("sparse_xent", lambda: torch.nn.functional.cross_entropy(
                tl, tlabels, reduction="none")),
        ]
        for name, fn in softmaxes:
            if only and only not in name:
                continue
            report("torch_%s_4096x1000_f32_t%d" % (name, threads),
                   median_us(fn, repetitions))


if __name__ == "__main__":
    main()
