"""Cut where the script changes (``UnicodeScripts`` in ``tokenizers/src/
pre_tokenizers/unicode_scripts``), with SentencePiece's adjustments:
Hiragana, Katakana and U+30FC count as Han, a space belongs to no script
("Any"), and so does every character outside tokenizers' Unicode 9.0 script
table. A cut falls before a character whose script is not Any and differs
from the last script seen; text before the first cut is dropped (so a
leading space is lost, as in tokenizers)."""

from __future__ import annotations

import functools

import regex

from subtok.normalizers.aligned import AlignedString, Span
from subtok.normalizers.old_unicode import assigned_9
from subtok.normalizers.unicode_ages import SCRIPTS_9_0
from subtok.pretokenizers.splitters import RangeSplitter

_ANY = "Any"
_AS_HAN = {"Hiragana", "Katakana"}


@functools.cache
def _script_pattern() -> regex.Pattern:
    return regex.compile("|".join("(\\p{Script=%s})" % name for name in SCRIPTS_9_0))


@functools.lru_cache(maxsize=65536)
def script(char: str) -> str:
    """The script tokenizers' ``fixed_script`` gives a character."""
    if char == " ":
        return _ANY
    if char == "\u30fc":
        return "Han"
    if not assigned_9(ord(char)):
        return _ANY
    found = _script_pattern().match(char)
    if found is None:
        return _ANY
    name = SCRIPTS_9_0[found.lastindex - 1]
    return "Han" if name in _AS_HAN else name


class UnicodeScripts(RangeSplitter):
    """Pieces of one script each."""

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> UnicodeScripts:
        return cls()

    def ranges(self, text: str) -> list[Span]:
        cuts = []
        last = None
        for i, char in enumerate(text):
            kind = script(char)
            if kind != _ANY and last != _ANY and last != kind:
                cuts.append(i)
            if kind != _ANY:
                last = kind
        cuts.append(len(text))
        return list(zip(cuts, cuts[1:]))

    def split_aligned(self, piece: AlignedString) -> list[AlignedString]:
        return piece.slices(self.ranges(piece.text))
