"""Writing trained vocabularies in the formats of Hugging Face and tiktoken.

* ``tokenizer.json`` (:func:`tokenizer_json`): the layout ``tokenizers``
  0.2x saves (``version``, ``truncation``, ``padding``, ``added_tokens``,
  the five pipeline stages and the model), pretty-printed UTF-8;
* BERT ``vocab.txt`` (:func:`vocab_txt`): one token per line, id = line;
* tiktoken ranks (:func:`tiktoken_ranks`): ``base64(token bytes) rank`` per
  line, as ``tiktoken.load.load_tiktoken_bpe`` reads them;
* subtok's ``.vocab`` (:func:`scores_vocab`): ``token<TAB>score`` per line,
  like a SentencePiece ``.vocab``.

Only plain data goes in; the trainers decide the contents. Every function
returns the file's bytes, so a trainer can publish all its files at once.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import Any


def added_token(token_id: int, content: str) -> dict[str, Any]:
    """An ``added_tokens`` entry for a special token (matched on raw text)."""
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}


def tokenizer_json(*, model: dict[str, Any], added_tokens: list[dict[str, Any]],
                   normalizer: dict[str, Any] | None, pre_tokenizer: dict[str, Any] | None,
                   post_processor: dict[str, Any] | None,
                   decoder: dict[str, Any] | None) -> bytes:
    """A whole ``tokenizer.json``, without truncation or padding."""
    document = {"version": "1.0", "truncation": None, "padding": None,
                "added_tokens": added_tokens, "normalizer": normalizer,
                "pre_tokenizer": pre_tokenizer, "post_processor": post_processor,
                "decoder": decoder, "model": model}
    return (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def bert_template(cls: tuple[str, int], sep: tuple[str, int]) -> dict[str, Any]:
    """BERT's TemplateProcessing: ``[CLS] $A [SEP]`` and ``[CLS] $A [SEP] $B:1 [SEP]:1``."""
    def special(token: str, type_id: int) -> dict[str, Any]:
        return {"SpecialToken": {"id": token, "type_id": type_id}}

    def sequence(name: str, type_id: int) -> dict[str, Any]:
        return {"Sequence": {"id": name, "type_id": type_id}}

    return {
        "type": "TemplateProcessing",
        "single": [special(cls[0], 0), sequence("A", 0), special(sep[0], 0)],
        "pair": [special(cls[0], 0), sequence("A", 0), special(sep[0], 0),
                 sequence("B", 1), special(sep[0], 1)],
        "special_tokens": {token: {"id": token, "ids": [token_id], "tokens": [token]}
                           for token, token_id in (cls, sep)},
    }


def vocab_txt(tokens: Iterable[str]) -> bytes:
    """BERT's ``vocab.txt``: token ``i`` on line ``i`` (0-based)."""
    return "".join(token + "\n" for token in tokens).encode("utf-8")


def tiktoken_ranks(ranked: Iterable[tuple[bytes, int]]) -> bytes:
    """A ``.tiktoken`` file: ``base64(token) rank`` per line, by rank."""
    lines = ["%s %d\n" % (base64.b64encode(token).decode("ascii"), rank)
             for token, rank in sorted(ranked, key=lambda item: item[1])]
    return "".join(lines).encode("ascii")


def score_text(score: float) -> str:
    """A score as written to ``.vocab``: an integer plainly, otherwise the
    shortest text that reads back as the same float."""
    value = float(score)
    return "%d" % value if value.is_integer() else repr(value)


def scores_vocab(tokens: Iterable[str], scores: Iterable[float]) -> bytes:
    """``token<TAB>score`` per line, in id order."""
    return "".join("%s\t%s\n" % (token, score_text(score))
                   for token, score in zip(tokens, scores)).encode("utf-8")


__all__ = ["added_token", "tokenizer_json", "bert_template", "vocab_txt", "tiktoken_ranks",
           "scores_vocab", "score_text"]
