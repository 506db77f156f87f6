"""WORD trainer (``word_model_trainer.cc``, ``Trainer::Train``): the most frequent whole words.

Words come from ``SplitIntoWords`` with the *default* flags (prefix "▁",
no whitespace-only merging) whatever the trainer flags say, because the
WORD encoder splits that way too. Words are sorted by (count desc, word
asc); words containing U+2585 (rare characters, meta-piece boundaries) are
skipped but still count in the total; the first ``vocab_size - #meta`` are
kept unless ``use_all_vocab``. Score: ``logf(count) - logf(total)`` in
float32. There is no length or validity check on words.
"""

from __future__ import annotations

from subtok.models.char.trainer import log_prob, logf
from subtok.symbols import UNK_CHAR
from subtok.progress import Progress
from subtok.training.corpus import Corpus
from subtok.training.spec import TrainerOptions


def train(corpus: Corpus, options: TrainerOptions, progress: Progress) -> list[tuple[str, float]]:
    words = corpus.units  # counted while loading (corpus.training_units)
    limit = options.vocab_size - len(corpus.meta)
    logsum = logf(sum(count for _, count in words))
    pieces = []
    for word, count in words:
        if UNK_CHAR in word:
            continue
        if not options.use_all_vocab and len(pieces) >= limit:
            break
        pieces.append((word, log_prob(count, logsum)))
    return pieces


__all__ = ["train"]
