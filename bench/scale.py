"""Counting and training at scale (issue 19): time and peak memory.

Builds a corpus of ``--size`` bytes (default 2G) under ``--workdir``
(default /tmp) from ``../shared/data/corpora/gutenberg_en.txt``, repeating
its lines with line-level perturbations (a numbered variant of one word
per line, so the vocabulary keeps growing as a real web corpus's does),
then measures, each as a child process tree (peak = the largest sum of
the tree's resident sizes, sampled every 0.1 s):

* ``subtok count`` in one process, with ``--max_memory``;
* ``subtok count --scheduler local:2`` (if dask is installed), the file
  counted in byte ranges of ``--chunk_size``, and whether its output is
  byte-identical to the one-process count;
* ``subtok train`` from the counts;
* ``spm_train`` with ``--input_sentence_size`` (and, with ``--spm_full``,
  without it, which needs the whole corpus in memory).

The corpus and every output are deleted at the end. Not a test.

    nice -n 10 python bench/scale.py --size 2G --max_memory 512M
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "data" / "corpora" / "gutenberg_en.txt"


def parse_size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower()
    if text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def build_corpus(path: Path, size: int, seed: int = 0) -> int:
    """Perturbed copies of the source lines up to ``size`` bytes; returns lines."""
    lines = [line for line in SOURCE.read_bytes().split(b"\n") if line.strip()]
    rng = random.Random(seed)
    written = count = 0
    with open(path, "wb") as out:
        while written < size:
            block = []
            for line in lines:
                words = line.split(b" ")
                k = rng.randrange(len(words))
                words[k] = words[k] + b"%d" % rng.randrange(1 << 20)
                block.append(b" ".join(words))
            data = b"\n".join(block) + b"\n"
            out.write(data)
            written += len(data)
            count += len(block)
    return count


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        total += rss.get(current, 0)
        stack.extend(children.get(current, []))
    return total


def measure(name: str, command: list[str]) -> dict:
    """Run ``command``; wall time and the peak of the tree's resident size."""
    started = time.time()
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.1)
    err = proc.stderr.read().decode(errors="replace")
    result = {"name": name, "seconds": time.time() - started, "peak_mb": peak / 2**20,
              "status": proc.returncode}
    print("%-34s %8.1f s  peak %8.1f MB  status %d%s" % (
        name, result["seconds"], result["peak_mb"], proc.returncode,
        ("  " + err.strip().splitlines()[-1]) if proc.returncode and err.strip() else ""),
        flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="2G")
    parser.add_argument("--max_memory", default="512M")
    parser.add_argument("--model_type", default="bpe")
    parser.add_argument("--vocab_size", type=int, default=32000)
    parser.add_argument("--workdir", default=tempfile.gettempdir())
    parser.add_argument("--spm_sentences", type=int, default=2_000_000)
    parser.add_argument("--spm_full", action="store_true")
    parser.add_argument("--no_dask", action="store_true")
    parser.add_argument("--chunk_size", default="128M", help="subtok count --chunk_size (Dask)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="subtok-scale-", dir=args.workdir))
    try:
        corpus = work / "corpus.txt"
        started = time.time()
        lines = build_corpus(corpus, parse_size(args.size))
        print("corpus: %d bytes, %d lines, built in %.1f s" % (corpus.stat().st_size, lines,
                                                             time.time() - started), flush=True)
        subtok = [sys.executable, "-m", "subtok"]
        common = ["--model_type", args.model_type]
        measure("subtok count (1 process)", subtok + [
            "count", "--input", str(corpus), "--output", str(work / "counts.tsv"),
            "--max_memory", args.max_memory, "--tmp_dir", str(work), "--num_threads", "2"] + common)
        print("distinct units: %d" % (sum(1 for _ in open(work / "counts.tsv", "rb")) - 1))
        if not args.no_dask:
            measure("subtok count --scheduler local:2", subtok + [
                "count", "--input", str(corpus), "--output", str(work / "dask.tsv"),
                "--max_memory", args.max_memory, "--tmp_dir", str(work),
                "--scheduler", "local:2", "--chunk_size", args.chunk_size] + common)
            same = (work / "dask.tsv").exists() and \
                (work / "dask.tsv").read_bytes() == (work / "counts.tsv").read_bytes()
            print("dask counts byte-identical to the one-process counts: %s" % same, flush=True)
        measure("subtok train (from counts)", subtok + [
            "train", "--input", str(work / "counts.tsv"), "--input_format", "tsv",
            "--model_prefix", str(work / "m"), "--vocab_size", str(args.vocab_size),
            "--minloglevel=2", "--num_threads", "2"] + common)
        spm = [sys.executable, "-c", "import sys, sentencepiece as s; "
               "s.SentencePieceTrainer.train(' '.join(sys.argv[1:]))"]
        measure("spm_train --input_sentence_size=%d" % args.spm_sentences, spm + [
            "--input=%s" % corpus, "--model_prefix=%s" % (work / "spm"),
            "--vocab_size=%d" % args.vocab_size, "--model_type=%s" % args.model_type,
            "--input_sentence_size=%d" % args.spm_sentences, "--num_threads=2",
            "--minloglevel=2"])
        if args.spm_full:
            measure("spm_train (whole corpus)", spm + [
                "--input=%s" % corpus, "--model_prefix=%s" % (work / "spmfull"),
                "--vocab_size=%d" % args.vocab_size, "--model_type=%s" % args.model_type,
                "--num_threads=2", "--minloglevel=2", "--train_extremely_large_corpus=true"])
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
