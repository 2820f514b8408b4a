"""What the data-parallel comparisons of the Fashion-MNIST demo share
(compare_data_parallel.py, compare_gradient_buckets.py): the replicated
command from their arguments, and the demo's per-step losses."""

import re
import subprocess
import sys

STEP = re.compile(r"^step (\d+) loss=(\S+)$")


def replicated_command(argv):
    """(command, extra demo args, label) from FASHION_MNIST parallel N
    [args...] or FASHION_MNIST mpi N MPIEXEC [args...]."""
    demo, mode, replicas = argv[1], argv[2], argv[3]
    if mode == "parallel":
        return [demo, "--parallel", replicas], argv[4:], \
            "--parallel %s" % replicas
    if mode == "mpi":
        return [argv[4], "--allow-run-as-root", "--oversubscribe", "-np",
                replicas, demo], argv[5:], "mpirun -np %s" % replicas
    sys.exit("mode must be parallel or mpi")


def losses(command, convert=str):
    """The demo's 'step N loss=X' lines as {N: convert(X)}; exits 77 when
    the demo skips (no dataset), and fails on an error or no such line."""
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
            values[int(match.group(1))] = convert(match.group(2))
    if not values:
        sys.stdout.write(run.stdout)
        sys.exit("no 'step N loss=X' lines from: " + " ".join(command))
    return values
