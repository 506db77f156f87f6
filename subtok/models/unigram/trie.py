"""The piece table of the unigram model, encoder and trainer alike.

sentencepiece finds the pieces that start at a position with a double-array
trie (``Darts::DoubleArray::commonPrefixSearch`` in ``PopulateNodes``, and
``traverse`` one byte at a time in ``UnigramModel::EncodeOptimized``). Here
the trie is a dictionary holding every piece and every proper prefix of a
piece: walking the text one character at a time, one probe per length says
whether a piece ends there and whether a longer one may follow, and the
walk stops at the first string that no piece starts with.

The encoder's table is :func:`piece_lookup` (id, score, whether a longer
piece exists). The trainer's, :func:`index_table`, holds the pieces only
(the trainer's tables hold up to a million seed pieces, and its units are
short: see there).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

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


def piece_lookup(table: Mapping[str, tuple[int, float]]) -> dict[str, tuple[int, float, bool]]:
    """The encoder's table: piece -> (id, score, longer), ``longer`` saying
    whether some piece extends it (a walk can then stop at a piece without
    probing one character further); a prefix that is not a piece ->
    :data:`PREFIX_ONLY` (id -1)."""
    prefixes = proper_prefixes(table)
    lookup: dict[str, tuple[int, float, bool]] = dict.fromkeys(prefixes, PREFIX_ONLY)
    for piece, (piece_id, score) in table.items():
        lookup[piece] = (piece_id, score, piece in prefixes)
    return lookup


def index_table(pieces: Iterable[str]) -> dict[str, int]:
    """The trainer's table: piece -> its index in ``pieces``.

    Pieces only, no prefix entries: the trainer's units and pieces are
    short, so a scan bounded by the longest piece makes about as many
    lookups as one stopped at the first string no piece starts with (see
    :func:`~subtok.models.unigram.lattice.populate_nodes`), and the
    prefixes would add many keys to a table that every lattice worker
    holds. Every key is put in just as it is made, so the table's
    strings lie in memory in the order a dict frees them in; built key by
    key (not ``dict.fromkeys`` of a set), a table of strings only is read
    by a forked worker without writing to the inherited keys.
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
           "proper_prefixes"]
