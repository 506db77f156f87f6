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

Choice: the queue is a max-heap of *upper bounds* of the gains, and the
top is recomputed exactly before it may win; a bound that stays above the
exact gains for a while saves recomputing after every merge:

* a pair is queued with its gain computed as if ``log C(x)`` and
  ``log C(y)`` were :data:`HEADROOM` lower than they are, i.e. plus
  ``2·C(xy)·HEADROOM``;
* that stays an upper bound while neither ``log C(x)`` nor ``log C(y)``
  falls by more than :data:`HEADROOM` (3, a falling ``N``, and a rising
  ``C(z)`` only lower gains), so the pairs holding a symbol (1) are queued
  again only once its ``log C`` has fallen that much since they last were;
* the pairs of 2 are queued again when their bound rises (a new pair, or a
  count change); a pair whose bound fell keeps its (higher) entry;
* when the top entry is a bound, the pair's exact gain is computed and
  queued; when the top is an exact gain of the current segmentation, no
  other pair can beat it: it is the exact best pair;
* an exact entry stays (a tight bound, ``N`` only falls) until a merge
  lowers the count of one of its symbols; then it becomes a bound again.
  So the few pairs near the top are not recomputed from scratch after
  every merge, and the many others are not touched at all.

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
from array import array
from collections.abc import Callable
from itertools import repeat

from subtok.training.pair_merges import Merge, PairTable, add_token, symbol_char

#: How far (in natural log) a symbol's count may fall before the queued
#: bounds of its pairs are computed again (see the module docstring): larger
#: means fewer recomputations per merge, and looser bounds near the top.
HEADROOM = 0.05


def index_by_symbol(index: dict[str, set[str]], pair: str) -> None:
    """Note ``pair`` under each of its two symbols (so that a change to a
    symbol's count finds the pairs whose gains it moves)."""
    for symbol in pair:
        found = index.get(symbol)
        if found is None:
            index[symbol] = {pair}
        else:
            found.add(pair)

class LikelihoodMerger:
    """The state of likelihood merging over a :class:`PairTable`.

    ``symbols[c]`` is ``C(s)`` for the symbol ``s`` of code point ``c``,
    ``logs[c]`` is ``log C(s)`` (as last computed while ``C(s) > 0``),
    ``base[c]`` its value when the bounds of the pairs holding ``s`` were
    last computed (``-inf`` before): arrays by code point, not dicts by
    symbol, spare an entry, a key and a boxed number per symbol;
    ``by_symbol[s]`` lists the queued pairs holding ``s``
    (:meth:`queued_with`). A queue entry is ``(-key, pair)``; ``version[p]``
    is the very ``-key`` object of pair ``p``'s valid entry (queued pairs
    only; other entries of ``p`` are void), an upper bound of its gain;
    ``tight[s]`` the pairs holding ``s`` whose valid entry is an exact gain
    (of the current segmentation or of an older one), ``fresh`` those
    computed since the last merge.
    """

    def __init__(self, table: PairTable, min_frequency: int) -> None:
        self.table = table
        #: pair -> the words that may hold it: one word id, or a list of
        #: them (with repeats, and words that lost the pair since). Most
        #: pairs are in one word, and a bare id spares a list per pair.
        self.where: dict[str, int | list[int]] = table.count_pairs()
        for pair, words in self.where.items():
            if len(words) == 1:
                self.where[pair] = words[0]
        self.symbols = symbols = array("q")
        self.logs = logs = array("d")
        self.base = base = array("d")
        self.grow(max((max(map(ord, word)) for word in table.words if word), default=0))
        for word, count in zip(table.words, table.counts):
            for code in map(ord, word):
                symbols[code] += count
        for code, count in enumerate(symbols):
            if count > 0:
                logs[code] = base[code] = math.log(count)
        self.total = sum(symbols)
        self.log_total = math.log(self.total) if self.total else 0.0
        self.floor = max(1, min_frequency)
        self.heap: list = []
        self.version: dict[str, float] = {}
        self.fresh: set[str] = set()
        self.tight: dict[str, set[str]] = {}
        self.by_symbol: dict[str, list[str]] = {}
        #: Pairs appended to ``by_symbol`` since it was last swept.
        self.noted = 0
        counts = table.pair_count
        self.cut = max(self.floor, max(counts.values(), default=0) // 4)
        self.requeue([pair for pair, count in counts.items() if count >= self.cut])

    def grow(self, code: int) -> None:
        """Make room in the symbol arrays up to code point ``code``."""
        more = code + 1 - len(self.symbols)
        if more > 0:
            self.symbols.extend(repeat(0, more))
            self.logs.extend(repeat(0.0, more))
            self.base.extend(repeat(-math.inf, more))

    # -- the queue -------------------------------------------------------------
    def requeue(self, pairs) -> None:
        """Queue bounds of the gains of ``pairs``: the queued ones, and the
        others counted at least ``cut`` times. A queued pair whose bound did
        not rise keeps its entry. Pairs left without occurrences are
        forgotten."""
        counts, version, logs = self.table.pair_count, self.version, self.logs
        heap = self.heap
        log, push = math.log, heapq.heappush
        log_total, cut = self.log_total + 2 * HEADROOM, self.cut
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
                self.note(pair)
            neg_key = -count * (log(count) + log_total - logs[ord(pair[0])] - logs[ord(pair[1])])
            if queued is not None and queued <= neg_key:
                continue
            version[pair] = neg_key
            push(heap, (neg_key, pair))
            self.untighten(pair)
        if len(heap) > len(version) + 20_000:
            self.compact()
        if self.noted > 2 * len(version) + 20_000:
            self.sweep()

    def refresh(self, pair: str) -> None:
        """Queue a queued pair again with its exact gain."""
        count = self.table.pair_count[pair]
        logs = self.logs
        neg_gain = -count * (math.log(count) + self.log_total - logs[ord(pair[0])]
                             - logs[ord(pair[1])])
        self.version[pair] = neg_gain
        self.fresh.add(pair)
        heapq.heappush(self.heap, (neg_gain, pair))
        index_by_symbol(self.tight, pair)

    def untighten(self, pair: str) -> None:
        """``pair``'s entry is no exact gain any more."""
        tight = self.tight
        for symbol in pair:
            found = tight.get(symbol)
            if found:
                found.discard(pair)

    def unbind(self, symbols) -> set[str]:
        """After a merge lowered the counts of ``symbols``: the pairs
        holding them whose entries were exact gains, which may now be below
        the gains; their entries are made void (an infinite key makes
        requeue queue them again)."""
        version, tight = self.version, self.tight
        out: set[str] = set()
        for symbol in symbols:
            out.update(tight.pop(symbol, ()))
        for pair in out:
            self.untighten(pair)
            if pair in version:
                version[pair] = math.inf
        return out

    def compact(self) -> None:
        """Drop the void entries (the heap would otherwise hold every gain
        ever computed)."""
        version = self.version
        self.heap = [entry for entry in self.heap if version.get(entry[1]) is entry[0]]
        heapq.heapify(self.heap)

    def deactivate(self, pair: str) -> None:
        """Take ``pair`` out of the queue (its entries become void; its
        place in ``by_symbol`` goes at the next :meth:`queued_with` or
        :meth:`sweep`)."""
        if self.version.pop(pair, None) is not None:
            self.untighten(pair)

    # -- the queued pairs by symbol ----------------------------------------------
    # Lists, not sets: most symbols hold a few pairs, and an empty set alone
    # takes several times the room of a short list. A list may hold pairs no
    # longer queued, and a pair twice: readers keep the queued ones, once.
    def note(self, pair: str) -> None:
        """``pair`` has just been queued: list it under its symbols."""
        by_symbol = self.by_symbol
        for symbol in pair:
            found = by_symbol.get(symbol)
            if found is None:
                by_symbol[symbol] = [pair]
            else:
                found.append(pair)
        self.noted += 1

    def queued_with(self, symbol: str) -> list[str]:
        """The queued pairs holding ``symbol`` (its list is pruned to them)."""
        found = self.by_symbol.get(symbol)
        if not found:
            return []
        version = self.version
        live = [pair for pair in dict.fromkeys(found) if pair in version]
        if live:
            self.by_symbol[symbol] = live
        else:
            del self.by_symbol[symbol]
        return live

    def sweep(self) -> None:
        """Prune every list of ``by_symbol`` (they would otherwise keep
        every pair ever queued)."""
        for symbol in list(self.by_symbol):
            self.queued_with(symbol)
        self.noted = 0

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
        found = self.where.pop(pair)
        replaced = table.rewrite(pair, merged,
                                 (found,) if type(found) is int else sorted(set(found)))
        del table.pair_count[pair]
        left, right = pair
        codes = ord(left), ord(right)
        new = ord(merged)
        self.grow(new)
        symbols, logs = self.symbols, self.logs
        symbols[codes[0]] -= replaced
        symbols[codes[1]] -= replaced
        symbols[new] += replaced
        for code in (*codes, new):
            if symbols[code] > 0:
                logs[code] = math.log(symbols[code])
        self.total -= replaced
        self.log_total = math.log(self.total)
        self.fresh.clear()
        changed = self.unbind((left, right))
        changed.update(table.gained)
        changed.update(table.lost)
        base = self.base
        for symbol, code in zip(pair, codes):
            if symbols[code] > 0 and base[code] - logs[code] > HEADROOM:
                changed.update(self.queued_with(symbol))
                base[code] = logs[code]
        base[new] = max(base[new], logs[new])
        where = self.where
        for gained, words in table.gained.items():
            found = where.get(gained)
            if found is None:
                where[gained] = words[0] if len(words) == 1 else words
            elif type(found) is int:
                words.append(found)
                where[gained] = words
            else:
                found.extend(words)
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
