"""Model files in and out.

:func:`load_any` opens a model file of any kind subtok reads, telling the
kinds apart by content, not by name: a Hugging Face ``tokenizer.json`` is a
JSON object (its first non-blank character is "{", which can never start
a SentencePiece ``.model``, a protobuf whose first byte is a field tag);
anything else is read as a SentencePiece model. Each kind's reader is
imported only when needed.
"""

from __future__ import annotations

import os

#: Bytes looked at to tell the kinds apart.
_SNIFF = 4096


def is_tokenizer_json(path: str | os.PathLike) -> bool:
    """Whether the file looks like JSON: "{" after any BOM and whitespace.
    An unreadable file is not (its reader reports why)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF)
    except OSError:
        return False
    return head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n").startswith(b"{")


def load_any(path: str | os.PathLike):
    """A :class:`~subtok.tokenizer.Tokenizer` for a ``tokenizer.json``, else
    a :class:`~subtok.processor.SentencePieceProcessor`."""
    if is_tokenizer_json(path):
        from subtok.tokenizer import Tokenizer
        return Tokenizer.from_file(path)
    from subtok.processor import SentencePieceProcessor
    return SentencePieceProcessor(path)


def __getattr__(name: str):
    """``sentencepiece_to_json`` without importing the exporter up front."""
    if name == "sentencepiece_to_json":
        from subtok.formats.hf_export import sentencepiece_to_json
        return sentencepiece_to_json
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
