"""Unigram's seed entries, counted chunk by chunk as the corpus is read.

sentencepiece's unigram trainer searches its seed pieces in the sentences
(``MakeSeedSentencePieces``). subtok keeps no sentences: a chunk's words
are counted with what follows each (:func:`count_followed`; as entries,
:func:`count_entries`), the chunks joined in order (:class:`FollowedStitch`),
which is all the seed search needs
(:func:`subtok.models.unigram.trainer.collect_units`).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable

from subtok.symbols import SPACE_SYMBOL as SPACE
from subtok.training.units import COUNT_BATCH_CHARS, mask_unknown, split_into_words, weighted_chars

def count_followed(texts: list[str], chunk: list[tuple[str, int]], units: tuple):
    """Unigram's units with what follows them, which its seed search needs
    (see :func:`subtok.models.unigram.trainer.collect_units`): a Counter of
    (word, follower) over the non-empty ``texts`` in order, the follower
    being the next word's first character or NUL + the next sentence's
    first character; and, to stitch chunks together, the first character
    of the first sentence and the last word with its count (its follower
    is in the next chunk). ``units``: ``("followed", suffix,
    whitespace_only, split_by_whitespace)``.
    """
    out, inner, first, last, last_count, _ = _walk_followed(texts, chunk, units)
    for part, count in inner.items():
        if part[-1:] == "\x00":
            out[(SPACE + part[:-1], "\x00" + SPACE)] += count
        else:
            out[(SPACE + part, SPACE)] += count
    return out, first, last, last_count


def _walk_followed(texts: list[str], chunk: list[tuple[str, int]], units: tuple):
    """:func:`count_followed`'s walk: its pairs (word, follower) -> count,
    but those of the batched runs of sentences (see :func:`_count_run`),
    counted as parts; then its first character, last word and count, and
    the number of non-empty texts."""
    _, suffix, ws_only, split_ws = units
    out: Counter = Counter()
    first = pending = None
    pending_count = 0
    # Default flags: runs of count-1 sentences that start with "▁" (as the
    # dummy prefix makes them) and hold no NUL are joined by NUL and split
    # at "▁" in one call per batch (see _count_run), instead of a tuple
    # per word.
    fast = not suffix and not ws_only and split_ws
    inner: Counter = Counter()  # see _count_run
    run: list[str] = []
    run_chars = nonempty = 0
    for text, (_, freq) in zip(texts, chunk):
        if not text:
            continue
        nonempty += 1
        if fast and freq == 1 and text[0] == SPACE and "\x00" not in text:
            if not run:
                if pending is None:
                    first = SPACE
                else:
                    out[(pending, "\x00" + SPACE)] += pending_count
            run.append(text)
            run_chars += len(text)
            if run_chars >= COUNT_BATCH_CHARS:
                pending, pending_count = _count_run(run, inner), 1
                run_chars = 0
            continue
        if run:
            pending, pending_count = _count_run(run, inner), 1
            run_chars = 0
        if pending is None:
            first = text[0]
        else:
            out[(pending, "\x00" + text[0])] += pending_count
        words = split_into_words(text, suffix, ws_only) if split_ws else [text]
        for i in range(len(words) - 1):
            out[(words[i], words[i + 1][0])] += freq
        pending, pending_count = words[-1], freq
    if run:
        pending, pending_count = _count_run(run, inner), 1
    return out, inner, first, pending, pending_count, nonempty


def _count_run(run: list[str], inner: Counter) -> str:
    """Count the words of ``run`` (sentences starting with "▁", without NUL)
    but its last one into ``inner``, and empty ``run``; return that last word.

    Joined by NUL and split at "▁", the sentences give "" first, then one
    part per word without its "▁": the part of a word followed by "▁"
    (the next word's first character), or by NUL + "▁" (the next sentence's
    first character) with that NUL at its end.
    """
    parts = "\x00".join(run).split(SPACE)
    run.clear()
    last = parts.pop()
    inner.update(itertools.islice(parts, 1, None))
    return SPACE + last


class FollowedStitch:
    """Joins the chunks of :func:`count_followed`, in order: the last word
    of a chunk is followed by NUL + the next chunk's first character."""

    def __init__(self) -> None:
        self.first: str | None = None
        self.pending: str | None = None
        self.count = 0

    def edge(self, first: str | None, last: str | None,
             last_count: int) -> tuple[tuple[str, str], int] | None:
        """Take the next chunk's edges; return the (word, follower) pair
        it completes with its count, or None."""
        if first is None:
            return None
        if self.first is None:
            self.first = first
        joined = None
        if self.pending is not None:
            joined = (self.pending, "\x00" + first), self.count
        self.pending, self.count = last, last_count
        return joined

    def chunk(self, counts: Counter, first: str | None, last: str | None,
              last_count: int) -> Counter:
        """``counts`` with the pair from the previous chunk's last word added."""
        joined = self.edge(first, last, last_count)
        if joined is not None:
            counts[joined[0]] += joined[1]
        return counts

    def end(self) -> dict[tuple[str, str], int]:
        """The last word: followed by the end of the text (an empty follower)."""
        if self.pending is None:
            return {}
        return {(self.pending, ""): self.count}


def mask_followed(followed: dict[tuple[str, str], int], alphabet: dict[str, int],
                  counts: Counter) -> Counter:
    """Characters outside the alphabet masked in the words and followers of
    :func:`count_followed`'s counts (the NUL before a next sentence's
    character stays)."""
    items = list(followed.items())
    words = mask_unknown([(word, 0) for (word, _), _ in items], alphabet, counts)
    chars = mask_unknown([(follower[-1:], 0) for (_, follower), _ in items], alphabet, counts)
    out: Counter = Counter()
    for ((_, follower), count), (word, _), (char, _) in zip(items, words, chars):
        out[(word, follower[:-1] + char)] += count
    return out


def count_entries(texts: Iterable[str], chunk: list[tuple[str, int]], units: tuple):
    """What unigram's trainer takes from the normalized ``texts`` (see
    :func:`subtok.models.unigram.trainer.collect_units`), for one chunk:
    the parts of :func:`_count_run` -> count, ``word + follower`` -> count
    for the other words (the follower as in :func:`count_followed`),
    character -> count, then the first character and the last word with
    its count (see :class:`FollowedStitch`), and the number of non-empty
    texts. :func:`entries_of` makes them entries; the words are in those
    (:func:`entry_words`), but the last one. ``units``: ``("entries",
    suffix, whitespace_only, split_by_whitespace)``.
    """
    pairs, parts, first, last, last_count, nonempty = _walk_followed(
        texts, chunk, ("followed",) + units[1:])
    # The words cover the texts: their characters are the texts' ones,
    # counted once per distinct word. A part is a word without its "▁",
    # with NUL at the end of a sentence (the only NUL: no text of a run
    # holds one).
    chars = weighted_chars(parts, parts.values())
    chars.pop("\x00", None)
    if parts:
        chars[SPACE] += sum(parts.values())
    entries: dict[str, int] = {}
    words: dict[str, int] = {}
    if last is not None:
        words[last] = last_count
    # (The words straight from the pairs, not from the entries: a word
    # holding NUL must show in the characters, see _entries_corpus.)
    for (word, follower), count in pairs.items():
        words[word] = words.get(word, 0) + count
        key = word + follower
        entries[key] = entries.get(key, 0) + count
    del pairs
    chars.update(weighted_chars(words, words.values()))
    return parts, entries, chars, first, last, last_count, nonempty


def entries_of(parts: Counter, entries: dict[str, int]) -> dict[str, int]:
    """:func:`count_entries`' parts and entries as entries only."""
    # A part's entry is "▁" + part + "▁", whether it ends with NUL or not
    # (see _count_run).
    out = dict(zip(map(f"{SPACE}%s{SPACE}".__mod__, parts), parts.values()))
    get = out.get
    for key, count in entries.items():
        out[key] = get(key, 0) + count
    return out


def split_entry(key: str) -> tuple[str, str]:
    """(stretch, follower) of an entry key: the follower is NUL + char or one char."""
    cut = key.find("\x00")
    if cut < 0:
        cut = len(key) - 1
    return key[:cut], key[cut:]


def entry_words(entries: dict[str, int]) -> dict[str, int]:
    """The words of :func:`count_entries`' entries (whose words hold no
    NUL) with their counts: each entry's key without its follower."""
    words: dict[str, int] = {}
    get = words.get
    find = str.find
    for key, count in entries.items():  # (split_entry's cut, inline: one per entry)
        cut = find(key, "\x00")
        word = key[:cut] if cut >= 0 else key[:-1]
        words[word] = get(word, 0) + count
    return words


__all__ = ["count_followed", "count_entries", "entries_of", "entry_words", "FollowedStitch",
           "mask_followed", "split_entry"]
