"""One line of spm_encode output: the pieces or ids of a sentence."""

from __future__ import annotations


def format_pairs(pairs: list[tuple[str, int]], ids: bool) -> str:
    """Ids or pieces of ``(piece, id)`` pairs, joined by single spaces."""
    if ids:
        return " ".join([str(i) for _, i in pairs])
    return " ".join([p for p, _ in pairs])
