"""Units and their counts: the string helpers every trainer's input goes through.

Sentences split into words (sentencepiece's ``SplitIntoWords``), character
counts, the masking of characters outside the alphabet, and sentencepiece's
``Sorted`` order. :mod:`subtok.training.corpus` (the loading passes) and
:mod:`subtok.training.followers` (unigram's seed entries) build on them.
"""

from __future__ import annotations

import itertools
import re
import sys
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable

from subtok.symbols import BOUNDARY, UNK_CHAR
from subtok.symbols import SPACE_SYMBOL as SPACE

#: Characters of count-1 sentences whose words a chunk's counting (the normalization pass, unigram's runs) counts in one call.
COUNT_BATCH_CHARS = 65536


def sorted_items(items):
    """sentencepiece's ``Sorted``: value descending, then key ascending."""
    return sorted(items, key=lambda kv: (-kv[1], kv[0]))


_PREFIX_WS_RUN = re.compile("(?<=[^%s])(?=%s)" % (SPACE, SPACE))
_SUFFIX_WS_RUN = re.compile("(?<=%s)(?=[^%s])" % (SPACE, SPACE))


def split_into_words(text: str, treat_whitespace_as_suffix: bool = False,
                     allow_whitespace_only_pieces: bool = False) -> list[str]:
    """sentencepiece's ``SplitIntoWords``.

    Prefix mode: a word starts at the beginning and at every "▁" (with
    ``allow_whitespace_only_pieces`` only at the first "▁" of a run, so the
    run sticks to the next word). Suffix mode: a word ends after every "▁"
    (with ``allow_whitespace_only_pieces`` only after the last of a run).
    """
    if not text:
        return []
    if not treat_whitespace_as_suffix:
        if allow_whitespace_only_pieces:
            return _PREFIX_WS_RUN.split(text)
        parts = text.split(SPACE)
        words = [parts[0]] if parts[0] else []
        words.extend(SPACE + p for p in parts[1:])
        return words
    if allow_whitespace_only_pieces:
        return _SUFFIX_WS_RUN.split(text)
    parts = text.split(SPACE)
    words = [p + SPACE for p in parts[:-1]]
    if parts[-1]:
        words.append(parts[-1])
    return words


def count_words(sentences: Iterable[tuple[str, int]], treat_whitespace_as_suffix: bool = False,
                allow_whitespace_only_pieces: bool = False) -> list[tuple[str, int]]:
    """Distinct words with summed counts, sorted by (count desc, word asc)."""
    counts: Counter = Counter()
    for text, freq in sentences:
        words = split_into_words(text, treat_whitespace_as_suffix, allow_whitespace_only_pieces)
        if freq == 1:
            counts.update(words)
        else:
            for word in words:
                counts[word] += freq
    return sorted_items(counts.items())


def weighted_chars(texts: Iterable[str], freqs: Iterable[int]) -> Counter:
    """Character counts of ``texts`` weighted by ``freqs`` (texts grouped by weight)."""
    groups: dict[int, list[str]] = {}
    for text, freq in zip(texts, freqs):
        groups.setdefault(freq, []).append(text)
    counts: Counter = Counter()
    for freq, group in groups.items():
        if freq == 1:
            counts.update("".join(group))
        else:
            for char, n in Counter("".join(group)).items():
                counts[char] += n * freq
    return counts


def mask_unknown(sentences: list[tuple[str, int]], alphabet: dict[str, int],
                 counts: Iterable[str]) -> list[tuple[str, int]]:
    """Replace every character outside ``alphabet`` by U+2585."""
    table, pattern = mask_table(alphabet, counts)
    search = pattern.search
    return [(text.translate(table), freq) if search(text) else (text, freq)
            for text, freq in sentences]


def mask_table(alphabet, counts: Iterable[str], nul: bool = True):
    """str.translate table of :func:`mask_unknown`, and a regex finding its
    keys; without ``nul``, NUL is left alone (where it is a separator)."""
    table = {ord(c): UNK_CHAR for c in counts if c not in alphabet}
    table[ord(BOUNDARY)] = UNK_CHAR
    if nul:
        table[0] = UNK_CHAR
    else:
        table.pop(0, None)
    table[0x20] = UNK_CHAR
    pattern = re.compile("[%s]" % "".join("\\U%08x" % c for c in sorted(table)))
    return table, pattern


def mask_units(units: Counter, alphabet: dict[str, int], counts: Iterable[str],
               groups: list[tuple[int, list[str]]] | None = None) -> list[tuple[str, int]]:
    """Masked distinct units (merged when masking makes them equal), sorted by
    (count desc, unit asc). ``groups``: see :func:`masked_groups`."""
    return flatten_groups(masked_groups(units, alphabet, counts, groups))


def masked_groups(units: Counter, alphabet: dict[str, int], counts: Iterable[str],
                  groups: list[tuple[int, list[str]]] | None = None) -> list[tuple[int, list[str]]]:
    """:func:`mask_units` grouped by count (as :func:`count_groups`).
    ``groups``: the units' own groups (:func:`count_groups` of ``units``),
    if made already (they are changed); masking then moves the keys it
    changes to their new groups, and nothing is sorted again."""
    if groups is None:
        groups = count_groups(units)
    table, pattern = mask_table(alphabet, counts)
    masked = _to_mask(units, counts, pattern)
    if masked:
        groups = _remask_groups(groups, units, masked, table)
    return groups


def _to_mask(units: dict[str, int], chars: Iterable[str], pattern: "re.Pattern[str]") -> list[str]:
    """The keys of ``units`` in which ``pattern`` (:func:`mask_table`'s)
    finds a character, in ``units``' order; ``chars``: every character of
    the keys but NUL and space (:func:`~subtok.training.corpus.checked_alphabet`'s
    counts); should one be missing, each key is searched alone."""
    # Usually none or a few (rare characters): one scan over all units,
    # joined by a character that none holds and the pattern never finds,
    # finds them; the separators around a match delimit its unit.
    chars = set(chars)
    separator = next(char for char in map(chr, range(1, sys.maxunicode + 1))
                     if char not in chars and char not in (BOUNDARY, " "))
    joined = separator.join(units)
    if joined.count(separator) != len(units) - 1:  # a key holds it after all
        return [key for key in units if pattern.search(key)]
    found: list[str] = []
    end = -1
    for match in pattern.finditer(joined):
        at = match.start()
        if at < end:
            continue  # in the unit found last
        end = joined.find(separator, at)
        if end < 0:
            end = len(joined)
        found.append(joined[joined.rfind(separator, 0, at) + 1:end])
    return found


def remask(counts: dict[str, int], keys: list[str], table: dict[int, str]) -> None:
    """Replace ``keys`` of ``counts`` by their masked strings (``table``),
    adding up the counts of strings that become equal. All of them leave
    first: a masked string can then never be mistaken for a key that
    still has to be masked."""
    moved = [(key.translate(table), counts.pop(key)) for key in keys]
    for key, count in moved:
        counts[key] = counts.get(key, 0) + count


def sorted_by_count(counts: dict[str, int]) -> list[tuple[str, int]]:
    """Items sorted by (count desc, key asc), i.e. sentencepiece's ``Sorted``."""
    return flatten_groups(count_groups(counts))


def count_groups(counts: dict[str, int]) -> list[tuple[int, list[str]]]:
    """:func:`sorted_by_count` grouped: (count, its keys sorted), by count
    descending."""
    # Keys grouped by count, each group sorted alone: the strings are
    # compared only within a group (many units share a count, count 1 most of all),
    # and compare faster alone than in (key, count) tuples.
    groups: dict[int, list[str]] = {}
    for key, count in counts.items():
        group = groups.get(count)
        if group is None:
            groups[count] = [key]
        else:
            group.append(key)
    out = []
    for count in sorted(groups, reverse=True):
        keys = groups[count]
        keys.sort()
        out.append((count, keys))
    return out


def flatten_groups(groups: list[tuple[int, list[str]]]) -> list[tuple[str, int]]:
    """The (key, count) pairs of :func:`count_groups`' groups, in order."""
    out: list[tuple[str, int]] = []
    for count, keys in groups:
        out.extend(zip(keys, itertools.repeat(count)))
    return out


def _remask_groups(groups: list[tuple[int, list[str]]], units: dict[str, int], keys: list[str],
                   table: dict[int, str]) -> list[tuple[int, list[str]]]:
    """``groups`` (:func:`count_groups` of ``units``) after ``keys`` of
    ``units`` are masked (:func:`remask`), without sorting the groups
    again: only the keys that move (the masked ones, and a unit equal to
    a masked string, whose count grows) leave their group, and join
    their new one."""
    leaving = set(keys)
    moved = {key: units[key] for key in keys}
    remask(moved, keys, table)
    for key in moved:
        if key in units and key not in leaving:
            leaving.add(key)
            moved[key] += units[key]
    # count -> (key, joins) of the keys that leave (False) or join (True) its group
    edits: dict[int, list[tuple[str, bool]]] = {}
    for key in leaving:
        edits.setdefault(units[key], []).append((key, False))
    for key, count in moved.items():
        edits.setdefault(count, []).append((key, True))
    by_count = dict(groups)
    for count, changes in edits.items():
        by_count[count] = _edited(by_count.get(count, []), changes)
    return [(count, by_count[count]) for count in sorted(by_count, reverse=True) if by_count[count]]


def _edited(keys: list[str], changes: list[tuple[str, bool]]) -> list[str]:
    """``keys`` (sorted) with ``changes`` made: (key, True) inserts a key
    it lacks, (key, False) removes one it holds; sorted, the unchanged
    keys copied in runs between the changes (found by bisection)."""
    out: list[str] = []
    start = 0
    for key, joins in sorted(changes):
        at = bisect_left(keys, key, start)
        out += keys[start:at]
        if joins:
            out.append(key)
            start = at
        else:
            start = at + 1  # keys[at] is the key
    out += keys[start:]
    return out


__all__ = ["COUNT_BATCH_CHARS", "sorted_items", "sorted_by_count", "split_into_words", "count_words",
           "weighted_chars", "mask_unknown", "mask_table", "mask_units", "masked_groups", "count_groups", "flatten_groups", "remask"]
