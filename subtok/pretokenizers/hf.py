"""The pre-tokenizers a ``tokenizer.json`` can name, by ``type``."""

from __future__ import annotations

from typing import Any

from subtok.components import build, build_list
from subtok.normalizers.aligned import AlignedString
from subtok.pretokenizers.bytelevel import ByteLevel
from subtok.pretokenizers.metaspace import Metaspace
from subtok.pretokenizers.splitters import (BertPreTokenizer, CharDelimiterSplit, Digits,
                                            FixedLength, Punctuation, Split, Whitespace,
                                            WhitespaceSplit)
from subtok.pretokenizers.unicode_scripts import UnicodeScripts


class Sequence:
    """Pre-tokenizers applied in turn, each to every piece the last made."""

    def __init__(self, pretokenizers: list) -> None:
        self.pretokenizers = pretokenizers

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Sequence:
        return cls(build_list(spec, "pretokenizers", PRE_TOKENIZERS, "pre-tokenizer", where))

    @property
    def needs_alignment(self) -> bool:
        return any(getattr(p, "needs_alignment", False) for p in self.pretokenizers)

    def split(self, text: str) -> list[str]:
        pieces = [text]
        for step in self.pretokenizers:
            pieces = [part for piece in pieces for part in step.split(piece)]
        return pieces

    def split_aligned(self, piece: AlignedString) -> list[AlignedString]:
        pieces = [piece]
        for step in self.pretokenizers:
            pieces = [part for p in pieces for part in step.split_aligned(p)]
        return pieces


PRE_TOKENIZERS: dict[str, type] = {
    "BertPreTokenizer": BertPreTokenizer, "ByteLevel": ByteLevel,
    "CharDelimiterSplit": CharDelimiterSplit, "Metaspace": Metaspace, "Whitespace": Whitespace,
    "Sequence": Sequence, "Split": Split, "Punctuation": Punctuation,
    "WhitespaceSplit": WhitespaceSplit, "Digits": Digits, "UnicodeScripts": UnicodeScripts,
    "FixedLength": FixedLength,
}


def from_json(spec: Any, where: str) -> Any:
    """The pre-tokenizer ``spec`` describes."""
    return build(spec, PRE_TOKENIZERS, "pre-tokenizer", where)
