"""Runs the Fashion-MNIST demo in one process and data-parallel (--parallel
N in one process, or N ranks under mpirun), prints the two loss
trajectories side by side and checks that they agree within float
rounding: the replicas average their shards' gradients, so every step
should see the loss one process sees on the whole batch.

  compare_data_parallel.py FASHION_MNIST parallel N [demo args...]
  compare_data_parallel.py FASHION_MNIST mpi N MPIEXEC [demo args...]

Exits 77 (skipped) when the demo finds no dataset.
"""

import sys

from demo_losses import losses, replicated_command

# Relative tolerance per step: the replicas sum the same float32 products in
# another order (shards, then their mean), which moves the loss in the 6th
# or 7th digit; Adam carries the differences forward over the few steps run.
TOLERANCE = 1e-4


def main(argv):
    demo = argv[1]
    replicated, extra, label = replicated_command(argv)
    common = ["--print-losses"] + extra
    one = losses([demo] + common, float)
    many = losses(replicated + common, float)
    print("%5s  %14s  %14s  %10s" % ("step", "one process", label,
                                     "rel. diff"))
    worst = 0.0
    failed = False
    for step in sorted(one):
        if step not in many:
            print("%5d  %14.9g  %14s" % (step, one[step], "missing"))
            failed = True
            continue
        a, b = one[step], many[step]
        diff = abs(a - b) / max(1.0, abs(a))
        worst = max(worst, diff)
        mark = "" if diff <= TOLERANCE else "  <-- beyond %g" % TOLERANCE
        failed |= diff > TOLERANCE
        print("%5d  %14.9g  %14.9g  %10.3g%s" % (step, a, b, diff, mark))
    if set(many) - set(one):
        print("steps only in the replicated run: %s" %
              sorted(set(many) - set(one)))
        failed = True
    print("largest relative difference: %.3g (tolerance %g)" %
          (worst, TOLERANCE))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
