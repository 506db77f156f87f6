"""Wall time and peak memory of a command and its whole process tree.

Shared by the benchmarks. Memory is the peak, sampled every 50 ms, of the
sum of Pss over the process and all its descendants (pages that forked
workers share are counted once), or the process's own ru_maxrss if larger.
Linux only (/proc).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(name))
    return children


def _pss_kb(pid: int) -> int:
    try:
        with open("/proc/%d/smaps_rollup" % pid, "rb") as handle:
            for line in handle:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_pss_parts(root: int) -> list[int]:
    """Pss (kB) of ``root`` and of each of its descendants, ``root`` first."""
    children = _children_map()
    tree = [root]
    index = 0
    while index < len(tree):
        tree.extend(children.get(tree[index], ()))
        index += 1
    return [_pss_kb(pid) for pid in tree]


def tree_pss_kb(root: int) -> int:
    """Sum of Pss (kB) over ``root`` and all its descendants."""
    return sum(tree_pss_parts(root))


class Sampler(threading.Thread):
    def __init__(self, pid: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kb = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak_kb = max(self.peak_kb, tree_pss_kb(self.pid))
            self.done.wait(self.interval)


def instruction_count(args: list[str], cwd: str | None = None) -> int:
    """Instructions a ``python ARGS`` process executes (valgrind's
    cachegrind without cache simulation: repeatable under any load)."""
    out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                          "--cachegrind-out-file=/dev/null", sys.executable, *args],
                         capture_output=True, text=True, check=True, cwd=cwd).stderr
    found = re.search(r"I\s+refs:\s+([\d,]+)", out)
    if found is None:
        sys.exit("bench: no instruction count in valgrind's output")
    return int(found.group(1).replace(",", ""))


def read_corpus(corpus, count: int = 0):
    """(file to encode, its lines as bytes): ``corpus`` itself, or, when
    ``count`` > 0, a temporary file of its first ``count`` lines, which the
    caller removes. Exits if the corpus is missing."""
    if not corpus.exists():
        sys.exit("bench: %s not found" % corpus)
    raw = corpus.read_bytes().split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    if not count:
        return corpus, raw
    del raw[count:]
    handle = tempfile.NamedTemporaryFile(delete=False, suffix=".txt")
    handle.write(b"\n".join(raw) + b"\n")
    handle.close()
    return type(corpus)(handle.name), raw


def timed(cmd: list[str], name: str) -> float:
    """Wall time (s) of ``cmd``, with no memory sampling: each sample of a
    tree's Pss costs about 4 ms of CPU (the kernel walks the processes'
    page tables, under their memory lock), 9% of a core at 50 ms, which
    a run that keeps both cores busy pays."""
    start = time.perf_counter()
    process = subprocess.run(cmd)
    elapsed = time.perf_counter() - start
    if process.returncode != 0:
        sys.exit("bench: %s failed (exit %d)" % (name, process.returncode))
    return elapsed


def measured(cmd: list[str], name: str) -> tuple[float, float]:
    """Wall time (s) and peak memory (MB) of ``cmd`` and its process tree
    (the time includes the sampling's cost, see :func:`timed`)."""
    return measured_with_cpu(cmd, name)[:2]


def measured_with_cpu(cmd: list[str], name: str, cwd: str | None = None) -> tuple[float, float, float]:
    """:func:`measured`, and the CPU time (s, user + system) of ``cmd`` and
    the descendants it waited for: on a loaded machine it varies much less
    than the wall time. ``cwd``: the directory to run ``cmd`` in."""
    start = time.perf_counter()
    process = subprocess.Popen(cmd, cwd=cwd)
    sampler = Sampler(process.pid)
    sampler.start()
    # wait4 gives this child's own ru_maxrss (its largest descendant's, too,
    # when they were waited for), not mixed with earlier runs.
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    sampler.done.set()
    sampler.join()
    if process.returncode != 0:
        sys.exit("bench: %s failed (exit %d)" % (name, process.returncode))
    return (elapsed, max(sampler.peak_kb, usage.ru_maxrss) / 1024.0,
            usage.ru_utime + usage.ru_stime)
