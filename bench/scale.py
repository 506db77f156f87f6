"""Counting and training at scale (issue 19): time and peak memory.

Builds a corpus of ``--size`` bytes (default 2G) under ``--workdir``
(default /tmp) from ``../shared/data/corpora/gutenberg_en.txt``, repeating
its lines with line-level perturbations (a numbered variant of one word
per line, so the vocabulary keeps growing as a real web corpus's does),
then measures, each as a child process tree (sampled every 0.1 s: peak =
the largest sum of the tree's resident sizes, which counts pages a forked
worker shares with its parent once per process, and the largest sum of
their proportional set sizes, which counts them once):

* ``subtok count`` in one process, with ``--max_memory``;
* ``subtok count --scheduler local:2`` (if dask is installed), the file
  counted in byte ranges of ``--chunk_size``, and whether its output is
  byte-identical to the one-process count;
* ``subtok train`` from the counts;
* ``spm_train`` with ``--input_sentence_size`` (and, with ``--spm_full``,
  without it, which needs the whole corpus in memory).

``--runs`` picks the runs and their order; each result is appended to
``--results`` (JSON lines, with the load averages at its start and end) as
soon as it finishes, so a cut-off run still leaves the figures before it.
``--until HH:MM`` (UTC) stops any run still going at that time (status
``timeout``, with the peak so far).

The corpus and every output are deleted at the end. Not a test.

    nice -n 10 python bench/scale.py --size 2G --max_memory 512M
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import signal
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


def tree_pids(pid: int) -> list[int]:
    """``pid`` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(children.get(current, []))
    return found


def tree_memory(pid: int) -> tuple[int, int]:
    """(resident, proportional) bytes of ``pid``'s process tree: the sum of
    the processes' resident sizes, which counts the pages a forked worker
    shares with its parent once per process, and the sum of their
    proportional set sizes (``Pss`` of /proc/PID/smaps_rollup), which
    divides each shared page among the processes sharing it."""
    rss = pss = 0
    for current in tree_pids(pid):
        try:
            with open("/proc/%d/smaps_rollup" % current) as handle:
                for line in handle:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1]) * 1024
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
        except (OSError, ValueError):
            continue
    return rss, pss


def measure(name: str, command: list[str], results: Path | None = None,
            deadline: float | None = None) -> dict:
    """Run ``command``; wall time and the peak of the tree's resident size.

    Past ``deadline`` (epoch seconds) the whole tree is killed and the run
    recorded as a timeout with the peak so far.
    """
    load_start = os.getloadavg()
    started = time.time()
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    peak = peak_pss = 0
    timed_out = False
    while proc.poll() is None:
        rss, pss = tree_memory(proc.pid)
        peak, peak_pss = max(peak, rss), max(peak_pss, pss)
        if deadline is not None and time.time() > deadline:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            break
        time.sleep(0.1)
    err = proc.stderr.read().decode(errors="replace")
    result = {"name": name, "seconds": time.time() - started, "peak_mb": peak / 2**20,
              "peak_pss_mb": peak_pss / 2**20,
              "status": "timeout" if timed_out else proc.returncode,
              "load_start": load_start, "load_end": os.getloadavg(),
              "command": command}
    if proc.returncode and not timed_out and err.strip():
        result["error"] = err.strip().splitlines()[-1]
    print("%-34s %8.1f s  peak %8.1f MB (PSS %8.1f MB)  status %s  load %.1f->%.1f%s" % (
        name, result["seconds"], result["peak_mb"], result["peak_pss_mb"], result["status"],
        load_start[0], result["load_end"][0],
        ("  " + result["error"]) if "error" in result else ""), flush=True)
    record(results, result)
    return result


def record(results: Path | None, entry: dict) -> None:
    if results is not None:
        with open(results, "a") as handle:
            handle.write(json.dumps(entry) + "\n")


RUNS = ("count", "spm", "dask", "train", "spmfull")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="2G")
    parser.add_argument("--max_memory", default="512M")
    parser.add_argument("--model_type", default="bpe")
    parser.add_argument("--vocab_size", type=int, default=32000)
    parser.add_argument("--workdir", default=tempfile.gettempdir())
    parser.add_argument("--spm_sentences", type=int, default=2_000_000)
    parser.add_argument("--spm_full", action="store_true", help="same as adding spmfull to --runs")
    parser.add_argument("--no_dask", action="store_true", help="same as leaving dask out of --runs")
    parser.add_argument("--chunk_size", default="128M", help="subtok count --chunk_size (Dask)")
    parser.add_argument("--runs", default="count,spm,dask,train",
                        help="comma-separated, in order, from: " + ",".join(RUNS))
    parser.add_argument("--results", default=None, help="append each result here (JSON lines)")
    parser.add_argument("--until", default=None, help="UTC HH:MM: kill any run still going then")
    args = parser.parse_args()
    runs = [run for run in args.runs.split(",") if run]
    unknown = sorted(set(runs) - set(RUNS))
    if unknown:
        parser.error("unknown --runs: %s" % ",".join(unknown))
    if args.no_dask:
        runs = [run for run in runs if run != "dask"]
    if args.spm_full and "spmfull" not in runs:
        runs.append("spmfull")
    if ("train" in runs or "dask" in runs) and "count" not in runs:
        parser.error("train and dask need the count run")
    deadline = None
    if args.until:
        now = datetime.datetime.now(datetime.timezone.utc)
        hour, minute = map(int, args.until.split(":"))
        deadline = now.replace(hour=hour, minute=minute, second=0, microsecond=0).timestamp()
    results = Path(args.results) if args.results else None
    work = Path(tempfile.mkdtemp(prefix="subtok-scale-", dir=args.workdir))
    try:
        corpus = work / "corpus.txt"
        started = time.time()
        lines = build_corpus(corpus, parse_size(args.size))
        print("corpus: %d bytes, %d lines, built in %.1f s" % (corpus.stat().st_size, lines,
                                                             time.time() - started), flush=True)
        record(results, {"name": "corpus", "bytes": corpus.stat().st_size, "lines": lines,
                         "seconds": time.time() - started, "load": os.getloadavg()})
        subtok = [sys.executable, "-m", "subtok"]
        common = ["--model_type", args.model_type]
        spm = [sys.executable, "-c", "import sys, sentencepiece as s; "
               "s.SentencePieceTrainer.train(' '.join(sys.argv[1:]))"]
        for run in runs:
            if deadline is not None and time.time() > deadline:
                print("%s: not started, past --until" % run, flush=True)
                record(results, {"name": run, "status": "not started"})
                continue
            if run == "count":
                result = measure("subtok count (1 process)", subtok + [
                    "count", "--input", str(corpus), "--output", str(work / "counts.tsv"),
                    "--max_memory", args.max_memory, "--tmp_dir", str(work),
                    "--num_threads", "2"] + common, results, deadline)
                if result["status"] != 0:
                    break
                units = sum(1 for _ in open(work / "counts.tsv", "rb")) - 1
                print("distinct units: %d" % units, flush=True)
                record(results, {"name": "distinct units", "units": units})
            elif run == "dask":
                measure("subtok count --scheduler local:2", subtok + [
                    "count", "--input", str(corpus), "--output", str(work / "dask.tsv"),
                    "--max_memory", args.max_memory, "--tmp_dir", str(work),
                    "--scheduler", "local:2", "--chunk_size", args.chunk_size] + common,
                    results, deadline)
                same = (work / "dask.tsv").exists() and \
                    (work / "dask.tsv").read_bytes() == (work / "counts.tsv").read_bytes()
                print("dask counts byte-identical to the one-process counts: %s" % same, flush=True)
                record(results, {"name": "dask identical", "same": same})
                (work / "dask.tsv").unlink(missing_ok=True)
            elif run == "train":
                measure("subtok train (from counts)", subtok + [
                    "train", "--input", str(work / "counts.tsv"), "--input_format", "tsv",
                    "--model_prefix", str(work / "m"), "--vocab_size", str(args.vocab_size),
                    "--minloglevel=2", "--num_threads", "2"] + common, results, deadline)
            elif run == "spm":
                measure("spm_train --input_sentence_size=%d" % args.spm_sentences, spm + [
                    "--input=%s" % corpus, "--model_prefix=%s" % (work / "spm"),
                    "--vocab_size=%d" % args.vocab_size, "--model_type=%s" % args.model_type,
                    "--input_sentence_size=%d" % args.spm_sentences, "--num_threads=2",
                    "--minloglevel=2"], results, deadline)
            elif run == "spmfull":
                measure("spm_train (whole corpus)", spm + [
                    "--input=%s" % corpus, "--model_prefix=%s" % (work / "spmfull"),
                    "--vocab_size=%d" % args.vocab_size, "--model_type=%s" % args.model_type,
                    "--num_threads=2", "--minloglevel=2", "--train_extremely_large_corpus=true"],
                    results, deadline)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
