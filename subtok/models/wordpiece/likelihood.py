r"""WordPiece's own criterion: merge the pair that most raises the likelihood
of the corpus under a unigram model of the current symbols (Schuster &
Nakajima 2012; training only).

With ``C(s)`` the number of occurrences of symbol ``s`` in the current
segmentation of the corpus (weighted by word counts), ``N = Σ C(s)`` and
``P(s) = C(s)/N``, the gain of merging the adjacent pair ``x y`` is

    gain(x, y) = C(xy) · (log P(xy) − log P(x) − log P(y))
               = C(xy) · (log C(xy) + log N − log C(x) − log C(y))

where ``C(xy)`` counts the adjacent occurrences of the pair (overlapping
ones too, as in the frequency trainer; the merge then replaces them left to
right without overlap).

What a merge of ``x y`` into ``z`` (``m`` occurrences replaced) changes:

1. ``C(x)`` and ``C(y)`` fall by ``m`` (by ``2m`` if ``x = y``), ``C(z)``
   rises by ``m``: the gain of every pair holding ``x``, ``y`` or ``z``
   changes (it *rises* for ``x`` and ``y``);
2. the pairs around the replaced occurrences lose or gain occurrences
   (:meth:`subtok.training.pair_merges.PairTable.rewrite`): their gains
   change;
3. ``N`` falls by ``m``: every gain changes, by ``C(xy) · Δlog N``.

Choice: the pairs of 1 and 2 are recomputed exactly at once; 3 is handled
lazily. ``N`` only falls, so a gain computed with an older ``N`` is an upper
bound of the current one (for unchanged counts): the queue is a max-heap of
gains stamped with the merge number, and a stale top is recomputed and put
back before it may win. The winner is therefore the exact best pair.

Rare pairs stay out of the queue: since ``C(xy) ≤ C(x)`` and
``C(xy) ≤ C(y)``, ``gain ≤ C(xy)·log(N/C(xy))``, which grows with
``C(xy)`` (below ``N/e``). Only pairs counted at least ``cut`` times are
queued (and indexed by symbol for step 1); while the best queued gain is
below ``cut·log(N/cut)`` no unqueued pair can beat it, and otherwise ``cut``
is lowered and the newly eligible pairs queued. Pairs seen fewer than
``min_frequency`` times are never merged.

Ties: the pair of older symbols (smaller ids) wins.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

from subtok.training.pair_merges import Merge, PairTable, add_token, symbol_char


class LikelihoodMerger:
    """The state of likelihood merging over a :class:`PairTable`.

    ``logs[s]`` is ``log C(s)``; ``by_symbol[s]`` the queued pairs holding
    ``s``. A queue entry is ``(-gain, pair)``; ``version[p]`` is the very
    ``-gain`` object of pair ``p``'s valid entry (queued pairs only; other
    entries of ``p`` are void), an upper bound of its gain; ``fresh`` holds
    the pairs whose valid entry was computed since the last merge (exact).
    """

    def __init__(self, table: PairTable, min_frequency: int) -> None:
        self.table = table
        self.where = table.count_pairs()
        symbols: dict[str, int] = {}
        for word, count in zip(table.words, table.counts):
            for symbol in word:
                symbols[symbol] = symbols.get(symbol, 0) + count
        self.symbols = symbols
        self.logs = {symbol: math.log(count) for symbol, count in symbols.items()}
        self.total = sum(symbols.values())
        self.log_total = math.log(self.total) if self.total else 0.0
        self.floor = max(1, min_frequency)
        self.heap: list = []
        self.version: dict[str, float] = {}
        self.fresh: set[str] = set()
        self.by_symbol: dict[str, set[str]] = {}
        counts = table.pair_count
        self.cut = max(self.floor, max(counts.values(), default=0) // 4)
        self.requeue([pair for pair, count in counts.items() if count >= self.cut])

    # -- the queue -------------------------------------------------------------
    def requeue(self, pairs) -> None:
        """Queue ``pairs`` with their current gains: the queued ones, and
        the others counted at least ``cut`` times. A queued pair whose gain
        did not rise keeps its entry, still an upper bound (recomputed when
        it reaches the top). Pairs left without occurrences are forgotten."""
        counts, version, logs = self.table.pair_count, self.version, self.logs
        by_symbol, heap, fresh = self.by_symbol, self.heap, self.fresh
        log, push = math.log, heapq.heappush
        log_total, cut = self.log_total, self.cut
        floor = self.floor
        for pair in pairs:
            count = counts.get(pair, 0)
            if count < floor:  # (never merged unless it gains occurrences again)
                if count <= 0:
                    counts.pop(pair, None)
                    self.where.pop(pair, None)
                self.deactivate(pair)
                continue
            queued = version.get(pair)
            if queued is None:
                if count < cut:
                    continue
                for symbol in pair:
                    found = by_symbol.get(symbol)
                    if found is None:
                        by_symbol[symbol] = {pair}
                    else:
                        found.add(pair)
            neg_gain = -count * (log(count) + log_total - logs[pair[0]] - logs[pair[1]])
            if queued is not None and queued <= neg_gain and pair not in fresh:
                continue
            version[pair] = neg_gain
            fresh.add(pair)
            push(heap, (neg_gain, pair))
        if len(heap) > 2 * len(version) + 20_000:
            self.compact()

    def refresh(self, pair: str) -> None:
        """Queue a queued pair again with its exact gain."""
        count = self.table.pair_count[pair]
        logs = self.logs
        neg_gain = -count * (math.log(count) + self.log_total - logs[pair[0]] - logs[pair[1]])
        self.version[pair] = neg_gain
        self.fresh.add(pair)
        heapq.heappush(self.heap, (neg_gain, pair))

    def compact(self) -> None:
        """Drop the void entries (the heap would otherwise hold every gain
        ever computed)."""
        version = self.version
        self.heap = [entry for entry in self.heap if version.get(entry[1]) is entry[0]]
        heapq.heapify(self.heap)

    def deactivate(self, pair: str) -> None:
        """Take ``pair`` out of the queue (its entries become void)."""
        if self.version.pop(pair, None) is not None:
            for symbol in pair:
                self.by_symbol[symbol].discard(pair)

    def lower_cut(self) -> None:
        """Queue the pairs counted at least a quarter of the current cut."""
        self.cut = max(self.floor, self.cut // 4)
        cut, version = self.cut, self.version
        self.requeue([pair for pair, count in self.table.pair_count.items()
                      if count >= cut and pair not in version])

    def bound(self) -> float:
        """The largest gain a pair counted fewer than ``cut`` times can have."""
        count = min(self.cut, self.total / math.e)
        return count * (self.log_total - math.log(count)) if count > 0 else 0.0

    def best(self) -> tuple[str, float] | None:
        """Take the pair with the largest gain off the queue (None if none)."""
        counts = self.table.pair_count
        while True:
            heap = self.heap  # (requeue may compact it into a new list)
            if not heap:
                if self.cut <= self.floor:
                    return None
                self.lower_cut()
                continue
            neg_gain, pair = heap[0]
            if self.version.get(pair) is not neg_gain:
                heapq.heappop(heap)
                continue
            if counts.get(pair, 0) < self.floor:
                heapq.heappop(heap)
                self.deactivate(pair)
                continue
            if pair not in self.fresh:
                heapq.heappop(heap)
                self.refresh(pair)
                continue
            if self.cut > self.floor and -neg_gain < self.bound():
                self.lower_cut()
                continue
            heapq.heappop(heap)
            self.deactivate(pair)
            return pair, -neg_gain

    # -- a merge ---------------------------------------------------------------
    def merge(self, pair: str, merged: str) -> None:
        """Replace ``pair`` by the symbol ``merged`` everywhere; update counts."""
        table = self.table
        replaced = table.rewrite(pair, merged, sorted(set(self.where.pop(pair))))
        del table.pair_count[pair]
        left, right = pair
        symbols, logs = self.symbols, self.logs
        symbols[left] -= replaced
        symbols[right] -= replaced
        symbols[merged] = symbols.get(merged, 0) + replaced
        for symbol in (left, right, merged):
            if symbols[symbol] > 0:
                logs[symbol] = math.log(symbols[symbol])
        self.total -= replaced
        self.log_total = math.log(self.total)
        self.fresh.clear()
        where = self.where
        for gained, words in table.gained.items():
            found = where.get(gained)
            if found is None:
                where[gained] = words
            else:
                found.extend(words)
        changed = set(table.gained)
        changed.update(table.lost)
        for symbol in {left, right, merged}:
            changed.update(self.by_symbol.get(symbol, ()))
        table.gained.clear()
        table.lost.clear()
        self.requeue(changed)


def merge_by_likelihood(table: PairTable, tokens: list[str], *, join: Callable[[str, str], str],
                        vocab_size: int, min_frequency: int, bar=None) -> list[Merge]:
    """Merge pairs by likelihood gain until ``tokens`` (id -> string,
    extended in place) has ``vocab_size`` entries; the merges in order."""
    index = {token: i for i, token in enumerate(tokens)}
    merger = LikelihoodMerger(table, min_frequency)
    merges: list[Merge] = []
    while len(index) < vocab_size:
        found = merger.best()
        if found is None:
            break
        pair, gain = found
        left, right, new = add_token(tokens, index, pair, join, bar)
        merges.append(Merge(left, right, new, gain))
        merger.merge(pair, symbol_char(new))
    return merges


__all__ = ["LikelihoodMerger", "merge_by_likelihood"]
