"""Pieces back to text, with SentencePiece's rules.

* BYTE pieces collect raw bytes; a run of them is decoded as UTF-8 where
  each invalid byte becomes one U+FFFD (not one per maximal subpart, as
  Python's ``errors="replace"`` would do).
* CONTROL pieces decode to nothing.
* The UNKNOWN piece decodes to ``unk_surface``; any other string that is not
  in the vocabulary decodes to itself, raw ("▁" is not turned into " ").
* Other pieces turn "▁" into " ". At the start of the text a leading "▁" is
  dropped: one per piece while ``remove_extra_whitespaces`` (so every
  leading "▁"), or exactly one when only ``add_dummy_prefix`` is set.
"""

from __future__ import annotations

import re

from subtok.symbols import SPACE_SYMBOL
from subtok.vocab import PieceType, Vocabulary

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def decode_bytes(raw: bytes) -> str:
    """UTF-8 decode with one U+FFFD per invalid byte."""
    return _ESCAPED_BYTE.sub("\ufffd", raw.decode("utf-8", "surrogateescape"))


class Decoder:
    """Decode ``(piece, id)`` sequences for one vocabulary and spec."""

    def __init__(self, vocab: Vocabulary, *, add_dummy_prefix: bool,
                 remove_extra_whitespaces: bool, denormalize=None) -> None:
        self.vocab = vocab
        self.strip_leading = add_dummy_prefix or remove_extra_whitespaces
        self.remove_extra = remove_extra_whitespaces
        self.denormalize = denormalize

    def decode(self, pairs) -> str:
        vocab = self.vocab
        types = vocab.types
        byte_values = vocab.byte_values
        parts: list[str] = []
        pending = bytearray()
        at_start = True
        stripped_prev = False
        for piece, piece_id in pairs:
            kind = types[piece_id]
            if kind == PieceType.BYTE:
                pending.append(byte_values[piece_id])
                continue
            if pending:
                parts.append(decode_bytes(bytes(pending)))
                pending.clear()
            if stripped_prev or parts:
                at_start = False
            if kind == PieceType.CONTROL:
                stripped_prev = False
            elif kind == PieceType.UNKNOWN:
                text = vocab.special.unk_surface if piece == vocab.pieces[piece_id] else piece
                stripped_prev = False
                if text:
                    parts.append(text)
            else:
                stripped = False
                if at_start and self.strip_leading and piece.startswith(SPACE_SYMBOL):
                    piece = piece[1:]
                    stripped = True
                stripped_prev = stripped and not self.remove_extra
                if piece:
                    parts.append(piece.replace(SPACE_SYMBOL, " "))
        if pending:
            parts.append(decode_bytes(bytes(pending)))
        text = "".join(parts)
        if self.denormalize is not None:
            text = self.denormalize(text)
        return text
