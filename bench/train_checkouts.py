"""Benchmark: the same trainings with two checkouts, interleaved (not a test).

For a refactor that must change nothing: runs ``python -m subtok train``
of checkout A and of checkout B (each from its own root, so each imports
its own ``subtok``) on one input, for each model type and ``num_threads``
value, ROUNDS times, alternating which checkout goes first. Prints the
wall time, CPU time and peak memory of every run (process tree, see
``_measure.py``), the load average before each round, the median and
spread per checkout, and whether every .model/.vocab pair is byte-identical
across checkouts and thread counts. The output prefix is the same path for
every run (it is recorded in the .model file); files are moved aside after
each run.

    python bench/train_checkouts.py A_ROOT B_ROOT INPUT [--rounds 3]
        [--types unigram,bpe] [--threads 1,2] [--vocab_size 8000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from _measure import measured_with_cpu


def train(root: Path, corpus: Path, prefix: Path, model_type: str, threads: int,
          vocab_size: int) -> tuple[float, float, float]:
    cmd = [sys.executable, "-m", "subtok", "train", "--input", str(corpus),
           "--model_prefix", str(prefix), "--model_type", model_type,
           "--vocab_size", str(vocab_size), "--num_threads", str(threads), "--quiet"]
    cwd = os.getcwd()
    os.chdir(root)  # python -m imports the checkout's subtok from the current directory
    try:
        return measured_with_cpu(cmd, "%s %s" % (root, model_type))
    finally:
        os.chdir(cwd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("input", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--types", default="unigram,bpe")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--vocab_size", type=int, default=8000)
    args = parser.parse_args()
    os.environ.pop("PYTHONPATH", None)
    roots = {"A": args.a.resolve(), "B": args.b.resolve()}
    corpus = args.input.resolve()
    configs = [(t, int(n)) for t in args.types.split(",") for n in args.threads.split(",")]
    times: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        prefix = tmp / "m"
        for number in range(args.rounds):
            print("round %d, load average %.2f %.2f %.2f" % ((number + 1,) + os.getloadavg()),
                  flush=True)
            order = "AB" if number % 2 == 0 else "BA"
            for model_type, threads in configs:
                for side in order:
                    run = train(roots[side], corpus, prefix, model_type, threads, args.vocab_size)
                    times.setdefault((side, model_type, threads), []).append(run)
                    keep = tmp / ("%s_%s_%d_%d" % (side, model_type, threads, number))
                    keep.mkdir()
                    for suffix in (".model", ".vocab"):
                        shutil.move(str(prefix.with_suffix(suffix)), keep / ("m" + suffix))
                    print("  %s %-7s threads=%d  wall %6.1f s  cpu %6.1f s  peak %5.0f MB"
                          % (side, model_type, threads, run[0], run[2], run[1]), flush=True)
        print("median (min-max): wall s, cpu s, peak MB")
        for (side, model_type, threads), runs in sorted(times.items(),
                                                        key=lambda kv: kv[0][1:] + kv[0][:1]):
            cells = []
            for column in (0, 2, 1):
                values = [run[column] for run in runs]
                cells.append("%6.1f (%.1f-%.1f)" % (statistics.median(values), min(values),
                                                   max(values)))
            print("  %s %-7s threads=%d  %s" % (side, model_type, threads, "  ".join(cells)))
        for model_type in args.types.split(","):
            files = sorted(tmp.glob("?_%s_*" % model_type))
            reference = [(files[0] / n).read_bytes() for n in ("m.model", "m.vocab")]
            same = all([(d / n).read_bytes() for n in ("m.model", "m.vocab")] == reference
                       for d in files)
            print("%s: %d runs, files %s" % (model_type, len(files),
                                             "all byte-identical" if same else "DIFFER"))


if __name__ == "__main__":
    main()
