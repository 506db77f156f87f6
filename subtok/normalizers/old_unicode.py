"""Character classes as the Unicode tables inside ``tokenizers`` see them.

``tokenizers`` asks two crates with frozen tables about characters:
``unicode_categories`` 0.1.1 (Unicode 8.0) for BertNormalizer's control
characters and nonspacing marks and for the punctuation that
BertPreTokenizer and Punctuation split on; ``unicode-normalization-
alignments`` 0.1.12 (Unicode 9.0) for the normalization forms and for
StripAccents' combining marks. To them a character assigned later has no
category and no decomposition: a Unicode 13 punctuation mark is not split
off, a Unicode 10 combining mark is not stripped (checked against
tokenizers 0.23.3).

Each class here is the current property (``regex``'s tables) intersected
with the code points the old version had assigned (generated into
:mod:`subtok.normalizers.unicode_ages`); properties of characters that
existed then have been stable since. The classes are compiled on first
use.
"""

from __future__ import annotations

import bisect
import functools

import regex

from subtok.normalizers.unicode_ages import ASSIGNED_8_0, ASSIGNED_9_0


#: Characters whose general category changed after Unicode 8.0, which
#: "current property and assigned then" gets wrong (found by comparing
#: every code point with tokenizers 0.23.3): U+1734 and U+1171E were Mn
#: (now Mc); U+1885, U+1886 (Lo then), U+A9BD (Mc then) and U+111C9 (Po
#: then) were not Mn; U+166D (now So) and U+111C9 were punctuation.
_MN_8_ADDED = "\u1734\U0001171e"
_MN_8_REMOVED = "\u1885\u1886\ua9bd\U000111c9"
_P_8_ADDED = "\u166d\U000111c9"
#: The same for Unicode 9.0's marks (any M): U+1CF2 and U+1CF3 were Mc
#: (now Lo); U+111C9 was Po.
_M_9_ADDED = "\u1cf2\u1cf3"
_M_9_REMOVED = "\U000111c9"


def _pairs(ranges: str) -> list[tuple[int, int]]:
    return [(int(a, 16), int(b, 16)) for a, b in (p.split("-") for p in ranges.split())]


def _class_body(ranges: str) -> str:
    return "".join("\\U%08x-\\U%08x" % pair for pair in _pairs(ranges))


def _old_class(prop: str, ranges: str, extra: str = "") -> str:
    """A ``regex`` V1 set: the characters that have ``prop`` and were
    assigned in ``ranges``, and those in ``extra``."""
    return "[%s[%s&&[%s]]]" % (extra, prop, _class_body(ranges))


def _old(prop: str, ranges: str, extra: str = "") -> regex.Pattern:
    """One character of :func:`_old_class`."""
    return regex.compile("(?V1)" + _old_class(prop, ranges, extra))


@functools.cache
def punctuation_class_8() -> str:
    """``char::is_ascii_punctuation(c) || c.is_punctuation()`` (Unicode 8.0),
    what BertPreTokenizer and Punctuation split off, as a V1 set."""
    return _old_class(r"\p{P}", ASSIGNED_8_0, extra=r"!-/:-@\[-`{-~" + _P_8_ADDED)


@functools.cache
def punctuation_8() -> regex.Pattern:
    """One character of :func:`punctuation_class_8`."""
    return regex.compile("(?V1)" + punctuation_class_8())


@functools.cache
def bert_control_8() -> regex.Pattern:
    """What BertNormalizer's clean_text removes: NUL, U+FFFD and ``is_other``
    characters (Cc, Cf or Co in Unicode 8.0) but tab, newline and return."""
    return _old(r"[\p{Cc}\p{Cf}\p{Co}--[\t\n\r]]", ASSIGNED_8_0, extra=r"\x00\ufffd")


@functools.cache
def nonspacing_mark_8() -> regex.Pattern:
    """``is_mark_nonspacing`` (Mn, Unicode 8.0): the accents BertNormalizer strips."""
    mn = _old_class(r"\p{Mn}", ASSIGNED_8_0, extra=_MN_8_ADDED)
    return regex.compile("(?V1)[%s--[%s]]" % (mn, _MN_8_REMOVED))


@functools.cache
def combining_mark_9() -> regex.Pattern:
    """``is_combining_mark`` (any M, Unicode 9.0): what StripAccents removes."""
    marks = _old_class(r"\p{M}", ASSIGNED_9_0, extra=_M_9_ADDED)
    return regex.compile("(?V1)[%s--[%s]]" % (marks, _M_9_REMOVED))


@functools.cache
def newer_than_9() -> regex.Pattern:
    """A character Unicode 9.0 had not assigned: the normalization forms of
    tokenizers leave it alone, whatever ``unicodedata`` now says."""
    return regex.compile("[^%s]" % _class_body(ASSIGNED_9_0))


@functools.cache
def _starts_9() -> tuple[list[int], list[int]]:
    pairs = _pairs(ASSIGNED_9_0)
    return [a for a, _ in pairs], [b for _, b in pairs]


def assigned_9(code: int) -> bool:
    """Whether Unicode 9.0 had assigned the code point ``code``."""
    starts, ends = _starts_9()
    i = bisect.bisect_right(starts, code) - 1
    return i >= 0 and code <= ends[i]
