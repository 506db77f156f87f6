"""Small ``tokenizer.json`` normalizers: Lowercase, StripAccents, Strip,
Prepend, Replace and Nmt (``tokenizers/src/normalizers/{utils,strip,
prepend,replace,unicode}.rs``)."""

from __future__ import annotations

import regex

from subtok.formats.json_fields import field, pattern_field
from subtok.normalizers.aligned import AlignedString, TextNormalizer
from subtok.normalizers.old_unicode import combining_mark_9
from subtok.patterns import compile_literal, compile_onig, match_spans

_SIGMA = "\u03a3"


class Lowercase(TextNormalizer):
    """Each character lowercased on its own (Rust's ``char::to_lowercase``,
    as ``NormalizedString::lowercase`` does): unlike ``str.lower`` no final
    sigma rule, so a word-final "Σ" becomes "σ"."""

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Lowercase:
        return cls()

    def normalize_aligned(self, text: AlignedString) -> None:
        value = text.text
        lowered = value.lower() if _SIGMA not in value else "".join(map(str.lower, value))
        if len(lowered) == len(value):
            text.set_text(lowered)
        else:  # some character became several (U+0130): each keeps its source's span
            text.expand(list(map(str.lower, value)))


class StripAccents(TextNormalizer):
    """Removes combining marks (any category M that Unicode 9.0 had)."""

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> StripAccents:
        return cls()

    def normalize_aligned(self, text: AlignedString) -> None:
        text.remove(combining_mark_9())


_LEADING_SPACE = regex.compile(r"\A\s*")
_TRAILING_SPACE = regex.compile(r"\s*\Z")


class Strip(TextNormalizer):
    """Removes leading and/or trailing whitespace (Rust ``is_whitespace``)."""

    def __init__(self, left: bool = True, right: bool = True) -> None:
        self.left = left
        self.right = right

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Strip:
        return cls(field(spec, "strip_left", bool, where), field(spec, "strip_right", bool, where))

    def normalize_aligned(self, text: AlignedString) -> None:
        value = text.text
        leading = _LEADING_SPACE.match(value).end() if self.left else 0
        trailing = len(value) - _TRAILING_SPACE.search(value).start() if self.right else 0
        if leading or trailing:
            text.strip_ends(leading, trailing)


class Prepend(TextNormalizer):
    """Puts a string in front of any non-empty text."""

    def __init__(self, prepend: str) -> None:
        self.prepend = prepend

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Prepend:
        return cls(field(spec, "prepend", str, where))

    def normalize_aligned(self, text: AlignedString) -> None:
        text.prepend(self.prepend)


def compile_pattern(spec: dict, where: str) -> regex.Pattern:
    """The ``pattern`` field of Replace and Split: a literal or an
    Oniguruma regex."""
    kind, value = pattern_field(spec, where)
    return compile_literal(value) if kind == "String" else compile_onig(value, where + ": ")


class Replace(TextNormalizer):
    """Replaces every match of a pattern by a string. The same class is the
    Replace decoder (``decode_chain``), as in tokenizers."""

    def __init__(self, pattern: regex.Pattern, content: str, literal: str | None = None) -> None:
        self.pattern = pattern
        self.content = content
        #: The pattern's text when it is a non-empty String pattern: then
        #: ``str.replace`` finds the same (leftmost, non-overlapping) matches.
        self.literal = literal or None

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Replace:
        kind, value = pattern_field(spec, where)
        return cls(compile_pattern(spec, where), field(spec, "content", str, where),
                   value if kind == "String" else None)

    def normalize_aligned(self, text: AlignedString) -> None:
        if not text.text:
            return
        if text.align is None and self.literal is not None:
            text.set_text(text.text.replace(self.literal, self.content))
            return
        text.replace_matches(match_spans(self.pattern, text.text), self.content)

    def replace(self, value: str) -> str:
        """The string with every match replaced (no alignment)."""
        if not value:
            return value
        if self.literal is not None:
            return value.replace(self.literal, self.content)
        spans = match_spans(self.pattern, value)
        if not spans:
            return value
        parts = []
        last = 0
        for begin, stop in spans:
            parts.append(value[last:begin])
            parts.append(self.content)
            last = stop
        parts.append(value[last:])
        return "".join(parts)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [self.replace(token) for token in tokens]


_NMT_CONTROLS = regex.compile("[\x01-\x08\x0b\x0e-\x1f\x7f\x8f\x9f]")
_NMT_SPACES = str.maketrans({c: " " for c in "\t\n\x0c\r\u1680\u200b\u200c\u200d\u200e"
                             "\u200f\u2028\u2029\u2581\ufeff\ufffd"})


class Nmt(TextNormalizer):
    """SentencePiece's nmt rules outside its charsmap: drop some ASCII
    controls, turn some spaces and separators into " " (``do_nmt``)."""

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Nmt:
        return cls()

    def normalize_aligned(self, text: AlignedString) -> None:
        text.remove(_NMT_CONTROLS)
        text.set_text(text.text.translate(_NMT_SPACES))
