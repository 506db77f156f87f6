"""BPE segmentation: merge adjacent symbols by piece score.

SentencePiece stores no merge list. A BPE model's piece scores are minus
the merge rank, and encoding repeatedly merges the adjacent pair whose
concatenation is a piece with the highest score, the leftmost pair first on
ties. User-defined symbols are cut out first and never merge. A merge may
produce an UNUSED piece; such a symbol is split back into the two halves it
was made of when the result is emitted (an UNUSED piece no merge made, a
single character, is the unknown piece).

``alpha`` > 0 gives BPE-dropout: each merge that would be applied is
skipped with probability ``alpha`` (Provilkov et al., 2020).
"""

from __future__ import annotations

import heapq
import random
import struct

from subtok.vocab import PieceType, Vocabulary
from subtok.models.base import Model, WordEncoding


def initial_symbols(text: str, user_defined: frozenset[str], max_user: int) -> list[tuple[str, bool]]:
    """Cut ``text`` into characters, keeping user-defined symbols whole.

    Returns (symbol, frozen) pairs; the longest user-defined symbol that
    starts at a position wins.
    """
    if not max_user:
        return [(char, False) for char in text]
    symbols = []
    i, n = 0, len(text)
    while i < n:
        for length in range(min(max_user, n - i), 0, -1):
            if text[i:i + length] in user_defined:
                symbols.append((text[i:i + length], True))
                i += length
                break
        else:
            symbols.append((text[i], False))
            i += 1
    return symbols


#: sentencepiece 0.2.3's kMaxBpeResegmentDepth.
RESEGMENT_DEPTH = 100

_FLOAT32_BITS = struct.Struct("<i")


def merge_rank(score: float) -> int:
    """The order sentencepiece 0.2.3 merges in, as an int (higher first).

    Its ``SymbolPairComparator`` compares the float32 scores by their bit
    patterns read as int32: a negative pattern (sign bit set) ranks below
    every other and the more negative the float the lower; otherwise the
    larger pattern the higher. For ordinary scores that is their float
    order, but it also orders -0.0 below +0.0 and puts NaN and infinities
    somewhere definite, where a float comparison would not.
    """
    bits = _FLOAT32_BITS.unpack(struct.pack("<f", score))[0]
    return bits if bits >= 0 else ~bits - (1 << 31)


class BPEModel(Model):
    supports_sampling = True  # BPE-dropout
    supports_vocabulary_restriction = True

    def __init__(self, vocab: Vocabulary, **kwargs) -> None:
        super().__init__(vocab, **kwargs)
        self.user_defined = frozenset(vocab.user_defined())
        self.max_user = max(map(len, self.user_defined), default=0)
        #: piece -> merge_rank of its score.
        self.ranks = {p: merge_rank(vocab.scores[i]) for p, i in vocab.normal.items()}
        self.unused = frozenset(p for p, i in vocab.normal.items()
                                if vocab.types[i] == PieceType.UNUSED)

    def encode_part(self, word: str) -> WordEncoding:
        return WordEncoding(tuple(self.merge(word)))

    def sample(self, normalized: str, nbest_size: int, alpha: float,
               rng: random.Random) -> list[tuple[str, int]]:
        """BPE-dropout (``nbest_size`` plays no part, as in sentencepiece)."""
        return self.merge(normalized, alpha, rng)

    def merge(self, text: str, alpha: float = 0.0, rng: random.Random | None = None) -> list[tuple[str, int]]:
        """Segment ``text`` by BPE merges (with dropout when ``alpha`` > 0)."""
        merged = self.merge_symbols(initial_symbols(text, self.user_defined, self.max_user),
                                    self.ranks, self.unused, alpha, rng)
        return self.output(*merged, self.pair)

    def output(self, symbols: list, nxt: list[int], halves: dict, pair) -> list[tuple[str, int]]:
        """The pairs of what :meth:`merge_symbols` left, in order, each
        named by ``pair`` (:meth:`Model.pair` for str symbols)."""
        out: list[tuple[str, int]] = []
        i = 0 if symbols else -1
        while i >= 0:
            self._emit(symbols[i], halves, out, pair)
            i = nxt[i]
        return out

    @staticmethod
    def merge_symbols(start: list, ranks: dict, unused: frozenset, alpha: float = 0.0,
                      rng: random.Random | None = None) -> tuple[list, list[int], dict]:
        """Merge the (symbol, frozen) pairs of ``start``: (symbols, where
        each one's next is, halves of the UNUSED pieces merges made).

        Symbols are str, or bytes for text that is not UTF-8 (see
        ``models/bytewise.py``); ``ranks`` and ``unused`` are keyed alike.
        """
        symbols = [s for s, _ in start]
        frozen = [f for _, f in start]
        count = len(symbols)
        prev = list(range(-1, count - 1))
        nxt = list(range(1, count + 1))
        if count:
            nxt[-1] = -1
        halves: dict = {}
        agenda: list[tuple[int, int, int, object]] = []

        def push(left: int, right: int) -> None:
            if left < 0 or right < 0 or frozen[left] or frozen[right]:
                return
            merged = symbols[left] + symbols[right]
            rank = ranks.get(merged)
            if rank is None:
                return
            heapq.heappush(agenda, (-rank, left, right, merged))
            if merged in unused:
                halves[merged] = (symbols[left], symbols[right])

        for i in range(count - 1):
            push(i, i + 1)
        while agenda:
            _, left, right, merged = heapq.heappop(agenda)
            if symbols[left] + symbols[right] != merged or nxt[left] != right:
                continue  # stale: a neighbour changed since this was pushed
            if alpha > 0.0 and (alpha >= 1.0 or rng.random() < alpha):
                continue  # dropout: skip this merge
            symbols[left] = merged
            symbols[right] = symbols[right][:0]
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            push(prev[left], left)
            push(left, nxt[left])
        return symbols, nxt, halves

    def _emit(self, symbol, halves: dict, out: list, pair, depth: int = 0) -> None:
        """Output a final symbol as ``pair`` names it; UNUSED pieces made by
        a merge (the only ones in ``halves``) are split back recursively,
        others are unknown (see :meth:`Model.pair`). Past RESEGMENT_DEPTH
        splits a symbol is kept whole with its own id, as sentencepiece
        0.2.3 stops there."""
        if depth > RESEGMENT_DEPTH:
            out.append(pair(symbol, keep_unused=True))
        elif symbol in halves:
            left, right = halves[symbol]
            self._emit(left, halves, out, pair, depth + 1)
            self._emit(right, halves, out, pair, depth + 1)
        else:
            out.append(pair(symbol))
