"""``.tiktoken`` rank files <-> byte-level BPE ``tokenizer.json``.

To JSON: tokens become GPT-2's byte characters with their ranks as ids;
tiktoken merges whatever adjacent pair makes the lowest-ranked bytes
(``src/lib.rs: byte_pair_merge``), so the merges are every split of each
token into two tokens, ranked by the merged token (then by the halves'
ranks), with ``ignore_merges``, as transformers' ``TikTokenConverter``
writes them; the split pattern is a ``Split`` (Isolated) before a
``ByteLevel`` that only maps bytes, and the special tokens are added
tokens (also put in the model's vocabulary: tokenizers numbers added
tokens after the vocabulary, so only there can they keep ids with gaps
before them, as cl100k's have). Back: the vocabulary's tokens turned
into bytes, ranked by id, and the pattern and special tokens recovered
from the pre-tokenizer and the added tokens.

tokenizers compiles patterns with Oniguruma, which reads a counted
repetition followed by ``+`` (cl100k's ``\\p{N}{1,3}+``) as "one or more
of them", not as possessive: it is written as an atomic group instead,
which both engines read alike.
"""

from __future__ import annotations

import re

from subtok.errors import ModelFileError
from subtok.formats import hf_json
from subtok.pretokenizers.byte_level import bytes_to_text, text_to_bytes
from subtok.pretokenizers.tiktoken_patterns import GPT2_PATTERN


# A simple atom (a \\p{..} class, an escape, a [...] set or one character)
# with a possessive counted repetition, and the atomic group it becomes.
_POSSESSIVE_COUNT = re.compile(
    r"(\\[pP]\{[^}]*\}|\\.|\[(?:\\.|[^\]\\])*\]|[^\\\[\](){}|?*+])(\{\d+(?:,\d*)?\})\+")
_ATOMIC_COUNT = re.compile(
    r"\(\?>(\\[pP]\{[^}]*\}|\\.|\[(?:\\.|[^\]\\])*\]|[^\\\[\](){}|?*+])(\{\d+(?:,\d*)?\})\)")


def to_oniguruma(pattern: str) -> str:
    """``X{n,m}+`` as ``(?>X{n,m})``, the same in both engines."""
    return _POSSESSIVE_COUNT.sub(r"(?>\1\2)", pattern)


def from_oniguruma(pattern: str) -> str:
    """The inverse of :func:`to_oniguruma`."""
    return _ATOMIC_COUNT.sub(r"\1\2+", pattern)


def tiktoken_merges(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """Every split of each token into two tokens, by the merged token's
    rank, then the left's, then the right's."""
    ranked = []
    for token, rank in ranks.items():
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in ranks and right in ranks:
                ranked.append((rank, ranks[left], ranks[right], left, right))
    ranked.sort()
    return [(left, right) for *_, left, right in ranked]


def tiktoken_to_json(ranks: dict[bytes, int], pattern: str,
                     special_tokens: dict[str, int] | None = None) -> dict:
    """The tokenizer.json of a rank file with its split pattern."""
    specials = special_tokens or {}
    vocab = {bytes_to_text(token): rank for token, rank in ranks.items()}
    vocab.update(specials)
    vocab = dict(sorted(vocab.items(), key=lambda kv: kv[1]))
    merges = [(bytes_to_text(a), bytes_to_text(b)) for a, b in tiktoken_merges(ranks)]
    split = {"type": "Split", "pattern": {"Regex": to_oniguruma(pattern)}, "behavior": "Isolated",
             "invert": False}
    return hf_json.tokenizer(
        hf_json.bpe_model(vocab, merges, continuing_subword_prefix=None, end_of_word_suffix=None,
                          ignore_merges=True),
        pre_tokenizer=hf_json.sequence("pre_tokenizer", [split, hf_json.byte_level(False, True, False)]),
        post_processor=hf_json.byte_level(True, False),
        decoder=hf_json.byte_level(True, True),
        added_tokens=[hf_json.added_token(i, t) for t, i in specials.items()],
    )


def json_to_tiktoken(data: dict, source: str = "tokenizer.json"
                     ) -> tuple[dict[bytes, int], str, dict[str, int]]:
    """(ranks, split pattern, special tokens) of a byte-level BPE
    tokenizer.json. Ranks are ids: tiktoken merges by them, so they must
    be in merge order, as byte-level trainers assign them."""
    model = data.get("model") or {}
    if hf_json.model_type(model) != "BPE" or not isinstance(model.get("vocab"), dict):
        raise ModelFileError("%s: not a BPE model; a rank file holds a byte-level BPE." % source)
    specials = {t["content"]: t["id"] for t in data.get("added_tokens") or [] if t.get("special")}
    ranks = {}
    for token, token_id in model["vocab"].items():
        if specials.get(token) == token_id:
            continue
        try:
            ranks[text_to_bytes(token)] = token_id
        except ModelFileError as exc:
            raise ModelFileError("%s: not a byte-level vocabulary: %s" % (source, exc)) from None
    if len(set(ranks.values())) != len(ranks):
        raise ModelFileError("%s: two tokens share an id." % source)
    return ranks, _split_pattern(data, source), specials


def _split_pattern(data: dict, source: str) -> str:
    """The pattern of a Split pre-tokenizer, or GPT-2's for a ByteLevel
    pre-tokenizer that splits by itself."""
    pre = data.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    for step in steps:
        if step.get("type") == "Split" and "Regex" in step.get("pattern", {}):
            return from_oniguruma(step["pattern"]["Regex"])
        if step.get("type") == "ByteLevel" and step.get("use_regex", True):
            return GPT2_PATTERN
    raise ModelFileError("%s: no split pattern in the pre-tokenizer." % source)
