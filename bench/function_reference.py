"""PyTorch's counterpart of bench_function's training step: one SGD step
(momentum 0.9, learning rate 0.01) of an MLP 16-32-4 with a ReLU hidden
layer and a mean softmax cross-entropy, on a batch of 1 and of 32, at one
thread. Prints "name median unit" lines (microseconds per step, median of
repetitions after a warm-up):

  torch_mlp_step_eager_b<B>       the step as a PyTorch user writes it
                                  (zero_grad, forward, loss, backward,
                                  optimizer.step());
  torch_mlp_step_script_b<B>      the same step as one TorchScript function
                                  (torch.jit.script: forward, the loss,
                                  torch.autograd.grad and the update), run
                                  after its profiling runs have optimised
                                  it.

The loss is not read back, as bench_function does not read it.
"""

import statistics
import sys
import time
from typing import List

import torch
import torch.nn.functional as F


def report(name, value):
    print("%s %.2f us" % (name, value))
    sys.stdout.flush()


@torch.jit.script
def sgd_step(x: torch.Tensor, labels: torch.Tensor,
             params: List[torch.Tensor], moments: List[torch.Tensor],
             learning_rate: float, momentum: float) -> torch.Tensor:
    hidden = torch.relu(F.linear(x, params[0], params[1]))
    logits = F.linear(hidden, params[2], params[3])
    loss = F.cross_entropy(logits, labels)
    grads = torch.autograd.grad([loss], params)
    with torch.no_grad():
        for i in range(len(params)):
            grad = grads[i]
            assert grad is not None
            moments[i].mul_(momentum).add_(grad)
            params[i].sub_(learning_rate * moments[i])
    return loss.detach()


def make_model():
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                               torch.nn.Linear(32, 4))


def make_batch(batch):
    x = torch.rand(batch, 16)
    labels = torch.arange(batch) % 4
    return x, labels


def median_us(step, iterations, repetitions):
    def run(count):
        start = time.perf_counter_ns()
        for _ in range(count):
            step()
        return (time.perf_counter_ns() - start) / count / 1000.0

    run(iterations // 10 + 1)  # warm-up (TorchScript's profiling runs)
    return statistics.median(run(iterations) for _ in range(repetitions))


def eager_step(batch, iterations, repetitions):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, labels = make_batch(batch)

    def step():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), labels)
        loss.backward()
        optimizer.step()

    return median_us(step, iterations, repetitions)


def script_step(batch, iterations, repetitions):
    model = make_model()
    params = [p.detach().clone().requires_grad_(True)
              for p in model.parameters()]
    moments = [torch.zeros_like(p) for p in params]
    x, labels = make_batch(batch)

    def step():
        sgd_step(x, labels, params, moments, 0.01, 0.9)

    return median_us(step, iterations, repetitions)


def main():
    quick = "--quick" in sys.argv
    only = None
    if "--only" in sys.argv:
        only = sys.argv[sys.argv.index("--only") + 1]
    torch.set_num_threads(1)
    repetitions = 3 if quick else 9
    iterations = 20 if quick else 2000
    for batch in (1, 32):
        for name, run in (("torch_mlp_step_eager_b%d" % batch, eager_step),
                          ("torch_mlp_step_script_b%d" % batch, script_step)):
            if only and only not in name:
                continue
            report(name, run(batch, iterations, repetitions))


if __name__ == "__main__":
    main()
