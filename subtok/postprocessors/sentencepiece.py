"""SentencePiece's post-processing of a model's pieces.

* Unknown pieces: with byte fallback each becomes the byte pieces of its
  UTF-8 bytes; without, a run of neighbouring unknown pieces merges into
  one (also across words: see :func:`unknown_runs_stay_inside`).
* Extra options: bos, eos, reverse and showing unknown pieces as the unk
  piece, in spm_encode's order (the options in the order given,
  :func:`apply_extra_options`) or in the Python API's (reverse, then bos,
  then eos, :meth:`SentencePiecePostProcessor.extra`).
"""

from __future__ import annotations

from dataclasses import dataclass

from subtok.errors import EncodeError, SubtokError
from subtok.vocab import Vocabulary, byte_piece

Pair = tuple[str, int]


@dataclass(frozen=True)
class EncodedPiece:
    """One piece with its place in the original text (byte offsets)."""

    piece: str
    id: int
    surface: str
    begin: int
    end: int

#: Unknown-edge flags of a word: it starts / ends with an unknown piece
#: that would merge with a neighbour's (no byte fallback).
STARTS, ENDS = 1, 2

#: spm_encode's and spm_decode's ``--extra_options``.
EXTRA_OPTIONS = ("bos", "eos", "reverse", "unk", "unk_piece")


def unknown_runs_stay_inside(edges) -> bool:
    """False if a word ending in an unknown piece precedes one starting so
    (``edges``: each word's STARTS / ENDS flags)."""
    previous_ends_unk = 0
    for flags in edges:
        if previous_ends_unk and flags & STARTS:
            return False
        previous_ends_unk = flags & ENDS
    return True


class SentencePiecePostProcessor:
    """Byte fallback or unknown-run merging, and the extra options, for one
    vocabulary."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self._unk = vocab.unk_index
        self._byte_fallback = vocab.byte_fallback
        #: ``(piece, id)`` of each byte piece, by byte value.
        self.byte_pairs = [(byte_piece(b), i) for b, i in enumerate(vocab.byte_ids)]
        #: Without byte fallback, unknown runs merge, also across words.
        self.merges_unknown = not vocab.byte_fallback

    def process(self, pairs) -> list[Pair]:
        """Byte fallback for unknown pieces, else merge runs of unknowns."""
        unk = self._unk
        out: list[Pair] = []
        byte_fallback = self._byte_fallback
        prev_unk = False
        for piece, piece_id in pairs:
            if piece_id != unk:
                out.append((piece, piece_id))
                prev_unk = False
            elif byte_fallback:
                byte_pairs = self.byte_pairs
                out.extend(byte_pairs[b] for b in piece.encode("utf-8", "surrogateescape"))
            elif prev_unk:
                out[-1] = (out[-1][0] + piece, unk)
            else:
                out.append((piece, piece_id))
                prev_unk = True
        return out

    def with_offsets(self, pairs, original: str, norm_to_orig: list[int]) -> list[EncodedPiece]:
        """:meth:`process` of a model's ``pairs`` for the normalized text of
        ``original``, each piece with its surface and byte span in
        ``original`` (``norm_to_orig``: the original character index of each
        normalized one, and of the end), as the pieces of sentencepiece's
        ``SentencePieceText``: of the byte pieces an unknown character
        expands to, only the last carries its surface."""
        char_bytes = [0]
        for char in original:
            char_bytes.append(char_bytes[-1] + _utf8_length(char))
        raw = original.encode("utf-8", "surrogateescape")
        unk = self._unk
        out: list[EncodedPiece] = []
        position = 0
        for piece, piece_id in pairs:
            begin = char_bytes[norm_to_orig[position]]
            position += len(piece)
            end = char_bytes[norm_to_orig[position]]
            surface = raw[begin:end].decode("utf-8", "surrogateescape")
            if piece_id == unk and self._byte_fallback:
                data = piece.encode("utf-8", "surrogateescape")
                for k, value in enumerate(data):
                    last = k == len(data) - 1
                    name, byte_id = self.byte_pairs[value]
                    out.append(EncodedPiece(name, byte_id, surface if last else "",
                                            begin, end if last else begin))
            elif piece_id == unk and out and out[-1].id == unk:
                prev = out.pop()
                out.append(EncodedPiece(prev.piece + piece, unk, prev.surface + surface,
                                        prev.begin, end))
            else:
                out.append(EncodedPiece(piece, piece_id, surface, begin, end))
        return out

    def unknown_edges(self, pairs: list[Pair]) -> int:
        """STARTS / ENDS if processed ``pairs`` start / end with an unknown
        piece that would merge with a neighbour's."""
        if not self.merges_unknown:
            return 0
        unk = self._unk
        return (STARTS if pairs[0][1] == unk else 0) | (ENDS if pairs[-1][1] == unk else 0)

    def extra(self, pairs: list[Pair], add_bos: bool, add_eos: bool, reverse: bool,
              emit_unk_piece: bool) -> list[Pair]:
        """The Python API's extras, in sentencepiece's Python order:
        unknown pieces shown as the unk piece, reverse, then bos, then eos."""
        if emit_unk_piece:
            unk = self._unk
            name = self.vocab.pieces[unk]
            pairs = [(name, i) if i == unk else (p, i) for p, i in pairs]
        if reverse:
            pairs = pairs[::-1]
        if add_bos:
            pairs = [self.control("bos")] + pairs
        if add_eos:
            pairs = pairs + [self.control("eos")]
        return pairs

    def control(self, which: str) -> Pair:
        """The bos or eos pair; an error if the model has none."""
        vocab = self.vocab
        piece_id = vocab.bos_id() if which == "bos" else vocab.eos_id()
        if piece_id < 0:
            raise EncodeError("%s token is not defined as a control symbol in this model."
                              % which.upper())
        return vocab.pieces[piece_id], piece_id


def _utf8_length(char: str) -> int:
    """Bytes of ``char`` in UTF-8 (an escaped invalid byte counts one)."""
    code = ord(char)
    if code < 0x80 or 0xDC80 <= code <= 0xDCFF:
        return 1
    if code < 0x800:
        return 2
    if code < 0x10000:
        return 3
    return 4


def split_extra_options(text: str, error: type[SubtokError] = EncodeError) -> list[str]:
    """spm's ``--extra_options`` (``bos:eos:reverse:unk``), ":"-separated,
    empty ones dropped (as spm does); an unknown one is an ``error``
    (``DecodeError`` for a decoder's)."""
    options = [o for o in text.split(":") if o] if text else []
    for option in options:
        if option not in EXTRA_OPTIONS:
            raise error('option "%s" is not available.' % option)
    return options


def parse_extra_options(text: str, vocab: Vocabulary,
                        error: type[SubtokError] = EncodeError) -> list[str]:
    """Validate spm's ``--extra_options`` for a SentencePiece vocabulary:
    a BOS / EOS asked for must have an id."""
    options = split_extra_options(text, error)
    for option in options:
        if option in ("bos", "eos"):
            name = getattr(vocab.special, option + "_piece")
            if vocab.piece_to_id(name) == vocab.unk_index:
                raise error("id for `%s` is not defined." % name)
    return options


def apply_extra_options(pairs: list[Pair], options: list[str], vocab: Vocabulary) -> list[Pair]:
    """Apply the options in the order given, as spm_encode/spm_decode do."""
    for option in options:
        if option == "reverse":
            pairs = pairs[::-1]
        elif option in ("bos", "eos"):
            name = getattr(vocab.special, option + "_piece")
            pair = (name, vocab.piece_to_id(name))
            pairs = [pair] + pairs if option == "bos" else pairs + [pair]
        else:  # unk / unk_piece: show unknown pieces as the unk piece
            unk = vocab.unk_index
            pairs = [(vocab.pieces[unk], i) if i == unk else (p, i) for p, i in pairs]
    return pairs


__all__ = ["SentencePiecePostProcessor", "EncodedPiece", "STARTS", "ENDS", "EXTRA_OPTIONS",
           "unknown_runs_stay_inside", "split_extra_options", "parse_extra_options",
           "apply_extra_options"]
