"""BPE trainer: sentencepiece's ``bpe_model_trainer.cc`` (§6.6 of the reference).

Phases:

1. *words* - the corpus split into words (``SplitSentencesByWhitespace``)
   or whole sentences, as distinct strings with summed counts (the
   ``pretokenization_delimiter`` is already U+2585 in the corpus).
2. *symbols* - every word becomes a doubly linked list of symbol ids, one
   per character; U+2585 is an "unknown" symbol that never pairs.
3. *pairs* - every adjacent pair whose concatenation is a valid piece
   (:class:`~subtok.trainers.validity.PieceValidator`) is a candidate with an
   exact frequency (sum of word counts over its current occurrences;
   overlapping occurrences count, so "aaaa" gives "aa" three) and a list of
   occurrences (word, left index).
4. *merges* - repeatedly take the best candidate: highest frequency, then
   fewer characters, then the smaller string; skip it if its string was
   already emitted through another split ("aa"+"a" vs "a"+"aa"); emit it with
   score ``-rank``; rewrite its occurrences left to right (an occurrence whose
   left symbol was consumed by the previous one is skipped, "aaa" -> "aa a"),
   lowering the counts of the neighbouring pairs that disappear and adding
   the new pairs (prev, merged) and (merged, next).
5. *alphabet* - the alphabet characters follow, by (count desc, code point
   asc), continuing the scores.

Why a lazy max-heap: a merge can only *lower* the frequency of pairs that
existed before it (the pairs it creates all contain the new symbol), so a
heap entry whose stored frequency is out of date is simply re-pushed with the
current value when it reaches the top. Each merge touches only the
occurrences of the merged pair and their neighbours. (A full rescan per
merge - subword-nmt's first version - costs O(pairs) per merge, about 40x
slower on botchan at 8000 pieces; sentencepiece's snapshot rescans a
refreshed top-5 % "active" set, 0.2.3 uses a priority queue; all give the
same vocabulary.)

Symbols are identified by how they were built (left id, right id), not by
their string, exactly like sentencepiece's fingerprints: "aaa" built as
("aa", "a") and as ("a", "aa") are different symbols, and the one chosen
second is dropped as a duplicate without rewriting its occurrences.
"""

from __future__ import annotations

import heapq
from collections import Counter

from .corpus import Corpus, Progress, UNK_CHAR, words_with_counts
from .spec import TrainerOptions
from .validity import PieceValidator

_NONE = -1


def training_words(corpus: Corpus, options: TrainerOptions) -> list[tuple[str, int]]:
    """Phase 1: the strings BPE merges within, with their counts."""
    if options.split_by_whitespace:
        words = words_with_counts(corpus, options)
    else:
        counts: Counter = Counter()
        for text, freq in corpus.sentences:
            counts[text] += freq
        words = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return words


class _State:
    """Symbols, words as linked lists, and pair statistics."""

    def __init__(self, words: list[tuple[str, int]], validator: PieceValidator) -> None:
        self.valid = validator.is_valid
        # symbol id -> string; char symbols first, merged symbols appended
        self.strings: list[str] = []
        self.char_ids: dict[str, int] = {}
        self.unk = self._char(UNK_CHAR)
        # pair key (left << 32 | right) -> merged symbol id, or -1 if invalid
        self.pair_symbol: dict[int, int] = {}
        self.freq: dict[int, int] = {}          # pair key -> current frequency
        self.positions: dict[int, list[int]] = {}  # pair key -> [word * stride + left]
        self.word_freq = [f for _, f in words]
        self.syms: list[list[int]] = []
        self.next: list[list[int]] = []
        self.prev: list[list[int]] = []
        self.stride = max((len(w) for w, _ in words), default=0) + 1
        for word, _ in words:
            ids = [self._char(c) for c in word]
            n = len(ids)
            self.syms.append(ids)
            self.next.append(list(range(1, n)) + [_NONE])
            self.prev.append([_NONE] + list(range(n - 1)))
        self.new_pairs: list[int] = []
        for w, ids in enumerate(self.syms):
            f = self.word_freq[w]
            base = w * self.stride
            for i in range(len(ids) - 1):
                self._add(ids[i], ids[i + 1], f, base + i)

    def _char(self, char: str) -> int:
        sid = self.char_ids.get(char)
        if sid is None:
            sid = self.char_ids[char] = len(self.strings)
            self.strings.append(char)
        return sid

    def _merged(self, key: int, left: int, right: int) -> int:
        """The symbol of pair (left, right), creating it; -1 if it cannot exist."""
        sid = self.pair_symbol.get(key)
        if sid is None:
            if left == self.unk or right == self.unk:
                sid = _NONE
            else:
                text = self.strings[left] + self.strings[right]
                if self.valid(text):
                    sid = len(self.strings)
                    self.strings.append(text)
                else:
                    sid = _NONE
            self.pair_symbol[key] = sid
        return sid

    def _add(self, left: int, right: int, f: int, pos: int) -> None:
        key = left << 32 | right
        if self._merged(key, left, right) == _NONE:
            return
        old = self.freq.get(key)
        if old is None:
            self.freq[key] = f
            self.positions[key] = [pos]
            self.new_pairs.append(key)
        else:
            self.freq[key] = old + f
            self.positions[key].append(pos)

    def _remove(self, left: int, right: int, f: int) -> None:
        key = left << 32 | right
        old = self.freq.get(key)
        if old is not None:
            self.freq[key] = old - f

    def merge(self, key: int) -> None:
        """Rewrite every occurrence of pair ``key`` with its merged symbol."""
        left, right = key >> 32, key & 0xFFFFFFFF
        merged = self.pair_symbol[key]
        stride = self.stride
        positions = self.positions.pop(key)
        positions.sort()
        del self.freq[key]
        for pos in positions:
            w, l = divmod(pos, stride)
            syms = self.syms[w]
            if syms[l] != left:
                continue  # consumed by the previous occurrence, or stale
            nxt = self.next[w]
            r = nxt[l]
            if r == _NONE or syms[r] != right:
                continue
            f = self.word_freq[w]
            prv = self.prev[w]
            p = prv[l]
            n = nxt[r]
            base = w * stride
            if p != _NONE:
                self._remove(syms[p], left, f)
            if n != _NONE:
                self._remove(right, syms[n], f)
            syms[l] = merged
            syms[r] = _NONE
            nxt[l] = n
            if n != _NONE:
                prv[n] = l
            if p != _NONE:
                self._add(syms[p], merged, f, base + p)
            if n != _NONE:
                self._add(merged, syms[n], f, base + l)


def train(corpus: Corpus, options: TrainerOptions, progress: Progress) -> list[tuple[str, float]]:
    """Trained NORMAL pieces with scores (merges first, then the alphabet)."""
    words = training_words(corpus, options)
    alphabet = sorted(corpus.alphabet.items(), key=lambda kv: (-kv[1], kv[0]))
    target = options.vocab_size - len(corpus.meta) - len(alphabet)
    if target < 0:
        from ..errors import TrainerError
        raise TrainerError("Vocabulary size is smaller than required_chars. %d vs %d."
                           % (options.vocab_size, len(corpus.meta) + len(alphabet)))
    state = _State(words, PieceValidator(options))
    strings = state.strings
    heap: list = []
    order = 0

    def push_new() -> None:
        nonlocal order
        for key in state.new_pairs:
            f = state.freq.get(key)
            if f is not None:
                sid = state.pair_symbol[key]
                text = strings[sid]
                heapq.heappush(heap, (-f, len(text), text, sid, key))
        state.new_pairs.clear()

    push_new()
    pieces: list[tuple[str, float]] = []
    emitted: set[str] = set()
    with progress.bar(total=target, desc="bpe merges", unit=" pieces") as bar:
        while len(pieces) < target:
            if not heap:
                progress.warning("No valid symbol found: stopped after %d merges." % len(pieces))
                break
            neg, length, text, sid, key = heapq.heappop(heap)
            current = state.freq.get(key)
            if current is None:
                continue  # merged or dropped already
            if current != -neg:
                heapq.heappush(heap, (-current, length, text, sid, key))
                continue
            if text in emitted:
                # Same string through another split: sentencepiece drops it.
                del state.freq[key]
                state.positions.pop(key, None)
                continue
            emitted.add(text)
            pieces.append((text, -float(len(pieces))))
            bar.update(1)
            state.merge(key)
            push_new()
    for char, _ in alphabet:
        pieces.append((char, -float(len(pieces))))
    return pieces


__all__ = ["train", "training_words"]
