"""One line of spm_encode output: the pieces or ids of a sentence."""

from __future__ import annotations

import operator

_PIECE, _ID = operator.itemgetter(0), operator.itemgetter(1)


def format_pairs(pairs: list[tuple[str, int]], ids: bool) -> str:
    """Ids or pieces of ``(piece, id)`` pairs, joined by single spaces."""
    if ids:
        return " ".join(map(str, map(_ID, pairs)))
    return " ".join(map(_PIECE, pairs))


#: Unknown-edge flags of a word: it starts / ends with an unknown piece
#: that would merge with a neighbour's (no byte fallback).
STARTS, ENDS = 1, 2


def unknown_runs_stay_inside(edges) -> bool:
    """False if a word ending in an unknown piece precedes one starting so
    (``edges``: each word's STARTS / ENDS flags)."""
    previous_ends_unk = 0
    for flags in edges:
        if previous_ends_unk and flags & STARTS:
            return False
        previous_ends_unk = flags & ENDS
    return True


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
