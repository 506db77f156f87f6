"""How many pieces subtok's unigram vocabularies share with sentencepiece's
(not a test; the figures go into README.md's "Differences from
sentencepiece" and docs/performance.md).

For each (corpus, vocab_size) both libraries train a unigram model with
the same options (sentencepiece 0.2.3 through its Python trainer, subtok
through ``subtok.train``); the overlap is the share of sentencepiece's
pieces that subtok's vocabulary also has. BPE, char and word vocabularies
are identical (tests/test_train*.py); unigram ones differ where float
near-ties in the EM / pruning scores fall the other way.

    python bench/unigram_overlap.py                      # the default table
    python bench/unigram_overlap.py --runs botchan:1000 ja:4000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "data" / "corpora"
DEFAULT_RUNS = ["botchan:1000", "botchan:4000", "en:4000", "de:4000", "fr:4000", "ru:4000",
                "ko:4000", "ar:4000", "hi:4000", "ja:2000", "zh:4000",
                "wagahaiwa_nekodearu:8000"]


def pieces_of(path: Path) -> list[str]:
    """The pieces of a .vocab file, in id order."""
    return [line.split("\t")[0] for line in path.read_text(encoding="utf-8").splitlines()]


def train_both(corpus: Path, vocab_size: int, work: Path) -> tuple[float, float, float]:
    """(overlap, subtok seconds, sentencepiece seconds) for one run."""
    import sentencepiece

    sys.path.insert(0, str(ROOT))
    import subtok

    options = dict(model_type="unigram", vocab_size=vocab_size, hard_vocab_limit=False)
    started = time.monotonic()
    sentencepiece.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(work / "ref"),
                                             minloglevel=2, **options)
    spm_seconds = time.monotonic() - started
    started = time.monotonic()
    subtok.train(str(corpus), str(work / "ours"), quiet=True, **options)
    ours_seconds = time.monotonic() - started
    theirs = pieces_of(work / "ref.vocab")
    ours = set(pieces_of(work / "ours.vocab"))
    return sum(p in ours for p in theirs) / len(theirs), ours_seconds, spm_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="*", default=DEFAULT_RUNS,
                        help="corpus:vocab_size pairs (corpus = a file stem in shared/data/corpora)")
    args = parser.parse_args()
    print("| corpus | vocab_size | shared pieces | subtok s | sentencepiece s |")
    print("|---|---:|---:|---:|---:|")
    for run in args.runs:
        name, size = run.split(":")
        with tempfile.TemporaryDirectory() as work:
            overlap, ours, theirs = train_both(CORPORA / (name + ".txt"), int(size), Path(work))
        print("| %s | %s | %.1f%% | %.1f | %.1f |" % (name, size, 100 * overlap, ours, theirs),
              flush=True)


if __name__ == "__main__":
    main()
