"""PyTorch's counterparts of bench_vmap: per-example gradients of the same
MLP (32-64-10, ReLU, softmax cross-entropy; float32) on one thread,
microseconds per batch (median of repetitions after a warm-up):

  torch_loop_per_example_grads_mlp_b<B>_t1  a loop of B backward passes,
                                            one per example;
  functorch_vmap_grad_mlp_b<B>_t1           functorch's vmap(grad(loss))
                                            (Debian's torch 1.13 ships
                                            functorch);
  functorch_vmap_grad_mlp784_b128_t1        the same for a 784-256-10 MLP
                                            over 128 examples;
  torch_f_tiny_t1                           one call of
                                            f(x) = sum(tanh(w * x)), x, w
                                            [16];
  functorch_vmap_grad_tiny_b64_t1           functorch's vmap(grad f) over
                                            64 examples;
  functorch_vmap_f_tiny_b64_t1              functorch's vmap(f) over 64
                                            examples.
"""

import statistics
import sys
import time

import torch

INPUTS, HIDDEN, CLASSES = 32, 64, 10
HIDDEN_784 = 256


def report(name, value):
    print("%s %.1f us" % (name, value))
    sys.stdout.flush()


def median_us(fn, iterations, repetitions):
    fn()  # warm-up
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter_ns()
        for _ in range(iterations):
            fn()
        samples.append((time.perf_counter_ns() - start) / iterations / 1e3)
    return statistics.median(samples)


def main():
    quick = "--quick" in sys.argv[1:]
    repetitions = 3 if quick else 11
    torch.set_num_threads(1)
    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(INPUTS, HIDDEN),
                                torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, CLASSES))
    params = list(model.parameters())
    loss_fn = torch.nn.functional.cross_entropy
    try:
        import functorch
    except ImportError:
        functorch = None
    for batch in (8, 64):
        xs = torch.rand(batch, INPUTS) - 0.5
        labels = torch.arange(batch) % CLASSES
        iterations = 2 if quick else (200 if batch == 8 else 40)

        def loop():
            grads = [[] for _ in params]
            for i in range(batch):
                loss = loss_fn(model(xs[i:i + 1]), labels[i:i + 1])
                for g, p in zip(grads, torch.autograd.grad(loss, params)):
                    g.append(p)
            return [torch.stack(g) for g in grads]

        report("torch_loop_per_example_grads_mlp_b%d_t1" % batch,
               median_us(loop, iterations, repetitions))
        if functorch is None:
            continue
        fmodel, fparams = functorch.make_functional(model)

        def example_loss(p, x, y):
            return loss_fn(fmodel(p, x.unsqueeze(0)), y.unsqueeze(0))

        per_example = functorch.vmap(functorch.grad(example_loss),
                                     in_dims=(None, 0, 0))
        report("functorch_vmap_grad_mlp_b%d_t1" % batch,
               median_us(lambda: per_example(fparams, xs, labels),
                         iterations, repetitions))
    if functorch is None:
        return
    tiny_xs = torch.rand(64, 16) - 0.5
    tiny_w = torch.rand(16) - 0.5

    def tiny_f(x):
        return torch.sum(torch.tanh(tiny_w * x))

    tiny_iterations = 20 if quick else 2000
    report("torch_f_tiny_t1",
           median_us(lambda: tiny_f(tiny_xs[0]), tiny_iterations,
                     repetitions))
    tiny_grad = functorch.vmap(functorch.grad(tiny_f))
    report("functorch_vmap_grad_tiny_b64_t1",
           median_us(lambda: tiny_grad(tiny_xs), tiny_iterations // 10 + 1,
                     repetitions))
    tiny = functorch.vmap(tiny_f)
    report("functorch_vmap_f_tiny_b64_t1",
           median_us(lambda: tiny(tiny_xs), tiny_iterations // 10 + 1,
                     repetitions))
    big = torch.nn.Sequential(torch.nn.Linear(784, HIDDEN_784),
                              torch.nn.ReLU(),
                              torch.nn.Linear(HIDDEN_784, CLASSES))
    fbig, fbig_params = functorch.make_functional(big)

    def big_example_loss(p, x, y):
        return loss_fn(fbig(p, x.unsqueeze(0)), y.unsqueeze(0))

    big_per_example = functorch.vmap(functorch.grad(big_example_loss),
                                     in_dims=(None, 0, 0))
    xs = torch.rand(128, 784) - 0.5
    labels = torch.arange(128) % CLASSES
    report("functorch_vmap_grad_mlp784_b128_t1",
           median_us(lambda: big_per_example(fbig_params, xs, labels),
                     1 if quick else 5, 3 if quick else 5))


if __name__ == "__main__":
    main()
