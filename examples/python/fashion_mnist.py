#!/usr/bin/env python3
"""Fashion-MNIST with the demo's MLP, in Python on Loom.

The model and training of examples/fashion_mnist (the C demo) written with
the `loom` package: 784-256-10, ReLU, He-uniform and Glorot-uniform
kernels, zero biases, mean sparse softmax cross-entropy, Adam (learning
rate 1e-3) or SGD with momentum 0.9 (0.01) through the resource-variable
training ops, batches of 128, the test accuracy printed after each epoch.

    python3 examples/python/fashion_mnist.py [--epochs N] [--batch N]
        [--lr X] [--optimizer adam|sgd] [--traced] [--threads N]
        [--seed N] [--data DIR] [--steps N] [--limit N] [--smoke]

--traced runs the forward and backward pass as a @loom.function (traced
once, called per batch). --smoke is a short run for tests: one epoch of 20
steps on 2560 training images. The data is Debian's dataset-fashion-mnist
(/usr/share/datasets/fashion-mnist); without it the script exits 77.
"""

import argparse
import gzip
import math
import os
import sys
import time

import numpy as np

import loom

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"
EXIT_SKIP = 77
CLASSES = 10


def read_idx(path):
    """An IDX file (gzip-compressed or not) as a NumPy array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    if magic >> 8 != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    rank = magic & 0xFF
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big")
            for i in range(rank)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * rank).reshape(dims)


def find(data_dir, name):
    for suffix in ("", ".gz"):
        path = os.path.join(data_dir, name + suffix)
        if os.path.exists(path):
            return path
    return None


def load_split(data_dir, split, limit):
    images = read_idx(find(data_dir, f"{split}-images-idx3-ubyte"))
    labels = read_idx(find(data_dir, f"{split}-labels-idx1-ubyte"))
    if limit:
        images, labels = images[:limit], labels[:limit]
    x = images.reshape(len(images), -1).astype(np.float32) / 255.0
    return x, labels.astype(np.int32)


class MLP:
    """Two dense layers as loom.Variables."""

    def __init__(self, inputs, hidden, classes, rng):
        def uniform(shape, fan):
            limit = math.sqrt(6.0 / fan)
            return rng.uniform(-limit, limit, shape).astype(np.float32)

        self.w1 = loom.Variable(uniform((inputs, hidden), inputs))   # He
        self.b1 = loom.Variable(np.zeros(hidden, np.float32))
        self.w2 = loom.Variable(uniform((hidden, classes),
                                        hidden + classes))         # Glorot
        self.b2 = loom.Variable(np.zeros(classes, np.float32))
        self.params = [self.w1, self.b1, self.w2, self.b2]

    def values(self):
        """The parameters' current values."""
        return [p.read_value() for p in self.params]

    def __call__(self, x, values=None):
        w1, b1, w2, b2 = self.values() if values is None else values
        h = loom.relu(loom.raw_ops.MatMul(a=x, b=w1) + b1)
        return loom.raw_ops.MatMul(a=h, b=w2) + b2

    def num_values(self):
        return sum(int(np.prod(p.shape)) for p in self.params)


def loss_fn(model, values, x, labels):
    losses, _ = loom.raw_ops.SparseSoftmaxCrossEntropyWithLogits(
        features=model(x, values), labels=labels)
    return loom.mean(losses)


class Adam:
    def __init__(self, params, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-7):
        self.params = params
        self.slots = [(loom.Variable(np.zeros(p.shape, np.float32)),
                       loom.Variable(np.zeros(p.shape, np.float32)))
                      for p in params]
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.step = 0
        f32 = lambda v: loom.tensor(v, dtype=loom.float32)  # noqa: E731
        self.lr_t, self.b1_t, self.b2_t = f32(lr), f32(beta1), f32(beta2)

    def apply(self, grads):
        self.step += 1
        p1 = self.beta1 ** self.step
        p2 = self.beta2 ** self.step
        f32 = lambda v: loom.tensor(v, dtype=loom.float32)  # noqa: E731
        p1_t, p2_t = f32(p1), f32(p2)
        eps_t = f32(self.eps * math.sqrt(1.0 - p2))
        for param, (m, v), grad in zip(self.params, self.slots, grads):
            loom.raw_ops.ResourceApplyAdam(
                var=param.handle, m=m.handle, v=v.handle, beta1_power=p1_t,
                beta2_power=p2_t, lr=self.lr_t, beta1=self.b1_t,
                beta2=self.b2_t, epsilon=eps_t, grad=grad)


class Momentum:
    def __init__(self, params, lr=0.01, momentum=0.9):
        self.params = params
        self.slots = [loom.Variable(np.zeros(p.shape, np.float32))
                      for p in params]
        self.lr_t = loom.tensor(lr, dtype=loom.float32)
        self.momentum_t = loom.tensor(momentum, dtype=loom.float32)
        self.lr = lr

    def apply(self, grads):
        for param, accum, grad in zip(self.params, self.slots, grads):
            loom.raw_ops.ResourceApplyMomentum(
                var=param.handle, accum=accum.handle, lr=self.lr_t,
                grad=grad, momentum=self.momentum_t)


def accuracy(model, x, labels, batch=1000):
    correct = 0
    for begin in range(0, len(x), batch):
        logits = model(loom.tensor(x[begin:begin + batch]))
        predicted = np.asarray(loom.argmax(logits, axis=1))
        correct += int(np.sum(predicted == labels[begin:begin + batch]))
    return correct / len(x)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.0,
                        help="0: the optimizer's default")
    parser.add_argument("--optimizer", choices=("adam", "sgd"),
                        default="adam")
    parser.add_argument("--traced", action="store_true")
    parser.add_argument("--threads", type=int, default=-1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--steps", type=int, default=0,
                        help="cap on the steps of each epoch (0: all)")
    parser.add_argument("--limit", type=int, default=0,
                        help="training images read (0: all)")
    parser.add_argument("--smoke", action="store_true",
                        help="one epoch of 20 steps on 2560 images")
    args = parser.parse_args(argv)
    if args.smoke:
        args.epochs, args.steps, args.limit = 1, 20, 2560
    return args


def main(argv=None):
    args = parse_args(argv)
    if not all(find(args.data, f"{s}-{k}-idx{r}-ubyte")
               for s in ("train", "t10k")
               for k, r in (("images", 3), ("labels", 1))):
        print(f"fashion_mnist.py: no Fashion-MNIST in {args.data} (install "
              "it with `apt-get install dataset-fashion-mnist`)",
              file=sys.stderr)
        return EXIT_SKIP
    if args.threads > 0:
        loom.config.set_num_threads(args.threads - 1)
    train_x, train_y = load_split(args.data, "train", args.limit)
    test_x, test_y = load_split(args.data, "t10k", 0)
    rng = np.random.default_rng(args.seed)
    model = MLP(784, 256, CLASSES, rng)
    if args.optimizer == "adam":
        optimizer = Adam(model.params, lr=args.lr or 1e-3)
    else:
        optimizer = Momentum(model.params, lr=args.lr or 0.01)

    # The loss and its gradients with respect to the parameters' values,
    # which are arguments so that a traced step sees their shapes.
    def gradients(x, labels, *values):
        with loom.GradientTape() as tape:
            tape.watch(values)
            loss = loss_fn(model, values, x, labels)
        return loss, tape.gradient(loss, values)

    step = loom.function(gradients) if args.traced else gradients
    print(f"Fashion-MNIST: {len(train_x)} training and {len(test_x)} test "
          f"images from {args.data}")
    print(f"model: MLP 784-256-10, {model.num_values()} parameters; "
          f"optimizer: {args.optimizer}, learning rate {optimizer.lr:g}; "
          f"batch {args.batch}{'; traced' if args.traced else ''}")
    sys.stdout.flush()
    acc = 0.0
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        order = rng.permutation(len(train_x))
        steps = len(train_x) // args.batch
        if args.steps:
            steps = min(steps, args.steps)
        total = 0.0
        for i in range(steps):
            index = order[i * args.batch:(i + 1) * args.batch]
            loss, grads = step(loom.tensor(train_x[index]),
                               loom.tensor(train_y[index]), *model.values())
            optimizer.apply(grads)
            total += float(loss)
        train_s = time.perf_counter() - start
        acc = accuracy(model, test_x, test_y)
        print(f"epoch {epoch}/{args.epochs}: "
              f"train_loss={total / max(steps, 1):.4f} "
              f"test_accuracy={acc:.4f} "
              f"time={time.perf_counter() - start:.1f}s "
              f"(training {train_s:.1f}s)")
        sys.stdout.flush()
    print(f"test_accuracy={acc:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
