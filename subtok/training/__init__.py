"""Trainers, one module per model type, and their registry.

Every trainer is a function ``train(corpus, options, progress)`` taking a
:class:`~subtok.training.corpus.Corpus` (normalized, masked sentences plus
alphabet and meta pieces), the :class:`~subtok.training.spec.TrainerOptions`
and a :class:`~subtok.progress.Progress`, and returning the trained
NORMAL pieces as ``(piece, score)`` in output order. Meta pieces are placed
around them by :func:`subtok.training.api.train`.

The families of :data:`TOKENIZER_FILE_TYPES` (WordPiece,
byte-level BPE) read their corpus themselves: their ``train(options,
progress, lines)`` returns the files to write (see
:mod:`subtok.training.families`).

Modules are imported on first use, so importing subtok (or encoding) never
loads training code.
"""

from __future__ import annotations

import importlib
from typing import Callable

#: model_type -> module holding its ``train`` function.
TRAINERS: dict[str, str] = {
    "unigram": "subtok.models.unigram.trainer",
    "bpe": "subtok.models.bpe.trainer",
    "word": "subtok.models.word.trainer",
    "char": "subtok.models.char.trainer",
    "wordpiece": "subtok.models.wordpiece.trainer",
    "byte_bpe": "subtok.models.bytelevel.trainer",
}
#: Model types ``subtok train`` writes as Hugging Face / tiktoken files (a
#: tokenizer.json and friends) instead of a SentencePiece .model.
TOKENIZER_FILE_TYPES = ("wordpiece", "byte_bpe")


def get_trainer(model_type: str, function: str = "train") -> Callable:
    """The ``train(corpus, options, progress)`` function of ``model_type``
    (or another ``function`` of its trainer module)."""
    from subtok.errors import TrainerError
    name = TRAINERS.get(model_type.lower())
    if name is None:
        raise TrainerError('unknown model type "%s" (--model_type must be one of %s).'
                           % (model_type, ", ".join(TRAINERS)))
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        raise TrainerError("the %s trainer is not available in this build of subtok (%s is "
                           "missing)." % (model_type.lower(), name)) from None
    return getattr(module, function)


__all__ = ["TRAINERS", "TOKENIZER_FILE_TYPES", "get_trainer"]
