"""Unigram language model segmentation (Viterbi over a lattice).

The lattice has one position per character of the normalized text. At each
position every vocabulary piece of the normal map that starts there becomes
a node (UNUSED pieces excepted), shortest first. If no one-character node
starts there, an unknown node of one character is added with score
``min(NORMAL scores) - 10``. USER_DEFINED nodes score ``0.1 * bytes - 0.1``
(what sentencepiece 0.2.3 does, whatever the other scores are).

Viterbi is computed the way sentencepiece does it, in float32: each node
picks, among the nodes ending where it begins (in insertion order, i.e. the
longest first), the one maximizing ``float32(acc + score)``; the first wins
a tie. Summing in doubles instead changes the result on near-ties.

Caching per word is therefore subtle: a word's decisions computed alone
(starting from accumulated score 0) may differ from the same word computed
inside a sentence whose accumulated score ``A`` shifts every sum and thus
its float32 rounding. For every word we record the smallest gap between the
best and second-best candidate at any node, and turn it into a bound on
``|A|`` below which rounding cannot flip any decision. When a sentence's
accumulated score stays below the bound of all its words (almost always),
cached results are exact. Otherwise the affected words are recomputed in
context, starting from the exact float32 accumulated score, which is known
because all earlier decisions were robust.
"""

from __future__ import annotations

import struct

from ..vocab import PieceType, Vocabulary
from .base import Model, WordEncoding

_F32 = struct.Struct("<f")

# Rounding-error budget: a float32 sum of k terms whose partial sums stay
# below M in magnitude is off by at most k * M * 2**-24; comparing two such
# sums computed from two different offsets needs four of those, and we keep
# a factor 2 spare.
_ERROR_SCALE = 2.0 ** -21


def f32(value: float) -> float:
    """Round a Python float to the nearest float32 (ties to even)."""
    return _F32.unpack(_F32.pack(value))[0]


class _CharTrie(dict):
    """Pieces as a character trie: char -> (children, (id, score) or None).

    Walking it one character at a time finds every piece starting at a
    position without building or hashing a substring per length. The
    branch under each first character is built the first time that
    character is looked up, so loading a model stays cheap and a text only
    pays for the characters it uses.
    """

    def __init__(self, table: dict[str, tuple[int, float]]) -> None:
        super().__init__()
        self._groups: dict[str, list[tuple[str, tuple[int, float]]]] = {}
        for piece, entry in table.items():
            self._groups.setdefault(piece[0], []).append((piece, entry))

    def get(self, char: str, default=None):
        hit = dict.get(self, char)
        if hit is None:
            group = self._groups.pop(char, None)
            if group is None:
                return default
            hit = self[char] = _branch(group)
        return hit


def _branch(group: list[tuple[str, tuple[int, float]]]) -> tuple[dict, tuple[int, float] | None]:
    """The trie node of one first character, from the pieces starting with it."""
    top: dict = {}
    own = None
    for piece, entry in group:
        if len(piece) == 1:
            own = entry
            continue
        children = top
        for char in piece[1:-1]:
            hit = children.get(char)
            if hit is None:
                hit = children[char] = ({}, None)
            elif hit[0] is _NO_CHILDREN:
                hit = children[char] = ({}, hit[1])
            children = hit[0]
        last = piece[-1]
        hit = children.get(last)
        children[last] = (hit[0] if hit else _NO_CHILDREN, entry)
    return top, own


# Shared by every trie leaf (never mutated: a node gets its own dict when a
# longer piece first passes through it). Most nodes are leaves.
_NO_CHILDREN: dict = {}


def best_two(left: list[int], accs: list[float]) -> tuple[int, float, float]:
    """(first node with the largest acc, that acc, the second largest acc).

    The second is -inf when there is a single candidate.
    """
    best_node = left[0]
    best = accs[best_node]
    second = -float("inf")
    for node in left[1:]:
        value = accs[node]
        if value > best:
            second, best, best_node = best, value, node
        elif value > second:
            second = value
    return best_node, best, second


def exact_choice(left: list[int], accs: list[float], score: float) -> tuple[int, float]:
    """Float32 argmax of ``acc + score`` over ``left``; the first wins ties."""
    best_node, best = -1, 0.0
    for node in left:
        total = _F32.unpack(_F32.pack(accs[node] + score))[0]
        if best_node < 0 or total > best:
            best, best_node = total, node
    return best_node, best


class UnigramModel(Model):
    name = "unigram"
    exact_per_word = False

    def __init__(self, vocab: Vocabulary, **kwargs) -> None:
        super().__init__(vocab, **kwargs)
        table: dict[str, tuple[int, float]] = {}
        normal_scores = []
        for piece, index in vocab.normal.items():
            kind = vocab.types[index]
            if kind == PieceType.UNUSED:
                continue
            if kind == PieceType.USER_DEFINED:
                score = f32(0.1 * len(piece.encode("utf-8")) - 0.1)
            else:
                score = vocab.scores[index]
                normal_scores.append(score)
            table[piece] = (index, score)
        self.table = table
        self.max_piece_length = max(map(len, table), default=1)
        self.unk_score = f32(min(normal_scores, default=0.0) - 10.0)
        self.trie = _CharTrie(table)
        self.max_abs_score = max([abs(v) for _, v in table.values()] + [abs(self.unk_score)])

    # -- lattice --------------------------------------------------------
    def nodes_at(self, text: str, pos: int) -> list[tuple[int, int, float]]:
        """Nodes starting at ``pos`` as (length, id, score), shortest first."""
        found = []
        has_single = False
        children = self.trie
        stop, n = pos, len(text)
        while stop < n:
            hit = children.get(text[stop])
            if hit is None:
                break
            children, entry = hit
            stop += 1
            if entry is not None:
                found.append((stop - pos, entry[0], entry[1]))
                if stop == pos + 1:
                    has_single = True
        if not has_single:
            found.append((1, self.vocab.unk_index, self.unk_score))
        return found

    def viterbi(self, text: str, start: float = 0.0) -> tuple[list[tuple[int, int, int, float]], float]:
        """Exact float32 best path over ``text`` from accumulated score ``start``.

        Returns (path, final accumulated score); the path is a list of
        (begin, length, id, score). Used in context (see _encode_in_context)
        and as the reference the cached path is tested against.

        All nodes starting at one position share their candidates, and
        ``acc + score`` is computed exactly in doubles, so the predecessor
        with the largest ``acc`` wins for every node there; only when two
        candidates are so close that float32 rounding of the sum could tie
        them is the sum rounded per candidate (first wins).
        """
        n = len(text)
        # Per node: begin, length, id, score, accumulated, previous node.
        begins = [0]
        lengths = [0]
        ids = [-1]
        scores = [0.0]
        accs = [start]
        prevs = [-1]
        ends: list[list[int]] = [[] for _ in range(n + 1)]
        ends[0].append(0)
        unpack, pack = _F32.unpack, _F32.pack
        nodes_at = self.nodes_at
        for pos in range(n):
            left = ends[pos]
            best_node, best, second = best_two(left, accs)
            close = best - second <= 1e-6 * (1.0 + abs(best))
            for length, piece_id, score in nodes_at(text, pos):
                if close:
                    prev, acc = exact_choice(left, accs, score)
                else:
                    prev, acc = best_node, unpack(pack(best + score))[0]
                begins.append(pos)
                lengths.append(length)
                ids.append(piece_id)
                scores.append(score)
                accs.append(acc)
                prevs.append(prev)
                ends[pos + length].append(len(begins) - 1)
        # The end-of-sentence node: score 0, so candidates are the accs.
        final = ends[n]
        best_node = max(final, key=accs.__getitem__)  # first max wins
        path = []
        node = best_node
        while node > 0:
            path.append((begins[node], lengths[node], ids[node], scores[node]))
            node = prevs[node]
        path.reverse()
        return path, accs[best_node]

    # -- encoding -------------------------------------------------------
    def _pieces(self, text: str, path) -> tuple[tuple[str, int], ...]:
        return tuple((text[b:b + n], i) for b, n, i, _ in path)

    def _encode_word(self, word: str) -> WordEncoding:
        pieces, gap, reach, magnitude = self.viterbi_alone(word)
        additions = len(word) + 2
        robustness = gap / (additions * _ERROR_SCALE) - reach
        return WordEncoding(pieces, robustness, magnitude)

    def viterbi_alone(self, text: str) -> tuple[tuple[tuple[str, int], ...], float, float, float]:
        """Viterbi from score 0 in exact (double) arithmetic, for the cache.

        Returns (pieces, smallest gap, reach, path magnitude). No float32
        rounding is done here: a cached result is reused only where its
        gaps exceed the float32 error of the real computation at the real
        offset (see the module docstring), and that bound holds whether the
        standalone sums were rounded or not. Ties (gap 0) are never reused.
        """
        n = len(text)
        nodes_at = self.nodes_at
        unk_id = self.vocab.unk_index
        # node: (begin, length, id, score, previous node index)
        nodes: list[tuple] = [(0, 0, -1, 0.0, -1)]
        accs = [0.0]
        ends: list[list[int]] = [[] for _ in range(n + 1)]
        ends[0].append(0)
        inf = float("inf")
        gap_min = inf
        reach = 0.0
        for pos in range(n):
            left = ends[pos]
            if len(left) == 1:  # the common case, kept inline: this loop is hot
                best_node = left[0]
                best = accs[best_node]
            else:
                best_node, best, second = best_two(left, accs)
                if best - second < gap_min:
                    gap_min = best - second
            if best > reach or -best > reach:
                reach = abs(best)
            for length, piece_id, score in nodes_at(text, pos):
                ends[pos + length].append(len(nodes))
                nodes.append((pos, length, piece_id, score, best_node))
                accs.append(best + score)
        final = ends[n]
        best_node = max(final, key=accs.__getitem__)
        if len(final) > 1:
            others = [accs[i] for i in final if i != best_node]
            gap_min = min(gap_min, accs[best_node] - max(others))
        reach = max(reach, abs(accs[best_node])) + self.max_abs_score
        pieces = []
        magnitude = 0.0
        node = best_node
        names = self.vocab.pieces  # reuse the vocabulary's strings: caches stay small
        while node > 0:
            begin, length, piece_id, score, previous = nodes[node]
            piece = text[begin:begin + length] if piece_id == unk_id else names[piece_id]
            pieces.append((piece, piece_id))
            magnitude += abs(score)
            node = previous
        pieces.reverse()
        return tuple(pieces), gap_min, reach, magnitude

    def combine(self, encodings: list[WordEncoding]) -> WordEncoding:
        """Join independent parts: a later part starts from the earlier
        parts' accumulated score, which lowers the offset it tolerates."""
        pieces: tuple[tuple[str, int], ...] = ()
        robustness = float("inf")
        before = 0.0
        for encoding in encodings:
            pieces += encoding.pieces
            robustness = min(robustness, encoding.robustness - before)
            before += encoding.magnitude
        return WordEncoding(pieces, robustness, before)

    def encode(self, normalized: str) -> list[tuple[str, int]]:
        words = self.split_words(normalized)
        results = [self.encode_word(w) for w in words]
        if words_reusable([r.robustness for r in results], [r.magnitude for r in results]):
            out: list[tuple[str, int]] = []
            for r in results:
                out.extend(r.pieces)
            return out
        return self._encode_in_context(words, results)

    def _encode_in_context(self, words, results) -> list[tuple[str, int]]:
        """Exact path when some word is not robust: recompute it in place.

        A word is reused from the cache when it is robust at the exact
        accumulated score where it starts; otherwise it is re-run from that
        score together with the following words, up to the first one whose
        decisions (including its end) are robust at an upper bound of its
        starting score, so that the group's end is a clean cut.
        """
        out: list[tuple[str, int]] = []
        acc = 0.0
        i, count = 0, len(words)
        while i < count:
            bound = abs(acc) + 1.0
            if results[i].robustness > bound:
                out.extend(results[i].pieces)
                for piece, piece_id in results[i].pieces:
                    acc = f32(acc + self._node_score(piece, piece_id))
                i += 1
                continue
            j = i
            while j + 1 < count:
                bound += 1.01 * results[j].magnitude
                j += 1
                if results[j].robustness > bound:
                    break
            text = "".join(words[i:j + 1])
            path, acc = self.viterbi(text, acc)
            out.extend(self._pieces(text, path))
            i = j + 1
        return out

    def _node_score(self, piece: str, piece_id: int) -> float:
        entry = self.table.get(piece)
        if entry is not None and entry[0] == piece_id:
            return entry[1]
        return self.unk_score


def words_reusable(robustness: list[float], magnitudes: list[float]) -> bool:
    """True if every word's cached decisions hold at its starting offset.

    The offset before a word is bounded by the magnitudes of the words
    before it; the usual case is decided by one comparison.
    """
    total = 1.01 * sum(magnitudes) + 1.0
    if min(robustness, default=total + 1.0) > total:
        return True
    before = 1.0
    for r, m in zip(robustness, magnitudes):
        if r <= before:
            return False
        before += 1.01 * m
    return True
