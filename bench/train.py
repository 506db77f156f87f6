"""Benchmark: ``subtok train`` vs sentencepiece 0.2.3 (not a test).

Trains, in one run, on ../shared/data/corpora/gutenberg_en.txt (35 MB) with
vocab_size 32000, for each model type (unigram, BPE):
  * sentencepiece 0.2.3 (``SentencePieceTrainer.train(..., num_threads=N)``
    in a child Python process);
  * subtok (``python -m subtok train ... --num_threads N``, the real CLI);
each with its wall time, CPU time (user + system of the process and the
workers it waited for, which a loaded machine disturbs less than the wall
time) and peak memory, and prints the ratios against issue 19's targets
(BPE <= 3x sentencepiece's time, unigram <= 2x, unigram peak memory <=
half of sentencepiece's) and whether the two vocabularies are the same.

Memory: subtok's worker processes count. Every child is sampled every
50 ms; the sample is the sum of the proportional set size (Pss, from
/proc/PID/smaps_rollup) of the child and all its descendants, so pages a
forked worker shares with its parent are counted once. "peak" is the
largest sample, or the largest single-process ru_maxrss if that is larger
(a lower bound the sampler cannot miss).

    python bench/train.py [--lines N] [--types unigram,bpe] [--threads N] [--vocab_size V]
                          [--source DIR ...] [--keep DIR]

``--source`` runs ``python -m subtok`` in each given checkout (a directory
holding ``subtok/``) after sentencepiece, so that versions compare in one
run (default: this checkout).
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import sys
import tempfile
from pathlib import Path

from _measure import measured_with_cpu

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CORPUS = DATA / "corpora" / "gutenberg_en.txt"
VOCAB_SIZE = 32000
TARGETS = {"unigram": 2.0, "bpe": 3.0}
#: Issue 19 sets a memory target for unigram only.
MEMORY_TARGETS = {"unigram": 0.5}

SPM_CODE = """
import sys, sentencepiece as spm
spm.SentencePieceTrainer.train(input=sys.argv[1], model_prefix=sys.argv[2], model_type=sys.argv[3],
                               vocab_size=int(sys.argv[4]), num_threads=int(sys.argv[5]),
                               minloglevel=2)
"""


# ----------------------------------------------------------------------------


def vocab(path: Path) -> list[str]:
    return [line.split("\t")[0] for line in path.read_text(encoding="utf-8").splitlines()]


def compare(ref: list[str], got: list[str]) -> str:
    if ref == got:
        return "identical"
    common = len(set(ref) & set(got))
    return "differs (%d/%d pieces in common)" % (common, len(ref))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=0, help="use only the first N lines (0 = all)")
    parser.add_argument("--types", default="unigram,bpe")
    parser.add_argument("--threads", type=int, default=2, help="num_threads for both (default 2)")
    parser.add_argument("--vocab_size", type=int, default=VOCAB_SIZE)
    parser.add_argument("--source", action="append", help="checkout to run subtok from (repeatable)")
    parser.add_argument("--keep", help="copy every trained model and vocab into this directory "
                        "(N_KIND.model, N the --source's number), e.g. to cmp two checkouts' models")
    args = parser.parse_args()
    if not CORPUS.exists():
        sys.exit("bench: %s not found" % CORPUS)
    # Bytecode as an installed package has it: where PYTHONDONTWRITEBYTECODE
    # is set, a checkout's edited modules would otherwise be compiled again
    # at every start, inside the timed run.
    for source in args.source or [str(ROOT)]:
        compileall.compile_dir(os.path.join(source, "subtok"), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        corpus = CORPUS
        # Read a line at a time: a child's ru_maxrss starts from its
        # parent's (it is kept across fork and exec), so this process
        # holding the whole corpus would raise every measured peak to it.
        lines = size = 0
        with open(CORPUS, "rb") as source:
            if args.lines:
                corpus = tmp / "corpus.txt"
                with open(corpus, "wb") as out:
                    for line in source:
                        if lines == args.lines:
                            break
                        if not line.endswith(b"\n"):
                            line += b"\n"
                        out.write(line)
                        lines += 1
                        size += len(line)
            else:
                for line in source:
                    lines += line.endswith(b"\n")
                    size += len(line)
        print("corpus: %s (%d lines, %.1f MB), vocab_size %d, num_threads %d; load %s"
              % (CORPUS.name, lines, size / 1e6, args.vocab_size, args.threads,
                 " ".join("%.2f" % x for x in os.getloadavg())))
        print("memory: peak over the process tree of the sum of Pss (/proc/PID/smaps_rollup, "
              "sampled every 50 ms), at least the largest ru_maxrss")
        for kind in args.types.split(","):
            ref_prefix, our_prefix = tmp / ("spm_" + kind), tmp / ("subtok_" + kind)
            ref_time, ref_mem, ref_cpu = measured_with_cpu(
                [sys.executable, "-c", SPM_CODE, str(corpus), str(ref_prefix), kind,
                 str(args.vocab_size), str(args.threads)], "sentencepiece " + kind)
            for number, source in enumerate(args.source or [str(ROOT)]):
                our_time, our_mem, our_cpu = measured_with_cpu(
                    [sys.executable, "-m", "subtok", "train", "--input", str(corpus),
                     "--model_prefix", str(our_prefix), "--model_type", kind,
                     "--vocab_size", str(args.vocab_size), "--num_threads", str(args.threads),
                     "--minloglevel", "2", "--no-progress"], "subtok train " + kind, cwd=source)
                same = compare(vocab(ref_prefix.with_suffix(".vocab")),
                               vocab(our_prefix.with_suffix(".vocab")))
                if args.keep:
                    for suffix in (".model", ".vocab"):
                        shutil.copyfile(our_prefix.with_suffix(suffix), Path(args.keep) / (
                            "%d_%s%s" % (number, kind, suffix)))
                memory_target = (", target <= %gx" % MEMORY_TARGETS[kind]
                                 if kind in MEMORY_TARGETS else "")
                print("%-8s spm %6.2fs (cpu %6.2fs) %5.0f MB | subtok %6.2fs (%.2fx, target <= %gx) "
                      "cpu %6.2fs (%.2fx) %5.0f MB (%.2fx%s) | vocab %s | load %s%s"
                      % (kind, ref_time, ref_cpu, ref_mem, our_time, our_time / ref_time,
                         TARGETS[kind], our_cpu, our_cpu / ref_cpu, our_mem, our_mem / ref_mem,
                         memory_target, same, " ".join("%.2f" % x for x in os.getloadavg()),
                         " | " + source if args.source else ""), flush=True)


if __name__ == "__main__":
    main()
