"""BERT's ``vocab.txt``: one WordPiece token per line, id = line number.

Read as ``tokenizers`` reads it (``WordPiece::read_file``: lines split at
``\\n`` with a ``\\r`` before it dropped, trailing Unicode whitespace
trimmed), except that a token given twice is an error here where
tokenizers silently keeps the later id. :func:`bert_wordpiece_json` gives
the ``tokenizer.json`` that ``tokenizers.BertWordPieceTokenizer(vocab,
...)`` builds from the file, with the same options and defaults
(``lowercase=True``: pass ``lowercase=False`` for a cased vocabulary).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from subtok.errors import ModelFileError
from subtok.formats import hf_json

#: Unicode White_Space, what Rust's ``str::trim_end`` removes.
WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + \
    "\u2028\u2029\u202f\u205f\u3000"


def read_vocab_txt(path: str | os.PathLike) -> dict[str, int]:
    """Token -> id (its line number from 0); a repeated token is an error
    naming both lines."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ModelFileError("%s: cannot read the vocabulary: %s." % (path, exc.strerror or exc)) from None
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the newline ending the last line starts no line
    vocab: dict[str, int] = {}
    for index, raw in enumerate(lines):
        try:
            token = raw.decode("utf-8").rstrip(WHITE_SPACE)
        except UnicodeDecodeError as exc:
            raise ModelFileError("%s:%d: not UTF-8 (%s)." % (path, index + 1, exc.reason)) from None
        if token in vocab:
            raise ModelFileError("%s:%d: token %r is already on line %d."
                                 % (path, index + 1, token, vocab[token] + 1))
        vocab[token] = index
    if not vocab:
        raise ModelFileError("%s: the vocabulary is empty." % path)
    return vocab


def vocab_txt(tokens: Iterable[str]) -> bytes:
    """A ``vocab.txt``'s content: token ``i`` on line ``i`` (from 0)."""
    return "".join(token + "\n" for token in tokens).encode("utf-8")


def bert_wordpiece_json(vocab: str | os.PathLike | dict[str, int], *, unk_token: str = "[UNK]",
                        sep_token: str = "[SEP]", cls_token: str = "[CLS]",
                        pad_token: str = "[PAD]", mask_token: str = "[MASK]",
                        clean_text: bool = True, handle_chinese_chars: bool = True,
                        strip_accents: bool | None = None, lowercase: bool = True,
                        wordpieces_prefix: str = "##") -> dict:
    """The tokenizer.json of ``BertWordPieceTokenizer(vocab, ...)``: the
    special tokens found in the vocabulary become added tokens, [CLS] and
    [SEP] frame the output (both must be in the vocabulary), and
    ``wordpieces_prefix`` is the decoder's (the model keeps ``##``, as
    there)."""
    source = vocab if isinstance(vocab, dict) else None
    if source is None:
        source = read_vocab_txt(vocab)
    name = "the vocabulary" if isinstance(vocab, dict) else str(vocab)
    for token in (sep_token, cls_token):
        if token not in source:
            raise ModelFileError("%s: %s is not in the vocabulary (BERT's output needs it)."
                                 % (name, token))
    specials = [hf_json.added_token(source[token], token)
                for token in dict.fromkeys((unk_token, sep_token, cls_token, pad_token, mask_token))
                if token in source]
    return hf_json.tokenizer(
        {"type": "WordPiece", "unk_token": unk_token, "continuing_subword_prefix": "##",
         "max_input_chars_per_word": 100, "vocab": dict(sorted(source.items(), key=lambda kv: kv[1]))},
        normalizer={"type": "BertNormalizer", "clean_text": clean_text,
                    "handle_chinese_chars": handle_chinese_chars, "strip_accents": strip_accents,
                    "lowercase": lowercase},
        pre_tokenizer={"type": "BertPreTokenizer"},
        post_processor={"type": "BertProcessing", "sep": [sep_token, source[sep_token]],
                        "cls": [cls_token, source[cls_token]]},
        decoder={"type": "WordPiece", "prefix": wordpieces_prefix, "cleanup": True},
        added_tokens=specials,
    )
