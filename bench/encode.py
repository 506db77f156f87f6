"""Benchmark: ``subtok encode`` vs sentencepiece 0.2.3 (not a test).

Times, in one run, on ../shared/data/corpora/gutenberg_en.txt (35 MB):
  * model load time (subtok) for each model;
  * encoding the corpus to ids with sentencepiece (one thread, line by line,
    in this process, timed again right before each subtok run) and with
    ``subtok encode`` (real CLI, 1 and 2 worker processes, output to a
    file);
  * the peak memory of subtok's whole process tree in the same runs,
    repeated with sampling (see _measure.py): sampling costs CPU, so the
    timed runs are not sampled;
  * sentencepiece encodes lines already in memory; before each timed
    subtok run the corpus, the model and the package are read again, so
    that no run waits on the disk (this VM pages cold pages out: runs
    showed 7-9% I/O wait where it had);
and prints the ratios against the issue's targets.

The subtok package the CLI imports is byte-compiled first, as ``pip
install`` leaves it: where PYTHONDONTWRITEBYTECODE is set (this sandbox
sets it), an uncompiled checkout would compile its sources again in every
timed run (about 50 ms).

    python bench/encode.py [--lines N] [--models llama2,maxtext_c4_unigram32k] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _measure import measured, read_corpus, timed

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CORPUS = DATA / "corpora" / "gutenberg_en.txt"
DEFAULT_MODELS = ["llama2", "maxtext_c4_unigram32k"]


def spm_time(model: Path, lines: list[bytes]) -> float:
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=str(model))
    start = time.perf_counter()
    for line in lines:
        sp.encode(line)
    return time.perf_counter() - start


def subtok_command(model: Path, corpus: Path, threads: int, out: Path) -> list[str]:
    return [sys.executable, "-m", "subtok", "encode", "--model", str(model), "--output_format=id",
            "--num_threads", str(threads), "--output", str(out), str(corpus)]


def warm_files(model: Path, corpus: Path) -> None:
    """Read what a subtok run reads, untimed (see the module docstring)."""
    model.read_bytes()
    corpus.read_bytes()
    subprocess.run([sys.executable, "-c", "import subtok.cli.app, subtok.cli.encode"], check=True)


def subtok_time(model: Path, corpus: Path, threads: int) -> float:
    """Wall time of the real CLI."""
    warm_files(model, corpus)
    with tempfile.TemporaryDirectory() as tmp:
        return timed(subtok_command(model, corpus, threads, Path(tmp) / "out.txt"),
                     "subtok encode")


def subtok_memory(model: Path, corpus: Path, threads: int) -> float:
    """Peak memory (MB) of the real CLI's whole process tree."""
    with tempfile.TemporaryDirectory() as tmp:
        return measured(subtok_command(model, corpus, threads, Path(tmp) / "out.txt"),
                        "subtok encode")[1]


def byte_compile() -> None:
    """Byte-compile the subtok package that ``python -m subtok`` imports
    from here (the same interpreter and working directory as the runs)."""
    code = ("import compileall, os, subtok; "
            "compileall.compile_dir(os.path.dirname(subtok.__file__), quiet=1)")
    subprocess.run([sys.executable, "-c", code], check=True)


def load_time(model: Path) -> float:
    code = ("import time,subtok;t=time.perf_counter();subtok.SentencePieceProcessor(%r);"
            "print(time.perf_counter()-t)" % str(model))
    runs = [float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                 text=True).stdout) for _ in range(3)]
    return min(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=0, help="use only the first N lines (0 = all)")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--repeat", type=int, default=1,
                        help="measure N times, interleaved, and report the median ratios "
                             "(this VM's speed drifts by 10-30%% between runs)")
    args = parser.parse_args()
    corpus, raw = read_corpus(CORPUS, args.lines)
    print("corpus: %s (%d lines, %.1f MB)" % (CORPUS.name, len(raw), sum(map(len, raw)) / 1e6))
    byte_compile()
    for name in args.models.split(","):
        model = DATA / "models" / (name + ".model")
        ratios1, ratios2, mems = [], [], []
        for _ in range(args.repeat):
            # sentencepiece is timed right before each subtok run: the VM's
            # speed drifts within a repeat too.
            ref1 = spm_time(model, raw)
            one = subtok_time(model, corpus, 1)
            ref2 = spm_time(model, raw)
            two = subtok_time(model, corpus, 2)
            mem1, mem2 = subtok_memory(model, corpus, 1), subtok_memory(model, corpus, 2)
            load = load_time(model)
            ratios1.append(one / ref1)
            ratios2.append(two / ref2)
            mems += [mem1, mem2]
            print("%-24s 1 proc %6.2fs vs spm %5.2fs (%.2fx, target <= 2.5x) %4.0f MB | "
                  "2 procs %6.2fs vs spm %5.2fs (%.2fx, target <= 1.3x) %4.0f MB | "
                  "load %.3fs (target <= 0.3s) | memory target <= 200 MB"
                  % (name, one, ref1, one / ref1, mem1, two, ref2, two / ref2, mem2, load),
                  flush=True)
        if args.repeat > 1:
            print("%-24s median of %d: 1 proc %.2fx, 2 procs %.2fx; largest tree %.0f MB"
                  % (name, args.repeat, statistics.median(ratios1), statistics.median(ratios2),
                     max(mems)))
    if corpus != CORPUS:
        os.unlink(corpus)


if __name__ == "__main__":
    main()
