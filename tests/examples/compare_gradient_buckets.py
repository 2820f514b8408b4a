"""Runs the data-parallel Fashion-MNIST demo with its gradients averaged one
by one after the backward pass (--bucket-kib 0) and in buckets during it
(several bucket sizes), and checks that every step's loss is the same to
the last bit: a bucket sums the same float32 values as the unbucketed step,
element for element.

  compare_gradient_buckets.py FASHION_MNIST parallel N [demo args...]
  compare_gradient_buckets.py FASHION_MNIST mpi N MPIEXEC [demo args...]

Exits 77 (skipped) when the demo finds no dataset.
"""

import sys

from demo_losses import losses, replicated_command

# 1 KiB: a bucket per parameter or two; 64 KiB: the small layers together;
# the default (1 MiB): everything in one or two buckets.
BUCKETS = ["1", "64", "1024"]


def main(argv):
    command, extra, _ = replicated_command(argv)
    common = ["--print-losses"] + extra
    reference = losses(command + common + ["--bucket-kib", "0"])
    failed = False
    for size in BUCKETS:
        bucketed = losses(command + common + ["--bucket-kib", size])
        same = bucketed == reference
        print("--bucket-kib %s: %d steps, %s" %
              (size, len(bucketed),
               "the same losses" if same else "DIFFERENT losses"))
        if not same:
            failed = True
            for step in sorted(set(reference) | set(bucketed)):
                print("%5d  %14s  %14s" % (step, reference.get(step, "-"),
                                            bucketed.get(step, "-")))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
