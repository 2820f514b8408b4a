"""PyTorch's counterparts of bench/bench_data_parallel.c: the MLP
784-256-10 (ReLU, cross-entropy, Adam) trained on a batch of 128 per
replica, one thread per replica, in examples per second:

  torch_dp_mlp784_b128_1p_t1   one process, no DistributedDataParallel;
  torch_ddp_mlp784_b128x2_t1   two processes under DistributedDataParallel
                               (the gloo backend, gradients all-reduced in
                               buckets during the backward pass).

Run with Debian's /usr/bin/python3 (python3-torch). --quick takes a few
steps only."""

import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

BATCH, INPUTS, HIDDEN, CLASSES = 128, 784, 256, 10


def model_and_batch():
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(INPUTS, HIDDEN),
                                torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, CLASSES))
    x = torch.rand(BATCH, INPUTS)
    labels = torch.arange(BATCH) % CLASSES
    return model, x, labels


def seconds_per_step(model, x, labels, iterations, repetitions):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()

    def steps(n):
        for _ in range(n):
            optimizer.zero_grad(set_to_none=True)
            loss_fn(model(x), labels).backward()
            optimizer.step()

    steps(iterations // 10 + 1)  # warm-up
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter()
        steps(iterations)
        samples.append((time.perf_counter() - start) / iterations)
    return statistics.median(samples)


def replica(rank, world, port, iterations, repetitions, queue):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    model, x, labels = model_and_batch()
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    seconds = seconds_per_step(ddp, x, labels, iterations, repetitions)
    if rank == 0:
        queue.put(seconds)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    quick = "--quick" in sys.argv
    iterations, repetitions = (2, 1) if quick else (20, 7)
    torch.set_num_threads(1)
    model, x, labels = model_and_batch()
    seconds = seconds_per_step(model, x, labels, iterations, repetitions)
    print("torch_dp_mlp784_b128_1p_t1 %.1f examples/s" % (BATCH / seconds))
    sys.stdout.flush()
    context = mp.get_context("spawn")
    queue = context.Queue()
    port = free_port()
    processes = [context.Process(target=replica,
                                 args=(rank, 2, port, iterations, repetitions,
                                       queue))
                 for rank in range(2)]
    for p in processes:
        p.start()
    seconds = queue.get(timeout=600)
    for p in processes:
        p.join(timeout=60)
    print("torch_ddp_mlp784_b128x2_t1 %.1f examples/s" % (2 * BATCH / seconds))


if __name__ == "__main__":
    main()
