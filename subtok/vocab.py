"""The vocabulary: pieces, scores, types and the two lookup maps.

SentencePiece keeps two maps from piece string to id:

* the *normal* map (NORMAL, USER_DEFINED, UNUSED pieces) is the only one
  consulted while segmenting text, so a CONTROL string typed in the text is
  ordinary text;
* the *reserved* map (UNKNOWN, CONTROL, BYTE pieces) is consulted first by
  ``piece_to_id`` (decoding, bos/eos lookup).

Special ids (unk/bos/eos/pad) come from piece *types and names*, never from
the ``*_id`` fields of the TrainerSpec.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from subtok.errors import ModelFileError


class PieceType(enum.IntEnum):
    """``ModelProto.SentencePiece.Type`` values (BYTE is 6, UNUSED is 5)."""

    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


_NORMAL_MAP_TYPES = (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)

#: sentencepiece 0.2.3 refuses pieces of this many UTF-8 bytes or more.
MAX_PIECE_BYTES = 8000
NULL_PIECE = "\0"

DEFAULT_UNK_SURFACE = " \u2047 "


def byte_piece(value: int) -> str:
    """The piece string of a byte-fallback piece, e.g. ``<0x0A>``."""
    return "<0x%02X>" % value


#: The only spellings a BYTE piece may have (sentencepiece's PieceToByte).
BYTE_VALUES = {byte_piece(value): value for value in range(256)}


@dataclass
class SpecialPieces:
    """Names used to find the special ids, and the decoded text of <unk>."""

    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"
    unk_surface: str = DEFAULT_UNK_SURFACE


@dataclass
class Vocabulary:
    """Pieces in id order with their scores and types, plus lookup maps."""

    pieces: list[str]
    scores: list[float]
    types: list[int]
    byte_fallback: bool = False
    special: SpecialPieces = field(default_factory=SpecialPieces)

    #: BPE keeps every piece in one map (sentencepiece 0.2.3 builds it
    #: with use_reserved_id_map=false): a CONTROL piece may then not share
    #: its string with a NORMAL one either.
    one_map: bool = False

    def __post_init__(self) -> None:
        self.normal: dict[str, int] = {}
        self.reserved: dict[str, int] = {}
        # A character takes at most 4 bytes: only long pieces need encoding.
        if max(map(len, self.pieces), default=0) >= MAX_PIECE_BYTES // 4 and any(
                len(piece.encode("utf-8", "surrogateescape")) >= MAX_PIECE_BYTES
                for piece in self.pieces):
            raise ModelFileError("piece is too long.")
        if self.byte_fallback and NULL_PIECE in self.pieces:
            # sentencepiece 0.2.3 takes a "\0" piece beside byte pieces
            # (third-party conversions add one) for UNUSED, with a warning.
            self.types = [PieceType.UNUSED if piece == NULL_PIECE else kind
                          for piece, kind in zip(self.pieces, self.types)]
        self.unk_index = self._fill_maps()
        self.byte_ids: list[int] = []
        if self.byte_fallback:
            ids = [self.reserved.get(byte_piece(b)) for b in range(256)]
            if any(i is None or self.types[i] != PieceType.BYTE for i in ids):
                raise ModelFileError(
                    "there are not 256 byte pieces although `byte_fallback` is true.")
            self.byte_ids = ids  # type: ignore[assignment]
        self.byte_values = {i: b for b, i in enumerate(self.byte_ids)}

    def _fill_maps(self) -> int:
        """Fill the two maps, checking each piece as sentencepiece 0.2.3's
        ``ModelInterface::InitializePieces`` does, in its order; return the
        unknown piece's id. A model with byte fallback may lack one (-1):
        its unknown text then only ever comes out as byte pieces."""
        unk = -1
        one_map = self.one_map
        for index, (piece, kind) in enumerate(zip(self.pieces, self.types)):
            if not piece:
                raise ModelFileError("piece must not be empty.")
            if "\0" in piece:
                if piece == NULL_PIECE and kind == PieceType.UNUSED:
                    continue  # in no map: never matched, never looked up
                raise ModelFileError("piece must not include null character.")
            if kind not in PieceType._value2member_map_:
                raise ModelFileError("piece %r has an unknown type %d." % (piece, kind))
            target = self.normal if kind in _NORMAL_MAP_TYPES else self.reserved
            if piece in target or (one_map and piece in (self.reserved if target is self.normal
                                                         else self.normal)):
                raise ModelFileError("%s is already defined." % piece)
            target[piece] = index
            if kind == PieceType.UNKNOWN:
                if unk >= 0:
                    raise ModelFileError("unk is already defined.")
                unk = index
            if kind == PieceType.BYTE:
                if not self.byte_fallback:
                    raise ModelFileError(
                        "byte piece %s is found although `byte_fallback` is false." % piece)
                if piece not in BYTE_VALUES:
                    raise ModelFileError("byte piece %s is invalid." % piece)
        if unk < 0 and not self.byte_fallback:
            raise ModelFileError("unk is not defined.")
        return unk

    def __len__(self) -> int:
        return len(self.pieces)

    def piece_to_id(self, piece: str) -> int:
        """Reserved map first, then the normal map, else the unknown id."""
        found = self.reserved.get(piece)
        if found is None:
            found = self.normal.get(piece, self.unk_index)
        return found

    def _special_id(self, name: str, kind: PieceType) -> int:
        index = self.piece_to_id(name)
        return index if index >= 0 and self.types[index] == kind else -1

    def unk_id(self) -> int:
        return self._special_id(self.special.unk_piece, PieceType.UNKNOWN)

    def bos_id(self) -> int:
        return self._special_id(self.special.bos_piece, PieceType.CONTROL)

    def eos_id(self) -> int:
        return self._special_id(self.special.eos_piece, PieceType.CONTROL)

    def pad_id(self) -> int:
        return self._special_id(self.special.pad_piece, PieceType.CONTROL)

    def user_defined(self) -> list[str]:
        return [p for p, t in zip(self.pieces, self.types) if t == PieceType.USER_DEFINED]
