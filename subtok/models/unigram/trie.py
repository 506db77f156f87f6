"""The piece table of the unigram model, encoder and trainer alike.

sentencepiece finds the pieces that start at a position with a double-array
trie (``Darts::DoubleArray::commonPrefixSearch`` in ``PopulateNodes``, and
``traverse`` one byte at a time in ``UnigramModel::EncodeOptimized``). Here
the trie is a dictionary holding every piece and every proper prefix of a
piece: walking the text one character at a time, one probe per length says
whether a piece ends there and whether a longer one may follow, and the
walk stops at the first string that no piece starts with.

One builder, :func:`prefix_table`, serves both users with their own
payloads: the encoder's :func:`piece_lookup` (id, score, whether a longer
piece exists) and the trainer's index table (the piece's index, -1 for a
prefix only; small, because the trainer's tables hold up to a million seed
pieces).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

P = TypeVar("P")
E = TypeVar("E")

#: The encoder's entry of a proper prefix that is not itself a piece: no id,
#: and a longer piece does exist. One shared tuple for the 58k prefixes of
#: a 32k model.
PREFIX_ONLY = (-1, 0.0, True)


def proper_prefixes(pieces: Iterable[str]) -> set[str]:
    """Every string that is a proper prefix of some piece (a piece or not).

    The set stays closed under taking prefixes, so a piece's walk down its
    prefixes stops at the first one already there: its shorter ones are
    there too.
    """
    found: set[str] = set()
    for piece in pieces:
        for end in range(len(piece) - 1, 0, -1):
            prefix = piece[:end]
            if prefix in found:
                break
            found.add(prefix)
    return found


def prefix_table(pieces: Mapping[str, P], prefix_entry: E,
                 entry: Callable[[P, bool], E] | None = None, *,
                 string_keyed: bool = False) -> dict[str, E]:
    """Every piece -> its entry, every other proper prefix -> ``prefix_entry``.

    A piece's entry is its payload, or ``entry(payload, longer)`` where
    ``longer`` says whether some piece extends it (the flag lets a walk
    stop at a piece without probing one character further).

    ``dict.fromkeys(a_set)`` (the quickest build) makes a table for keys of
    any type, whose lookups take a reference to every key they compare.
    ``string_keyed`` builds from an iterator instead: slower to build,
    quicker to search, and read by a forked worker without writing to the
    inherited keys (each such write copies the key's page).
    """
    prefixes = proper_prefixes(pieces)
    table: dict = dict.fromkeys(iter(prefixes) if string_keyed else prefixes, prefix_entry)
    if entry is None:
        table.update(pieces)
    else:
        for piece, payload in pieces.items():
            table[piece] = entry(payload, piece in prefixes)
    return table


def _with_longer(value: tuple[int, float], longer: bool) -> tuple[int, float, bool]:
    return value[0], value[1], longer


def piece_lookup(table: Mapping[str, tuple[int, float]]) -> dict[str, tuple[int, float, bool]]:
    """The encoder's table: piece -> (id, score, longer); a prefix that is
    not a piece -> :data:`PREFIX_ONLY` (id -1)."""
    return prefix_table(table, PREFIX_ONLY, _with_longer)


def index_table(pieces: Iterable[str]) -> dict[str, int]:
    """The trainer's table: piece -> its index in ``pieces``.

    Pieces only, no prefix entries: the trainer's units and pieces are
    short, so a scan bounded by the longest piece makes about as many
    lookups as one stopped at the first string no piece starts with (see
    :func:`~subtok.models.unigram.lattice.populate_nodes`), and the
    prefixes would add many keys to a table that every lattice worker
    holds. Every key is put in just as it is made, so the table's
    strings lie in memory in the order a dict frees them in. Only
    strings are keys, so lookups take no reference to the keys (see
    :func:`prefix_table`).
    """
    table: dict[str, int] = {}
    for index, piece in enumerate(pieces):
        table[piece] = index
    return table


def common_prefix_search(lookup: Mapping[str, tuple[int, float, bool]], text: str,
                         pos: int) -> list[tuple[int, int, float]]:
    """The pieces of ``lookup`` (a :func:`piece_lookup`) that start at
    ``pos`` of ``text``, as (length, id, score), shortest first."""
    found = []
    get = lookup.get
    end, n = pos + 1, len(text)
    while end <= n:
        entry = get(text[pos:end])
        if entry is None:
            break
        if entry[0] >= 0:
            found.append((end - pos, entry[0], entry[1]))
        if not entry[2]:
            break
        end += 1
    return found


__all__ = ["PREFIX_ONLY", "common_prefix_search", "index_table", "piece_lookup",
           "prefix_table", "proper_prefixes"]
