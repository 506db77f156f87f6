"""subtok's ``.vocab`` of the WordPiece and byte-level BPE trainers:
``token<TAB>score`` per line in id order, like a SentencePiece ``.vocab``,
where the score is what the token was added at (a pair count or a
likelihood gain). Unlike SentencePiece's ``%g``, a score is written
exactly (the shortest text that reads back as the same float), so gains
can be compared across runs."""

from __future__ import annotations

from collections.abc import Iterable


def score_text(score: float) -> str:
    """An integer plainly, anything else as ``repr`` of its float."""
    value = float(score)
    return "%d" % value if value.is_integer() else repr(value)


def scores_vocab(tokens: Iterable[str], scores: Iterable[float]) -> bytes:
    """``token<TAB>score`` per line, in id order."""
    return "".join("%s\t%s\n" % (token, score_text(score))
                   for token, score in zip(tokens, scores)).encode("utf-8")


__all__ = ["scores_vocab", "score_text"]
