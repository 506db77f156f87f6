"""The plain byte-pair merge, the specification the fast one is tested against.

As short as the rule it states (tiktoken keeps the same kind of reference
in ``tiktoken/_educational.py``): look at every adjacent pair, merge the
one whose concatenated bytes have the lowest rank (the leftmost on ties),
and start again until no pair has a rank. Quadratic in the chunk length;
never used for encoding.
"""

from __future__ import annotations


def plain_merge(ranks: dict[bytes, int], piece: bytes) -> list[bytes]:
    """The parts ``piece`` merges into."""
    parts = [bytes([byte]) for byte in piece]
    while True:
        best = None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            return parts
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]


def plain_encode(ranks: dict[bytes, int], chunks: list[str]) -> list[int]:
    """The tokens of already split text: each chunk merged on its own."""
    return [ranks[part] for chunk in chunks for part in plain_merge(ranks, chunk.encode("utf-8"))]
