"""CHAR trainer (``char_model_trainer.cc``, ``Trainer::Train``): the alphabet is the vocabulary.

Pieces are the alphabet characters by (count desc, code point asc), cut at
``vocab_size - #meta`` unless ``use_all_vocab``. The score is C++'s float
arithmetic ``logf(count) - logf(sum of alphabet counts)``. A CHAR model
never fails for a too-large vocab_size: the caller lowers vocab_size to the
real size (sentencepiece does the same).
"""

from __future__ import annotations

import math

from subtok.float32 import f32
from subtok.progress import Progress
from subtok.training.corpus import Corpus
from subtok.training.units import sorted_items
from subtok.training.spec import TrainerOptions


def logf(value: int) -> float:
    """C++ ``std::log(static_cast<float>(value))`` in float32."""
    x = f32(float(value))
    if x <= 0.0:
        return float("-inf")
    return f32(math.log(x))


def log_prob(count: int, logsum: float) -> float:
    return f32(logf(count) - logsum)


def train(corpus: Corpus, options: TrainerOptions, progress: Progress) -> list[tuple[str, float]]:
    limit = options.vocab_size - len(corpus.meta)
    logsum = logf(sum(corpus.alphabet.values()))
    pieces = []
    for char, count in sorted_items(corpus.alphabet.items()):
        if not options.use_all_vocab and len(pieces) >= limit:
            break
        pieces.append((char, log_prob(count, logsum)))
    return pieces


__all__ = ["train", "logf", "log_prob"]
