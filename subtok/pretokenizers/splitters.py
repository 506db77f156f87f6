"""``tokenizer.json`` pre-tokenizers that only cut: Split, CharDelimiterSplit,
Punctuation, Digits, Whitespace, WhitespaceSplit, BertPreTokenizer and
FixedLength (``tokenizers/src/pre_tokenizers/{split,delimiter,punctuation,
digits,whitespace,bert,fixed_length}.rs``).

Each says where its pieces are (:meth:`RangeSplitter.ranges`); cutting a
plain string or an :class:`AlignedString` at those places is shared, and
empty pieces are dropped, as ``PreTokenizedString::split`` drops them.
Character predicates of tokenizers are regex character classes here, so a
text is scanned in C: Rust's ``char::is_whitespace`` is ``\\s`` (both are
White_Space), ``char::is_numeric`` is ``\\p{N}``.
"""

from __future__ import annotations

import regex

from subtok.errors import ModelFileError
from subtok.formats.json_fields import REQUIRED, char_field, count_field, field
from subtok.normalizers.aligned import AlignedString, Span, split_ranges
from subtok.normalizers.old_unicode import punctuation_8, punctuation_class_8
from subtok.normalizers.text_rules import compile_pattern
from subtok.patterns import compile_literal, find_matches, invert, match_spans

BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


def behavior_field(spec: dict, where: str, default: str = REQUIRED) -> str:
    """A ``SplitDelimiterBehavior`` field."""
    value = field(spec, "behavior", str, where, default)
    if value not in BEHAVIORS:
        raise ModelFileError("%s: unknown behavior %r (one of %s)." % (where, value, ", ".join(BEHAVIORS)))
    return value


class RangeSplitter:
    """A pre-tokenizer that cuts text without changing it."""

    def ranges(self, text: str) -> list[Span]:
        raise NotImplementedError

    def split(self, text: str) -> list[str]:
        return [text[b:e] for b, e in self.ranges(text) if b < e]

    def split_aligned(self, piece: AlignedString) -> list[AlignedString]:
        return piece.slices(self.ranges(piece.text))


class PatternSplitter(RangeSplitter):
    """Cut at the matches of a pattern, keeping or gluing them as
    ``behavior`` says; ``invert`` swaps matches and the text between."""

    def __init__(self, pattern: regex.Pattern, behavior: str, invert: bool = False) -> None:
        self.pattern = pattern
        self.behavior = behavior
        self.invert = invert

    def ranges(self, text: str) -> list[Span]:
        if self.invert and self.behavior == "Removed":  # the pieces are the matches
            return match_spans(self.pattern, text)
        matches = find_matches(self.pattern, text)
        return split_ranges(invert(matches) if self.invert else matches, self.behavior)


class Split(PatternSplitter):
    """The general splitter: a String or Regex pattern, a behavior, invert."""

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Split:
        return cls(compile_pattern(spec, where), behavior_field(spec, where),
                   field(spec, "invert", bool, where))


class CharDelimiterSplit(PatternSplitter):
    """Removes one delimiter character and cuts there."""

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> CharDelimiterSplit:
        return cls(compile_literal(char_field(spec, "delimiter", where)), "Removed")


class Punctuation(PatternSplitter):
    """Cuts around every punctuation character (ASCII, or P* in Unicode 8.0)."""

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Punctuation:
        return cls(punctuation_8(), behavior_field(spec, where, "Isolated"))


_NUMERIC = regex.compile(r"\p{N}")


class Digits(PatternSplitter):
    """Cuts digits off the rest: each alone, or runs of them together."""

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Digits:
        individual = field(spec, "individual_digits", bool, where)
        return cls(_NUMERIC, "Isolated" if individual else "Contiguous")


class MatchSplitter(RangeSplitter):
    """The pieces are exactly the matches of a pattern of ours (one without
    empty matches or groups), so a plain string is cut by ``findall``."""

    pattern: regex.Pattern

    def ranges(self, text: str) -> list[Span]:
        return [m.span() for m in self.pattern.finditer(text)]

    def split(self, text: str) -> list[str]:
        return self.pattern.findall(text)

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> MatchSplitter:
        return cls()


#: Rust regex's ``\w`` (Unicode): alphabetic, marks, decimal digits,
#: connector punctuation and the joiners.
_WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}"


class Whitespace(MatchSplitter):
    """Words and runs of other non-space characters: ``\\w+|[^\\w\\s]+``."""

    pattern = regex.compile("[%s]+|[^%s\\s]+" % (_WORD, _WORD))


class WhitespaceSplit(MatchSplitter):
    """Runs of non-whitespace."""

    pattern = regex.compile(r"\S+")


class BertPreTokenizer(MatchSplitter):
    """Cut on whitespace (removed), then around each punctuation character
    (kept alone): the pieces are runs of other characters and single
    punctuation characters."""

    def __init__(self) -> None:
        punct = punctuation_class_8()
        self.pattern = regex.compile("(?V1)%s|[^\\s%s]+" % (punct, punct))


class FixedLength(RangeSplitter):
    """Pieces of ``length`` characters (the last may be shorter)."""

    def __init__(self, length: int = 5) -> None:
        self.length = length

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> FixedLength:
        length = count_field(spec, "length", where, 5)
        if length == 0:
            raise ModelFileError("%s: field 'length' must be at least 1." % where)
        return cls(length)

    def ranges(self, text: str) -> list[Span]:
        return [(b, min(b + self.length, len(text))) for b in range(0, len(text), self.length)]
