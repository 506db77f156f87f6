"""Building blocks of a Hugging Face ``tokenizer.json``, as plain dicts.

Each function returns the JSON object ``tokenizers`` 0.23 serializes for
one component (field names and order as its ``serialization.rs`` files
write them), so a dict assembled here is exactly what ``tokenizers`` would
save, and loads with ``tokenizers.Tokenizer.from_str(json.dumps(d))``.
Only what subtok writes is here; reading tokenizer.json is the engine's.
"""

from __future__ import annotations

import json
import os

from subtok.atomic import atomic_writer

#: The format version tokenizers 0.23 writes.
VERSION = "1.0"


def tokenizer(model: dict, *, normalizer: dict | None = None, pre_tokenizer: dict | None = None,
              post_processor: dict | None = None, decoder: dict | None = None,
              added_tokens: list[dict] | None = None) -> dict:
    """The top level, in the order tokenizers writes it."""
    return {
        "version": VERSION,
        "truncation": None,
        "padding": None,
        "added_tokens": sorted(added_tokens or [], key=lambda entry: entry["id"]),
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": post_processor,
        "decoder": decoder,
        "model": model,
    }


def added_token(token_id: int, content: str, *, special: bool = True,
                normalized: bool = False) -> dict:
    """An ``added_tokens`` entry (matched whole, before normalization
    unless ``normalized``)."""
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": normalized, "special": special}


def sequence(kind: str, items: list[dict]) -> dict | None:
    """A ``Sequence`` of normalizers, pre-tokenizers or decoders; a single
    item stands alone, none is null."""
    if not items:
        return None
    if len(items) == 1:
        return items[0]
    key = {"normalizer": "normalizers", "pre_tokenizer": "pretokenizers",
           "decoder": "decoders"}[kind]
    return {"type": "Sequence", key: items}


def replace(pattern: str, content: str, *, regex: bool = False) -> dict:
    """A ``Replace`` normalizer or decoder (same JSON for both)."""
    return {"type": "Replace", "pattern": {"Regex" if regex else "String": pattern},
            "content": content}


def byte_level(add_prefix_space: bool, trim_offsets: bool, use_regex: bool = True) -> dict:
    """The ``ByteLevel`` pre-tokenizer, post-processor or decoder."""
    return {"type": "ByteLevel", "add_prefix_space": add_prefix_space,
            "trim_offsets": trim_offsets, "use_regex": use_regex}


def bpe_model(vocab: dict[str, int], merges: list[tuple[str, str]], *, unk_token: str | None = None,
              dropout: float | None = None, continuing_subword_prefix: str | None = "",
              end_of_word_suffix: str | None = "", fuse_unk: bool = False,
              byte_fallback: bool = False, ignore_merges: bool = False) -> dict:
    """A ``BPE`` model; ``vocab`` in id order, ``merges`` in rank order."""
    return {"type": "BPE", "dropout": dropout, "unk_token": unk_token,
            "continuing_subword_prefix": continuing_subword_prefix,
            "end_of_word_suffix": end_of_word_suffix, "fuse_unk": fuse_unk,
            "byte_fallback": byte_fallback, "ignore_merges": ignore_merges,
            "vocab": vocab, "merges": [list(pair) for pair in merges]}


def model_type(model: dict) -> str:
    """A model's type; older files have none, and it is told by the
    fields (WordPiece's prefix or word length, BPE's merges, Unigram's
    [piece, score] pairs)."""
    if model.get("type"):
        return model["type"]
    if "merges" in model:
        return "BPE"
    if "continuing_subword_prefix" in model or "max_input_chars_per_word" in model:
        return "WordPiece"
    vocab = model.get("vocab")
    if isinstance(vocab, list) and vocab and isinstance(vocab[0], list):
        return "Unigram"
    return "WordLevel" if isinstance(vocab, dict) else "unknown"


def bert_template(cls: tuple[str, int], sep: tuple[str, int]) -> dict:
    """BERT's ``TemplateProcessing``: ``[CLS] $A [SEP]`` and
    ``[CLS] $A [SEP] $B:1 [SEP]:1``, as ``BertWordPieceTokenizer`` sets it
    up; ``cls`` and ``sep`` are (token, id)."""
    def special(token: str, type_id: int) -> dict:
        return {"SpecialToken": {"id": token, "type_id": type_id}}

    def sequence(name: str, type_id: int) -> dict:
        return {"Sequence": {"id": name, "type_id": type_id}}

    return {
        "type": "TemplateProcessing",
        "single": [special(cls[0], 0), sequence("A", 0), special(sep[0], 0)],
        "pair": [special(cls[0], 0), sequence("A", 0), special(sep[0], 0),
                 sequence("B", 1), special(sep[0], 1)],
        "special_tokens": {token: {"id": token, "ids": [token_id], "tokens": [token]}
                           for token, token_id in (cls, sep)},
    }


def json_bytes(data: dict) -> bytes:
    """A tokenizer.json's content: indented UTF-8, non-ASCII kept as is."""
    return json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")


def write_json(data: dict, path: str | os.PathLike) -> None:
    """Write a tokenizer.json atomically (see :func:`json_bytes`)."""
    with atomic_writer(path) as out:
        out.write(json_bytes(data))
