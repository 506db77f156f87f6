"""The unigram piece table (trie) and the trainer's lattice pieces built on it.

The encoder's table is held against its definition computed the slow way
(every piece, every proper prefix, the "a longer piece exists" flag) on a
real 32k model and on random small vocabularies; the trainer's second-best
search (``piece_alternatives``) against an enumeration of every
segmentation, and its search of many pieces (``AlternativeSearch``, which
keeps the columns of a shared prefix) against the Viterbi of each piece's
lattice without its own node, ties included.
"""

from __future__ import annotations

import math

from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import MODELS_DIR
from subtok.models.unigram import trainer as unigram
from subtok.float32 import f32
from subtok.models.unigram.lattice import UNKNOWN, populate_nodes, unit_viterbi
from subtok.models.unigram.trie import (PREFIX_ONLY, common_prefix_search, index_table,
                                        piece_lookup)


def _slow_lookup(table: dict[str, tuple[int, float]]) -> dict[str, tuple[int, float, bool]]:
    prefixes = {piece[:end] for piece in table for end in range(1, len(piece))}
    expected = {prefix: PREFIX_ONLY for prefix in prefixes}
    for piece, (piece_id, score) in table.items():
        expected[piece] = (piece_id, score, piece in prefixes)
    return expected


def test_tables_of_a_real_model_match_their_definition():
    from subtok import SentencePieceProcessor
    model = SentencePieceProcessor(str(MODELS_DIR / "maxtext_c4_unigram32k.model")).model
    assert len(model.table) > 30000
    assert piece_lookup(model.table) == _slow_lookup(model.table)


words = st.text(alphabet="ab\u2581c", min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(words, min_size=1, max_size=25, unique=True), text=words,
       pos=st.integers(0, 5))
def test_prefix_search_finds_every_piece_starting_there(pieces, text, pos):
    table = {piece: (index, -float(index)) for index, piece in enumerate(pieces)}
    lookup = piece_lookup(table)
    assert lookup == _slow_lookup(table)
    pos = min(pos, len(text) - 1)
    expected = sorted((len(p), table[p][0], table[p][1]) for p in pieces
                      if text.startswith(p, pos))
    assert common_prefix_search(lookup, text, pos) == expected


def _segmentations(text: str, table: dict[str, int], scores, unk_score):
    """Every segmentation of ``text`` into pieces (one-character unknowns
    where no one-character piece exists) as (score, ids)."""
    if not text:
        yield 0.0, []
        return
    for end in range(1, len(text) + 1):
        head = text[:end]
        if head in table:
            score, ids = scores[table[head]], [table[head]]
        elif end == 1:
            score, ids = unk_score, [0]
        else:
            continue
        for rest_score, rest in _segmentations(text[end:], table, scores, unk_score):
            yield score + rest_score, ids + rest


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.text(alphabet="abc", min_size=1, max_size=5), min_size=2,
                       max_size=12, unique=True),
       seed_scores=st.lists(st.integers(-900, -10), min_size=12, max_size=12))
def test_piece_alternatives_is_the_best_segmentation_without_the_piece(pieces, seed_scores):
    # Scores in float32 steps far from ties (ties are decided by node order).
    entries = [(piece, score / 64.0) for piece, score in zip(pieces, seed_scores)]
    model = unigram._Model(entries)
    table = model.table
    for piece, own_score in entries:
        got = unigram.piece_alternatives(model, piece)
        if len(piece) == 1:
            assert got is None
            continue
        others = [(score, ids) for score, ids in _segmentations(piece, table, model.scores,
                                                                 model.unk_score)
                  if ids != [table[piece]]]
        best = max(score for score, _ in others)
        if sum(1 for score, _ in others if math.isclose(score, best, abs_tol=1e-9)) > 1:
            continue  # a tie between segmentations: decided by node order
        if best > own_score:
            assert got is False
        else:
            assert [ids for score, ids in others if score == best] == [got]


def _lattice_alternative(model, piece: str):
    """The search done on the whole lattice: ``populate_nodes`` without the
    piece's own node, then ``unit_viterbi`` (its node order breaks ties)."""
    if len(piece) == 1:
        return None
    own = model.table[piece]
    nodes = populate_nodes(piece, model.table.get, len(piece))
    nodes.remove((0, len(piece), own))
    path, best = unit_viterbi(nodes, len(piece), model.node_scores)
    if f32(best) > model.scores[own]:
        return False
    return [0 if k == UNKNOWN else k for k in reversed(path)]


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.text(alphabet="abc", min_size=1, max_size=7), min_size=2,
                       max_size=30, unique=True),
       seed_scores=st.lists(st.integers(-8, -1), min_size=30, max_size=30))
# "abcd" without itself: a + bcd, a + b + cd and a + b + c + d tie.
@example(pieces=["a", "b", "c", "d", "cd", "bcd", "abcd", "abc"],
         seed_scores=[-4, -4, -4, -4, -8, -12, -4, -20] + [-1] * 22)
def test_alternative_search_in_string_order_is_each_lattice_viterbi(pieces, seed_scores):
    # Few distinct scores: many ties, which the shared columns must break
    # as the lattice's node order does.
    entries = [(piece, score / 4.0) for piece, score in zip(pieces, seed_scores)]
    model = unigram._Model(entries)
    search = unigram.AlternativeSearch(model)
    for piece in sorted(pieces):
        assert search(piece) == _lattice_alternative(model, piece), piece


def test_trainer_nodes_put_an_unknown_node_where_no_character_piece_starts():
    table = index_table(["ab", "b", "abc"])
    assert populate_nodes("abcab", table.get, 3) == [
        (0, 1, UNKNOWN), (0, 2, 0), (0, 3, 2), (1, 2, 1), (2, 3, UNKNOWN),
        (3, 4, UNKNOWN), (3, 5, 0), (4, 5, 1)]
