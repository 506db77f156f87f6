"""BPE trainer: sentencepiece's ``bpe_model_trainer.cc`` (``Trainer::Train``).

Phases:

1. *words* - the corpus split into words (``SplitSentencesByWhitespace``)
   or whole sentences, as distinct strings with summed counts (the
   ``pretokenization_delimiter`` is already U+2585 in the corpus).
2. *symbols* - every word is a string of symbols, one character each (a
   corpus character is its own symbol, a merged symbol gets an unused code
   point); U+2585 is an "unknown" symbol that never pairs.
3. *pairs* - every adjacent pair is a candidate with an exact frequency
   (sum of word counts over its current occurrences; overlapping
   occurrences count, so "aaaa" gives "aa" three) and the words it occurs
   in; only a pair whose concatenation is a valid piece
   (:class:`~subtok.training.validity.PieceValidator`, checked when it
   reaches the top) can be chosen, and a pair that cannot be one because
   of the two characters where its symbols meet is never added
   (:class:`_Junctions`).
4. *merges* - repeatedly take the best candidate: highest frequency, then
   fewer characters, then the smaller string; skip it if its string was
   already emitted through another split ("aa"+"a" vs "a"+"aa"); emit it with
   score ``-rank``; rewrite its occurrences left to right (an occurrence whose
   left symbol was consumed by the previous one is skipped, "aaa" -> "aa a",
   which is ``str.replace``),
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

import collections
import heapq
import itertools
from collections.abc import Iterable

from subtok.collector import collector_paused
from subtok.symbols import UNK_CHAR
from subtok.progress import Progress
from subtok.training.corpus import Corpus
from subtok.training.units import sorted_items
from subtok.training.spec import TrainerOptions
from subtok.training.validity import PieceValidator


class _State:
    """Symbols, words as strings of symbol characters, and pair statistics.

    A symbol is one character: a corpus character stands for itself, a
    merged symbol gets a fresh code point no corpus character uses. So a
    word is a ``str`` of symbols, a pair is the 2-character string
    ``left + right`` and rewriting every occurrence of a pair left to right
    is ``str.replace`` ("aaa" -> "aa a", like sentencepiece).

    ``pairs[pair]`` is ``[frequency, stamp, word, word, ...]``: the current
    frequency, the order in which the pair was first seen (the tie-break
    between two splits of the same string), and the words where the pair
    was added (in word order, possibly repeated or stale). A pair left with
    no occurrence after a merge keeps only its stamp, in ``zeros``, until
    the queue runs dry. A pair with U+2585, or whose junction is invalid
    (``junction_ok``), is never in ``pairs``; one
    merged, dropped as a duplicate or found invalid leaves it for good (it
    can never gain occurrences again: only pairs with the newest symbol
    do). Validity (``valid``) is checked only when a pair reaches the top
    of the trainer's queue: an invalid pair's counts never influence
    another pair.
    """

    def __init__(self, words: list[tuple[str, int]], alphabet: Iterable[str],
                 validator: PieceValidator) -> None:
        self.valid = validator.is_valid
        # The corpus masks every character outside its alphabet
        # (``mask_units``), so the words hold only these (a set of the
        # words' characters would walk every character of the corpus).
        used = set(alphabet)
        used.add(UNK_CHAR)
        self._fresh = (chr(c) for c in itertools.chain(range(0x100, 0xD800), range(0xE000, 0x110000))
                       if chr(c) not in used)
        self.strings: dict[str, str] = {}  # merged symbol -> its string
        self.unk = UNK_CHAR
        self.zeros: list[int] = []  # pairs without occurrences, packed (see merge)
        self.pairs: dict[str, list] = {}
        self.word_freq = [f for _, f in words]
        self.words = [w for w, _ in words]
        self.new_pairs: list[str] = []
        self.junction_ok = _Junctions(validator)
        # Each pair's words, one entry per occurrence, in word order; its
        # frequency is then the sum of their counts (in C, once per pair).
        # Counted under the left character, then the right one: a character
        # of the corpus hashes from its cache and ``zip`` reuses its tuple
        # once unpacked, where a pair string (or tuple) would be built and
        # hashed per occurrence.
        seen: collections.defaultdict[str, collections.defaultdict[str, list[int]]] = \
            collections.defaultdict(lambda: collections.defaultdict(list))
        words = self.words
        for w, s in enumerate(words):
            for a, b in zip(s, s[1:]):
                seen[a][b].append(w)
        unk, junction_ok = self.unk, self.junction_ok
        found = [(a + b, found_in) for a, after in seen.items() if a != unk
                 for b, found_in in after.items() if b != unk and junction_ok[a + b]]
        # The stamps follow the order in which the pairs are first seen:
        # in the first word holding each (its words are in word order), at
        # its first position there.
        found.sort(key=lambda item: (item[1][0], words[item[1][0]].find(item[0])))
        pairs, new_pairs = self.pairs, self.new_pairs
        freq = self.word_freq.__getitem__
        for stamp, (key, found_in) in enumerate(found):
            found_in[:0] = (sum(map(freq, found_in)), stamp)
            pairs[key] = found_in
            new_pairs.append(key)
        self.stamps = len(found)

    def drop(self, key: str) -> None:
        """Forget pair ``key`` (an invalid piece, or a string already emitted)."""
        del self.pairs[key]

    def merge(self, key: str, text: str) -> None:
        """Rewrite every occurrence of pair ``key`` (string ``text``) with a new symbol.

        The counts are those of rewriting the occurrences one by one, left
        to right, word by word (in word order): for each, the pairs with
        the left and right neighbours lose the word's count, then the pairs
        (left, merged) and (merged, right) gain it - so a pair between two
        occurrences ("abab") is created and removed again, as in
        sentencepiece. New pairs get their stamps in the order they first
        appear in that walk.

        Per occurrence only the word is noted, under the neighbouring
        character; once per merge each new pair's gain is summed and the
        pair it replaces (``p + left`` for ``p + merged``, ``right + n``
        for ``merged + n``) loses it.
        """
        left, right = key
        merged = next(self._fresh)
        self.strings[merged] = text
        pairs = self.pairs
        words, word_freq = self.words, self.word_freq
        occurrences = pairs.pop(key)  # gone for good: no later merge can add it back
        # The words of each new pair, under the neighbour of the merged
        # symbol: the character itself for (char, merged), its code point
        # for (merged, char) - one dict, so its order is the first-seen
        # order, and no pair string is built per occurrence.
        gained: collections.defaultdict[str | int, list[int]] = collections.defaultdict(list)
        adjacent = 0  # what (merged, left) loses again between two adjacent occurrences
        # An occurrence list is appended to in word order (at the start, or
        # in the one merge that made its pair's newer symbol), so words come
        # in order; a repeated or stale word no longer holds the pair.
        # split + join: one scan of the word, and the single-occurrence
        # case (nearly all) tells itself by the two parts.
        for w in itertools.islice(occurrences, 2, None):
            s = words[w]
            if key not in s:
                continue
            parts = s.split(key)
            words[w] = merged.join(parts)
            try:
                head, tail = parts
            except ValueError:  # several occurrences (rare)
                adjacent += _walk(s, key, merged, len(parts[0]), word_freq[w], w, gained)
                continue
            if head:
                gained[head[-1]].append(w)
            if tail:
                gained[ord(tail[0])].append(w)
        unk = self.unk
        new_pairs = self.new_pairs
        find = pairs.get
        freq = word_freq.__getitem__
        string = self.strings.get
        junction_ok = self.junction_ok
        first, last = text[0], text[-1]
        stamp = self.stamps
        zeroed: list[str] = []
        for neighbour, found_in in gained.items():
            if neighbour.__class__ is int:
                char = chr(neighbour)
                k = merged + char
                if unk in k or not junction_ok[last + string(char, char)[0]]:
                    # Left out, and so is the pair it replaces: the same
                    # junction (``merged`` ends like ``right``), or U+2585.
                    continue
                lost = right + char
            else:
                k = neighbour + merged
                if unk in k or not junction_ok[string(neighbour, neighbour)[-1] + first]:
                    continue  # (as above: ``merged`` starts like ``left``)
                # (merged, merged): what (merged, left) loses for it is
                # ``adjacent``, taken once the merge's gains are in.
                lost = None if neighbour == merged else neighbour + left
            gain = sum(map(freq, found_in))
            if lost is not None:
                old = find(lost)
                if old is not None:
                    old[0] -= gain
                    if not old[0]:
                        zeroed.append(lost)
            found_in[:0] = (gain, stamp)
            stamp += 1
            pairs[k] = found_in
            new_pairs.append(k)
        self.stamps = stamp
        if adjacent:
            k = merged + left
            entry = find(k)
            if entry is not None:  # (not if left out as invalid)
                entry[0] -= adjacent
                if not entry[0]:
                    zeroed.append(k)
        # A pair left without occurrences after a merge never gets any again
        # (only pairs with the newest symbol gain some): keep just its stamp.
        # Packed in one int (stamp, left, right code points): they are many.
        for pair in zeroed:
            entry = find(pair)
            if entry is not None and not entry[0]:
                self.zeros.append(entry[1] << 42 | ord(pair[0]) << 21 | ord(pair[1]))
                del pairs[pair]

    def restore_zeros(self) -> list[str]:
        """Put the pairs without occurrences back (frequency 0); their keys."""
        keys = []
        for packed in self.zeros:
            pair = chr(packed >> 21 & 0x1FFFFF) + chr(packed & 0x1FFFFF)
            self.pairs[pair] = [0, packed >> 42]
            keys.append(pair)
        self.zeros.clear()
        return keys


class _Junctions(dict):
    """Whether the two characters where a pair's symbols meet
    (``junction_ok[last + first]``) may be in a piece; a pair whose
    junction may not is never added: it could never be chosen, and an
    invalid pair's counts influence no other pair (sentencepiece's
    ``GetPairSymbol`` makes no symbol for an invalid pair at all). Most
    of the pairs a merge makes that are invalid are such (a word's end
    before punctuation: two scripts), and would otherwise be stamped,
    queued and checked.

    With ``split_by_whitespace`` every rule of
    :meth:`~subtok.training.validity.PieceValidator.is_valid` that rejects
    a 2-character string rejects every string holding it: a character
    that is forbidden, a digit split off, two scripts side by side (only
    between two characters that have their own script, neither inheriting
    one nor a digit taking any, so they keep them in any longer piece),
    "\u2581" where that mode allows it only at the start (or end), a
    length limit below 2; and no such string passes the ASCII-letter
    shortcut. Without it, "\u2581" may not be last (first) in a piece but
    may be inside one, so no junction is taken as invalid.
    """

    def __init__(self, validator: PieceValidator) -> None:
        super().__init__()
        self.check = validator.is_valid if validator.split_ws else None

    def __missing__(self, junction: str) -> bool:
        ok = self.check is None or self.check(junction)
        self[junction] = ok
        return ok


def _walk(s: str, key: str, merged: str, i: int, f: int, w: int, gained: dict) -> int:
    """The new pairs of word ``w`` (count ``f``) with several occurrences
    of ``key`` (the first at ``i``), walked left to right as sentencepiece
    rewrites them; returns what (merged, left) loses again, ``f`` per two
    adjacent occurrences."""
    last = len(s) - 2
    end = -1
    adjacent = 0
    while i >= 0:
        if i == end:
            adjacent += f
            gained[merged].append(w)
        elif i > 0:
            gained[s[i - 1]].append(w)
        if i < last:
            gained[ord(s[i + 2])].append(w)
        end = i + 2
        i = s.find(key, end)
    return adjacent


def train(corpus: Corpus, options: TrainerOptions, progress: Progress) -> list[tuple[str, float]]:
    """Trained NORMAL pieces with scores (merges first, then the alphabet)."""
    # The pair statistics are lists that live to the end, made by the
    # hundred thousand, and no cycles: the collector's passes over them
    # would find nothing.
    with collector_paused():
        return _train(corpus, options, progress)


def _train(corpus: Corpus, options: TrainerOptions, progress: Progress) -> list[tuple[str, float]]:
    words = corpus.units  # phase 1, counted while loading (corpus.training_units)
    alphabet = sorted_items(corpus.alphabet.items())
    # >= 0: load_corpus has checked len(alphabet) + len(meta) <= vocab_size.
    target = options.vocab_size - len(corpus.meta) - len(alphabet)
    state = _State(words, corpus.alphabet, PieceValidator(options))
    del words
    if corpus.consumable:
        corpus.units = None  # the state holds the words now
    pairs = state.pairs
    # A lazy max-heap of (-frequency, length, string, stamp, pair). Only
    # pairs with frequency >= threshold are queued when they appear; the
    # others (most new pairs, which are rare) wait, in ``waiting`` by the
    # bit length of their frequency, and are queued when the best queued
    # pair falls below the threshold, which is then lowered. An unqueued
    # pair's frequency can only fall (pairs only gain occurrences in the
    # merge that creates them), so the heap's best is always the best of
    # all, and a lowered threshold only needs the buckets that can hold a
    # frequency that high (not a scan of every pair: most stay below it
    # to the end). The heap's order is total, so the order in which pairs
    # are queued does not matter.
    heap: list = []
    waiting: collections.defaultdict[int, list[str]] = collections.defaultdict(list)
    push = heapq.heappush
    pop = heapq.heappop
    find = pairs.get
    valid = state.valid
    threshold = 0

    def queue(keys: Iterable[str]) -> None:
        """Queue the pairs ``keys`` at or above the threshold; the others wait."""
        string = state.strings.get
        for key in keys:
            entry = find(key)
            if entry is None:
                continue  # left without occurrences (in ``zeros``)
            if entry[0] >= threshold:
                left, right = key
                text = string(left, left) + string(right, right)
                push(heap, (-entry[0], len(text), text, entry[1], key))
            else:
                waiting[entry[0].bit_length()].append(key)

    new_pairs = state.new_pairs
    queue(new_pairs)
    new_pairs.clear()
    if heap:
        threshold = -heap[0][0] // 4
    pieces: list[tuple[str, float]] = []
    emitted: set[str] = set()
    with progress.bar(total=target, desc="bpe merges", unit=" pieces") as bar:
        while len(pieces) < target:
            if not heap or -heap[0][0] < threshold:
                if threshold <= 0:
                    # No frequency is below 0: the heap is empty here, so
                    # none of the pairs put back is queued already.
                    if state.zeros:
                        queue(state.restore_zeros())
                        continue
                    progress.warning("No valid symbol found: stopped after %d merges." % len(pieces))
                    break
                threshold = min(threshold // 2, -heap[0][0] if heap else threshold)
                # Ascending, so that a pair put back (now below the
                # threshold) lands in a bucket already taken out.
                for bits in sorted(b for b in waiting if 1 << b > threshold):
                    queue(waiting.pop(bits))
                continue
            neg, length, text, order, key = pop(heap)
            entry = find(key)
            if entry is None:
                continue  # merged, dropped or invalid already
            if entry[0] != -neg:
                push(heap, (-entry[0], length, text, order, key))
                continue
            if not valid(text):
                state.drop(key)  # it can never become a piece
                continue
            if text in emitted:
                # Same string through another split: sentencepiece drops it.
                state.drop(key)
                continue
            emitted.add(text)
            pieces.append((text, -float(len(pieces))))
            bar.update(1)
            state.merge(key, text)
            queue(new_pairs)
            new_pairs.clear()
    for char, _ in alphabet:
        pieces.append((char, -float(len(pieces))))
    return pieces


__all__ = ["train"]
