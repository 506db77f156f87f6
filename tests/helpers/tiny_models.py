"""Tiny hand-made SentencePiece models, built with subtok's own writer.

Shared by the oracle tests of every model type and by unit tests that need
a model without the shared data: ``make`` turns (piece, score, type)
entries into serialized model bytes; ``lines_of`` gives the CLI's line
cache for a processor, kept so its caches persist across a test's lines.
"""

from __future__ import annotations

import weakref

from subtok import SentencePieceProcessor
from subtok.formats.sentencepiece import ModelData, build_proto
from subtok.lines.fastpath.lines import LineCache
from subtok.vocab import PieceType, byte_piece


_LINE_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def lines_of(processor: SentencePieceProcessor) -> LineCache:
    """The CLI line cache that encodes ``processor``'s lines (made on first
    use and kept, so its caches persist across a test's lines)."""
    found = _LINE_CACHES.get(processor)
    if found is None:
        found = _LINE_CACHES[processor] = LineCache(processor)
    return found


N, U, C, D, X, B = (PieceType.NORMAL, PieceType.UNKNOWN, PieceType.CONTROL,
                    PieceType.USER_DEFINED, PieceType.UNUSED, PieceType.BYTE)
S = "\u2581"
TYPE_IDS = {"unigram": 1, "bpe": 2, "word": 3, "char": 4}


def make(entries, model_type="unigram", byte_fallback=False, add_dummy_prefix=True,
         remove_extra_whitespaces=True, suffix=False, charsmap=b""):
    """entries: (piece, score, type). Returns serialized model bytes."""
    entries = list(entries)
    if byte_fallback:
        entries += [(byte_piece(b), 0.0, B) for b in range(256)]
    data = ModelData([e[0] for e in entries], [e[1] for e in entries],
                     [int(e[2]) for e in entries], model_type=model_type)
    trainer = {"model_type": TYPE_IDS[model_type], "byte_fallback": byte_fallback,
               "treat_whitespace_as_suffix": suffix}
    normalizer = {"name": "test", "add_dummy_prefix": add_dummy_prefix,
                  "remove_extra_whitespaces": remove_extra_whitespaces}
    if charsmap:
        normalizer["precompiled_charsmap"] = charsmap
    return build_proto(data, trainer, normalizer).SerializeToString()


META = [("<unk>", 0.0, U), ("<s>", 0.0, C), ("</s>", 0.0, C)]
