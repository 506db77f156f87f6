"""The decoders a ``tokenizer.json`` can name, by ``type``."""

from __future__ import annotations

from typing import Any

from subtok.components import build, build_list
from subtok.decoders.bytelevel import ByteLevel
from subtok.decoders.joiners import CTC, BPEDecoder, ByteFallback, Fuse, Strip, WordPiece
from subtok.decoders.metaspace import Metaspace
from subtok.normalizers.text_rules import Replace


class Sequence:
    """Decoders applied in turn to the list of token strings."""

    def __init__(self, decoders: list) -> None:
        self.decoders = decoders

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Sequence:
        return cls(build_list(spec, "decoders", DECODERS, "decoder", where))

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for decoder in self.decoders:
            tokens = decoder.decode_chain(tokens)
        return tokens


DECODERS: dict[str, type] = {
    "BPEDecoder": BPEDecoder, "ByteLevel": ByteLevel, "WordPiece": WordPiece,
    "Metaspace": Metaspace, "CTC": CTC, "Sequence": Sequence, "Replace": Replace,
    "Fuse": Fuse, "Strip": Strip, "ByteFallback": ByteFallback,
}


def from_json(spec: Any, where: str) -> Any:
    """The decoder ``spec`` describes."""
    return build(spec, DECODERS, "decoder", where)
