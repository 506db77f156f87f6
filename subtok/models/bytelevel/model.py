"""Byte-level BPE as tiktoken does it: merge by the rank of the merged bytes.

A rank file lists byte strings with their ranks (= token ids). A chunk of
text (one match of the split pattern) is encoded by starting from its
single bytes and repeatedly merging the adjacent pair whose *concatenated
bytes* have the lowest rank, the leftmost such pair on ties, until no
adjacent pair concatenates to a ranked string (tiktoken ``src/lib.rs``,
``byte_pair_merge``). No merge list is consulted: which two tokens made a
string does not matter, only the string.

Two implementations of the same rule, chosen by chunk length as tiktoken
does: short chunks keep the pair ranks in a list and let C-level ``min``
/ ``index`` find the next merge (quadratic, but in C and on a few bytes);
long chunks (a 100 KB run of dashes is one chunk) use a heap with stale
entries skipped, as tiktoken's ``_byte_pair_merge_large``. The plain
reference is :mod:`subtok.models.bytelevel.reference`.
"""

from __future__ import annotations

import heapq
from itertools import repeat

from subtok.errors import EncodeError

#: Above every real rank: "these two cannot merge".
NO_RANK = 1 << 62
#: Chunks of at least this many bytes take the heap (tiktoken's threshold).
LARGE_CHUNK = 100
#: byte value -> that byte as a bytes object.
SINGLE_BYTES = [bytes([value]) for value in range(256)]


def merge_short(ranks: dict[bytes, int], piece: bytes) -> list[bytes]:
    """The parts ``piece`` merges into (quadratic; for short pieces)."""
    get = ranks.get
    parts = list(map(SINGLE_BYTES.__getitem__, piece))
    pair_ranks = list(map(get, map(bytes.__add__, parts, parts[1:]), repeat(NO_RANK)))
    while pair_ranks:
        best = min(pair_ranks)
        if best == NO_RANK:
            break
        i = pair_ranks.index(best)  # the leftmost of equal ranks
        parts[i] += parts.pop(i + 1)
        del pair_ranks[i]
        if i < len(pair_ranks):
            pair_ranks[i] = get(parts[i] + parts[i + 1], NO_RANK)
        if i:
            pair_ranks[i - 1] = get(parts[i - 1] + parts[i], NO_RANK)
    return parts


def merge_long(ranks: dict[bytes, int], piece: bytes) -> list[bytes]:
    """The parts ``piece`` merges into (n log n; for long pieces).

    Parts are a linked list of start offsets: ``end[s]`` is where the part
    starting at ``s`` ends, ``prev[s]`` where the part before it starts.
    ``pending[s]`` is the rank of merging the part at ``s`` with its right
    neighbour; a heap entry whose rank no longer equals it is stale.
    """
    get = ranks.get
    n = len(piece)
    end = list(range(1, n + 1))
    prev = list(range(-1, n - 1))
    pending = [get(piece[i:i + 2], NO_RANK) for i in range(n - 1)] + [NO_RANK]
    heap = [(rank, i) for i, rank in enumerate(pending) if rank != NO_RANK]
    heapq.heapify(heap)
    push, pop = heapq.heappush, heapq.heappop
    while heap:
        rank, left = pop(heap)
        if pending[left] != rank:
            continue
        right = end[left]
        stop = end[right]
        end[left] = stop
        pending[right] = NO_RANK
        pending[left] = NO_RANK
        if stop < n:
            prev[stop] = left
            rank = get(piece[left:end[stop]], NO_RANK)
            if rank != NO_RANK:
                pending[left] = rank
                push(heap, (rank, left))
        if left:
            before = prev[left]
            rank = get(piece[before:stop], NO_RANK)
            pending[before] = rank
            if rank != NO_RANK:
                push(heap, (rank, before))
    parts = []
    start = 0
    while start < n:
        parts.append(piece[start:end[start]])
        start = end[start]
    return parts


def merge_parts(ranks: dict[bytes, int], piece: bytes) -> list[bytes]:
    """The parts ``piece`` merges into."""
    if len(piece) < LARGE_CHUNK:
        return merge_short(ranks, piece)
    return merge_long(ranks, piece)


def encode_piece(ranks: dict[bytes, int], piece: bytes) -> tuple[int, ...]:
    """The ranks of the tokens of one chunk's bytes. A chunk that is itself
    a token is that token (the merges would reach it, tiktoken skips them)."""
    whole = ranks.get(piece)
    if whole is not None:
        return (whole,)
    try:
        return tuple(map(ranks.__getitem__, merge_parts(ranks, piece)))
    except KeyError as exc:
        raise EncodeError("the byte %r has no rank in this encoding, so %r cannot be encoded."
                          % (exc.args[0], piece)) from None
