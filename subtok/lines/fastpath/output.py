"""Output text: spm_encode's line of pieces or ids, and a cache of such texts."""

from __future__ import annotations

import operator

_PIECE, _ID = operator.itemgetter(0), operator.itemgetter(1)


def format_pairs(pairs: list[tuple[str, int]], ids: bool) -> str:
    """Ids or pieces of ``(piece, id)`` pairs, joined by single spaces."""
    if ids:
        return " ".join(map(str, map(_ID, pairs)))
    return " ".join(map(_PIECE, pairs))


class OutputTexts(dict):
    """Token or word -> its output text, a missing one computed by the
    lookup itself (``__missing__``): a line of cached words then costs one
    C-level ``" ".join(map(texts.__getitem__, words))``, and one that brings
    new words calls back only for those."""

    __slots__ = ("_compute",)

    def __init__(self, compute) -> None:
        super().__init__()
        self._compute = compute

    def __missing__(self, key: str):
        return self._compute(key)
