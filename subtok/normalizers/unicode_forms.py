"""The NFC, NFD, NFKC and NFKD normalizers of ``tokenizer.json``.

``tokenizers`` normalizes with the ``unicode-normalization-alignments``
crate (``NormalizedString::nfd`` etc.), which yields, with each output
character, how it relates to the input (0: replaces the next input
character, 1: is inserted); that is what places each output character on
the original text. Its tables are Unicode 9.0.

The text a form produces is the standard one, so ``unicodedata`` gives it
(and says when nothing changes, the common case). Only when alignments are
wanted and the text changes, or the text holds a character Unicode 9.0 had
not assigned (which the crate leaves alone), do we replay the crate's
algorithm: decompose each character (its first part marked 0, the rest
1), sort each run of non-starters by combining class (stable, so the marks
travel with their characters), and for the composed forms compose as
``Recompositions`` does, where a composite of ``k`` and ``c`` carries
``change(k) + change(c) - 1``.

The replay runs only over the runs of characters the form can touch
(:func:`touchable`): a starter without a decomposition that nothing
composes onto comes out unchanged with change 0, and no reordering or
composition crosses it, so the text between runs keeps its spans.
"""

from __future__ import annotations

import functools
import unicodedata

import regex

from subtok.normalizers.aligned import AlignedString, TextNormalizer
from subtok.normalizers.charsmap import char_ranges
from subtok.normalizers.old_unicode import assigned_9, newer_than_9

_S_BASE, _L_BASE, _V_BASE, _T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
_L_COUNT, _V_COUNT, _T_COUNT = 19, 21, 28
_N_COUNT = _V_COUNT * _T_COUNT
_S_COUNT = _L_COUNT * _N_COUNT

Item = tuple[str, int]


@functools.lru_cache(maxsize=65536)
def combining_class(char: str) -> int:
    """Canonical combining class, 0 for what Unicode 9.0 did not have."""
    return unicodedata.combining(char) if assigned_9(ord(char)) else 0


@functools.lru_cache(maxsize=65536)
def decompose(char: str, compat: bool) -> str:
    """The full (recursive) decomposition of one character."""
    code = ord(char)
    if _S_BASE <= code < _S_BASE + _S_COUNT:
        index = code - _S_BASE
        parts = chr(_L_BASE + index // _N_COUNT) + chr(_V_BASE + index % _N_COUNT // _T_COUNT)
        trailing = index % _T_COUNT
        return parts + chr(_T_BASE + trailing) if trailing else parts
    if not assigned_9(code):
        return char
    mapping = unicodedata.decomposition(char)
    if not mapping:
        return char
    if mapping.startswith("<"):
        if not compat:
            return char
        mapping = mapping.split(" ", 1)[1]
    return "".join(decompose(chr(int(h, 16)), compat) for h in mapping.split())


@functools.cache
def _composites() -> dict[tuple[str, str], str]:
    """Every primary composite: a character whose canonical decomposition
    is two characters and that NFC keeps (composition exclusions and
    singletons are not composites)."""
    pairs = {}
    for code in range(0xC0, 0x30000):
        mapping = unicodedata.decomposition(chr(code))
        if not mapping or mapping.startswith("<") or not assigned_9(code):
            continue
        parts = mapping.split()
        char = chr(code)
        if len(parts) == 2 and unicodedata.normalize("NFC", char) == char:
            pairs[(chr(int(parts[0], 16)), chr(int(parts[1], 16)))] = char
    return pairs


def compose(first: str, second: str) -> str | None:
    """The primary composite of two characters, Hangul included, or None."""
    a, b = ord(first), ord(second)
    if _L_BASE <= a < _L_BASE + _L_COUNT and _V_BASE <= b < _V_BASE + _V_COUNT:
        return chr(_S_BASE + ((a - _L_BASE) * _V_COUNT + b - _V_BASE) * _T_COUNT)
    if (_S_BASE <= a < _S_BASE + _S_COUNT and (a - _S_BASE) % _T_COUNT == 0
            and _T_BASE < b < _T_BASE + _T_COUNT):
        return chr(a + b - _T_BASE)
    return _composites().get((first, second))


def decomposed(text: str, compat: bool) -> list[Item]:
    """NFD / NFKD as (character, change) items in canonical order."""
    items: list[Item] = []
    for char in text:
        parts = decompose(char, compat)
        items.append((parts[0], 0))
        items.extend((part, 1) for part in parts[1:])
    return _canonical_order(items)


def _canonical_order(items: list[Item]) -> list[Item]:
    """Sort every run of non-starters by combining class, stably."""
    out: list[Item] = []
    run: list[Item] = []
    for item in items:
        if combining_class(item[0]):
            run.append(item)
            continue
        if run:
            out.extend(sorted(run, key=lambda it: combining_class(it[0])))
            run = []
        out.append(item)
    out.extend(sorted(run, key=lambda it: combining_class(it[0])))
    return out


def composed(items: list[Item]) -> list[Item]:
    """Canonical composition of decomposed items, as the crate's
    ``Recompositions`` iterator does it (blocked marks wait in a buffer
    and come out after the starter they could not join)."""
    out: list[Item] = []
    starter: Item | None = None
    waiting: list[Item] = []
    last_class: int | None = None
    for char, change in items:
        char_class = combining_class(char)
        if starter is None:
            if char_class:
                out.append((char, change))
            else:
                starter = (char, change)
            continue
        if last_class is not None and last_class >= char_class:
            if char_class == 0:  # blocked by a starter: flush
                out.append(starter)
                out.extend(waiting)
                waiting, last_class, starter = [], None, (char, change)
            else:
                waiting.append((char, change))
                last_class = char_class
            continue
        joined = compose(starter[0], char)
        if joined is not None:
            starter = (joined, starter[1] + change - 1)
        elif last_class is None and char_class == 0:
            out.append(starter)
            starter = (char, change)
        else:
            waiting.append((char, change))
            last_class = char_class
    if starter is not None:
        out.append(starter)
    out.extend(waiting)
    return out


@functools.cache
def touchable(compat: bool, composes: bool) -> regex.Pattern:
    """Runs of characters a form may change: those with a decomposition
    (canonical, or any with ``compat``) or a combining class, Hangul
    syllables, and for the composed forms every character that is the
    second half of a composite (Hangul vowels and trailing consonants,
    some vowel signs of class 0); all as Unicode 9.0 had them."""
    codes = set(range(_S_BASE, _S_BASE + _S_COUNT))
    for code in range(0x30000):
        char = chr(code)
        if not assigned_9(code):
            continue
        mapping = unicodedata.decomposition(char)
        if unicodedata.combining(char) or (mapping and (compat or not mapping.startswith("<"))):
            codes.add(code)
    if composes:
        codes.update(ord(second) for _, second in _composites())
        codes.update(range(_V_BASE, _V_BASE + _V_COUNT))
        codes.update(range(_T_BASE + 1, _T_BASE + _T_COUNT))
    return regex.compile("[%s]+" % "".join("\\U%08x-\\U%08x" % pair for pair in char_ranges(map(chr, codes))))


def _runs(text: str, compat: bool, composes: bool) -> list[tuple[int, int]]:
    """The runs to replay; for the composed forms each starts one character
    early, at the starter the run may compose onto."""
    runs: list[list[int]] = []
    for found in touchable(compat, composes).finditer(text):
        begin, stop = found.span()
        if composes and begin:
            begin -= 1
        if runs and begin <= runs[-1][1]:
            runs[-1][1] = stop
        else:
            runs.append([begin, stop])
    return [(a, b) for a, b in runs]


class _Form(TextNormalizer):
    """One normalization form; subclasses name it."""

    form = "NFD"
    compat = False
    composes = False

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> _Form:
        return cls()

    def normalize_aligned(self, text: AlignedString) -> None:
        value = text.text
        exact = value.isascii() or newer_than_9().search(value) is None
        if exact and unicodedata.is_normalized(self.form, value):
            return
        if exact and text.align is None:
            text.set_text(unicodedata.normalize(self.form, value))
            return
        segments = []
        for begin, stop in _runs(value, self.compat, self.composes):
            items = decomposed(value[begin:stop], self.compat)
            segments.append((begin, stop, composed(items) if self.composes else items, 0))
        text.transform_segments(segments)


class NFD(_Form):
    """Canonical decomposition."""


class NFKD(_Form):
    """Compatibility decomposition."""

    form, compat = "NFKD", True


class NFC(_Form):
    """Canonical decomposition, then canonical composition."""

    form, composes = "NFC", True


class NFKC(_Form):
    """Compatibility decomposition, then canonical composition."""

    form, compat, composes = "NFKC", True, True
