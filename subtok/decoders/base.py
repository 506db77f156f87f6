"""Stage 5 of the pipeline: the decoder interface.

A decoder turns ``(piece, id)`` pairs back into text. SentencePiece's
(:mod:`subtok.decoders.sentencepiece`) joins pieces, turns "▁" back into
spaces, drops control pieces, assembles byte pieces and shows unknown ones
as their surface.

Adding a decoder (byte-level, WordPiece's ``##`` joiner, a
``tokenizer.json`` Sequence, ...) means adding a module in this package
with a class that has the method below; nothing on the SentencePiece path
changes.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

Pair = tuple[str, int]


@runtime_checkable
class Decoder(Protocol):
    """``(piece, id)`` pairs -> text."""

    def decode(self, pairs: list[Pair]) -> str:
        ...


@runtime_checkable
class TokenDecoder(Protocol):
    """A ``tokenizer.json`` decoder (``tokenizers``' ``decode_chain``): token
    strings -> strings; the tokenizer joins the last ones."""

    def decode_chain(self, tokens: list[str]) -> list[str]:
        ...
