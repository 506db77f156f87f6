"""Benchmark: the SentencePiece BPE trainer alone (not a test).

Loads the first ``--lines`` lines of gutenberg_en once, in this process,
then runs ``subtok.models.bpe.trainer.train`` on it and prints the
trainer's CPU time and a digest of the pieces (equal digests: same
pieces, same scores). With ``--load-only`` it stops after loading, so
that under cachegrind the difference of two runs' instruction counts is
the trainer's, which repeats under any load:

    python bench/bpe_trainer.py [--lines 20000] [--vocab_size 16000] [--source DIR]
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \\
        /root/.pyenv/versions/3.11.7/bin/python bench/bpe_trainer.py [--load-only]

``--source`` imports subtok from another checkout (a directory holding
``subtok/``).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "data" / "corpora" / "gutenberg_en.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--vocab_size", type=int, default=16000)
    parser.add_argument("--source", default=str(ROOT))
    parser.add_argument("--load-only", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, args.source)
    from subtok.models.bpe.trainer import train
    from subtok.progress import Progress
    from subtok.training.corpus import load_corpus
    from subtok.training.spec import TrainerOptions

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.txt"
        with open(CORPUS, encoding="utf-8") as src:
            path.write_text("".join(line for _, line in zip(range(args.lines), src)), encoding="utf-8")
        options = TrainerOptions.from_kwargs(input=[str(path)], model_prefix=str(Path(tmp) / "m"),
                                             model_type="bpe", vocab_size=args.vocab_size,
                                             num_threads=1).load_files()
        options.validate()
        progress = Progress(False, 2)
        corpus = load_corpus(options, progress, None)
    if args.load_only:
        return
    started = time.process_time()
    pieces = train(corpus, options, progress)
    spent = time.process_time() - started
    digest = hashlib.sha256(repr(pieces).encode()).hexdigest()[:16]
    print("trainer %.3f s CPU, %d pieces, digest %s" % (spent, len(pieces), digest))


if __name__ == "__main__":
    main()
