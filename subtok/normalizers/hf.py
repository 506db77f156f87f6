"""The normalizers a ``tokenizer.json`` can name, by ``type``."""

from __future__ import annotations

from typing import Any

from subtok.components import build, build_list
from subtok.normalizers.aligned import AlignedString, TextNormalizer
from subtok.normalizers.bert import BertNormalizer
from subtok.normalizers.bytelevel import ByteLevel
from subtok.normalizers.precompiled import Precompiled
from subtok.normalizers.text_rules import Lowercase, Nmt, Prepend, Replace, Strip, StripAccents
from subtok.normalizers.unicode_forms import NFC, NFD, NFKC, NFKD


class Sequence(TextNormalizer):
    """Normalizers applied in turn to the same text."""

    def __init__(self, normalizers: list) -> None:
        self.normalizers = normalizers

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Sequence:
        return cls(build_list(spec, "normalizers", NORMALIZERS, "normalizer", where))

    def normalize_aligned(self, text: AlignedString) -> None:
        for normalizer in self.normalizers:
            normalizer.normalize_aligned(text)


NORMALIZERS: dict[str, type] = {
    "BertNormalizer": BertNormalizer, "Strip": Strip, "StripAccents": StripAccents,
    "NFC": NFC, "NFD": NFD, "NFKC": NFKC, "NFKD": NFKD, "Sequence": Sequence,
    "Lowercase": Lowercase, "Nmt": Nmt, "Precompiled": Precompiled, "Replace": Replace,
    "Prepend": Prepend, "ByteLevel": ByteLevel,
}


def from_json(spec: Any, where: str) -> Any:
    """The normalizer ``spec`` describes."""
    return build(spec, NORMALIZERS, "normalizer", where)
