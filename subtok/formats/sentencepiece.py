"""Reading and writing ``.model`` (SentencePiece's ModelProto) and ``.vocab``.

This is the only module that touches the generated protobuf code. The rest
of subtok works on :class:`ModelData`, a plain description of a model. A
model loaded from a file keeps its parsed proto so that saving it again
reproduces the file byte for byte.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from subtok.errors import ModelFileError, NormalizerError, SubtokError
from subtok.atomic import atomic_writer
from subtok.normalizers.charsmap import split_blob
from subtok.vocab import DEFAULT_UNK_SURFACE, PieceType, SpecialPieces, Vocabulary


#: TrainerSpec.ModelType numbers of the model type names.
MODEL_TYPE_IDS = {"unigram": 1, "bpe": 2, "word": 3, "char": 4}
MODEL_TYPE_NAMES = {v: k for k, v in MODEL_TYPE_IDS.items()}


def _pb2():
    from subtok._proto import sentencepiece_model_pb2
    return sentencepiece_model_pb2


def _raw_pb2():
    """The schema models are read with: every string field is ``bytes``,
    so a piece that is not UTF-8 (sentencepiece loads such models) reads
    the same on every protobuf runtime (the pure-Python one would refuse
    the whole file; upb would return str or bytes by content)."""
    from subtok._proto import sentencepiece_model_raw_pb2
    return sentencepiece_model_raw_pb2


def _text(value: bytes | str) -> str:
    """A string field as str: bytes that are not UTF-8 become lone
    surrogates, as undecodable input bytes do everywhere in subtok, so
    they compare, match and are written back as the same bytes. (A
    message built for writing has str fields already.)"""
    return value if isinstance(value, str) else value.decode("utf-8", "surrogateescape")


def _texts(values: list[bytes]) -> list[str]:
    """:func:`_text` of many values in one decode: joined by a byte that
    UTF-8 never uses, which therefore decodes alone and cannot join its
    neighbours into a character; one value at a time if a value holds it."""
    if not values or isinstance(values[0], str):
        return list(values)
    parts = _text(b"\xff".join(values)).split("\udcff")
    return parts if len(parts) == len(values) else list(map(_text, values))


def proto_messages():
    """The generated module (``ModelProto``, ``NormalizerSpec``, ...), for
    code that must write these messages exactly as sentencepiece does."""
    return _pb2()


@dataclass
class NormalizerSpec:
    """The NormalizerSpec fields that shape encoding."""

    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True


@dataclass
class ModelData:
    """Everything an encoder/decoder needs, as plain Python values."""

    pieces: list[str]
    scores: list[float]
    types: list[int]
    model_type: str = "unigram"
    normalizer: NormalizerSpec = field(default_factory=NormalizerSpec)
    denormalizer: NormalizerSpec | None = None
    treat_whitespace_as_suffix: bool = False
    byte_fallback: bool = False
    special: SpecialPieces = field(default_factory=SpecialPieces)
    #: The parsed ModelProto this was read from (kept for exact re-saving).
    proto: object | None = None
    _vocab: Vocabulary | None = field(default=None, init=False, repr=False, compare=False)

    def vocabulary(self) -> Vocabulary:
        """The validated vocabulary (built once: loading validates it first)."""
        if self._vocab is None:
            self._vocab = Vocabulary(self.pieces, self.scores, self.types,
                                     byte_fallback=self.byte_fallback, special=self.special,
                                     one_map=self.model_type == "bpe")
        return self._vocab


def restrict_vocabulary(data: ModelData, valid) -> ModelData:
    """``data`` with only the ``valid`` pieces emitted, as spm's
    ``SetVocabulary``: every piece that is not CONTROL, UNKNOWN or
    USER_DEFINED becomes NORMAL if listed or one character long, else
    UNUSED (never emitted)."""
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
    return restricted


def normalizer_from_proto(spec) -> NormalizerSpec:
    """A NormalizerSpec message as plain values."""
    return NormalizerSpec(
        name=_text(spec.name),
        precompiled_charsmap=bytes(spec.precompiled_charsmap),
        add_dummy_prefix=spec.add_dummy_prefix,
        remove_extra_whitespaces=spec.remove_extra_whitespaces,
        escape_whitespaces=spec.escape_whitespaces,
    )


def model_from_proto(proto) -> ModelData:
    """Turn a parsed ModelProto into ModelData (no validation here)."""
    trainer = proto.trainer_spec
    model_type = MODEL_TYPE_NAMES.get(trainer.model_type)
    if model_type is None:
        raise ModelFileError("unknown model_type %d." % trainer.model_type)
    special = SpecialPieces(
        unk_piece=_text(trainer.unk_piece) or "<unk>",
        bos_piece=_text(trainer.bos_piece) or "<s>",
        eos_piece=_text(trainer.eos_piece) or "</s>",
        pad_piece=_text(trainer.pad_piece) or "<pad>",
        unk_surface=(_text(trainer.unk_surface) if trainer.HasField("unk_surface")
                     else DEFAULT_UNK_SURFACE),
    )
    denormalizer = None
    if proto.HasField("denormalizer_spec") and proto.denormalizer_spec.precompiled_charsmap:
        denormalizer = normalizer_from_proto(proto.denormalizer_spec)
    # One pass: each step over proto.pieces makes a wrapper per piece
    # (the cost of more passes is in docs/performance.md).
    raw, scores, types = [], [], []
    for piece in proto.pieces:
        raw.append(piece.piece)
        scores.append(piece.score)
        types.append(piece.type)
    return ModelData(
        pieces=_texts(raw),
        scores=scores,
        types=types,
        model_type=model_type,
        normalizer=normalizer_from_proto(proto.normalizer_spec),
        denormalizer=denormalizer,
        treat_whitespace_as_suffix=trainer.treat_whitespace_as_suffix,
        byte_fallback=trainer.byte_fallback,
        special=special,
        proto=proto,
    )


def parse_model(data: bytes, source: str = "<bytes>") -> ModelData:
    """Parse serialized ModelProto bytes and validate them as sentencepiece
    0.2.3 does when it loads a model; errors name ``source``."""
    if not data:
        raise ModelFileError("%s: the model file is empty." % source)
    try:
        proto = _raw_pb2().ModelProto.FromString(data)
    except Exception as exc:  # protobuf raises DecodeError or RuntimeError
        raise ModelFileError(
            "%s: not a SentencePiece model (cannot parse the protobuf: %s)."
            % (source, str(exc) or type(exc).__name__)) from None
    if not proto.pieces:
        raise ModelFileError("%s: not a SentencePiece model (it has no pieces)." % source)
    try:
        model = model_from_proto(proto)
        check_model(model)
    except (ModelFileError, NormalizerError) as exc:
        raise ModelFileError("%s: %s" % (source, exc)) from None
    return model


def check_model(model: ModelData) -> None:
    """Refuse what sentencepiece 0.2.3 refuses, with its message, checked
    in its order (``SentencePieceProcessor::Load`` reports the model's
    status, then the normalizer's, then the denormalizer's). The
    charsmaps are checked whole, so no broken rule is met mid-encode."""
    if model.model_type == "unigram" and not all(map(math.isfinite, model.scores)):
        # unigram::Model sets this after InitializePieces, over its error.
        raise ModelFileError("score is NaN or Inf.")
    vocab = model.vocabulary()  # pieces, types, byte pieces
    if model.model_type == "unigram" and not vocab.normal:
        raise ModelFileError("no pieces are loaded.")
    for spec in (model.normalizer, model.denormalizer):
        if spec is not None and spec.precompiled_charsmap:
            split_blob(spec.precompiled_charsmap)


def load_model(path: str | os.PathLike) -> ModelData:
    """Read and validate a ``.model`` file."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ModelFileError("%s: cannot read the model file: %s." % (path, exc.strerror or exc)) from None
    return parse_model(data, str(path))


def build_proto(model: ModelData, trainer_spec: dict | None = None,
                normalizer_spec: dict | None = None,
                denormalizer_spec: dict | None = None):
    """Build a ModelProto the way spm_train writes one.

    NORMAL pieces carry piece and score only; other pieces also carry their
    type. Only the spec fields passed in are set (proto2 field presence).
    """
    pb2 = _pb2()
    proto = pb2.ModelProto()
    add = proto.pieces.add  # with its fields: one call per piece, not three
    for piece, score, kind in zip(model.pieces, model.scores, model.types):
        if kind != PieceType.NORMAL:
            add(piece=piece, score=score, type=kind)
        else:
            add(piece=piece, score=score)
    for target, values in ((proto.trainer_spec, trainer_spec),
                           (proto.normalizer_spec, normalizer_spec)):
        for key, value in (values or {}).items():
            current = getattr(target, key)
            if isinstance(value, (list, tuple)):
                del current[:]
                current.extend(value)
            else:
                setattr(target, key, value)
    if denormalizer_spec:
        for key, value in denormalizer_spec.items():
            setattr(proto.denormalizer_spec, key, value)
    return proto


def serialize_model(model: ModelData) -> bytes:
    if model.proto is None:
        raise SubtokError("this model has no ModelProto to serialize.")
    return model.proto.SerializeToString()


def write_atomically(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` so that no half-written file can be seen."""
    with atomic_writer(path) as out:
        out.write(data)


def save_model(model: ModelData, path: str | os.PathLike) -> None:
    write_atomically(path, serialize_model(model))


#: C++ ``ostream << float`` with default precision, as in .vocab files.
_SCORE_FORMAT = "%g"


def format_score(score: float) -> str:
    """C++ ``ostream << float`` with default precision, as in .vocab files."""
    return _SCORE_FORMAT % score


def vocab_text(model: ModelData, with_scores: bool = True) -> str:
    """The ``.vocab`` file content: ``piece<TAB>score`` per line, in id order."""
    if with_scores:
        return "".join(map(("%s\t" + _SCORE_FORMAT + "\n").__mod__, zip(model.pieces, model.scores)))
    return "".join(map("%s\n".__mod__, model.pieces))


def syms_text(model: ModelData) -> str:
    """``spm_export_vocab --output_format=syms``: ``piece<TAB>id`` per line."""
    return "".join("%s\t%d\n" % (p, i) for i, p in enumerate(model.pieces))


__all__ = ["ModelData", "NormalizerSpec", "MODEL_TYPE_IDS", "build_proto", "load_model",
           "parse_model", "save_model", "serialize_model", "vocab_text", "syms_text",
           "write_atomically", "format_score"]
