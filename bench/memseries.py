"""Memory over time of a command's process tree (not a test).

Runs the command and prints, every 0.1 s, the time since the start, the
sum of the proportional set size (Pss, /proc/PID/smaps_rollup) over the
command's process and all its descendants, and each process's Pss (the
command first, then its descendants in the order they are found), in MB:

    python bench/memseries.py python -m subtok train --input G --model_prefix /tmp/m \\
        --model_type unigram --vocab_size 16000 --num_threads 2 --no-progress

A page shared by several processes counts once in the sum, split between
them in the per-process figures. Linux only.
"""

from __future__ import annotations

import subprocess
import sys
import time

from _measure import tree_pss_parts


def main() -> None:
    command = sys.argv[1:]
    if not command:
        sys.exit(__doc__)
    started = time.time()
    process = subprocess.Popen(command)
    while process.poll() is None:
        parts = [kb // 1024 for kb in tree_pss_parts(process.pid)]
        print("%5.2f total %4d MB  %s" % (time.time() - started, sum(parts), parts), flush=True)
        time.sleep(0.1)
    sys.exit(process.returncode)


if __name__ == "__main__":
    main()
