"""Benchmark: ``subtok encode`` on a tiktoken rank file vs tiktoken 0.14 (not a test).

On ../shared/data/corpora/gutenberg_en.txt (35 MB) with cl100k_base:
  * tiktoken, one thread: ``encode_ordinary`` line by line in this process
    (lines already decoded in memory, the encoding already built);
  * tiktoken, two threads: ``encode_ordinary_batch(lines, num_threads=2)``;
  * ``subtok encode --model cl100k_base.tiktoken --output_format=id`` (the
    real CLI: start-up, loading the rank file, reading the corpus, writing
    the ids to a file), with 1 and 2 worker processes;
and prints the ratios against the issue's targets (<= 1.5x tiktoken on one
thread; <= 1.0x with --num_threads 2 against tiktoken on two threads),
with the CPU time each took and the machine's load average, which says
how much of the wall time other processes took. Each tiktoken run is timed
right before the subtok run it is compared with.

The CLI's output is checked against tiktoken's once, before timing.

    python bench/tiktoken.py [--lines N] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CORPUS = DATA / "corpora" / "gutenberg_en.txt"
RANKS = DATA / "interop" / "cl100k_base.tiktoken"
from _measure import read_corpus  # noqa: E402  (bench/ is this script's directory)

# This file is named tiktoken.py: its own directory must not shadow the
# real package once _measure is in.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "helpers")]


def oracle():
    from _interop import tiktoken_cl100k
    return tiktoken_cl100k()


def cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tiktoken_run(encoding, lines: list[str], threads: int) -> tuple[float, float]:
    """(wall, cpu) seconds of encoding every line."""
    cpu, start = cpu_self(), time.perf_counter()
    if threads == 1:
        for line in lines:
            encoding.encode_ordinary(line)
    else:
        encoding.encode_ordinary_batch(lines, num_threads=threads)
    return time.perf_counter() - start, cpu_self() - cpu


def subtok_command(corpus: Path, threads: int, out: Path) -> list[str]:
    return [sys.executable, "-m", "subtok", "encode", "--model", str(RANKS), "--output_format=id",
            "--num_threads", str(threads), "--output", str(out), str(corpus)]


def subtok_run(corpus: Path, threads: int) -> tuple[float, float]:
    """(wall, cpu of the whole process tree) seconds of the real CLI."""
    with tempfile.TemporaryDirectory() as tmp:
        cpu, start = cpu_children(), time.perf_counter()
        subprocess.run(subtok_command(corpus, threads, Path(tmp) / "ids.txt"), check=True)
        return time.perf_counter() - start, cpu_children() - cpu


def check_output(encoding, corpus: Path, lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ids.txt"
        subprocess.run(subtok_command(corpus, 2, out), check=True)
        expected = "".join(" ".join(map(str, encoding.encode_ordinary(line))) + "\n" for line in lines)
        if out.read_text() != expected:
            sys.exit("bench: subtok's ids differ from tiktoken's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=0, help="use only the first N lines (0 = all)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    corpus, raw = read_corpus(CORPUS, args.lines)
    lines = [line.decode("utf-8") for line in raw]
    encoding = oracle()
    print("corpus: %s (%d lines, %.1f MB); %d cores" % (CORPUS.name, len(lines),
                                                         sum(map(len, raw)) / 1e6, os.cpu_count()))
    subprocess.run([sys.executable, "-c", "import compileall, subtok, os; compileall.compile_dir("
                    "os.path.dirname(subtok.__file__), quiet=1)"], check=True)
    check_output(encoding, corpus, lines)
    ratios1, ratios2 = [], []
    for _ in range(args.repeat):
        load = os.getloadavg()[0]
        ref1 = tiktoken_run(encoding, lines, 1)
        one = subtok_run(corpus, 1)
        ref2 = tiktoken_run(encoding, lines, 2)
        two = subtok_run(corpus, 2)
        ratios1.append(one[0] / ref1[0])
        ratios2.append(two[0] / ref2[0])
        print("1 thread: subtok %6.2fs (cpu %5.2fs) vs tiktoken %5.2fs (cpu %5.2fs) = %.2fx "
              "(target <= 1.5x) | 2: subtok %6.2fs (cpu %5.2fs) vs tiktoken %5.2fs (cpu %5.2fs) "
              "= %.2fx (target <= 1.0x) | load average %.1f -> %.1f"
              % (one[0], one[1], ref1[0], ref1[1], ratios1[-1], two[0], two[1], ref2[0], ref2[1],
                 ratios2[-1], load, os.getloadavg()[0]), flush=True)
    if args.repeat > 1:
        print("median of %d: 1 thread %.2fx, 2 threads %.2fx"
              % (args.repeat, statistics.median(ratios1), statistics.median(ratios2)))
    if corpus != CORPUS:
        os.unlink(corpus)


if __name__ == "__main__":
    main()
