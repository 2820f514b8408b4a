"""PyTorch's counterparts of the host-runtime figures, for bench_host.

Prints "name median unit" lines like bench_host: torch.futures.Future
create + then + set_result from Python (what a PyTorch user pays for it),
and a round trip through PyTorch's inter-op thread pool (TorchScript
fork + wait, looped inside TorchScript so no Python runs per iteration).
"""

import statistics
import sys
import time

import torch


def median_ns(fn, iterations, repetitions):
    fn(max(1, iterations // 10))  # warm-up
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter_ns()
        fn(iterations)
        samples.append((time.perf_counter_ns() - start) / iterations)
    return statistics.median(samples)


def future_create_set_then(iterations):
    count = [0]

    def callback(fut):
        count[0] += 1

    for _ in range(iterations):
        fut = torch.futures.Future()
        fut.then(callback)
        fut.set_result(None)
    assert count[0] == iterations


@torch.jit.script
def _noop(x: int) -> int:
    return x


@torch.jit.script
def _fork_wait_loop(iterations: int) -> int:
    # TorchScript's fork runs the call on PyTorch's inter-op thread pool.
    total = 0
    for i in range(iterations):
        total += torch.jit.wait(torch.jit.fork(_noop, i))
    return total


def fork_wait(iterations):
    _fork_wait_loop(iterations)


def main():
    quick = "--quick" in sys.argv
    scale = 100 if quick else 1
    repetitions = 3 if quick else 15
    torch.set_num_threads(1)
    print("torch_future_create_set_then %.1f ns/op" %
          median_ns(future_create_set_then, 100000 // scale, repetitions))
    print("torch_interop_fork_wait_round_trip %.1f ns/op" %
          median_ns(fork_wait, 20000 // scale, repetitions))


if __name__ == "__main__":
    main()
