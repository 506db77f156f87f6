"""Benchmark: peak memory of the likelihood WordPiece merge phase alone (not a test).

``bench/train_families.py`` measures the whole training (reading, counting
workers, merging, writing) against tokenizers; this isolates the merging,
where the likelihood trainer's peak is, so that a change to its data
structures can be weighed without the noise of the rest:

1. a child process counts the BERT words of the corpus (the trainer's own
   ``count_words``) and pickles them to a temporary file;
2. this process loads them and runs ``likelihood_vocab`` (alphabet,
   symbol words, merges); it prints its resident set size before loading
   them, its peak (VmHWM) after, the CPU time of loading and merging, and a
   digest of the tokens and scores (the same digest before and after a
   change: the same output).

The peak includes the interpreter and subtok's imports; the word counts
are handed over as the real trainer hands them (no other name holds them,
so ``likelihood_vocab`` frees them once it has its sorted word list).

    python bench/wordpiece_memory.py [--input FILE,...] [--vocab_size 32000] [--lowercase 1]
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUTENBERG = ROOT.parent / "shared" / "data" / "corpora" / "gutenberg_en.txt"

COUNT_CODE = """
import pickle, sys
from subtok.models.wordpiece.bert_words import WordCounter
from subtok.models.wordpiece.trainer import bert_normalizer, count_words
from subtok.progress import Progress
from subtok.training.spec import TrainerOptions
files, lowercase, out = sys.argv[1].split(","), sys.argv[2] == "1", sys.argv[3]
opts = TrainerOptions.from_kwargs(input=files, model_type="wordpiece", lowercase=lowercase,
                                  num_threads=2)
words = count_words(opts, Progress(False), None, WordCounter(bert_normalizer(opts)))
with open(out, "wb") as handle:
    pickle.dump(dict(words), handle)
"""


def status_mb(field: str) -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", default=str(GUTENBERG))
    parser.add_argument("--vocab_size", type=int, default=32000)
    parser.add_argument("--lowercase", default="1")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        counts = Path(tmp) / "words.pkl"
        subprocess.run([sys.executable, "-c", COUNT_CODE, args.input, args.lowercase, str(counts)],
                       check=True, cwd=ROOT)
        sys.path.insert(0, str(ROOT))
        from collections import Counter

        from subtok.models.wordpiece.trainer import DEFAULT_SPECIAL_TOKENS, likelihood_vocab
        from subtok.training.spec import TrainerOptions
        opts = TrainerOptions.from_kwargs(input=["-"], model_type="wordpiece",
                                          vocab_size=args.vocab_size)
        with open(counts, "rb") as handle:
            start = status_mb("VmRSS")
            cpu = time.process_time()
            tokens, scores = likelihood_vocab(Counter(pickle.load(handle)), opts,
                                              list(DEFAULT_SPECIAL_TOKENS))
            cpu = time.process_time() - cpu
    digest = hashlib.sha256(repr((tokens, scores)).encode("utf-8")).hexdigest()[:16]
    print("%d tokens; RSS before loading the counts %.1f MB, peak %.1f MB; CPU %.1f s; "
          "output digest %s" % (len(tokens), start, status_mb("VmHWM"), cpu, digest))


if __name__ == "__main__":
    main()
