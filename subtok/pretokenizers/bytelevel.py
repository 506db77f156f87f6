"""GPT-2's pre-tokenizer (``ByteLevel`` in ``tokenizers/src/pre_tokenizers/
byte_level.rs``): optionally a space in front, then GPT-2's split pattern
(each match a piece), then every piece rewritten as byte characters
(:mod:`subtok.normalizers.bytelevel`)."""

from __future__ import annotations

import regex

from subtok.formats.json_fields import field
from subtok.normalizers.aligned import AlignedString
from subtok.normalizers.bytelevel import byte_level_aligned, to_byte_chars

#: GPT-2's pattern. Every character is a letter, a number, whitespace or
#: something else, so the matches cover the text: the pieces of an
#: Isolated split are exactly the matches.
GPT2_PATTERN = regex.compile(
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+")

#: Pieces whose byte form is remembered (pieces repeat; a lookup is
#: cheaper than encoding, decoding and translating).
_MEMO_LIMIT = 1 << 18


class ByteLevel:
    """``add_prefix_space``: a space before text that has none;
    ``use_regex``: split with GPT-2's pattern; ``trim_offsets`` is the
    post-processor's business (kept for it)."""

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True,
                 use_regex: bool = True) -> None:
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex
        self._memo: dict[str, str] = {}

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> ByteLevel:
        return cls(field(spec, "add_prefix_space", bool, where),
                   field(spec, "trim_offsets", bool, where),
                   field(spec, "use_regex", bool, where, True))

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_memo"] = {}
        return state

    def _prefixed(self, text: str) -> bool:
        return self.add_prefix_space and not text.startswith(" ")

    def split(self, text: str) -> list[str]:
        if self._prefixed(text) and text:
            text = " " + text
        pieces = GPT2_PATTERN.findall(text) if self.use_regex else ([text] if text else [])
        memo = self._memo
        try:
            return list(map(memo.__getitem__, pieces))
        except KeyError:
            # Learn only the new pieces (found by a C-level set difference),
            # then look every piece up again: a line with one new piece
            # costs one conversion, not a Python call per piece.
            if len(memo) > _MEMO_LIMIT:
                memo.clear()
            for piece in set(pieces).difference(memo):
                memo[piece] = to_byte_chars(piece)
            return list(map(memo.__getitem__, pieces))

    def split_aligned(self, piece: AlignedString) -> list[AlignedString]:
        if self._prefixed(piece.text):
            piece.prepend(" ")
        if self.use_regex:
            parts = piece.slices(m.span() for m in GPT2_PATTERN.finditer(piece.text))
        else:
            parts = [piece] if piece.text else []
        for part in parts:
            byte_level_aligned(part)
        return parts
