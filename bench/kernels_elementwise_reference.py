"""PyTorch's and NumPy's counterparts of bench_kernels_elementwise.

Prints "name median unit" lines like the C benchmark, at 1 and 2 threads
(torch.set_num_threads; NumPy's element-wise loops are single-threaded, so
its figures are `_1t` only):

  torch_add_out_f32_16m_<t>      torch.add(x, y, out=z), 16 M floats, GB/s
                                 counted as 3 arrays x 4 bytes x 16 M;
  torch_add_inplace_f32_16m_<t>  x.add_(y): in place, like Loom's forwarded
                                 add;
  torch_mul_out_f32_16m_<t>      torch.mul(x, y, out=z);
  torch_add_f32_16m_alloc_<t>    torch.add(x, y): a fresh output per op;
  numpy_*_1t                     the same with np.add / np.multiply;
                                 (--stream: only these 16 M figures);
  torch_<op>_<dtype>_1m_<t>,
  numpy_<op>_<dtype>_1m_1t       the C benchmark's 1 M-element ops, Melem/s.
"""

import statistics
import sys
import time

import numpy as np
import torch

STREAM = 16 * 1024 * 1024
SMALL = 1024 * 1024


def median_ns(fn, iterations, repetitions):
    fn(max(1, iterations // 10))  # warm-up
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter_ns()
        fn(iterations)
        samples.append((time.perf_counter_ns() - start) / iterations)
    return statistics.median(samples)


def report(name, value, unit):
    print("%s %.1f %s" % (name, value, unit))
    sys.stdout.flush()


def loop(body):
    def run(n):
        for _ in range(n):
            body()
    return run


def stream_figures(threads, iterations, repetitions):
    suffix = "%dt" % threads
    nbytes = 3.0 * 4.0 * STREAM
    x = torch.ones(STREAM, dtype=torch.float32)
    y = torch.full((STREAM,), 0.5, dtype=torch.float32)
    z = torch.empty(STREAM, dtype=torch.float32)
    one = torch.ones(STREAM, dtype=torch.float32)
    torch_cases = {
        "torch_add_out_f32_16m": lambda: torch.add(x, y, out=z),
        "torch_add_inplace_f32_16m": lambda: x.add_(y),
        "torch_mul_out_f32_16m": lambda: torch.mul(x, one, out=z),
        "torch_add_f32_16m_alloc": lambda: torch.add(x, y),
    }
    for name, body in torch_cases.items():
        ns = median_ns(loop(body), iterations, repetitions)
        report("%s_%s" % (name, suffix), nbytes / ns, "GB/s")
    if threads != 1:
        return
    a = np.ones(STREAM, dtype=np.float32)
    b = np.full(STREAM, 0.5, dtype=np.float32)
    c = np.empty(STREAM, dtype=np.float32)
    ones = np.ones(STREAM, dtype=np.float32)
    numpy_cases = {
        "numpy_add_out_f32_16m": lambda: np.add(a, b, out=c),
        "numpy_add_inplace_f32_16m": lambda: np.add(a, b, out=a),
        "numpy_mul_out_f32_16m": lambda: np.multiply(a, ones, out=c),
        "numpy_add_f32_16m_alloc": lambda: np.add(a, b),
    }
    for name, body in numpy_cases.items():
        ns = median_ns(loop(body), iterations, repetitions)
        report("%s_%s" % (name, suffix), nbytes / ns, "GB/s")


def small_figures(threads, iterations, repetitions):
    suffix = "%dt" % threads
    n = SMALL
    f = torch.ones(n) + torch.arange(n).remainder(7) * 0.125
    g = torch.full((n,), 0.5)
    h = torch.ones(n, dtype=torch.float16)
    h0 = torch.zeros(n, dtype=torch.float16)
    hb = torch.ones(n, dtype=torch.bfloat16)
    hb0 = torch.zeros(n, dtype=torch.bfloat16)
    i = torch.full((n,), 1000, dtype=torch.int32)
    i1 = torch.ones(n, dtype=torch.int32)
    i7 = torch.full((n,), 7, dtype=torch.int32)
    f1000 = torch.full((n,), 1000.0)
    f7 = torch.full((n,), 7.0)
    ones = torch.ones(n)
    fd = f.double()
    onesd = torch.ones(n, dtype=torch.float64)
    cond = torch.arange(n).remainder(3) != 0
    two = torch.full((n,), 2.0)
    m = torch.ones(1024, 1024)
    row = torch.full((1024,), 0.5)
    bias_x = torch.ones(4096, 256)
    bias = torch.full((256,), 0.5)
    xs = [torch.ones(n) for _ in range(4)]
    # In place where Loom's op forwards its input (a chain), else a new
    # output per op, as Loom's.
    torch_cases = {
        "torch_add_f32_1m": lambda: f.add_(g),
        "torch_add_f16_1m": lambda: h.add_(h0),
        "torch_add_bf16_1m": lambda: hb.add_(hb0),
        "torch_add_row_f32_1m": lambda: m.add_(row),
        "torch_div_i32_1m": lambda: torch.div(i, i1, rounding_mode="trunc",
                                              out=i),
        "torch_floormod_i32_1m": lambda: torch.remainder(i, i7),
        "torch_floormod_f32_1m": lambda: torch.remainder(f1000, f7),
        "torch_pow_f32_1m": lambda: torch.pow(f, ones, out=f),
        "torch_pow_f64_1m": lambda: torch.pow(fd, onesd, out=fd),
        "torch_less_f32_1m": lambda: torch.lt(f, ones),
        "torch_select_f32_1m": lambda: torch.where(cond, ones, two),
        "torch_clip_f32_1m": lambda: torch.clamp(f, 1.2, 1.5, out=f),
        "torch_addn4_f32_1m": lambda: torch.add(xs[0], xs[1]).add_(
            xs[2]).add_(xs[3]),
        "torch_biasadd_f32_1m": lambda: bias_x.add_(bias),
        "torch_biasaddgrad_f32_1m": lambda: bias_x.sum(dim=0),
    }
    for name, body in torch_cases.items():
        ns = median_ns(loop(body), iterations, repetitions)
        report("%s_%s" % (name, suffix), n / ns * 1e3, "Melem/s")
    if threads != 1:
        return
    a = f.numpy()
    b = g.numpy()
    ah = h.numpy()
    ah0 = h0.numpy()
    ai = i.numpy()
    ai1 = i1.numpy()
    ai7 = i7.numpy()
    af1000 = f1000.numpy()
    af7 = f7.numpy()
    aones = ones.numpy()
    afd = fd.numpy()
    aonesd = onesd.numpy()
    acond = cond.numpy()
    atwo = two.numpy()
    am = m.numpy()
    arow = row.numpy()
    abx = bias_x.numpy()
    ab = bias.numpy()
    axs = [x.numpy() for x in xs]
    numpy_cases = {
        "numpy_add_f32_1m": lambda: np.add(a, b, out=a),
        "numpy_add_f16_1m": lambda: np.add(ah, ah0, out=ah),
        "numpy_add_row_f32_1m": lambda: np.add(am, arow, out=am),
        # NumPy has no truncating integer division: its floor division.
        "numpy_div_i32_1m": lambda: np.floor_divide(ai, ai1, out=ai),
        "numpy_floormod_i32_1m": lambda: np.remainder(ai, ai7),
        "numpy_floormod_f32_1m": lambda: np.remainder(af1000, af7),
        "numpy_pow_f32_1m": lambda: np.power(a, aones, out=a),
        "numpy_pow_f64_1m": lambda: np.power(afd, aonesd, out=afd),
        "numpy_less_f32_1m": lambda: np.less(a, aones),
        "numpy_select_f32_1m": lambda: np.where(acond, aones, atwo),
        "numpy_clip_f32_1m": lambda: np.clip(a, 1.2, 1.5, out=a),
        "numpy_addn4_f32_1m": lambda: np.add(
            np.add(np.add(axs[0], axs[1]), axs[2]), axs[3]),
        "numpy_biasadd_f32_1m": lambda: np.add(abx, ab, out=abx),
        "numpy_biasaddgrad_f32_1m": lambda: abx.sum(axis=0),
    }
    for name, body in numpy_cases.items():
        ns = median_ns(loop(body), iterations, repetitions)
        report("%s_%s" % (name, suffix), n / ns * 1e3, "Melem/s")


def main():
    quick = "--quick" in sys.argv
    stream_only = "--stream" in sys.argv  # the 16 M figures alone
    iterations = 2 if quick else 10
    repetitions = 3 if quick else 9
    for threads in (1, 2):
        torch.set_num_threads(threads)
        stream_figures(threads, iterations, repetitions)
        if not stream_only:
            small_figures(threads, iterations * 10, repetitions)


if __name__ == "__main__":
    main()
