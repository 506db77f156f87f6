"""GPT-2's ``vocab.json`` + ``merges.txt``: a byte-level BPE in two files.

Read as ``tokenizers`` reads them (``BPE::read_file``): the vocabulary is
a JSON object token -> id; each merges line (lines starting ``#version``
skipped) is two tokens separated by one space, ranked by order, and both
tokens and their concatenation must be in the vocabulary. A pair listed
twice keeps its later rank, as in tokenizers' merge map.
:func:`byte_level_bpe_json` gives the ``tokenizer.json`` that
``tokenizers.ByteLevelBPETokenizer(vocab, merges, ...)`` builds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from subtok.errors import ModelFileError
from subtok.formats import hf_json

#: ``unicode_normalizer`` names -> normalizer type.
UNICODE_NORMALIZERS = {"nfc": "NFC", "nfd": "NFD", "nfkc": "NFKC", "nfkd": "NFKD"}


def _read_text(path: str | os.PathLike, what: str) -> str:
    try:
        return Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise ModelFileError("%s: cannot read the %s: %s." % (path, what, exc.strerror or exc)) from None
    except UnicodeDecodeError as exc:
        raise ModelFileError("%s: the %s is not UTF-8 (byte %d)." % (path, what, exc.start)) from None


def read_vocab_json(path: str | os.PathLike) -> dict[str, int]:
    """Token -> id from a ``vocab.json``."""
    try:
        data = json.loads(_read_text(path, "vocabulary"))
    except json.JSONDecodeError as exc:
        raise ModelFileError("%s:%d: not JSON: %s." % (path, exc.lineno, exc.msg)) from None
    if not isinstance(data, dict) or not data:
        raise ModelFileError("%s: expected a JSON object of token -> id." % path)
    for token, token_id in data.items():
        if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < 0:
            raise ModelFileError("%s: the id of %r is %r, not a whole number >= 0."
                                 % (path, token, token_id))
    return data


def read_merges(path: str | os.PathLike, vocab: dict[str, int]) -> list[tuple[str, str]]:
    """The merges in rank order; a malformed line, or one naming a token
    (or making one) the vocabulary lacks, is an error naming the line."""
    ranks: dict[tuple[str, str], int] = {}
    lines = _read_text(path, "merges").split("\n")
    if lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        line = line[:-1] if line.endswith("\r") else line
        if line.startswith("#version"):
            continue
        parts = line.split(" ")
        if len(parts) != 2:
            raise ModelFileError("%s:%d: a merge is two tokens separated by one space, not %r."
                                 % (path, number, line))
        for token in (parts[0], parts[1], parts[0] + parts[1]):
            if token not in vocab:
                raise ModelFileError("%s:%d: %r is not in the vocabulary." % (path, number, token))
        pair = (parts[0], parts[1])
        ranks.pop(pair, None)
        ranks[pair] = number
    return list(ranks)


def byte_level_bpe_json(vocab: str | os.PathLike, merges: str | os.PathLike, *,
                        add_prefix_space: bool = False, lowercase: bool = False,
                        dropout: float | None = None, unicode_normalizer: str | None = None,
                        continuing_subword_prefix: str | None = None,
                        end_of_word_suffix: str | None = None, trim_offsets: bool = False) -> dict:
    """The tokenizer.json of ``ByteLevelBPETokenizer(vocab, merges, ...)``."""
    tokens = read_vocab_json(vocab)
    pairs = read_merges(merges, tokens)
    normalizers = []
    if unicode_normalizer:
        if unicode_normalizer not in UNICODE_NORMALIZERS:
            raise ModelFileError("unknown unicode_normalizer %r (choose %s)."
                                 % (unicode_normalizer, ", ".join(UNICODE_NORMALIZERS)))
        normalizers.append({"type": UNICODE_NORMALIZERS[unicode_normalizer]})
    if lowercase:
        normalizers.append({"type": "Lowercase"})
    return hf_json.tokenizer(
        hf_json.bpe_model(dict(sorted(tokens.items(), key=lambda kv: kv[1])), pairs,
                          dropout=dropout, continuing_subword_prefix=continuing_subword_prefix or "",
                          end_of_word_suffix=end_of_word_suffix or ""),
        normalizer=hf_json.sequence("normalizer", normalizers),
        pre_tokenizer=hf_json.byte_level(add_prefix_space, True),
        post_processor=hf_json.byte_level(True, trim_offsets),
        decoder=hf_json.byte_level(True, True),
    )
