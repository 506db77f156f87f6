"""Pair statistics over distinct words, and frequency merging as Hugging Face
``tokenizers`` does it: the engine shared by the WordPiece and byte-level BPE
trainers.

Words and symbols: every symbol (an id in the vocabulary being built) is
one character, :func:`symbol_char` of its id, so a word is a ``str`` of
symbols, a pair of adjacent symbols is a 2-character string, and comparing
two pairs as strings compares their ``(left id, right id)`` tuples (the
mapping keeps id order). Rewriting every occurrence of a pair, left to
right and without overlap, is ``str.replace``; finding them is ``str.find``.

:class:`PairTable` holds the distinct words with their counts and the
weighted count of every adjacent pair (overlapping occurrences count, so
"aaaa" holds "aa" three times). :meth:`PairTable.rewrite` merges one pair in
the given words and reports, for each pair that gained an occurrence, the
words where it did; it updates the counts exactly as ``tokenizers``'
``Word::merge`` reports its changes (``tokenizers/src/models/bpe/word.rs``):
per occurrence, the pair with the left neighbour and the pair with the right
neighbour lose the word's count and the pairs with the new symbol gain it.
The merged pair's own count is left as it was, as there.

:func:`merge_by_frequency` is the merge loop of ``BpeTrainer::do_train``
(``tokenizers/src/models/bpe/trainer.rs``, step 5), entry for entry:

* the queue holds *entries* ``(count, pair, words)``; the best entry has the
  highest count, then the smallest pair of ids (``Merge``'s ordering);
* an entry whose count is out of date is put back with the current count;
  an up-to-date best entry below ``min_frequency`` (or at 0) ends training;
* the merge rewrites the pair only in the entry's own words; every pair
  that gained occurrences gets a new entry holding the words of this merge
  (a pair normally has one entry; when a merge yields a token that already
  exists, pairs with it can have several, as in ``tokenizers``);
* a new token is the left string joined with the right one (the caller's
  ``join``: ``tokenizers`` drops the right one's continuing-subword prefix);
  if that string is already a token, its id is reused and the vocabulary
  does not grow;
* training stops when the vocabulary has ``vocab_size`` tokens.

Two entries with the same count and pair are taken oldest first (the order
of equal elements in ``tokenizers``' heap is unspecified).

Speed and memory: entries below a threshold wait in buckets by the power of
two of their count instead of in the heap; when the heap runs dry, the
highest non-empty bucket is heapified. Most pairs are rare and are never
looked at again; the heap's order is the same as one heap holding them all.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import add


def symbol_char(symbol_id: int) -> str:
    """The character standing for symbol ``symbol_id`` (surrogates skipped)."""
    return chr(symbol_id + 0x800 if symbol_id >= 0xD800 else symbol_id)


def symbol_id(char: str) -> int:
    """Inverse of :func:`symbol_char`."""
    code = ord(char)
    return code - 0x800 if code >= 0xE000 else code


class PairTable:
    """Distinct words (strings of symbol characters) with their counts, and
    the weighted count of every adjacent pair (a pair whose count falls to
    0 is dropped)."""

    def __init__(self, words: list[str], counts: list[int]) -> None:
        self.words = words
        self.counts = counts
        self.pair_count: dict[str, int] = {}
        #: Filled by :meth:`rewrite`: pair -> words where it gained an
        #: occurrence (a word may repeat); the caller empties it.
        self.gained: dict[str, list[int]] = {}
        #: Filled by :meth:`rewrite`: pairs that lost an occurrence.
        self.lost: set[str] = set()

    def count_pairs(self) -> dict[str, list[int]]:
        """Count every adjacent pair; return pair -> the words holding it."""
        counts = self.pair_count
        where: dict[str, list[int]] = {}
        get = counts.get
        for w, s in enumerate(self.words):
            if len(s) < 2:
                continue
            f = self.counts[w]
            for key in map(add, s, s[1:]):
                counts[key] = get(key, 0) + f
                found = where.get(key)
                if found is None:
                    where[key] = [w]
                elif found[-1] != w:
                    found.append(w)
        return where

    def rewrite(self, key: str, merged: str, word_ids: Iterable[int]) -> int:
        """Replace pair ``key`` by the symbol ``merged`` in ``word_ids``
        (left to right, no overlap); return the weighted number of
        occurrences replaced. Updates ``pair_count``, ``gained``, ``lost``."""
        left, right = key
        words, counts = self.words, self.counts
        pc = self.pair_count
        get = pc.get
        gained, lost = self.gained, self.lost
        total = 0
        for w in word_ids:
            s = words[w]
            i = s.find(key)
            if i < 0:
                continue
            f = counts[w]
            last = len(s) - 2
            end = -1
            while i >= 0:
                total += f
                # (pair that loses the occurrence, pair that gains it) on
                # each side that has a neighbour
                sides = []
                if i > 0:
                    before = merged if i == end else s[i - 1]
                    sides.append((before + left, before + merged))
                if i < last:
                    after = s[i + 2]
                    sides.append((right + after, merged + after))
                for old, new in sides:
                    left_over = pc[old] - f
                    if left_over:
                        pc[old] = left_over
                    else:
                        del pc[old]  # (no pair without occurrences is kept)
                    lost.add(old)
                    pc[new] = get(new, 0) + f
                    found = gained.get(new)
                    if found is None:
                        gained[new] = [w]
                    elif found[-1] != w:
                        found.append(w)
                end = i + 2
                i = s.find(key, end)
            words[w] = s.replace(key, merged)
        return total


@dataclass(frozen=True, slots=True)
class Merge:
    """One merge: ``left`` + ``right`` -> ``new`` (ids), chosen with
    ``score`` (its count, or its gain for the likelihood criterion)."""

    left: int
    right: int
    new: int
    score: float


def add_token(tokens: list[str], index: dict[str, int], pair: str,
              join: Callable[[str, str], str], bar=None) -> tuple[int, int, int]:
    """(left id, right id, joined id) of a chosen pair; the joined string is
    appended to ``tokens`` unless it is a token already (its id is reused)."""
    left, right = symbol_id(pair[0]), symbol_id(pair[1])
    text = join(tokens[left], tokens[right])
    new = index.get(text)
    if new is None:
        new = index[text] = len(tokens)
        tokens.append(text)
        if bar is not None:
            bar.update(1)
    return left, right, new


def first_scores(size: int, merges: list[Merge]) -> list[float]:
    """Per token id, the score of the merge that first made it (0 for the
    tokens no merge made)."""
    scores = [0.0] * size
    for merge in reversed(merges):
        scores[merge.new] = float(merge.score)
    return scores


class _Queue:
    """``tokenizers``' max-heap of entries, with the rare ones in buckets.

    An entry is ``(-count, pair, seq, words)``. The heap holds the entries
    whose count has at least ``level + 1`` bits; the others wait in
    ``buckets[bit length]`` (0 for a count of 0).
    """

    def __init__(self) -> None:
        self.heap: list = []
        self.buckets: dict[int, list] = {}
        self.level = 1 << 62
        self.seq = itertools.count()

    def push(self, count: int, pair: str, words: list[int], seq: int | None = None) -> None:
        """Queue an entry (``seq`` given: an entry put back, keeping its age)."""
        entry = (-count, pair, next(self.seq) if seq is None else seq, words)
        bits = count.bit_length()
        if bits >= self.level:
            heapq.heappush(self.heap, entry)
        else:
            self.buckets.setdefault(bits, []).append(entry)

    def pop(self):
        """The best entry, or None when there is none."""
        if not self.heap:
            if not self.buckets:
                return None
            self.level = max(self.buckets)
            self.heap = self.buckets.pop(self.level)
            heapq.heapify(self.heap)
        return heapq.heappop(self.heap)


def merge_by_frequency(table: PairTable, tokens: list[str], *, join: Callable[[str, str], str],
                       vocab_size: int, min_frequency: int, bar=None) -> list[Merge]:
    """Merge pairs of ``table`` until ``tokens`` (id -> string, extended in
    place) has ``vocab_size`` entries; the merges in order (see the module
    docstring). ``bar`` (a progress bar) advances once per new token."""
    index = {token: i for i, token in enumerate(tokens)}
    queue = _Queue()
    for pair, words in table.count_pairs().items():
        count = table.pair_count[pair]
        if count > 0:
            queue.push(count, pair, words)
    pc = table.pair_count
    merges: list[Merge] = []
    while len(index) < vocab_size:
        entry = queue.pop()
        if entry is None:
            break
        stored, pair, seq, words = entry
        count = pc.get(pair, 0)
        if -stored != count:
            queue.push(count, pair, words, seq)
            continue
        if count < 1 or min_frequency > count:
            break
        left, right, new = add_token(tokens, index, pair, join, bar)
        merges.append(Merge(left, right, new, count))
        table.rewrite(pair, symbol_char(new), sorted(set(words)))
        for gained, where in table.gained.items():
            count = pc.get(gained, 0)
            if count > 0:
                queue.push(count, gained, where)
        table.gained.clear()
        table.lost.clear()
    return merges


__all__ = ["PairTable", "Merge", "merge_by_frequency", "add_token", "first_scores", "symbol_char",
           "symbol_id"]
