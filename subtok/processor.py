"""The processor: load a model, then encode and decode.

Pipeline of one encode::

    text --normalizer--> normalized --model--> (piece, id) pairs
         --post-process--> byte fallback, unknown runs merged
         --extra options--> bos / eos / reverse / unk piece

Names follow ``sentencepiece.SentencePieceProcessor`` where they overlap, so
code written against sentencepiece mostly runs unchanged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from .decoder import Decoder
from .errors import EncodeError, IdOutOfRange, SubtokError
from .model_file import ModelData, load_model, parse_model, serialize_model
from .models import MODELS
from .normalizer.charsmap import decode_charsmap
from .normalizer.normalizer import Normalizer
from .vocab import PieceType, byte_piece

Pair = tuple[str, int]


@dataclass(frozen=True)
class EncodedPiece:
    """One piece with its place in the original text (byte offsets)."""

    piece: str
    id: int
    surface: str
    begin: int
    end: int


def to_text(value) -> str:
    """Accept ``str`` or UTF-8 ``bytes`` (invalid bytes are kept as escapes)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "surrogateescape")
    raise TypeError("expected str or bytes, got %s" % type(value).__name__)


class SentencePieceProcessor:
    """Encode and decode with a SentencePiece model (``.model`` file)."""

    def __init__(self, model_file: str | os.PathLike | None = None, *,
                 model_proto: bytes | None = None) -> None:
        self._data: ModelData | None = None
        if model_file is not None:
            self.load(model_file)
        elif model_proto is not None:
            self.load_from_serialized_proto(model_proto)

    # -- loading --------------------------------------------------------
    def load(self, model_file: str | os.PathLike) -> None:
        self._setup(load_model(model_file))

    def load_from_serialized_proto(self, data: bytes) -> None:
        self._setup(parse_model(bytes(data), "<model proto>"))

    @classmethod
    def from_model_data(cls, data: ModelData) -> "SentencePieceProcessor":
        processor = cls()
        processor._setup(data)
        return processor

    def _setup(self, data: ModelData) -> None:
        self._data = data
        vocab = data.vocabulary()
        self.vocab = vocab
        spec = data.normalizer
        self.normalizer = Normalizer(
            decode_charsmap(spec.precompiled_charsmap),
            add_dummy_prefix=spec.add_dummy_prefix,
            remove_extra_whitespaces=spec.remove_extra_whitespaces,
            escape_whitespaces=spec.escape_whitespaces,
            treat_whitespace_as_suffix=data.treat_whitespace_as_suffix,
            user_defined_symbols=vocab.user_defined(),
        )
        denormalize = None
        if data.denormalizer is not None:
            d = data.denormalizer
            denormalize = Normalizer(
                decode_charsmap(d.precompiled_charsmap),
                add_dummy_prefix=d.add_dummy_prefix,
                remove_extra_whitespaces=d.remove_extra_whitespaces,
                escape_whitespaces=d.escape_whitespaces,
            ).normalize
        self.model = MODELS[data.model_type](
            vocab, treat_whitespace_as_suffix=data.treat_whitespace_as_suffix)
        self.decoder = Decoder(vocab, add_dummy_prefix=spec.add_dummy_prefix,
                               remove_extra_whitespaces=spec.remove_extra_whitespaces,
                               denormalize=denormalize)
        self._byte_pairs = [(byte_piece(b), i) for b, i in enumerate(vocab.byte_ids)]
        self._word_cache: dict[str, tuple[list[Pair], bool, bool]] = {}

    def __reduce__(self):
        return (_processor_from_proto, (self.serialized_model_proto(),))

    @property
    def model_data(self) -> ModelData:
        if self._data is None:
            raise SubtokError("no model is loaded.")
        return self._data

    def serialized_model_proto(self) -> bytes:
        return serialize_model(self.model_data)

    # -- vocabulary -----------------------------------------------------
    def get_piece_size(self) -> int:
        return len(self.vocab)

    vocab_size = get_piece_size
    piece_size = get_piece_size

    def __len__(self) -> int:
        return len(self.vocab)

    def _check_id(self, piece_id: int) -> int:
        if not 0 <= piece_id < len(self.vocab):
            raise IdOutOfRange("piece id is out of range: %d (the model has %d pieces)."
                               % (piece_id, len(self.vocab)))
        return piece_id

    def piece_to_id(self, piece):
        if isinstance(piece, (list, tuple)):
            return [self.piece_to_id(p) for p in piece]
        return self.vocab.piece_to_id(piece)

    def id_to_piece(self, piece_id):
        if isinstance(piece_id, (list, tuple)):
            return [self.id_to_piece(i) for i in piece_id]
        return self.vocab.pieces[self._check_id(piece_id)]

    def get_score(self, piece_id: int) -> float:
        return self.vocab.scores[self._check_id(piece_id)]

    def _is(self, piece_id: int, kind: PieceType) -> bool:
        return self.vocab.types[self._check_id(piece_id)] == kind

    def is_unknown(self, piece_id: int) -> bool:
        return self._is(piece_id, PieceType.UNKNOWN)

    def is_control(self, piece_id: int) -> bool:
        return self._is(piece_id, PieceType.CONTROL)

    def is_unused(self, piece_id: int) -> bool:
        return self._is(piece_id, PieceType.UNUSED)

    def is_byte(self, piece_id: int) -> bool:
        return self._is(piece_id, PieceType.BYTE)

    def is_user_defined(self, piece_id: int) -> bool:
        return self._is(piece_id, PieceType.USER_DEFINED)

    def unk_id(self) -> int:
        return self.vocab.unk_id()

    def bos_id(self) -> int:
        return self.vocab.bos_id()

    def eos_id(self) -> int:
        return self.vocab.eos_id()

    def pad_id(self) -> int:
        return self.vocab.pad_id()

    def set_vocabulary(self, valid: list[str]) -> None:
        """Restrict encoding to ``valid`` pieces, as spm's ``SetVocabulary``.

        Every piece that is not CONTROL, UNKNOWN or USER_DEFINED becomes
        NORMAL if listed or one character long, else UNUSED (never emitted).
        Only unigram and BPE models support this.
        """
        data = self.model_data
        if data.model_type not in ("unigram", "bpe"):
            raise EncodeError("Vocabulary constraint is only enabled in subword units.")
        keep = set(valid)
        fixed = (PieceType.CONTROL, PieceType.UNKNOWN, PieceType.USER_DEFINED)
        types = [t if t in fixed else
                 (PieceType.NORMAL if p in keep or len(p) == 1 else PieceType.UNUSED)
                 for p, t in zip(data.pieces, data.types)]
        restricted = replace(data, types=types)
        if restricted.proto is not None:
            proto = type(restricted.proto)()
            proto.CopyFrom(restricted.proto)
            for entry, kind in zip(proto.pieces, types):
                entry.type = kind
            restricted.proto = proto
        self._setup(restricted)

    # -- normalization ----------------------------------------------------
    def normalize(self, text) -> str:
        return self.normalizer.normalize(to_text(text))

    # -- encoding ---------------------------------------------------------
    def encode_pairs(self, text) -> list[Pair]:
        """Encode one sentence into post-processed ``(piece, id)`` pairs.

        The model's word results are post-processed once per distinct word
        and cached; only an unknown run that crosses a word boundary needs
        merging here.
        """
        normalized = self.normalizer.normalize(to_text(text))
        if not normalized:
            return []
        model = self.model
        if not model.exact_per_word:
            return self._post_process(model.encode(normalized))
        cache = self._word_cache
        out: list[Pair] = []
        prev_unk = False
        for word in model.split_words(normalized):
            entry = cache.get(word)
            if entry is None:
                entry = self._cache_word(word)
            pairs, starts_unk, ends_unk = entry
            if prev_unk and starts_unk:
                piece, piece_id = out.pop()
                out.append((piece + pairs[0][0], piece_id))
                out.extend(pairs[1:])
            else:
                out.extend(pairs)
            prev_unk = ends_unk
        return out

    def _cache_word(self, word: str):
        pairs = self._post_process(self.model.encode_word(word).pieces)
        unk = self.vocab.unk_index
        merge = not self.vocab.byte_fallback
        entry = (pairs, merge and pairs[0][1] == unk, merge and pairs[-1][1] == unk)
        if len(self._word_cache) > 1_000_000:
            self._word_cache.clear()
        self._word_cache[word] = entry
        return entry

    def _post_process(self, pairs) -> list[Pair]:
        """Byte fallback for unknown pieces, else merge runs of unknowns."""
        unk = self.vocab.unk_index
        out: list[Pair] = []
        byte_fallback = self.vocab.byte_fallback
        prev_unk = False
        for piece, piece_id in pairs:
            if piece_id != unk:
                out.append((piece, piece_id))
                prev_unk = False
            elif byte_fallback:
                byte_pairs = self._byte_pairs
                out.extend(byte_pairs[b] for b in piece.encode("utf-8"))
            elif prev_unk:
                out[-1] = (out[-1][0] + piece, unk)
            else:
                out.append((piece, piece_id))
                prev_unk = True
        return out

    def encode_with_offsets(self, text) -> list[EncodedPiece]:
        """Encode and report each piece's surface and byte span in ``text``.

        Mirrors the pieces of sentencepiece's ``SentencePieceText``: begin and
        end are byte offsets into the original input; of the byte pieces an
        unknown character expands to, only the last carries its surface.
        """
        original = to_text(text)
        normalized, norm_to_orig = self.normalizer.normalize_with_offsets(original)
        if not normalized:
            return []
        char_bytes = [0]
        for char in original:
            char_bytes.append(char_bytes[-1] + _utf8_length(char))
        raw = original.encode("utf-8", "surrogateescape")
        unk = self.vocab.unk_index
        out: list[EncodedPiece] = []
        position = 0
        for piece, piece_id in self.model.encode(normalized):
            begin = char_bytes[norm_to_orig[position]]
            position += len(piece)
            end = char_bytes[norm_to_orig[position]]
            surface = raw[begin:end].decode("utf-8", "surrogateescape")
            if piece_id == unk and self.vocab.byte_fallback:
                data = piece.encode("utf-8")
                for k, value in enumerate(data):
                    last = k == len(data) - 1
                    name, byte_id = self._byte_pairs[value]
                    out.append(EncodedPiece(name, byte_id, surface if last else "",
                                            begin, end if last else begin))
            elif piece_id == unk and out and out[-1].id == unk:
                prev = out.pop()
                out.append(EncodedPiece(prev.piece + piece, unk, prev.surface + surface,
                                        prev.begin, end))
            else:
                out.append(EncodedPiece(piece, piece_id, surface, begin, end))
        return out

    def _extra(self, pairs: list[Pair], add_bos: bool, add_eos: bool, reverse: bool,
               emit_unk_piece: bool) -> list[Pair]:
        """sentencepiece's Python order: reverse, then bos, then eos."""
        if emit_unk_piece:
            unk = self.vocab.unk_index
            name = self.vocab.pieces[unk]
            pairs = [(name, i) if i == unk else (p, i) for p, i in pairs]
        if reverse:
            pairs = pairs[::-1]
        if add_bos:
            pairs = [self._control("bos")] + pairs
        if add_eos:
            pairs = pairs + [self._control("eos")]
        return pairs

    def _control(self, which: str) -> Pair:
        piece_id = self.bos_id() if which == "bos" else self.eos_id()
        if piece_id < 0:
            raise EncodeError("%s token is not defined as a control symbol in this model."
                              % which.upper())
        return self.vocab.pieces[piece_id], piece_id

    def encode(self, input, out_type=int, add_bos: bool = False, add_eos: bool = False,
               reverse: bool = False, emit_unk_piece: bool = False, *,
               enable_sampling: bool = False, nbest_size: int = -1, alpha: float = 0.1,
               num_threads: int | None = None):
        """Encode a string (or a list of strings) into ids or pieces."""
        if isinstance(input, (list, tuple)):
            return [self.encode(x, out_type, add_bos, add_eos, reverse, emit_unk_piece,
                                enable_sampling=enable_sampling, nbest_size=nbest_size,
                                alpha=alpha) for x in input]
        if enable_sampling:
            pairs = self._sample_pairs(input, nbest_size, alpha)
        else:
            pairs = self.encode_pairs(input)
        pairs = self._extra(pairs, add_bos, add_eos, reverse, emit_unk_piece)
        if out_type is int or out_type == "id":
            return [i for _, i in pairs]
        if out_type is str or out_type == "piece":
            return [p for p, _ in pairs]
        raise ValueError("out_type must be int or str, got %r" % (out_type,))

    def _sample_pairs(self, input, nbest_size: int, alpha: float) -> list[Pair]:
        raise EncodeError("sampling is not supported yet.")

    def encode_as_ids(self, input, **kwargs):
        return self.encode(input, out_type=int, **kwargs)

    def encode_as_pieces(self, input, **kwargs):
        return self.encode(input, out_type=str, **kwargs)

    # -- decoding ---------------------------------------------------------
    def decode_ids(self, ids) -> str:
        pieces = self.vocab.pieces
        return self.decoder.decode([(pieces[self._check_id(i)], i) for i in ids])

    def decode_pieces(self, pieces) -> str:
        lookup = self.vocab.piece_to_id
        return self.decoder.decode([(p, lookup(p)) for p in pieces])

    def decode(self, input):
        """Decode ids or pieces (or a list of such lists) into text."""
        if not input:
            return ""
        first = input[0]
        if isinstance(first, (list, tuple)):
            return [self.decode(x) for x in input]
        if isinstance(first, str):
            return self.decode_pieces(input)
        return self.decode_ids(input)


def _utf8_length(char: str) -> int:
    code = ord(char)
    if code < 0x80 or 0xDC80 <= code <= 0xDCFF:
        return 1
    if code < 0x800:
        return 2
    if code < 0x10000:
        return 3
    return 4


def _processor_from_proto(data: bytes) -> SentencePieceProcessor:
    return SentencePieceProcessor(model_proto=data)
