"""Unigram language model segmentation: the encoder's fast path.

The reference algorithms over the lattice (sentencepiece's
``EncodeOptimized`` as :func:`~subtok.models.unigram.lattice.encode_optimized`,
and the ``Lattice`` with its Viterbi, n-best and sampling) live in
:mod:`subtok.models.unigram.lattice`, the piece table in
:mod:`subtok.models.unigram.trie`. This module is the word-cached encoder
beside them: a doubles Viterbi per distinct word (:meth:`UnigramModel.
_forward`), kept with the margins that tell when a cached word equals what
``encode_optimized`` would find in context, and the exact in-context
computation where it might not (:meth:`UnigramModel.context_head`).

The lattice has one position per character of the normalized text. At each
position every vocabulary piece of the normal map that starts there becomes
a node (UNUSED pieces excepted), shortest first. If no one-character node
starts there, an unknown node of one character is added with score
``min(NORMAL scores) - 10``. USER_DEFINED nodes score ``0.1 * bytes - 0.1``
(what sentencepiece 0.2.3 does, whatever the other scores are).

Sentencepiece's ``Encode`` sums in float32: each position keeps the best
``float32(acc + score)`` offered to it, the first offer (the longest piece)
winning a tie. Summing in doubles instead changes the result on near-ties.

Caching per word is therefore subtle: a word's decisions computed alone
(starting from accumulated score 0) may differ from the same word computed
inside a sentence whose accumulated score ``A`` shifts every sum and thus
its float32 rounding. For every word we record the smallest gap between the
best and second-best candidate where the best path's pieces end, and turn
it into a bound on ``|A|`` below which rounding cannot flip the path. When a sentence's
accumulated score stays below the bound of all its words (almost always),
cached results are exact. Otherwise the affected words are recomputed in
context, starting from the exact float32 accumulated score, which is known
because all earlier decisions were robust.

Sentencepiece 0.2.3 also keeps the accumulated score small: at the first
position whose best value passes +-100000 (RESET_THRESHOLD), that value is
subtracted from every value it has at or after the position, exactly (the
float32 values are that close), and the sums go on from 0 with finer
rounding. This only shrinks the offsets the cache's bounds allow for, but
the exact recomputation follows it (see
:func:`~subtok.models.unigram.lattice.encode_optimized`).
"""

from __future__ import annotations

import itertools

from subtok.float32 import FLT_MAX, UNIT_ROUNDOFF, f32, float32_cell, offset_bound
from subtok.vocab import PieceType, Vocabulary
from subtok.models.base import Model, WordEncoding
from subtok.models.unigram.lattice import RESET_THRESHOLD, Lattice, encode_optimized, passes_reset
from subtok.models.unigram.sampling import choose_hypothesis, sample_encode_and_score
from subtok.models.unigram.trie import common_prefix_search, piece_lookup


class UnigramModel(Model):
    supports_sampling = True
    supports_nbest = True
    supports_vocabulary_restriction = True
    exact_per_word = False

    def __init__(self, vocab: Vocabulary, **kwargs) -> None:
        super().__init__(vocab, **kwargs)
        types, scores = vocab.types, vocab.scores
        normal, user_defined = int(PieceType.NORMAL), int(PieceType.USER_DEFINED)
        # In the vocabulary's order (one comprehension: a load builds 32k).
        table: dict[str, tuple[int, float]] = {
            piece: (index, scores[index] if types[index] == normal
                    else f32(0.1 * len(piece.encode("utf-8", "surrogateescape")) - 0.1))
            for piece, index in vocab.normal.items()
            if types[index] == normal or types[index] == user_defined}
        normal_scores = [scores[index] for index, _ in table.values() if types[index] == normal]
        self.table = table
        # With no NORMAL piece, sentencepiece's minimum stays FLT_MAX.
        self.unk_score = f32(min(normal_scores, default=FLT_MAX) - 10.0)
        self.max_abs_score = max([abs(v) for _, v in table.values()] + [abs(self.unk_score)])
        self._no_positive_score = max([v for _, v in table.values()] + [self.unk_score]) <= 0
        #: The largest |score| of a NORMAL piece: with a piece count, it
        #: bounds the accumulated score of a segmentation without unknowns.
        self.max_normal_score = max(map(abs, normal_scores), default=0.0)
        self._lookup: dict[str, tuple[int, float, bool]] | None = None
        self._single_chars: frozenset[str] | None = None
        self._id_strings: list[str] | None = None
        self._id_scores: list[float] | None = None
        #: The lattice entry of an unknown character (see :meth:`_forward`).
        self._unknown_entry = (vocab.unk_index, self.unk_score, False)
        #: The node of an unknown character (see :meth:`nodes_at`).
        self._unknown_node = (1, vocab.unk_index, self.unk_score)

    @property
    def lookup(self) -> dict[str, tuple[int, float, bool]]:
        """The piece table (see :func:`~subtok.models.unigram.trie.piece_lookup`);
        built on first use to keep loading fast."""
        if self._lookup is None:
            self._lookup = piece_lookup(self.table)
        return self._lookup

    def single_chars(self) -> frozenset[str]:
        """The characters that are pieces by themselves: only the others
        become unknown pieces. Built on first use."""
        if self._single_chars is None:
            self._single_chars = frozenset(p for p in self.table if len(p) == 1)
        return self._single_chars

    # -- lattice --------------------------------------------------------
    def nodes_at(self, text: str, pos: int) -> list[tuple[int, int, float]]:
        """The lattice nodes starting at ``pos`` (``PopulateNodes`` at one
        position) as (length, id, score), shortest first; an unknown node
        last if no piece of one character starts there."""
        found = common_prefix_search(self.lookup, text, pos)
        if not found or found[0][0] != 1:
            found.append(self._unknown_node)
        return found

    # -- encoding -------------------------------------------------------
    def _pieces(self, text: str, path) -> tuple[tuple[str, int], ...]:
        return tuple((text[b:b + n], i) for b, n, i, _ in path)

    def encode_part(self, word: str) -> WordEncoding:
        """The word alone, with the offset its decisions tolerate.

        In context the word starts at a float32 accumulated score ``A``.
        The best value carried to position ``p`` is a maximum of float32
        sums, each ``A`` plus at most ``p`` scores, each addition off by at
        most 2**-24 of ``|A| + reach``; so every candidate ending at ``p``
        is within ``p * 2**-24 * (|A| + reach)`` of ``A`` plus its exact
        value. Two candidates whose exact values differ by ``gap`` keep
        their (strict) order while ``2 * p * 2**-24 * (|A| + reach) < gap``;
        with a spare factor of two and ``p <= len(word) + 1``, that is
        ``|A| < robustness``.
        """
        path, robustness, magnitude = self._best_path(word)
        unk_id, pairs = self.vocab.unk_index, self.pairs  # shared tuples keep the caches small
        pieces = tuple((word[begin:end], unk_id) if piece_id == unk_id else pairs[piece_id]
                       for begin, end, piece_id in path)
        return WordEncoding(pieces, robustness, magnitude)

    def part_output(self, text: str, ids: bool) -> tuple[str, int, float, float] | None:
        """What :meth:`encode_part` gives, straight as CLI output: (ids or
        pieces joined by spaces, piece count, robustness, magnitude); None
        if the path holds an unknown piece, which post-processing (byte
        fallback, merging) must see. The CLI's cold path: no pairs, no
        :class:`WordEncoding`."""
        best, second, back, begins = self._forward(text)
        unk_id = self.vocab.unk_index
        names = self._id_texts() if ids else self.vocab.pieces
        out = []
        gap = float("inf")
        magnitude = 0.0
        end = len(text)
        # The path backwards, as in _best_path, but turned into output on
        # the way: calling _best_path and mapping its ids costs more
        # (docs/performance.md).
        while end:
            if best[end] - second[end] < gap:
                gap = best[end] - second[end]
            piece_id, score, _ = back[end]
            if piece_id == unk_id:
                return None
            out.append(names[piece_id])
            magnitude += abs(score)
            end = begins[end]
        out.reverse()
        return " ".join(out), len(out), self._robustness(gap, text, best), magnitude

    def _best_path(self, text: str) -> tuple[list[tuple[int, int, int]], float, float]:
        """Viterbi from score 0 in exact (double) arithmetic, for the cache:
        the path :func:`~subtok.models.unigram.lattice.encode_optimized`
        finds wherever the robustness allows (the tests hold them equal).

        Returns the best path as (begin, end, id) nodes, its robustness
        (see :meth:`encode_part`) and its magnitude, the sum of ``|score|``
        over it. The robustness comes from the smallest difference (gap)
        between the best and the second best candidate at the positions
        where the path's pieces end, and from the largest ``|acc|`` any
        node can have (reach).

        Only decisions on the best path count: elsewhere a flip changes
        which node is remembered, never the best value carried forward,
        and the path never reads it. No float32 rounding is done here: a
        cached result is reused only where its gaps exceed the float32
        error of the real computation at the real offset. Ties (gap 0)
        are never reused.
        """
        best, second, back, begins = self._forward(text)
        path = []
        gap = float("inf")
        magnitude = 0.0
        end = len(text)
        while end:
            if best[end] - second[end] < gap:
                gap = best[end] - second[end]
            piece_id, score, _ = back[end]
            begin = begins[end]
            path.append((begin, end, piece_id))
            magnitude += abs(score)
            end = begin
        path.reverse()
        return path, self._robustness(gap, text, best), magnitude

    def _robustness(self, gap: float, text: str, best: list[float]) -> float:
        """The offset a path tolerates (see :meth:`encode_part`), from the
        smallest gap on it and the lattice's best sums."""
        return gap / (4 * UNIT_ROUNDOFF * (len(text) + 1)) - self._reach(best)

    def _id_texts(self) -> list[str]:
        """Every id as text, for :meth:`part_output` (built on first use)."""
        if self._id_strings is None:
            self._id_strings = list(map(str, range(len(self.vocab.pieces))))
        return self._id_strings

    def _reach(self, best: list[float]) -> float:
        """The largest ``|acc|`` any node can reach (see :meth:`encode_part`).
        With no positive score every sum is at most 0, so the most negative
        is the largest in magnitude (no abs per position)."""
        if self._no_positive_score:
            return self.max_abs_score - min(best)
        return max(map(abs, best)) + self.max_abs_score

    def _forward(self, text: str) -> tuple[list[float], list[float], list, list[int]]:
        """The lattice from score 0, in doubles: for each end position the
        best and second best sums, the best node's lookup entry (id, score,
        longer) and where that node begins. (Entries and begins apart: no
        tuple is built per improvement.) The same pass as
        :func:`~subtok.models.unigram.lattice.encode_optimized`, inlined
        for speed, without float32 rounding and keeping the runner-up.

        Pieces are pushed forward: position ``i`` is final once every
        position before it has been expanded, and only the best and the
        second best sums ending at each position are kept.
        """
        n = len(text)
        get = self.lookup.get
        unknown = self._unknown_entry
        inf = float("inf")
        best = [0.0] + [-inf] * n
        second = [-inf] * (n + 1)
        begins = [0] * (n + 1)
        back: list = [None] * (n + 1)
        for i in range(n):
            acc = best[i]
            end = i + 1
            piece = text[i]
            entry = get(piece)
            if entry is None or entry[0] < 0:  # no piece of one character: unknown
                value = acc + unknown[1]
                if value > best[end]:
                    second[end], best[end], back[end] = best[end], value, unknown
                    begins[end] = i
                elif value > second[end]:
                    second[end] = value
            while entry is not None:
                piece_id, score, longer = entry
                if piece_id >= 0:
                    value = acc + score
                    if value > best[end]:
                        second[end], best[end], back[end] = best[end], value, entry
                        begins[end] = i
                    elif value > second[end]:
                        second[end] = value
                if not longer or end == n:
                    break
                piece += text[end]  # cheaper than slicing text[i:end + 1]
                end += 1
                entry = get(piece)
        return best, second, back, begins

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
        words = self.splitter.split(normalized)
        results = EncodedWords([self.encode_word(w) for w in words])
        if words_reusable(results.robustness, results.magnitudes):
            return results.pieces(0, len(words))
        return self._encode_in_context(words, results)

    def _encode_in_context(self, words, results: "EncodedWords") -> list[tuple[str, int]]:
        """Exact path when some word is not robust (see :meth:`context_head`)."""
        out, reused = self.context_head(words, results)
        out.extend(results.pieces(reused, len(words)))
        return out

    def context_head(self, words, results) -> tuple[list[tuple[str, int]], int]:
        """The pieces of the words up to where the rest are all reused as
        cached, and the index of that first reused word. ``results`` has
        each word's cached ``robustness`` and ``magnitudes``, and
        ``pieces(i, j)``, the cached pieces of words ``i`` to ``j - 1``
        (see :class:`EncodedWords`).

        A word is reused from the cache when it is robust at the exact
        accumulated score where it starts; otherwise it is re-run from that
        score together with the following words, up to the first one whose
        decisions (including its end) are robust at an upper bound of its
        starting score, so that the group's end is a clean cut. Once every
        word left is robust at the bound the rest of the line gives, they
        are all reused: their pieces are not even read.

        Far from sentencepiece's score reset, reused words go in runs:
        each word robust at an upper bound of the score it starts from
        (the exact score where the run starts, plus the magnitudes since)
        is reused without the exact score, which only the next word that
        is not robust at its bound needs; the run's scores are then added
        up in one loop (word by word costs more: docs/performance.md).
        """
        out: list[tuple[str, int]] = []
        acc = 0.0
        i, count = 0, len(words)
        robustness, magnitudes = results.robustness, results.magnitudes
        least_robust, magnitude_left = _tail_bounds(robustness, magnitudes)
        scores = self._scores_by_id()
        calm_up_to = self._reset_room(max(map(len, words), default=0))
        rounded = float32_cell()
        while i < count:
            if least_robust[i] > offset_bound(abs(acc) + magnitude_left[i]):
                break
            if passes_reset(acc):
                acc = 0.0  # sentencepiece's reset, where a word starts (no piece crosses)
            # A word that starts ``spent`` magnitudes after this exact score
            # is reused if its robustness passes exact + offset_bound(spent);
            # that bound less 1 also bounds the |acc| the word starts from.
            exact = abs(acc)
            if robustness[i] > exact + offset_bound(0.0) and not self._may_reset(acc, words[i]):
                j, spent, rest_reused = i + 1, magnitudes[i], False
                while j < count:
                    reach = exact + offset_bound(spent)
                    if not (robustness[j] > reach and reach - 1.0 <= calm_up_to):
                        break
                    if least_robust[j] > offset_bound(reach - 1.0 + magnitude_left[j]):
                        rest_reused = True
                        break
                    spent += magnitudes[j]
                    j += 1
                pieces = results.pieces(i, j)
                out.extend(pieces)
                if rest_reused:
                    return out, j
                for _, piece_id in pieces:
                    rounded[0] = acc + scores[piece_id]
                    acc = rounded[0]
                i = j
                continue
            j, spent = i, 0.0
            while j + 1 < count:
                spent += magnitudes[j]
                j += 1
                if robustness[j] > exact + offset_bound(spent):
                    break
            text = "".join(words[i:j + 1])
            path, acc = encode_optimized(self, text, acc)
            out.extend(self._pieces(text, path))
            i = j + 1
        return out, i

    def _may_reset(self, acc: float, word: str) -> bool:
        """True unless every value sentencepiece keeps inside ``word``,
        starting from ``acc``, surely stays within RESET_THRESHOLD (see
        :func:`~subtok.models.unigram.lattice.encode_optimized`). Only
        then may a cached word's scores simply be added."""
        return abs(acc) > self._reset_room(len(word))

    def _reset_room(self, length: int) -> float:
        """The largest |acc| from which every value kept inside a word of
        ``length`` characters surely stays within RESET_THRESHOLD: each
        position adds at most the largest |score| (with room for float32
        rounding)."""
        return RESET_THRESHOLD - offset_bound((length + 1) * self.max_abs_score)

    def _scores_by_id(self) -> list[float]:
        """The score Encode adds for each id of a cached path: its piece's,
        or the unknown score (built on first use)."""
        if self._id_scores is None:
            scores = [self.unk_score] * len(self.vocab.pieces)
            for piece_id, score in self.table.values():
                scores[piece_id] = score
            self._id_scores = scores
        return self._id_scores

    # -- subword regularization: sampling, n-best, scores, entropy ------
    # The algorithms are the lattice's (lattice.py); these return the
    # model's pairs, before post-processing.
    def lattice(self, normalized: str):
        """Every node of ``normalized`` (sentencepiece's ``Lattice``)."""
        return Lattice(self, normalized)

    def sample(self, normalized: str, nbest_size: int, alpha: float,
               rng) -> list[tuple[str, int]]:
        """One segmentation drawn as sentencepiece's ``SampleEncode``:
        ``nbest_size < 0`` from the whole lattice with ``p ∝ exp(alpha ·
        score)``, 0 or 1 the best path, ``> 1`` among the n best."""
        if 0 <= nbest_size <= 1:
            return self.encode(normalized)
        lattice = self.lattice(normalized)
        if nbest_size < 0:
            path = lattice.sample(alpha, rng)
        elif lattice.text:
            path = choose_hypothesis(lattice.nbest(nbest_size), alpha, rng)
        else:
            path = []
        return lattice.pairs(path)

    def nbest(self, normalized: str, size: int) -> list[tuple[list[tuple[str, int]], float]]:
        """The ``size`` best segmentations with their scores (sentencepiece's
        ``NBestEncode``: at most 1024; below 2, the best path with score 0)."""
        size = max(1, min(size, 1024))
        if size == 1:
            return [(self.encode(normalized), 0.0)]
        lattice = self.lattice(normalized)
        if not lattice.text:
            return [([], 0.0)]
        return [(lattice.pairs(path), score) for path, score in lattice.nbest(size)]

    def sample_and_score(self, normalized: str, num_samples: int, alpha: float, wor: bool,
                         include_best: bool, rng) -> list[tuple[list[tuple[str, int]], float]]:
        """Sampled segmentations with scores (``SampleEncodeAndScore``);
        empty for an empty text."""
        lattice = self.lattice(normalized)
        if not lattice.text:
            return []
        found = sample_encode_and_score(lattice, num_samples, alpha, wor, include_best, rng)
        return [(lattice.pairs(path), score) for path, score in found]


def _tail_bounds(robustness: list[float], magnitudes: list[float]) -> tuple[list[float], list[float]]:
    """For each word, the least robustness among it and the words after it,
    and the sum of their magnitudes (summed from the end); one more entry
    for the end of the line."""
    least_robust = list(itertools.accumulate(reversed(robustness), min))
    least_robust.reverse()
    least_robust.append(float("inf"))
    magnitude_left = list(itertools.accumulate(reversed(magnitudes)))
    magnitude_left.reverse()
    magnitude_left.append(0.0)
    return least_robust, magnitude_left


class EncodedWords:
    """The cached encodings of a line's words, as :meth:`UnigramModel.
    context_head` reads them."""

    def __init__(self, results: list[WordEncoding]) -> None:
        self._results = results
        self.robustness = [r.robustness for r in results]
        self.magnitudes = [r.magnitude for r in results]

    def pieces(self, start: int, end: int) -> list[tuple[str, int]]:
        """The pieces of words ``start`` to ``end - 1``."""
        out: list[tuple[str, int]] = []
        for result in self._results[start:end]:
            out.extend(result.pieces)
        return out


def words_reusable(robustness: list[float], magnitudes: list[float]) -> bool:
    """True if every word's cached decisions hold at its starting offset.

    The offset before a word is bounded by the magnitudes of the words
    before it; the usual case is decided by one comparison.
    """
    total = offset_bound(sum(magnitudes))
    if min(robustness, default=total + 1.0) > total:
        return True
    before = 0.0
    for r, m in zip(robustness, magnitudes):
        if r <= offset_bound(before):
            return False
        before += m
    return True
