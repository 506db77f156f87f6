"""Benchmark: the unigram trainer's loading child, alone (not a test).

What ``subtok train --model_type unigram`` does in its first child for an
input of 2 MB or more: ``load_corpus(..., defer=True)`` then the trainer's
``_load_units`` (reading, normalizing in the workers, units and seed
entries), here in this process so that it can be timed by itself: wall
time, CPU time of the process and of the workers it waited for, and a
hash of what it hands to the trainer (units, seed entries, alphabet),
which must be the same for two checkouts. Checkouts run alternately,
``--repeat`` times:

    python bench/unigram_load.py [--lines N] [--threads N] [--repeat N]
                                 --source DIR [--source DIR ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent.parent / "shared" / "data" / "corpora" / "gutenberg_en.txt"

CHILD = r"""
import hashlib, resource, sys, time
path, threads = sys.argv[1], int(sys.argv[2])
from subtok.progress import Progress
from subtok.training.corpus import load_corpus
from subtok.training.spec import TrainerOptions
from subtok.models.unigram import trainer
options = TrainerOptions.from_kwargs(input=[path], model_prefix="unused", model_type="unigram",
                                     vocab_size=16000, num_threads=threads, minloglevel=2)
options = options.load_files()
def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
wall, used = time.time(), cpu()
units, entries, alphabet = trainer._load_units(load_corpus(options, Progress(False, 2), defer=True),
                                               options)
wall, used = time.time() - wall, cpu() - used
digest = hashlib.sha1(repr((units.text, list(units.lengths), list(units.weights),
                            sorted(entries.items()), list(alphabet.items()))).encode()).hexdigest()
print("%.3f %.3f %d %d %s" % (wall, used, len(units.lengths), len(entries), digest[:12]))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20000, help="first N lines (0 = all)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--source", action="append", required=True,
                        help="checkout holding subtok/ (repeatable)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = CORPUS
        if args.lines:
            path = Path(tmp) / "corpus.txt"
            with open(CORPUS, "rb") as source, open(path, "wb") as out:
                for number, line in enumerate(source):
                    if number == args.lines:
                        break
                    out.write(line)
        print("corpus: %s (%s lines, %.1f MB), num_threads %d; load %s"
              % (CORPUS.name, args.lines or "all", path.stat().st_size / 1e6, args.threads,
                 " ".join("%.2f" % x for x in os.getloadavg())))
        for _ in range(args.repeat):
            for source in args.source:
                env = dict(os.environ, PYTHONPATH=str(Path(source).resolve()))
                # (cwd: not a checkout, which "-c" would put first on sys.path)
                result = subprocess.run([sys.executable, "-c", CHILD, str(path), str(args.threads)],
                                        env=env, cwd=tmp, capture_output=True, text=True,
                                        check=True)
                wall, used, units, entries, digest = result.stdout.split()
                print("%-28s wall %6.2fs  cpu %6.2fs  units %s  entries %s  %s  | load %.2f"
                      % (source, float(wall), float(used), units, entries, digest,
                         os.getloadavg()[0]))


if __name__ == "__main__":
    main()
