"""sentencepiece's ``SentencePieceText`` messages, for ``out_type='proto'``.

sentencepiece returns its encodings as protobuf messages of
``sentencepiece.proto`` (``SentencePieceText``: the text and, per piece,
``piece``, ``id``, ``surface``, ``begin``, ``end``; ``NBestSentencePieceText``:
``nbests``). The schema is four fields deep, so rather than ship generated
code for a second file, its descriptor is built here from a table and
registered in a private pool (no clash with sentencepiece's own copy in the
same process). The classes are real protobuf messages: they print, compare
and serialize as sentencepiece's do. protobuf is imported on first use.
"""

from __future__ import annotations

import functools

#: message -> fields (name, number, type, label, message type or None).
_SCHEMA = {
    "SentencePieceText.SentencePiece": [
        ("piece", 1, "string", "optional", None),
        ("id", 2, "uint32", "optional", None),
        ("surface", 3, "string", "optional", None),
        ("begin", 4, "uint32", "optional", None),
        ("end", 5, "uint32", "optional", None),
    ],
    "SentencePieceText": [
        ("text", 1, "string", "optional", None),
        ("pieces", 2, "message", "repeated", ".sentencepiece.SentencePieceText.SentencePiece"),
        ("score", 3, "float", "optional", None),
    ],
    "NBestSentencePieceText": [
        ("nbests", 1, "message", "repeated", ".sentencepiece.SentencePieceText"),
    ],
}


def _add_fields(message, fields, descriptor_pb2) -> None:
    field_type = descriptor_pb2.FieldDescriptorProto
    for name, number, kind, label, type_name in fields:
        added = message.field.add(name=name, number=number,
                                  type=field_type.Type.Value("TYPE_" + kind.upper()),
                                  label=field_type.Label.Value("LABEL_" + label.upper()))
        if type_name:
            added.type_name = type_name


@functools.lru_cache(maxsize=None)
def message_classes() -> tuple[type, type]:
    """(SentencePieceText, NBestSentencePieceText) message classes."""
    from google.protobuf import descriptor_pb2, descriptor_pool

    file_proto = descriptor_pb2.FileDescriptorProto(name="subtok_sentencepiece_text.proto",
                                                    package="sentencepiece", syntax="proto2")
    text = file_proto.message_type.add(name="SentencePieceText")
    _add_fields(text.nested_type.add(name="SentencePiece"),
                _SCHEMA["SentencePieceText.SentencePiece"], descriptor_pb2)
    _add_fields(text, _SCHEMA["SentencePieceText"], descriptor_pb2)
    _add_fields(file_proto.message_type.add(name="NBestSentencePieceText"),
                _SCHEMA["NBestSentencePieceText"], descriptor_pb2)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    return (_message_class(pool.FindMessageTypeByName("sentencepiece.SentencePieceText")),
            _message_class(pool.FindMessageTypeByName("sentencepiece.NBestSentencePieceText")))


def _message_class(descriptor) -> type:
    """The class of a descriptor, on protobuf 3.20 (MessageFactory) and later."""
    from google.protobuf import message_factory
    get = getattr(message_factory, "GetMessageClass", None)
    if get is not None:
        return get(descriptor)
    return message_factory.MessageFactory().GetPrototype(descriptor)


def sentencepiece_text(text: str, pieces, score: float | None = None):
    """A ``SentencePieceText``; ``pieces`` are (piece, id, surface, begin,
    end) tuples (``surface`` None: left unset, as sentencepiece leaves the
    leading byte pieces of a decoded character)."""
    message = message_classes()[0](text=text)
    for piece, piece_id, surface, begin, end in pieces:
        item = message.pieces.add(piece=piece, id=piece_id, begin=begin, end=end)
        if surface is not None:
            item.surface = surface
    if score is not None:
        message.score = score
    return message


def nbest_text(texts):
    """An ``NBestSentencePieceText`` holding ``texts`` (SentencePieceTexts)."""
    message = message_classes()[1]()
    message.nbests.extend(texts)
    return message


__all__ = ["message_classes", "sentencepiece_text", "nbest_text"]
