"""Runs the data-parallel Fashion-MNIST demo with its gradients averaged one
by one after the backward pass (--bucket-kib 0) and in buckets during it
(several bucket sizes), and checks that every step's loss is the same to
the last bit: a bucket sums the same float32 values as the unbucketed step,
element for element.

  compare_gradient_buckets.py FASHION_MNIST parallel N [demo args...]
  compare_gradient_buckets.py FASHION_MNIST mpi N MPIEXEC [demo args...]

Exits 77 (skipped) when the demo finds no dataset.
"""

import re
import subprocess
import sys

STEP = re.compile(r"^step (\d+) loss=(\S+)$")
# 1 KiB: a bucket per parameter or two; 64 KiB: the small layers together;
# the default (1 MiB): everything in one or two buckets.
BUCKETS = ["1", "64", "1024"]


def losses(command):
    run = subprocess.run(command, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, timeout=600)
    if run.returncode == 77:
        sys.stderr.write(run.stderr)
        sys.exit(77)
    if run.returncode != 0:
        sys.stdout.write(run.stdout)
        sys.stderr.write(run.stderr)
        sys.exit("failed (exit %d): %s" % (run.returncode, " ".join(command)))
    values = {}
    for line in run.stdout.splitlines():
        match = STEP.match(line.strip())
        if match:
            values[int(match.group(1))] = match.group(2)
    if not values:
        sys.stdout.write(run.stdout)
        sys.exit("no 'step N loss=X' lines from: " + " ".join(command))
    return values


def main(argv):
    demo, mode, replicas = argv[1], argv[2], argv[3]
    if mode == "parallel":
        extra = argv[4:]
        command = [demo, "--parallel", replicas]
    elif mode == "mpi":
        mpiexec, extra = argv[4], argv[5:]
        command = [mpiexec, "--allow-run-as-root", "--oversubscribe", "-np",
                   replicas, demo]
    else:
        sys.exit("mode must be parallel or mpi")
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
