"""Model files in and out.

:func:`load_any` opens a model file of any kind subtok reads, telling the
kinds apart by content, not by name (:func:`model_kind`): a tiktoken rank
file (lines of base64 and a rank), a Hugging Face ``tokenizer.json`` (a
JSON object; its first non-blank character is "{", which can never start
a SentencePiece ``.model``, a protobuf whose first byte is a field tag), a
GPT-2 ``vocab.json`` (a JSON object whose first value is a number), a BERT
``vocab.txt`` (UTF-8 lines of one token each); anything else is read as a
SentencePiece model. Each kind's reader is imported only when needed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: Bytes looked at to tell the kinds apart.
_SNIFF = 4096

#: A JSON object whose first member's value is a number: a token -> id map
#: (GPT-2's vocab.json). A tokenizer.json's members hold strings, objects,
#: lists or null.
_VOCAB_JSON_HEAD = re.compile(rb'\s*\{\s*"(?:[^"\\]|\\.)*"\s*:\s*-?[0-9]')

#: The BERT pipeline options of a vocab.txt and their defaults, those of
#: tokenizers' ``BertWordPieceTokenizer``.
BERT_DEFAULTS = {"lowercase": True, "strip_accents": None, "handle_chinese_chars": True}

#: Characters no vocab.txt holds (C0 controls but tab, CR, LF; DEL).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def is_tokenizer_json(path: str | os.PathLike) -> bool:
    """Whether the file looks like JSON: "{" after any BOM and whitespace.
    An unreadable file is not (its reader reports why)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF)
    except OSError:
        return False
    return head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n").startswith(b"{")


def _looks_like_vocab_txt(head: bytes) -> bool:
    """UTF-8 lines of one token each (no inner space or tab, no control
    characters): what a BERT vocab.txt holds and a protobuf (binary, its
    first byte a field tag) or a text file of sentences does not."""
    if not head or head[:1] == b"\n":  # ModelProto field 1 (pieces)
        return False
    cut = len(head) == _SNIFF
    try:
        text = head.decode("utf-8", "ignore" if cut else "strict")
    except UnicodeDecodeError:
        return False
    if _CONTROL.search(text):
        return False
    lines = text.split("\n")
    if cut:
        lines.pop()  # may be cut short
    return all(" " not in line.rstrip() and "\t" not in line.rstrip() for line in lines)


def model_kind(path: str | os.PathLike) -> str:
    """``"tiktoken"``, ``"tokenizer.json"``, ``"vocab.json"``, ``"vocab.txt"``
    or ``"model"`` (SentencePiece, also for what is none of the others:
    its reader says what is wrong)."""
    from subtok.formats.tiktoken import looks_like_tiktoken
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF)
    except OSError:
        return "model"
    body = head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
    if body.startswith(b"{"):
        return "vocab.json" if _VOCAB_JSON_HEAD.match(body) else "tokenizer.json"
    if looks_like_tiktoken(path):
        return "tiktoken"
    return "vocab.txt" if _looks_like_vocab_txt(head) else "model"


def load_any(path: str | os.PathLike, *, pattern: str | None = None,
             special_tokens: dict[str, int] | str | None = None, **bert_options):
    """The model in any file subtok reads: a
    :class:`~subtok.tokenizer.Tokenizer` for a ``tokenizer.json``, a BERT
    ``vocab.txt`` (``bert_options``: ``lowercase``, ``strip_accents``,
    ``handle_chinese_chars``, defaults :data:`BERT_DEFAULTS`) and a GPT-2
    ``vocab.json`` (with the ``merges.txt`` beside it, as the Hugging Face
    hub lays them out); a tiktoken
    :class:`~subtok.models.bytelevel.encoding.Encoding` for a rank file
    (``pattern``, ``special_tokens``: see
    :func:`~subtok.formats.tiktoken.load_tiktoken`); else a
    :class:`~subtok.processor.SentencePieceProcessor`."""
    kind = model_kind(path)
    if kind == "tiktoken":
        from subtok.formats.tiktoken import load_tiktoken
        return load_tiktoken(path, pattern, special_tokens)
    if kind == "tokenizer.json":
        from subtok.tokenizer import Tokenizer
        return Tokenizer.from_file(path)
    if kind in ("vocab.txt", "vocab.json"):
        return _tokenizer_of_vocab(kind, path, bert_options)
    from subtok.processor import SentencePieceProcessor
    return SentencePieceProcessor(path)


def gpt2_merges_path(vocab_json: str | os.PathLike) -> Path:
    """Where the hub layout keeps a vocab.json's merges: ``merges.txt``
    in the same folder."""
    return Path(vocab_json).with_name("merges.txt")


def _tokenizer_of_vocab(kind: str, path: str | os.PathLike, bert_options: dict):
    """The Tokenizer that tokenizers' ``BertWordPieceTokenizer`` (vocab.txt)
    or ``ByteLevelBPETokenizer`` (vocab.json + merges.txt) builds."""
    import json

    from subtok.errors import ModelFileError, SubtokError
    from subtok.tokenizer import Tokenizer
    unknown = set(bert_options) - set(BERT_DEFAULTS)
    if unknown:
        raise TypeError("unknown vocab.txt option(s): %s" % ", ".join(sorted(unknown)))
    if kind == "vocab.txt":
        from subtok.formats.bert_vocab import bert_wordpiece_json
        settings = {k: v for k, v in bert_options.items() if v is not None}
        data = bert_wordpiece_json(path, **dict(BERT_DEFAULTS, **settings))
    else:
        if any(v is not None for v in bert_options.values()):
            raise SubtokError("%s: the BERT options (lowercase, strip_accents, handle_chinese_chars) "
                              "are for a vocab.txt, not a GPT-2 vocab.json." % path)
        merges = gpt2_merges_path(path)
        if not merges.is_file():
            raise ModelFileError("%s: a GPT-2 vocab.json needs merges.txt beside it (%s not found)."
                                 % (path, merges))
        from subtok.formats.gpt2_files import byte_level_bpe_json
        data = byte_level_bpe_json(path, merges)
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False), str(path))


def __getattr__(name: str):
    """``sentencepiece_to_json`` without importing the exporter up front."""
    if name == "sentencepiece_to_json":
        from subtok.formats.hf_export import sentencepiece_to_json
        return sentencepiece_to_json
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
